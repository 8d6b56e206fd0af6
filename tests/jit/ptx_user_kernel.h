// A user's PTX kernel that calls the PTX form's .funcs (docs/design.md §Specialization): written in
// CUDA C++ against the ABI kernels/device_function.h documents (by-value .b32 parameters, one
// aggregate return) and lowered by NVRTC to relocatable PTX, as a code generator that emits PTX
// would produce it. A round trip of one 128 x 128 tile: acc_st stores in[index] where acc_st_coord
// says, acc_ld loads it back and out[index] = the loaded value.
#pragma once

#include <string>

#include "runtime/compile/backends.h"
#include "tmem/result.h"
#include "tmem/target.h"

namespace tmem::testing {

inline std::string ptx_roundtrip_cuda(int regs) {
  const std::string n = std::to_string(regs);
  std::string params, args;
  for (int s = 0; s < regs; ++s) {
    params += ", unsigned int s" + std::to_string(s);
    args += ", __float_as_uint(v[" + std::to_string(s) + "])";
  }
  return "struct acc_ld_regs_t { unsigned int r[" + n +
         "]; };\n"
         "struct coord_t { int i[2]; };\n"
         "extern \"C\" {\n"
         "__device__ acc_ld_regs_t acc_ld(unsigned int tmem_base);\n"
         "__device__ void acc_ld_wait();\n"
         "__device__ void acc_st(unsigned int tmem_base" +
         params +
         ");\n"
         "__device__ coord_t acc_st_coord(unsigned int thread, int slot);\n"
         "__device__ coord_t acc_ld_coord(unsigned int thread, int slot);\n"
         "__device__ void tmemjit_alloc(unsigned int smem_address, unsigned int columns);\n"
         "__device__ void tmemjit_dealloc(unsigned int tmem_base, unsigned int columns);\n"
         "__device__ void tmemjit_fence_before_sync();\n"
         "__device__ void tmemjit_fence_after_sync();\n"
         "}\n"
         "extern \"C\" __global__ void __launch_bounds__(128) roundtrip(const float* in, float* "
         "out) {\n"
         "  __shared__ unsigned int base_shared;\n"
         "  const unsigned int smem = static_cast<unsigned "
         "int>(__cvta_generic_to_shared(&base_shared));\n"
         "  if (threadIdx.x / 32 == 0) tmemjit_alloc(smem, 128);\n"
         "  tmemjit_fence_before_sync();\n"
         "  __syncthreads();\n"
         "  tmemjit_fence_after_sync();\n"
         "  const unsigned int base = base_shared;\n"
         "  float v[" +
         n +
         "];\n"
         "#pragma unroll\n"
         "  for (int s = 0; s < " +
         n +
         "; ++s) {\n"
         "    const coord_t c = acc_st_coord(threadIdx.x, s);\n"
         "    v[s] = c.i[0] < 0 ? 0.0f : in[c.i[0] * 128 + c.i[1]];\n"
         "  }\n"
         "  acc_st(base" +
         args +
         ");\n"
         "  const acc_ld_regs_t back = acc_ld(base);\n"
         "#pragma unroll\n"
         "  for (int s = 0; s < " +
         n +
         "; ++s) {\n"
         "    const coord_t c = acc_ld_coord(threadIdx.x, s);\n"
         "    if (c.i[0] >= 0) out[c.i[0] * 128 + c.i[1]] = __uint_as_float(back.r[s]);\n"
         "  }\n"
         "  tmemjit_fence_before_sync();\n"
         "  __syncthreads();\n"
         "  tmemjit_fence_after_sync();\n"
         "  if (threadIdx.x / 32 == 0) tmemjit_dealloc(base, 128);\n"
         "}\n";
}

// The kernel as relocatable PTX for a tcgen05 target (what the user hands to compile_kernel).
inline Result<std::string> ptx_roundtrip_kernel(int regs) {
  CompileOptions options;
  options.target = Target::kSm100a;
  auto ptx = compile_cuda_front_end(ptx_roundtrip_cuda(regs), "roundtrip.cu", {}, {"--std=c++17"},
                                    {}, options, FrontEndOutput::kRelocatablePtx);
  if (!ptx.ok()) return std::move(ptx).error();
  return std::string(ptx->output.begin(), ptx->output.end());
}

}  // namespace tmem::testing
