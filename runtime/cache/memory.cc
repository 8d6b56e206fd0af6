// The in-memory module cache: shared-lock hits, one computation per key, parallel misses.
#include "runtime/cache/memory.h"

#include <exception>
#include <mutex>
#include <string>

namespace tmem {

MemoryCache::Ptr MemoryCache::find(const Key128& key) const noexcept {
  std::shared_lock lock(mutex_);
  auto it = slots_.find(key);
  if (it == slots_.end()) return nullptr;
  return it->second.value;
}

MemoryCache::Ptr MemoryCache::insert(const Key128& key, Payload payload) {
  auto value = std::make_shared<const Payload>(std::move(payload));
  std::unique_lock lock(mutex_);
  Slot& slot = slots_[key];
  if (slot.value) return slot.value;
  slot.value = value;
  entries_.fetch_add(1, std::memory_order_relaxed);
  bytes_.fetch_add(value->size_bytes(), std::memory_order_relaxed);
  return value;
}

MemoryCache::Ptr MemoryCache::replace(const Key128& key, Payload payload) {
  auto value = std::make_shared<const Payload>(std::move(payload));
  std::unique_lock lock(mutex_);
  Slot& slot = slots_[key];
  if (slot.value)
    bytes_.fetch_sub(slot.value->size_bytes(), std::memory_order_relaxed);
  else
    entries_.fetch_add(1, std::memory_order_relaxed);
  slot.value = value;
  bytes_.fetch_add(value->size_bytes(), std::memory_order_relaxed);
  return value;
}

void MemoryCache::clear() {
  std::unique_lock lock(mutex_);
  for (auto it = slots_.begin(); it != slots_.end();) {
    if (it->second.pending.valid()) {
      it->second.value.reset();  // keep the slot: its owner still has to publish the result
      ++it;
    } else {
      it = slots_.erase(it);
    }
  }
  entries_.store(0, std::memory_order_relaxed);
  bytes_.store(0, std::memory_order_relaxed);
}

Result<MemoryCache::Ptr> MemoryCache::compute(const Key128& key, const Factory& factory,
                                              Outcome* outcome) {
  std::promise<Result<Ptr>> promise;
  {
    std::unique_lock lock(mutex_);
    Slot& slot = slots_[key];
    if (slot.value) {
      if (outcome != nullptr) *outcome = Outcome::kHit;
      return slot.value;
    }
    if (slot.pending.valid()) {
      std::shared_future<Result<Ptr>> pending = slot.pending;
      lock.unlock();
      if (outcome != nullptr) *outcome = Outcome::kWaited;
      return pending.get();
    }
    slot.pending = promise.get_future().share();
  }
  if (outcome != nullptr) *outcome = Outcome::kComputed;

  // Run the factory with no lock held; every path below must publish to the promise, or the
  // waiters would block forever.
  Result<Ptr> result = Error(ErrorCode::kInternal, "module cache: computation did not run");
  try {
    Result<Payload> made = factory();
    if (made.ok())
      result = Ptr(std::make_shared<const Payload>(std::move(made).value()));
    else
      result = std::move(made).error();
  } catch (const Error& error) {
    result = error;
  } catch (const std::exception& exception) {
    result = Error(ErrorCode::kInternal,
                   std::string("module cache: computation threw: ") + exception.what());
  } catch (...) {
    result = Error(ErrorCode::kInternal, "module cache: computation threw an unknown exception");
  }

  {
    std::unique_lock lock(mutex_);
    auto it = slots_.find(key);
    if (it != slots_.end()) {
      Slot& slot = it->second;
      if (slot.value) {
        // insert() stored a value meanwhile: keep it, so every caller sees one object.
        slot.pending = {};
        if (result.ok()) result = slot.value;
      } else if (result.ok()) {
        slot.value = *result;
        slot.pending = {};
        entries_.fetch_add(1, std::memory_order_relaxed);
        bytes_.fetch_add((*result)->size_bytes(), std::memory_order_relaxed);
      } else {
        slots_.erase(it);  // not cached: the next call retries
      }
    }
  }
  promise.set_value(result);
  return result;
}

}  // namespace tmem
