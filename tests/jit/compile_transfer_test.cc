// Tests of compile_transfer and warmup with real compiles: counters pinned per call, one entry per
// meaning, one compile per key under 16 threads, an allocation-free hit, bad and unwritable disk
// entries, the cache switched off, and compile-only use without a driver.
#include "runtime/jit/compile_transfer.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "common/allocation_counter.h"
#include "common/cache_test_util.h"
#include "common/files.h"
#include "common/sanitizer_util.h"
#include "common/spec_fixtures.h"
#include "runtime/cache/disk.h"
#include "runtime/cache/module_cache.h"
#include "runtime/jit/entry_meta.h"
#include "tmem/cache.h"
#include "tmem/jit.h"
#include "tmem/opcode.h"

using tmemjit_test::t_allocations;

namespace tmem {
namespace {
using testing::read_file;
using testing::write_file;

namespace fs = std::filesystem;
using testing::TempDir;

TransferSpec seed() { return tmemjit_test::seed_layout_b(true).make(); }

// The seed with other spacing and an equal factorization of each layout.
TransferSpec seed_respelled() {
  tmemjit_test::SpecText text = tmemjit_test::seed_layout_b(true);
  text.tmem = "tensor( (64,128), S[(64,2,2,32):(1@TLane,64@TLane,32@TCol,1@TCol)], f32)" +
              tmemjit_test::kSeedRearrange;
  text.regs = "tensor((64,128), S[(64,2,2,32):(1@tid_in_wg,64@tid_in_wg,32,1)], f32)" +
              tmemjit_test::kSeedRearrange;
  return text.make();
}

// `count` distinct (spec, kind) pairs of small identity specs, cheap to compile.
struct Job {
  TransferSpec spec;
  KernelKind kind;
};
std::vector<Job> distinct_jobs(size_t count) {
  std::vector<Job> jobs;
  for (KernelKind kind : all_kernel_kinds())
    for (int num = 1; num <= 4; num *= 2)
      for (Shape shape : all_shapes())
        for (Direction dir : {Direction::kStore, Direction::kLoad})
          for (bool pack : {false, true})
            for (int offset : {0, 16}) {
              auto op = Opcode::make(dir, shape, num, pack);
              if (!op || (offset && (op->atom_rows() == 32 || op->is_split()))) continue;
              if (jobs.size() == count) return jobs;
              jobs.push_back({tmemjit_test::identity_spec(*op, offset).make(), kind});
            }
  return jobs;
}

size_t count_of(const std::string& text, const std::string& word) {
  size_t count = 0;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++count;
  return count;
}

// Every test gets a fresh cache directory and empty memory, counters at zero, and its options
// restored afterwards.
class CompileTransfer : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    saved_ = cache_options();
    use_dir(dir_.path());
  }
  void TearDown() override {
    (void)clear_cache(false);
    set_cache_options(saved_);
  }
  void use_dir(const fs::path& dir) {
    CacheOptions options = saved_;
    options.enabled = true;
    options.disk = true;
    options.dir = dir.string();
    set_cache_options(options);
    ASSERT_TRUE(clear_cache(false).ok());
    reset_cache_stats();
  }
  fs::path entry_path(const TransferSpec& spec, KernelKind kind = KernelKind::kRoundtrip) {
    return module_cache().disk()->entry_path(transfer_cache_key(spec, {}, kind).value());
  }

  TempDir dir_;
  CacheOptions saved_;
};

