// Tests of the disk cache: format validation, bad entries replaced, read-only fallback,
// multi-process writers, LRU eviction, and a disk hit from a new process.
#include "runtime/cache/disk.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common/cache_test_util.h"
#include "common/files.h"
#include "runtime/cache/module_cache.h"

namespace tmem {
namespace {
using testing::read_file;
using testing::write_file;

namespace fs = std::filesystem;
using testing::TempDir;
using testing::test_key;
using testing::test_payload;

// Every file under the version directory: entries must decode under the key their name spells,
// and no temp file may be left.
void expect_only_valid_entries(const DiskCache& cache, size_t expected_entries) {
  size_t entries = 0;
  for (const auto& file : fs::recursive_directory_iterator(cache.version_dir())) {
    if (file.is_directory()) {
      EXPECT_EQ(file.path().filename().string().size(), 2u) << file.path();
      continue;
    }
    const std::string name = file.path().filename().string();
    ASSERT_TRUE(name.ends_with(".bin")) << "stray file " << file.path();
    const std::string hex = file.path().parent_path().filename().string() + name.substr(0, 30);
    const std::optional<Key128> key = Key128::parse_hex(hex);
    ASSERT_TRUE(key.has_value()) << file.path();
    const std::string bytes = read_file(file.path());
    const Result<Payload> payload = decode_entry(*key, bytes);
    EXPECT_TRUE(payload.ok()) << file.path() << ": "
                              << (payload.ok() ? "" : payload.error().message());
    ++entries;
  }
  EXPECT_EQ(entries, expected_entries);
}

TEST(DiskFormat, EncodeDecodeRoundTrip) {
  const Payload payload = test_payload(1, 1000);
  const std::string file = encode_entry(test_key(1), payload);
  EXPECT_EQ(file.size(), kDiskHeaderBytes + 1000);
  EXPECT_EQ(file.substr(0, 4), "TMJC");
  const Result<Payload> decoded = decode_entry(test_key(1), file);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message();
  EXPECT_EQ(*decoded, payload);
  Payload empty;
  const Result<Payload> none = decode_entry(test_key(2), encode_entry(test_key(2), empty));
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, empty);
}

TEST(DiskFormat, EveryMismatchIsRejected) {
  const std::string good = encode_entry(test_key(1), test_payload(1));
  auto rejects = [&](std::string bytes, const Key128& key, const std::string& why) {
    const Result<Payload> decoded = decode_entry(key, bytes);
    ASSERT_FALSE(decoded.ok()) << why;
    EXPECT_EQ(decoded.error().code(), ErrorCode::kIo);
    EXPECT_NE(decoded.error().message().find(why), std::string::npos) << decoded.error().message();
  };
  rejects(good.substr(0, 10), test_key(1), "shorter than the 64-byte header");
  rejects(good.substr(0, good.size() - 1), test_key(1), "payload sizes");
  rejects(good + "x", test_key(1), "payload sizes");
  rejects(good, test_key(2), "key");
  std::string magic = good;
  magic[0] = 'X';
  rejects(magic, test_key(1), "magic");
  std::string version = good;
  version[4] = 9;
  rejects(version, test_key(1), "format version 9");
  std::string sizes = good;
  sizes[24] ^= 1;  // blob size, caught by the header checksum before the size check
  rejects(sizes, test_key(1), "header checksum");
  std::string body = good;
  body[kDiskHeaderBytes + 5] ^= 0x40;
  rejects(body, test_key(1), "payload checksum");
}

TEST(DiskCache, WriteThenReadAndTheDirectoryLayout) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  DiskCache cache(dir.path(), uint64_t{1} << 30);
  const Key128 key = test_key(1);
  DiskCache::ReadStatus status{};
  EXPECT_FALSE(cache.read(key, &status).has_value());
  EXPECT_EQ(status, DiskCache::ReadStatus::kAbsent);
  ASSERT_TRUE(cache.write(key, test_payload(1)).written);
  const std::string hex = key.hex();
  const fs::path expected = dir.path() / "v1" / hex.substr(0, 2) / (hex.substr(2) + ".bin");
  EXPECT_EQ(cache.entry_path(key), expected);
  EXPECT_TRUE(fs::is_regular_file(expected));
  const std::optional<Payload> read = cache.read(key, &status);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(status, DiskCache::ReadStatus::kHit);
  EXPECT_EQ(*read, test_payload(1));
  // Writing an existing key again succeeds (the rename replaces the file).
  EXPECT_TRUE(cache.write(key, test_payload(1)).written);
  expect_only_valid_entries(cache, 1);
  EXPECT_EQ(cache.usage().entries, 1u);
  EXPECT_EQ(cache.usage().bytes, kDiskHeaderBytes + 300);
}

