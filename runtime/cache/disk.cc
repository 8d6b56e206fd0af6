// The on-disk module cache: validated entry files, temp-then-rename writes, LRU eviction by mtime.
#include "runtime/cache/disk.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "runtime/cache/atomic_file.h"
#include "runtime/support/warning.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace tmem {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[4] = {'T', 'M', 'J', 'C'};
constexpr char kSignedMagic[4] = {'T', 'M', 'J', 'S'};
// Larger files are not cache entries we wrote; refuse them rather than allocate.
constexpr uint64_t kMaxEntryBytes = uint64_t{1} << 32;
// Temp files older than this belong to a writer that died; eviction scans remove them.
constexpr auto kStaleTempAge = std::chrono::hours(1);
constexpr std::string_view kEntrySuffix = ".bin";
constexpr std::string_view kTempMarker = ".tmp.";

std::atomic<bool> g_warned{false};

void put_u32(char* out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>(value >> (8 * i));
}
void put_u64(char* out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(value >> (8 * i));
}
uint32_t get_u32(const char* in) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i)
    value |= static_cast<uint32_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  return value;
}
uint64_t get_u64(const char* in) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i)
    value |= static_cast<uint64_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  return value;
}

Error bad_entry(const std::string& what) {
  return Error(ErrorCode::kIo, "bad cache entry: " + what);
}

bool read_all(int fd, char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::read(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) return false;  // the file shrank under us
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// mkdir that treats "already exists" as success (other processes create the same shards). A new
// directory gets exactly `mode` (chmod after mkdir, so the umask cannot take group bits away).
bool make_dir(const fs::path& path, mode_t mode) {
  if (::mkdir(path.c_str(), mode) == 0) {
    ::chmod(path.c_str(), mode);
    return true;
  }
  return errno == EEXIST;
}

// Creates `path` and its missing parents, each with `mode`.
bool make_dirs_with_mode(const fs::path& path, mode_t mode) {
  fs::path prefix;
  for (const fs::path& part : path) {
    prefix /= part;
    if (prefix == prefix.root_path()) continue;
    if (!make_dir(prefix, mode)) return false;
  }
  return true;
}

bool is_entry_name(std::string_view name) {
  return name.size() == 30 + kEntrySuffix.size() && name.ends_with(kEntrySuffix);
}
bool is_temp_name(std::string_view name) {
  return name.find(kTempMarker) != std::string_view::npos;
}

// A file descriptor closed on scope exit.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }

 private:
  int fd_;
};

