// The lazy kernel's tier switch and the background compiler (runtime/jit/tiers.h).
#include "runtime/jit/tiers.h"

#include <string>

#include "runtime/jit/kernel_impl.h"
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
  static BackgroundCompiler compiler;
  return compiler;
}

void BackgroundCompiler::post(std::function<void()> job, std::function<void()> dropped) {
  std::lock_guard lock(mutex_);
  if (stopping_) {
    if (dropped) dropped();
    return;
  }
  queue_.push_back({std::move(job), std::move(dropped)});
  if (!thread_) thread_.emplace([this] { loop(); });
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

BackgroundCompiler::~BackgroundCompiler() {
  std::vector<Job> dropped;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    dropped.swap(queue_);
  }
  cv_.notify_all();
  if (thread_ && thread_->joinable()) thread_->join();
  for (Job& job : dropped)
    if (job.dropped) job.dropped();
}

}  // namespace tmem
