// The Kernel handle of each cache entry, so that a hit hands out the same handle (one module
// load per entry and process) without allocating. It mirrors ModuleCache's memory tier: a handle
// is only returned while the cache's generation is the one it was stored under, so clearing the
// cache forgets the handles too. compile_transfer keys it by the parts of its cache key (a hit
// never hashes), compile_kernel by the key itself.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "runtime/jit/kernel_impl.h"

namespace tmem {

template <class Key, class Hash>
class KernelTable {
 public:
  std::shared_ptr<Kernel::Impl> find(const Key& key, uint64_t generation) const {
    std::shared_lock lock(mutex_);
    if (generation != generation_) return nullptr;
    const auto it = kernels_.find(key);
    return it == kernels_.end() ? nullptr : it->second;
  }

  // Stores `impl` unless the key has one, and returns the stored one. `generation` is the
  // cache's generation read before the lookup that produced the payload: a newer table (the
  // cache was cleared meanwhile) is left alone and `impl` returned.
  std::shared_ptr<Kernel::Impl> insert(const Key& key, uint64_t generation,
                                       std::shared_ptr<Kernel::Impl> impl) {
    std::unique_lock lock(mutex_);
    if (generation > generation_) {
      kernels_.clear();
      generation_ = generation;
    }
    if (generation != generation_) return impl;
    return kernels_.try_emplace(key, std::move(impl)).first->second;
  }

 private:
  mutable std::shared_mutex mutex_;
  uint64_t generation_ = 0;
  std::unordered_map<Key, std::shared_ptr<Kernel::Impl>, Hash> kernels_;
};

}  // namespace tmem
