// The kernel of the tier and exit tests: a chunk stored to TMEM and loaded back through two
// named transfers (acc_st, acc_ld), every element placed where NAME_coord says.
#pragma once

namespace tmem::testing {

inline constexpr const char* kRoundtrip = R"(#include <tmemjit/transfers.cuh>

extern "C" __global__ void __launch_bounds__(128) roundtrip(const float* in, float* out) {
  __shared__ unsigned int base_shared;
  if (threadIdx.x / 32 == 0) tmemjit::alloc(&base_shared, 128);
  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
  const unsigned int base = base_shared;
  float regs[acc_st_regs];
#pragma unroll
  for (int s = 0; s < acc_st_regs; ++s) {
    int index[2];
    acc_st_coord(threadIdx.x, s, index);
    regs[s] = index[0] < 0 ? 0.0f : in[index[0] * 128 + index[1]];
  }
  acc_st(base, regs);
  float back[acc_ld_regs];
  acc_ld(base, back);
#pragma unroll
  for (int s = 0; s < acc_ld_regs; ++s) {
    int index[2];
    acc_ld_coord(threadIdx.x, s, index);
    if (index[0] >= 0) out[index[0] * 128 + index[1]] = back[s];
  }
  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
  if (threadIdx.x / 32 == 0) tmemjit::dealloc(base, 128);
}
)";

}  // namespace tmem::testing
