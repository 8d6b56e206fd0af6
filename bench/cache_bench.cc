// Cost of compile_transfer on the seed's Layout B round trip: a memory hit on a prebuilt spec
// against a bare XXH3-128 + unordered_map lookup, a hit on a new spec object, a disk hit and a cold
// compile, in this process and in a fresh one (docs/design.md §Tests: ratios against baselines
// measured in the same run; speed goals live here, never in unit tests).
#include <benchmark/benchmark.h>
#include <stdio.h>
#include <stdlib.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <unordered_map>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bench/bench_util.h"
#include "runtime/jit/compile_transfer.h"
#include "tmem/cache.h"
#include "tmem/jit.h"
#include "tmem/transfer.h"

namespace {

// The benchmarks share one cache directory, made fresh for this run and removed at exit.
std::string& bench_dir() {
  static std::string dir = [] {
    std::string pattern = "/tmp/tmemjit-cache-bench-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) return std::string();
    return pattern;
  }();
  return dir;
}

void use_bench_dir() {
  tmem::CacheOptions options = tmem::cache_options();
  options.enabled = true;
  options.disk = true;
  options.dir = bench_dir();
  tmem::set_cache_options(options);
}

void BM_CompileTransferMemoryHit(benchmark::State& state) {
  use_bench_dir();
  const tmem::TransferSpec spec = tmem::bench::seed_spec();
  if (!tmem::compile_transfer(spec).ok()) return state.SkipWithError("compile failed");
  for (auto _ : state) benchmark::DoNotOptimize(tmem::compile_transfer(spec));
}
BENCHMARK(BM_CompileTransferMemoryHit)->ThreadRange(1, 2);

// The baseline: XXH3-128 of the spec's canonical text, one unordered_map lookup and a shared_ptr
// copy, the least a string-keyed cache must do per call.
void BM_BareXxh3MapLookup(benchmark::State& state) {
  struct Hash128 {
    size_t operator()(const XXH128_hash_t& h) const noexcept {
      return static_cast<size_t>(h.low64);
    }
  };
  struct Eq128 {
    bool operator()(const XXH128_hash_t& a, const XXH128_hash_t& b) const noexcept {
      return XXH128_isEqual(a, b) != 0;
    }
  };
  // Arg 0: the spec's canonical text as the key; arg 1: a 56-byte record, the size of
  // compile_transfer's key record (which it hashes on a miss only).
  const std::string text =
      state.range(0) == 0 ? tmem::bench::seed_spec().to_string() : std::string(56, 'k');
  std::unordered_map<XXH128_hash_t, std::shared_ptr<const std::string>, Hash128, Eq128> map;
  for (int i = 0; i < 64; ++i) {
    const std::string other = text + std::to_string(i);
    map.emplace(XXH3_128bits(other.data(), other.size()),
                std::make_shared<const std::string>(other));
  }
  map.emplace(XXH3_128bits(text.data(), text.size()), std::make_shared<const std::string>(text));
  for (auto _ : state) {
    const auto it = map.find(XXH3_128bits(text.data(), text.size()));
    std::shared_ptr<const std::string> value = it->second;
    benchmark::DoNotOptimize(value);
  }
  state.counters["key_bytes"] = static_cast<double>(text.size());
}
BENCHMARK(BM_BareXxh3MapLookup)->Arg(0)->Arg(1);

// A hit on a spec object built for this call (views copied, fingerprint computed once more).
void BM_CompileTransferHitNewSpecObject(benchmark::State& state) {
  use_bench_dir();
  const tmem::TransferSpec spec = tmem::bench::seed_spec();
  if (!tmem::compile_transfer(spec).ok()) return state.SkipWithError("compile failed");
  for (auto _ : state) {
    const tmem::TransferSpec fresh =
        tmem::TransferSpec::make(spec.op(), spec.scope(), spec.tmem(), spec.regs()).value();
    benchmark::DoNotOptimize(tmem::compile_transfer(fresh));
  }
}
BENCHMARK(BM_CompileTransferHitNewSpecObject)->Unit(benchmark::kMicrosecond);

// Memory dropped before each call: one entry file read and validated.
void BM_CompileTransferDiskHit(benchmark::State& state) {
  use_bench_dir();
  const tmem::TransferSpec spec = tmem::bench::seed_spec();
  if (!tmem::compile_transfer(spec).ok()) return state.SkipWithError("compile failed");
  for (auto _ : state) {
    state.PauseTiming();
    (void)tmem::clear_cache(false);
    state.ResumeTiming();
    benchmark::DoNotOptimize(tmem::compile_transfer(spec));
  }
}
BENCHMARK(BM_CompileTransferDiskHit)->Unit(benchmark::kMicrosecond);

// The cache off: check, build, print and the compiler on every call.
void BM_CompileTransferCold(benchmark::State& state) {
  tmem::CacheOptions options = tmem::cache_options();
  options.enabled = false;
  tmem::set_cache_options(options);
  const tmem::TransferSpec spec = tmem::bench::seed_spec();
  for (auto _ : state) benchmark::DoNotOptimize(tmem::compile_transfer(spec));
  use_bench_dir();
}
BENCHMARK(BM_CompileTransferCold)->Unit(benchmark::kMillisecond);

// The first compile_transfer of a fresh process (this binary run with --child): everything a new
// process pays once (compiler version, cache directory, dlopen'ed state) plus a disk hit, or plus a
// cold compile with the cache off. The child reports its own timing; process start-up is excluded.
std::string self_path() {
  char path[4096];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : std::string();
}

double run_child(const std::string& mode) {
  const std::string command = "'" + self_path() + "' --child " + mode + " '" + bench_dir() + "'";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return -1;
  double ns = -1;
  if (std::fscanf(pipe, "%lf", &ns) != 1) ns = -1;
  return ::pclose(pipe) == 0 ? ns : -1;
}

void fresh_process(benchmark::State& state, const char* mode) {
  use_bench_dir();
  if (!tmem::compile_transfer(tmem::bench::seed_spec()).ok())
    return state.SkipWithError("compile failed");
  for (auto _ : state) {
    const double ns = run_child(mode);
    if (ns < 0) return state.SkipWithError("the child process failed");
    state.SetIterationTime(ns / 1e9);
  }
}
void BM_FreshProcessDiskHit(benchmark::State& state) { fresh_process(state, "disk"); }
void BM_FreshProcessColdCompile(benchmark::State& state) { fresh_process(state, "cold"); }
BENCHMARK(BM_FreshProcessDiskHit)->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(20);
BENCHMARK(BM_FreshProcessColdCompile)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(10);

int child(const char* mode, const char* dir) {
  const tmem::TransferSpec spec = tmem::bench::seed_spec();
  tmem::CacheOptions options = tmem::cache_options();
  options.enabled = std::strcmp(mode, "disk") == 0;
  options.disk = true;
  options.dir = dir;
  tmem::set_cache_options(options);
  const auto start = std::chrono::steady_clock::now();
  tmem::CompileReport report;
  const bool ok = tmem::compile_transfer(spec, {}, tmem::KernelKind::kRoundtrip, &report).ok();
  const double ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  const bool expected =
      options.enabled ? report.cache == tmem::CacheSource::kDisk : !report.cache_enabled;
  if (!ok || !expected) return 1;
  std::printf("%.0f\n", ns);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--child") == 0) return child(argv[2], argv[3]);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::error_code ignored;
  if (!bench_dir().empty()) std::filesystem::remove_all(bench_dir(), ignored);
  return 0;
}
