// softmax: the FA4-style softmax of softmax.cu specialized at run time for a few S layouts. What an
// attention kernel's host does with libtmemjit:
//   1. pick each candidate layout of one chunk of S with tmem::select (a load, and the store that
//      stands in for the MMA);
//   2. get P's layout with tmem::packed_twin(load, bf16): the 16-bit store whose register q holds
//      the load's registers 2q and 2q + 1 in the same thread, placed over S's columns; show with
//      tmem::same_owners that every element of P sits in the thread that held it in S;
//   3. tmem::compile_kernel for sm_100a, checking the SASS (the plan's LDTM/STTM, no local memory)
//      from CompileReport::code; where a GPU runs it (tcgen05 on Blackwell, the sm_90 emulation on
//      Hopper), run it and compare P, the row maxima and the row sums with a host reference.
// A layout the kernel cannot use (a 64-row tile) stops at its static_assert, with its message.
// The chunk geometry is the kernel's own (s_load_shape, s_load_columns, ...): the host passes no
// chunk width, no column count of a transfer and no allocation size. Prints a PASS or FAIL line per
// layout; exits non-zero on wrong data or a wrong compile.
// Usage: softmax [--compile-only] [DIR of softmax.cu]
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tmem/check.h"
#include "tmem/coords.h"
#include "tmem/select.h"
#include "tmem/specialize.h"

#ifndef SOFTMAX_DIR
#error "SOFTMAX_DIR names the directory of softmax.cu"
#endif

namespace {

// One candidate: a chunk of S as a TMEM view and a register view (select picks the form).
struct Candidate {
  const char* name;
  const char* tmem;
  const char* regs;
  int register_budget;  // 0: the widest form
  const char* refusal;  // where the kernel refuses the layout: its static_assert's words
};

constexpr Candidate kCandidates[] = {
    {"32x32b.x32, chunks of 32 columns", "tensor((128,32), S[(128,32):(1@TLane,1@TCol)], f32)",
     "tensor((128,32), S[(128,32):(1@tid_in_wg,1)], f32)", 0, nullptr},
    {"32x32b.x64, chunks of 64 columns", "tensor((128,64), S[(128,64):(1@TLane,1@TCol)], f32)",
     "tensor((128,64), S[(128,64):(1@tid_in_wg,1)], f32)", 0, nullptr},
    {"32x32b.x16 x4, chunks of 64 columns", "tensor((128,64), S[(128,64):(1@TLane,1@TCol)], f32)",
     "tensor((128,64), S[(128,64):(1@tid_in_wg,1)], f32)", 16, nullptr},
    // A row over four threads (16x256b: thread t holds rows t/4 and t/4 + 8 of its 16-lane half,
    // columns 2(t%4) and 2(t%4) + 1 of every 8): the row max and sums cross threads.
    {"16x256b.x4 x2, chunks of 32 columns", "tensor((128,32), S[(128,32):(1@TLane,1@TCol)], f32)",
     "tensor((128,32), S[(4,2,2,8,4,4,2):(32@tid_in_wg,16,2,4@tid_in_wg,4,1@tid_in_wg,1)], f32)", 0,
     nullptr},
    // Layout F, 64 rows in 16-lane halves of the warps' slabs: not a 128-row S.
    {"Layout F 64 x 64 (16x256b), refused by the kernel", "tmem_datapath_layout(\"F\",64,64)",
     "tensor((64,64), S[(4,2,8,8,4,2):(32@tid_in_wg,2,4@tid_in_wg,4,1@tid_in_wg,1)], f32)", 0,
     "softmax: a chunk of S must hold all 128 rows"},
};

constexpr int kRows = 128;
constexpr int kColumns = 128;  // S's columns: the problem size, given to the kernel as -D
constexpr int kTiles = 132;    // CTAs, one tile each

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

float from_bf16(std::uint16_t bits) {
  const std::uint32_t word = static_cast<std::uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &word, sizeof value);
  return value;
}

