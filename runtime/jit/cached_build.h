// The cached build every compile goes through (docs/architecture.md, "One pipeline for every
// compile"): compile_transfer's harness kernels, compile_kernel's specialized kernels and the
// generic tier all get their kernel from here, so a cache entry is looked up, built, stored and
// recovered one way.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "runtime/cache/module_cache.h"
#include "runtime/jit/kernel_impl.h"
#include "runtime/support/hash.h"
#include "tmem/result.h"

namespace tmem {

// What a cached build did, for the caller's report.
struct CachedBuild {
  ModuleCache::Lookup lookup = ModuleCache::Lookup::kCompiled;
  double compile_ms = 0;  // the build this call ran (the last, when an entry was replaced); else 0
  std::string replaced;   // the warning given when a cached entry was unusable; empty otherwise
};

using BuildPayload = std::function<Result<Payload>()>;
using MakeKernel =
    std::function<Result<std::shared_ptr<Kernel::Impl>>(std::shared_ptr<const Payload>)>;

// The kernel of `key`: the module cache's payload (memory, disk, the remote tier, or `build`,
// whose payload then goes to every tier) made into a Kernel::Impl by `make`. With `cacheable`
// false (an include the key cannot describe) the cache is not asked: `build` runs, lookup is
// kUncached. An entry whose metadata `make` cannot read (damaged, forged, of another kind) is a
// miss and never the caller's error (docs/reliability.md): built again, put in its place, and
// `what` named in the warning.
Result<std::shared_ptr<Kernel::Impl>> cached_build(const Key128& key, bool cacheable,
                                                   std::string_view what, const BuildPayload& build,
                                                   const MakeKernel& make, CachedBuild& out);

}  // namespace tmem
