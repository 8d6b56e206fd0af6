// A 2-CTA (cta_group::2) warp-specialized SM100 BF16 GEMM, for the emulation's end-to-end test
// (python/tests/test_ws_gemm.py, docs/emulation.md): C = A · Bᵀ, A (M×K) and B (N×K) K-major
// bf16, fp32 C (row-major) read straight from TMEM by the kernel's own tcgen05.ld. No CuTe and no
// libtmemjit transfer: every tcgen05 statement is the kernel's own, as in a third-party kernel.
//
// A cluster of 2 CTAs is one CTA pair computing a 256×128 tile with one M=256 MMA per 16-deep
// slice: the even CTA (the leader) holds rows 0-127 of the tile's A and columns 0-63 of its B, the
// odd CTA rows 128-255 and columns 64-127 (the 2-CTA A/B/D layouts of PTX ISA §9.7.16.10.5). 8
// warps:
//   warp 0     TMA producer of each CTA: an elected lane waits for a free stage of its own CTA,
//              then loads its half of A and of B with cp.async.bulk.tensor .cta_group::2, both
//              signalling the leader's full barrier (the leader expects the bytes of both CTAs);
//   warp 1     allocates 128 TMEM columns in both CTAs (tcgen05.alloc.cta_group::2); in the
//              leader, an elected lane issues tcgen05.mma.cta_group::2 per slice, frees the stage
//              in both CTAs (tcgen05.commit .multicast::cluster) and signals both accumulators;
//   warps 4-7  the epilogue of each CTA: wait for its accumulator, read its 128 lanes with
//              tcgen05.ld.32x32b.x16 and store them.
// The host makes the tensor maps (2-D bf16, 128-byte swizzle, box 64 × 128 for A and 64 × 64 for
// B), launches (M/128, N/128) CTAs in clusters of 2 along x with kSmemBytes of dynamic shared
// memory, and requires M % 256 == 0, N % 128 == 0, K % 64 == 0 and K > 0.
//
// pair_gemm_bf16_multicast is the same GEMM in clusters of 4 (two pairs, rows 0-255 and 256-511
// of a 512-row block, the same columns): the first pair loads B for both, with TMA .cta_group::2
// .multicast::cluster into CTAs r and r + 2, each destination's bytes completing on its own
// pair's leader; a stage is free once both leaders' MMAs consumed it (the empty barriers count 2
// arrivals, and each leader's commit frees the stage in all four CTAs). M % 512 == 0.

#ifdef __CUDACC_RTC__
// NVRTC has no <cuda.h>: the driver's opaque 128-byte tensor map, as cuda.h declares it.
typedef struct alignas(64) CUtensorMap_st {
  unsigned long long opaque[16];
} CUtensorMap;
#else
#include <cuda.h>
#endif

namespace pair_gemm {

using u32 = unsigned int;
using u64 = unsigned long long;

constexpr int kPairM = 256;  // MMA M across the pair: 128 rows (TMEM lanes) in each CTA
constexpr int kBlockM = 128;
constexpr int kBlockN = 128;  // MMA N: one fp32 column per output column, in each CTA
constexpr int kHalfN = kBlockN / 2;
constexpr int kBlockK = 64;  // one 128-byte swizzle row of bf16
constexpr int kUmmaK = 16;
constexpr int kStages = 3;
constexpr int kTmemColumns = kBlockN;
constexpr u32 kABytes = kBlockM * kBlockK * 2;  // this CTA's half of A per stage
constexpr u32 kBBytes = kHalfN * kBlockK * 2;   // this CTA's half of B per stage
constexpr int kThreads = 256;
constexpr int kEpilogueWarp = 4;
constexpr int kSmemBytes = kStages * int(kABytes + kBBytes) + 1024;
static_assert(kSmemBytes <= 227 * 1024, "the stages fit an SM100 CTA's shared memory");

// Instruction descriptor of .kind::f16 (PTX ISA §9.7.16.4.2): D f32, A and B bf16, K-major,
// N >> 3 in bits 17-22, M >> 4 in bits 24-28 (M = 256: the pair's rows).
constexpr u32 kInstrDesc =
    (1u << 4) | (1u << 7) | (1u << 10) | (u32(kBlockN >> 3) << 17) | (u32(kPairM >> 4) << 24);

__device__ __forceinline__ u32 smem_address(const void* pointer) {
  return static_cast<u32>(__cvta_generic_to_shared(pointer));
}

// K-major, 128-byte swizzle, 8-row atoms 1024 bytes apart (PTX ISA §9.7.16.4.1).
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

// The shared::cluster address of `address` (this CTA's) in the CTA of cluster rank `rank`.
__device__ __forceinline__ u32 in_cta(u32 address, u32 rank) {
  u32 mapped;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(mapped) : "r"(address), "r"(rank));
  return mapped;
}

