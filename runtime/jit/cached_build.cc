// The cached build (cached_build.h).
#include "runtime/jit/cached_build.h"

#include <chrono>
#include <utility>

#include "runtime/support/warning.h"

namespace tmem {
namespace {

using Clock = std::chrono::steady_clock;

bool is_hit(ModuleCache::Lookup lookup) {
  return lookup == ModuleCache::Lookup::kMemoryHit || lookup == ModuleCache::Lookup::kDiskHit ||
         lookup == ModuleCache::Lookup::kRemoteHit;
}

}  // namespace

Result<std::shared_ptr<Kernel::Impl>> cached_build(const Key128& key, bool cacheable,
                                                   std::string_view what, const BuildPayload& build,
                                                   const MakeKernel& make, CachedBuild& out) {
  auto timed_build = [&]() -> Result<Payload> {
    const auto start = Clock::now();
    Result<Payload> made = build();
    out.compile_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    return made;
  };
  ModuleCache& cache = module_cache();
  Result<ModuleCache::Ptr> payload = ModuleCache::Ptr();
  if (cacheable) {
    payload = cache.get_or_compile(key, timed_build, &out.lookup);
  } else {
    out.lookup = ModuleCache::Lookup::kUncached;
    Result<Payload> made = timed_build();
    if (!made.ok()) return std::move(made).error();
    payload = std::make_shared<const Payload>(std::move(made).value());
  }
  if (!payload.ok()) return std::move(payload).error();
  auto impl = make(*payload);
  if (impl.ok() || !is_hit(out.lookup)) return impl;
  const std::string why = impl.error().message();
  Result<Payload> made = timed_build();
  if (!made.ok()) return std::move(made).error();
  out.lookup = ModuleCache::Lookup::kCompiled;
  out.replaced = "the cache entry of " + std::string(what) + " had unusable metadata (" + why +
                 "); compiled again";
  warn(out.replaced);
  return make(cache.replace(key, std::move(made).value()));
}

}  // namespace tmem