// Recompiles through a ModuleCache over `dir` and checks the bad file was replaced.
void expect_recompiled_and_replaced(const fs::path& dir, const Key128& key, int i) {
  ModuleCache cache(CacheOptions{true, true, dir.string(), uint64_t{1} << 30});
  int compiles = 0;
  auto result = cache.get_or_compile(key, [&] {
    ++compiles;
    return Result<Payload>(test_payload(i));
  });
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(**result, test_payload(i));
  EXPECT_EQ(compiles, 1);
  EXPECT_EQ(cache.stats().misses, 1u);
  EXPECT_EQ(cache.stats().disk_hits, 0u);
  EXPECT_EQ(cache.stats().disk_writes, 1u);
  const Result<Payload> now = decode_entry(key, read_file(cache.disk()->entry_path(key)));
  ASSERT_TRUE(now.ok()) << now.error().message();
  EXPECT_EQ(*now, test_payload(i));
}

TEST(DiskCache, CorruptEntryIsAMissAndIsReplaced) {
  TempDir dir;
  DiskCache cache(dir.path(), uint64_t{1} << 30);
  const Key128 key = test_key(2);
  ASSERT_TRUE(cache.write(key, test_payload(2)).written);
  const fs::path path = cache.entry_path(key);
  std::string bytes = read_file(path);
  bytes[bytes.size() / 2] ^= 0x5a;
  write_file(path, bytes);
  DiskCache::ReadStatus status{};
  EXPECT_FALSE(cache.read(key, &status).has_value());
  EXPECT_EQ(status, DiskCache::ReadStatus::kInvalid);
  EXPECT_FALSE(fs::exists(path));  // removed, so the next write replaces it

  write_file(path, bytes);  // corrupt again, then go through the module cache
  expect_recompiled_and_replaced(dir.path(), key, 2);
}

TEST(DiskCache, TruncatedEntryIsAMissAndIsReplaced) {
  TempDir dir;
  DiskCache cache(dir.path(), uint64_t{1} << 30);
  for (size_t keep : {size_t{0}, size_t{30}, kDiskHeaderBytes, kDiskHeaderBytes + 100}) {
    const Key128 key = test_key(3);
    ASSERT_TRUE(cache.write(key, test_payload(3)).written);
    const fs::path path = cache.entry_path(key);
    ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(keep)), 0);
    DiskCache::ReadStatus status{};
    EXPECT_FALSE(cache.read(key, &status).has_value()) << keep;
    EXPECT_EQ(status, DiskCache::ReadStatus::kInvalid) << keep;
    ASSERT_TRUE(cache.write(key, test_payload(3)).written);
    ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(keep)), 0);
    expect_recompiled_and_replaced(dir.path(), key, 3);
  }
}

TEST(DiskCache, EntryOfAnotherKeyIsAMiss) {
  TempDir dir;
  DiskCache cache(dir.path(), uint64_t{1} << 30);
  ASSERT_TRUE(cache.write(test_key(4), test_payload(4)).written);
  const fs::path wrong = cache.entry_path(test_key(5));
  fs::create_directories(wrong.parent_path());
  fs::copy_file(cache.entry_path(test_key(4)), wrong);
  DiskCache::ReadStatus status{};
  EXPECT_FALSE(cache.read(test_key(5), &status).has_value());
  EXPECT_EQ(status, DiskCache::ReadStatus::kInvalid);
  EXPECT_TRUE(cache.read(test_key(4)).has_value());
}

// A cache root that cannot be written. chmod 0555 stops everyone but root; as root (or with
// CAP_DAC_OVERRIDE) use a path below a regular file, which no one can create.
fs::path unwritable_root(const TempDir& dir) {
  const fs::path locked = dir.path() / "locked";
  fs::create_directories(locked);
  ::chmod(locked.c_str(), 0555);
  const fs::path probe = locked / "probe";
  const int fd = ::open(probe.c_str(), O_CREAT | O_WRONLY, 0644);
  if (fd < 0) return locked;
  ::close(fd);
  ::unlink(probe.c_str());
  write_file(dir.path() / "a-file", "not a directory");
  return dir.path() / "a-file" / "cache";
}

