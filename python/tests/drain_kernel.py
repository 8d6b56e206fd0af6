"""The kernel the tier and runtime tests specialize (test_tiers.py, test_runtime.py)."""

# A kernel that drains the accumulator through the transfer into global memory. 32-bit words, so
# every seed form (16x32bx2 included) takes the same registers. Each test renames the entry: a
# cache entry of another test would answer, and lazy returns a cached specialized kernel as is.
DRAIN = r"""
#include <tmemjit/transfers.cuh>

extern "C" __global__ void drain(uint32_t* out) {
  __shared__ uint32_t tmem_base;
  if (threadIdx.x / 32 == 0) tmemjit::alloc(&tmem_base, 128);
  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
  uint32_t regs[acc_load_regs];
  acc_load(tmem_base, regs);
  for (int i = 0; i < acc_load_regs; ++i) out[threadIdx.x * acc_load_regs + i] = regs[i];
  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
  if (threadIdx.x / 32 == 0) tmemjit::dealloc(tmem_base, 128);
}
"""

# A 128x128 f32 accumulator loaded by a warpgroup: 128 registers per thread in every form, so
# the x32 and x16 layouts share one generic tier (its signature counts registers, not forms).
TILE = ('tmem_datapath_layout("D",128,128)', "wg_local_layout(128)")


def source(entry):
    """The kernel with its entry (and every other "drain") renamed to `entry`."""
    return DRAIN.replace("drain", entry)
