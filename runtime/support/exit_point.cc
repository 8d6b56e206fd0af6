// Process exit as a defined point for the library's compiles (exit_point.h).
#include "runtime/support/exit_point.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <utility>
#include <vector>

namespace tmem {
namespace {

// Compiles the current thread has entered and not left (a compile may nest another: a generic
// tier's build inside compile_kernel).
thread_local int t_entered = 0;

void run_exit_point() { ExitPoint::instance().run(); }

// exit() calls the exiting thread's thread_local destructors before any atexit handler or static
// destructor (glibc, stdlib/exit.c: __run_exit_handlers calls __call_tls_dtors first), so the
// destructor of a thread_local of the main thread runs before everything a compile in flight may
// use, NVRTC's statics included, however late they were registered (NVRTC registers some during
// its first compiles: an atexit handler registered before such a compile runs after them). The main
// thread is the one that returns from main; the library's load (a constructor below) touches the
// main thread's watch whether or not that thread ever compiles.
struct MainThreadWatch {
  void touch() {}
  ~MainThreadWatch() {
    if (::syscall(SYS_gettid) == ::getpid()) ExitPoint::instance().run();
  }
};
thread_local MainThreadWatch t_main_thread_watch;

__attribute__((constructor)) void watch_the_loading_thread() { t_main_thread_watch.touch(); }

}  // namespace

struct ExitPoint::State {
  std::mutex mutex;
  std::condition_variable left;
  bool exiting = false;
  int active = 0;
  std::vector<std::function<void()>> hooks;
  std::atomic<int> registrations{0};
};

ExitPoint& ExitPoint::instance() {
  static ExitPoint* point = new ExitPoint;  // never destroyed: see the class comment
  return *point;
}

ExitPoint::State& ExitPoint::state() const {
  static State* state = new State;
  return *state;
}

ExitPoint::Guard::~Guard() {
  if (!armed_) return;
  State& state = ExitPoint::instance().state();
  {
    std::lock_guard lock(state.mutex);
    --state.active;
    --t_entered;
  }
  state.left.notify_all();
}

std::optional<ExitPoint::Guard> ExitPoint::enter() {
  State& state = this->state();
  {
    std::lock_guard lock(state.mutex);
    if (state.exiting) return std::nullopt;
    ++state.active;
    ++t_entered;
  }
  return Guard();
}

void ExitPoint::arm() {
  State& state = this->state();
  if (state.registrations.fetch_add(1, std::memory_order_relaxed) >= kMaxRegistrations) return;
  std::atexit(&run_exit_point);
}

void ExitPoint::on_exit(std::function<void()> hook) {
  State& state = this->state();
  std::lock_guard lock(state.mutex);
  state.hooks.push_back(std::move(hook));
}

bool ExitPoint::exiting() const {
  State& state = this->state();
  std::lock_guard lock(state.mutex);
  return state.exiting;
}

void ExitPoint::run() {
  State& state = this->state();
  std::vector<std::function<void()>> hooks;
  {
    std::lock_guard lock(state.mutex);
    if (state.exiting) return;
    state.exiting = true;
    hooks.swap(state.hooks);
  }
  for (const auto& hook : hooks) hook();
  std::unique_lock lock(state.mutex);
  state.left.wait(lock, [&] { return state.active <= t_entered; });
}

Error exiting_error() {
  return Error(ErrorCode::kUsage, "the process is exiting: no compile starts after exit() began",
               "compile before returning from main, or join the thread that compiles first");
}

}  // namespace tmem
