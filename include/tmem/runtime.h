// The state the library keeps between compiles, owned by one value (docs/architecture.md "The
// runtime"): a host may make its own, as tests, embedders and a process with two caches do.
#pragma once

#include <memory>

#include "tmem/cache.h"
#include "tmem/export.h"
#include "tmem/specialize.h"

TMEMJIT_API_BEGIN
namespace tmem {

class RuntimeState;  // the library's own (runtime/jit/runtime_state.h)

// What compile_transfer, compile_kernel and the cache functions keep between calls: the module
// cache (memory, disk and remote tiers), the tables of loaded Kernel handles, the lazy kernels
// whose specialized compile is in flight, the background compiler that makes them, and the
// include closures of the sources compiled. Every free function of the library uses the calling
// thread's current runtime: the process's default one, unless a Runtime::Use scope on that thread
// names another (as cuCtxPushCurrent does for a CUDA context). A background compile runs under
// the runtime that posted it.
//
// NVRTC's precompiled headers stay the process's: NVRTC has one PCH heap per process, so the
// cache that sizes it and keeps its files is shared by every runtime (docs/specialization.md).
class Runtime {
 public:
  // A runtime whose module cache starts with `cache` (cache_options_from_env() for the one the
  // environment describes, as the default runtime's).
  explicit Runtime(const CacheOptions& cache);
  Runtime();  // Runtime(cache_options_from_env())
  // shutdown(), then frees everything. Kernels it handed out stay valid: each owns its module.
  // No compile may be running under it (on any thread) when it is destroyed.
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // The runtime of the free functions when no Use scope is active. Never destroyed: process exit
  // shuts its background compiler down before any static destructor (docs/reliability.md "Exit").
  static Runtime& default_runtime();
  // The calling thread's current runtime.
  static Runtime& current();

  // Makes `runtime` the calling thread's current runtime until the scope ends; scopes nest.
  class Use {
   public:
    explicit Use(Runtime& runtime);
    ~Use();
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;

   private:
    Runtime* previous_;
  };

  // The defined point where this runtime's background work ends: the running compile finishes,
  // the queued ones are dropped (a lazy kernel keeps its generic tier and says why) and later ones
  // are dropped at once. Returns how many were dropped. Idempotent.
  int shutdown();
  // Blocks until none of this runtime's background compiles is queued or running.
  void wait_background_compiles();
  BackgroundCompiles background_compiles() const;

  // The library's own view of the state.
  RuntimeState& state() { return *state_; }

 private:
  std::unique_ptr<RuntimeState> state_;
};

}  // namespace tmem
TMEMJIT_API_END
