// NVRTC's signal handlers kept out of the way of the program's (signal_guard.h).
#include "runtime/cuda/signal_guard.h"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "runtime/support/exit_point.h"

namespace tmem::nvrtc {
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM};
// For the first kCloseWatch of every compile the watcher looks every kCloseWatchPeriod.
constexpr auto kCloseWatch = std::chrono::milliseconds(50);
constexpr auto kCloseWatchPeriod = std::chrono::microseconds(50);

std::atomic<CompileProgramFn> g_real{nullptr};

bool same_action(const struct sigaction& a, const struct sigaction& b) {
  // sa_handler and sa_sigaction share storage; SA_SIGINFO says which one is meant.
  return a.sa_sigaction == b.sa_sigaction && (a.sa_flags & SA_SIGINFO) == (b.sa_flags & SA_SIGINFO);
}

// The process-wide state: how many compiles are in flight, the dispositions before the first, and
// the watcher that keeps them.
class Keeper {
 public:
  void enter() {
    std::lock_guard lock(mutex_);
    // NVRTC installs its handlers as a compile starts: watch closely for a while.
    close_watch_until_ = std::chrono::steady_clock::now() + kCloseWatch;
    wake_.notify_all();
    if (active_++ > 0) return;
    for (size_t i = 0; i < std::size(kSignals); ++i) ::sigaction(kSignals[i], nullptr, &saved_[i]);
    // Created from a thread that blocks the signals, the watcher blocks them too.
    watcher_ = std::thread([this, generation = ++generation_] { watch(generation); });
  }

  // Called before the thread unblocks the signals: the program's handlers are put back first
  // (also while other compiles run, since NVRTC's put back whatever it found, maybe its own), so
  // that a signal pending on this thread reaches them.
  void leave() {
    std::unique_lock lock(mutex_);
    for (size_t i = 0; i < std::size(kSignals); ++i) ::sigaction(kSignals[i], &saved_[i], nullptr);
    if (--active_ > 0) return;
    ++generation_;  // stops this watcher, and no later one
    wake_.notify_all();
    std::thread watcher = std::move(watcher_);
    lock.unlock();
    watcher.join();
    lock.lock();
    // A compile that began while the watcher stopped has saved again and runs a new watcher.
    if (active_ == 0)
      for (size_t i = 0; i < std::size(kSignals); ++i)
        ::sigaction(kSignals[i], &saved_[i], nullptr);
  }

 private:
  void watch(uint64_t generation) {
    pthread_setname_np(pthread_self(), "tmemjit-signals");
    std::unique_lock lock(mutex_);
    while (generation_ == generation) {
      for (size_t i = 0; i < std::size(kSignals); ++i) {
        struct sigaction now {};
        ::sigaction(kSignals[i], nullptr, &now);
        if (!same_action(now, saved_[i])) ::sigaction(kSignals[i], &saved_[i], nullptr);
      }
      wake_.wait_for(lock, std::chrono::steady_clock::now() < close_watch_until_
                               ? kCloseWatchPeriod
                               : kSignalWatchPeriod);
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  int active_ = 0;
  std::chrono::steady_clock::time_point close_watch_until_{};
  uint64_t generation_ = 0;  // of the running watcher; a change tells it to stop
  struct sigaction saved_[std::size(kSignals)]{};
  std::thread watcher_;
};

Keeper& keeper() {
  static Keeper* instance = new Keeper;  // never destroyed: a compile may run during exit
  return *instance;
}

nvrtcResult guarded_compile(nvrtcProgram program, int count, const char* const* options) {
  return compile_keeping_signal_handlers(g_real.load(std::memory_order_acquire), program, count,
                                         options);
}

}  // namespace

nvrtcResult compile_keeping_signal_handlers(CompileProgramFn real, nvrtcProgram program, int count,
                                            const char* const* options) {
  sigset_t block, old;
  sigemptyset(&block);
  for (int number : kSignals) sigaddset(&block, number);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  keeper().enter();
  // NVRTC is loaded and about to run: the exit handler goes after everything registered so far
  // (exit_point.h), so an exit during this compile waits for it before tearing anything down.
  ExitPoint::instance().arm();
  const nvrtcResult result = real(program, count, options);
  keeper().leave();
  pthread_sigmask(SIG_SETMASK, &old, nullptr);  // a pending signal is delivered here
  return result;
}

CompileProgramFn keep_signal_handlers(CompileProgramFn real) {
  g_real.store(real, std::memory_order_release);
  return &guarded_compile;
}

}  // namespace tmem::nvrtc
