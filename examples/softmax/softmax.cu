// FA4-style softmax over an S tile in TMEM, specialized at run time for the layout an autotuner
// picks (docs/specialization.md). One warpgroup per CTA, one 128 x kColumns tile of S per CTA:
//   1. alloc TMEM (one warp); S into TMEM chunk by chunk with s_store (the stand-in for the MMA);
//   2. the row maximum: S loaded chunk by chunk with s_load, chunk j + 1 in flight while chunk j
//      is reduced (wait = false: s_load_wait() waits for the loads in flight);
//   3. P = exp(S - max), packed two elements to a bf16x2 register and stored OVER S's columns with
//      p_store, the 16-bit store tmem::packed_twin(s_load, bf16) gives: its register q holds, in
//      the same thread, the elements of s_load's registers 2q (low half) and 2q + 1 (high half);
//      the row sums of P in fp32 beside it;
//   4. P loaded back with p_load (the twin read back) and written to global memory as bf16, each
//      half of a register where p_load_coord(thread, q, half) places it;
//   5. fence / barrier / fence, dealloc.
// Nothing of the layout is passed in: every chunk geometry is the device contract's
// (NAME_shape, NAME_columns, NAME_regs), so the chunk loops unroll and a layout this kernel cannot
// use stops the compile at one of the static_asserts below, with its message.
#include <cuda_bf16.h>  // before the transfers: parsed once, reused by every layout

#include <tmemjit/transfers.cuh>

#ifndef SOFTMAX_COLUMNS
#define SOFTMAX_COLUMNS 128  // the host's problem size (-DSOFTMAX_COLUMNS=N), not a layout's
#endif

namespace {

constexpr int kRows = 128;                 // S's rows: one per TMEM lane
constexpr int kColumns = SOFTMAX_COLUMNS;  // S's columns (the key block)
constexpr unsigned int kAllocColumns = kColumns < 32 ? 32u : kColumns;

static_assert((kAllocColumns & (kAllocColumns - 1)) == 0 && kAllocColumns <= 512,
              "softmax: S's columns are a TMEM allocation: a power of two up to 512");

static_assert(s_store_is_load == false && s_load_is_load && p_store_is_load == false &&
                  p_load_is_load,
              "softmax: s_store and p_store take tcgen05.st specs, s_load and p_load tcgen05.ld");
static_assert(s_load_shape[0] == kRows,
              "softmax: a chunk of S must hold all 128 rows of the tile (one per TMEM lane); this "
              "layout's register tile has another number of rows");
static_assert(kColumns % s_load_shape[1] == 0,
              "softmax: a chunk's columns (s_load_shape[1]) must divide S's columns");
static_assert(s_store_shape[0] == s_load_shape[0] && s_store_shape[1] == s_load_shape[1] &&
                  s_store_columns == s_load_columns,
              "softmax: s_store must write the chunk s_load reads");
static_assert(2 * p_store_regs == s_load_regs && p_load_regs == p_store_regs,
              "softmax: p_store must be packed_twin(s_load, bf16) (one bf16x2 register for two of "
              "S) and p_load the twin read back");
static_assert(kColumns / s_load_shape[1] * s_load_columns <= static_cast<int>(kAllocColumns),
              "softmax: the chunks of this layout do not fit in S's TMEM allocation");

constexpr int kChunkColumns = s_load_shape[1];  // S's columns per chunk
constexpr int kChunks = kColumns / kChunkColumns;
// Where two chunks fit in registers beside P, chunk j + 1 is in flight while chunk j is used.
constexpr bool kOverlap = 2 * s_load_regs + p_store_regs <= 160;

// Shared-memory max of floats of any sign: non-negative floats order as signed integers,
// negative ones in reverse as unsigned integers.
__device__ __forceinline__ void shared_max(float* address, float value) {
  if (value >= 0.0f)
    atomicMax(reinterpret_cast<int*>(address), __float_as_int(value));
  else
    atomicMin(reinterpret_cast<unsigned int*>(address), __float_as_uint(value));
}

// A row's partial max or sum over a run of register slots of one row, sent to shared memory once
// per run: once per chunk for 32x32b (one row per thread), per pair of slots for 16x256b (a row
// over four threads). Which row a slot holds is the layout's business (s_load_coord); in the
// unrolled loops the coordinates fold to constants, and so do the run boundaries.
template <bool kMaximum>
struct RowRun {
  float* rows;  // shared memory: one float per row
  int row = -1;
  float value = 0.0f;
  __device__ __forceinline__ void flush() {
    if (row < 0) return;
    if (kMaximum)
      shared_max(&rows[row], value);
    else
      atomicAdd(&rows[row], value);
  }
  __device__ __forceinline__ void add(int r, float v) {
    if (r == row) {
      value = kMaximum ? fmaxf(value, v) : value + v;
      return;
    }
    flush();
    row = r;
    value = v;
  }
};

// Each chunk of S once, in order, the next one in flight while `use` works on the current.
template <typename Use>
__device__ __forceinline__ void for_each_chunk(unsigned int tmem_base, Use use) {
  float current[s_load_regs];
  s_load(tmem_base, current, 0);
#pragma unroll
  for (int j = 0; j < kChunks; ++j) {
    s_load_wait();
    float next[s_load_regs];  // unused, and gone, without kOverlap
    if (kOverlap && j + 1 < kChunks) s_load(tmem_base, next, (j + 1) * s_load_columns);
    use(j, current);
    if (j + 1 < kChunks) {
      if (kOverlap) {
#pragma unroll
        for (int r = 0; r < s_load_regs; ++r) current[r] = next[r];
      } else {
        s_load(tmem_base, current, (j + 1) * s_load_columns);
      }
    }
  }
}

// Step 2: each row's maximum over a chunk, into shared memory.
struct RowMax {
  unsigned int thread;
  float* row_max;
  __device__ __forceinline__ void operator()(int, const float (&chunk)[s_load_regs]) const {
    RowRun<true> run{row_max};
#pragma unroll
    for (int r = 0; r < s_load_regs; ++r) {
      int index[2];
      s_load_coord(thread, r, index);
      if (index[0] >= 0) run.add(index[0], chunk[r]);
    }
    run.flush();
  }
};

// Step 3: P = exp(S - max) of a chunk, stored over it; register q of P packs S's registers 2q
// (bits 0-15) and 2q + 1 (bits 16-31), as packed_twin placed them. The row sums in fp32.
struct PackP {
  unsigned int thread, tmem_base;
  const float* row_max;
  float* row_sum;
  __device__ __forceinline__ void operator()(int j, const float (&chunk)[s_load_regs]) const {
    RowRun<false> run{row_sum};
    unsigned int packed[p_store_regs];
#pragma unroll
    for (int q = 0; q < p_store_regs; ++q) {
      float pair[2] = {0.0f, 0.0f};
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        int index[2];
        s_load_coord(thread, 2 * q + h, index);
        if (index[0] < 0) continue;
        pair[h] = exp2f((chunk[2 * q + h] - row_max[index[0]]) * 1.4426950408889634f);
        run.add(index[0], pair[h]);
      }
      const __nv_bfloat162 bf16x2 = __floats2bfloat162_rn(pair[0], pair[1]);  // .x: bits 0-15
      packed[q] = *reinterpret_cast<const unsigned int*>(&bf16x2);
    }
    run.flush();
    p_store(tmem_base, packed, j * s_load_columns);  // P's cells start at the chunk's first column
  }
};