// The load that reads back what a store wrote: the same views, the tcgen05.ld of the same shape.
tmem::Result<tmem::TransferSpec> read_back(const tmem::TransferSpec& store) {
  auto op = tmem::Opcode::make(tmem::Direction::kLoad, store.op().shape(), store.op().num(), false);
  if (!op) return op.error();
  return tmem::TransferSpec::make(*op, store.scope(), store.tmem(), store.regs());
}

// The host reference: each row's max, P = exp(S - max) and its sum.
struct Reference {
  std::vector<float> row_max;
  std::vector<double> p, row_sum;
};

Reference reference(const std::vector<float>& s) {
  Reference ref;
  const size_t rows = s.size() / kColumns;
  ref.row_max.resize(rows);
  ref.row_sum.resize(rows);
  ref.p.resize(s.size());
  for (size_t r = 0; r < rows; ++r) {
    float m = s[r * kColumns];
    for (int c = 1; c < kColumns; ++c) m = std::fmax(m, s[r * kColumns + c]);
    double sum = 0;
    for (int c = 0; c < kColumns; ++c) {
      const double p = std::exp(static_cast<double>(s[r * kColumns + c]) - m);
      ref.p[r * kColumns + c] = p;
      sum += p;
    }
    ref.row_max[r] = m;
    ref.row_sum[r] = sum;
  }
  return ref;
}

}  // namespace

