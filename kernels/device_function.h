// Embeddable PTX for users' own kernels (DESIGN.md §4): a `.visible .func` that performs a Plan's
// tcgen05.st or tcgen05.ld on the caller's registers. (The CUDA C++ twin is
// cuda_device_function in kernels/transfer_kernels.h.)
#pragma once

#include <string>

#include "runtime/ptx/ir.h"
#include "tmem/plan.h"
#include "tmem/result.h"
#include "tmem/target.h"

namespace tmem::kernels {

// The function's name, "tmem_transfer" (as the CUDA C++ form).
std::string device_function_name();

// Builds a module holding only
//   st: .visible .func tmem_transfer(.param .b32 tmem_base, .param .b32 slot0, .., slot<N-1>)
//   ld: .visible .func (.param .align 4 .b8 regs[4N]) tmem_transfer(.param .b32 tmem_base)
// with N = plan.regs_per_thread: parameter slot<s>, or bytes [4s, 4s+4) of `regs`, is register
// slot s of the plan (regs[s] of the CUDA C++ form); ld returns 0 in slots the plan does not load.
// The return is one aggregate because ptxas takes several return parameters only as .reg, which
// is not the callable ABI; in C++ terms the functions are
//   extern "C" __device__ void tmem_transfer(unsigned tmem_base, unsigned slot0, ...);
//   struct Regs { unsigned r[N]; }; extern "C" __device__ Regs tmem_transfer(unsigned tmem_base);
// Contract for the caller: a one-dimensional CTA whose warp (%tid.x / 32) plays the plan's group
// (warp W at warp scope); every thread of the warp calls it (the instructions are .sync.aligned);
// tmem_base is what tcgen05.alloc wrote; the columns are allocated. It ends with wait::st or
// wait::ld. A whole-program compile drops an uncalled .func: compile it as relocatable code
// (ptxas -c) and link it, or put the caller in the same module.
Result<ptx::Module> build_device_function(const Plan& plan, Target target = Target::kSm100a);

}  // namespace tmem::kernels
