// Tests of ModuleCache and the public cache API: counters, configuration from the environment,
// the off switch, clearing.
#include "runtime/cache/module_cache.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <array>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "common/cache_test_util.h"
#include "common/scoped_env.h"
#include "runtime/support/settings.h"
#include "tmem/cache.h"

namespace tmem {
namespace {
using testing::ScopedEnv;

using testing::TempDir;
using testing::test_key;
using testing::test_payload;

TEST(ModuleCache, FirstCallMissesSecondHits) {
  TempDir dir;
  ModuleCache cache(CacheOptions{true, true, dir.path().string(), uint64_t{1} << 30});
  int compiles = 0;
  auto compile = [&] {
    ++compiles;
    return Result<Payload>(test_payload(1));
  };
  auto first = cache.get_or_compile(test_key(1), compile);
  ASSERT_TRUE(first.ok());
  CacheStats stats = cache.stats();
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.hits, 0u);
  EXPECT_EQ(stats.disk_hits, 0u);
  EXPECT_EQ(stats.disk_writes, 1u);
  EXPECT_GE(stats.compile_ms, 0.0);
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.bytes, test_payload(1).size_bytes());
  auto second = cache.get_or_compile(test_key(1), compile);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(first->get(), second->get());
  stats = cache.stats();
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(compiles, 1);

  cache.reset_stats();
  stats = cache.stats();
  EXPECT_EQ(stats.hits + stats.misses + stats.disk_hits + stats.disk_writes, 0u);
  EXPECT_EQ(stats.entries, 1u);  // state, not a counter

  // Memory cleared, disk kept: a disk hit. Both cleared: a miss.
  ASSERT_TRUE(cache.clear(false).ok());
  ASSERT_TRUE(cache.get_or_compile(test_key(1), compile).ok());
  EXPECT_EQ(cache.stats().disk_hits, 1u);
  ASSERT_TRUE(cache.clear(true).ok());
  ASSERT_TRUE(cache.get_or_compile(test_key(1), compile).ok());
  EXPECT_EQ(cache.stats().misses, 1u);
  EXPECT_EQ(compiles, 2);
}

TEST(ModuleCache, FailedCompilesAreCountedAndNotCached) {
  ModuleCache cache(CacheOptions{true, false, "", 0});
  int compiles = 0;
  auto failing = [&]() -> Result<Payload> {
    ++compiles;
    return Error(ErrorCode::kToolchain, "nvjitlink failed");
  };
  for (int i = 0; i < 3; ++i) {
    auto result = cache.get_or_compile(test_key(1), failing);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().message(), "nvjitlink failed");
  }
  EXPECT_EQ(compiles, 3);
  EXPECT_EQ(cache.stats().misses, 3u);
  EXPECT_EQ(cache.stats().entries, 0u);
}

TEST(ModuleCache, SixteenThreadsTwoHundredKeysCountersAddUp) {
  TempDir dir;
  ModuleCache cache(CacheOptions{true, true, dir.path().string(), uint64_t{1} << 30});
  constexpr int kThreads = 16;
  constexpr int kKeys = 200;
  std::array<std::atomic<int>, kKeys> compiles{};
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int n = 0; n < kKeys; ++n) {
        const int i = (n * 7 + t * 13) % kKeys;
        auto result = cache.get_or_compile(test_key(i), [&, i] {
          compiles[i].fetch_add(1);
          return Result<Payload>(test_payload(i));
        });
        if (!result.ok() || **result != test_payload(i)) failures.fetch_add(1);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  for (int i = 0; i < kKeys; ++i) EXPECT_EQ(compiles[i].load(), 1) << i;
  const CacheStats stats = cache.stats();
  EXPECT_EQ(stats.misses, static_cast<uint64_t>(kKeys));
  EXPECT_EQ(stats.hits, static_cast<uint64_t>(kKeys * (kThreads - 1)));
  EXPECT_EQ(stats.disk_hits, 0u);
  EXPECT_EQ(stats.disk_writes, static_cast<uint64_t>(kKeys));
}

TEST(ModuleCache, DisabledCacheCompilesEveryTime) {
  TempDir dir;
  ModuleCache cache(CacheOptions{false, true, dir.path().string(), uint64_t{1} << 30});
  int compiles = 0;
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(cache
                    .get_or_compile(test_key(1),
                                    [&] {
                                      ++compiles;
                                      return Result<Payload>(test_payload(1));
                                    })
                    .ok());
  EXPECT_EQ(compiles, 3);
  EXPECT_EQ(cache.stats().misses, 3u);
  EXPECT_EQ(cache.stats().hits, 0u);
  EXPECT_EQ(cache.disk(), nullptr);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));  // nothing written to disk either
}