__device__ __forceinline__ void mbarrier_init(u32 barrier, u32 arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(barrier), "r"(arrivals) : "memory");
}

__device__ __forceinline__ void mbarrier_expect_tx(u32 barrier, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(barrier), "r"(bytes)
               : "memory");
}

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

// A box into this CTA's `destination`, its bytes completed on `barrier`, a shared::cluster
// address in either CTA of the pair (PTX ISA §9.7.9.25.5.1, .cta_group::2).
__device__ __forceinline__ void tma_load_pair(u32 destination, const CUtensorMap* map, int inner,
                                              int outer, u32 barrier) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".cta_group::2 [%0], [%1, {%2, %3}], [%4];" ::"r"(destination),
      "l"(reinterpret_cast<u64>(map)), "r"(inner), "r"(outer), "r"(barrier)
      : "memory");
}

// The same load into this CTA and the CTAs of `mask`, each destination's bytes completed on the
// barrier at `barrier`'s offset in its own pair's leader (.multicast::cluster with .cta_group::2).
__device__ __forceinline__ void tma_load_pair_multicast(u32 destination, const CUtensorMap* map,
                                                        int inner, int outer, u32 barrier,
                                                        unsigned short mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster.cta_group::2 [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(destination),
      "l"(reinterpret_cast<u64>(map)), "r"(inner), "r"(outer), "r"(barrier), "h"(mask)
      : "memory");
}

// D (+)= A · Bᵀ over the pair: one 256 × 128 × 16 MMA, issued by the leader for both CTAs.
__device__ __forceinline__ void mma_pair(u32 tmem, u64 a, u64 b, u32 accumulate) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
      " tcgen05.mma.cta_group::2.kind::f16 [%0], %1, %2, %3, p;\n}" ::"r"(tmem),
      "l"(a), "l"(b), "r"(kInstrDesc), "r"(accumulate)
      : "memory");
}

// Arrives on the barrier at `barrier` in the CTAs of `mask` once the MMAs issued before have
// completed.
__device__ __forceinline__ void commit_to(u32 barrier, unsigned short mask) {
  asm volatile(
      "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64"
      " [%0], %1;" ::"r"(barrier),
      "h"(mask)
      : "memory");
}

