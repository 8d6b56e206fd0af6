// ModuleCache: the process-wide cache of compiled modules, memory over disk over a remote server,
// with counters.
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
#include "runtime/cache/remote.h"
#include "runtime/support/hash.h"
#include "tmem/cache.h"
#include "tmem/compile.h"
#include "tmem/result.h"

namespace tmem {

// Goes into every cache key (KeyBuilder::integer("format", ...)): bump it when the meaning of a
// key or payload changes, so old entries stop matching.
inline constexpr int64_t kCacheKeyFormatVersion = 2;  // 2: options keyed field by field

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
    kRemoteHit,  // the remote cache (then written to disk and kept in memory)
  };

  // The payload for `key`: from memory (a hit: one shared lock, no allocation), else from disk,
  // else from the remote server, else from `compile()`, which then goes to memory, disk and the
  // remote server. Concurrent callers of one key share one compile; different keys compile in
  // parallel; across processes, a compile lock on the server lets one compile while the others
  // wait for its entry (bounded by remote_lock_wait_ms, then they compile themselves). A failed
  // compile is not cached. A remote fault never fails a lookup: it falls back to compiling here.
  // `lookup`, when given, says where the answer came from.
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

  // The payload for `key` if a tier holds it now, else null: never compiles and never waits, not
  // for a compile of the key in flight in this process, nor for another process's compile lock on
  // the remote server (lazy's question, docs/specialization.md §Tiers). A disk or remote hit is
  // kept in memory (and a remote one on disk); the counters count it as get_or_compile would, and
  // a miss not at all. Null also when the cache is off.
  Ptr find_now(const Key128& key, Lookup* lookup = nullptr);

  // `payload` in place of the entry `key` holds in memory and on disk: a caller that found the
  // entry unusable (its metadata damaged) compiled it again. Off: just the payload.
  Ptr replace(const Key128& key, Payload payload);

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
  // The disk cache in use, or null (off, no directory, or one other users can write while no
  // secret is set: disk_note() says which).
  std::shared_ptr<DiskCache> disk() const;
  std::string disk_note() const;
  // The remote tier in use, or null (none configured, not built in, a bad URL: remote_note()).
  std::shared_ptr<RemoteCache> remote() const;
  std::string remote_note() const;

  // The process-wide warning latches of the tiers' configuration, for tests.
  static void reset_warnings_for_testing() noexcept;

 private:
  // The tiers below memory, built from options_ on first use after configure() (so that only the
  // options in effect when a lookup happens can warn).
  struct Tiers {
    std::shared_ptr<const EntrySigner> signer;
    std::shared_ptr<DiskCache> disk;
    std::shared_ptr<RemoteCache> remote;
    std::string disk_note;    // why there is no disk tier, when one was asked for
    std::string remote_note;  // why there is no remote tier, when one was asked for
  };
  class RemoteLock;

  std::shared_ptr<const Tiers> tiers() const;
  static std::shared_ptr<const Tiers> build_tiers(const CacheOptions& options);
  Result<Ptr> get_or_compile_slow(const Key128& key, const Compile& compile, Lookup* lookup);
  Result<Payload> timed_compile(const Compile& compile);
  // What a remote lookup met besides its payload.
  struct RemoteOutcome {
    bool reached = false;    // the server answered: a compile here stores its entry there
    bool rejected = false;   // an entry failed its check (forged, poisoned)
    bool abandoned = false;  // exit began while waiting for another holder's lock
  };
  std::optional<Payload> remote_lookup(RemoteCache& remote, const Key128& key, RemoteLock* lock,
                                       RemoteOutcome* outcome);
  bool counted(const RemoteCache::Fetched& fetched, bool* rejected);

  MemoryCache memory_;
  std::atomic<bool> enabled_{true};
  std::atomic<uint64_t> generation_{0};

  mutable std::shared_mutex config_mutex_;  // guards options_ and tiers_
  CacheOptions options_;
  mutable std::shared_ptr<const Tiers> tiers_;  // null until first use after configure()

  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> misses_{0};
  std::atomic<uint64_t> disk_hits_{0};
  std::atomic<uint64_t> disk_writes_{0};
  std::atomic<uint64_t> evictions_{0};
  std::atomic<uint64_t> compile_ns_{0};
  std::atomic<uint64_t> remote_hits_{0};
  std::atomic<uint64_t> remote_misses_{0};
  std::atomic<uint64_t> remote_writes_{0};
  std::atomic<uint64_t> remote_errors_{0};
  std::atomic<uint64_t> remote_rejected_{0};
  std::atomic<uint64_t> remote_lock_waits_{0};
};

// The cache behind tmem::compile_transfer and the tmem::cache_* functions: the calling thread's
// tmem::Runtime's, defined by the runtime that owns it (runtime/jit/runtime_state.cc).
ModuleCache& module_cache();

// Who answered a lookup, as CompileReport says it (kUncached is a compile).
CacheSource source_of(ModuleCache::Lookup lookup) noexcept;

// "memory hit", "disk hit", "remote hit", "miss", "off".
std::string_view to_string(ModuleCache::Lookup lookup) noexcept;

}  // namespace tmem
