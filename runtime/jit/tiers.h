// The tiers of compile_kernel (docs/specialization.md §Tiers): a lazy kernel's switch from the
// generic tier to the specialized kernel, and the background compiler that makes the latter.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "tmem/kernel.h"
#include "tmem/result.h"
#include "tmem/specialize.h"

namespace tmem {

// What a lazy Kernel's copies share: the specialized Impl once it is ready. It is published once
// with a release store and never replaced, so a launch reads one pointer (acquire) and runs one
// whole kernel of either tier; the shared_ptr below keeps the published Impl alive.
class TierSwitch {
 public:
  // The specialized Impl, or null while the generic tier runs.
  Kernel::Impl* specialized() const noexcept { return published_.load(std::memory_order_acquire); }
  // Publishes `impl` (the first call wins) or records why the compile failed; wakes waiters.
  void finish(Result<std::shared_ptr<Kernel::Impl>> result);
  // Blocks until finish(); the compile's error, if it failed.
  Status wait() const;
  // The Impl that ran the last launch (emulation_check reads its records).
  void launched(Kernel::Impl* impl) noexcept { last_.store(impl, std::memory_order_release); }
  Kernel::Impl* last_launched() const noexcept { return last_.load(std::memory_order_acquire); }

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable done_cv_;
  bool done_ = false;
  std::optional<Error> error_;
  std::shared_ptr<Kernel::Impl> holder_;
  std::atomic<Kernel::Impl*> published_{nullptr};
  std::atomic<Kernel::Impl*> last_{nullptr};
};

// One background thread that runs compile jobs in order (the specialized kernels of lazy
// compiles, generic tiers built for later layouts). At process exit (ExitPoint's handler, before
// any static destructor) the job that runs finishes, the queued ones are dropped, their TierSwitch
// told why, and the thread is joined; a job posted after that is dropped at once.
class BackgroundCompiler {
 public:
  static BackgroundCompiler& instance();
  // `job` runs on the background thread; `dropped` runs instead when the process exits first.
  void post(std::function<void()> job, std::function<void()> dropped = {});
  // Blocks until no job is queued or running (tests; a host that wants its caches filled).
  void drain();
  // Drops the queued jobs, waits for the running one and joins the thread; later posts are
  // dropped. Returns how many jobs it dropped. Idempotent (exit calls it).
  int shutdown();
  // Jobs queued or running now.
  BackgroundCompiles pending() const;
  ~BackgroundCompiler();

 private:
  BackgroundCompiler() = default;
  struct Job {
    std::function<void()> run, dropped;
  };
  void loop();
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<Job> queue_;
  bool running_ = false;  // a job runs now
  std::condition_variable idle_cv_;
  bool stopping_ = false;
  std::optional<std::thread> thread_;
};

}  // namespace tmem
