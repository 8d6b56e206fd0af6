// The process-wide module cache: its configuration, counters and maintenance (docs/design.md
// §Codegen).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tmem/compile.h"  // CacheSource
#include "tmem/export.h"
#include "tmem/result.h"

TMEMJIT_API_BEGIN
namespace tmem {

// Counters since the process started or since reset_cache_stats(). Every cached lookup adds one
// to exactly one of hits, disk_hits, remote_hits and misses.
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
  // The remote tier (TMEMJIT_REMOTE_CACHE). remote_hits is a fourth exclusive lookup counter
  // beside hits, disk_hits and misses; the others count events of lookups that reached the tier.
  uint64_t remote_hits = 0;        // answered from the remote cache (then kept on disk, in memory)
  uint64_t remote_misses = 0;      // asked the remote cache, got nothing usable, compiled
  uint64_t remote_writes = 0;      // entries stored on the remote cache
  uint64_t remote_errors = 0;      // faults: refused, timed out, dropped, an error reply
  uint64_t remote_rejected = 0;    // remote entries refused: garbage, truncated, another key's,
                                   // unsigned or forged (see CacheOptions::secret)
  uint64_t remote_lock_waits = 0;  // lookups that waited for another process's compile
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
  // The remote tier and entry signing (docs/cache.md, "A fleet"). From the environment:
  //   TMEMJIT_REMOTE_CACHE=redis://HOST:PORT[/DB]   the remote tier after memory and disk
  //   TMEMJIT_REMOTE_CACHE_SECRET                   HMAC-SHA256 key for every entry
  //   TMEMJIT_REMOTE_CACHE_CONNECT_TIMEOUT_MS, _TIMEOUT_MS, _LOCK_TTL_MS, _LOCK_WAIT_MS, _RETRY_MS
  std::string remote;  // redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]; empty: no remote tier
  // With a secret, every entry written (disk and remote) carries an HMAC-SHA256 under it and only
  // entries whose HMAC verifies are read; a disk directory other users can write is used only
  // with one. Without one, a remote server's entries are trusted as they are.
  std::string secret;
  uint32_t remote_connect_timeout_ms = 100;  // bound on connecting to the server
  uint32_t remote_timeout_ms = 500;          // bound on each command's reply
  uint32_t remote_lock_ttl_ms = 10000;       // a compile lock expires (its holder died) this late
  uint32_t remote_lock_wait_ms = 15000;      // bound on waiting for another process's compile
  uint32_t remote_retry_ms = 30000;          // after a remote fault, the tier rests this long
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

// Removes every entry of the disk cache's format version; returns how many. kUsage when the disk
// cache is off.
Result<uint64_t> clear_disk_cache();

// The remote tier as configured now.
struct RemoteCacheInfo {
  std::string url;              // redis://HOST:PORT/DB without credentials; empty: none configured
  bool active = false;          // configured, built in and usable (false: `note` says why)
  bool signed_entries = false;  // entries are signed and checked with CacheOptions::secret
  std::string note;
};
RemoteCacheInfo remote_cache_info();
// One PING to the remote server: the round trip in milliseconds; kUsage when no remote tier is
// active, kIo when the server does not answer within the timeouts.
Result<double> ping_remote_cache();

// Bundles: a whole disk cache as one versioned, checksummed file, to ship with an application so
// that its first calls elsewhere are disk hits (`tmemjit cache export|import`).
struct BundleSummary {
  std::string path;
  uint64_t entries = 0;  // entries written to the bundle, or imported from it
  uint64_t bytes = 0;    // size of the bundle file
  uint64_t skipped = 0;  // export: entry files that failed validation and were left out
};
// Writes every valid entry of the disk cache to `path` (temp file, then rename). kUsage when the
// disk cache is off, kIo when the file cannot be written.
Result<BundleSummary> export_cache_bundle(const std::string& path);
// Validates the whole bundle (checksum, format, the library build and toolkit it was made with,
// every entry), then writes its entries to the disk cache. Imports nothing on any mismatch, and
// the error says why (kUsage for another build or toolkit, kIo for a damaged file).
Result<BundleSummary> import_cache_bundle(const std::string& path);

}  // namespace tmem
TMEMJIT_API_END
