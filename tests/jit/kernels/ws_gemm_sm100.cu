// A warp-specialized SM100 BF16 GEMM shaped like production kernels, for compile_kernel's fidelity
// tests (tests/jit/ws_gemm_test.cc, docs/specialization.md): C = A · Bᵀ, A (M×K) and B (N×K)
// K-major bf16, fp32 accumulation in TMEM, bf16 C (row-major) written through a CuTe tensor. Its
// epilogue reads the accumulator through the transfer `acc_load`, whose layout is chosen at run
// time; nothing else in this file depends on it. Compile-only: it is never launched.
//
// One 128×128 tile per CTA; a cluster of 2 CTAs along M shares its B tile, each CTA loading half
// and multicasting it to both. 8 warps:
//   warp 0     TMA producer: an elected lane waits for a free stage, expects its bytes, loads A and
//              its half of B (cp.async.bulk.tensor, 128-byte swizzle) into a kStages pipeline;
//   warp 1     allocates TMEM (tmemjit::alloc), and an elected lane issues
//              tcgen05.mma.cta_group::1.kind::f16 per 16-deep slice, frees each stage in both CTAs
//              (tcgen05.commit, multicast) and signals the full accumulator;
//   warps 2-3  idle (a production kernel would schedule tiles here);
//   warps 4-7  the epilogue: wait for the accumulator, acc_load it chunk by chunk, convert to bf16
//              and store where acc_load_coord says each register belongs.
// The host creates the tensor maps (2-D, box 64 × 128 for A, 64 × 64 for B, 128-byte swizzle),
// launches (M/128, N/128) CTAs in clusters of 2 with kSmemBytes of dynamic shared memory, and
// requires M % 256 == 0, N % 128 == 0, K % 64 == 0 and K > 0.
#include <cute/tensor.hpp>

#ifdef __CUDACC_RTC__
// NVRTC has no <cuda.h>: the driver's opaque 128-byte tensor map, as cuda.h declares it.
typedef struct alignas(64) CUtensorMap_st {
  unsigned long long opaque[16];
} CUtensorMap;
#else
#include <cuda.h>
#endif

namespace ws_gemm {

using u32 = unsigned int;
using u64 = unsigned long long;

constexpr int kBlockM = 128;  // MMA M: the accumulator is TMEM Layout D, row r in lane r
constexpr int kBlockN = 128;  // MMA N: one fp32 column per output column
constexpr int kBlockK = 64;   // one 128-byte swizzle row of bf16
constexpr int kUmmaK = 16;    // K of one kind::f16 MMA
constexpr int kStages = 4;
constexpr int kClusterSize = 2;
constexpr int kTmemColumns = kBlockN;
constexpr u32 kABytes = kBlockM * kBlockK * 2;
constexpr u32 kBBytes = kBlockN * kBlockK * 2;
constexpr u32 kBHalfBytes = kBBytes / kClusterSize;
constexpr int kThreads = 256;
constexpr int kEpilogueWarp = 4;  // warps 4-7: warp % 4 is the TMEM lane slab each may access
constexpr int kSmemBytes = kStages * int(kABytes + kBBytes) + 1024;
static_assert(kSmemBytes <= 227 * 1024, "the stages fit an SM100 CTA's shared memory");

// Instruction descriptor of tcgen05.mma .kind::f16 (PTX ISA §9.7.16.4.2, "Instruction
// descriptor"): D f32 (bits 4-5 = 1), A and B bf16 (bits 7-9, 10-12 = 1), both K-major (bits 15,
// 16 = 0), N >> 3 in bits 17-22, M >> 4 in bits 24-28.
constexpr u32 kInstrDesc =
    (1u << 4) | (1u << 7) | (1u << 10) | (u32(kBlockN >> 3) << 17) | (u32(kBlockM >> 4) << 24);

__device__ __forceinline__ u32 smem_address(const void* pointer) {
  return static_cast<u32>(__cvta_generic_to_shared(pointer));
}

// Shared memory descriptor (PTX ISA §9.7.16.4.1): a K-major tile of 128-byte rows in 128-byte
// swizzle, 8-row atoms 1024 bytes apart (SBO); the leading offset is unused for this layout.
__device__ __forceinline__ u64 smem_descriptor(u32 address) {
  return u64((address & 0x3FFFFu) >> 4) | (u64(1) << 16) | (u64(1024 >> 4) << 32) | (u64(1) << 46) |
         (u64(2) << 61);
}

__device__ __forceinline__ bool elect_one() {
  u32 elected = 0;
  asm volatile(
      "{\n .reg .b32 leader;\n .reg .pred p;\n elect.sync leader|p, 0xffffffff;\n"
      " selp.u32 %0, 1, 0, p;\n}"
      : "=r"(elected));
  return elected != 0;
}

__device__ __forceinline__ u32 cluster_rank() {
  u32 rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::
                   : "memory");
}

