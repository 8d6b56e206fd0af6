// Builders of the harness kernels from a checked Plan (DESIGN.md §4): the PTX IR of a complete
// tcgen05.alloc -> st/ld -> wait -> dealloc -> relinquish kernel.
#pragma once

#include <string>
#include <string_view>

#include "runtime/ptx/ir.h"
#include "tmem/kernel_kind.h"
#include "tmem/plan.h"
#include "tmem/result.h"
#include "tmem/target.h"

namespace tmem::kernels {

// The kinds are public (tmem/kernel_kind.h): compile_transfer, the simulator and `tmemjit run` take
// them.
using tmem::KernelKind;
using tmem::parse_kernel_kind;
using tmem::to_string;

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
Result<ptx::Module> build_kernel(const Plan& plan, KernelKind kind,
                                 Target target = Target::kSm100a);

// The same as CUDA C++: `__device__ __forceinline__ void tmem_transfer(uint32_t tmem_base,
// uint32_t (&regs)[N])`, one asm volatile per instruction, for NVRTC or nvcc.
std::string cuda_device_function(const Plan& plan);

}  // namespace tmem::kernels
