// Cost of the include closure (runtime/compile/include_closure.h) of a CuTe kernel, whose
// `#include <cute/tensor.hpp>` reaches several hundred headers: a memory hit vouched for by inotify
// (no stat), the same hit validated by the stat path (a stat per file and per searched directory,
// as with TMEMJIT_INCLUDE_WATCH=0), bare stats of the same files, a new source over remembered
// headers, and a cold scan (docs/design.md §Tests: baselines measured in the same run). CuTe's
// headers: $TMEMJIT_CUTE_INCLUDE, else the directory cmake/TmemjitCute.cmake found; without them
// every row is skipped.
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/compile/include_closure.h"

namespace {

constexpr const char* kNoCute =
    "no CuTe headers: set TMEMJIT_CUTE_INCLUDE or TMEMJIT_CUTLASS_DIR, or pip install "
    "nvidia-cutlass";

std::string cute_include() {
  const char* env = std::getenv("TMEMJIT_CUTE_INCLUDE");
  if (env != nullptr && *env != '\0') return env;
#ifdef TMEMJIT_CUTE_INCLUDE_DIR
  return TMEMJIT_CUTE_INCLUDE_DIR;
#else
  return {};
#endif
}

// CuTe's directory, then the toolkit's include directories (CMake passes them ':'-separated; CUDA
// 13 keeps libcu++ under include/cccl), as compile_kernel would search them.
tmem::ClosureQuery cute_query(std::string_view source) {
  tmem::ClosureQuery query;
  query.source = source;
  query.source_path = "kernel.cu";
  query.include_dirs.push_back(cute_include());
#ifdef TMEMJIT_CUTE_CUDA_INCLUDES
  std::string list = TMEMJIT_CUTE_CUDA_INCLUDES;
#else
  std::string list = "/usr/local/cuda/include:/usr/local/cuda/include/cccl";
#endif
  for (size_t begin = 0; begin <= list.size();) {
    const size_t end = std::min(list.find(':', begin), list.size());
    if (end > begin) query.include_dirs.push_back(list.substr(begin, end - begin));
    begin = end + 1;
  }
  query.in_memory = {"tmemjit/transfers.cuh"};
  return query;
}

constexpr std::string_view kSource =
    "#include <cute/tensor.hpp>\n#include <tmemjit/transfers.cuh>\n__global__ void k() {}\n";

void report(benchmark::State& state, const tmem::IncludeClosure& closure) {
  state.counters["files"] = static_cast<double>(closure.files.size());
  state.counters["missing"] = static_cast<double>(closure.missing.size());
  state.counters["unresolved"] = static_cast<double>(closure.unresolved.size());
}

// The hit compile_kernel pays on every call: the process's cache, its watches vouching for the
// remembered closure (one read(2) of the inotify descriptor, no stat).
void BM_ClosureHit(benchmark::State& state) {
  if (cute_include().empty()) return state.SkipWithError(kNoCute);
  const tmem::ClosureQuery query = cute_query(kSource);
  tmem::IncludeClosureCache& cache = tmem::include_closure_cache();
  auto first = cache.closure(query);
  if (!first.ok()) return state.SkipWithError(first.error().message().c_str());
  (void)cache.closure(query);  // sets the watches and validates by stat once
  const auto before = cache.counters();
  for (auto _ : state) benchmark::DoNotOptimize(cache.closure(query));
  if (state.thread_index() == 0) report(state, **first);  // counters add up over threads
  // Every lookup must have been a hit answered from the watches: nothing changed during the run.
  if (state.threads() == 1) {
    const auto after = cache.counters();
    state.counters["scans_during_run"] = static_cast<double>(after.scans - before.scans);
    state.counters["stat_checked"] = static_cast<double>(
        static_cast<int64_t>(state.iterations()) - (after.watched_hits - before.watched_hits));
  }
}
BENCHMARK(BM_ClosureHit)->Unit(benchmark::kMicrosecond)->ThreadRange(1, 2);

// The same hit by the stat path alone (ChangeWatch::kOff, what TMEMJIT_INCLUDE_WATCH=0 gives): the
// remembered closure, every signature checked.
void BM_ClosureHitStatPath(benchmark::State& state) {
  if (cute_include().empty()) return state.SkipWithError(kNoCute);
  const tmem::ClosureQuery query = cute_query(kSource);
  static tmem::IncludeClosureCache cache(tmem::IncludeClosureCache::ChangeWatch::kOff);
  auto first = cache.closure(query);
  if (!first.ok()) return state.SkipWithError(first.error().message().c_str());
  const auto hits = cache.counters().hits;
  for (auto _ : state) benchmark::DoNotOptimize(cache.closure(query));
  if (state.thread_index() == 0) report(state, **first);
  // Every lookup must have been a hit: no racy file, nothing changed during the run.
  if (state.threads() == 1)
    state.counters["scans_during_run"] = static_cast<double>(
        static_cast<int64_t>(state.iterations()) - (cache.counters().hits - hits));
}
BENCHMARK(BM_ClosureHitStatPath)->Unit(benchmark::kMicrosecond)->ThreadRange(1, 2);

// A hit after an event on a directory the closure depends on that changed nothing it reads (a
// chmod to the same mode of an include directory's parent): the watches set again and every
// signature checked, what the first query after an unrelated change pays.
void BM_ClosureHitAfterAnEvent(benchmark::State& state) {
  if (cute_include().empty()) return state.SkipWithError(kNoCute);
  std::string parent = "/tmp/tmemjit-closure-bench-XXXXXX";
  if (::mkdtemp(parent.data()) == nullptr) return state.SkipWithError("mkdtemp failed");
  const std::string dir = parent + "/inc";  // searched first, empty
  ::mkdir(dir.c_str(), 0700);
  tmem::ClosureQuery query = cute_query(kSource);
  query.include_dirs.insert(query.include_dirs.begin(), dir);
  tmem::IncludeClosureCache cache;
  auto first = cache.closure(query);
  if (!first.ok()) return state.SkipWithError(first.error().message().c_str());
  (void)cache.closure(query);
  const auto before = cache.counters();
  for (auto _ : state) {
    ::chmod(parent.c_str(), 0700);
    benchmark::DoNotOptimize(cache.closure(query));
  }
  const auto after = cache.counters();
  state.counters["scans_during_run"] = static_cast<double>(after.scans - before.scans);
  state.counters["watched_hits"] = static_cast<double>(after.watched_hits - before.watched_hits);
  report(state, **first);
  ::rmdir(dir.c_str());
  ::rmdir(parent.c_str());
}
BENCHMARK(BM_ClosureHitAfterAnEvent)->Unit(benchmark::kMicrosecond);

// What a hit would cost statting each file by its whole path (a hit stats each relative to its
// directory, opened once), without the searched directories.
void BM_BareStatOfEachFile(benchmark::State& state) {
  if (cute_include().empty()) return state.SkipWithError(kNoCute);
  auto closure = tmem::scan_include_closure(cute_query(kSource));
  if (!closure.ok()) return state.SkipWithError(closure.error().message().c_str());
  for (auto _ : state) {
    int64_t bytes = 0;
    for (const std::string& file : closure->files) {
      struct stat st;
      if (::stat(file.c_str(), &st) == 0) bytes += st.st_size;
    }
    benchmark::DoNotOptimize(bytes);
  }
  report(state, *closure);
}
BENCHMARK(BM_BareStatOfEachFile)->Unit(benchmark::kMicrosecond);

// A source not seen before over headers already read: the resolution walk with a stat per probe,
// no file read (an autotuner's new variant of the same kernel).
void BM_ClosureNewSource(benchmark::State& state) {
  if (cute_include().empty()) return state.SkipWithError(kNoCute);
  tmem::IncludeClosureCache cache;
  std::string source(kSource);
  if (!cache.closure(cute_query(source)).ok()) return state.SkipWithError("scan failed");
  static std::atomic<int64_t> variant{0};
  for (auto _ : state) {
    source = std::string(kSource) + "// variant " + std::to_string(variant++) + "\n";
    benchmark::DoNotOptimize(cache.closure(cute_query(source)));
  }
  state.counters["files_read"] = static_cast<double>(cache.counters().files_read);
}
BENCHMARK(BM_ClosureNewSource)->Unit(benchmark::kMicrosecond);

// No cache: every header read and lexed (from the page cache).
void BM_ClosureColdScan(benchmark::State& state) {
  if (cute_include().empty()) return state.SkipWithError(kNoCute);
  const tmem::ClosureQuery query = cute_query(kSource);
  tmem::IncludeClosure last;
  for (auto _ : state) {
    auto closure = tmem::scan_include_closure(query);
    if (!closure.ok()) return state.SkipWithError(closure.error().message().c_str());
    last = std::move(*closure);
  }
  report(state, last);
}
BENCHMARK(BM_ClosureColdScan)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
