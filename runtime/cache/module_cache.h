// ModuleCache: the process-wide cache of compiled modules, memory over disk, with counters.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string_view>
#include <utility>

#include "runtime/cache/disk.h"
#include "runtime/cache/memory.h"
#include "runtime/cache/payload.h"
#include "runtime/support/hash.h"
#include "tmem/cache.h"
#include "tmem/result.h"

namespace tmem {

// Goes into every cache key (KeyBuilder::integer("format", ...)): bump it when the meaning of a
// key or payload changes, so old entries stop matching.
inline constexpr int64_t kCacheKeyFormatVersion = 1;

class ModuleCache {
 public:
  using Ptr = MemoryCache::Ptr;
  using Compile = std::function<Result<Payload>()>;

  explicit ModuleCache(const CacheOptions& options);
  ModuleCache(const ModuleCache&) = delete;
  ModuleCache& operator=(const ModuleCache&) = delete;

  // Where get_or_compile found its answer (one per call; the counters say the same).
  enum class Lookup {
    kMemoryHit,  // memory, or another caller's compile of the same key
    kDiskHit,    // the disk cache
    kCompiled,   // compile() ran (successfully or not)
    kUncached,   // the cache is off: compile() ran
  };

  // The payload for `key`: from memory (a hit: one shared lock, no allocation), else from disk,
  // else from `compile()`, which then goes to memory and disk. Concurrent callers of one key share
  // one compile; different keys compile in parallel. A failed compile is not cached. `lookup`,
  // when given, says where the answer came from.
  template <class F>
  Result<Ptr> get_or_compile(const Key128& key, F&& compile, Lookup* lookup = nullptr) {
    if (enabled_.load(std::memory_order_acquire)) {
      if (Ptr hit = memory_.find(key)) {
        hits_.fetch_add(1, std::memory_order_relaxed);
        if (lookup != nullptr) *lookup = Lookup::kMemoryHit;
        return hit;
      }
    }
    return get_or_compile_slow(key, Compile(std::forward<F>(compile)), lookup);
  }

  bool enabled() const noexcept { return enabled_.load(std::memory_order_acquire); }
  // Bumped each time the entries held in memory are dropped (clear(), or configure() turning the
  // cache off): a layer that keeps its own objects per entry (compile_transfer's Kernel handles)
  // drops them when this changes, so its hits stay hits of this cache.
  uint64_t generation() const noexcept { return generation_.load(std::memory_order_acquire); }
  // Counts a memory hit that such a layer answered without calling get_or_compile.
  void count_hit() noexcept { hits_.fetch_add(1, std::memory_order_relaxed); }

  CacheOptions options() const;
  void configure(const CacheOptions& options);
  CacheStats stats() const;
  void reset_stats();
  Status clear(bool disk);
  // The disk cache in use, or null (off, or no directory).
  std::shared_ptr<DiskCache> disk() const;

 private:
  Result<Ptr> get_or_compile_slow(const Key128& key, const Compile& compile, Lookup* lookup);
  Result<Payload> timed_compile(const Compile& compile);

  MemoryCache memory_;
  std::atomic<bool> enabled_{true};
  std::atomic<uint64_t> generation_{0};

  mutable std::shared_mutex config_mutex_;  // guards options_ and disk_
  CacheOptions options_;
  std::shared_ptr<DiskCache> disk_;

  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> misses_{0};
  std::atomic<uint64_t> disk_hits_{0};
  std::atomic<uint64_t> disk_writes_{0};
  std::atomic<uint64_t> evictions_{0};
  std::atomic<uint64_t> compile_ns_{0};
};

// The cache behind tmem::compile_transfer and the tmem::cache_* functions; configured from the
// environment on first use.
ModuleCache& module_cache();

// Parses a byte count with an optional K, M, G or T suffix (powers of 1024); nullopt when invalid.
std::optional<uint64_t> parse_byte_count(std::string_view text);

}  // namespace tmem
