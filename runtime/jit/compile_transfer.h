// compile_transfer's internals: its cache key, the compiler versions in it, and a variant of the
// call that says where the kernel came from (for `tmemjit compile` and tests).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kernels/emulation_kernels.h"
#include "runtime/cache/build_id.h"
#include "runtime/cache/module_cache.h"
#include "runtime/jit/kernel_table.h"
#include "runtime/ptx/ir.h"
#include "runtime/support/hash.h"
#include "tmem/jit.h"
#include "tmem/plan.h"

namespace tmem {

// The cache key of compile_transfer(spec, options, kind): XXH3-128 of the fixed record
//   "tmemjit/transfer" | spec.fingerprint() | kind | context digest
// where the context digest is a KeyBuilder over kCacheKeyFormatVersion, the target, the resolved
// backend, the compile options field by field (runtime/cache/options_key.h), each extra option
// on its own, compiler_version(backend) and libtmemjit's own GNU build ID (so a rebuilt library,
// whose kernel builders may differ, never reuses older entries): context_digest in
// kernel_context.cc. kUsage for Backend::kNvrtc.
Result<Key128> transfer_cache_key(const TransferSpec& spec, const CompileOptions& options,
                                  KernelKind kind);

// What identifies an entry in a runtime's table of transfer Kernel handles: the parts the cache
// key is hashed from, compared as they are, so that a hit never computes the key's XXH3 (only a
// miss does).
struct HitKey {
  SpecFingerprint spec;
  Key128 context;
  KernelKind kind;
  friend bool operator==(const HitKey&, const HitKey&) = default;
};

struct HitKeyHash {
  // The fingerprint and the digest are uniform hashes already: mixing their low halves suffices.
  size_t operator()(const HitKey& key) const noexcept {
    return static_cast<size_t>(key.spec.lo ^ (key.context.lo * 0x9E3779B97F4A7C15ull) ^
                               static_cast<uint64_t>(key.kind));
  }
};

using TransferKernelTable = KernelTable<HitKey, HitKeyHash>;

// The harness kernel `kind` of a checked plan as PTX IR for options.target and
// options.cta_group: Target::kSm90 gives the emulated kernel and the list of what its status
// codes name (kernels/emulation_kernels.h); other targets, no list.
struct HarnessModule {
  ptx::Module module;
  std::vector<kernels::EmulatedInstruction> checked;
};
Result<HarnessModule> harness_module(const Plan& plan, KernelKind kind,
                                     const CompileOptions& options);

// compile_transfer, filling `report` and `checked` (either may be null). `checked` is what the
// status codes of a Target::kSm90 harness kernel name (code k + 1 is checked[k],
// kernels::check_emulation_status); empty for other targets. It is kept out of the public
// CompileReport: only the library's own launcher decodes those codes.
Result<Kernel> compile_transfer_reported(const TransferSpec& spec, const CompileOptions& options,
                                         KernelKind kind, CompileReport* report,
                                         std::vector<kernels::EmulatedInstruction>* checked);

}  // namespace tmem
