// Builders of the harness kernels from a checked Plan (docs/design.md §Codegen): the PTX IR of a
// complete tcgen05.alloc -> st/ld -> wait -> dealloc -> relinquish kernel.
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

// Launch shape of a harness kernel: `ctas` CTAs of `threads` threads (with ctas = 2, one cluster
// of 2 CTAs). Parameters, in order: the u64 global pointers In, Out (roundtrip); In, Raw (store);
// Raw, Out (load); Raw, Raw2 (fill). In/Out hold ctas x threads x slots u32 words (row = CTA
// index x threads + CTA thread); Raw holds ctas x 128 x raw_columns words (row = CTA index x 128 +
// TMEM lane).
struct LaunchShape {
  int threads = 128;
  int slots = 0;        // register slots per thread in In/Out (the plan's register budget)
  int raw_columns = 0;  // columns per lane in Raw (the plan's allocation)
  int ctas = 1;         // 1, or 2: the CTA pair of a cta_group::2 kernel, launched as a cluster
};
LaunchShape launch_shape(const Plan& plan, KernelKind kind, int cta_group = 1);

// Builds the kernel for `target`. The Plan must come from tmem::check. With cta_group = 2 the
// lifecycle is a CTA pair's (docs/tcgen05-rules.md §Lifecycle, R29/R31): warp 0 of each CTA
// allocates with .cta_group::2, a cluster barrier (fence::before, barrier.cluster.arrive/wait,
// fence::after) orders both allocs before any use and every use of both CTAs before either dealloc,
// and a last cluster barrier keeps each CTA active until its peer has released. cta_group other
// than 1 or 2 is kUsage.
Result<ptx::Module> build_kernel(const Plan& plan, KernelKind kind, Target target = Target::kSm100a,
                                 int cta_group = 1);

// The same as CUDA C++: `__device__ __forceinline__ void tmem_transfer(uint32_t tmem_base,
// uint32_t (&regs)[N])`, one asm volatile per instruction, for NVRTC or nvcc.
std::string cuda_device_function(const Plan& plan);

}  // namespace tmem::kernels
