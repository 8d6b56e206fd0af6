// Cold JIT by route, libtmemjit's own overhead, warmup scaling and launch overhead, in one process
// (docs/design.md §Tests: ratios against baselines measured in the same run; bench/report.py builds
// the table and docs/benchmarks.md from this binary's JSON).
//
// Cold means uncached: every iteration of every route compiles a kernel whose entry name no
// compile before it used (bench_util.h unique_suffix), so no compiler cache (nvJitLink's and the
// driver's ~/.nv/ComputeCache included) can answer it. Each route's one-time initialisation
// (loading the compiler library) is paid once before timing; cache_bench's fresh-process rows show
// what a new process pays.
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_util.h"
#include "runtime/cache/payload.h"
#include "runtime/jit/kernel_impl.h"
#include "tmem/cache.h"
#include "tmem/jit.h"

namespace {

using tmem::Backend;
using tmem::CompileOptions;
using tmem::Result;
using tmemjit_test::SpecText;

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One input of the cold-JIT rows: a spec and its sizes.
struct Case {
  std::string name;  // "seed" or "32x32b.x16"
  SpecText text;
};

std::vector<Case> cases() {
  std::vector<Case> out{{"seed", tmem::bench::seed_text()}};
  for (int num : {1, 4, 16, 64, 128})
    out.push_back(
        {"32x32b.x" + std::to_string(num), tmem::bench::identity_store(tmem::Shape::k32x32b, num)});
  return out;
}

struct Inputs {
  tmem::Plan plan;
  std::string ptx;   // the harness round trip, entry tmem_roundtrip
  std::string cuda;  // its CUDA C++ twin, entry tmem_roundtrip
};

Result<Inputs> inputs_of(const SpecText& text) {
  Result<tmem::TransferSpec> spec = tmem::bench::parse_spec(text);
  if (!spec.ok()) return std::move(spec).error();
  Result<tmem::Plan> plan = tmem::check(*spec);
  if (!plan.ok()) return std::move(plan).error();
  Result<tmem::ptx::Module> module =
      tmem::kernels::build_kernel(*plan, tmem::KernelKind::kRoundtrip);
  if (!module.ok()) return std::move(module).error();
  Result<std::string> ptx = tmem::ptx::print(*module);
  if (!ptx.ok()) return std::move(ptx).error();
  return Inputs{*plan, *ptx, tmem::bench::cuda_roundtrip_source(*plan, "tmem_roundtrip")};
}

const std::string kEntry = "tmem_roundtrip";

// The default route, spec text to cubin: parse, check, plan, build, print, compile with
// Backend::kAuto (nvPTXCompiler where built in). The rename is the only step a user would not do.
Result<std::vector<char>> default_route(const SpecText& text, Backend backend) {
  Result<tmem::TransferSpec> spec = tmem::bench::parse_spec(text);
  if (!spec.ok()) return std::move(spec).error();
  Result<tmem::Plan> plan = tmem::check(*spec);
  if (!plan.ok()) return std::move(plan).error();
  Result<tmem::ptx::Module> module =
      tmem::kernels::build_kernel(*plan, tmem::KernelKind::kRoundtrip);
  if (!module.ok()) return std::move(module).error();
  Result<std::string> ptx = tmem::ptx::print(*module);
  if (!ptx.ok()) return std::move(ptx).error();
  CompileOptions options;
  options.backend = backend;
  Result<tmem::CompiledModule> compiled =
      tmem::compile_ptx(tmem::bench::replace_first(std::move(ptx).value(), kEntry,
                                                   kEntry + tmem::bench::unique_suffix()),
                        options);
  if (!compiled.ok()) return std::move(compiled).error();
  return std::move(compiled->cubin);
}

// Runs `once` (which returns the seconds its timed part took) as each iteration's manual time.
void run_timed(benchmark::State& state, const std::function<Result<double>()>& once) {
  // The route's one-time initialisation (library load, first-call setup) stays out of the samples.
  if (Result<double> first = once(); !first.ok())
    return state.SkipWithError(first.error().message().c_str());
  for (auto _ : state) {
    Result<double> seconds = once();
    if (!seconds.ok()) return state.SkipWithError(seconds.error().message().c_str());
    state.SetIterationTime(*seconds);
  }
}

std::string& scratch_dir() {
  static std::string dir = [] {
    std::string pattern = "/tmp/tmemjit-jit-bench-XXXXXX";
    return ::mkdtemp(pattern.data()) != nullptr ? pattern : std::string("/tmp");
  }();
  return dir;
}

void cold_jit(benchmark::State& state, const std::string& route, const Case& c) {
  Result<Inputs> inputs = inputs_of(c.text);
  if (!inputs.ok()) return state.SkipWithError(inputs.error().message().c_str());
  state.counters["regs_per_thread"] = inputs->plan.regs_per_thread;
  state.counters["ptx_bytes"] = static_cast<double>(inputs->ptx.size());
  const std::string dir = scratch_dir();
  std::function<Result<double>()> once;
  if (route == "default" || route == "nvjitlink") {
    const Backend backend = route == "default" ? Backend::kAuto : Backend::kNvJitLink;
    once = [&, backend]() -> Result<double> {
      const auto start = Clock::now();
      Result<std::vector<char>> cubin = default_route(c.text, backend);
      if (!cubin.ok()) return std::move(cubin).error();
      return seconds_since(start);
    };
  } else if (route == "compile_transfer") {
    // The public API with the cache off. Its entry name is fixed, so this row is not renamed:
    // it matches the renamed default row only because nvPTXCompiler keeps no cross-process cache.
    const tmem::TransferSpec spec = tmem::bench::parse_spec(c.text).value();
    once = [spec]() -> Result<double> {
      tmem::CacheOptions off = tmem::cache_options();
      off.enabled = false;
      tmem::set_cache_options(off);
      const auto start = Clock::now();
      Result<tmem::Kernel> kernel = tmem::compile_transfer(spec);
      const double seconds = seconds_since(start);
      if (!kernel.ok()) return std::move(kernel).error();
      return seconds;
    };
  } else if (route == "nvrtc") {
    once = [&]() -> Result<double> {
      const std::string name = kEntry + tmem::bench::unique_suffix();
      const std::string source = tmem::bench::replace_first(inputs->cuda, kEntry, name);
      const auto start = Clock::now();
      Result<tmem::CompiledModule> compiled = tmem::compile_cuda(source, name, CompileOptions{});
      const double seconds = seconds_since(start);
      if (!compiled.ok()) return std::move(compiled).error();
      return seconds;
    };
  } else if (route == "nvcc" || route == "ptxas") {
    once = [&, route]() -> Result<double> {
      const std::string name = kEntry + tmem::bench::unique_suffix();
      const bool nvcc = route == "nvcc";
      const std::string input = dir + "/" + name + (nvcc ? ".cu" : ".ptx");
      const std::string output = dir + "/" + name + ".cubin";
      if (Result<bool> written = tmem::write_file(
              input, tmem::bench::replace_first(nvcc ? inputs->cuda : inputs->ptx, kEntry, name));
          !written.ok())
        return std::move(written).error();
      std::vector<std::string> argv;
      if (nvcc) {
        argv = {tmem::bench::nvcc_path(), "-cubin", "-arch=sm_100a", "-o", output, input};
      } else {
        argv = {tmem::ptxas_path()};
        for (const std::string& o : tmem::backend_options(Backend::kPtxas, CompileOptions{}))
          argv.push_back(o);
        argv.insert(argv.end(), {"-o", output, input});
      }
      const auto start = Clock::now();
      Result<std::string> cubin = tmem::bench::run_tool(argv, output);
      const double seconds = seconds_since(start);
      std::remove(input.c_str());
      std::remove(output.c_str());
      if (!cubin.ok()) return std::move(cubin).error();
      return seconds;
    };
  }
  run_timed(state, once);
}

// libtmemjit's own work before the compiler runs, on the seed: parse, check + plan, build + print.
void BM_Overhead(benchmark::State& state, int part) {
  const SpecText& text = tmem::bench::seed_text();
  const tmem::TransferSpec spec = tmem::bench::parse_spec(text).value();
  const tmem::Plan plan = tmem::check(spec).value();
  for (auto _ : state) {
    switch (part) {
      case 0:
        benchmark::DoNotOptimize(tmem::bench::parse_spec(text));
        break;
      case 1:
        benchmark::DoNotOptimize(tmem::check(spec));
        break;
      case 2: {
        auto module = tmem::kernels::build_kernel(plan, tmem::KernelKind::kRoundtrip).value();
        benchmark::DoNotOptimize(tmem::ptx::print(module));
        break;
      }
      default: {
        auto parsed = tmem::bench::parse_spec(text).value();
        auto checked = tmem::check(parsed).value();
        auto module = tmem::kernels::build_kernel(checked, tmem::KernelKind::kRoundtrip).value();
        benchmark::DoNotOptimize(tmem::ptx::print(module));
      }
    }
  }
}

// 64 distinct specs: warpgroup identity specs of b32 and packed ld/st forms, every shape, x1..x32.
const std::vector<tmem::TransferSpec>& warmup_specs() {
  static const std::vector<tmem::TransferSpec> specs = [] {
    std::vector<tmem::TransferSpec> out;
    for (int num : {1, 2, 4, 8, 16, 32})
      for (tmem::Shape shape : tmem::all_shapes())
        for (tmem::Direction direction : {tmem::Direction::kStore, tmem::Direction::kLoad})
          for (bool pack : {false, true}) {
            if (out.size() == 64) return out;
            Result<tmem::Opcode> op = tmem::Opcode::make(direction, shape, num, pack);
            if (!op.ok()) continue;
            Result<tmem::TransferSpec> spec =
                tmem::bench::parse_spec(tmemjit_test::identity_spec(*op));
            if (spec.ok() && tmem::check(*spec).ok()) out.push_back(std::move(spec).value());
          }
    return out;
  }();
  return specs;
}

// Memory-only cache, emptied before each iteration: every spec compiles once per iteration.
void BM_Warmup64(benchmark::State& state, bool parallel) {
  const std::vector<tmem::TransferSpec>& specs = warmup_specs();
  if (specs.size() != 64) return state.SkipWithError("fewer than 64 distinct specs");
  tmem::CacheOptions memory_only = tmem::cache_options();
  memory_only.enabled = true;
  memory_only.disk = false;
  tmem::set_cache_options(memory_only);
  for (auto _ : state) {
    (void)tmem::clear_cache(false);
    const auto start = Clock::now();
    if (parallel) {
      if (!tmem::warmup(specs).ok()) return state.SkipWithError("warmup failed");
    } else {
      for (const tmem::TransferSpec& spec : specs)
        if (!tmem::compile_transfer(spec).ok()) return state.SkipWithError("compile failed");
    }
    state.SetIterationTime(seconds_since(start));
  }
  state.counters["threads"] = parallel ? std::max(1u, std::thread::hardware_concurrency()) : 1;
  (void)tmem::clear_cache(false);
}

// The machine's parallelism right now, as a control for Warmup64: the same fixed CPU work on one
// thread, then split over hardware_concurrency() threads. On a shared machine the ratio is below
// the core count, and warmup cannot scale better than this.
void BM_CpuWork(benchmark::State& state, bool parallel) {
  constexpr std::uint64_t kWork = 400'000'000;  // about 0.3 s of integer hashing on one core
  auto spin = [](std::uint64_t n) {
    std::uint64_t x = 0x9E3779B97F4A7C15ull;
    for (std::uint64_t i = 0; i < n; ++i) x = (x ^ (x >> 31)) * 0xBF58476D1CE4E5B9ull + i;
    benchmark::DoNotOptimize(x);
  };
  const unsigned threads = parallel ? std::max(1u, std::thread::hardware_concurrency()) : 1;
  for (auto _ : state) {
    const auto start = Clock::now();
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(spin, kWork / threads);
    spin(kWork / threads);
    for (std::thread& thread : pool) thread.join();
    state.SetIterationTime(seconds_since(start));
  }
  state.counters["threads"] = threads;
}

// Kernel::launch against a bare cuLaunchKernel of the same (empty, sm_90+) function. Needs a
// driver and a GPU; the tcgen05 kernels need sm_100, so the launched function is an empty one.
struct BareDriver {
  using ModuleLoadData = int (*)(void**, const void*);
  using ModuleGetFunction = int (*)(void**, void*, const char*);
  using LaunchKernel = int (*)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                               unsigned, void*, void**, void**);
  using CtxSynchronize = int (*)();
  ModuleLoadData module_load_data = nullptr;
  ModuleGetFunction module_get_function = nullptr;
  LaunchKernel launch_kernel = nullptr;
  CtxSynchronize ctx_synchronize = nullptr;
};