// The GEMM of one CTA; kShareB: clusters of 4 whose first pair multicasts B to both (above).
template <bool kShareB>
__device__ __forceinline__ void pair_gemm(float* c, int n, int k, const CUtensorMap* tmap_a,
                                          const CUtensorMap* tmap_b) {
  extern __shared__ __align__(1024) unsigned char smem[];
  unsigned char* smem_a = smem;                      // kStages × kABytes
  unsigned char* smem_b = smem + kStages * kABytes;  // kStages × kBBytes
  u64* barriers = reinterpret_cast<u64*>(smem + kStages * (kABytes + kBBytes));
  u64* full = barriers;                            // (leader's) TMA of both CTAs → MMA
  u64* empty = barriers + kStages;                 // MMA → each CTA's TMA: a stage was consumed
  u64* accumulator_full = barriers + 2 * kStages;  // MMA → each CTA's epilogue
  u32* tmem_base_shared = reinterpret_cast<u32*>(barriers + 2 * kStages + 1);

  const u32 warp = __shfl_sync(0xffffffffu, threadIdx.x / 32, 0);
  const u32 rank = cluster_rank();
  const u32 pair_leader = rank & ~1u;
  const bool leader = rank == pair_leader;
  const unsigned short pair_mask = (unsigned short)(3u << pair_leader);
  // A stage of a CTA is written by its pair, and with kShareB by the first pair too: it is free
  // once every leader that reads it has committed.
  const unsigned short free_mask = kShareB ? (unsigned short)0xF : pair_mask;
  const int pair_m = blockIdx.x / 2;  // the pair's 256-row block of C
  const int n_block = blockIdx.y;
  const int k_blocks = k / kBlockK;

  if (warp == 0 && elect_one()) {
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(smem_address(&full[s]), 1);                 // the leader's expect_tx
      mbarrier_init(smem_address(&empty[s]), kShareB ? 2 : 1);  // the leaders' commits
    }
    mbarrier_init(smem_address(accumulator_full), 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  if (warp == 1) {
    asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(
                     smem_address(tmem_base_shared)),
                 "r"(kTmemColumns)
                 : "memory");
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;" ::: "memory");
  }
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  cluster_sync();  // both CTAs' barriers exist before the peer signals the leader's
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  const u32 tmem_base = *tmem_base_shared;

  if (warp == 0) {
    if (elect_one()) {
      for (int kb = 0; kb < k_blocks; ++kb) {
        const int stage = kb % kStages;
        const u32 phase = (kb / kStages) & 1;
        mbarrier_wait(smem_address(&empty[stage]), phase ^ 1);
        const u32 full_barrier = in_cta(smem_address(&full[stage]), pair_leader);
        if (leader) mbarrier_expect_tx(smem_address(&full[stage]), 2 * (kABytes + kBBytes));
        tma_load_pair(smem_address(smem_a + stage * kABytes), tmap_a, kb * kBlockK,
                      pair_m * kPairM + int(rank % 2) * kBlockM, full_barrier);
        const int b_row = n_block * kBlockN + int(rank % 2) * kHalfN;
        if (!kShareB)
          tma_load_pair(smem_address(smem_b + stage * kBBytes), tmap_b, kb * kBlockK, b_row,
                        full_barrier);
        else if (rank < 2)  // the first pair: into this CTA and its counterpart in the second
          tma_load_pair_multicast(smem_address(smem_b + stage * kBBytes), tmap_b, kb * kBlockK,
                                  b_row, full_barrier, (unsigned short)(5u << rank));
      }
    }
  } else if (warp == 1 && leader) {
    for (int kb = 0; kb < k_blocks; ++kb) {
      const int stage = kb % kStages;
      const u32 phase = (kb / kStages) & 1;
      mbarrier_wait(smem_address(&full[stage]), phase);
      asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
      if (elect_one()) {
        const u64 a = smem_descriptor(smem_address(smem_a + stage * kABytes));
        const u64 b = smem_descriptor(smem_address(smem_b + stage * kBBytes));
#pragma unroll
        for (int kk = 0; kk < kBlockK / kUmmaK; ++kk) {
          const u64 step = u64(kk * kUmmaK * 2 / 16);  // 32 bytes along the swizzled row
          mma_pair(tmem_base, a + step, b + step, (kb | kk) != 0);
        }
        commit_to(smem_address(&empty[stage]), free_mask);
        if (kb == k_blocks - 1) commit_to(smem_address(accumulator_full), pair_mask);
      }
      __syncwarp();
    }
  } else if (warp >= kEpilogueWarp) {
    mbarrier_wait(smem_address(accumulator_full), 0);
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
    const u32 slab = (warp % 4) * 32;  // the TMEM lanes this warp may read (its warp % 4)
    const int row = pair_m * kPairM + int(rank % 2) * kBlockM + int(slab + threadIdx.x % 32);
#pragma unroll 1
    for (int column = 0; column < kBlockN; column += 16) {
      u32 r[16];
      asm volatile(
          "tcgen05.ld.sync.aligned.32x32b.x16.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, "
          "%11, %12, %13, %14, %15}, [%16];"
          : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]),
            "=r"(r[7]), "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]),
            "=r"(r[14]), "=r"(r[15])
          : "r"(tmem_base + (slab << 16) + u32(column)));
      asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
#pragma unroll
      for (int j = 0; j < 16; ++j)
        c[size_t(row) * n + n_block * kBlockN + column + j] = __uint_as_float(r[j]);
    }
  }

  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  __syncthreads();
  cluster_sync();  // the peer's epilogue has read its TMEM before the pair frees it
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  if (warp == 1)
    asm volatile("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, %1;" ::"r"(tmem_base),
                 "r"(kTmemColumns)
                 : "memory");
}

}  // namespace pair_gemm

extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(pair_gemm::kThreads, 1)
    pair_gemm_bf16(float* c, int m, int n, int k, const __grid_constant__ CUtensorMap tmap_a,
                   const __grid_constant__ CUtensorMap tmap_b) {
  (void)m;
  pair_gemm::pair_gemm<false>(c, n, k, &tmap_a, &tmap_b);
}

extern "C" __global__ void __cluster_dims__(4, 1, 1) __launch_bounds__(pair_gemm::kThreads, 1)
    pair_gemm_bf16_multicast(float* c, int m, int n, int k,
                             const __grid_constant__ CUtensorMap tmap_a,
                             const __grid_constant__ CUtensorMap tmap_b) {
  (void)m;
  pair_gemm::pair_gemm<true>(c, n, k, &tmap_a, &tmap_b);
}
