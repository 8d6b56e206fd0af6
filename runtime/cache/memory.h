// The in-memory module cache: Key128 -> immutable Payload, one computation per key at a time.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <shared_mutex>
#include <unordered_map>
#include <utility>

#include "runtime/cache/payload.h"
#include "runtime/support/hash.h"
#include "tmem/result.h"

namespace tmem {

// Thread-safe map from key to a shared, immutable payload.
//
// * A hit takes only a shared lock and copies one shared_ptr (an atomic increment): no allocation,
//   no string building (pinned by memory_cache_test).
// * A miss installs a per-key pending slot under the exclusive lock, releases the lock, and runs
//   the factory; concurrent callers for the same key wait on that slot's shared_future, callers
//   for other keys proceed (and compute) in parallel. No lock is held across a factory call.
// * A failed computation is not cached: its waiters receive the same Error, the next call retries.
class MemoryCache {
 public:
  using Ptr = std::shared_ptr<const Payload>;
  using Factory = std::function<Result<Payload>()>;

  // How get_or_compute obtained its answer.
  enum class Outcome { kHit, kComputed, kWaited };

  MemoryCache() = default;
  MemoryCache(const MemoryCache&) = delete;
  MemoryCache& operator=(const MemoryCache&) = delete;

  // The cached payload, or null. Never allocates.
  Ptr find(const Key128& key) const noexcept;

  // The cached payload, or the factory's result (stored on success). `outcome`, when given, says
  // whether this call hit, ran the factory, or waited for another caller's run. The factory may
  // throw: a tmem::Error is passed on as the result, any other exception becomes kInternal.
  template <class F>
  Result<Ptr> get_or_compute(const Key128& key, F&& factory, Outcome* outcome = nullptr) {
    if (Ptr hit = find(key)) {
      if (outcome != nullptr) *outcome = Outcome::kHit;
      return hit;
    }
    return compute(key, Factory(std::forward<F>(factory)), outcome);
  }

  // Stores `payload` under `key` unless the key already holds a value; returns the stored value.
  Ptr insert(const Key128& key, Payload payload);
  // Stores `payload` under `key` in place of what it holds (an entry found damaged); returns it.
  Ptr replace(const Key128& key, Payload payload);

  // Drops every stored value. Computations in flight finish and store their result.
  void clear();

  size_t entries() const noexcept { return entries_.load(std::memory_order_relaxed); }
  uint64_t bytes() const noexcept { return bytes_.load(std::memory_order_relaxed); }

 private:
  struct Slot {
    Ptr value;                                // set once computed
    std::shared_future<Result<Ptr>> pending;  // valid while a computation runs
  };

  Result<Ptr> compute(const Key128& key, const Factory& factory, Outcome* outcome);

  mutable std::shared_mutex mutex_;
  std::unordered_map<Key128, Slot, Key128Hash> slots_;
  std::atomic<size_t> entries_{0};
  std::atomic<uint64_t> bytes_{0};
};

}  // namespace tmem
