// A DeepGEMM-style warp-specialized GEMM epilogue, specialized at run time for the accumulator
// layout an autotuner picks (docs/specialization.md). One CTA of 8 warps per 128 x kColumns tile:
//   warpgroup 0 (warps 0-3) stands in for the MMA: it fills TMEM with the accumulator from global
//     memory through acc_fill. (A warp reaches only its own 32-lane slab of TMEM, lanes
//     32 * (warp % 4) .., so it takes four warps to write all 128 lanes, as the MMA does.)
//   warps 4-7 are the epilogue: acc_load with warp_argument (the warp's rank in its warpgroup,
//     held in a uniform register) and column_argument, stepping chunk by chunk through the
//     accumulator by acc_load_columns; each element converted to bf16 and written to a
//     128B-swizzled shared-memory tile (64 columns of bf16 per 128-byte row, the layout a TMA store
//     reads), then the tile copied to global memory in 16-byte pieces, row by row (the TMA store's
//     stand-in).
// Nothing of the layout is passed in: the chunk geometry is the device contract's (NAME_shape,
// NAME_columns), so the loops unroll, and a layout the epilogue cannot use stops the compile at a
// static_assert below, with its message.
#include <cuda_bf16.h>  // before the transfers: parsed once, reused by every layout

#include <tmemjit/transfers.cuh>

#ifndef WS_COLUMNS
#define WS_COLUMNS 256  // BLOCK_N: the host's problem size (-DWS_COLUMNS=N), not a layout's
#endif

namespace {

constexpr int kRows = 128;            // BLOCK_M: one accumulator row per TMEM lane
constexpr int kColumns = WS_COLUMNS;  // BLOCK_N: fp32 accumulator columns, one TMEM column each
constexpr unsigned int kAllocColumns = kColumns;
constexpr int kSwizzleColumns = 64;         // bf16 columns of one 128-byte row of the swizzled tile
constexpr unsigned int kEpilogueWarp0 = 4;  // warps 4-7: the epilogue warpgroup

static_assert(kColumns >= 32 && (kColumns & (kColumns - 1)) == 0 && kColumns <= 512,
              "epilogue_ws: BLOCK_N is a TMEM allocation: a power of two from 32 to 512");
static_assert(kColumns % kSwizzleColumns == 0,
              "epilogue_ws: BLOCK_N must be whole 64-column rows of the swizzled tile");
static_assert(!acc_fill_is_load && acc_load_is_load,
              "epilogue_ws: acc_fill takes a tcgen05.st spec and acc_load a tcgen05.ld spec");
static_assert(acc_load_shape[0] == kRows,
              "epilogue_ws: a chunk must hold all 128 rows of the accumulator (one TMEM lane each, "
              "32 per epilogue warp)");
static_assert(
    kSwizzleColumns % acc_load_shape[1] == 0,
    "epilogue_ws: a chunk's columns must divide the 64 columns of one 128-byte row of the "
    "swizzled shared-memory tile");
static_assert(acc_fill_shape[0] == kRows && kColumns % acc_fill_shape[1] == 0,
              "epilogue_ws: acc_fill must write 128 rows in chunks that divide BLOCK_N");
static_assert(kColumns / acc_load_shape[1] * acc_load_columns <= static_cast<int>(kAllocColumns) &&
                  kColumns / acc_fill_shape[1] * acc_fill_columns <=
                      static_cast<int>(kAllocColumns),
              "epilogue_ws: the chunks of this layout do not fit in the accumulator's allocation");

constexpr int kChunkColumns = acc_load_shape[1];
constexpr int kChunksPerRow = kSwizzleColumns / kChunkColumns;  // chunks per swizzled tile

// CuTe's Swizzle<3,4,3> over bytes (the 128B swizzle of TMA and UMMA): the 16-byte piece of a
// 128-byte row moves by the row's index modulo 8, so eight rows of one column hit eight banks.
__device__ __forceinline__ unsigned int swizzled_byte(int row, int column) {
  const unsigned int byte = 2u * static_cast<unsigned int>(column);
  return static_cast<unsigned int>(row) * 128u + (((byte / 16u) ^ (row % 8u)) * 16u) + byte % 16u;
}

__device__ __forceinline__ void epilogue_barrier() {  // the four epilogue warps only
  asm volatile("bar.sync 1, 128;" ::: "memory");
}

__device__ __forceinline__ void handoff() {  // TMEM from warp to warp (docs/tcgen05-rules.md §Sync)
  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
}

}  // namespace

