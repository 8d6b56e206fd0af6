// epilogue: a GEMM-style epilogue (epilogue.cu) specialized at run time for the TMEM layout a
// small autotuner picks. What an application does with libtmemjit's kernel specialization:
//   1. read each candidate layout as TransferSpecs (a load and a store of one chunk);
//   2. tmem::compile_kernel: the kernel's own source, with <tmemjit/transfers.cuh> generated for
//      the candidate (NVRTC runs once per source and register count; cached in memory and on
//      disk);
//   3. launch the Kernel, time it, check its output; keep the fastest.
// On a Blackwell GPU the kernels run tcgen05; on a Hopper GPU the same source compiles for sm_90
// with the emulated transfers (TMEM in global memory); elsewhere the example compiles for sm_100a
// and skips the runs, saying why.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tmem/cache.h"
#include "tmem/specialize.h"

#ifndef EPILOGUE_DIR
#error "EPILOGUE_DIR names the directory of epilogue.cu and layouts/"
#endif

namespace {

struct Candidate {
  const char* name;
  const char* load;   // layouts/<load>.json: one chunk, read by the epilogue
  const char* store;  // layouts/<store>.json: the same chunk, written (the stand-in for the MMA)
};

constexpr Candidate kCandidates[] = {
    {"Layout D, 32x32b.x32 x2", "d_x32_ld", "d_x32_st"},
    {"Layout D, 32x32b.x64 x2", "d_x64_ld", "d_x64_st"},
    {"Layout F, 16x256b.x8 x2", "f_16x256b_ld", "f_16x256b_st"},
};

constexpr int kColumns = 256;  // the tile's columns: a few chunks of every candidate
constexpr int kTiles = 132;    // CTAs, one tile each
constexpr float kAlpha = 1.5f, kBeta = -0.25f;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int fail(const tmem::Error& error) {
  std::fprintf(stderr, "error: %s\n%s\n", error.message().c_str(), error.details().c_str());
  return 1;
}

#define CUDA_OK(call)                                                              \
  do {                                                                             \
    cudaError_t status_ = (call);                                                  \
    if (status_ != cudaSuccess) {                                                  \
      std::fprintf(stderr, "error: %s: %s\n", #call, cudaGetErrorString(status_)); \
      return 1;                                                                    \
    }                                                                              \
  } while (0)

}  // namespace

int main(int argc, char** argv) {
  // The directory of epilogue.cu and layouts/: this source directory, or the first argument.
  // --specialization lazy: each layout starts on the generic tier at once (warmed up first), is
  // checked there, then on the specialized kernel once it takes over (docs/specialization.md
  // §Tiers).
  std::string dir = EPILOGUE_DIR;
  tmem::Specialization specialization = tmem::Specialization::kEager;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--specialization" && i + 1 < argc) {
      auto parsed = tmem::parse_specialization(argv[++i]);
      if (!parsed) return fail(parsed.error());
      specialization = *parsed;
    } else {
      dir = arg;
    }
  }
  tmem::KernelSource source;
  source.text = read_file(dir + "/epilogue.cu");
  source.path = "epilogue.cu";
  source.entry = "epilogue";
  if (source.text.empty()) {
    std::fprintf(stderr, "error: cannot read %s/epilogue.cu\n", dir.c_str());
    return 1;
  }

  // Where to run: tcgen05 on Blackwell, the emulation on Hopper, nowhere else.
  int devices = 0;
  int cc = 0;
  std::string skip;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    skip = "no CUDA device here";
    (void)cudaGetLastError();
  } else {
    cudaDeviceProp properties{};
    CUDA_OK(cudaGetDeviceProperties(&properties, 0));
    cc = 10 * properties.major + properties.minor;
    if (cc < 90)
      skip = "device 0 has compute capability " + std::to_string(cc / 10) + "." +
             std::to_string(cc % 10) + "; the emulation needs 9.0 or later";
  }
  // Lazy runs with a disk cache of its own, so that what earlier runs cached cannot answer: the
  // first call of each layout must then be the generic tier its warmup built.
  std::string lazy_cache;
  if (specialization == tmem::Specialization::kLazy) {
    std::string pattern = (std::filesystem::temp_directory_path() / "tmemjit-lazy-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::fprintf(stderr, "error: cannot make a cache directory for the lazy run\n");
      return 1;
    }
    lazy_cache = pattern;
    tmem::set_cache_dir(lazy_cache);
  }
  struct RemoveCache {
    const std::string& dir;
    ~RemoveCache() {
      if (dir.empty()) return;
      tmem::wait_background_compiles();  // nothing may still write into it
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  } remove_cache{lazy_cache};
  tmem::CompileOptions options;
  options.specialization = specialization;
  if (cc >= 100 && skip.empty()) {
    auto target = tmem::parse_target("sm_" + std::to_string(cc) + "a");
    if (!target) return fail(target.error());
    options.target = *target;
  } else if (cc >= 90 && skip.empty()) {
    options.target = tmem::Target::kSm90;  // emulated transfers, TMEM in global memory
  }
  std::printf("target %s%s\n", cc >= 100 || !skip.empty() ? "sm_100a" : "sm_90 (emulation)",
              skip.empty() ? "" : (" (compile only: " + skip + ")").c_str());
  if (cc >= 100 && skip.empty())
    std::printf("running tcgen05 on compute capability %d.%d\n", cc / 10, cc % 10);

  std::vector<float> host_acc, host_bias(kColumns), expected;
  for (int c = 0; c < kColumns; ++c)
    host_bias[static_cast<size_t>(c)] = 0.5f * static_cast<float>(c % 7);
  float* acc = nullptr;
  float* bias = nullptr;
  float* out = nullptr;

  const Candidate* best = nullptr;
  double best_ms = 0;
  for (const Candidate& candidate : kCandidates) {
    auto load =
        tmem::TransferSpec::from_json(read_file(dir + "/layouts/" + candidate.load + ".json"));
    if (!load) return fail(load.error());
    auto store =
        tmem::TransferSpec::from_json(read_file(dir + "/layouts/" + candidate.store + ".json"));
    if (!store) return fail(store.error());
    // One chunk of the tile: the register tensor's (rows, columns).
    const auto shape = load->regs().base().shape();
    const int rows = static_cast<int>(shape[0]), chunk = static_cast<int>(shape[1]);
    tmem::DeviceFunctionOptions load_options;
    load_options.name = "acc_load";
    load_options.wait = false;  // overlap: acc_load_wait() in the kernel
    load_options.column_argument = true;
    tmem::DeviceFunctionOptions store_options = load_options;
    store_options.name = "acc_store";
    const std::vector<tmem::NamedTransfer> transfers = {{*load, load_options},
                                                        {*store, store_options}};
    if (specialization == tmem::Specialization::kLazy) {
      // Ahead of time (a server's warmup): the generic tier of this signature, which every
      // layout with these registers per thread shares. Cached: a second layout finds it.
      tmem::CompileOptions warm = options;
      warm.specialization = tmem::Specialization::kGeneric;
      auto generic = tmem::compile_kernel(source, transfers, warm);
      if (!generic) return fail(generic.error());
    }
    tmem::CompileReport report;
    const auto start = std::chrono::steady_clock::now();
    auto kernel = tmem::compile_kernel(source, transfers, options, &report);
    const double compile_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!kernel) return fail(kernel.error());
    std::printf(
        "%s: %d x %d chunk, %d registers, %d loads per warp per chunk; compile_kernel %.3f ms "
        "(cache %s, front end %s, %s tier%s)\n",
        candidate.name, rows, chunk, report.transfers[0].regs_per_thread,
        report.transfers[0].instructions_per_warp, compile_ms,
        std::string(tmem::to_string(report.cache)).c_str(),
        std::string(tmem::to_string(report.front_end_cache)).c_str(), report.tier.c_str(),
        report.tier_reason.empty() ? "" : (": " + report.tier_reason).c_str());
    // A layout this run's cache has never seen, its signature's generic tier warmed up: lazy
    // answers with the generic tier (docs/specialization.md §Tiers). Anything
    // else is lazy acting as eager (issue 39 item 10).
    if (specialization == tmem::Specialization::kLazy && report.tier != "generic") {
      std::fprintf(stderr,
                   "error: lazy answered a new layout with the %s tier, not the generic "
                   "tier its warmup built%s\n",
                   report.tier.c_str(),
                   report.tier_reason.empty() ? "" : (": " + report.tier_reason).c_str());
      return 1;
    }
    if (!skip.empty()) continue;

    // Data: the accumulator of every tile, and the expected epilogue.
    const size_t elements = static_cast<size_t>(kTiles) * rows * kColumns;
    host_acc.resize(elements);
    expected.resize(elements);
    for (size_t i = 0; i < elements; ++i) {
      host_acc[i] = static_cast<float>((i * 2654435761u) % 1000) / 16.0f - 30.0f;
      expected[i] = kAlpha * host_acc[i] + kBeta * host_bias[i % kColumns];
    }
    CUDA_OK(cudaFree(acc));
    CUDA_OK(cudaFree(out));
    CUDA_OK(cudaMalloc(&acc, elements * sizeof(float)));
    CUDA_OK(cudaMalloc(&out, elements * sizeof(float)));
    if (bias == nullptr) CUDA_OK(cudaMalloc(&bias, kColumns * sizeof(float)));
    CUDA_OK(cudaMemcpy(acc, host_acc.data(), elements * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(bias, host_bias.data(), kColumns * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(out, 0, elements * sizeof(float)));

    float alpha = kAlpha, beta = kBeta;
    int rows_arg = rows, columns_arg = kColumns, chunk_arg = chunk;
    unsigned int alloc_columns = kColumns;
    void* args[] = {&acc,      &bias,        &out,       &alpha,        &beta,
                    &rows_arg, &columns_arg, &chunk_arg, &alloc_columns};
    tmem::LaunchConfig config;
    config.grid = {kTiles, 1, 1};
    config.block = {128, 1, 1};
    // Runs the kernel on whichever tier it is on now: checks every element, then times it.
    auto run = [&](double* ns_per_element) -> int {
      CUDA_OK(cudaMemset(out, 0, elements * sizeof(float)));
      if (auto launched = kernel->launch(config, args); !launched) return fail(launched.error());
      CUDA_OK(cudaDeviceSynchronize());
      auto warnings = kernel->emulation_check();
      if (!warnings) return fail(warnings.error());
      for (const std::string& warning : *warnings)
        std::printf("  emulation: %s\n", warning.c_str());
      std::vector<float> result(elements);
      CUDA_OK(cudaMemcpy(result.data(), out, elements * sizeof(float), cudaMemcpyDeviceToHost));
      size_t wrong = 0;
      for (size_t i = 0; i < elements; ++i)
        if (std::fabs(result[i] - expected[i]) > 1e-4f * (1.0f + std::fabs(expected[i]))) {
          if (wrong++ == 0)
            std::printf("  first mismatch at tile %zu, row %zu, column %zu: %g, expected %g\n",
                        i / (static_cast<size_t>(rows) * kColumns), i / kColumns % rows,
                        i % kColumns, result[i], expected[i]);
        }
      if (wrong) {
        std::printf("FAIL %s (%s tier): %zu of %zu elements differ\n", candidate.name,
                    std::string(kernel->tier()).c_str(), wrong, elements);
        return 4;
      }
      // Time it: the mean of a few launches, per element of the output.
      constexpr int kReps = 20;
      cudaEvent_t begin, end;
      CUDA_OK(cudaEventCreate(&begin));
      CUDA_OK(cudaEventCreate(&end));
      CUDA_OK(cudaEventRecord(begin));
      for (int r = 0; r < kReps; ++r)
        if (auto launched = kernel->launch(config, args); !launched) return fail(launched.error());
      CUDA_OK(cudaEventRecord(end));
      CUDA_OK(cudaEventSynchronize(end));
      float ms = 0;
      CUDA_OK(cudaEventElapsedTime(&ms, begin, end));
      *ns_per_element = 1e6 * ms / kReps / static_cast<double>(elements);
      std::printf("  correct on the %s tier; %.3f ns per element\n",
                  std::string(kernel->tier()).c_str(), *ns_per_element);
      return 0;
    };
    double ns_per_element = 0;
    if (int failed = run(&ns_per_element)) return failed;
    if (kernel->tier() == "generic") {
      // The autotuner's choice is made on the specialized kernel: wait for it, check, time.
      if (auto ready = kernel->wait_specialized(); !ready) return fail(ready.error());
      if (int failed = run(&ns_per_element)) return failed;
    }
    if (best == nullptr || ns_per_element < best_ms) {
      best = &candidate;
      best_ms = ns_per_element;
    }
  }
  if (!skip.empty()) {
    std::printf("SKIP runs: %s (every candidate compiled for sm_100a)\n", skip.c_str());
    return 0;
  }
  std::printf("selected %s\nPASS\n", best->name);
  cudaFree(acc);
  cudaFree(bias);
  cudaFree(out);
  return 0;
}