TEST_F(CompileTransfer, FirstCallMissesSecondHitsThenDiskThenMissAgain) {
  const TransferSpec spec = seed();
  Result<Kernel> first = compile_transfer(spec);
  ASSERT_TRUE(first.ok()) << first.error().full_text();
  CacheStats stats = cache_stats();
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.hits, 0u);
  EXPECT_EQ(stats.disk_hits, 0u);
  EXPECT_EQ(stats.disk_writes, 1u);
  EXPECT_GT(stats.compile_ms, 0.0);
  EXPECT_EQ(first->name(), "tmem_roundtrip");
  EXPECT_EQ(first->target(), Target::kSm100a);
  ASSERT_GE(first->cubin().size(), 4u);
  EXPECT_EQ(std::string(first->cubin().data(), 4),
            "\x7f"
            "ELF");
  EXPECT_NE(first->ptx().find("tcgen05.st.sync.aligned.32x32b.x64.b32"), std::string_view::npos);
  EXPECT_FALSE(first->loaded());
  ASSERT_TRUE(fs::exists(entry_path(spec)));

  // Memory hit: the same handle (one module per entry and process), no compile.
  Result<Kernel> second = compile_transfer(spec);
  ASSERT_TRUE(second.ok());
  stats = cache_stats();
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(second->cubin().data(), first->cubin().data());

  // Memory dropped, disk kept: a disk hit with the same bytes, then memory hits again.
  const std::vector<char> cubin(first->cubin().begin(), first->cubin().end());
  ASSERT_TRUE(clear_cache(false).ok());
  CompileReport report;
  Result<Kernel> third = compile_transfer(spec, {}, KernelKind::kRoundtrip, &report);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(report.cache, CacheSource::kDisk);
  EXPECT_EQ(cache_stats().disk_hits, 1u);
  EXPECT_TRUE(std::equal(cubin.begin(), cubin.end(), third->cubin().begin(), third->cubin().end()));
  EXPECT_EQ(third->ptx(), first->ptx());
  ASSERT_TRUE(compile_transfer(spec, {}, KernelKind::kRoundtrip, &report).ok());
  EXPECT_EQ(report.cache, CacheSource::kMemory);

  // Both dropped: compiled again.
  ASSERT_TRUE(clear_cache(true).ok());
  ASSERT_TRUE(compile_transfer(spec, {}, KernelKind::kRoundtrip, &report).ok());
  EXPECT_EQ(report.cache, CacheSource::kCompiled);
  stats = cache_stats();
  EXPECT_EQ(stats.misses, 2u);
  EXPECT_EQ(stats.hits, 2u);
  EXPECT_EQ(stats.disk_hits, 1u);
  EXPECT_EQ(stats.disk_writes, 2u);
}

TEST_F(CompileTransfer, HitOnAPrebuiltSpecAllocatesNothing) {
#ifdef TMEMJIT_TSAN
  GTEST_SKIP()
      << "built with TSan, whose runtime defines operator new: allocations are not counted";
#endif
  const TransferSpec spec = seed();
  const CompileOptions options;
  CompileOptions family;  // a second option set, alternating with the first
  family.target = Target::kSm100f;
  ASSERT_TRUE(compile_transfer(spec, options).ok());
  ASSERT_TRUE(compile_transfer(spec, family).ok());
  const size_t before = t_allocations;
  for (int i = 0; i < 1000; ++i) {
    Result<Kernel> hit = compile_transfer(spec, i % 2 == 0 ? options : family);
    ASSERT_TRUE(hit.ok());
  }
  EXPECT_EQ(t_allocations, before);
  EXPECT_EQ(cache_stats().hits, 1000u);
  EXPECT_EQ(cache_stats().misses, 2u);
  // The counter does see allocations: a new spec object pays its fingerprint once.
  const TransferSpec fresh = seed();
  const size_t built = t_allocations;
  ASSERT_TRUE(compile_transfer(fresh, options).ok());
  EXPECT_GT(t_allocations, built);
  EXPECT_EQ(cache_stats().misses, 2u);
}

TEST_F(CompileTransfer, TwoSpellingsShareOneEntry) {
  const TransferSpec a = seed(), b = seed_respelled();
  ASSERT_FALSE(a == b);
  Result<Kernel> first = compile_transfer(a);
  ASSERT_TRUE(first.ok()) << first.error().full_text();
  Result<Kernel> second = compile_transfer(b);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->cubin().data(), first->cubin().data());
  const CacheStats stats = cache_stats();
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(disk_cache_usage()->entries, 1u);
}

