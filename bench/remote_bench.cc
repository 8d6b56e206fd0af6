// The remote cache tier on the seed's Layout B round trip: the first compile_transfer of a fresh
// process answered by a Redis server (a real redis-server on loopback, started here) against a
// cold compile and a disk hit in a fresh process, and a remote hit in a warm process
// (docs/design.md §Tests: ratios against baselines measured in the same run; target: remote hit >=
// 50x faster than cold).
#include <benchmark/benchmark.h>
#include <stdio.h>
#include <stdlib.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>

#include "bench/bench_util.h"
#include "runtime/jit/compile_transfer.h"
#include "tests/cache/redis_server.h"
#include "tmem/cache.h"
#include "tmem/jit.h"
#include "tmem/transfer.h"

namespace {

tmem::testing::RedisServer& server() {
  static tmem::testing::RedisServer instance;
  return instance;
}
std::string& server_error() {
  static std::string why;
  return why;
}
bool server_up() {
  static const bool up = server().start(&server_error());
  return up;
}

// A fresh directory per use, removed at exit with the rest of `root()`.
std::filesystem::path& root() {
  static std::filesystem::path dir = [] {
    std::string pattern = "/tmp/tmemjit-remote-bench-XXXXXX";
    return std::filesystem::path(::mkdtemp(pattern.data()) != nullptr ? pattern : "");
  }();
  return dir;
}
std::string fresh_dir() {
  static int next = 0;
  const std::filesystem::path dir = root() / ("c" + std::to_string(next++));
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string self_path() {
  char path[4096];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : std::string();
}

// Runs this binary with --child MODE DIR URL; the child prints the ns of its first call.
double run_child(const char* mode, const std::string& dir) {
  const std::string url = server_up() ? server().url() : std::string("-");
  const std::string command =
      "'" + self_path() + "' --child " + mode + " '" + dir + "' '" + url + "'";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return -1;
  double ns = -1;
  if (std::fscanf(pipe, "%lf", &ns) != 1) ns = -1;
  return ::pclose(pipe) == 0 ? ns : -1;
}

// Fills the server (through a first process with its own directory) so that children hit it.
bool seed_server() {
  static const bool seeded = run_child("cold-remote", fresh_dir()) >= 0;
  return seeded;
}

// Removes the entry files under `dir`, keeping its directories.
void remove_entries(const std::string& dir) {
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
    if (it->path().extension() == ".bin") std::filesystem::remove(it->path(), ec);
}

// The entry is fetched, checked and written to the disk cache. Arg 0: a disk cache that has its
// directories but not this entry (a machine of the fleet meeting a new kernel); arg 1: a new, empty
// cache directory every time (a machine's very first call: the version and shard directories are
// created too).
void BM_FreshProcessRemoteHit(benchmark::State& state) {
  if (!server_up()) return state.SkipWithError(server_error().c_str());
  if (!seed_server()) return state.SkipWithError("seeding the server failed");
  const std::string kept = fresh_dir();
  for (auto _ : state) {
    remove_entries(kept);
    const double ns = run_child("remote", state.range(0) == 0 ? kept : fresh_dir());
    if (ns < 0) return state.SkipWithError("the child process failed");
    state.SetIterationTime(ns / 1e9);
  }
}
BENCHMARK(BM_FreshProcessRemoteHit)
    ->Arg(0)
    ->Arg(1)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->Iterations(20);

void BM_FreshProcessDiskHit(benchmark::State& state) {
  const std::string dir = fresh_dir();
  if (run_child("fill-disk", dir) < 0) return state.SkipWithError("filling the disk failed");
  for (auto _ : state) {
    const double ns = run_child("disk", dir);
    if (ns < 0) return state.SkipWithError("the child process failed");
    state.SetIterationTime(ns / 1e9);
  }
}
BENCHMARK(BM_FreshProcessDiskHit)->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(20);

void BM_FreshProcessColdCompile(benchmark::State& state) {
  for (auto _ : state) {
    const double ns = run_child("cold", fresh_dir());
    if (ns < 0) return state.SkipWithError("the child process failed");
    state.SetIterationTime(ns / 1e9);
  }
}
BENCHMARK(BM_FreshProcessColdCompile)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(10);

// In one process: memory dropped, no disk, the entry fetched (GET, decode, checksums) each time.
void BM_WarmProcessRemoteHit(benchmark::State& state) {
  if (!server_up()) return state.SkipWithError(server_error().c_str());
  if (!seed_server()) return state.SkipWithError("seeding the server failed");
  tmem::CacheOptions options = tmem::cache_options();
  options.enabled = true;
  options.disk = false;
  options.remote = server().url();
  tmem::set_cache_options(options);
  const tmem::TransferSpec spec = tmem::bench::seed_spec();
  for (auto _ : state) {
    state.PauseTiming();
    (void)tmem::clear_cache(false);
    state.ResumeTiming();
    benchmark::DoNotOptimize(tmem::compile_transfer(spec));
  }
  if (tmem::cache_stats().remote_hits == 0) state.SkipWithError("no remote hit");
}
BENCHMARK(BM_WarmProcessRemoteHit)->Unit(benchmark::kMicrosecond);

// The child: one compile_transfer, timed from inside (process start-up and dynamic loading
// excluded; the compiler version query, the connection, the entry read and, for a remote hit, its
// write to the disk cache included).
int child(const char* mode, const char* dir, const char* url) {
  const tmem::TransferSpec spec = tmem::bench::seed_spec();
  tmem::CacheOptions options = tmem::cache_options();
  const bool remote = std::strcmp(mode, "remote") == 0 || std::strcmp(mode, "cold-remote") == 0;
  options.enabled = std::strcmp(mode, "cold") != 0;
  options.disk = true;
  options.dir = dir;
  options.remote = remote ? url : "";
  tmem::set_cache_options(options);
  const auto start = std::chrono::steady_clock::now();
  tmem::CompileReport report;
  const bool ok = tmem::compile_transfer(spec, {}, tmem::KernelKind::kRoundtrip, &report).ok();
  const double ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  using tmem::CacheSource;
  const CacheSource expected = std::strcmp(mode, "remote") == 0 ? CacheSource::kRemote
                               : std::strcmp(mode, "disk") == 0 ? CacheSource::kDisk
                                                                : CacheSource::kCompiled;
  // "cold" runs with the cache off; "cold-remote" compiles with it on.
  const bool cached = std::strcmp(mode, "cold") != 0;
  if (!ok || report.cache != expected || report.cache_enabled != cached) return 1;
  std::printf("%.0f\n", ns);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::strcmp(argv[1], "--child") == 0) return child(argv[2], argv[3], argv[4]);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  server().stop();
  std::error_code ignored;
  if (!root().empty()) std::filesystem::remove_all(root(), ignored);
  return 0;
}
