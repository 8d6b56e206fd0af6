// Builders of the harness kernels from a checked Plan (DESIGN.md §4): the PTX IR of a complete
// tcgen05.alloc -> st/ld -> wait -> dealloc -> relinquish kernel.
#pragma once

#include <string>
#include <string_view>

#include "runtime/ptx_ir.h"
#include "tmem/plan.h"
#include "tmem/result.h"
#include "tmem/target.h"

namespace tmem::kernels {

// What a harness kernel does. Every kind holds the whole lifecycle of TCGEN05.md §7.
//   roundtrip  In[thread][slot] -> registers -> st -> wait::st -> ld -> wait::ld -> Out[thread][slot]
//   store      In -> st (the plan) -> wait::st, then TMEM -> Raw[lane][column] through 32x32b
//   load       Raw -> TMEM through 32x32b, then ld (the plan) -> wait::ld -> Out
//   fill       Raw -> TMEM -> Raw2 through 32x32b only (checks the raw path itself)
// `store` and `load` check a plan against the independent 32x32b identity image.
enum class KernelKind { kRoundtrip, kStore, kLoad, kFill };

std::string_view to_string(KernelKind kind) noexcept;
Result<KernelKind> parse_kernel_kind(std::string_view text);

// The entry's name: "tmem_<kind>".
std::string kernel_name(KernelKind kind);

// Launch shape of a harness kernel: one CTA of `threads` threads. Parameters, in order: the u64
// global pointers In, Out (roundtrip); In, Raw (store); Raw, Out (load); Raw, Raw2 (fill).
// In/Out hold threads x slots u32 words (row = CTA thread); Raw holds 128 x raw_columns words.
struct LaunchShape {
  int threads = 128;
  int slots = 0;        // register slots per thread in In/Out (the plan's register budget)
  int raw_columns = 0;  // columns per lane in Raw (the plan's allocation)
};
LaunchShape launch_shape(const Plan& plan, KernelKind kind);

// Builds the kernel for `target`. The Plan must come from tmem::check.
Result<ptx::Module> build_kernel(const Plan& plan, KernelKind kind, Target target = Target::kSm100a);

// The same as CUDA C++: `__device__ __forceinline__ void tmem_transfer(uint32_t tmem_base,
// uint32_t (&regs)[N])`, one asm volatile per instruction, for NVRTC or nvcc.
std::string cuda_device_function(const Plan& plan);

}  // namespace tmem::kernels
