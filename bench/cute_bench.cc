// The CuTe row of docs/benchmarks.md: the seed's Layout B round trip written with CuTe
// (make_tmem_copy, partition, copy) compiled cold through nvcc and through NVRTC, against
// libtmemjit's cold JIT of the same spec in the same run (docs/design.md §Tests; bench/report.py
// reads this binary's JSON). CuTe's headers: --cute-include DIR or $TMEMJIT_CUTE_INCLUDE (CMake
// passes the directory cmake/TmemjitCute.cmake found); without them the CuTe rows are skipped.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "runtime/compile/sass.h"
#include "tmem/cache.h"
#include "tmem/compile.h"
#include "tmem/jit.h"

namespace {

using tmem::Result;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The seed's Layout B (tmem_datapath_layout("B",64,128): lane r + 64*(c / 64), column c % 64)
// as a CuTe layout, stored and loaded back with the 32x32b.x64 atoms by 128 threads: what a CuTe
// user writes for the kernel libtmemjit builds from the spec. `name` is the entry.
std::string cute_seed_source(const std::string& name) {
  return R"(#include <cute/arch/tmem_allocator_sm100.hpp>
#include <cute/atom/copy_traits_sm100.hpp>
#include <cute/tensor.hpp>
using namespace cute;
extern "C" __global__ void __launch_bounds__(128) )" +
         name + R"((const uint32_t* __restrict__ in, uint32_t* __restrict__ out) {
  __shared__ uint32_t tmem_base;
  TMEM::Allocator1Sm allocator;
  const unsigned warp = threadIdx.x / 32;
  if (warp == 0) allocator.allocate(64, &tmem_base);
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  Tensor tmem = make_tensor(make_tmem_ptr<uint32_t>(tmem_base),
                            make_layout(make_shape(_64{}, make_shape(_64{}, _2{})),
                                        make_stride(TMEM::DP<uint32_t>{},
                                                    make_stride(_1{}, Int<64>{} * TMEM::DP<uint32_t>{}))));
  auto store = make_tmem_copy(SM100_TMEM_STORE_32dp32b64x{}, tmem);
  auto load = make_tmem_copy(SM100_TMEM_LOAD_32dp32b64x{}, tmem);
  auto store_thread = store.get_slice(threadIdx.x);
  auto load_thread = load.get_slice(threadIdx.x);
  Tensor regs = make_tensor<uint32_t>(shape(store_thread.partition_S(tmem)));
  for (int i = 0; i < size(regs); ++i) regs(i) = in[threadIdx.x * size(regs) + i];
  copy(store, regs, store_thread.partition_D(tmem));
  asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory");
  copy(load, load_thread.partition_S(tmem), regs);
  asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
  for (int i = 0; i < size(regs); ++i) out[threadIdx.x * size(regs) + i] = regs(i);
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  if (warp == 0) {
    allocator.free(tmem_base, 64);
    allocator.release_allocation_lock();
  }
}
)";
}

std::string& cute_include() {
  static std::string dir = [] {
    const char* env = std::getenv("TMEMJIT_CUTE_INCLUDE");
    if (env != nullptr && *env != '\0') return std::string(env);
#ifdef TMEMJIT_CUTE_INCLUDE_DIR
    return std::string(TMEMJIT_CUTE_INCLUDE_DIR);
#else
    return std::string();
#endif
  }();
  return dir;
}

// The toolkit's include directories (CUDA 13 keeps libcu++ under include/cccl), for NVRTC;
// CMake passes them ':'-separated.
std::vector<std::string> cuda_includes() {
  std::vector<std::string> out;
#ifdef TMEMJIT_CUTE_CUDA_INCLUDES
  std::string list = TMEMJIT_CUTE_CUDA_INCLUDES;
  for (size_t start = 0; start <= list.size();) {
    const size_t end = list.find(':', start);
    const std::string dir = list.substr(start, end == std::string::npos ? end : end - start);
    if (!dir.empty()) out.push_back(dir);
    if (end == std::string::npos) break;
    start = end + 1;
  }
#endif
  return out;
}

// Both compilers get what the CuTe agreement tests use: NDEBUG (CuTe's device asserts add
// branches), the CuTe headers, sm_100a (CuTe's TMEM atoms trap on plain sm_100).
std::vector<std::string> cute_flags() { return {"-DNDEBUG", "-I" + cute_include()}; }

std::string& scratch_dir() {
  static std::string dir = [] {
    std::string pattern = "/tmp/tmemjit-cute-bench-XXXXXX";
    return ::mkdtemp(pattern.data()) != nullptr ? pattern : std::string("/tmp");
  }();
  return dir;
}

// Runs `once` as each iteration's manual time; the route's one-time set-up stays out.
void run_timed(benchmark::State& state, const std::function<Result<double>()>& once) {
  if (Result<double> first = once(); !first.ok())
    return state.SkipWithError(first.error().message().c_str());
  for (auto _ : state) {
    Result<double> seconds = once();
    if (!seconds.ok()) return state.SkipWithError(seconds.error().message().c_str());
    state.SetIterationTime(*seconds);
  }
}

