// The lowering of Blackwell kernels for Hopper (docs/emulation.md §Blackwell kernels on Hopper),
// timed against the NVRTC compile it follows (issue 40 item 6: at most 50 ms for a DeepGEMM-sized
// module and 10% of that compile), and the rest of emulate's cost: NVRTC's compile of the device
// library and the sm_90 PTX compile. Inputs: the warp-specialized SM100 GEMM of tests/jit/kernels
// (CuTe's headers from the nvidia-cutlass wheel; skipped without them), the lowering tests' own
// modules, and a synthetic one of 2,000 tcgen05 statements among 60,000 others. Prints one JSON
// object; medians of TMEMJIT_BENCH_REPS runs (default 20).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/user_emulation.h"
#include "tmem/emulate.h"
#include "tmem/specialize.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::string kRoot = TMEMJIT_SOURCE_DIR;

// The median time of lower_user_ptx over `reps` runs, and what it lowered.
nlohmann::json time_lowering(const std::string& ptx, int reps) {
  std::vector<double> ms;
  size_t statements = 0;
  for (int r = 0; r < reps; ++r) {
    const auto start = Clock::now();
    auto lowered = tmem::kernels::lower_user_ptx(ptx, "bench");
    ms.push_back(ms_since(start));
    if (!lowered) return {{"error", lowered.error().message()}};
    statements = lowered->instructions.size();
  }
  std::sort(ms.begin(), ms.end());
  return {
      {"ptx_kb", ptx.size() / 1024}, {"statements", statements}, {"lower_ms", ms[ms.size() / 2]}};
}

// 2,000 tcgen05 statements (ld, st, mma, commit, fence in turn) among 60,000 plain ones: the size
// of DeepGEMM's largest modules.
std::string synthetic_module() {
  std::ostringstream os;
  os << ".version 8.6\n.target sm_100a\n.address_size 64\n.visible .entry big()\n{\n"
     << "\t.reg .b32 %r<64>;\n\t.reg .b64 %rd<8>;\n\t.reg .pred %p<4>;\n\t.reg .f32 %f<8>;\n";
  for (int i = 0; i < 2000; ++i) {
    for (int j = 0; j < 30; ++j) os << "\tadd.s32 %r" << (j % 60) << ", %r1, " << j << ";\n";
    switch (i % 5) {
      case 0:
        os << "\ttcgen05.ld.sync.aligned.32x32b.x2.b32 {%r2, %r3}, [%r1];\n";
        break;
      case 1:
        os << "\ttcgen05.st.sync.aligned.32x32b.x2.b32 [%r1], {%r2, %r3};\n";
        break;
      case 2:
        os << "\ttcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r4, %p1;\n";
        break;
      case 3:
        os << "\ttcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r5];\n";
        break;
      default:
        os << "\ttcgen05.fence::after_thread_sync;\n";
    }
  }
  os << "\tret;\n}\n";
  return os.str();
}

}  // namespace

int main() {
  const int reps =
      std::getenv("TMEMJIT_BENCH_REPS") ? std::atoi(std::getenv("TMEMJIT_BENCH_REPS")) : 20;
  nlohmann::json out;
  for (const char* name : {"one_cta", "cta_pair"})
    out[name] = time_lowering(
        read_file(kRoot + "/tests/kernels/emulation_inputs/" + std::string(name) + ".ptx"), reps);
  out["synthetic_2000"] = time_lowering(synthetic_module(), reps);

#ifdef TMEMJIT_CUTE_INCLUDE_DIR
  // The GEMM: NVRTC's compile for sm_100a (the PTX the lowering reads), then the lowering, then
  // what emulate adds (the device library's compile, the PTX compile), through compile_kernel.
  tmem::KernelSource source;
  source.text = read_file(kRoot + "/tests/jit/kernels/ws_gemm_sm100.cu");
  source.entry = "ws_gemm_bf16";
  source.path = "ws_gemm_sm100.cu";
  tmem::DeviceFunctionOptions options;
  options.name = "acc_load";
  options.wait = false;
  options.warp_argument = true;
  options.column_argument = true;
  auto spec = tmem::TransferSpec::from_json(
      read_file(kRoot + "/tests/jit/kernels/ws_gemm_layouts/x32.json"));
  if (!spec) return std::fprintf(stderr, "error: %s\n", spec.error().message().c_str()), 1;
  const std::vector<tmem::NamedTransfer> transfers = {{*spec, options}};
  tmem::CompileOptions compile;
  compile.nvrtc_options = {std::string("-I") + TMEMJIT_CUTE_INCLUDE_DIR, "-default-device"};
  tmem::CompileReport report;
  auto kernel = tmem::compile_kernel(source, transfers, compile, &report);
  if (!kernel) return std::fprintf(stderr, "error: %s\n", kernel.error().full_text().c_str()), 1;
  nlohmann::json gemm = time_lowering(std::string(kernel->ptx()), reps);
  gemm["nvrtc_ms"] = report.front_end_ms;
  gemm["lower_over_nvrtc"] = gemm["lower_ms"].get<double>() / report.front_end_ms;
  auto emulated = tmem::emulate_ptx(kernel->ptx());
  if (!emulated)
    return std::fprintf(stderr, "error: %s\n", emulated.error().full_text().c_str()), 1;
  gemm["library_ms"] = emulated->report.library_ms;
  gemm["ptx_compile_ms"] = emulated->report.ptx_compile_ms;
  gemm["registers"] = emulated->report.code.registers;
  gemm["local_bytes"] = emulated->report.code.local_bytes;
  out["ws_gemm"] = gemm;
#else
  out["ws_gemm"] = "skipped: CuTe headers not found (pip install nvidia-cutlass==4.2.0.0)";
#endif
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}