TEST(CacheOptions, FromEnvironment) {
  ScopedEnv disable("TMEMJIT_DISABLE_CACHE", nullptr);
  ScopedEnv dir("TMEMJIT_CACHE_DIR", nullptr);
  ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
  ScopedEnv home("HOME", "/home/someone");
  ScopedEnv cap("TMEMJIT_CACHE_MAX_BYTES", nullptr);
  CacheOptions options = cache_options_from_env();
  EXPECT_TRUE(options.enabled);
  EXPECT_TRUE(options.disk);
  EXPECT_EQ(options.dir, "/home/someone/.cache/tmemjit");
  EXPECT_EQ(options.max_bytes, uint64_t{1} << 30);
  {
    ScopedEnv xdg2("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(cache_options_from_env().dir, "/xdg/tmemjit");
    ScopedEnv explicit_dir("TMEMJIT_CACHE_DIR", "/explicit");
    EXPECT_EQ(cache_options_from_env().dir, "/explicit");
  }
  {
    ScopedEnv relative("XDG_CACHE_HOME", "relative");  // ignored, per the XDG spec
    EXPECT_EQ(cache_options_from_env().dir, "/home/someone/.cache/tmemjit");
  }
  {
    ScopedEnv no_home("HOME", nullptr);
    EXPECT_FALSE(cache_options_from_env().disk);
  }
  {
    ScopedEnv off("TMEMJIT_DISABLE_CACHE", "1");
    EXPECT_FALSE(cache_options_from_env().enabled);
    ScopedEnv zero("TMEMJIT_DISABLE_CACHE", "0");
    EXPECT_TRUE(cache_options_from_env().enabled);
  }
  {
    ScopedEnv small("TMEMJIT_CACHE_MAX_BYTES", "512M");
    EXPECT_EQ(cache_options_from_env().max_bytes, uint64_t{512} << 20);
  }
  {
    ScopedEnv bad("TMEMJIT_CACHE_MAX_BYTES", "lots");
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(cache_options_from_env().max_bytes, uint64_t{1} << 30);
    EXPECT_NE(::testing::internal::GetCapturedStderr().find("TMEMJIT_CACHE_MAX_BYTES"),
              std::string::npos);
  }
}

// Settings keeps its own copy of the cache's defaults (support cannot include tmem/cache.h): they
// must agree with CacheOptions', which a host that sets no variable gets either way.
TEST(CacheOptions, TheSettingsDefaultsAreCacheOptionsDefaults) {
  const Settings settings;
  const CacheOptions options;
  EXPECT_EQ(settings.cache_max_bytes.value, options.max_bytes);
  EXPECT_EQ(settings.remote_cache_connect_timeout_ms.value, options.remote_connect_timeout_ms);
  EXPECT_EQ(settings.remote_cache_timeout_ms.value, options.remote_timeout_ms);
  EXPECT_EQ(settings.remote_cache_lock_wait_ms.value, options.remote_lock_wait_ms);
  EXPECT_EQ(settings.remote_cache_lock_ttl_ms.value, options.remote_lock_ttl_ms);
  EXPECT_EQ(settings.remote_cache_retry_ms.value, options.remote_retry_ms);
  EXPECT_EQ(!settings.cache_disabled, options.enabled);
}

TEST(PublicCacheApi, StatsResetClearAndDirectoryOverride) {
  TempDir dir;
  const CacheOptions saved = cache_options();
  set_cache_dir(dir.path().string());
  EXPECT_EQ(cache_options().dir, dir.path().string());
  ASSERT_TRUE(clear_cache(true).ok());
  reset_cache_stats();
  auto compile = [] { return Result<Payload>(test_payload(5)); };
  ASSERT_TRUE(module_cache().get_or_compile(test_key(5), compile).ok());
  ASSERT_TRUE(module_cache().get_or_compile(test_key(5), compile).ok());
  CacheStats stats = cache_stats();
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.disk_writes, 1u);
  const Result<DiskCacheUsage> usage = disk_cache_usage();
  ASSERT_TRUE(usage.ok());
  EXPECT_EQ(usage->entries, 1u);
  EXPECT_EQ(usage->dir, (dir.path() / "v1").string());
  reset_cache_stats();
  EXPECT_EQ(cache_stats().hits, 0u);
  ASSERT_TRUE(clear_cache(true).ok());
  EXPECT_EQ(disk_cache_usage()->entries, 0u);
  EXPECT_EQ(cache_stats().entries, 0u);

  CacheOptions off = cache_options();
  off.enabled = false;
  set_cache_options(off);
  const Result<DiskCacheUsage> none = disk_cache_usage();
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code(), ErrorCode::kUsage);
  set_cache_options(saved);
}

}  // namespace
}  // namespace tmem
