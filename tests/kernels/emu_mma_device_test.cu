// Device harness of the tcgen05 emulation library (kernels/emu/tcgen05_emulation.cuh) on Hopper:
// kernels of its own fill shared memory tiles in every operand layout, call the tmemjit_emu_*
// functions directly and compare the emulated TMEM with a host reference, and, for kind::f16
// (f16, bf16), tf32 and f8 (e4m3), with Hopper's own wgmma on the same shared memory tiles (an
// independent reading of the descriptors and swizzles). Also: the column allocator and its
// events, commit (generic, shared::cluster, multicast), tcgen05.cp shapes, shift, try_cancel, a
// CTA pair (cta_group::2, clusters of 2), the status events of refused MMAs, and one timing.
//
// A standalone program for a GPU of compute capability 9.0 (sm_90a for wgmma). Prints PASS/FAIL
// per case; exits 1 on any failure, 2 when there is no suitable GPU. emu_prefix.cuh is the text of
// kernels::cuda_lifecycle(Target::kSm90, false, 2) (what the library is compiled after):
//   nvcc -gencode=arch=compute_90a,code=sm_90a -rdc=true -std=c++17 -I<dir of emu_prefix.cuh> -I.
//        -Ikernels/emu tests/kernels/emu_mma_device_test.cu -o emu_mma_device_test
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

// clang-format off
#include "emu_prefix.cuh"
#include "tcgen05_emulation.cuh"
// clang-format on