// The cache makes no symlinks: its own directories (the version directory, the shards) are opened
// with O_NOFOLLOW, each relative to the one above, so no path is resolved through a link an
// attacker planted (issue 30: `cache clear` once deleted files behind a symlinked shard).
Fd open_own_dir(int at, const char* name) {
  return Fd(::openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

const char* file_kind(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a directory";
  return "not a regular file";
}

std::atomic<bool> g_layout_warned{false};

// One warning per process about something in the cache directory the cache did not make
// (`always`: every time, for an explicit `cache clear`).
void warn_not_ours(const std::string& what, bool always = false) {
  if (always || !g_layout_warned.exchange(true)) warn(what);
}

// "<path> is a symbolic link ..." when `name` under `at` is a link or not a directory.
std::string why_not_a_dir(int at, const fs::path& path, const char* name) {
  struct stat st {};
  if (::fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return {};
  if (S_ISLNK(st.st_mode))
    return path.string() + " is a symbolic link, which the cache does not make; not followed";
  if (!S_ISDIR(st.st_mode))
    return path.string() + " is " + file_kind(st.st_mode) + ", not a directory; skipped";
  return {};
}

// Calls visit(shard_fd, shard, name, stat) for every regular file in every shard directory of
// `version_dir` that is a real directory; a symlinked shard is skipped with a warning. `visit`
// returns false to stop.
template <class Visit>
void for_each_file(const fs::path& version_dir, bool warn_always, Visit visit) {
  Fd version = open_own_dir(AT_FDCWD, version_dir.c_str());
  if (!version) {
    if (errno == ELOOP || errno == ENOTDIR)
      if (const std::string why = why_not_a_dir(AT_FDCWD, version_dir, version_dir.c_str());
          !why.empty())
        warn_not_ours(why, warn_always);
    return;
  }
  DIR* shards = ::fdopendir(::dup(version.get()));
  if (shards == nullptr) return;
  bool go_on = true;
  while (go_on) {
    const struct dirent* shard_entry = ::readdir(shards);
    if (shard_entry == nullptr) break;
    const std::string shard_name = shard_entry->d_name;
    if (shard_name.size() != 2 || shard_name == "..") continue;
    Fd shard = open_own_dir(version.get(), shard_name.c_str());
    if (!shard) {
      if (const std::string why =
              why_not_a_dir(version.get(), version_dir / shard_name, shard_name.c_str());
          !why.empty())
        warn_not_ours(why, warn_always);
      continue;
    }
    DIR* files = ::fdopendir(::dup(shard.get()));
    if (files == nullptr) continue;
    while (go_on) {
      const struct dirent* file = ::readdir(files);
      if (file == nullptr) break;
      struct stat st {};
      if (::fstatat(shard.get(), file->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
          !S_ISREG(st.st_mode))
        continue;
      go_on = visit(shard.get(), shard_name, std::string(file->d_name), st);
    }
    ::closedir(files);
  }
  ::closedir(shards);
}

struct FileInfo {
  std::string shard;  // the two-digit directory
  std::string name;   // the file in it
  struct timespec mtime;
  uint64_t bytes;
};

// Every entry file under `version_dir`, plus (in `stale`) temp files old enough to be garbage.
std::vector<FileInfo> scan(const fs::path& version_dir, std::vector<FileInfo>* stale) {
  std::vector<FileInfo> files;
  const auto now = std::chrono::system_clock::now();
  for_each_file(version_dir, false,
                [&](int, const std::string& shard, const std::string& name, const struct stat& st) {
                  if (is_entry_name(name)) {
                    files.push_back({shard, name, st.st_mtim, static_cast<uint64_t>(st.st_size)});
                  } else if (stale != nullptr && is_temp_name(name)) {
                    const auto mtime = std::chrono::system_clock::from_time_t(st.st_mtim.tv_sec);
                    if (now - mtime > kStaleTempAge) stale->push_back({shard, name, st.st_mtim, 0});
                  }
                  return true;
                });
  return files;
}

// Removes `file` if it is still a regular file in a real shard directory of `version`.
bool unlink_own(int version, const FileInfo& file) {
  Fd shard = open_own_dir(version, file.shard.c_str());
  struct stat st {};
  if (!shard || ::fstatat(shard.get(), file.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
      !S_ISREG(st.st_mode))
    return false;
  return ::unlinkat(shard.get(), file.name.c_str(), 0) == 0;
}

bool older(const FileInfo& a, const FileInfo& b) {
  if (a.mtime.tv_sec != b.mtime.tv_sec) return a.mtime.tv_sec < b.mtime.tv_sec;
  return a.mtime.tv_nsec < b.mtime.tv_nsec;
}

}  // namespace

std::string encode_entry(const Key128& key, const Payload& payload, const EntrySigner* signer) {
  const size_t unsigned_size = kDiskHeaderBytes + payload.size_bytes();
  std::string file(unsigned_size + (signer != nullptr ? EntrySigner::kTagBytes : 0), '\0');
  char* header = file.data();
  std::memcpy(header, signer != nullptr ? kSignedMagic : kMagic, 4);
  put_u32(header + 4, kDiskFormatVersion);
  unsigned char key_bytes[16];
  key.to_bytes(key_bytes);
  std::memcpy(header + 8, key_bytes, 16);
  put_u64(header + 24, payload.blob.size());
  put_u64(header + 32, payload.text.size());
  put_u64(header + 40, payload.meta.size());
  char* body = header + kDiskHeaderBytes;
  if (!payload.blob.empty()) std::memcpy(body, payload.blob.data(), payload.blob.size());
  body += payload.blob.size();
  if (!payload.text.empty()) std::memcpy(body, payload.text.data(), payload.text.size());
  body += payload.text.size();
  if (!payload.meta.empty()) std::memcpy(body, payload.meta.data(), payload.meta.size());
  put_u64(header + 48, XXH3_64bits(header + kDiskHeaderBytes, payload.size_bytes()));
  put_u64(header + 56, XXH3_64bits(header, 56));
  if (signer != nullptr) {
    const EntrySigner::Tag tag = signer->tag(std::span<const char>(file.data(), unsigned_size));
    std::memcpy(file.data() + unsigned_size, tag.data(), tag.size());
  }
  return file;
}

Result<Payload> decode_entry(const Key128& key, std::span<const char> file,
                             const EntrySigner* signer) {
  const size_t tag_bytes = signer != nullptr ? EntrySigner::kTagBytes : 0;
  if (file.size() < kDiskHeaderBytes + tag_bytes)
    return bad_entry("file of " + std::to_string(file.size()) + " bytes is shorter than the " +
                     std::to_string(kDiskHeaderBytes) + "-byte header" +
                     (signer != nullptr ? " and the 32-byte signature" : ""));
  const char* header = file.data();
  if (signer != nullptr) {
    if (std::memcmp(header, kMagic, 4) == 0)
      return bad_entry("entry is not signed, and TMEMJIT_REMOTE_CACHE_SECRET is set");
    if (std::memcmp(header, kSignedMagic, 4) != 0) return bad_entry("magic is not TMJS");
    // The signature first: nothing else of an entry this process did not sign is looked at.
    const size_t signed_bytes = file.size() - tag_bytes;
    if (!signer->verify(file.first(signed_bytes), file.subspan(signed_bytes)))
      return bad_entry("signature does not verify under TMEMJIT_REMOTE_CACHE_SECRET");
    file = file.first(signed_bytes);
  } else if (std::memcmp(header, kMagic, 4) != 0) {
    if (std::memcmp(header, kSignedMagic, 4) == 0)
      return bad_entry("entry is signed, and TMEMJIT_REMOTE_CACHE_SECRET is not set");
    return bad_entry("magic is not TMJC");
  }
  if (const uint32_t version = get_u32(header + 4); version != kDiskFormatVersion)
    return bad_entry("format version " + std::to_string(version) + ", expected " +
                     std::to_string(kDiskFormatVersion));
  if (get_u64(header + 56) != XXH3_64bits(header, 56)) return bad_entry("header checksum mismatch");
  const Key128 stored = Key128::from_bytes(reinterpret_cast<const unsigned char*>(header + 8));
  if (stored != key) return bad_entry("key " + stored.hex() + ", expected " + key.hex());
  const uint64_t blob = get_u64(header + 24);
  const uint64_t text = get_u64(header + 32);
  const uint64_t meta = get_u64(header + 40);
  const uint64_t body = file.size() - kDiskHeaderBytes;
  // Compare piecewise so huge stored sizes cannot overflow the sum.
  if (blob > body || text > body - blob || meta != body - blob - text)
    return bad_entry("payload sizes " + std::to_string(blob) + "+" + std::to_string(text) + "+" +
                     std::to_string(meta) + " do not match the " + std::to_string(body) +
                     " bytes after the header");
  const char* data = header + kDiskHeaderBytes;
  if (get_u64(header + 48) != XXH3_64bits(data, body))
    return bad_entry("payload checksum mismatch");
  Payload payload;
  payload.blob.assign(data, data + blob);
  payload.text.assign(data + blob, text);
  payload.meta.assign(data + blob + text, meta);
  return payload;
}

std::optional<std::string> others_can_write(const fs::path& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return std::nullopt;
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  if (st.st_uid != ::geteuid() && st.st_uid != 0)
    return dir.string() + " belongs to another user (uid " + std::to_string(st.st_uid) + ")";
  if ((st.st_mode & S_IWOTH) != 0)
    return dir.string() + " is writable by every user (mode " + mode + ")";
  if ((st.st_mode & S_IWGRP) != 0)
    return dir.string() + " is writable by its group (mode " + mode + ")";
  return std::nullopt;
}

DiskCache::DiskCache(fs::path root, uint64_t max_bytes, std::shared_ptr<const EntrySigner> signer)
    : root_(std::move(root)),
      version_dir_(root_ / ("v" + std::to_string(kDiskFormatVersion))),
      max_bytes_(max_bytes),
      signer_(std::move(signer)) {
  struct stat st {};
  if (::stat(root_.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    // Files are readable where the root is; a shared root's group shares the new directories.
    file_mode_ = 0600 | (st.st_mode & 0044);
    if (others_can_write(root_)) dir_mode_ = st.st_mode & 0777;
  }
}

fs::path DiskCache::entry_path(const Key128& key) const {
  const std::string hex = key.hex();
  return version_dir_ / hex.substr(0, 2) / (hex.substr(2) + std::string(kEntrySuffix));
}

namespace {

// An entry file opened for reading: its shard directory and the file, each opened without
// following a symlink, the file with O_NONBLOCK so that a FIFO at its path cannot block (a regular
// file ignores the flag). `why` says what was found instead of a regular file.
struct OpenEntry {
  Fd shard;
  Fd file;
  std::string name;
  std::string why;  // non-empty: something the cache did not make is in the way
};

OpenEntry open_entry(const fs::path& version_dir, const Key128& key) {
  OpenEntry entry;
  const std::string hex = key.hex();
  const std::string shard = hex.substr(0, 2);
  entry.name = hex.substr(2) + std::string(kEntrySuffix);
  Fd version = open_own_dir(AT_FDCWD, version_dir.c_str());
  if (!version) {
    if (errno == ELOOP || errno == ENOTDIR)
      entry.why = why_not_a_dir(AT_FDCWD, version_dir, version_dir.c_str());
    return entry;
  }
  entry.shard = open_own_dir(version.get(), shard.c_str());
  if (!entry.shard) {
    if (errno == ELOOP || errno == ENOTDIR)
      entry.why = why_not_a_dir(version.get(), version_dir / shard, shard.c_str());
    return entry;
  }
  entry.file = Fd(::openat(entry.shard.get(), entry.name.c_str(),
                           O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!entry.file && errno == ELOOP)
    entry.why = (version_dir / shard / entry.name).string() +
                " is a symbolic link, which the cache does not make; not followed";
  return entry;
}

}  // namespace

std::optional<Payload> DiskCache::read(const Key128& key, ReadStatus* status) {
  auto report = [&](ReadStatus value) {
    if (status != nullptr) *status = value;
  };
  OpenEntry entry = open_entry(version_dir_, key);
  if (!entry.file) {
    if (!entry.why.empty()) warn_not_ours(entry.why + "; treated as a miss");
    report(entry.why.empty() ? ReadStatus::kAbsent : ReadStatus::kInvalid);
    return std::nullopt;
  }
  struct stat st {};
  Result<Payload> decoded = read_open(entry.file.get(), key, &st);
  if (!decoded.ok()) {
    if (!S_ISREG(st.st_mode)) {
      // Not the cache's file: leave it (the next write renames an entry over it).
      warn_not_ours(entry_path(key).string() + " is " + file_kind(st.st_mode) +
                    ", not a regular file; treated as a miss");
    } else {
      // Remove the bad file, unless another process has already renamed a fresh one over it.
      struct stat now {};
      if (::fstatat(entry.shard.get(), entry.name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 &&
          now.st_ino == st.st_ino && now.st_dev == st.st_dev)
        ::unlinkat(entry.shard.get(), entry.name.c_str(), 0);
    }
    report(ReadStatus::kInvalid);
    return std::nullopt;
  }
  ::futimens(entry.file.get(), nullptr);  // LRU: a hit makes the entry the newest
  report(ReadStatus::kHit);
  return std::move(decoded).value();
}

void DiskCache::fail_writes(const std::string& what, int error_number) {
  writable_.store(false, std::memory_order_relaxed);
  if (!g_warned.exchange(true))
    warn("disk cache disabled, " + what + " failed (" + std::strerror(error_number) +
         "); caching in memory only");
}

void DiskCache::reset_warning_for_testing() noexcept {
  g_warned.store(false);
  g_layout_warned.store(false);
}

Result<Payload> DiskCache::read_open(int fd, const Key128& key, struct stat* st) const {
  if (::fstat(fd, st) != 0) return bad_entry("unreadable");
  if (!S_ISREG(st->st_mode))
    return bad_entry(std::string(file_kind(st->st_mode)) + ", not a regular file");
  if (static_cast<uint64_t>(st->st_size) > kMaxEntryBytes) return bad_entry("larger than 4 GiB");
  // Without a signature, only this user's files are trusted: another user's was planted.
  if (!signer_ && st->st_uid != ::geteuid() && st->st_uid != 0)
    return bad_entry("file belongs to another user (uid " + std::to_string(st->st_uid) + ")");
  std::vector<char> file(static_cast<size_t>(st->st_size));
  if (!read_all(fd, file.data(), file.size())) return bad_entry("unreadable");
  return decode_entry(key, file, signer_.get());
}

Result<Payload> DiskCache::peek(const Key128& key) const {
  const fs::path path = entry_path(key);
  OpenEntry entry = open_entry(version_dir_, key);
  if (!entry.file)
    return Error(ErrorCode::kIo, entry.why.empty() ? "cannot open cache entry " + path.string() +
                                                         ": " + std::strerror(errno)
                                                   : entry.why);
  struct stat st {};
  Result<Payload> decoded = read_open(entry.file.get(), key, &st);
  if (!decoded.ok() && !S_ISREG(st.st_mode))
    return Error(ErrorCode::kIo, "cache entry " + path.string() + " is " + file_kind(st.st_mode) +
                                     ", not a regular file");
  return decoded;
}

std::vector<Key128> DiskCache::keys() const {
  std::vector<Key128> keys;
  for (const FileInfo& file : scan(version_dir_, nullptr)) {
    const std::string hex =
        file.shard + file.name.substr(0, file.name.size() - kEntrySuffix.size());
    if (std::optional<Key128> key = Key128::parse_hex(hex)) keys.push_back(*key);
  }
  return keys;
}

DiskCache::WriteOutcome DiskCache::write(const Key128& key, const Payload& payload) {
  WriteOutcome outcome;
  if (!writable()) return outcome;
  const fs::path path = entry_path(key);
  const std::string shard_name = path.parent_path().filename().string();
  const std::string name = path.filename().string();
  Fd version = open_own_dir(AT_FDCWD, version_dir_.c_str());
  if (!version && errno == ENOENT) {
    // First write under this root: create the missing parents (private), then the version dir.
    if (!make_dirs_with_mode(root_, 0700) || !make_dir(version_dir_, dir_mode_)) {
      fail_writes("creating " + version_dir_.string(), errno);
      return outcome;
    }
    version = open_own_dir(AT_FDCWD, version_dir_.c_str());
  }
  if (!version) {
    const int error_number = errno;
    if (const std::string why = why_not_a_dir(AT_FDCWD, version_dir_, version_dir_.c_str());
        !why.empty())
      warn_not_ours(why + "; not written");
    else
      fail_writes("opening " + version_dir_.string(), error_number);
    return outcome;
  }
  if (::mkdirat(version.get(), shard_name.c_str(), dir_mode_) == 0) {
    ::fchmodat(version.get(), shard_name.c_str(), dir_mode_, 0);  // the umask takes no bits away
  } else if (errno != EEXIST) {
    fail_writes("creating " + path.parent_path().string(), errno);
    return outcome;
  }
  const Fd shard = open_own_dir(version.get(), shard_name.c_str());
  if (!shard) {
    const int error_number = errno;
    if (const std::string why =
            why_not_a_dir(version.get(), path.parent_path(), shard_name.c_str());
        !why.empty())
      warn_not_ours(why + "; not written");
    else
      fail_writes("opening " + path.parent_path().string(), error_number);
    return outcome;
  }
  const std::string file = encode_entry(key, payload, signer_.get());
  const AtomicWrite written = write_file_atomically_at(
      shard.get(), name, std::span<const char>(file.data(), file.size()), file_mode_, kTempMarker);
  if (!written.ok()) {
    fail_writes(written.created ? "writing " + path.string()
                                : "creating a file in " + path.parent_path().string(),
                written.error);
    return outcome;
  }
  outcome.written = true;

  std::lock_guard lock(total_mutex_);
  if (!total_known_) {
    total_bytes_ = usage().bytes;  // includes the file just written
    total_known_ = true;
  } else {
    total_bytes_ += file.size();
  }
  if (total_bytes_ > max_bytes_) outcome.evicted = evict_locked(path);
  return outcome;
}

uint64_t DiskCache::evict_locked(const fs::path& keep) {
  std::vector<FileInfo> stale;
  std::vector<FileInfo> files = scan(version_dir_, &stale);
  const Fd version = open_own_dir(AT_FDCWD, version_dir_.c_str());
  if (!version) return 0;
  for (const FileInfo& file : stale) unlink_own(version.get(), file);
  uint64_t total = 0;
  for (const FileInfo& file : files) total += file.bytes;
  std::sort(files.begin(), files.end(), older);
  const uint64_t low_water = max_bytes_ / 4 * 3;
  const std::string keep_shard = keep.parent_path().filename().string();
  const std::string keep_name = keep.filename().string();
  uint64_t evicted = 0;
  for (const FileInfo& file : files) {
    if (total <= low_water) break;
    if (file.shard == keep_shard && file.name == keep_name) continue;
    if (unlink_own(version.get(), file)) ++evicted;
    total -= file.bytes;  // gone either way: removed here or by another process
  }
  total_bytes_ = total;
  return evicted;
}

DiskCache::Usage DiskCache::usage() const {
  Usage total;
  for (const FileInfo& file : scan(version_dir_, nullptr)) {
    ++total.entries;
    total.bytes += file.bytes;
  }
  return total;
}

Result<uint64_t> DiskCache::clear() {
  uint64_t removed = 0;
  std::optional<Error> failed;
  for_each_file(
      version_dir_, true,
      [&](int shard, const std::string& shard_name, const std::string& name, const struct stat&) {
        if (!is_entry_name(name) && !is_temp_name(name)) return true;
        if (::unlinkat(shard, name.c_str(), 0) == 0) {
          ++removed;
        } else if (errno != ENOENT) {
          failed = Error(ErrorCode::kIo, "cannot remove cache entry " +
                                             (version_dir_ / shard_name / name).string() + ": " +
                                             std::strerror(errno));
          return false;
        }
        return true;
      });
  if (failed) return *failed;
  std::lock_guard lock(total_mutex_);
  total_known_ = false;
  return removed;
}

}  // namespace tmem
