// The on-disk module cache: one validated file per entry, atomic writes, LRU size cap.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <span>
#include <string>

#include "runtime/cache/payload.h"
#include "runtime/support/hash.h"
#include "tmem/result.h"

namespace tmem {

// Version of the file format below; bumping it moves the cache to a fresh <root>/v<N> directory.
inline constexpr uint32_t kDiskFormatVersion = 1;

// Entry file layout (all integers little-endian), 64-byte header then the payload:
//   0  "TMJC"                 8  key (lo, hi)           24 blob size   32 text size   40 meta size
//   4  format version (u32)   48 XXH3-64 of the payload 56 XXH3-64 of header bytes [0, 56)
//   64 blob bytes, text bytes, meta bytes
inline constexpr size_t kDiskHeaderBytes = 64;

// The bytes of one entry file.
std::string encode_entry(const Key128& key, const Payload& payload);
// Validates everything (size, magic, version, key, payload sizes against the file size, both
// checksums); the error (kIo) says which check failed.
Result<Payload> decode_entry(const Key128& key, std::span<const char> file);

// A cache directory <root>/v<format>/<hh>/<30 more hex digits>.bin shared by any number of threads
// and processes.
//
// * Writes go to a mkstemp file in the entry's own directory and are renamed over the entry, so a
//   reader sees a whole file or none. Two writers of one key both succeed (the later rename wins;
//   both files are valid). No fsync: a file torn by a crash fails its checksum and is a miss.
// * A read validates the file and treats any mismatch as a miss, removing the bad file so the
//   next write replaces it. A hit touches the file's mtime: eviction is LRU by mtime.
// * Size cap: the first write of a DiskCache object scans the directory once for its total; later
//   writes add their size, and only a write that takes the total over `max_bytes` rescans and
//   removes the least recently used entries down to 3/4 of the cap (so the next writes do not
//   rescan at once). Stale temp files (older than an hour) are removed by the same scan.
// * The first failure to create a directory or write a file (read-only or full file system, bad
//   path) prints one warning per process to stderr and turns writes off for this object: the cache
//   keeps working from memory, and existing entries can still be read.
class DiskCache {
 public:
  DiskCache(std::filesystem::path root, uint64_t max_bytes);
  DiskCache(const DiskCache&) = delete;
  DiskCache& operator=(const DiskCache&) = delete;

  const std::filesystem::path& root() const noexcept { return root_; }
  const std::filesystem::path& version_dir() const noexcept { return version_dir_; }
  std::filesystem::path entry_path(const Key128& key) const;
  uint64_t max_bytes() const noexcept { return max_bytes_; }

  enum class ReadStatus { kHit, kAbsent, kInvalid };
  // The payload stored under `key`, or nullopt: absent, or invalid (then the file is removed).
  std::optional<Payload> read(const Key128& key, ReadStatus* status = nullptr);

  struct WriteOutcome {
    bool written = false;  // false: writes are off, or this write failed (and turned them off)
    uint64_t evicted = 0;  // entries removed to stay under the cap
  };
  WriteOutcome write(const Key128& key, const Payload& payload);
  bool writable() const noexcept { return writable_.load(std::memory_order_relaxed); }

  struct Usage {
    uint64_t entries = 0;
    uint64_t bytes = 0;
  };
  // Entries of this format version and their total size on disk (one directory scan).
  Usage usage() const;
  // Removes every entry (and temp file) of this format version; returns how many were removed.
  Result<uint64_t> clear();

  // The one-warning-per-process latch, for tests that check the warning.
  static void reset_warning_for_testing() noexcept;

 private:
  void fail_writes(const std::string& what, int error_number);
  uint64_t evict_locked(const std::filesystem::path& keep);

  std::filesystem::path root_;
  std::filesystem::path version_dir_;
  uint64_t max_bytes_;
  std::atomic<bool> writable_{true};

  std::mutex total_mutex_;  // guards the running total; held only for bookkeeping and eviction
  bool total_known_ = false;
  uint64_t total_bytes_ = 0;
};

}  // namespace tmem