const char* kNoopPtx =
    ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry tmem_noop()\n{\n\tret;\n}\n";

void BM_Launch(benchmark::State& state, bool bare) {
  CompileOptions options;
  options.target = tmem::Target::kSm90;
  Result<tmem::CompiledModule> compiled = tmem::compile_ptx(kNoopPtx, options);
  if (!compiled.ok()) return state.SkipWithError(compiled.error().message().c_str());
  auto payload = std::make_shared<tmem::Payload>();
  payload->blob = compiled->cubin;
  payload->text = kNoopPtx;
  const tmem::Kernel kernel = tmem::make_kernel("tmem_noop", tmem::Target::kSm90, payload);
  if (tmem::Status loaded = kernel.load(); !loaded.ok())
    return state.SkipWithError(("skipped: " + loaded.error().message()).c_str());
  // The library made a context current on this thread; the bare path uses the same one.
  void* cuda = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  BareDriver driver;
  if (cuda != nullptr) {
    driver.module_load_data =
        reinterpret_cast<BareDriver::ModuleLoadData>(::dlsym(cuda, "cuModuleLoadData"));
    driver.module_get_function =
        reinterpret_cast<BareDriver::ModuleGetFunction>(::dlsym(cuda, "cuModuleGetFunction"));
    driver.launch_kernel =
        reinterpret_cast<BareDriver::LaunchKernel>(::dlsym(cuda, "cuLaunchKernel"));
    driver.ctx_synchronize =
        reinterpret_cast<BareDriver::CtxSynchronize>(::dlsym(cuda, "cuCtxSynchronize"));
  }
  if (driver.launch_kernel == nullptr || driver.module_load_data == nullptr ||
      driver.ctx_synchronize == nullptr || driver.module_get_function == nullptr)
    return state.SkipWithError("skipped: libcuda.so.1 lacks the launch entry points");
  void* module = nullptr;
  void* function = nullptr;
  if (driver.module_load_data(&module, compiled->cubin.data()) != 0 ||
      driver.module_get_function(&function, module, "tmem_noop") != 0)
    return state.SkipWithError("cuModuleLoadData of the empty kernel failed");
  const tmem::LaunchConfig config{{1, 1, 1}, {32, 1, 1}, 0, nullptr};
  int64_t launched = 0;
  for (auto _ : state) {
    if (bare) {
      if (driver.launch_kernel(function, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr) != 0)
        return state.SkipWithError("cuLaunchKernel failed");
    } else if (!kernel.launch(config, nullptr).ok()) {
      return state.SkipWithError("Kernel::launch failed");
    }
    // Keep the launch queue short, so the time is the host's launch cost, not queueing.
    if (++launched % 64 == 0) {
      state.PauseTiming();
      driver.ctx_synchronize();
      state.ResumeTiming();
    }
  }
  driver.ctx_synchronize();
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  static const std::vector<Case> all = cases();
  for (const Case& c : all) {
    std::vector<std::string> routes = {"default", "nvrtc", "nvcc", "ptxas", "nvjitlink"};
    if (c.name == "seed") routes.insert(routes.begin() + 1, "compile_transfer");
    for (const std::string& route : routes) {
      const bool slow = route == "nvcc";
      benchmark::RegisterBenchmark(
          ("ColdJit/" + route + "/" + c.name).c_str(),
          [route, &c](benchmark::State& state) { cold_jit(state, route, c); })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->Iterations(1)
          ->Repetitions(slow ? 5 : (c.name == "seed" ? 21 : 9));
    }
  }
  const char* parts[] = {"parse", "check_plan", "build_print", "total"};
  for (int part = 0; part < 4; ++part)
    benchmark::RegisterBenchmark((std::string("Overhead/") + parts[part]).c_str(),
                                 [part](benchmark::State& state) { BM_Overhead(state, part); })
        ->Unit(benchmark::kMicrosecond)
        ->Repetitions(5);
  for (bool parallel : {false, true})
    benchmark::RegisterBenchmark(
        parallel ? "Warmup64/parallel" : "Warmup64/serial",
        [parallel](benchmark::State& state) { BM_Warmup64(state, parallel); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1)
        ->Repetitions(5);
  for (bool parallel : {false, true})
    benchmark::RegisterBenchmark(
        parallel ? "CpuWork/parallel" : "CpuWork/serial",
        [parallel](benchmark::State& state) { BM_CpuWork(state, parallel); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1)
        ->Repetitions(5);
  for (bool bare : {false, true})
    benchmark::RegisterBenchmark(bare ? "Launch/cuLaunchKernel" : "Launch/Kernel::launch",
                                 [bare](benchmark::State& state) { BM_Launch(state, bare); })
        ->Unit(benchmark::kMicrosecond)
        ->Repetitions(5);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::error_code ignored;
  if (scratch_dir() != "/tmp") std::filesystem::remove_all(scratch_dir(), ignored);
  return 0;
}
