// The lazy kernel's tier switch and the background compiler (runtime/jit/tiers.h).
#include "runtime/jit/tiers.h"

#include <string>

#include "runtime/jit/kernel_impl.h"
#include "runtime/support/exit_point.h"
#include "tmem/compile.h"

namespace tmem {

std::string_view to_string(Specialization specialization) noexcept {
  switch (specialization) {
    case Specialization::kEager:
      return "eager";
    case Specialization::kLazy:
      return "lazy";
    case Specialization::kGeneric:
      return "generic";
  }
  return "eager";
}

Result<Specialization> parse_specialization(std::string_view text) {
  for (Specialization s : {Specialization::kEager, Specialization::kLazy, Specialization::kGeneric})
    if (to_string(s) == text) return s;
  return Error(ErrorCode::kUsage,
               "unknown specialization '" + std::string(text) + "'; allowed: eager, lazy, generic");
}

void TierSwitch::finish(Result<std::shared_ptr<Kernel::Impl>> result) {
  {
    std::lock_guard lock(mutex_);
    if (done_) return;
    done_ = true;
    if (result.ok()) {
      holder_ = std::move(result).value();
      published_.store(holder_.get(), std::memory_order_release);
    } else {
      error_ = std::move(result).error();
    }
  }
  done_cv_.notify_all();
}

Status TierSwitch::wait() const {
  std::unique_lock lock(mutex_);
  done_cv_.wait(lock, [&] { return done_; });
  if (error_) return *error_;
  return std::monostate{};
}

BackgroundCompiler& BackgroundCompiler::instance() {
  // Never destroyed: the exit point shuts it down before static destruction (tiers.h).
  static BackgroundCompiler* compiler = [] {
    auto* made = new BackgroundCompiler;
    ExitPoint::instance().on_exit([made] { made->shutdown(); });
    return made;
  }();
  return *compiler;
}

void BackgroundCompiler::post(std::function<void()> job, std::function<void()> dropped) {
  std::lock_guard lock(mutex_);
  if (stopping_) {
    if (dropped) dropped();
    return;
  }
  queue_.push_back({std::move(job), std::move(dropped)});
  if (!thread_) {
    // What the job will use exists by now; the exit handler goes after it (exit_point.h).
    ExitPoint::instance().arm();
    thread_.emplace([this] { loop(); });
  }
  cv_.notify_one();
}

void BackgroundCompiler::loop() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.erase(queue_.begin());
      running_ = true;
    }
    job.run();
    {
      std::lock_guard lock(mutex_);
      running_ = false;
    }
    idle_cv_.notify_all();
  }
}

void BackgroundCompiler::drain() {
  std::unique_lock lock(mutex_);
  idle_cv_.wait(lock, [&] { return stopping_ || (queue_.empty() && !running_); });
}

BackgroundCompiles BackgroundCompiler::pending() const {
  std::lock_guard lock(mutex_);
  return {static_cast<int>(queue_.size()), running_ ? 1 : 0};
}

BackgroundCompiles background_compiles() { return BackgroundCompiler::instance().pending(); }
void wait_background_compiles() { BackgroundCompiler::instance().drain(); }
bool process_exiting() { return ExitPoint::instance().exiting(); }

int BackgroundCompiler::shutdown() {
  std::vector<Job> dropped;
  std::optional<std::thread> thread;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    dropped.swap(queue_);
    thread.swap(thread_);
  }
  cv_.notify_all();
  idle_cv_.notify_all();
  if (thread && thread->joinable()) {
    // exit() called from a job itself (a warning handler): that job cannot be waited for.
    if (thread->get_id() == std::this_thread::get_id())
      thread->detach();
    else
      thread->join();
  }
  for (Job& job : dropped)
    if (job.dropped) job.dropped();
  return static_cast<int>(dropped.size());
}

BackgroundCompiler::~BackgroundCompiler() { shutdown(); }

}  // namespace tmem
