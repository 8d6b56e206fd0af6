// compile_transfer and warmup: a TransferSpec to a cached, lazily loaded Kernel (docs/design.md
// §Codegen).
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "tmem/cache.h"
#include "tmem/compile.h"
#include "tmem/export.h"
#include "tmem/kernel.h"
#include "tmem/kernel_kind.h"
#include "tmem/result.h"
#include "tmem/span.h"
#include "tmem/transfer.h"

TMEMJIT_API_BEGIN
namespace tmem {

// The harness kernel `kind` of `spec`, compiled for options.target by options.backend and cached
// in memory and on disk (docs/cache.md; configure with tmem/cache.h). On a miss: check(spec), build
// the kernel, print its PTX, compile. The Kernel holds the cubin and the PTX; it loads into the
// driver on first load() or launch(), so without a driver this still works (compile-only).
//
// * Cost: a hit on a TransferSpec object seen before (prebuilt), with options among the last four
//   this thread used, allocates nothing and takes one shared lock; a new TransferSpec object pays
//   its fingerprint once (TransferSpec::fingerprint); a disk hit reads one file; a miss costs the
//   check and the compiler.
// * Keys: equal-meaning specs share one entry (TransferSpec::fingerprint); the kind, the target,
//   the resolved backend, the compile options and the compiler's version keep apart what differs.
// * Errors: the spec's rule errors (kRule, ...), the compiler's (kToolchain, with log and PTX), and
//   kUsage for options.backend == kNvrtc (the harness kernels are PTX; NVRTC compiles CUDA C++).
//   Errors are not cached: the next call tries again.
// * options.keep_dir writes files only when a compile runs; a hit writes nothing.
// Thread-safe: concurrent calls for one key compile once, other keys compile in parallel.
Result<Kernel> compile_transfer(const TransferSpec& spec, const CompileOptions& options = {},
                                KernelKind kind = KernelKind::kRoundtrip);
// The same, filling `report` (which may be null): which tier answered, the resolved backend, the
// compile time, the cache key and the compiler's log. On an error the report still says where
// the lookup went (a failed compile is kCompiled).
Result<Kernel> compile_transfer(const TransferSpec& spec, const CompileOptions& options,
                                KernelKind kind, CompileReport* report);

// The PTX of the harness kernel `kind` of `spec` for `target`, exactly as compile_transfer
// compiles it (check()ed first: its rule errors come back as they are). Target::kSm90 gives the
// emulated kernel (TMEM in global memory, one more parameter; docs/emulation.md).
Result<std::string> transfer_ptx(const TransferSpec& spec, KernelKind kind = KernelKind::kRoundtrip,
                                 Target target = Target::kSm100a);
// The same for options.target and options.cta_group (the CTA pair lifecycle of
// CompileOptions::cta_group); the other options do not change the PTX.
Result<std::string> transfer_ptx(const TransferSpec& spec, KernelKind kind,
                                 const CompileOptions& options);

// compile_transfer for every spec, on up to std::thread::hardware_concurrency() threads, for
// precompiling at startup. Specs with one key (equal, or equal in meaning) compile once. Returns
// ok, or the error of the first failing spec (lowest index) with its index and opcode in the
// message, its text in the details and, when others failed too, how many.
Status warmup(Span<const TransferSpec> specs, const CompileOptions& options = {},
              KernelKind kind = KernelKind::kRoundtrip);

// One compile of warmup_each: a spec with options and a kernel kind of its own.
struct WarmupItem {
  TransferSpec spec;
  CompileOptions options;
  KernelKind kind = KernelKind::kRoundtrip;
};
// Told after each item of warmup_each finishes, one call at a time, from any of its threads: how
// many items are done, of how many.
using WarmupProgress = std::function<void(size_t done, size_t total)>;
// compile_transfer of every item on up to `jobs` threads (0: std::thread::hardware_concurrency()),
// for filling a cache from a list (`tmemjit warmup` is a client of it). Items with one key
// compile once. Returns each item's outcome, in the items' order: ok, or its compile's error.
std::vector<Status> warmup_each(Span<const WarmupItem> items, unsigned jobs = 0,
                                const WarmupProgress& progress = {});

}  // namespace tmem
TMEMJIT_API_END
