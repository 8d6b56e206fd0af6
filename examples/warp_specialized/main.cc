// warp_specialized: the DeepGEMM-style epilogue of epilogue_ws.cu specialized at run time for a
// few accumulator layouts. What a GEMM's host does with libtmemjit:
//   1. pick each candidate layout of one chunk of the 128 x BLOCK_N accumulator with tmem::select;
//   2. tmem::compile_kernel with warp_argument (the epilogue warps 4-7 pass their rank in the
//      warpgroup) and column_argument (the chunk loop steps by acc_load_columns), for sm_100a,
//      checking the SASS (the plan's LDTM/STTM, no local memory) from CompileReport::code;
//   3. where a GPU runs it (tcgen05 on Blackwell, the sm_90 emulation on Hopper), run it and
//      compare D = bf16(accumulator) with a host reference, bit for bit.
// A layout the epilogue cannot use (a chunk wider than a 64-column swizzled row) stops at its
// static_assert, with its message. The chunk geometry is the kernel's own (acc_load_shape,
// acc_load_columns): the host passes no chunk width, no column count and no allocation size.
// Prints a PASS, FAIL or SKIP line per layout; exits non-zero on wrong data or a wrong compile.
// Usage: warp_specialized [--compile-only] [DIR of epilogue_ws.cu]
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tmem/select.h"
#include "tmem/specialize.h"

#ifndef WARP_SPECIALIZED_DIR
#error "WARP_SPECIALIZED_DIR names the directory of epilogue_ws.cu"
#endif

namespace {

// One candidate: a chunk of the accumulator as a TMEM view and a register view (select picks the
// form).
struct Candidate {
  const char* name;
  const char* tmem;
  const char* regs;
  int register_budget;  // 0: the widest form
  const char* refusal;  // where the kernel refuses the layout: its static_assert's words
};

constexpr Candidate kCandidates[] = {
    {"32x32b.x8 (DeepGEMM's), chunks of 8 columns",
     "tensor((128,8), S[(128,8):(1@TLane,1@TCol)], f32)",
     "tensor((128,8), S[(128,8):(1@tid_in_wg,1)], f32)", 0, nullptr},
    {"32x32b.x32, chunks of 32 columns", "tensor((128,32), S[(128,32):(1@TLane,1@TCol)], f32)",
     "tensor((128,32), S[(128,32):(1@tid_in_wg,1)], f32)", 0, nullptr},
    {"32x32b.x16 x2, chunks of 32 columns", "tensor((128,32), S[(128,32):(1@TLane,1@TCol)], f32)",
     "tensor((128,32), S[(128,32):(1@tid_in_wg,1)], f32)", 16, nullptr},
    // DeepGEMM's swap-AB form: thread t holds rows t/4 and t/4 + 8 of each 16-lane half of its
    // slab, columns 2(t%4) and 2(t%4) + 1 of every 8.
    {"16x256b.x2 x2, chunks of 16 columns", "tensor((128,16), S[(128,16):(1@TLane,1@TCol)], f32)",
     "tensor((128,16), S[(4,2,2,8,2,4,2):(32@tid_in_wg,8,2,4@tid_in_wg,4,1@tid_in_wg,1)], f32)", 0,
     nullptr},
    // 128 columns a chunk: wider than a 64-column row of the swizzled tile.
    {"32x32b.x128, chunks of 128 columns, refused by the kernel",
     "tensor((128,128), S[(128,128):(1@TLane,1@TCol)], f32)",
     "tensor((128,128), S[(128,128):(1@tid_in_wg,1)], f32)", 0,
     "epilogue_ws: a chunk's columns must divide the 64 columns"},
};

// The producer's fill (the MMA's stand-in): 32 columns a chunk, one 32x32b.x32 per warp.
constexpr const char* kFillTmem = "tensor((128,32), S[(128,32):(1@TLane,1@TCol)], f32)";
constexpr const char* kFillRegs = "tensor((128,32), S[(128,32):(1@tid_in_wg,1)], f32)";

constexpr int kRows = 128;
constexpr int kColumns = 256;  // BLOCK_N: the problem size, given to the kernel as -D
constexpr int kTiles = 132;    // CTAs, one tile each
constexpr int kThreads = 256;  // 8 warps

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

// fp32 to bf16, rounding to nearest even (what __float2bfloat16_rn does; no NaN here).
std::uint16_t to_bf16(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return static_cast<std::uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

tmem::Result<tmem::TransferSpec> selected(tmem::Direction direction, const char* tmem_text,
                                          const char* regs_text, int register_budget) {
  auto tmem_view = tmem::View::parse(tmem_text);
  if (!tmem_view) return tmem_view.error();
  auto regs_view = tmem::View::parse(regs_text);
  if (!regs_view) return regs_view.error();
  auto selection = tmem::select(direction, tmem::Scope::warpgroup(), *tmem_view, *regs_view,
                                {.register_budget = register_budget});
  if (!selection) return selection.error();
  return selection->spec;
}

}  // namespace

int main(int argc, char** argv) {
  bool compile_only = false;
  std::string dir = WARP_SPECIALIZED_DIR;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--compile-only") == 0)
      compile_only = true;
    else
      dir = argv[i];
  }
  tmem::KernelSource source;
  source.text = read_file(dir + "/epilogue_ws.cu");
  source.path = "epilogue_ws.cu";
  source.entry = "epilogue_ws";
  if (source.text.empty()) {
    std::fprintf(stderr, "error: cannot read %s/epilogue_ws.cu\n", dir.c_str());
    return 1;
  }

