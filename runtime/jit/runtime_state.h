// What a tmem::Runtime owns (include/tmem/runtime.h), and the calling thread's current one. The
// holders that lower stages declare (module_cache(), include_closure_cache()) are defined here as
// the current runtime's: the stage that uses a holder declares it, the runtime owns it.
#pragma once

#include <memory>

#include "runtime/cache/module_cache.h"
#include "runtime/compile/include_closure.h"
#include "runtime/jit/compile_transfer.h"
#include "runtime/jit/kernel_table.h"
#include "runtime/jit/tiers.h"
#include "runtime/support/hash.h"
#include "tmem/runtime.h"  // first: a hidden forward declaration would hide Runtime

namespace tmem {

class RuntimeState {
 public:
  explicit RuntimeState(const CacheOptions& cache);
  // Shuts the background compiler down first: nothing it runs may outlive what it uses.
  ~RuntimeState();
  RuntimeState(const RuntimeState&) = delete;
  RuntimeState& operator=(const RuntimeState&) = delete;

  ModuleCache& modules() { return modules_; }
  IncludeClosureCache& include_closures() { return include_closures_; }
  TransferKernelTable& transfer_kernels() { return transfer_kernels_; }
  KernelTable<Key128, Key128Hash>& specialized_kernels() { return specialized_kernels_; }
  TieredCompiler& tiers() { return tiers_; }
  BackgroundCompiler& background() { return *background_; }
  // Makes the background compiler, whose thread runs under `owner` (the Runtime that owns this).
  void start_background(Runtime& owner);

 private:
  ModuleCache modules_;
  IncludeClosureCache include_closures_;
  TransferKernelTable transfer_kernels_;
  KernelTable<Key128, Key128Hash> specialized_kernels_;
  std::unique_ptr<EagerCompiler> eager_;
  TieredCompiler tiers_;
  // Shared with the process exit hook, which shuts it down if the runtime still lives then.
  std::shared_ptr<BackgroundCompiler> background_;
};

// The calling thread's current runtime's state (Runtime::current()).
RuntimeState& current_runtime_state();
// Its background compiler.
BackgroundCompiler& background_compiler();

}  // namespace tmem