// One CTA per SM, as DeepGEMM runs: ptxas may spend registers rather than spill.
extern "C" __global__ void __launch_bounds__(256, 1)
    epilogue_ws(const float* acc, unsigned short* d_bf16) {
  __shared__ unsigned int tmem_base_shared;
  __shared__ __align__(1024) unsigned char tile[kRows * 128];  // 128 rows x 64 bf16, swizzled
  // The warp index in a uniform register, as DeepGEMM holds it; the thread's rank in its
  // warpgroup (tid_in_wg, what NAME_coord numbers) as threadIdx.x % 128, so that NAME_coord's
  // bound check folds.
  const unsigned int warp = __shfl_sync(~0u, threadIdx.x / 32u, 0);
  const unsigned int thread = threadIdx.x % 128u;
  const long long tile_offset = static_cast<long long>(blockIdx.x) * kRows * kColumns;

  if (warp == 0) tmemjit::alloc(&tmem_base_shared, kAllocColumns);
  handoff();
  const unsigned int tmem_base = tmem_base_shared;

  if (warp < kEpilogueWarp0) {
    // The MMA's stand-in: the accumulator into TMEM, chunk by chunk.
#pragma unroll
    for (int j = 0; j < kColumns / acc_fill_shape[1]; ++j) {
      float regs[acc_fill_regs];
#pragma unroll
      for (int s = 0; s < acc_fill_regs; ++s) {
        int index[2];
        acc_fill_coord(thread, s, index);
        regs[s] = index[0] < 0 ? 0.0f
                               : acc[tile_offset + index[0] * static_cast<long long>(kColumns) +
                                     j * acc_fill_shape[1] + index[1]];
      }
      acc_fill(tmem_base, regs, warp, j * acc_fill_columns);
    }
  }
  handoff();  // the accumulator is complete (DeepGEMM: the MMA's commit to an mbarrier)

  if (warp >= kEpilogueWarp0) {
    const unsigned int epilogue_warp = warp - kEpilogueWarp0;  // rank in the warpgroup: its lanes
#pragma unroll
    for (int block = 0; block < kColumns / kSwizzleColumns; ++block) {
      // TMEM -> registers -> bf16 -> the swizzled tile.
#pragma unroll
      for (int c = 0; c < kChunksPerRow; ++c) {
        const int chunk = block * kChunksPerRow + c;
        float regs[acc_load_regs];
        acc_load(tmem_base, regs, epilogue_warp, chunk * acc_load_columns);
#pragma unroll
        for (int s = 0; s < acc_load_regs; ++s) {
          int index[2];
          acc_load_coord(thread, s, index);
          if (index[0] < 0) continue;
          const __nv_bfloat16 value = __float2bfloat16_rn(regs[s]);
          *reinterpret_cast<__nv_bfloat16*>(
              &tile[swizzled_byte(index[0], c * kChunkColumns + index[1])]) = value;
        }
      }
      epilogue_barrier();  // the tile is whole
      // The tile to global memory: 8 threads per 128-byte row, 16 bytes each, un-swizzled.
#pragma unroll
      for (int k = 0; k < kRows * 8 / 128; ++k) {
        const int piece = static_cast<int>(thread) + 128 * k;
        const int row = piece / 8, column = (piece % 8) * 8;
        const uint4 bytes = *reinterpret_cast<const uint4*>(&tile[swizzled_byte(row, column)]);
        *reinterpret_cast<uint4*>(d_bf16 + tile_offset + row * static_cast<long long>(kColumns) +
                                  block * kSwizzleColumns + column) = bytes;
      }
      epilogue_barrier();  // read before the next block overwrites it
    }
  }

  handoff();
  if (warp == 0) tmemjit::dealloc(tmem_base, kAllocColumns);
}