__device__ __forceinline__ void handoff() {  // TMEM from warp to warp (docs/tcgen05-rules.md §Sync)
  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
}

}  // namespace

// One CTA per SM, as FA4's softmax warpgroups run: ptxas may spend registers rather than spill.
extern "C" __global__ void __launch_bounds__(128, 1)
    softmax(const float* s, unsigned short* p_bf16, float* row_max_out, float* row_sum_out) {
  __shared__ unsigned int tmem_base_shared;
  __shared__ float row_max[kRows], row_sum[kRows];
  const unsigned int thread = threadIdx.x % 128u;  // tid_in_wg: the warpgroup is the CTA
  // 64-bit element offsets: the per-slot constants of the coordinates fold into the addresses.
  const long long tile = static_cast<long long>(blockIdx.x) * kRows * kColumns;
  const float* tile_s = s + tile;
  unsigned short* tile_p = p_bf16 + tile;
  row_max[thread] = __int_as_float(0xff800000);  // -inf
  row_sum[thread] = 0.0f;
  if (thread / 32 == 0) tmemjit::alloc(&tmem_base_shared, kAllocColumns);
  handoff();
  const unsigned int tmem_base = tmem_base_shared;

  // 1. S into TMEM (what the MMA would leave there).
#pragma unroll
  for (int j = 0; j < kChunks; ++j) {
    float regs[s_store_regs];
#pragma unroll
    for (int r = 0; r < s_store_regs; ++r) {
      int index[2];
      s_store_coord(thread, r, index);
      regs[r] =
          index[0] < 0
              ? 0.0f
              : tile_s[index[0] * static_cast<long long>(kColumns) + j * kChunkColumns + index[1]];
    }
    s_store(tmem_base, regs, j * s_store_columns);
  }
  s_store_wait();
  handoff();

  // 2. The row maximum.
  for_each_chunk(tmem_base, RowMax{thread, row_max});
  __syncthreads();

  // 3. P = exp(S - max) over S, and its row sums.
  for_each_chunk(tmem_base, PackP{thread, tmem_base, row_max, row_sum});
  p_store_wait();
  handoff();

  // 4. P back from TMEM, to global memory at P's own coordinates: p_load_coord names both halves
  // of a bf16x2 register, so wrong pairing in step 3 would show in the data.
  {
    unsigned int current[p_load_regs];
    p_load(tmem_base, current, 0);
#pragma unroll
    for (int j = 0; j < kChunks; ++j) {
      p_load_wait();
      unsigned int next[p_load_regs];
      if (j + 1 < kChunks) p_load(tmem_base, next, (j + 1) * s_load_columns);
#pragma unroll
      for (int q = 0; q < p_load_regs; ++q) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          int index[2];
          p_load_coord(thread, q, h, index);  // half h: bits 16h .. 16h + 15
          if (index[0] < 0) continue;
          tile_p[index[0] * static_cast<long long>(kColumns) + j * kChunkColumns + index[1]] =
              static_cast<unsigned short>(current[q] >> (16 * h));
        }
      }
      if (j + 1 < kChunks) {
#pragma unroll
        for (int q = 0; q < p_load_regs; ++q) current[q] = next[q];
      }
    }
  }
  row_max_out[static_cast<long long>(blockIdx.x) * kRows + thread] = row_max[thread];
  row_sum_out[static_cast<long long>(blockIdx.x) * kRows + thread] = row_sum[thread];

  handoff();
  if (thread / 32 == 0) tmemjit::dealloc(tmem_base, kAllocColumns);
}
