// tmem::Runtime (include/tmem/runtime.h): what it owns, the thread's current one, and the
// holders that lower stages declare, defined as the current runtime's.
#include "runtime/jit/runtime_state.h"

#include <utility>

#include "runtime/support/exit_point.h"
#include "tmem/runtime.h"

namespace tmem {

namespace {

// The calling thread's runtime; null means the default one.
thread_local Runtime* current_runtime = nullptr;

}  // namespace

RuntimeState::RuntimeState(const CacheOptions& cache)
    : modules_(cache), eager_(make_eager_pipeline()), tiers_(*eager_) {}

RuntimeState::~RuntimeState() {
  if (background_) background_->shutdown();
}

void RuntimeState::start_background(Runtime& owner) {
  // Not make_shared: the exit hook's weak_ptr would keep the compiler's memory, not just the
  // control block, for the life of the process.
  background_ = std::shared_ptr<BackgroundCompiler>(
      new BackgroundCompiler([&owner] { current_runtime = &owner; }));
  // Process exit ends the background work of every runtime still alive then, before any static
  // destructor (exit_point.h); a runtime destroyed earlier has ended it itself.
  ExitPoint::instance().on_exit([weak = std::weak_ptr<BackgroundCompiler>(background_)] {
    if (const std::shared_ptr<BackgroundCompiler> compiler = weak.lock()) compiler->shutdown();
  });
}

RuntimeState& current_runtime_state() { return Runtime::current().state(); }
BackgroundCompiler& background_compiler() { return current_runtime_state().background(); }

ModuleCache& module_cache() { return current_runtime_state().modules(); }
IncludeClosureCache& include_closure_cache() { return current_runtime_state().include_closures(); }

Runtime::Runtime(const CacheOptions& cache) : state_(std::make_unique<RuntimeState>(cache)) {
  state_->start_background(*this);
}
Runtime::Runtime() : Runtime(cache_options_from_env()) {}
Runtime::~Runtime() = default;  // RuntimeState's destructor shuts the background down first

Runtime& Runtime::default_runtime() {
  // Never destroyed: a compile or a background job may still reach it during exit.
  static Runtime* const runtime = new Runtime();
  return *runtime;
}

Runtime& Runtime::current() {
  return current_runtime != nullptr ? *current_runtime : default_runtime();
}

Runtime::Use::Use(Runtime& runtime) : previous_(std::exchange(current_runtime, &runtime)) {}
Runtime::Use::~Use() { current_runtime = previous_; }

int Runtime::shutdown() { return state_->background().shutdown(); }
void Runtime::wait_background_compiles() { state_->background().drain(); }
BackgroundCompiles Runtime::background_compiles() const { return state_->background().pending(); }

}  // namespace tmem