// CuTe compiles its TMEM atoms into a printf and a trap where the target lacks tcgen05 (no error):
// the first compile of each route must hold STTM and LDTM, or the times are of another kernel.
tmem::Status check_tmem_code(std::span<const char> cubin) {
  std::optional<tmem::sass::Disassembler> tool = tmem::sass::find_disassembler();
  if (!tool)
    return tmem::Status(std::monostate{});  // nothing to look with; the tests check the code
  Result<std::string> text = tmem::sass::disassemble(*tool, cubin);
  if (!text.ok()) return std::move(text).error();
  const tmem::sass::Listing listing(*text);
  if (listing.count("STTM") == 0 || listing.count("LDTM") == 0)
    return tmem::Error(tmem::ErrorCode::kToolchain,
                       "CuTe's kernel has no STTM/LDTM (are the TMEM atoms enabled for sm_100a?)");
  return tmem::Status(std::monostate{});
}

const char* kNoCute =
    "skipped: no CuTe headers (pip install nvidia-cutlass==4.2.0.0, or TMEMJIT_CUTE_INCLUDE)";

// CuTe through nvcc -cubin (subprocess), as jit_bench's nvcc row: spawn, compile, read back.
void BM_CuteNvcc(benchmark::State& state) {
  if (cute_include().empty()) return state.SkipWithError(kNoCute);
  run_timed(state, [checked = false]() mutable -> Result<double> {
    const std::string name = "tmem_roundtrip" + tmem::bench::unique_suffix();
    const std::string input = scratch_dir() + "/" + name + ".cu";
    const std::string output = scratch_dir() + "/" + name + ".cubin";
    if (Result<bool> written = tmem::write_file(input, cute_seed_source(name)); !written.ok())
      return std::move(written).error();
    std::vector<std::string> argv = {tmem::bench::nvcc_path(), "-cubin", "-arch=sm_100a",
                                     "-std=c++17", "--expt-relaxed-constexpr"};
    for (const std::string& flag : cute_flags()) argv.push_back(flag);
    argv.insert(argv.end(), {"-o", output, input});
    const auto start = Clock::now();
    Result<std::string> cubin = tmem::bench::run_tool(argv, output);
    const double seconds = seconds_since(start);
    std::remove(input.c_str());
    std::remove(output.c_str());
    if (!cubin.ok()) return std::move(cubin).error();
    if (!checked) {
      if (tmem::Status code = check_tmem_code(*cubin); !code.ok()) return std::move(code).error();
      checked = true;
    }
    return seconds;
  });
}

// CuTe through NVRTC in-process (libtmemjit's NVRTC backend, as jit_bench's NVRTC row).
void BM_CuteNvrtc(benchmark::State& state) {
  if (cute_include().empty()) return state.SkipWithError(kNoCute);
  run_timed(state, [checked = false]() mutable -> Result<double> {
    const std::string name = "tmem_roundtrip" + tmem::bench::unique_suffix();
    const std::string source = cute_seed_source(name);
    tmem::CompileOptions options;
    options.extra_options = cute_flags();
    for (const std::string& dir : cuda_includes()) options.extra_options.push_back("-I" + dir);
    // CUTLASS declares some host-only helpers without __host__; NVRTC's JIT mode rejects them
    // unless unannotated functions default to __device__.
    options.extra_options.insert(options.extra_options.end(), {"-std=c++17", "-default-device"});
    const auto start = Clock::now();
    Result<tmem::CompiledModule> compiled = tmem::compile_cuda(source, name, options);
    const double seconds = seconds_since(start);
    if (!compiled.ok())
      return tmem::Error(compiled.error().code(),
                         compiled.error().message() + "\n" + compiled.error().details());
    if (!checked) {
      if (tmem::Status code = check_tmem_code(compiled->cubin); !code.ok())
        return std::move(code).error();
      checked = true;
    }
    return seconds;
  });
}

// libtmemjit's cold JIT of the seed spec, public API, cache off (as jit_bench's
// compile_transfer row; nvPTXCompiler keeps no cross-process cache).
void BM_LibtmemjitCold(benchmark::State& state) {
  const tmem::TransferSpec spec = tmem::bench::parse_spec(tmem::bench::seed_text()).value();
  run_timed(state, [&spec]() -> Result<double> {
    tmem::CacheOptions off = tmem::cache_options();
    off.enabled = false;
    tmem::set_cache_options(off);
    const auto start = Clock::now();
    Result<tmem::Kernel> kernel = tmem::compile_transfer(spec);
    const double seconds = seconds_since(start);
    if (!kernel.ok()) return std::move(kernel).error();
    return seconds;
  });
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--cute-include") == 0) cute_include() = argv[i + 1];
  // Google Benchmark rejects flags it does not know: drop ours.
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--cute-include") == 0) {
      ++i;
      continue;
    }
    args.push_back(argv[i]);
  }
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
  // CuTe compiles take seconds each: five samples; libtmemjit's take milliseconds: 21.
  benchmark::RegisterBenchmark("CuteCold/nvcc/seed", BM_CuteNvcc)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1)
      ->Repetitions(5);
  benchmark::RegisterBenchmark("CuteCold/nvrtc/seed", BM_CuteNvrtc)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1)
      ->Repetitions(5);
  benchmark::RegisterBenchmark("CuteCold/libtmemjit/seed", BM_LibtmemjitCold)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1)
      ->Repetitions(21);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::error_code ignored;
  if (scratch_dir() != "/tmp") std::filesystem::remove_all(scratch_dir(), ignored);
  return 0;
}
