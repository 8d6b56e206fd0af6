// compile_transfer's internals: its cache key, the compiler versions in it, and a variant of the
// call that says where the kernel came from (for `tmemjit compile` and tests).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kernels/emulation_kernels.h"
#include "runtime/cache/build_id.h"
#include "runtime/cache/module_cache.h"
#include "runtime/ptx/ir.h"
#include "runtime/support/hash.h"
#include "tmem/jit.h"
#include "tmem/plan.h"

namespace tmem {

// The cache key of compile_transfer(spec, options, kind): XXH3-128 of the fixed record
//   "tmemjit/transfer" | spec.fingerprint() | kind | context digest
// where the context digest is a KeyBuilder over kCacheKeyFormatVersion, the target, the resolved
// backend, to_string(options) with the backend resolved, each extra option on its own,
// compiler_version(backend) and libtmemjit's own GNU build ID (so a rebuilt library, whose kernel
// builders may differ, never reuses older entries). kUsage for Backend::kNvrtc.
Result<Key128> transfer_cache_key(const TransferSpec& spec, const CompileOptions& options,
                                  KernelKind kind);

// What one compile_transfer call did.
struct TransferCompileReport {
  ModuleCache::Lookup lookup = ModuleCache::Lookup::kCompiled;
  Key128 key;
  Backend backend = Backend::kNvJitLink;  // the resolved backend
  double compile_ms = 0;  // the compile this call ran (check, build, print, compiler); else 0
  std::string log;        // the compiler's log kept with the entry (also after a disk hit)
  CodeStats code;         // the kernel's code, read from its cubin when it was compiled
  // Target::kSm90: what the emulated harness kernel's status codes name (code k + 1 is
  // checked[k], kernels::check_emulation_status); empty for other targets.
  std::vector<kernels::EmulatedInstruction> checked;
};

// The harness kernel `kind` of a checked plan as PTX IR for options.target and
// options.cta_group: Target::kSm90 gives the emulated kernel and the list of what its status
// codes name (kernels/emulation_kernels.h); other targets, no list.
struct HarnessModule {
  ptx::Module module;
  std::vector<kernels::EmulatedInstruction> checked;
};
Result<HarnessModule> harness_module(const Plan& plan, KernelKind kind,
                                     const CompileOptions& options);

// compile_transfer, filling `report` (which may be null).
Result<Kernel> compile_transfer_reported(const TransferSpec& spec, const CompileOptions& options,
                                         KernelKind kind, TransferCompileReport* report);

}  // namespace tmem