TEST_F(CompileTransfer, SixteenThreadsCompileEachKeyOnce) {
  constexpr int kThreads = 16;
  const std::vector<Job> jobs = distinct_jobs(200);
  ASSERT_EQ(jobs.size(), 200u);
  // One handle per job and thread: every thread must end up with the same module per key.
  std::vector<std::vector<const char*>> seen(kThreads, std::vector<const char*>(jobs.size()));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (size_t n = 0; n < jobs.size(); ++n) {
        const size_t i = (n * 7 + static_cast<size_t>(t) * 13) % jobs.size();
        Result<Kernel> kernel = compile_transfer(jobs[i].spec, {}, jobs[i].kind);
        if (!kernel.ok()) {
          failures.fetch_add(1);
          continue;
        }
        seen[t][i] = kernel->cubin().data();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_EQ(failures.load(), 0);
  for (size_t i = 0; i < jobs.size(); ++i)
    for (int t = 1; t < kThreads; ++t)
      ASSERT_EQ(seen[t][i], seen[0][i]) << "job " << i << " thread " << t;
  const CacheStats stats = cache_stats();
  EXPECT_EQ(stats.misses, jobs.size());  // one compile per key
  EXPECT_EQ(stats.hits, jobs.size() * (kThreads - 1));
  EXPECT_EQ(stats.disk_hits, 0u);
  EXPECT_EQ(stats.disk_writes, jobs.size());
  EXPECT_EQ(stats.entries, jobs.size());
}

// Issue 9: 16 threads x 1000 calls mixing first compiles, hits and a spec that fails its check,
// the shape scripts/sanitize.sh runs under ThreadSanitizer. Every valid call gets the one module of
// its key, every invalid one the same rule error, and nothing invalid reaches the cache.
TEST_F(CompileTransfer, SixteenThreadsMixHitsMissesAndInvalidSpecs) {
  constexpr int kThreads = 16, kCalls = 1000;
  const std::vector<Job> jobs = distinct_jobs(24);
  ASSERT_EQ(jobs.size(), 24u);
  auto bad =
      tmemjit_test::identity_spec(Opcode::make(Direction::kLoad, Shape::k32x32b, 2, false).value());
  bad.op = "tcgen05.ld.sync.aligned.32x32b.x4.b32";  // views of x2 under an x4 opcode
  const TransferSpec invalid = bad.make();
  std::vector<std::vector<const char*>> seen(kThreads, std::vector<const char*>(jobs.size()));
  std::atomic<int> failures{0}, rejected{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int n = 0; n < kCalls; ++n) {
        if ((n + t) % 16 == 0) {
          Result<Kernel> kernel = compile_transfer(invalid);
          if (!kernel.ok() && kernel.error().code() == ErrorCode::kRule)
            rejected.fetch_add(1);
          else
            failures.fetch_add(1);
          continue;
        }
        const size_t i = (static_cast<size_t>(n) * 7 + static_cast<size_t>(t) * 13) % jobs.size();
        Result<Kernel> kernel = compile_transfer(jobs[i].spec, {}, jobs[i].kind);
        if (!kernel.ok()) {
          failures.fetch_add(1);
          continue;
        }
        if (seen[t][i] == nullptr)
          seen[t][i] = kernel->cubin().data();
        else if (seen[t][i] != kernel->cubin().data())
          failures.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  int expected_rejections = 0;
  for (int t = 0; t < kThreads; ++t)
    for (int n = 0; n < kCalls; ++n) expected_rejections += (n + t) % 16 == 0;
  EXPECT_EQ(rejected.load(), expected_rejections);
  for (size_t i = 0; i < jobs.size(); ++i)
    for (int t = 1; t < kThreads; ++t)
      if (seen[t][i] && seen[0][i]) {
        ASSERT_EQ(seen[t][i], seen[0][i]) << "job " << i << " thread " << t;
      }
  const CacheStats stats = cache_stats();
  EXPECT_EQ(stats.entries, jobs.size());  // the invalid spec left nothing behind
  EXPECT_EQ(stats.disk_writes, jobs.size());
  EXPECT_GE(stats.misses, jobs.size());
}

TEST_F(CompileTransfer, CorruptAndTruncatedEntriesAreRecompiledAndReplaced) {
  const TransferSpec spec = seed();
  ASSERT_TRUE(compile_transfer(spec).ok());
  const fs::path path = entry_path(spec);
  const std::string good = read_file(path);
  ASSERT_GT(good.size(), kDiskHeaderBytes + 100);
  const Key128 key = transfer_cache_key(spec, {}, KernelKind::kRoundtrip).value();

  std::string corrupt = good;
  corrupt[good.size() / 2] =
      static_cast<char>(corrupt[good.size() / 2] ^ 0x5a);  // inside the cubin
  const std::string truncated = good.substr(0, good.size() - 7);
  for (const std::string& bad : {corrupt, truncated}) {
    write_file(path, bad);
    ASSERT_TRUE(clear_cache(false).ok());
    reset_cache_stats();
    CompileReport report;
    Result<Kernel> kernel = compile_transfer(spec, {}, KernelKind::kRoundtrip, &report);
    ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
    EXPECT_EQ(report.cache, CacheSource::kCompiled);
    EXPECT_EQ(cache_stats().misses, 1u);
    EXPECT_EQ(cache_stats().disk_writes, 1u);
    const std::string replaced = read_file(path);
    EXPECT_TRUE(decode_entry(key, replaced).ok());
    EXPECT_EQ(replaced.size(), good.size());
  }
  // The replacement is a valid entry: a later process (here: memory dropped) hits it.
  ASSERT_TRUE(clear_cache(false).ok());
  CompileReport report;
  ASSERT_TRUE(compile_transfer(spec, {}, KernelKind::kRoundtrip, &report).ok());
  EXPECT_EQ(report.cache, CacheSource::kDisk);
}

// A cache root no one can create (below a regular file): works from memory, warns once.
// Issue 9: an entry file replaced by a whole, valid entry of another key (a copy gone wrong, a
// hash collision in the file name) is a miss for this key, never the other kernel.
TEST_F(CompileTransfer, AnEntryOfAnotherKeyIsNotServed) {
  const TransferSpec spec = seed();
  const TransferSpec other = tmemjit_test::seed_pack(true).make();
  Result<Kernel> own = compile_transfer(spec);
  Result<Kernel> foreign = compile_transfer(other);
  ASSERT_TRUE(own.ok() && foreign.ok());
  const std::vector<char> own_cubin(own->cubin().begin(), own->cubin().end());
  ASSERT_NE(std::vector<char>(foreign->cubin().begin(), foreign->cubin().end()), own_cubin);
  const fs::path path = entry_path(spec);
  write_file(path, read_file(entry_path(other)));  // a valid entry, for the other key
  ASSERT_TRUE(clear_cache(false).ok());
  reset_cache_stats();
  CompileReport report;
  Result<Kernel> kernel = compile_transfer(spec, {}, KernelKind::kRoundtrip, &report);
  ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
  EXPECT_EQ(report.cache, CacheSource::kCompiled);
  EXPECT_EQ(std::vector<char>(kernel->cubin().begin(), kernel->cubin().end()), own_cubin);
  EXPECT_TRUE(
      decode_entry(transfer_cache_key(spec, {}, KernelKind::kRoundtrip).value(), read_file(path))
          .ok());
}

TEST_F(CompileTransfer, UnwritableCacheDirectoryWorksWithOneWarning) {
  write_file(dir_.path() / "a-file", "not a directory");
  use_dir(dir_.path() / "a-file" / "cache");
  DiskCache::reset_warning_for_testing();
  ::testing::internal::CaptureStderr();
  const std::vector<Job> jobs = distinct_jobs(3);
  for (int round = 0; round < 2; ++round)
    for (const Job& job : jobs) {
      Result<Kernel> kernel = compile_transfer(job.spec, {}, job.kind);
      EXPECT_TRUE(kernel.ok()) << kernel.error().full_text();
    }
  const std::string warnings = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(count_of(warnings, "warning:"), 1u) << warnings;
  const CacheStats stats = cache_stats();
  EXPECT_EQ(stats.misses, 3u);
  EXPECT_EQ(stats.hits, 3u);
  EXPECT_EQ(stats.disk_writes, 0u);
}

TEST_F(CompileTransfer, CacheOffCompilesEveryCallAndWritesNothing) {
  CacheOptions off = cache_options();
  off.enabled = false;
  set_cache_options(off);
  const TransferSpec spec = seed();
  Result<Kernel> first = compile_transfer(spec);
  ASSERT_TRUE(first.ok());
  Result<Kernel> second = compile_transfer(spec);
  ASSERT_TRUE(second.ok());
  EXPECT_NE(first->cubin().data(), second->cubin().data());
  EXPECT_EQ(cache_stats().misses, 2u);
  EXPECT_EQ(cache_stats().hits, 0u);
  EXPECT_TRUE(fs::is_empty(dir_.path()));
  // Back on: the handles of the off period were not kept.
  use_dir(dir_.path());
  ASSERT_TRUE(compile_transfer(spec).ok());
  EXPECT_EQ(cache_stats().misses, 1u);
}

TEST_F(CompileTransfer, ErrorsAreNotCached) {
  tmemjit_test::SpecText text =
      tmemjit_test::identity_spec(Opcode::parse("tcgen05.st.sync.aligned.32x32b.x4.b32").value());
  text.tmem = "tensor((4,32,4), S[(4,32,4):(32@TLane,1@TLane,2@TCol)], b32)";  // column stride 2
  const TransferSpec bad = text.make();
  for (int i = 0; i < 2; ++i) {
    Result<Kernel> kernel = compile_transfer(bad);
    ASSERT_FALSE(kernel.ok());
    EXPECT_EQ(kernel.error().code(), ErrorCode::kRule);
    EXPECT_EQ(kernel.error().rule(), tmem::Rule::kPlacement) << kernel.error().message();
  }
  EXPECT_EQ(cache_stats().misses, 2u);
  EXPECT_EQ(cache_stats().entries, 0u);
  EXPECT_EQ(disk_cache_usage()->entries, 0u);

  CompileOptions nvrtc;
  nvrtc.backend = Backend::kNvrtc;
  Result<Kernel> kernel = compile_transfer(seed(), nvrtc);
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.error().code(), ErrorCode::kUsage);
}

TEST_F(CompileTransfer, KindsAndTargetsAreSeparateEntries) {
  const TransferSpec spec = seed();
  CompileOptions family;
  family.target = Target::kSm100f;
  Result<Kernel> store = compile_transfer(spec, {}, KernelKind::kStore);
  Result<Kernel> roundtrip = compile_transfer(spec);
  Result<Kernel> other_target = compile_transfer(spec, family);
  ASSERT_TRUE(store.ok() && roundtrip.ok() && other_target.ok());
  EXPECT_EQ(store->name(), "tmem_store");
  EXPECT_EQ(other_target->target(), Target::kSm100f);
  EXPECT_NE(other_target->ptx(), roundtrip->ptx());
  EXPECT_EQ(cache_stats().misses, 3u);
  EXPECT_EQ(disk_cache_usage()->entries, 3u);
}

// Target::kSm90 is the emulated harness kernel (what the emu executor runs): the PTX transfer_ptx
// gives, no tcgen05 left, and the list its status codes name, kept with the entry so a disk hit
// (another process) decodes a violation as the compile did.
TEST_F(CompileTransfer, Sm90CompilesTheEmulatedHarnessAndKeepsWhatItsStatusCodesName) {
  const TransferSpec spec = seed();
  CompileOptions options;
  options.target = Target::kSm90;
  CompileReport report;
  std::vector<kernels::EmulatedInstruction> compiled;
  Result<Kernel> kernel =
      compile_transfer_reported(spec, options, KernelKind::kRoundtrip, &report, &compiled);
  ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
  EXPECT_EQ(kernel->target(), Target::kSm90);
  EXPECT_EQ(std::string(kernel->ptx()),
            transfer_ptx(spec, KernelKind::kRoundtrip, Target::kSm90).value());
  EXPECT_NE(kernel->ptx().find(".target sm_90\n"), std::string_view::npos);
  EXPECT_NE(kernel->ptx().find(kernels::kEmuParam), std::string_view::npos);
  ASSERT_FALSE(compiled.empty());
  EXPECT_TRUE(compiled.front().text.starts_with("tcgen05.st")) << compiled.front().text;
  EXPECT_GT(report.code.instructions, 0);

  // Memory dropped, disk kept (as another process sees it): the entry read from disk.
  ASSERT_TRUE(clear_cache(false).ok());
  CompileReport from_disk;
  std::vector<kernels::EmulatedInstruction> read;
  ASSERT_TRUE(
      compile_transfer_reported(spec, options, KernelKind::kRoundtrip, &from_disk, &read).ok());
  EXPECT_EQ(from_disk.cache, CacheSource::kDisk);
  ASSERT_EQ(read.size(), compiled.size());
  for (size_t i = 0; i < compiled.size(); ++i) {
    EXPECT_EQ(read[i].text, compiled[i].text);
    EXPECT_EQ(read[i].body_index, compiled[i].body_index);
    EXPECT_EQ(read[i].alloc_columns, compiled[i].alloc_columns);
  }
  EXPECT_EQ(from_disk.code, report.code);
}

// Entry metadata is typed JSON (runtime/jit/entry_meta.h): an entry whose metadata is the old
// free text, another format or compile_kernel's kind is never parsed as whatever is there. It is
// a miss: compiled again, put in its place on disk, with a warning naming why (issue 39).
TEST_F(CompileTransfer, MetadataThatDoesNotParseIsCompiledAgainWithAWarning) {
  const TransferSpec spec = seed();
  const Key128 key = transfer_cache_key(spec, {}, KernelKind::kRoundtrip).value();
  KernelEntryMeta kernel_meta;
  kernel_meta.entry = "tmem_roundtrip";
  for (const std::string& meta :
       {std::string("entry=tmem_roundtrip\nbackend=ptxas\ntarget=sm_100a\nlog:\n"),
        std::string("{\"format\": 1, \"kind\": \"transfer\"}"), kernel_meta.to_json()}) {
    SCOPED_TRACE(meta);
    ASSERT_TRUE(clear_cache(true).ok());
    ASSERT_TRUE(testing::plant_entry(key, meta));
    CompileReport report;
    ::testing::internal::CaptureStderr();
    Result<Kernel> kernel = compile_transfer(spec, {}, KernelKind::kRoundtrip, &report);
    const std::string err = ::testing::internal::GetCapturedStderr();
    ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
    EXPECT_EQ(report.cache, CacheSource::kCompiled);
    EXPECT_NE(err.find("unusable metadata (cache entry metadata is damaged"), std::string::npos)
        << err;
    EXPECT_NE(kernel->ptx().find("tcgen05.st"), std::string_view::npos);
    // The replacement is on disk: another process (memory dropped) reads a good entry.
    ASSERT_TRUE(clear_cache(false).ok());
    CompileReport again;
    ASSERT_TRUE(compile_transfer(spec, {}, KernelKind::kRoundtrip, &again).ok());
    EXPECT_EQ(again.cache, CacheSource::kDisk);
  }
  ASSERT_TRUE(clear_cache(true).ok());
}

TEST_F(CompileTransfer, WarmupCompilesEachKeyOnceThenEverythingHits) {
  std::vector<TransferSpec> specs;
  for (const Job& job : distinct_jobs(12))
    if (job.kind == KernelKind::kRoundtrip) specs.push_back(job.spec);
  const size_t distinct = specs.size();
  ASSERT_GE(distinct, 10u);
  specs.push_back(specs[0]);  // a duplicate
  specs.push_back(seed());
  specs.push_back(seed_respelled());  // equal in meaning to the one before
  ASSERT_TRUE(warmup(specs).ok());
  EXPECT_EQ(cache_stats().misses, distinct + 1);
  EXPECT_EQ(cache_stats().hits, 2u);
  reset_cache_stats();
  for (const TransferSpec& spec : specs) ASSERT_TRUE(compile_transfer(spec).ok());
  EXPECT_EQ(cache_stats().hits, specs.size());
  EXPECT_EQ(cache_stats().misses, 0u);
  EXPECT_TRUE(warmup({}).ok());
}

TEST_F(CompileTransfer, WarmupNamesTheFirstFailingSpec) {
  tmemjit_test::SpecText text =
      tmemjit_test::identity_spec(Opcode::parse("tcgen05.st.sync.aligned.32x32b.x4.b32").value());
  text.tmem = "tensor((4,32,4), S[(4,32,4):(32@TLane,1@TLane,2@TCol)], b32)";
  const TransferSpec bad = text.make();
  std::vector<TransferSpec> specs = {seed(), seed(), bad, seed(), bad};
  Status status = warmup(specs);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code(), ErrorCode::kRule);
  const std::string& message = status.error().message();
  EXPECT_TRUE(message.starts_with(
      "warmup: spec 2 of 5 (tcgen05.st.sync.aligned.32x32b.x4.b32 at warpgroup): placement"))
      << message;
  EXPECT_NE(message.find("(1 more specs failed)"), std::string::npos) << message;
  EXPECT_NE(status.error().details().find("tmem: tensor((4,32,4)"), std::string::npos)
      << status.error().details();
  // The good spec was still compiled.
  reset_cache_stats();
  ASSERT_TRUE(compile_transfer(seed()).ok());
  EXPECT_EQ(cache_stats().hits, 1u);

  CompileOptions nvrtc;
  nvrtc.backend = Backend::kNvrtc;
  status = warmup(specs, nvrtc);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code(), ErrorCode::kUsage);
}

