// Hostile layouts of a cache directory (issue 30, items 3, 7 and 11): symlinked shard directories,
// FIFOs and symlinks at entry paths, and bundle destinations that are not regular files. The cache
// follows no symlink it did not make, opens nothing but regular files, and never blocks.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "common/cache_test_util.h"
#include "common/files.h"
#include "runtime/cache/bundle.h"
#include "runtime/cache/disk.h"

namespace tmem {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::TempDir;
using testing::test_key;
using testing::test_payload;
using testing::write_file;
using Clock = std::chrono::steady_clock;

// Files an attacker wants removed: named like entries and temp files, old enough to be "stale".
std::vector<fs::path> plant_victims(const fs::path& dir) {
  fs::create_directories(dir);
  std::vector<fs::path> victims = {dir / "0123456789abcdef0123456789abcd.bin",
                                   dir / "precious.tmp.abcdef",
                                   dir / "fedcba9876543210fedcba98765432.bin"};
  const struct timespec old[2] = {{::time(nullptr) - 7200, 0}, {::time(nullptr) - 7200, 0}};
  for (const fs::path& victim : victims) {
    write_file(victim, "someone else's data");
    ::utimensat(AT_FDCWD, victim.c_str(), old, 0);
  }
  return victims;
}

// A FIFO at `path`; a thread opens it for writing after `delay` so that a reader that blocked on it
// is released, and counts that it had to (the test then fails on that count instead of hanging;
// no wall-clock bound, issue 39 item 10).
class Fifo {
 public:
  Fifo(const fs::path& path, std::chrono::milliseconds delay) : path_(path) {
    fs::create_directories(path.parent_path());
    made_ = ::mkfifo(path.c_str(), 0600) == 0;
    releaser_ = std::thread([this, delay] {
      const auto until = Clock::now() + delay;
      while (Clock::now() < until && !done_.load())
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      // Opening the write end releases a blocked reader; closing it gives that reader EOF.
      for (int i = 0; i < 100 && !done_.load(); ++i) {
        const int fd = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK);
        if (fd >= 0) {  // only a reader holding the FIFO open lets the write end open
          released_.store(true);
          ::close(fd);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    });
  }
  ~Fifo() {
    done_.store(true);
    releaser_.join();
  }
  bool made() const { return made_; }
  // A reader blocked on the FIFO until this released it.
  bool released_a_reader() const { return released_.load(); }

 private:
  fs::path path_;
  bool made_ = false;
  std::atomic<bool> released_{false};
  std::atomic<bool> done_{false};
  std::thread releaser_;
};

TEST(HostileCache, ClearSkipsASymlinkedShardDirectory) {
  TempDir dir, outside;
  DiskCache cache(dir.path(), uint64_t{1} << 30);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(cache.write(test_key(i), test_payload(i)).written);
  const std::vector<fs::path> victims = plant_victims(outside.path() / "home");
  fs::create_directory_symlink(outside.path() / "home", cache.version_dir() / "zz");
  ::testing::internal::CaptureStderr();  // `cache clear` warns every time
  const Result<uint64_t> removed = cache.clear();
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(removed.ok()) << removed.error().message();
  EXPECT_EQ(*removed, 4u);
  for (const fs::path& victim : victims) EXPECT_TRUE(fs::exists(victim)) << victim;
  EXPECT_NE(err.find("is a symbolic link"), std::string::npos) << err;
  EXPECT_TRUE(fs::is_symlink(cache.version_dir() / "zz"));  // left alone, not traversed
}

TEST(HostileCache, EvictionSkipsASymlinkedShardDirectory) {
  TempDir dir, outside;
  DiskCache cache(dir.path(), 3000);
  ASSERT_TRUE(cache.write(test_key(0), test_payload(0, 1000)).written);
  const std::vector<fs::path> victims = plant_victims(outside.path() / "home");
  fs::create_directory_symlink(outside.path() / "home", cache.version_dir() / "zz");
  ::testing::internal::CaptureStderr();
  for (int i = 1; i < 8; ++i) ASSERT_TRUE(cache.write(test_key(i), test_payload(i, 1000)).written);
  ::testing::internal::GetCapturedStderr();
  for (const fs::path& victim : victims) EXPECT_TRUE(fs::exists(victim)) << victim;
  EXPECT_LE(cache.usage().bytes, 3000u);  // the usage does not count the files behind the link
}

TEST(HostileCache, ASymlinkedShardIsNotWrittenThrough) {
  TempDir dir, outside;
  DiskCache cache(dir.path(), uint64_t{1} << 30);
  ASSERT_TRUE(cache.write(test_key(100), test_payload(100)).written);  // makes the version dir
  const std::string shard = cache.entry_path(test_key(1)).parent_path().filename().string();
  fs::create_directories(outside.path() / "home");
  fs::create_directory_symlink(outside.path() / "home", cache.version_dir() / shard);
  ::testing::internal::CaptureStderr();
  cache.write(test_key(1), test_payload(1));
  EXPECT_FALSE(cache.read(test_key(1)).has_value());
  ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(fs::is_empty(outside.path() / "home"));
}

TEST(HostileCache, AFifoAtAnEntryPathIsAMissWithAWarningWithoutBlocking) {
  TempDir dir;
  DiskCache cache(dir.path(), uint64_t{1} << 30);
  const Fifo fifo(cache.entry_path(test_key(7)), std::chrono::milliseconds(3000));
  ASSERT_TRUE(fifo.made());
  DiskCache::reset_warning_for_testing();  // the warning is once per process
  ::testing::internal::CaptureStderr();
  DiskCache::ReadStatus status{};
  EXPECT_FALSE(cache.read(test_key(7), &status).has_value());
  EXPECT_FALSE(cache.peek(test_key(7)).ok());
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(fifo.released_a_reader()) << "the read blocked on the FIFO";
  EXPECT_NE(status, DiskCache::ReadStatus::kHit);
  EXPECT_NE(err.find("not a regular file"), std::string::npos) << err;
  // The next write replaces the FIFO (rename), and the entry is a hit again.
  ASSERT_TRUE(cache.write(test_key(7), test_payload(7)).written);
  EXPECT_TRUE(cache.read(test_key(7)).has_value());
}

TEST(HostileCache, ASymlinkAtAnEntryPathIsNotFollowed) {
  TempDir dir, outside;
  DiskCache cache(dir.path(), uint64_t{1} << 30);
  // A valid entry for key 8, but outside the cache: a link to it is not one of the cache's files.
  const fs::path planted = outside.path() / "planted.bin";
  write_file(planted, encode_entry(test_key(8), test_payload(8)));
  ASSERT_TRUE(cache.write(test_key(9), test_payload(9)).written);
  fs::create_directories(cache.entry_path(test_key(8)).parent_path());
  fs::create_symlink(planted, cache.entry_path(test_key(8)));
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(cache.read(test_key(8)).has_value());
  ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(fs::exists(planted));
}

TEST(HostileCache, ExportSkipsAFifoEntryWithoutBlocking) {
  TempDir dir, out;
  DiskCache cache(dir.path(), uint64_t{1} << 30);
  ASSERT_TRUE(cache.write(test_key(1), test_payload(1)).written);
  const Fifo fifo(cache.entry_path(test_key(2)), std::chrono::milliseconds(3000));
  ::testing::internal::CaptureStderr();
  const Result<BundleSummary> summary =
      export_bundle(cache, (out.path() / "b.tmjb").string(), BundleIdentity{});
  ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(fifo.released_a_reader()) << "the export blocked on the FIFO";
  ASSERT_TRUE(summary.ok()) << summary.error().message();
  EXPECT_EQ(summary->entries, 1u);
}

TEST(HostileCache, ExportRefusesADestinationThatIsNotARegularFile) {
  TempDir dir, out;
  DiskCache cache(dir.path(), uint64_t{1} << 30);
  ASSERT_TRUE(cache.write(test_key(1), test_payload(1)).written);
  const fs::path fifo = out.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const fs::path target = out.path() / "target";
  write_file(target, "keep me");
  const fs::path link = out.path() / "link";
  fs::create_symlink(target, link);
  fs::create_directory(out.path() / "dir");
  for (const fs::path& path : {fifo, link, out.path() / "dir", fs::path("/dev/null")}) {
    const Result<BundleSummary> summary = export_bundle(cache, path.string(), BundleIdentity{});
    ASSERT_FALSE(summary.ok()) << path;
    EXPECT_NE(summary.error().message().find("not a regular file"), std::string::npos)
        << summary.error().message();
  }
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(read_file(target), "keep me");
  ASSERT_EQ(::lstat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  // No temp file is left beside any of them.
  for (const auto& file : fs::directory_iterator(out.path()))
    EXPECT_EQ(file.path().string().find(".tmp."), std::string::npos) << file.path();
  // A regular file is replaced whole.
  const Result<BundleSummary> summary = export_bundle(cache, target.string(), BundleIdentity{});
  ASSERT_TRUE(summary.ok()) << summary.error().message();
  EXPECT_EQ(read_file(target).substr(0, 4), "TMJB");
}

TEST(HostileCache, ImportRefusesAFifoWithoutBlocking) {
  TempDir dir, out;
  DiskCache cache(dir.path(), uint64_t{1} << 30);
  const Fifo fifo(out.path() / "bundle", std::chrono::milliseconds(3000));
  const Result<BundleSummary> summary =
      import_bundle(cache, (out.path() / "bundle").string(), BundleIdentity{});
  EXPECT_FALSE(fifo.released_a_reader()) << "the import blocked on the FIFO";
  ASSERT_FALSE(summary.ok());
  EXPECT_NE(summary.error().message().find("not a regular file"), std::string::npos)
      << summary.error().message();
}

}  // namespace
}  // namespace tmem
