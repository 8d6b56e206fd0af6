// The process-wide module cache: its configuration, counters and maintenance (DESIGN.md §4).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tmem/export.h"
#include "tmem/result.h"

TMEMJIT_API_BEGIN
namespace tmem {

// Counters since the process started or since reset_cache_stats(). Every cached lookup adds one
// to exactly one of hits, disk_hits and misses.
struct CacheStats {
  uint64_t hits = 0;         // answered from memory (also a caller that waited for another
                             // thread's compile of the same key)
  uint64_t misses = 0;       // compiled, successfully or not (with the cache off: every call)
  uint64_t disk_hits = 0;    // read from the disk cache (then kept in memory)
  uint64_t disk_writes = 0;  // entries written to the disk cache
  uint64_t evictions = 0;    // disk entries removed to stay under the size cap
  double compile_ms = 0;     // wall time spent compiling on misses
  uint64_t bytes = 0;        // payload bytes held in memory now (not reset)
  uint64_t entries = 0;      // entries held in memory now (not reset)
};

// How the cache behaves. cache_options_from_env() reads:
//   TMEMJIT_DISABLE_CACHE=1     no caching at all, neither memory nor disk: every call compiles
//   TMEMJIT_CACHE_DIR           disk-cache root (default $XDG_CACHE_HOME/tmemjit, else
//                               $HOME/.cache/tmemjit; with neither, memory only)
//   TMEMJIT_CACHE_MAX_BYTES     disk size cap, bytes with an optional K, M or G suffix (1 GiB)
struct CacheOptions {
  bool enabled = true;  // false: no memory and no disk caching
  bool disk = true;     // false: memory only
  std::string dir;      // disk-cache root; entries live under <dir>/v<format>/
  uint64_t max_bytes = uint64_t{1} << 30;
};

CacheOptions cache_options_from_env();
// The options in effect: those from the environment at first use, unless set since.
CacheOptions cache_options();
// Replaces the options (e.g. for a --cache-dir flag or a test). Entries held in memory stay
// valid (keys cover everything that changes a binary) unless `enabled` is false.
void set_cache_options(const CacheOptions& options);
// Shorthand: the current options with `dir` replaced (and the disk cache on).
void set_cache_dir(const std::string& dir);

CacheStats cache_stats();
void reset_cache_stats();
// Drops the entries held in memory and, when `disk` is true, the entries of the disk cache.
Status clear_cache(bool disk = false);

// What the disk cache holds now (one directory scan).
struct DiskCacheUsage {
  std::string dir;  // <root>/v<format>
  uint64_t entries = 0;
  uint64_t bytes = 0;
};
// Error kUsage when the disk cache is off.
Result<DiskCacheUsage> disk_cache_usage();

// Which tier answered a cached compile (CompileReport::cache): compiled by this call, memory,
// the disk cache, or the remote cache.
enum class CacheSource { kCompiled, kMemory, kDisk, kRemote };
// "miss", "memory", "disk", "remote" (the `cache` field of `tmemjit specialize --json`).
std::string_view to_string(CacheSource source) noexcept;

}  // namespace tmem
TMEMJIT_API_END
