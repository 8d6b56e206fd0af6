// The on-disk module cache: one validated file per entry, atomic writes, LRU size cap.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

struct stat;

#include "runtime/cache/hmac.h"
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
// A signed entry (written while TMEMJIT_REMOTE_CACHE_SECRET is set) has the magic "TMJS" and ends
// with 32 more bytes: HMAC-SHA256 under the secret of every byte before them (header and payload,
// so the key, the sizes and the code are all covered).
inline constexpr size_t kDiskHeaderBytes = 64;

// The bytes of one entry file: unsigned ("TMJC") without a signer, signed ("TMJS") with one.
std::string encode_entry(const Key128& key, const Payload& payload,
                         const EntrySigner* signer = nullptr);
// Validates everything (size, magic, version, key, payload sizes against the file size, both
// checksums); the error (kIo) says which check failed. Without a signer only an unsigned entry is
// valid; with one, only a signed entry whose HMAC verifies (checked before anything else is read).
Result<Payload> decode_entry(const Key128& key, std::span<const char> file,
                             const EntrySigner* signer = nullptr);

// Why other users could write `dir` (group- or world-writable, or owned by another user than this
// process's and root), or nullopt when only this user can; nullopt too when it does not exist.
// Such a directory could receive a planted cubin: the module cache uses it only with a secret.
std::optional<std::string> others_can_write(const std::filesystem::path& dir);

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
// * Private by default: directories it creates are 0700 and files 0600 (plus read bits for group
//   and others where the root grants them). Where the root is shared (others_can_write), new
//   directories take the root's permission bits so that the group can share them; the module
//   cache opens such a root only with a signer.
// * With a signer, entries are written signed and only signed entries that verify are read.
//   Without one, an entry file owned by another user (and not root) is invalid: it was planted.
class DiskCache {
 public:
  DiskCache(std::filesystem::path root, uint64_t max_bytes,
            std::shared_ptr<const EntrySigner> signer = nullptr);
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
  // The keys of every entry file of this format version (named like one; not validated).
  std::vector<Key128> keys() const;
  // The entry under `key`, validated like read() but without touching or removing the file.
  Result<Payload> peek(const Key128& key) const;
  const EntrySigner* signer() const noexcept { return signer_.get(); }
  // Removes every entry (and temp file) of this format version; returns how many were removed.
  Result<uint64_t> clear();

  // The one-warning-per-process latch, for tests that check the warning.
  static void reset_warning_for_testing() noexcept;

 private:
  void fail_writes(const std::string& what, int error_number);
  uint64_t evict_locked(const std::filesystem::path& keep);
  Result<Payload> read_open(int fd, const Key128& key, struct stat* st) const;

  std::filesystem::path root_;
  std::filesystem::path version_dir_;
  uint64_t max_bytes_;
  std::shared_ptr<const EntrySigner> signer_;
  unsigned dir_mode_ = 0700;   // new directories: private, or a shared root's own bits
  unsigned file_mode_ = 0600;  // entry files: private, plus the root's read bits
  std::atomic<bool> writable_{true};

  std::mutex total_mutex_;  // guards the running total; held only for bookkeeping and eviction
  bool total_known_ = false;
  uint64_t total_bytes_ = 0;
};

}  // namespace tmem
