// tmem::Runtime (include/tmem/runtime.h): the state between compiles as a value a host can make,
// the thread's current one, and the defined point where its background work ends (issue 42,
// item 6).
#include "tmem/runtime.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <thread>

#include "common/cache_test_util.h"
#include "common/spec_fixtures.h"
#include "jit/epilogue_layouts.h"
#include "jit/roundtrip_kernel.h"
#include "tmem/cache.h"
#include "tmem/jit.h"
#include "tmem/specialize.h"

namespace tmem {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

CacheOptions on_disk(const TempDir& dir) {
  CacheOptions options = cache_options_from_env();
  options.enabled = true;
  options.disk = true;
  options.dir = dir.path().string();
  options.remote.clear();
  return options;
}

// Entries of a disk cache directory (its files, whatever their layout).
int files_under(const fs::path& root) {
  int count = 0;
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(root, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error))
    if (it->is_regular_file(error)) ++count;
  return count;
}

KernelSource roundtrip() {
  return {Language::kCuda, testing::kRoundtrip, "roundtrip", "roundtrip.cu"};
}

TEST(Runtime, UseScopesNestRestoreAndStayOnTheirThread) {
  Runtime& fallback = Runtime::default_runtime();
  EXPECT_EQ(&Runtime::current(), &fallback);
  TempDir a_dir, b_dir;
  Runtime a(on_disk(a_dir)), b(on_disk(b_dir));
  {
    Runtime::Use use_a(a);
    EXPECT_EQ(&Runtime::current(), &a);
    {
      Runtime::Use use_b(b);
      EXPECT_EQ(&Runtime::current(), &b);
      Runtime* seen = nullptr;
      std::thread([&] { seen = &Runtime::current(); }).join();
      EXPECT_EQ(seen, &fallback);  // another thread has its own current runtime
    }
    EXPECT_EQ(&Runtime::current(), &a);
  }
  EXPECT_EQ(&Runtime::current(), &fallback);
}

// Two runtimes in one process keep two caches: the same spec compiles in each, lands in each
// one's directory and counts in each one's statistics, and the default runtime sees none of it.
TEST(Runtime, TwoRuntimesKeepTwoCachesInOneProcess) {
  const TransferSpec spec = tmemjit_test::seed_layout_b(true).make();
  TempDir a_dir, b_dir;
  ASSERT_TRUE(a_dir.ok() && b_dir.ok());
  const CacheStats default_before = cache_stats();
  Runtime a(on_disk(a_dir)), b(on_disk(b_dir));
  CompileReport first, second, again;
  {
    Runtime::Use use(a);
    ASSERT_TRUE(compile_transfer(spec, {}, KernelKind::kRoundtrip, &first).ok());
    EXPECT_EQ(cache_options().dir, a_dir.path().string());
  }
  {
    Runtime::Use use(b);
    ASSERT_TRUE(compile_transfer(spec, {}, KernelKind::kRoundtrip, &second).ok());
    EXPECT_EQ(cache_stats().misses, 1u);
  }
  {
    Runtime::Use use(a);
    ASSERT_TRUE(compile_transfer(spec, {}, KernelKind::kRoundtrip, &again).ok());
    EXPECT_EQ(cache_stats().misses, 1u);
    EXPECT_EQ(cache_stats().hits, 1u);
  }
  EXPECT_EQ(first.cache, CacheSource::kCompiled);
  EXPECT_EQ(second.cache, CacheSource::kCompiled);  // not a's entry from memory
  EXPECT_EQ(again.cache, CacheSource::kMemory);
  EXPECT_EQ(first.key, second.key);
  EXPECT_GT(files_under(a_dir.path()), 0);
  EXPECT_GT(files_under(b_dir.path()), 0);
  const CacheStats default_after = cache_stats();
  EXPECT_EQ(default_after.misses, default_before.misses);
  EXPECT_EQ(default_after.hits, default_before.hits);
  EXPECT_EQ(default_after.disk_writes, default_before.disk_writes);
}

// A lazy compile without a generic tier compiles the specialized kernel now and builds the
// generic tier in the background: that job runs under the runtime that posted it, so the tier
// lands in that runtime's cache, and the runtime's destructor is the point where it has ended.
TEST(Runtime, ABackgroundCompileRunsUnderTheRuntimeThatPostedIt) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const CacheStats default_before = cache_stats();
  CompileOptions lazy;
  lazy.specialization = Specialization::kLazy;
  {
    Runtime runtime(on_disk(dir));
    Runtime::Use use(runtime);
    CompileReport report;
    auto kernel = compile_kernel(roundtrip(), testing::roundtrip_layout_d(), lazy, &report);
    ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
    runtime.wait_background_compiles();
    EXPECT_EQ(runtime.background_compiles().queued + runtime.background_compiles().running, 0);
    // The generic tier is in this runtime's memory now: asking for it compiles nothing.
    CompileOptions generic = lazy;
    generic.specialization = Specialization::kGeneric;
    CompileReport generic_report;
    ASSERT_TRUE(
        compile_kernel(roundtrip(), testing::roundtrip_layout_d(), generic, &generic_report).ok());
    EXPECT_EQ(generic_report.cache, CacheSource::kMemory);
    EXPECT_EQ(cache_stats().misses, 2u);  // the specialized kernel and the generic tier
  }
  EXPECT_GE(files_under(dir.path()), 2);
  EXPECT_EQ(cache_stats().misses, default_before.misses);
}

// shutdown() is the defined point: nothing runs after it, a later background job is dropped at
// once (a lazy kernel keeps the tier it has), and it can be called again.
TEST(Runtime, AfterShutdownBackgroundWorkIsDroppedAndCompilesStillAnswer) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  Runtime runtime(on_disk(dir));
  EXPECT_EQ(runtime.shutdown(), 0);
  Runtime::Use use(runtime);
  CompileOptions lazy;
  lazy.specialization = Specialization::kLazy;
  auto kernel = compile_kernel(roundtrip(), testing::roundtrip_layout_d(), lazy);
  ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
  EXPECT_EQ(kernel->tier(), "specialized");
  EXPECT_EQ(runtime.background_compiles().queued + runtime.background_compiles().running, 0);
  runtime.wait_background_compiles();  // returns: nothing can run any more
  EXPECT_EQ(runtime.shutdown(), 0);
}

}  // namespace
}  // namespace tmem
