// A GEMM-style epilogue whose accumulator sits in TMEM, specialized at run time for the layout
// an autotuner picks (docs/specialization.md). One warpgroup per CTA, one tile per CTA:
//   1. alloc TMEM (one warp), fence / barrier / fence;
//   2. store the accumulator into TMEM chunk by chunk with acc_store (the stand-in for the MMA);
//   3. load it chunk by chunk with acc_load, issuing chunk j + 1 before chunk j is used
//      (wait = false: acc_load_wait() waits for the loads in flight);
//   4. out = alpha * acc + beta * bias[column], at the index acc_load_coord gives each register;
//   5. fence / barrier / fence, dealloc.
// Each transfer moves one chunk of `chunk_columns` columns of the tile; the column argument
// offsets it. The layouts (their specs in layouts/) decide which thread holds which element;
// this source never changes.
#include <tmemjit/transfers.cuh>

// Both directions take the same array: a store's spec given for acc_load would compile and store
// registers this kernel never set, so the kernel says which direction each name must be.
static_assert(acc_load_is_load && !acc_store_is_load,
              "acc_load takes a tcgen05.ld spec and acc_store a tcgen05.st spec");

extern "C" __global__ void __launch_bounds__(128)
    epilogue(const float* acc, const float* bias, float* out, float alpha, float beta, int rows,
             int columns, int chunk_columns, unsigned int alloc_columns) {
  __shared__ unsigned int tmem_base_shared;
  const unsigned int thread = threadIdx.x;  // tid_in_wg: the warpgroup is the CTA
  const float* tile_acc = acc + static_cast<long long>(blockIdx.x) * rows * columns;
  float* tile_out = out + static_cast<long long>(blockIdx.x) * rows * columns;
  if (thread / 32 == 0) tmemjit::alloc(&tmem_base_shared, alloc_columns);
  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
  const unsigned int tmem_base = tmem_base_shared;
  const int chunks = columns / chunk_columns;
  // Element offsets in 64 bits: each register's index is a part per thread plus a constant per
  // slot, and only a 64-bit sum lets the compiler fold that constant into the load's or store's
  // immediate offset. In int, a sign extension sits between them, and for Layout F half the
  // kernel's SASS was per-element address arithmetic (1344 instructions against 672).
  const long long row_stride = columns;

  // The accumulator into TMEM (what the MMA would leave there).
  for (int j = 0; j < chunks; ++j) {
    float regs[acc_store_regs];
#pragma unroll
    for (int s = 0; s < acc_store_regs; ++s) {
      int index[2];
      acc_store_coord(thread, s, index);
      const long long column = static_cast<long long>(j) * chunk_columns + index[1];
      regs[s] = index[0] < 0 ? 0.0f : tile_acc[index[0] * row_stride + column];
    }
    acc_store(tmem_base, regs, j * chunk_columns);
  }
  acc_store_wait();
  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();

  // The epilogue: where two chunks fit in registers (acc_load_regs is a compile-time constant of
  // the layout), chunk j + 1 is in flight while chunk j is scaled and written.
  constexpr bool kOverlap = 2 * acc_load_regs <= 128;
  float current[acc_load_regs];
  acc_load(tmem_base, current, 0);
  for (int j = 0; j < chunks; ++j) {
    acc_load_wait();
    float next[acc_load_regs];  // unused, and gone, without kOverlap
    if (kOverlap && j + 1 < chunks) acc_load(tmem_base, next, (j + 1) * chunk_columns);
#pragma unroll
    for (int s = 0; s < acc_load_regs; ++s) {
      int index[2];
      acc_load_coord(thread, s, index);
      if (index[0] < 0) continue;
      const long long column = static_cast<long long>(j) * chunk_columns + index[1];
      tile_out[index[0] * row_stride + column] = alpha * current[s] + beta * bias[column];
    }
    if (j + 1 < chunks) {
      if (kOverlap) {
#pragma unroll
        for (int s = 0; s < acc_load_regs; ++s) current[s] = next[s];
      } else {
        acc_load(tmem_base, current, (j + 1) * chunk_columns);
      }
    }
  }
  acc_load_wait();

  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
  if (thread / 32 == 0) tmemjit::dealloc(tmem_base, alloc_columns);
}