  // Where to run: tcgen05 on Blackwell, the emulation on Hopper, nowhere else.
  int devices = 0, cc = 0;
  std::string skip;
  if (compile_only) {
    skip = "--compile-only";
  } else if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
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
  tmem::CompileOptions sm100a;  // always compiled, and its SASS checked
  sm100a.target = tmem::Target::kSm100a;
  sm100a.nvrtc_options = {"-DWS_COLUMNS=" + std::to_string(kColumns)};
  tmem::CompileOptions run_options = sm100a;
  if (skip.empty()) {
    if (cc >= 100) {
      auto target = tmem::parse_target("sm_" + std::to_string(cc) + "a");
      if (!target) return fail(target.error());
      run_options.target = *target;
    } else {
      run_options.target = tmem::Target::kSm90;  // the emulated transfers, TMEM in global memory
    }
    std::printf("running on compute capability %d.%d (%s)\n", cc / 10, cc % 10,
                cc >= 100 ? "tcgen05" : "the sm_90 emulation");
  } else {
    std::printf("compiling for sm_100a only: %s\n", skip.c_str());
  }

  auto fill = selected(tmem::Direction::kStore, kFillTmem, kFillRegs, 0);
  if (!fill) return fail(fill.error());
  tmem::DeviceFunctionOptions options;
  options.warp_argument = true;    // the warp's rank in its warpgroup, from a uniform register
  options.column_argument = true;  // chunk loops step by NAME_columns
  tmem::DeviceFunctionOptions fill_options = options;
  fill_options.name = "acc_fill";
  tmem::DeviceFunctionOptions load_options = options;
  load_options.name = "acc_load";

  // The accumulator: values with more significant bits than bf16 keeps, so rounding is exercised.
  const size_t elements = static_cast<size_t>(kTiles) * kRows * kColumns;
  std::vector<float> host_acc(elements);
  std::vector<std::uint16_t> expected(elements);
  for (size_t i = 0; i < elements; ++i) {
    host_acc[i] = static_cast<float>((i * 2654435761u) % 65536) / 64.0f - 512.0f;
    expected[i] = to_bf16(host_acc[i]);
  }
  float* acc = nullptr;
  std::uint16_t* d = nullptr;
  if (skip.empty()) {
    CUDA_OK(cudaMalloc(&acc, elements * sizeof(float)));
    CUDA_OK(cudaMalloc(&d, elements * sizeof(std::uint16_t)));
    CUDA_OK(cudaMemcpy(acc, host_acc.data(), elements * sizeof(float), cudaMemcpyHostToDevice));
  }