__device__ __forceinline__ void mbarrier_init(u32 barrier, u32 arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(barrier), "r"(arrivals) : "memory");
}

__device__ __forceinline__ void mbarrier_expect_tx(u32 barrier, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(barrier), "r"(bytes)
               : "memory");
}

// Spins until the phase of `parity` has completed; a fresh barrier counts parity 1 as completed,
// so a producer's first pass over the stages does not wait.
__device__ __forceinline__ void mbarrier_wait(u32 barrier, u32 parity) {
  u32 done = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(barrier), "r"(parity)
        : "memory");
  } while (done == 0);
}

__device__ __forceinline__ void tma_load(u32 destination, const CUtensorMap* map, int inner,
                                         int outer, u32 barrier) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(destination),
      "l"(reinterpret_cast<u64>(map)), "r"(inner), "r"(outer), "r"(barrier)
      : "memory");
}

// The same box written at `destination` in every CTA of `mask`, each CTA's barrier at `barrier`
// receiving its bytes.
__device__ __forceinline__ void tma_load_multicast(u32 destination, const CUtensorMap* map,
                                                   int inner, int outer, u32 barrier,
                                                   unsigned short mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(destination),
      "l"(reinterpret_cast<u64>(map)), "r"(inner), "r"(outer), "r"(barrier), "h"(mask)
      : "memory");
}

// D[tmem] (+)= A[a] · B[b]ᵀ, one 128 × 128 × 16 MMA; `accumulate` false overwrites D.
__device__ __forceinline__ void mma_bf16(u32 tmem, u64 a, u64 b, u32 accumulate) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
      " tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}" ::"r"(tmem),
      "l"(a), "l"(b), "r"(kInstrDesc), "r"(accumulate)
      : "memory");
}

// Arrives on `barrier` once every MMA this thread issued before has completed.
__device__ __forceinline__ void mma_commit(u32 barrier) {
  asm volatile(
      "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(barrier)
      : "memory");
}

// The same, arriving on the barrier at `barrier` in every CTA of `mask`.
__device__ __forceinline__ void mma_commit_multicast(u32 barrier, unsigned short mask) {
  asm volatile(
      "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64"
      " [%0], %1;" ::"r"(barrier),
      "h"(mask)
      : "memory");
}

// This CTA's 128 × 128 tile of C as a CuTe tensor, and one element's store into it: CuTe's
// templates are instantiated here, before the transfers, so every layout reuses them.
__device__ __forceinline__ auto output_tile(cute::bfloat16_t* c, int m, int n, int m_block,
                                            int n_block) {
  auto gc = cute::make_tensor(
      cute::make_gmem_ptr(c),
      cute::make_layout(cute::make_shape(m, n), cute::make_stride(n, cute::Int<1>{})));
  return cute::local_tile(gc, cute::make_shape(cute::Int<kBlockM>{}, cute::Int<kBlockN>{}),
                          cute::make_coord(m_block, n_block));
}
using OutputTile = decltype(output_tile(nullptr, 0, 0, 0, 0));

__device__ __forceinline__ void store(const OutputTile& tile, int row, int column, float value) {
  tile(row, column) = cute::bfloat16_t(value);
}

}  // namespace ws_gemm

// Everything above is the same for every layout: compile_kernel precompiles it once, and a new
// layout compiles only what follows (docs/specialization.md, "How a layout compiles").
#include <tmemjit/transfers.cuh>

namespace ws_gemm {

// The chunk loop needs the transfer to read whole 128-row column blocks of the accumulator
// (docs/specialization.md, "The device contract").
static_assert(acc_load_is_load, "acc_load takes a tcgen05.ld spec");
static_assert(acc_load_shape[0] == kBlockM, "acc_load reads all 128 accumulator rows per call");
static_assert(kBlockN % acc_load_columns == 0, "acc_load's chunk divides the tile's columns");
static_assert(kBlockN - acc_load_columns + acc_load_alloc_columns <= kTmemColumns,
              "the last chunk stays inside the allocation");

}  // namespace ws_gemm

extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(ws_gemm::kThreads, 1)
    ws_gemm_bf16(cute::bfloat16_t* c, int m, int n, int k,
                 const __grid_constant__ CUtensorMap tmap_a,
                 const __grid_constant__ CUtensorMap tmap_b) {
  using namespace ws_gemm;
  extern __shared__ __align__(1024) unsigned char smem[];
  unsigned char* smem_a = smem;                      // kStages × kABytes, 1024-byte aligned
  unsigned char* smem_b = smem + kStages * kABytes;  // kStages × kBBytes
  u64* barriers = reinterpret_cast<u64*>(smem + kStages * (kABytes + kBBytes));
  u64* full = barriers;                            // TMA → MMA: a stage's A and B have landed
  u64* empty = barriers + kStages;                 // MMA → TMA (both CTAs): a stage was consumed
  u64* accumulator_full = barriers + 2 * kStages;  // MMA → epilogue
  u32* tmem_base_shared = reinterpret_cast<u32*>(barriers + 2 * kStages + 1);

  const u32 warp = __shfl_sync(0xffffffffu, threadIdx.x / 32, 0);
  const u32 rank = cluster_rank();
  const int m_block = blockIdx.x;
  const int n_block = blockIdx.y;
  const int k_blocks = k / kBlockK;

  if (warp == 0 && elect_one()) {
    asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<u64>(&tmap_a)) : "memory");
    asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<u64>(&tmap_b)) : "memory");
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(smem_address(&full[s]), 1);
      mbarrier_init(smem_address(&empty[s]), kClusterSize);  // one commit from each CTA's MMA
    }
    mbarrier_init(smem_address(accumulator_full), 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  if (warp == 1) tmemjit::alloc(tmem_base_shared, kTmemColumns);
  // The peer multicasts into this CTA's stages and barriers: both initialized before either loads.
  tmemjit::fence_before_sync();
  cluster_sync();
  tmemjit::fence_after_sync();
  const u32 tmem_base = *tmem_base_shared;

  if (warp == 0) {
    if (elect_one()) {
      for (int kb = 0; kb < k_blocks; ++kb) {
        const int stage = kb % kStages;
        const u32 phase = (kb / kStages) & 1;
        mbarrier_wait(smem_address(&empty[stage]), phase ^ 1);
        const u32 full_barrier = smem_address(&full[stage]);
        mbarrier_expect_tx(full_barrier, kABytes + kBBytes);  // A, and both halves of B
        tma_load(smem_address(smem_a + stage * kABytes), &tmap_a, kb * kBlockK, m_block * kBlockM,
                 full_barrier);
        tma_load_multicast(smem_address(smem_b + stage * kBBytes + rank * kBHalfBytes), &tmap_b,
                           kb * kBlockK, n_block * kBlockN + int(rank) * (kBlockN / kClusterSize),
                           full_barrier, (1u << kClusterSize) - 1);
      }
    }
  } else if (warp == 1) {
    for (int kb = 0; kb < k_blocks; ++kb) {
      const int stage = kb % kStages;
      const u32 phase = (kb / kStages) & 1;
      mbarrier_wait(smem_address(&full[stage]), phase);
      tmemjit::fence_after_sync();
      if (elect_one()) {
        const u64 a = smem_descriptor(smem_address(smem_a + stage * kABytes));
        const u64 b = smem_descriptor(smem_address(smem_b + stage * kBBytes));
#pragma unroll
        for (int kk = 0; kk < kBlockK / kUmmaK; ++kk) {
          // A 16-deep slice starts 32 bytes further along the swizzled row (in 16-byte units).
          const u64 step = u64(kk * kUmmaK * 2 / 16);
          mma_bf16(tmem_base, a + step, b + step, (kb | kk) != 0);
        }
        mma_commit_multicast(smem_address(&empty[stage]), (1u << kClusterSize) - 1);
        if (kb == k_blocks - 1) mma_commit(smem_address(accumulator_full));
      }
      __syncwarp();
    }
  } else if (warp >= kEpilogueWarp) {
    mbarrier_wait(smem_address(accumulator_full), 0);
    tmemjit::fence_after_sync();
    const u32 thread = threadIdx.x - kEpilogueWarp * 32;  // tid_in_wg, as acc_load_coord numbers
    const OutputTile tile = output_tile(c, m, n, m_block, n_block);
    // One chunk per iteration, not unrolled: each layout's loads appear once in the SASS.
#pragma unroll 1
    for (int chunk = 0; chunk < kBlockN / acc_load_columns; ++chunk) {
      float regs[acc_load_regs];
      acc_load(tmem_base, regs, warp, chunk * acc_load_columns);
      acc_load_wait();
#pragma unroll
      for (int s = 0; s < acc_load_regs; ++s) {
        int index[2];
        acc_load_coord(thread, s, index);
        if (index[0] < 0) continue;
        store(tile, index[0], chunk * acc_load_columns + index[1], regs[s]);
      }
    }
  }

  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
  if (warp == 1) tmemjit::dealloc(tmem_base, kTmemColumns);
  // Neither CTA exits while its peer may still write its stages or arrive on its barriers.
  cluster_sync();
}