TEST(DiskCache, UnwritableDirectoryFallsBackToMemoryWithOneWarning) {
  TempDir dir;
  const fs::path root = unwritable_root(dir);
  DiskCache::reset_warning_for_testing();
  ::testing::internal::CaptureStderr();
  ModuleCache cache(CacheOptions{true, true, root.string(), uint64_t{1} << 30});
  int compiles = 0;
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 5; ++i) {
      auto result = cache.get_or_compile(test_key(i), [&, i] {
        ++compiles;
        return Result<Payload>(test_payload(i));
      });
      ASSERT_TRUE(result.ok());
      EXPECT_EQ(**result, test_payload(i));
    }
  }
  const std::string warnings = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(compiles, 5);
  EXPECT_EQ(cache.stats().misses, 5u);
  EXPECT_EQ(cache.stats().hits, 5u);
  EXPECT_EQ(cache.stats().disk_writes, 0u);
  EXPECT_FALSE(cache.disk()->writable());
  size_t count = 0;
  for (size_t at = warnings.find("warning:"); at != std::string::npos;
       at = warnings.find("warning:", at + 1))
    ++count;
  EXPECT_EQ(count, 1u) << warnings;
  EXPECT_NE(warnings.find("caching in memory only"), std::string::npos) << warnings;
}

TEST(DiskCache, FailedWriteMidFileFallsBackToMemoryAndLeavesNoTempFile) {
  TempDir dir;
  // A "full disk" in a child process: RLIMIT_FSIZE makes write() fail after 100 bytes (EFBIG).
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = {100, 100};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(10);
    ModuleCache cache(CacheOptions{true, true, dir.path().string(), uint64_t{1} << 30});
    int compiles = 0;
    for (int round = 0; round < 2; ++round) {
      auto result = cache.get_or_compile(test_key(1), [&] {
        ++compiles;
        return Result<Payload>(test_payload(1, 1000));
      });
      if (!result.ok() || **result != test_payload(1, 1000)) ::_exit(11);
    }
    if (compiles != 1 || cache.stats().disk_writes != 0 || cache.disk()->writable()) ::_exit(12);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  size_t files = 0;
  for (const auto& file : fs::recursive_directory_iterator(dir.path()))
    if (!file.is_directory()) ++files;
  EXPECT_EQ(files, 0u);  // the partial temp file was removed
}

TEST(DiskCache, LeastRecentlyUsedEntriesAreEvictedOverTheCap) {
  TempDir dir;
  constexpr size_t kFile = 1000;  // bytes per entry file
  constexpr uint64_t kCap = 10500;
  DiskCache cache(dir.path(), kCap);
  for (int i = 0; i < 10; ++i)
    ASSERT_TRUE(cache.write(test_key(i), test_payload(i, kFile - kDiskHeaderBytes)).written);
  EXPECT_EQ(cache.usage().bytes, 10 * kFile);
  // Deterministic ages: entry i was last used i seconds after a base an hour ago.
  const time_t base = ::time(nullptr) - 3600;
  for (int i = 0; i < 10; ++i) {
    struct timespec times[2] = {{base + i, 0}, {base + i, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, cache.entry_path(test_key(i)).c_str(), times, 0), 0);
  }
  ASSERT_TRUE(cache.read(test_key(0)).has_value());  // a hit makes entry 0 the newest
  const DiskCache::WriteOutcome outcome =
      cache.write(test_key(10), test_payload(10, kFile - kDiskHeaderBytes));
  ASSERT_TRUE(outcome.written);
  // 11000 bytes > 10500: remove the oldest (1, 2, 3, 4) until at most 3/4 of the cap remain.
  EXPECT_EQ(outcome.evicted, 4u);
  for (int i = 1; i <= 4; ++i) EXPECT_FALSE(fs::exists(cache.entry_path(test_key(i)))) << i;
  for (int i : {0, 5, 6, 7, 8, 9, 10}) EXPECT_TRUE(fs::exists(cache.entry_path(test_key(i)))) << i;
  EXPECT_LE(cache.usage().bytes, kCap);
  // Under the cap again: the next write does not evict.
  EXPECT_EQ(cache.write(test_key(11), test_payload(11, kFile - kDiskHeaderBytes)).evicted, 0u);
}

TEST(DiskCache, StaleTempFilesAreRemovedByEviction) {
  TempDir dir;
  DiskCache cache(dir.path(), 2000);
  ASSERT_TRUE(cache.write(test_key(0), test_payload(0, 1000)).written);
  const fs::path stale = cache.entry_path(test_key(0)).string() + ".tmp.abcdef";
  write_file(stale, "half a file");
  struct timespec old[2] = {{::time(nullptr) - 7200, 0}, {::time(nullptr) - 7200, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, stale.c_str(), old, 0), 0);
  ASSERT_TRUE(cache.write(test_key(1), test_payload(1, 1000)).written);  // over the cap: scans
  EXPECT_FALSE(fs::exists(stale));
}

