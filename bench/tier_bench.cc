// The tiers of compile_kernel (docs/specialization.md §Tiers, docs/benchmarks.md): on
// examples/epilogue/epilogue.cu, the generic tier's compile and code against the specialized
// kernel's, then, with the generic tier cached, compile_kernel(lazy) for layouts it has never seen
// against eager for new layouts, and the descriptor build of one transfer. Every ratio compares
// medians of one run. Prints one JSON object.
// New layouts of one signature: Layout D (32x32b.x32 twice, 64 registers per thread) at a TMEM
// column offset k, a new spec for every k.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/generic_transfer.h"
#include "tmem/cache.h"
#include "tmem/specialize.h"

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::string kExample = std::string(TMEMJIT_SOURCE_DIR) + "/examples/epilogue";
const char* kSplit = ".rearrange(\"(g r) (k c) -> g k r c\", g=4, k=2)";

// Layout D's chunk, its TMEM `column` columns to the right.
tmem::TransferSpec layout_d(bool load, int column) {
  const std::string op =
      std::string("tcgen05.") + (load ? "ld" : "st") + ".sync.aligned.32x32b.x32.b32";
  const std::string tmem = "tensor((128,64), S[(128,64):(1@TLane,1@TCol)] + " +
                           std::to_string(column) + "@TCol, f32)" + kSplit;
  const std::string regs =
      std::string("tensor((128,64), S[(128,64):(1@tid_in_wg,1)], f32)") + kSplit;
  return tmem::TransferSpec::from_fields(op, "warpgroup", tmem, regs).value();
}

std::vector<tmem::NamedTransfer> transfers(int column) {
  tmem::DeviceFunctionOptions ld, st;
  ld.name = "acc_load";
  ld.wait = false;
  ld.column_argument = true;
  st = ld;
  st.name = "acc_store";
  return {{layout_d(true, column), ld}, {layout_d(false, column), st}};
}

nlohmann::json code_json(const tmem::CodeStats& code) {
  return {{"registers", code.registers},
          {"local_bytes", code.local_bytes},
          {"instructions", code.instructions},
          {"ldtm", code.ldtm},
          {"sttm", code.sttm}};
}

}  // namespace

int main() {
  const int reps =
      std::getenv("TMEMJIT_BENCH_REPS") ? std::atoi(std::getenv("TMEMJIT_BENCH_REPS")) : 20;
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tmemjit-tier-bench-" + std::to_string(getpid()));
  tmem::set_cache_dir(dir.string());
  tmem::KernelSource source;
  source.text = read_file(kExample + "/epilogue.cu");
  source.path = "epilogue.cu";
  source.entry = "epilogue";
  tmem::CompileOptions eager, generic, lazy;
  generic.specialization = tmem::Specialization::kGeneric;
  lazy.specialization = tmem::Specialization::kLazy;
  nlohmann::json out;
  int column = 0;
  auto fail = [](const tmem::Error& error) {
    std::fprintf(stderr, "error: %s\n", error.full_text().c_str());
    return 1;
  };

  // The first layout: specialized, then the generic tier of its signature.
  tmem::CompileReport specialized_report, generic_report;
  auto start = Clock::now();
  auto first = tmem::compile_kernel(source, transfers(column++), eager, &specialized_report);
  const double specialized_ms = ms_since(start);
  if (!first) return fail(first.error());
  start = Clock::now();
  auto tier = tmem::compile_kernel(source, transfers(column++), generic, &generic_report);
  const double generic_ms = ms_since(start);
  if (!tier) return fail(tier.error());
  out["specialized_first_ms"] = specialized_ms;
  out["generic_compile_ms"] = generic_ms;
  out["specialized_code"] = code_json(specialized_report.code);
  out["generic_code"] = code_json(generic_report.code);
  out["specialized_cubin_bytes"] = first->cubin().size();
  out["generic_cubin_bytes"] = tier->cubin().size();

  // New layouts: lazy (the generic tier cached) against eager.
  std::vector<double> lazy_ms, eager_ms;
  int generic_answers = 0;
  for (int r = 0; r < reps; ++r) {
    const auto named = transfers(column++);
    tmem::CompileReport report;
    start = Clock::now();
    auto kernel = tmem::compile_kernel(source, named, lazy, &report);
    lazy_ms.push_back(ms_since(start));
    if (!kernel) return fail(kernel.error());
    generic_answers += report.tier == "generic";
  }
  // The lazy calls' specialized kernels compile in the background: eager is timed once they have
  // landed, so it does not share the cores with them (issue 39 item 10).
  tmem::wait_background_compiles();
  for (int r = 0; r < std::max(3, reps / 4); ++r) {
    const auto named = transfers(column++);
    start = Clock::now();
    auto kernel = tmem::compile_kernel(source, named, eager);
    eager_ms.push_back(ms_since(start));
    if (!kernel) return fail(kernel.error());
  }
  out["lazy_new_layout_ms"] = median(lazy_ms);
  out["lazy_generic_answers"] = generic_answers;
  out["lazy_reps"] = reps;
  out["eager_new_layout_ms"] = median(eager_ms);
  out["eager_over_lazy"] = median(eager_ms) / median(lazy_ms);

  // The descriptor of one transfer: its check, NAME_coord's map and the descriptor words.
  std::vector<double> descriptor_us;
  tmem::DeviceFunctionOptions options;
  options.name = "acc_load";
  for (int r = 0; r < reps; ++r) {
    const tmem::TransferSpec spec = layout_d(true, column++);
    start = Clock::now();
    auto code = tmem::kernels::prepare_transfer(spec, options, tmem::kernels::CoordDetail::kForm);
    if (!code) return fail(code.error());
    auto form = tmem::kernels::generic_form(*code, tmem::Target::kSm100a, source.text);
    descriptor_us.push_back(1000 * ms_since(start));
    if (!form.transfer) {
      std::fprintf(stderr, "error: %s\n", form.why_not.c_str());
      return 1;
    }
  }
  out["descriptor_us"] = median(descriptor_us);

  // The generic tier built for the emulation (sm_90) against sm_100a's (issue 39 item 8: within
  // 1.5x): each a miss with its target's precompiled headers made by a first build.
  for (const tmem::Target target : {tmem::Target::kSm100a, tmem::Target::kSm90}) {
    tmem::CompileOptions options = generic;
    options.target = target;
    if (auto warm = tmem::compile_kernel(source, transfers(column++), options); !warm)
      return fail(warm.error());
    tmem::clear_cache(true);
    start = Clock::now();
    auto built = tmem::compile_kernel(source, transfers(column++), options);
    if (!built) return fail(built.error());
    out[std::string("generic_") + std::string(tmem::to_string(target)) + "_ms"] = ms_since(start);
  }
  out["generic_sm_90_over_sm_100a"] =
      out["generic_sm_90_ms"].get<double>() / out["generic_sm_100a_ms"].get<double>();
  std::printf("%s\n", out.dump(2).c_str());
  // No background compile may still write into the folder removed next.
  tmem::wait_background_compiles();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return 0;
}