namespace {

namespace um = tmemjit::umma;
using u32 = std::uint32_t;
using u64 = std::uint64_t;

constexpr u32 kCtaTmemWords = 128u * 512u;
constexpr u32 kCtaStatusWords = tmemjit::emu::kStatusWords;  // slots, header, MMA queue
constexpr u32 kPoison = 0xA5A5A5A5u;
constexpr u32 kMaxCtas = 8;
constexpr u32 kSmemBytes = 160 * 1024;  // per CTA, 1024 of it for aligning the tiles

int g_failures = 0;
int g_cases = 0;

#define CUDA_CHECK(call)                                                                        \
  do {                                                                                          \
    cudaError_t e_ = (call);                                                                    \
    if (e_ != cudaSuccess) {                                                                    \
      std::printf("FAIL cuda error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(1);                                                                             \
    }                                                                                           \
  } while (0)

void report(const std::string& name, bool ok, const std::string& detail = "") {
  ++g_cases;
  if (!ok) ++g_failures;
  std::printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", name.c_str(), detail.empty() ? "" : ": ",
              detail.c_str());
}

// ---------------------------------------------------------------------------------------------
// The emulation state: TMEM and status of kMaxCtas CTAs, bound to tmemjit::emu_state.

struct Emulation {
  u32* tmem = nullptr;
  u32* status = nullptr;
  std::vector<u32> host_tmem = std::vector<u32>(kMaxCtas * kCtaTmemWords, kPoison);
  std::vector<u32> host_status = std::vector<u32>(kMaxCtas * kCtaStatusWords, 0u);

  void init() {
    CUDA_CHECK(cudaMalloc(&tmem, host_tmem.size() * 4));
    CUDA_CHECK(cudaMalloc(&status, host_status.size() * 4));
    tmemjit::EmuState state{tmem, status};
    CUDA_CHECK(cudaMemcpyToSymbol(tmemjit::emu_state, &state, sizeof(state)));
  }
  // Poisoned TMEM, zeroed status (what the host does before each launch).
  void reset() {
    std::fill(host_tmem.begin(), host_tmem.end(), kPoison);
    std::fill(host_status.begin(), host_status.end(), 0u);
  }
  void upload() {
    CUDA_CHECK(cudaMemcpy(tmem, host_tmem.data(), host_tmem.size() * 4, cudaMemcpyHostToDevice));
    CUDA_CHECK(
        cudaMemcpy(status, host_status.data(), host_status.size() * 4, cudaMemcpyHostToDevice));
  }
  void download() {
    CUDA_CHECK(cudaMemcpy(host_tmem.data(), tmem, host_tmem.size() * 4, cudaMemcpyDeviceToHost));
    CUDA_CHECK(
        cudaMemcpy(host_status.data(), status, host_status.size() * 4, cudaMemcpyDeviceToHost));
  }
  u32& cell(u32 cta, u32 lane, u32 column) {
    return host_tmem[cta * kCtaTmemWords + lane * 512u + column];
  }
  // The first recorded event of thread `thread` of CTA `cta`: (event, id, word).
  u32 event(u32 cta, u32 thread) const {
    return host_status[cta * kCtaStatusWords + 2 * thread] >> 24;
  }
  u32 event_word(u32 cta, u32 thread) const {
    return host_status[cta * kCtaStatusWords + 2 * thread + 1];
  }
  // Every thread's slot of the CTA empty.
  bool no_events(u32 cta) const {
    for (u32 t = 0; t < 1024; ++t)
      if (host_status[cta * kCtaStatusWords + 2 * t] != 0u) return false;
    return true;
  }
};

Emulation g_emu;

// ---------------------------------------------------------------------------------------------
// Device helpers.

__device__ __forceinline__ u32 smem_address(const void* p) {
  return static_cast<u32>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ u32 cluster_rank() {
  u32 r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cluster_sync_all() {
  asm volatile("barrier.cluster.arrive.aligned; barrier.cluster.wait.aligned;" ::: "memory");
}
__device__ __forceinline__ void mbar_init(u32 mbar, u32 count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(mbar), "r"(count) : "memory");
}
// Waits for phase 0 of the barrier; false after about a second (a missing arrive). Each try
// helps with the queued MMAs first, as the lowering makes every wait of a module with MMAs do.
__device__ bool mbar_wait(u32 mbar) {
  for (long i = 0; i < 2000000; ++i) {
    tmemjit_emu_help();
    u32 done;
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, "
        "p; }"
        : "=r"(done)
        : "r"(mbar)
        : "memory");
    if (done) return true;
  }
  return false;
}
// The 1024-byte aligned start of a CTA's dynamic shared memory, and its shared address.
__device__ unsigned char* aligned_smem(unsigned char* raw) {
  const u32 address = smem_address(raw);
  return raw + (((address + 1023u) & ~1023u) - address);
}
// Adds the tiles' shared base (16-byte units) to a descriptor's start field.
__device__ u64 rebase(u64 desc, u32 base) { return desc + ((base >> 4) & 0x3FFFu); }

// ---------------------------------------------------------------------------------------------
// The MMA kernel: every CTA copies its image to shared memory; warp 0 allocates 512 columns; one
// thread (the even CTA's with cta_group::2) issues the MMA and the commit; every thread waits on
// its CTA's barrier; warp 0 deallocates. With `wgmma` the first warpgroup then multiplies the
// same tiles with wgmma (M = 64 or 128, N = 64, cta_group::1) into wgmma_out.

struct MmaLaunch {
  u64 a_desc, a_desc_rows64, b_desc;  // start fields relative to the aligned shared base
  u64 wg_a_desc, wg_a_desc_rows64, wg_b_desc;
  u32 idesc, flags, commit_flags;
  u32 d_lane, d_column, a_column;
  u32 cta_group, m;
  u32 wgmma;  // 0 none, 1 f16, 2 bf16, 3 tf32, 4 e4m3
  u32 a_mn, b_mn;
  const unsigned char* image;  // per CTA
  u32 image_bytes;
  float* wgmma_out;  // M x 64
  int* failed;       // a barrier wait timed out
  long long* cycles;
};

// wgmma m64n64k*, D f32 in 32 registers: register 4i+r of thread t holds D[16 w + l/4 + 8 (r/2)]
// [8 i + 2 (l%4) + r%2], w = warp, l = lane (the wgmma D fragment).
#define WG_D32                                                                                  \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define WG_OUT(d)                                                                                 \
  "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]), "=f"(d[6]), "=f"(d[7]), \
      "=f"(d[8]), "=f"(d[9]), "=f"(d[10]), "=f"(d[11]), "=f"(d[12]), "=f"(d[13]), "=f"(d[14]),    \
      "=f"(d[15]), "=f"(d[16]), "=f"(d[17]), "=f"(d[18]), "=f"(d[19]), "=f"(d[20]), "=f"(d[21]),  \
      "=f"(d[22]), "=f"(d[23]), "=f"(d[24]), "=f"(d[25]), "=f"(d[26]), "=f"(d[27]), "=f"(d[28]),  \
      "=f"(d[29]), "=f"(d[30]), "=f"(d[31])

// D = A * B (scale-d false).
template <int kType, int kTransA, int kTransB>
__device__ void wgmma_64x64(u64 a, u64 b, float* d) {
  const u32 zero = 0;
  if constexpr (kType == 1) {
    asm volatile(
        "{ .reg .pred p; setp.ne.b32 p, %34, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " WG_D32
        ", %32, %33, p, 1, 1, %35, %36; }"
        : WG_OUT(d)
        : "l"(a), "l"(b), "r"(zero), "n"(kTransA), "n"(kTransB));
  } else if constexpr (kType == 2) {
    asm volatile(
        "{ .reg .pred p; setp.ne.b32 p, %34, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " WG_D32
        ", %32, %33, p, 1, 1, %35, %36; }"
        : WG_OUT(d)
        : "l"(a), "l"(b), "r"(zero), "n"(kTransA), "n"(kTransB));
  } else if constexpr (kType == 3) {
    asm volatile(
        "{ .reg .pred p; setp.ne.b32 p, %34, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 " WG_D32 ", %32, %33, p, 1, 1; }"
        : WG_OUT(d)
        : "l"(a), "l"(b), "r"(zero));
  } else {
    asm volatile(
        "{ .reg .pred p; setp.ne.b32 p, %34, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 " WG_D32 ", %32, %33, p, 1, 1; }"
        : WG_OUT(d)
        : "l"(a), "l"(b), "r"(zero));
  }
}

template <int kType, int kTransA, int kTransB>
__device__ void wgmma_rows(u64 a, u64 b, float* out, u32 row0) {
  float d[32];
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  wgmma_64x64<kType, kTransA, kTransB>(a, b, d);
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  const u32 t = threadIdx.x, w = t / 32u, l = t % 32u;
  for (u32 i = 0; i < 8u; ++i)
    for (u32 r = 0; r < 4u; ++r)
      out[(row0 + 16u * w + l / 4u + 8u * (r / 2u)) * 64u + 8u * i + 2u * (l % 4u) + r % 2u] =
          d[4u * i + r];
}

template <int kType>
__device__ void wgmma_tile(const MmaLaunch& p, u32 base) {
  const u64 a0 = rebase(p.wg_a_desc, base), a1 = rebase(p.wg_a_desc_rows64, base);
  const u64 b = rebase(p.wg_b_desc, base);
  for (u32 block = 0; block < p.m / 64u; ++block) {
    const u64 a = block == 0 ? a0 : a1;
    if constexpr (kType <= 2) {
      if (p.a_mn && p.b_mn)
        wgmma_rows<kType, 1, 1>(a, b, p.wgmma_out, 64u * block);
      else if (p.a_mn)
        wgmma_rows<kType, 1, 0>(a, b, p.wgmma_out, 64u * block);
      else if (p.b_mn)
        wgmma_rows<kType, 0, 1>(a, b, p.wgmma_out, 64u * block);
      else
        wgmma_rows<kType, 0, 0>(a, b, p.wgmma_out, 64u * block);
    } else {
      wgmma_rows<kType, 0, 0>(a, b, p.wgmma_out, 64u * block);
    }
  }
}

__global__ void mma_kernel(MmaLaunch p) {
  extern __shared__ unsigned char raw_smem[];
  __shared__ __align__(8) u64 mbar;
  __shared__ u32 tmem_base;
  unsigned char* tiles = aligned_smem(raw_smem);
  const u32 base = smem_address(tiles);
  const u32 rank = p.cta_group == 2u ? cluster_rank() : 0u;
  const unsigned char* image = p.image + static_cast<size_t>(rank) * p.image_bytes;
  for (u32 i = threadIdx.x * 16u; i < p.image_bytes; i += blockDim.x * 16u)
    *reinterpret_cast<uint4*>(tiles + i) = *reinterpret_cast<const uint4*>(image + i);
  if (threadIdx.x == 0) mbar_init(smem_address(&mbar), 1);
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // for wgmma
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  __syncthreads();
  if (threadIdx.x < 32) tmemjit_emu_alloc(smem_address(&tmem_base), 512, p.cta_group, 1);
  __syncthreads();
  if (p.cta_group == 2u) cluster_sync_all();
  if (threadIdx.x == 0 && rank % 2u == 0u) {
    const u32 d = tmem_base + (p.d_lane << 16) + p.d_column;
    const u32 a_tmem = tmem_base + (p.d_lane << 16) + p.a_column;
    const long long start = clock64();
    tmemjit_emu_mma(d, rebase(p.a_desc, base), a_tmem, rebase(p.b_desc, base), p.idesc, p.flags, 7);
    u64 mbar_operand;
    if (p.commit_flags & 4u)  // shared::cluster (this CTA's shared::cta address)
      mbar_operand = smem_address(&mbar);
    else
      mbar_operand = reinterpret_cast<u64>(&mbar);
    tmemjit_emu_commit(mbar_operand, p.commit_flags, p.cta_group == 2u ? 3u : 1u);
    // The MMA is done when its commit's barrier completes (the whole CTA helps compute it).
    if (!mbar_wait(smem_address(&mbar))) atomicExch(p.failed, 1);
    if (p.cycles != nullptr) *p.cycles = clock64() - start;
  }
  if (!mbar_wait(smem_address(&mbar))) atomicExch(p.failed, 1);
  asm volatile("fence.acq_rel.gpu;" ::: "memory");  // tcgen05.fence::after_thread_sync
  if (p.wgmma != 0u && threadIdx.x < 128u) {
    switch (p.wgmma) {
      case 1:
        wgmma_tile<1>(p, base);
        break;
      case 2:
        wgmma_tile<2>(p, base);
        break;
      case 3:
        wgmma_tile<3>(p, base);
        break;
      default:
        wgmma_tile<4>(p, base);
        break;
    }
  }
  __syncthreads();
  if (p.cta_group == 2u) cluster_sync_all();
  if (threadIdx.x < 32) tmemjit_emu_dealloc(tmem_base, 512, p.cta_group, 8);
}

// ---------------------------------------------------------------------------------------------
// Host: operand layouts, data and the reference.

// A canonical layout of one operand tile of `rows` rows (M or N) and one MMA's K, in the ways
// CUTLASS and DeepGEMM build them: variant 0 and 1 order the core-matrix groups differently;
// variant 2 (K-major, 64B/128B swizzle) starts the descriptor 32 bytes into the swizzle atom, as
// kernels advancing K inside the atom do.
struct Layout {
  um::SmemDescriptor desc;  // start relative to the tile's aligned base
  u32 bytes;
};

u64 encode(const um::SmemDescriptor& d) {
  return (u64{d.start >> 4} & 0x3FFFu) | ((u64{d.lbo >> 4} & 0x3FFFu) << 16) |
         ((u64{d.sbo >> 4} & 0x3FFFu) << 32) | (1ull << 46) | (u64{d.base_offset} << 49) |
         (u64{d.swizzle} << 61);
}
// The wgmma (sm_90) descriptor of the same layout: no version bits, swizzle in bits 62-63.
u64 encode_wgmma(const um::SmemDescriptor& d) {
  const u64 mode = d.swizzle == um::kSwizzle128B  ? 1u
                   : d.swizzle == um::kSwizzle64B ? 2u
                   : d.swizzle == um::kSwizzle32B ? 3u
                                                  : 0u;
  return (encode(d) & ~(7ull << 46) & ~(7ull << 61)) | (mode << 62);
}

Layout make_layout(u32 type, bool mn_major, u32 swizzle, u32 rows, int variant) {
  const u32 t = um::unit_elements(type);
  const u32 k = 256u / um::layout_bits(type);  // one MMA's K
  um::SmemDescriptor d{0, 0, 0, 1, 0, 0, swizzle};
  u32 bytes = 0;
  if (!mn_major) {
    if (swizzle == um::kSwizzleNone) {
      d.lbo = variant == 0 ? 128u : rows / 8u * 128u;
      d.sbo = variant == 0 ? 256u : 128u;
      bytes = rows / 8u * 256u;
    } else {
      const u32 row_bytes = 16u * um::swizzle_row_units(swizzle);
      d.sbo = 8u * row_bytes;
      d.lbo = 16u;  // unused
      if (variant == 2 && row_bytes >= 64u) d.start = 32u;
      bytes = rows / 8u * d.sbo;
    }
  } else {
    const u32 units = rows / t;
    if (swizzle == um::kSwizzleNone) {
      const u32 groups = k / 8u;
      d.sbo = variant == 0 ? 128u : groups * 128u;
      d.lbo = variant == 0 ? units * 128u : 128u;
      bytes = units * groups * 128u;
    } else if (swizzle == um::kSwizzle128B32BAtom) {
      const u32 groups = k / 4u;  // atoms of 4 K rows of 128 bytes
      d.sbo = 512u;
      d.lbo = groups * 512u;
      bytes = units / 8u * groups * 512u;
    } else {
      const u32 s = um::swizzle_row_units(swizzle);
      const u32 groups = k / 8u;
      const u32 atom = s * 128u;
      d.sbo = variant == 0 ? atom : (units / s) * atom;
      d.lbo = variant == 0 ? groups * atom : atom;
      bytes = units / s * groups * atom;
    }
  }
  return Layout{d, bytes + 1024u};
}

// Writes `bits` of an element's code into a tile image at its place.
void put_element(std::vector<unsigned char>& image, u32 tile_offset, const um::SmemDescriptor& d,
                 bool mn_major, u32 type, u32 row, u32 k, u32 code) {
  const um::ElementLocation at = um::element_location(d, mn_major, type, row, k);
  const u32 bits = um::element_bits(type);
  for (u32 b = 0; b < bits; ++b) {
    const u32 bit = (at.unit_address + tile_offset) * 8u + at.bit + b;
    const unsigned char mask = static_cast<unsigned char>(1u << (bit % 8u));
    if ((code >> b) & 1u)
      image[bit / 8u] |= mask;
    else
      image[bit / 8u] &= static_cast<unsigned char>(~mask);
  }
}

// Element codes whose values make every product and sum exact in f32 (and in any order).
u32 random_code(u32 type, std::mt19937& rng) {
  std::uniform_int_distribution<int> small(-4, 4);
  switch (type) {
    case um::kF16:
      return um::float_to_f16(static_cast<float>(small(rng)) * 0.5f);
    case um::kBF16:
      return um::bits_from_float(static_cast<float>(small(rng))) >> 16;
    case um::kTF32:  // the 13 low bits hold noise the MMA must ignore
      return um::bits_from_float(static_cast<float>(small(rng))) | (rng() & 0x1FFFu);
    case um::kE4M3:
    case um::kE5M2:
      // Integers in [-8, 8]: Hopper's fp8 wgmma accumulates with fewer bits than f32 (seen on an
      // H100: fractional sums differ in the last bits), small integer sums are exact there too.
      for (;;) {
        const u32 code = rng() & 0xFFu;
        const float v = um::element_to_float(type, code);
        if (v == static_cast<float>(static_cast<int>(v)) && v >= -8.0f && v <= 8.0f) return code;
      }
    case um::kE2M3:
    case um::kE3M2:
      return rng() & 0x3Fu;
    case um::kE2M1:
      return rng() & 0xFu;
    default:
      return rng() & 0xFFu;
  }
}

u32 format_of(u32 kind, u32 type) {
  for (u32 f = 0; f < 8; ++f)
    if (um::operand_type(kind, f) == type) return f;
  return 7;
}

struct MmaCase {
  std::string name;
  u32 kind, a_type, b_type, d_format;
  u32 m, n, cta_group = 1;
  bool a_mn = false, b_mn = false;
  u32 a_swizzle = um::kSwizzle128B, b_swizzle = um::kSwizzle128B;
  int a_variant = 0, b_variant = 0;
  bool negate_a = false, negate_b = false, saturate = false, accumulate = false;
  bool a_in_tmem = false;
  u32 d_lane = 0, d_column = 0;
  u32 commit_flags = 0;  // bit 2 shared::cluster
  bool wgmma = false;
  bool timing = false;
  bool old_near_limits = false;  // i8: D starts near the s32 bounds
};

// The reference D of one cell: products summed in k order with fma, then added to D (the
// library's documented numerics), f16 rounded to nearest even.
u32 reference_cell(const MmaCase& c, const std::vector<u32>& a_row, const std::vector<u32>& b_col,
                   u32 old) {
  const u32 k_count = um::mma_k(c.kind);
  if (c.kind == um::kKindI8) {
    long long sum = 0;
    for (u32 k = 0; k < k_count; ++k)
      sum += static_cast<long long>(um::element_to_int(c.a_type, a_row[k])) *
             um::element_to_int(c.b_type, b_col[k]);
    if (c.accumulate) sum += static_cast<int>(old);
    if (c.saturate) sum = std::min(std::max(sum, -2147483648ll), 2147483647ll);
    return static_cast<u32>(sum);
  }
  float sum = 0.0f;
  for (u32 k = 0; k < k_count; ++k) {
    float a = um::element_to_float(c.a_type, a_row[k]);
    float b = um::element_to_float(c.b_type, b_col[k]);
    if (c.negate_a) a = -a;
    if (c.negate_b) b = -b;
    sum = std::fma(a, b, sum);
  }
  float d = sum;
  if (c.accumulate) d += c.d_format == um::kDF16 ? um::f16_to_float(old) : um::float_from_bits(old);
  return c.d_format == um::kDF16 ? um::float_to_f16(d) : um::bits_from_float(d);
}

unsigned char* g_image = nullptr;
float* g_wgmma_out = nullptr;
int* g_failed = nullptr;
long long* g_cycles = nullptr;

void run_mma_case(const MmaCase& c, std::mt19937& rng) {
  const u32 parts = c.cta_group;
  const u32 rows = c.m / parts, cols = c.n / parts;
  const u32 k_count = um::mma_k(c.kind);
  const Layout a_layout = make_layout(c.a_type, c.a_mn, c.a_swizzle, rows, c.a_variant);
  const Layout b_layout = make_layout(c.b_type, c.b_mn, c.b_swizzle, cols, c.b_variant);
  const u32 a_offset = 0, b_offset = (a_layout.bytes + 1023u) & ~1023u;
  const u32 image_bytes = (b_offset + b_layout.bytes + 15u) & ~15u;
  if (image_bytes + 1024u > kSmemBytes) {
    report(c.name, false, "tiles larger than shared memory");
    return;
  }
  // Logical operands: A[m][k], B[n][k] codes.
  std::vector<std::vector<u32>> a(c.m, std::vector<u32>(k_count)),
      b(c.n, std::vector<u32>(k_count));
  for (auto& row : a)
    for (u32& code : row) code = random_code(c.a_type, rng);
  for (auto& col : b)
    for (u32& code : col) code = random_code(c.b_type, rng);
  std::vector<unsigned char> image(image_bytes * parts);
  for (auto& byte : image) byte = static_cast<unsigned char>(rng());  // padding holds noise
  for (u32 p = 0; p < parts; ++p) {
    std::vector<unsigned char> cta(image_bytes);
    std::memcpy(cta.data(), image.data() + p * image_bytes, image_bytes);
    for (u32 r = 0; r < rows; ++r)
      for (u32 k = 0; k < k_count; ++k)
        put_element(cta, a_offset, a_layout.desc, c.a_mn, c.a_type, r, k, a[p * rows + r][k]);
    for (u32 n = 0; n < cols; ++n)
      for (u32 k = 0; k < k_count; ++k)
        put_element(cta, b_offset, b_layout.desc, c.b_mn, c.b_type, n, k, b[p * cols + n][k]);
    std::memcpy(image.data() + p * image_bytes, cta.data(), image_bytes);
  }
  // TMEM before: poison; D's old values; A in TMEM (in every lane a D row uses, Layout B: both).
  g_emu.reset();
  const u32 a_column = 256u + 16u;
  std::vector<u32> old_d(c.m * c.n);
  for (u32 p = 0; p < parts; ++p) {
    for (u32 r = 0; r < rows; ++r) {
      for (u32 n = 0; n < c.n; ++n) {
        const um::TmemOffset t = um::d_offset(r, n, c.m, c.n, parts);
        u32& cell = g_emu.cell(p, c.d_lane + t.lane, c.d_column + t.column);
        if (c.accumulate && c.old_near_limits) {
          cell = (r + n) % 2u ? 2147480000u : static_cast<u32>(-2147480000);
        } else if (c.accumulate) {
          const int v = static_cast<int>(rng() % 9u) - 4;
          cell = c.kind == um::kKindI8     ? static_cast<u32>(v * 1000)
                 : c.d_format == um::kDF16 ? um::float_to_f16(static_cast<float>(v))
                                           : um::bits_from_float(static_cast<float>(v));
        }
        old_d[(p * rows + r) * c.n + n] = cell;
        if (c.a_in_tmem) {
          for (u32 k = 0; k < k_count; ++k) {
            u32& a_cell =
                g_emu.cell(p, c.d_lane + t.lane, a_column + um::a_tmem_column(k, c.a_type));
            if (k == 0 || um::a_tmem_bit(k, c.a_type) == 0) a_cell = 0;
            a_cell |= a[p * rows + r][k] << um::a_tmem_bit(k, c.a_type);
          }
        }
      }
    }
  }
  const std::vector<u32> before = g_emu.host_tmem;
  g_emu.upload();
  CUDA_CHECK(cudaMemcpy(g_image, image.data(), image.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(g_failed, 0, sizeof(int)));
  CUDA_CHECK(cudaMemset(g_wgmma_out, 0xFF, 256 * 64 * sizeof(float)));

  MmaLaunch p{};
  um::SmemDescriptor ad = a_layout.desc, bd = b_layout.desc;
  ad.start += a_offset;
  bd.start += b_offset;
  p.a_desc = encode(ad);
  p.b_desc = encode(bd);
  p.wg_a_desc = encode_wgmma(ad);
  p.wg_b_desc = encode_wgmma(bd);
  um::SmemDescriptor ad64 = ad;  // rows 64..127 for the second wgmma
  ad64.start += c.a_mn ? um::mn_major_unit_offset(ad, 64u / um::unit_elements(c.a_type), 0)
                       : um::k_major_unit_offset(ad, 64u, 0);
  p.wg_a_desc_rows64 = encode_wgmma(ad64);
  p.idesc = (c.d_format << 4) | (format_of(c.kind, c.a_type) << 7) |
            (format_of(c.kind, c.b_type) << 10) | (c.negate_a ? 1u << 13 : 0u) |
            (c.negate_b ? 1u << 14 : 0u) | (c.a_mn ? 1u << 15 : 0u) | (c.b_mn ? 1u << 16 : 0u) |
            ((c.n >> 3) << 17) | ((c.m >> 4) << 24) | (c.saturate ? 1u << 3 : 0u);
  p.flags =
      c.cta_group | (c.kind << 2) | (c.a_in_tmem ? 1u << 6 : 0u) | (c.accumulate ? 1u << 7 : 0u);
  p.commit_flags = c.cta_group | c.commit_flags | (c.cta_group == 2u ? 4u | 8u : 0u);
  p.d_lane = c.d_lane;
  p.d_column = c.d_column;
  p.a_column = a_column;
  p.cta_group = c.cta_group;
  p.m = c.m;
  p.a_mn = c.a_mn;
  p.b_mn = c.b_mn;
  p.wgmma = !c.wgmma                ? 0u
            : c.a_type == um::kF16  ? 1u
            : c.a_type == um::kBF16 ? 2u
            : c.a_type == um::kTF32 ? 3u
                                    : 4u;
  p.image = g_image;
  p.image_bytes = image_bytes;
  p.wgmma_out = g_wgmma_out;
  p.failed = g_failed;
  p.cycles = c.timing ? g_cycles : nullptr;

  cudaLaunchConfig_t config{};
  config.gridDim = dim3(parts, 1, 1);
  config.blockDim = dim3(128, 1, 1);
  config.dynamicSmemBytes = kSmemBytes;
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = parts;
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  config.attrs = &attribute;
  config.numAttrs = 1;
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start));
  CUDA_CHECK(cudaLaunchKernelEx(&config, mma_kernel, p));
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaDeviceSynchronize());
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  g_emu.download();
  int failed = 0;
  CUDA_CHECK(cudaMemcpy(&failed, g_failed, sizeof(int), cudaMemcpyDeviceToHost));

  // Compare: every D cell, nothing else written, no event.
  std::string detail;
  int wrong = 0;
  std::vector<char> is_d(parts * kCtaTmemWords, 0);
  for (u32 p2 = 0; p2 < parts; ++p2) {
    for (u32 r = 0; r < rows; ++r) {
      for (u32 n = 0; n < c.n; ++n) {
        const um::TmemOffset t = um::d_offset(r, n, c.m, c.n, parts);
        const u32 lane = c.d_lane + t.lane, column = c.d_column + t.column;
        is_d[p2 * kCtaTmemWords + lane * 512u + column] = 1;
        const u32 m = p2 * rows + r;
        const u32 expected = reference_cell(c, a[m], b[n], old_d[m * c.n + n]);
        const u32 got = g_emu.cell(p2, lane, column);
        if (got != expected && ++wrong <= 3)
          detail += " D[" + std::to_string(m) + "][" + std::to_string(n) + "] got " +
                    std::to_string(got) + " want " + std::to_string(expected) + ";";
      }
    }
  }
  int stray = 0;
  for (u32 i = 0; i < parts * kCtaTmemWords; ++i)
    if (!is_d[i] && g_emu.host_tmem[i] != before[i]) ++stray;
  if (wrong) detail += " " + std::to_string(wrong) + " wrong cells";
  if (stray) detail += " " + std::to_string(stray) + " cells outside D written";
  for (u32 p2 = 0; p2 < parts; ++p2)
    if (!g_emu.no_events(p2))
      detail += " event " + std::to_string(g_emu.event(p2, 0)) + " word " +
                std::to_string(g_emu.event_word(p2, 0)) + " in CTA " + std::to_string(p2);
  if (failed) detail += " commit's barrier arrive never came";
  if (c.wgmma) {
    std::vector<float> wg(c.m * 64);
    CUDA_CHECK(cudaMemcpy(wg.data(), g_wgmma_out, wg.size() * 4, cudaMemcpyDeviceToHost));
    int differ = 0;
    for (u32 m = 0; m < c.m; ++m)
      for (u32 n = 0; n < 64; ++n) {
        const um::TmemOffset t = um::d_offset(m, n, c.m, c.n, 1);
        const float emulated =
            um::float_from_bits(g_emu.cell(0, c.d_lane + t.lane, c.d_column + t.column));
        if (emulated != wg[m * 64 + n] && ++differ <= 3)
          detail += " wgmma D[" + std::to_string(m) + "][" + std::to_string(n) + "] " +
                    std::to_string(wg[m * 64 + n]) + " vs emulated " + std::to_string(emulated) +
                    ";";
      }
    if (differ) detail += " " + std::to_string(differ) + " cells differ from wgmma";
  }
  if (c.timing) {
    long long cycles = 0;
    CUDA_CHECK(cudaMemcpy(&cycles, g_cycles, sizeof(cycles), cudaMemcpyDeviceToHost));
    char text[160];
    std::snprintf(text, sizeof(text), " [timing: the MMA took %lld cycles; kernel %.3f ms]", cycles,
                  ms);
    std::printf("INFO %s%s\n", c.name.c_str(), text);
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  report(c.name, detail.empty(), detail);
}

const char* swizzle_name(u32 s) {
  switch (s) {
    case um::kSwizzleNone:
      return "none";
    case um::kSwizzle32B:
      return "sw32";
    case um::kSwizzle64B:
      return "sw64";
    case um::kSwizzle128B:
      return "sw128";
    default:
      return "sw128_32b";
  }
}

void mma_cases(std::mt19937& rng) {
  const u32 swizzles[] = {um::kSwizzleNone, um::kSwizzle32B, um::kSwizzle64B, um::kSwizzle128B};
  // Layouts against wgmma: kind::f16 (f16, bf16) every major-ness and swizzle; tf32 and e4m3
  // K-major (wgmma reads those K-major only); M = 64 and 128, N = 64.
  for (u32 type : {um::kF16, um::kBF16}) {
    for (u32 s : swizzles) {
      for (int major = 0; major < 4; ++major) {
        for (int variant = 0; variant < 2; ++variant) {
          MmaCase c{};
          c.kind = um::kKindF16;
          c.a_type = c.b_type = type;
          c.d_format = um::kDF32;
          c.m = variant == 0 ? 128 : 64;
          c.n = 64;
          c.a_mn = major & 1;
          c.b_mn = major & 2;
          c.a_swizzle = c.b_swizzle = s;
          c.a_variant = c.b_variant = c.a_mn ? variant : (variant ? 2 : 0);
          if (c.b_mn) c.b_variant = variant;
          c.wgmma = true;
          c.commit_flags = variant ? 4u : 0u;
          c.name = std::string("wgmma ") + (type == um::kF16 ? "f16" : "bf16") + " M" +
                   std::to_string(c.m) + " A " + (c.a_mn ? "MN" : "K") + " B " +
                   (c.b_mn ? "MN" : "K") + " " + swizzle_name(s) + " v" + std::to_string(variant);
          run_mma_case(c, rng);
        }
      }
    }
  }
  for (u32 type : {um::kTF32, um::kE4M3}) {
    for (u32 s : swizzles) {
      for (u32 m : {64u, 128u}) {
        MmaCase c{};
        c.kind = type == um::kTF32 ? um::kKindTf32 : um::kKindF8f6f4;
        c.a_type = c.b_type = type;
        c.d_format = um::kDF32;
        c.m = m;
        c.n = 64;
        c.a_swizzle = c.b_swizzle = s;
        c.a_variant = m == 64 ? 2 : 0;
        c.wgmma = true;
        c.name = std::string("wgmma ") + (type == um::kTF32 ? "tf32" : "e4m3") + " M" +
                 std::to_string(m) + " K-major " + swizzle_name(s);
        run_mma_case(c, rng);
      }
    }
  }
  // Against the host reference: types, D formats, N, negation, accumulate, lanes.
  auto base = [](const char* name, u32 kind, u32 a, u32 b, u32 d, u32 m, u32 n) {
    MmaCase c{};
    c.name = name;
    c.kind = kind;
    c.a_type = a;
    c.b_type = b;
    c.d_format = d;
    c.m = m;
    c.n = n;
    return c;
  };
  std::vector<MmaCase> cases;
  cases.push_back(base("f16 -> f16 D, accumulate, M128 N256", um::kKindF16, um::kF16, um::kF16,
                       um::kDF16, 128, 256));
  cases.back().accumulate = true;
  cases.push_back(base("bf16 negate A and B, accumulate, M128 N8", um::kKindF16, um::kBF16,
                       um::kBF16, um::kDF32, 128, 8));
  cases.back().negate_a = cases.back().negate_b = true;
  cases.back().accumulate = true;
  cases.push_back(
      base("f16 M64 lane 16 (Layout F) N24", um::kKindF16, um::kF16, um::kF16, um::kDF32, 64, 24));
  cases.back().d_lane = 16;
  cases.back().d_column = 40;
  cases.push_back(base("tf32 MN-major A and B (sw128 32B atoms) N64", um::kKindTf32, um::kTF32,
                       um::kTF32, um::kDF32, 128, 64));
  cases.back().a_mn = cases.back().b_mn = true;
  cases.back().a_swizzle = cases.back().b_swizzle = um::kSwizzle128B32BAtom;
  cases.push_back(base("e4m3 x e5m2 -> f16 D, negate B, N128", um::kKindF8f6f4, um::kE4M3,
                       um::kE5M2, um::kDF16, 128, 128));
  cases.back().negate_b = true;
  cases.push_back(base("e5m2 MN-major A and B sw64 N64", um::kKindF8f6f4, um::kE5M2, um::kE5M2,
                       um::kDF32, 128, 64));
  cases.back().a_mn = cases.back().b_mn = true;
  cases.back().a_swizzle = cases.back().b_swizzle = um::kSwizzle64B;
  for (u32 t : {um::kE2M3, um::kE3M2, um::kE2M1}) {
    const std::string name = std::string("f6/f4 ") +
                             (t == um::kE2M3   ? "e2m3"
                              : t == um::kE3M2 ? "e3m2"
                                               : "e2m1") +
                             " x e4m3, accumulate, N16";
    cases.push_back(base("", um::kKindF8f6f4, t, um::kE4M3, um::kDF32, 128, 16));
    cases.back().name = name;
    cases.back().accumulate = true;
    cases.back().a_swizzle = t == um::kE2M1 ? um::kSwizzleNone : um::kSwizzle128B;
  }
  cases.push_back(
      base("e2m1 x e3m2 M64 N8", um::kKindF8f6f4, um::kE2M1, um::kE3M2, um::kDF32, 64, 8));
  cases.push_back(base("s8 x s8 accumulate N48 (i8 steps of 16)", um::kKindI8, um::kS8, um::kS8,
                       um::kDS32, 128, 48));
  cases.back().accumulate = true;
  cases.push_back(
      base("u8 x s8 MN-major B none N32", um::kKindI8, um::kU8, um::kS8, um::kDS32, 64, 32));
  cases.back().b_mn = true;
  cases.back().b_swizzle = um::kSwizzleNone;
  cases.push_back(
      base("s8 x u8 MN-major A sw32 N16", um::kKindI8, um::kS8, um::kU8, um::kDS32, 128, 16));
  cases.back().a_mn = true;
  cases.back().a_swizzle = um::kSwizzle32B;
  cases.push_back(base("u8 x u8 N24", um::kKindI8, um::kU8, um::kU8, um::kDS32, 128, 24));
  cases.push_back(base("f16 A in TMEM (ts) accumulate N64", um::kKindF16, um::kF16, um::kF16,
                       um::kDF32, 128, 64));
  cases.back().a_in_tmem = cases.back().accumulate = true;
  cases.push_back(
      base("f16 A in TMEM M64 lane 16 N32", um::kKindF16, um::kF16, um::kF16, um::kDF32, 64, 32));
  cases.back().a_in_tmem = true;
  cases.back().d_lane = 16;
  cases.push_back(
      base("tf32 A in TMEM N16", um::kKindTf32, um::kTF32, um::kTF32, um::kDF32, 128, 16));
  cases.back().a_in_tmem = true;
  cases.push_back(
      base("e4m3 A in TMEM N16", um::kKindF8f6f4, um::kE4M3, um::kE4M3, um::kDF32, 128, 16));
  cases.back().a_in_tmem = true;
  cases.push_back(base("s8 A in TMEM N32", um::kKindI8, um::kS8, um::kS8, um::kDS32, 128, 32));
  cases.back().a_in_tmem = true;
  // CTA pairs (clusters of 2): Layout A (M256) and Layout B (M128), A from each CTA, B halves.
  cases.push_back(base("cta_group::2 M256 N128 f16 sw128", um::kKindF16, um::kF16, um::kF16,
                       um::kDF32, 256, 128));
  cases.back().cta_group = 2;
  cases.push_back(base("cta_group::2 M256 N256 bf16 MN-major B accumulate", um::kKindF16, um::kBF16,
                       um::kBF16, um::kDF32, 256, 256));
  cases.back().cta_group = 2;
  cases.back().b_mn = true;
  cases.back().accumulate = true;
  cases.push_back(base("cta_group::2 M128 N64 (Layout B) f16", um::kKindF16, um::kF16, um::kF16,
                       um::kDF32, 128, 64));
  cases.back().cta_group = 2;
  cases.push_back(base("cta_group::2 M128 N32 (Layout B) A in TMEM", um::kKindF16, um::kF16,
                       um::kF16, um::kDF32, 128, 32));
  cases.back().cta_group = 2;
  cases.back().a_in_tmem = true;
  cases.push_back(
      base("cta_group::2 M256 N64 i8 saturate", um::kKindI8, um::kS8, um::kU8, um::kDS32, 256, 64));
  cases.back().cta_group = 2;
  cases.back().saturate = true;
  cases.back().accumulate = true;
  for (MmaCase& c : cases) run_mma_case(c, rng);
  // Saturation: D near the s32 bounds, clamped with the saturate bit, wrapping without.
  for (bool saturate : {true, false}) {
    MmaCase c = base(saturate ? "i8 saturate clamps at the s32 bounds"
                              : "i8 without saturate wraps at the s32 bounds",
                     um::kKindI8, um::kU8, um::kU8, um::kDS32, 128, 16);
    c.saturate = saturate;
    c.accumulate = true;
    c.old_near_limits = true;
    run_mma_case(c, rng);
  }
  // One timing: the largest 1-CTA f16 MMA.
  MmaCase t =
      base("timing f16 M128 N256 K16", um::kKindF16, um::kF16, um::kF16, um::kDF32, 128, 256);
  t.timing = true;
  run_mma_case(t, rng);
  MmaCase t8 =
      base("timing e4m3 M128 N256 K32", um::kKindF8f6f4, um::kE4M3, um::kE4M3, um::kDF32, 128, 256);
  t8.timing = true;
  run_mma_case(t8, rng);
}

// ---------------------------------------------------------------------------------------------
// The column allocator: one script per CTA, run by warp 0 (one violation at most per script: a
// thread keeps its first).

__global__ void alloc_kernel(u32* out) {
  __shared__ u32 slot;
  if (threadIdx.x >= 32) return;
  const u32 cta = blockIdx.x;
  u32* results = out + cta * 16u;
  const volatile u32* header = tmemjit::emu_state.status + cta * kCtaStatusWords + 2048u;
  auto alloc = [&](u32 columns, u32 i, u32 group = 1) {
    tmemjit_emu_alloc(smem_address(&slot), columns, group, 10 + i);
    __syncwarp();
    results[i] = slot;
  };
  auto release = [&](u32 address, u32 columns, u32 id) {
    tmemjit_emu_dealloc(address, columns, 1, id);
  };
  auto bound = [&](u32 i) { results[i] = header[0]; };
  switch (cta) {
    case 0:  // sizes never grow: first fit at a multiple of the size; the bound follows
      alloc(128, 0), alloc(128, 1), alloc(64, 2), alloc(32, 3), bound(4);
      release(128, 128, 20), bound(5), alloc(32, 6), release(320, 32, 21), bound(7);
      release(0, 128, 22), release(256, 64, 23), release(128, 32, 24), bound(8);
      alloc(32, 9), release(0, 32, 25), bound(10);
      break;
    case 1:
      alloc(256, 0), alloc(256, 1), alloc(32, 2);
      break;  // blocked: event 6
    case 2:
      alloc(32, 0), tmemjit_emu_relinquish(1), alloc(32, 1);
      break;  // event 7
    case 3:
      alloc(48, 0);
      break;  // event 5
    case 4:
      alloc(32, 0), alloc(64, 1);
      break;  // grows: event 8
    case 5:
      alloc(64, 0), release(0, 32, 30), release(0, 64, 31), bound(1);
      break;  // event 3
    default:
      alloc(32, 0, 2);
      break;  // cta_group::2 without a peer: event 12
  }
}

void alloc_cases() {
  u32* out = nullptr;
  CUDA_CHECK(cudaMalloc(&out, 7 * 16 * 4));
  CUDA_CHECK(cudaMemset(out, 0xEE, 7 * 16 * 4));
  g_emu.reset();
  g_emu.upload();
  alloc_kernel<<<7, 64>>>(out);
  CUDA_CHECK(cudaDeviceSynchronize());
  g_emu.download();
  std::vector<u32> r(7 * 16);
  CUDA_CHECK(cudaMemcpy(r.data(), out, r.size() * 4, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(out));
  auto expect = [&](const std::string& name, u32 cta, std::vector<u32> want, u32 event, u32 word) {
    std::string detail;
    for (u32 i = 0; i < want.size(); ++i)
      if (r[cta * 16 + i] != want[i])
        detail += " result " + std::to_string(i) + " = " + std::to_string(r[cta * 16 + i]) +
                  " want " + std::to_string(want[i]) + ";";
    if (g_emu.event(cta, 0) != event || (event != 0 && g_emu.event_word(cta, 0) != word))
      detail += " event " + std::to_string(g_emu.event(cta, 0)) + " word " +
                std::to_string(g_emu.event_word(cta, 0)) + ", want " + std::to_string(event) +
                " word " + std::to_string(word);
    report("alloc: " + name, detail.empty(), detail);
  };
  expect("placement, bound and reuse", 0, {0, 128, 256, 320, 352, 352, 128, 320, 0, 0, 0}, 0, 0);
  expect("no free columns: event 6 and the failure address", 1, {0, 256, 0xFFFF}, 6, 32);
  expect("alloc after relinquish: event 7", 2, {0, 0xFFFF}, 7, 32);
  expect("48 columns: event 5", 3, {0xFFFF}, 5, 48);
  expect("a larger allocation than the previous one: event 8, allocated", 4, {0, 64}, 8, 64);
  expect("dealloc with another column count: event 3", 5, {0, 0}, 3, 0);
  expect("cta_group::2 without a peer CTA: event 12", 6, {0xFFFF}, 12, 2);
}

// ---------------------------------------------------------------------------------------------
// tcgen05.cp shapes, tcgen05.shift, and the events of refused operations.

struct CpCall {
  u32 shape, multicast, column;
  bool swizzled;
};
constexpr u32 kCpCallCount = 7;
__host__ __device__ constexpr CpCall cp_call(u32 i) {
  constexpr CpCall calls[kCpCallCount] = {{0, 0, 0, true},   {1, 0, 16, false}, {2, 0, 32, true},
                                          {3, 1, 48, false}, {3, 2, 64, true},  {4, 3, 80, false},
                                          {0, 0, 96, false}};
  return calls[i];
}

struct MiscLaunch {
  u64 desc_swizzled, desc_plain;  // relative to the aligned base
  const unsigned char* image;
  u32 image_bytes;
};

__global__ void misc_kernel(MiscLaunch p) {
  extern __shared__ unsigned char raw_smem[];
  __shared__ u32 tmem_base;
  unsigned char* tiles = aligned_smem(raw_smem);
  const u32 base = smem_address(tiles);
  for (u32 i = threadIdx.x * 16u; i < p.image_bytes; i += blockDim.x * 16u)
    *reinterpret_cast<uint4*>(tiles + i) = *reinterpret_cast<const uint4*>(p.image + i);
  __syncthreads();
  if (threadIdx.x < 32) tmemjit_emu_alloc(smem_address(&tmem_base), 256, 1, 1);
  __syncthreads();
  const u32 t = tmem_base;
  if (threadIdx.x == 0) {
    for (u32 i = 0; i < kCpCallCount; ++i) {
      const CpCall c = cp_call(i);
      const u64 desc = rebase(c.swizzled ? p.desc_swizzled : p.desc_plain, base);
      tmemjit_emu_cp(t + c.column, desc, 1u | (c.shape << 2) | (c.multicast << 6), 40 + i);
    }
    tmemjit_emu_shift(t + (32u << 16) + 200u, 1, 50);
  }
  __syncthreads();
  // Refused operations, one per thread (each thread's slot keeps its event).
  const u64 desc = rebase(p.desc_swizzled, base);
  const u32 f16_m128_n64 = (1u << 4) | ((64u >> 3) << 17) | ((128u >> 4) << 24);
  switch (threadIdx.x) {
    case 1:  // M = 256 with cta_group::1
      tmemjit_emu_mma(t, desc, 0, desc, (1u << 4) | ((64u >> 3) << 17) | ((256u >> 4) << 24), 1,
                      61);
      break;
    case 2:
      tmemjit_emu_mma(t, desc, 0, desc, f16_m128_n64, 1u | (5u << 2), 62);
      break;
    case 3:
      tmemjit_emu_mma(t + 224u, desc, 0, desc, f16_m128_n64, 1, 63);
      break;  // to 288
    case 4:
      tmemjit_emu_mma(t + (16u << 16), desc, 0, desc, f16_m128_n64, 1, 64);
      break;
    case 5:  // A in TMEM at another lane than D
      tmemjit_emu_mma(t + (16u << 16), desc, t + 128u, desc,
                      (1u << 4) | ((64u >> 3) << 17) | ((64u >> 4) << 24), 1u | (1u << 6), 65);
      break;
    case 6:
      tmemjit_emu_mma(t, desc, 0, desc | (3ull << 61), f16_m128_n64, 1, 66);
      break;
    case 7:
      tmemjit_emu_mma(t, desc, 0, desc, f16_m128_n64 | 4u, 1, 67);
      break;  // sparse
    case 8:
      tmemjit_emu_mma(t, desc, 0, desc, f16_m128_n64, 2, 68);
      break;  // no peer
    case 9:
      tmemjit_emu_cp(t, desc, 1u | (1u << 8), 69);
      break;  // decompression
    case 10:
      tmemjit_emu_cp(t, desc, 1u | (3u << 2), 70);
      break;  // 64x128b without warpx2
    case 11:
      tmemjit_emu_shift(t + (16u << 16), 1, 71);
      break;
    default:
      break;
  }
  __syncthreads();
  if (threadIdx.x < 32) tmemjit_emu_dealloc(tmem_base, 256, 1, 2);
}

u32 cp_lane(u32 shape, u32 multicast, u32 r, u32 copy) {  // CuTe's UTCCP ValIDs
  if (shape == 1) return 32 * r;
  if (shape == 3 && multicast == 1) return r + 64 * copy;
  if (shape == 3) return (r < 32 ? r : r + 32) + 32 * copy;
  if (shape == 4) return r + 32 * copy;
  return r;
}

void misc_cases(std::mt19937& rng) {
  const Layout swizzled = make_layout(um::kU8, false, um::kSwizzle128B, 128, 0);
  Layout plain = make_layout(um::kU8, false, um::kSwizzleNone, 128, 1);
  const u32 plain_offset = (swizzled.bytes + 1023u) & ~1023u;
  plain.desc.start += plain_offset;
  const u32 image_bytes = plain_offset + plain.bytes;
  std::vector<unsigned char> image(image_bytes);
  for (auto& b : image) b = static_cast<unsigned char>(rng());
  auto word_at = [&](u32 address) {
    u32 w;
    std::memcpy(&w, image.data() + address, 4);
    return w;
  };
  g_emu.reset();
  for (u32 lane = 32; lane < 64; ++lane)
    for (u32 c = 200; c < 208; ++c) g_emu.cell(0, lane, c) = (lane << 8) | c;
  const std::vector<u32> before = g_emu.host_tmem;
  g_emu.upload();
  CUDA_CHECK(cudaMemcpy(g_image, image.data(), image.size(), cudaMemcpyHostToDevice));
  MiscLaunch p{encode(swizzled.desc), encode(plain.desc), g_image, (image_bytes + 15u) & ~15u};
  CUDA_CHECK(
      cudaFuncSetAttribute(misc_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  misc_kernel<<<1, 128, kSmemBytes>>>(p);
  CUDA_CHECK(cudaDeviceSynchronize());
  g_emu.download();
  // cp: every written cell, and nothing else.
  std::vector<u32> expected = before;
  for (u32 i = 0; i < kCpCallCount; ++i) {
    const CpCall c = cp_call(i);
    const um::SmemDescriptor& d = c.swizzled ? swizzled.desc : plain.desc;
    const u32 rows = c.shape == 1 ? 4 : c.shape == 3 ? 64 : c.shape == 4 ? 32 : 128;
    const u32 units = c.shape <= 1 ? 2 : 1;
    const u32 copies = c.multicast == 3 ? 4 : c.multicast ? 2 : 1;
    for (u32 r = 0; r < rows; ++r)
      for (u32 u = 0; u < units; ++u)
        for (u32 copy = 0; copy < copies; ++copy)
          for (u32 j = 0; j < 4; ++j)
            expected[cp_lane(c.shape, c.multicast, r, copy) * 512 + c.column + 4 * u + j] =
                word_at(um::k_major_unit_address(d, r, u) + 4 * j);
  }
  for (u32 i = 30; i + 1 > 0; --i)  // shift: lane 33..63 take 32..62, lane 32 keeps its cells
    for (u32 c = 200; c < 208; ++c) expected[(33 + i) * 512 + c] = expected[(32 + i) * 512 + c];
  int wrong = 0;
  std::string detail;
  for (u32 i = 0; i < kCtaTmemWords; ++i)
    if (g_emu.host_tmem[i] != expected[i] && ++wrong <= 3)
      detail += " lane " + std::to_string(i / 512) + " column " + std::to_string(i % 512) +
                " got " + std::to_string(g_emu.host_tmem[i]) + " want " +
                std::to_string(expected[i]) + ";";
  report("cp: 128x256b, 4x256b, 128x128b, 64x128b.warpx2::02_13/01_23, 32x128b.warpx4; shift",
         wrong == 0 && g_emu.event(0, 0) == 0,
         detail + (g_emu.event(0, 0) ? " event at thread 0" : ""));
  struct Expected {
    const char* name;
    u32 thread, event, word;
  };
  const Expected events[] = {
      {"mma M256 with cta_group::1: event 9 (M)", 1, 9, um::kMmaFormM},
      {"mma kind 5: event 11", 2, 11, 1u | (5u << 2)},
      {"mma D past the allocated columns: event 2", 3, 2, 224},
      {"mma M128 D at lane 16: event 10", 4, 10, 16u << 16},
      {"mma A in TMEM at another lane than D: event 10", 5, 10, 128},
      {"mma swizzle mode 3: event 9 (swizzle)", 6, 9, um::kMmaFormSwizzle},
      {"mma sparse bit: event 9 (sparse)", 7, 9, um::kMmaFormSparse},
      {"mma cta_group::2 without a peer: event 12", 8, 12, 2},
      {"cp decompression: event 11", 9, 11, 1u | (1u << 8)},
      {"cp 64x128b without warpx2: event 9 (16 + multicast)", 10, 9, 16u + 2u},
      {"shift at lane 16: event 10", 11, 10, 16u << 16},
  };
  for (const Expected& e : events) {
    const bool ok = g_emu.event(0, e.thread) == e.event && g_emu.event_word(0, e.thread) == e.word;
    report(e.name, ok,
           ok ? ""
              : "event " + std::to_string(g_emu.event(0, e.thread)) + " word " +
                    std::to_string(g_emu.event_word(0, e.thread)));
  }
}

// ---------------------------------------------------------------------------------------------
// try_cancel: the "not cancelled" response and the 16-byte transaction, in one CTA and in every
// CTA of a cluster of 2 (multicast).

__global__ void cancel_kernel(int* ok, u32 multicast) {
  __shared__ __align__(16) u32 result[4];
  __shared__ __align__(8) u64 mbar;
  const u32 rank = cluster_rank();
  if (threadIdx.x == 0) {
    for (u32& w : result) w = 0xFFFFFFFFu;
    mbar_init(smem_address(&mbar), 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 16;" ::"r"(smem_address(&mbar))
                 : "memory");
  }
  __syncthreads();
  cluster_sync_all();
  if (threadIdx.x == 0 && rank == 0)
    tmemjit_emu_try_cancel(smem_address(result), smem_address(&mbar), multicast);
  const bool arrived = mbar_wait(smem_address(&mbar));
  if (threadIdx.x == 0)
    ok[rank] = arrived && result[0] == 0 && result[1] == 0 && result[2] == 0 && result[3] == 0;
  cluster_sync_all();
}

void cancel_cases() {
  int* ok = nullptr;
  CUDA_CHECK(cudaMalloc(&ok, 2 * sizeof(int)));
  for (u32 ctas : {1u, 2u}) {
    CUDA_CHECK(cudaMemset(ok, 0, 2 * sizeof(int)));
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(ctas, 1, 1);
    config.blockDim = dim3(32, 1, 1);
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = ctas;
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    config.attrs = &attribute;
    config.numAttrs = 1;
    CUDA_CHECK(cudaLaunchKernelEx(&config, cancel_kernel, ok, ctas == 2 ? 1u : 0u));
    CUDA_CHECK(cudaDeviceSynchronize());
    int host[2] = {0, 0};
    CUDA_CHECK(cudaMemcpy(host, ok, sizeof(host), cudaMemcpyDeviceToHost));
    report(ctas == 1 ? "try_cancel: zero response, complete_tx 16"
                     : "try_cancel multicast::cluster::all: both CTAs",
           host[0] == 1 && (ctas == 1 || host[1] == 1));
  }
  CUDA_CHECK(cudaFree(ok));
}

void other_cases(std::mt19937& rng) {
  alloc_cases();
  misc_cases(rng);
  cancel_cases();
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP no CUDA device\n");
    return 2;
  }
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (prop.major != 9) {
    std::printf("SKIP needs compute capability 9.x (sm_90a), found %d.%d\n", prop.major,
                prop.minor);
    return 2;
  }
  std::printf("device %s\n", prop.name);
  g_emu.init();
  CUDA_CHECK(cudaMalloc(&g_image, 2 * kSmemBytes));
  CUDA_CHECK(cudaMalloc(&g_wgmma_out, 256 * 64 * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&g_failed, sizeof(int)));
  CUDA_CHECK(cudaMalloc(&g_cycles, sizeof(long long)));
  CUDA_CHECK(
      cudaFuncSetAttribute(mma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  std::mt19937 rng(2024);
  mma_cases(rng);
  other_cases(rng);
  std::printf("%d cases, %d failed\n", g_cases, g_failures);
  return g_failures == 0 ? 0 : 1;
}