int main(int argc, char** argv) {
  bool compile_only = false;
  std::string dir = SOFTMAX_DIR;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--compile-only") == 0)
      compile_only = true;
    else
      dir = argv[i];
  }
  tmem::KernelSource source;
  source.text = read_file(dir + "/softmax.cu");
  source.path = "softmax.cu";
  source.entry = "softmax";
  if (source.text.empty()) {
    std::fprintf(stderr, "error: cannot read %s/softmax.cu\n", dir.c_str());
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
  sm100a.nvrtc_options = {"-DSOFTMAX_COLUMNS=" + std::to_string(kColumns)};
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

  // S: a few thousand distinct values in [-8, 8), exact in fp32.
  const size_t elements = static_cast<size_t>(kTiles) * kRows * kColumns;
  std::vector<float> host_s(elements);
  for (size_t i = 0; i < elements; ++i)
    host_s[i] = static_cast<float>((i * 2654435761u) % 4096) / 256.0f - 8.0f;
  const Reference ref = reference(host_s);
  float *s = nullptr, *row_max = nullptr, *row_sum = nullptr;
  std::uint16_t* p = nullptr;
  if (skip.empty()) {
    CUDA_OK(cudaMalloc(&s, elements * sizeof(float)));
    CUDA_OK(cudaMalloc(&p, elements * sizeof(std::uint16_t)));
    CUDA_OK(cudaMalloc(&row_max, kTiles * kRows * sizeof(float)));
    CUDA_OK(cudaMalloc(&row_sum, kTiles * kRows * sizeof(float)));
    CUDA_OK(cudaMemcpy(s, host_s.data(), elements * sizeof(float), cudaMemcpyHostToDevice));
  }

  int failures = 0;
  for (const Candidate& candidate : kCandidates) {
    std::printf("%s\n", candidate.name);
    auto tmem_view = tmem::View::parse(candidate.tmem);
    if (!tmem_view) return fail(tmem_view.error());
    auto regs_view = tmem::View::parse(candidate.regs);
    if (!regs_view) return fail(regs_view.error());
    const tmem::SelectOptions select_options{.register_budget = candidate.register_budget};
    auto load = tmem::select(tmem::Direction::kLoad, tmem::Scope::warpgroup(), *tmem_view,
                             *regs_view, select_options);
    if (!load) return fail(load.error());
    auto store = tmem::select(tmem::Direction::kStore, tmem::Scope::warpgroup(), *tmem_view,
                              *regs_view, select_options);
    if (!store) return fail(store.error());
    // P over S, and the proof that it stays in S's threads.
    auto twin = tmem::packed_twin(load->spec, tmem::DType::kBF16);
    if (!twin) return fail(twin.error());
    auto owners = tmem::same_owners(load->spec, *twin);
    if (!owners) return fail(owners.error());
    auto p_load = read_back(*twin);
    if (!p_load) return fail(p_load.error());
    std::printf("  S: %s x%d; P: %s\n  %s\n", load->spec.op().to_string().c_str(),
                load->plan.instructions_per_warp(), twin->op().to_string().c_str(),
                owners->to_string().c_str());
    if (!owners->same) {
      std::printf("FAIL %s: P is not held by S's threads\n", candidate.name);
      ++failures;
      continue;
    }

    tmem::DeviceFunctionOptions options;
    options.wait = false;  // the kernel waits itself: chunk j + 1 in flight while j is used
    options.column_argument = true;  // chunk loops step by NAME_columns
    auto named = [&](const tmem::TransferSpec& spec, const char* name) {
      tmem::DeviceFunctionOptions o = options;
      o.name = name;
      return tmem::NamedTransfer{spec, o};
    };
    const std::vector<tmem::NamedTransfer> transfers = {
        named(store->spec, "s_store"), named(load->spec, "s_load"), named(*twin, "p_store"),
        named(*p_load, "p_load")};

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
    // The SASS: every transfer's instructions once per chunk and pass, no local memory.
    auto ipw = [&](int i) {
      return report.transfers[static_cast<size_t>(i)].instructions_per_warp;
    };
    const int chunks = kColumns / static_cast<int>(load->spec.regs().base().shape()[1]);
    const int ldtm = chunks * (2 * ipw(1) + ipw(3)), sttm = chunks * (ipw(0) + ipw(2));
    std::printf("  sm_100a: %s (expected ldtm=%d sttm=%d, local_bytes=0)\n",
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
    CUDA_OK(cudaMemset(p, 0xFF, elements * sizeof(std::uint16_t)));  // NaN where nothing lands
    void* args[] = {&s, &p, &row_max, &row_sum};
    tmem::LaunchConfig config;
    config.grid = {kTiles, 1, 1};
    config.block = {kRows, 1, 1};
    if (auto launched = runnable->launch(config, args); !launched) return fail(launched.error());
    CUDA_OK(cudaDeviceSynchronize());
    auto warnings = runnable->emulation_check();
    if (!warnings) return fail(warnings.error());
    for (const std::string& warning : *warnings) std::printf("  emulation: %s\n", warning.c_str());

    std::vector<std::uint16_t> host_p(elements);
    std::vector<float> host_max(kTiles * kRows), host_sum(kTiles * kRows);
    CUDA_OK(cudaMemcpy(host_p.data(), p, elements * sizeof(std::uint16_t), cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(host_max.data(), row_max, host_max.size() * sizeof(float),
                       cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(host_sum.data(), row_sum, host_sum.size() * sizeof(float),
                       cudaMemcpyDeviceToHost));
    size_t wrong = 0;
    for (size_t i = 0; i < elements; ++i) {
      // bf16 keeps 8 significant bits: within one unit of the last place of the exact value.
      const float got = from_bf16(host_p[i]);
      if (!(std::fabs(got - ref.p[i]) <= ref.p[i] / 128)) {
        if (wrong++ == 0)
          std::printf("  P: first mismatch at row %zu, column %zu: %g, expected %g\n", i / kColumns,
                      i % kColumns, got, ref.p[i]);
      }
    }
    for (size_t r = 0; r < host_max.size(); ++r) {
      const bool ok = host_max[r] == ref.row_max[r] &&
                      std::fabs(host_sum[r] - ref.row_sum[r]) <= 1e-4 * ref.row_sum[r];
      if (!ok && wrong++ == 0)
        std::printf("  row %zu: max %g sum %g, expected %g and %g\n", r, host_max[r], host_sum[r],
                    ref.row_max[r], ref.row_sum[r]);
    }
    if (wrong) {
      std::printf("FAIL %s: %zu values differ from the host reference\n", candidate.name, wrong);
      ++failures;
    } else {
      std::printf("PASS %s: P, row maxima and row sums of %d tiles match the host reference\n",
                  candidate.name, kTiles);
    }
  }
  cudaFree(s);
  cudaFree(p);
  cudaFree(row_max);
  cudaFree(row_sum);
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
