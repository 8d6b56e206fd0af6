// Kernel specialization (docs/design.md §Specialization): a transfer as a device function inside
// the user's own kernel, and compile_kernel, which specializes that kernel for layouts chosen at
// run time.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tmem/compile.h"
#include "tmem/device_function.h"
#include "tmem/export.h"
#include "tmem/kernel.h"
#include "tmem/opcode.h"
#include "tmem/result.h"
#include "tmem/span.h"
#include "tmem/target.h"
#include "tmem/transfer.h"

TMEMJIT_API_BEGIN
namespace tmem {

// The user's kernel specialized for the transfers, compiled for options.target, cached in memory
// and on disk like compile_transfer (keyed by the source, the entry, each transfer's name, options
// and TransferSpec::fingerprint, the compile options, the compiler versions and the library
// build). CUDA C++ goes through NVRTC once per source and register counts (the transfers as
// external functions, to LTO IR, itself cached); each layout then costs its generated functions,
// an LTO link that inlines them and the PTX compile (docs/specialization.md). With Target::kSm90
// the same source compiles with the emulated form of every function, and the Kernel binds emulated
// TMEM (one region per CTA) at each launch. Errors: a transfer's own (kRule, ...); kUsage for a bad
// or repeated name, an unknown entry (the message lists the entries found) or an empty source;
// kToolchain with the compiler's log (its lines name source.path and the user's line). A transfer
// the source never calls is a warning (CompileReport::warnings, and stderr once per key).
Result<Kernel> compile_kernel(const KernelSource& source, Span<const NamedTransfer> transfers,
                              const CompileOptions& options = {});
// The same, filling `report` (which may be null): where the kernel came from, the warnings, the
// front end's reuse and each transfer's plan summary.
Result<Kernel> compile_kernel(const KernelSource& source, Span<const NamedTransfer> transfers,
                              const CompileOptions& options, CompileReport* report);

// Ahead of time (docs/specialization.md §Tiers): builds the generic tier of `source` for the
// signatures of `transfers` into the cache tiers (memory, disk, the remote tier; bundles export
// it), so that compile_kernel with Specialization::kLazy answers a new layout of those signatures
// at once, in this process or another. options.specialization is ignored. kUsage naming the
// transfer when its plan cannot be data (the generic tier would not exist for it); the compile's
// own errors as compile_kernel returns them.
Status warmup_kernel(const KernelSource& source, Span<const NamedTransfer> transfers,
                     const CompileOptions& options = {});

// The library's background compiles: the specialized kernels of lazy calls, the generic tiers a
// lazy miss asks for and the precompiled headers a prefix's first compile leaves to the
// background, run one at a time on one thread (docs/specialization.md §Tiers, "How a layout
// compiles").
struct BackgroundCompiles {
  int queued = 0;   // waiting to run
  int running = 0;  // 0 or 1
};
BackgroundCompiles background_compiles();
// Blocks until no background compile is queued or running: for a host that wants every compile it
// started to land before it goes on or exits (the tmemjit command does this before it exits).
// Without it, exit() waits for the running compile and drops the queued ones.
void wait_background_compiles();

}  // namespace tmem
TMEMJIT_API_END