  int failures = 0;
  for (const Candidate& candidate : kCandidates) {
    std::printf("%s\n", candidate.name);
    auto load =
        selected(tmem::Direction::kLoad, candidate.tmem, candidate.regs, candidate.register_budget);
    if (!load) return fail(load.error());
    const std::vector<tmem::NamedTransfer> transfers = {{*fill, fill_options},
                                                        {*load, load_options}};
    tmem::CompileReport report;
    auto kernel = tmem::compile_kernel(source, transfers, sm100a, &report);
    if (candidate.refusal != nullptr) {
      // The kernel's own static_assert refuses the layout, in the compiler's log.
      const bool refused =
          !kernel && kernel.error().full_text().find(candidate.refusal) != std::string::npos;
      std::printf("%s %s: %s\n", refused ? "PASS" : "FAIL", candidate.name,
                  refused ? "refused at compile time by the kernel's static_assert"
                          : "expected the kernel's static_assert");
      if (!refused) {
        if (!kernel) std::printf("%s\n", kernel.error().full_text().c_str());
        ++failures;
      }
      continue;
    }
    if (!kernel) return fail(kernel.error());
    // The SASS: each chunk's instructions once, no local memory.
    const int fill_chunks = kColumns / static_cast<int>(fill->regs().base().shape()[1]);
    const int load_chunks = kColumns / static_cast<int>(load->regs().base().shape()[1]);
    const int sttm = fill_chunks * report.transfers[0].instructions_per_warp;
    const int ldtm = load_chunks * report.transfers[1].instructions_per_warp;
    std::printf("  %s x%d; sm_100a: %s (expected ldtm=%d sttm=%d, local_bytes=0)\n",
                load->op().to_string().c_str(), report.transfers[1].instructions_per_warp,
                tmem::to_string(report.code).c_str(), ldtm, sttm);
    const bool counted = report.code.ldtm >= 0;
    if (report.code.local_bytes != 0 ||
        (counted && (report.code.ldtm != ldtm || report.code.sttm != sttm))) {
      std::printf("FAIL %s: the sm_100a code is not the plan's\n", candidate.name);
      ++failures;
      continue;
    }
    if (!counted) std::printf("  LDTM/STTM not counted: %s\n", report.code.disassembler.c_str());
    if (!skip.empty()) {
      std::printf("SKIP %s: compiled for sm_100a, its SASS the plan's; not run: %s\n",
                  candidate.name, skip.c_str());
      continue;
    }

    auto runnable = run_options.target == sm100a.target
                        ? std::move(kernel)
                        : tmem::compile_kernel(source, transfers, run_options, nullptr);
    if (!runnable) return fail(runnable.error());
    CUDA_OK(cudaMemset(d, 0xFF, elements * sizeof(std::uint16_t)));  // NaN where nothing lands
    void* args[] = {&acc, &d};
    tmem::LaunchConfig config;
    config.grid = {kTiles, 1, 1};
    config.block = {kThreads, 1, 1};
    if (auto launched = runnable->launch(config, args); !launched) return fail(launched.error());
    CUDA_OK(cudaDeviceSynchronize());
    auto warnings = runnable->emulation_check();
    if (!warnings) return fail(warnings.error());
    for (const std::string& warning : *warnings) std::printf("  emulation: %s\n", warning.c_str());
    std::vector<std::uint16_t> result(elements);
    CUDA_OK(cudaMemcpy(result.data(), d, elements * sizeof(std::uint16_t), cudaMemcpyDeviceToHost));
    size_t wrong = 0;
    for (size_t i = 0; i < elements; ++i)
      if (result[i] != expected[i] && wrong++ == 0)
        std::printf("  first mismatch at tile %zu, row %zu, column %zu: 0x%04x, expected 0x%04x\n",
                    i / (static_cast<size_t>(kRows) * kColumns), i / kColumns % kRows, i % kColumns,
                    result[i], expected[i]);
    if (wrong) {
      std::printf("FAIL %s: %zu of %zu elements differ\n", candidate.name, wrong, elements);
      ++failures;
    } else {
      std::printf("PASS %s: D of %d tiles equals bf16(accumulator) bit for bit\n", candidate.name,
                  kTiles);
    }
  }
  cudaFree(acc);
  cudaFree(d);
  if (failures) {
    std::printf("FAIL: %d layout%s\n", failures, failures == 1 ? "" : "s");
    return 4;
  }
  if (skip.empty())
    std::printf("PASS\n");
  else
    std::printf("SKIP runs: %s (every layout compiled for sm_100a)\n", skip.c_str());
  return 0;
}
