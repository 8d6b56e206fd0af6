// Kernel::Impl: what a tmem::Kernel handle shares between its copies (payload, lazy module).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "runtime/cache/payload.h"
#include "runtime/cuda/driver.h"
#include "tmem/kernel.h"

namespace tmem {

class Kernel::Impl {
 public:
  Impl(std::string entry, Target target, std::shared_ptr<const Payload> payload)
      : entry_(std::move(entry)), target_(target), payload_(std::move(payload)) {}

  const std::string& entry() const noexcept { return entry_; }
  Target target() const noexcept { return target_; }
  const Payload& payload() const noexcept { return *payload_; }
  bool loaded() const noexcept { return function_.load(std::memory_order_acquire) != nullptr; }

  // The CUkernel, loading the module on first use. A failed load is not remembered: the next call
  // tries again (e.g. after the caller made a suitable device current).
  Result<void*> kernel();

 private:
  std::string entry_;
  Target target_;
  std::shared_ptr<const Payload> payload_;

  std::mutex load_mutex_;
  std::optional<driver::LoadedLibrary> library_;
  std::atomic<void*> function_{nullptr};  // the CUkernel once loaded
};

// A Kernel over a cached payload: `entry` is the kernel's name in the cubin (payload.blob).
Kernel make_kernel(std::string entry, Target target, std::shared_ptr<const Payload> payload);

}  // namespace tmem