// warmup_each: each item with options and a kind of its own, one outcome per item in order, the
// progress told once per item (one call at a time, done counting up to the total), on the number
// of threads asked for.
TEST_F(CompileTransfer, WarmupEachCompilesItemsWithTheirOwnOptionsAndTellsProgress) {
  tmemjit_test::SpecText text =
      tmemjit_test::identity_spec(Opcode::parse("tcgen05.st.sync.aligned.32x32b.x4.b32").value());
  text.tmem = "tensor((4,32,4), S[(4,32,4):(32@TLane,1@TLane,2@TCol)], b32)";
  CompileOptions sm90;
  sm90.target = Target::kSm90;
  CompileOptions nvrtc;
  nvrtc.backend = Backend::kNvrtc;
  const std::vector<WarmupItem> items = {{seed(), {}, KernelKind::kRoundtrip},
                                         {seed(), sm90, KernelKind::kStore},
                                         {text.make(), {}, KernelKind::kRoundtrip},
                                         {seed(), nvrtc, KernelKind::kRoundtrip}};
  std::vector<size_t> told;
  std::atomic<int> inside{0};
  bool overlapped = false;
  const std::vector<Status> outcomes =
      warmup_each(items, /*jobs=*/3, [&](size_t done, size_t total) {
        overlapped = overlapped || inside.fetch_add(1) != 0;
        EXPECT_EQ(total, items.size());
        told.push_back(done);
        inside.fetch_sub(1);
      });
  ASSERT_EQ(outcomes.size(), items.size());
  EXPECT_TRUE(outcomes[0].ok()) << outcomes[0].error().full_text();
  EXPECT_TRUE(outcomes[1].ok()) << outcomes[1].error().full_text();
  ASSERT_FALSE(outcomes[2].ok());
  EXPECT_EQ(outcomes[2].error().code(), ErrorCode::kRule);
  ASSERT_FALSE(outcomes[3].ok());
  EXPECT_EQ(outcomes[3].error().code(), ErrorCode::kUsage);
  EXPECT_EQ(told, (std::vector<size_t>{1, 2, 3, 4}));
  EXPECT_FALSE(overlapped);
  // Each item's own key: the sm_90 store kernel is its own entry, beside the sm_100a roundtrip.
  reset_cache_stats();
  ASSERT_TRUE(compile_transfer(seed(), sm90, KernelKind::kStore).ok());
  ASSERT_TRUE(compile_transfer(seed()).ok());
  EXPECT_EQ(cache_stats().hits, 2u);
  EXPECT_EQ(cache_stats().misses, 0u);
  EXPECT_TRUE(warmup_each({}).empty());
}

TEST_F(CompileTransfer, WithoutADriverCompilesAndLoadFailsClearly) {
  if (void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    ::dlclose(driver);
    GTEST_SKIP()
        << "a CUDA driver (libcuda.so.1) is installed here; this test needs a machine without one";
  }
  Result<Kernel> kernel = compile_transfer(seed());
  ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
  EXPECT_FALSE(kernel->cubin().empty());
  const Status loaded = kernel->load();
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().code(), ErrorCode::kDriver);
  EXPECT_TRUE(
      loaded.error().message().starts_with("no CUDA driver: libcuda.so.1 could not be loaded"))
      << loaded.error().message();
  EXPECT_FALSE(kernel->loaded());
  void* args[] = {nullptr};
  const Status launched = kernel->launch(LaunchConfig{}, args);
  ASSERT_FALSE(launched.ok());
  EXPECT_EQ(launched.error().code(), ErrorCode::kDriver);
  // Still cached: compile-only use keeps working.
  ASSERT_TRUE(compile_transfer(seed()).ok());
  EXPECT_EQ(cache_stats().hits, 1u);
}

}  // namespace
}  // namespace tmem