TEST(DiskCache, ClearRemovesEveryEntry) {
  TempDir dir;
  DiskCache cache(dir.path(), uint64_t{1} << 30);
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(cache.write(test_key(i), test_payload(i)).written);
  const Result<uint64_t> removed = cache.clear();
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(*removed, 20u);
  EXPECT_EQ(cache.usage().entries, 0u);
}

// Runs `body` in `count` forked children at once; expects every child to exit 0.
template <class Body>
void in_children(int count, Body body) {
  std::vector<pid_t> children;
  for (int c = 0; c < count; ++c) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) ::_exit(body(c));
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status)) << "child " << pid << " died";
    EXPECT_EQ(WEXITSTATUS(status), 0) << "child " << pid;
  }
}

TEST(DiskCache, ConcurrentProcessesLeaveOnlyValidEntries) {
  TempDir dir;
  constexpr int kProcesses = 6;
  constexpr int kShared = 40;
  constexpr int kOwn = 40;
  in_children(kProcesses, [&](int c) {
    // A fresh cache object per child: nothing shared but the directory.
    DiskCache cache(dir.path(), uint64_t{1} << 30);
    int bad = 0;
    for (int round = 0; round < 3; ++round) {
      for (int i = 0; i < kShared; ++i) {
        if (!cache.write(test_key(i), test_payload(i, 2000 + i)).written) ++bad;
        const std::optional<Payload> read = cache.read(test_key(i));
        if (read && *read != test_payload(i, 2000 + i)) ++bad;
      }
      for (int i = 0; i < kOwn; ++i) {
        const int k = 1000 * (c + 1) + i;
        if (!cache.write(test_key(k), test_payload(k, 500)).written) ++bad;
      }
    }
    return bad == 0 ? 0 : 1;
  });
  DiskCache cache(dir.path(), uint64_t{1} << 30);
  expect_only_valid_entries(cache, kShared + kProcesses * kOwn);
}

TEST(DiskCache, ConcurrentProcessesUnderASmallCapLeaveOnlyValidEntries) {
  TempDir dir;
  constexpr uint64_t kCap = 40000;
  in_children(4, [&](int c) {
    DiskCache cache(dir.path(), kCap);
    for (int i = 0; i < 100; ++i)
      if (!cache.write(test_key(c * 100 + i), test_payload(i, 1000)).written) return 1;
    return 0;
  });
  DiskCache cache(dir.path(), kCap);
  for (const auto& file : fs::recursive_directory_iterator(cache.version_dir())) {
    if (file.is_directory()) continue;
    const std::string name = file.path().filename().string();
    ASSERT_TRUE(name.ends_with(".bin")) << file.path();
    const std::string hex = file.path().parent_path().filename().string() + name.substr(0, 30);
    EXPECT_TRUE(decode_entry(*Key128::parse_hex(hex), read_file(file.path())).ok());
  }
  // Each process keeps its view of the total under the cap; together they stay near it.
  EXPECT_LE(cache.usage().bytes, 2 * kCap);
}

TEST(ModuleCacheDisk, NewProcessHitsTheDisk) {
  TempDir dir;
  // Each child is a new process with a new (empty) memory cache over the same directory; it
  // reports its counters through the exit status: misses + 2 * disk_hits + 4 * hits.
  auto child = [&](int) {
    ModuleCache cache(CacheOptions{true, true, dir.path().string(), uint64_t{1} << 30});
    auto compile = [] { return Result<Payload>(test_payload(42)); };
    auto first = cache.get_or_compile(test_key(42), compile);
    if (!first.ok() || **first != test_payload(42)) return 100;
    const CacheStats stats = cache.stats();
    return static_cast<int>(stats.misses + 2 * stats.disk_hits + 4 * stats.hits);
  };
  auto run_child = [&]() -> int {
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(child(0));
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  EXPECT_EQ(run_child(), 1);  // first process: a miss, compiled and written
  EXPECT_EQ(run_child(), 2);  // second process: a disk hit
  EXPECT_EQ(run_child(), 2);

  // In one process: first call a disk hit, second a memory hit.
  ModuleCache cache(CacheOptions{true, true, dir.path().string(), uint64_t{1} << 30});
  int compiles = 0;
  auto compile = [&] {
    ++compiles;
    return Result<Payload>(test_payload(42));
  };
  ASSERT_TRUE(cache.get_or_compile(test_key(42), compile).ok());
  ASSERT_TRUE(cache.get_or_compile(test_key(42), compile).ok());
  EXPECT_EQ(compiles, 0);
  EXPECT_EQ(cache.stats().disk_hits, 1u);
  EXPECT_EQ(cache.stats().hits, 1u);
  EXPECT_EQ(cache.stats().misses, 0u);
}

}  // namespace
}  // namespace tmem
