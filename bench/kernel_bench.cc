// compile_kernel against the compilers a user would call on the same kernel (docs/design.md
// §Specialization, §Tests): the first layout of a source (NVRTC, its headers precompiled, and the
// PTX compile), a new layout with the same registers per thread and one with a new register count
// (the parse of the headers reused), the last kernel again under another name (one compile with
// the headers precompiled: the least any layout can cost), a memory hit and a disk hit, against
// NVRTC and `nvcc -cubin` of the same source with the transfers inline. Every ratio compares
// medians of one run. Prints one JSON object (bench/report.py --kernel renders it) and, with
// --markdown, the rows of docs/benchmarks.md.
//
// Sources: examples/epilogue/epilogue.cu as it is, with <cuda_bf16.h> included (the header a bf16
// GEMM epilogue includes), writing its output through a CuTe tensor (<cute/tensor.hpp>, as a
// CUTLASS-style epilogue does; where CuTe's headers were found), and with CUTLASS-sized headers
// (CuTe's SM100 MMA and copy atoms and CUTLASS's numeric types). Layouts: the example's Layout D
// (32x32b.x32 x2) first, then Layout F (16x256b.x8 x2), both 64 registers per thread, then
// Layout D by 32x32b.x64 (128 registers per thread: a new register count). Then the
// warp-specialized SM100 GEMM of the fidelity tests (tests/jit/kernels/ws_gemm_sm100.cu: TMA,
// MMA and epilogue warps, a cluster of 2, CuTe), its accumulator read by 32x32b.x32, 16x256b.x8
// (64 registers per thread) and 32x32b.x64 (128).
// Cold means uncached: each repetition renames the kernel, so every cache (ours, and the compute
// cache of the compilers' ptxas) misses; the disk cache is a fresh directory.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_util.h"
#include "runtime/compile/sass.h"
#include "runtime/support/subprocess.h"
#include "tmem/cache.h"
#include "tmem/check.h"
#include "tmem/select.h"
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
const std::string kGemm = std::string(TMEMJIT_SOURCE_DIR) + "/tests/jit/kernels";

tmem::TransferSpec layout(const std::string& name) {
  return tmem::TransferSpec::from_json(read_file(kExample + "/layouts/" + name + ".json")).value();
}

std::vector<tmem::NamedTransfer> transfers(const std::string& load, const std::string& store) {
  tmem::DeviceFunctionOptions ld, st;
  ld.name = "acc_load";
  ld.wait = false;
  ld.column_argument = true;
  st = ld;
  st.name = "acc_store";
  return {{layout(load), ld}, {layout(store), st}};
}

// acc_load of the warp-specialized GEMM as it calls it: acc_load(tmem_base, regs, warp, column).
std::vector<tmem::NamedTransfer> gemm_transfer(const std::string& name) {
  tmem::DeviceFunctionOptions options;
  options.name = "acc_load";
  options.wait = false;
  options.warp_argument = true;
  options.column_argument = true;
  return {{tmem::TransferSpec::from_json(read_file(kGemm + "/ws_gemm_layouts/" + name + ".json"))
               .value(),
           options}};
}

// The source with the transfers inline (device_function's CUDA form): what NVRTC or nvcc
// compiles without libtmemjit's front-end reuse.
std::string inline_source(const std::string& source,
                          const std::vector<tmem::NamedTransfer>& named) {
  std::string header;
  for (const tmem::NamedTransfer& t : named)
    header += tmem::device_function(t.spec, t.options).value().source;
  std::string out = source;
  const std::string include = "#include <tmemjit/transfers.cuh>";
  out.replace(out.find(include), include.size(), header);
  return out;
}

// What an autotuner sweeps after its first layout: every form `select` finds for a chunk of
// Layout D (128x64) and of Layout F (64x128) under each register budget, loads and stores alike.
// All need 64 registers per thread, so one front end serves them. The first layout's form is
// left out (compiled before the sweep).
std::vector<std::vector<tmem::NamedTransfer>> sweep_layouts(
    const std::vector<tmem::NamedTransfer>& first) {
  const std::pair<const char*, const char*> tiles[] = {
      {R"(tmem_datapath_layout("D",128,64))", "tensor((128,64), S[(128,64):(1@tid_in_wg,1)], f32)"},
      {R"(tmem_datapath_layout("F",64,128))",
       "tensor((64,128), S[(4,2,8,2,8,4,2):(32@tid_in_wg,2,4@tid_in_wg,32,4,1@tid_in_wg,1)], "
       "f32)"}};
  const tmem::Scope scope = tmem::Scope::parse("warpgroup").value();
  std::vector<std::vector<tmem::NamedTransfer>> out;
  std::vector<std::string> seen = {first[0].spec.op().to_string()};
  for (const auto& [tmem_text, regs_text] : tiles) {
    const tmem::View tmem_view = tmem::View::parse(tmem_text).value();
    const tmem::View regs_view = tmem::View::parse(regs_text).value();
    for (int budget : {0, 32, 16, 8, 4}) {
      tmem::SelectOptions options;
      options.register_budget = budget;
      auto ld = tmem::select(tmem::Direction::kLoad, scope, tmem_view, regs_view, options);
      auto st = tmem::select(tmem::Direction::kStore, scope, tmem_view, regs_view, options);
      if (!ld.ok() || !st.ok()) continue;
      const std::string op = ld->spec.op().to_string();
      if (std::find(seen.begin(), seen.end(), op) != seen.end()) continue;
      seen.push_back(op);
      out.push_back({{ld->spec, first[0].options}, {st->spec, first[1].options}});
    }
  }
  return out;
}

// Milliseconds to compile `layouts` of `source` after its first layout, one after the other or
// from `threads` threads; a negative value when a compile failed.
double sweep_ms(const tmem::KernelSource& source, const std::vector<tmem::NamedTransfer>& first,
                const std::vector<std::vector<tmem::NamedTransfer>>& layouts,
                const tmem::CompileOptions& options, unsigned threads) {
  if (!tmem::compile_kernel(source, first, options).ok()) return -1;
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  auto work = [&] {
    for (size_t i = next++; i < layouts.size(); i = next++)
      if (!tmem::compile_kernel(source, layouts[i], options).ok()) failed = true;
  };
  const auto start = Clock::now();
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& thread : pool) thread.join();
  return failed ? -1 : ms_since(start);
}

// One source the bench compiles, with its three layouts.
struct Source {
  std::string name;
  std::string text;
  std::vector<std::string> flags;  // front-end options (NVRTC and nvcc alike)
  std::string entry = "epilogue";
  std::string path = "epilogue.cu";
  // The first layout, a new one with the same registers per thread, a new register count.
  std::vector<tmem::NamedTransfer> first, fresh, count;
  int load_calls = 2;  // places the kernel loads at: each has the plan's LDTM
  bool sweep = true;   // the autotuner's sweep (the epilogue's loads and stores)
};

// The epilogue with `header` included before the transfers' include: that prefix is what a new
// layout does not parse.
std::string with_header(const std::string& epilogue, const std::string& header) {
  const std::string include = "#include <tmemjit/transfers.cuh>";
  std::string text = epilogue;
  text.replace(text.find(include), include.size(), header + include);
  return text;
}

// The output through a CuTe tensor, as a CUTLASS-style epilogue writes it: CuTe's headers are the
// front end's work that a new layout no longer pays.
std::string through_cute_tensor(std::string text) {
  const std::string out_decl =
      "  float* tile_out = out + static_cast<long long>(blockIdx.x) * rows * columns;\n";
  text.replace(text.find(out_decl), out_decl.size(),
               out_decl +
                   "  auto out_tensor = cute::make_tensor(cute::make_gmem_ptr(tile_out),\n"
                   "      cute::make_layout(cute::make_shape(rows, columns),\n"
                   "                        cute::make_stride(columns, cute::Int<1>{})));\n");
  const std::string store_line = "tile_out[index[0] * row_stride + column] =";
  text.replace(text.find(store_line), store_line.size(), "out_tensor(index[0], column) =");
  return text;
}

// The front-end flags that find CuTe's headers; none where they are not found.
std::vector<std::string> cute_flags() {
  std::string cute_dir;
#ifdef TMEMJIT_CUTE_INCLUDE_DIR
  cute_dir = TMEMJIT_CUTE_INCLUDE_DIR;
#endif
  if (const char* env = std::getenv("TMEMJIT_CUTE_INCLUDE")) cute_dir = env;
  if (cute_dir.empty() || !std::filesystem::exists(cute_dir + "/cute/tensor.hpp")) return {};
  std::vector<std::string> flags = {"-DNDEBUG", "-default-device", "-I" + cute_dir};
  std::stringstream dirs(TMEMJIT_CUTE_CUDA_INCLUDES);
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty()) flags.push_back("-I" + dir);
  return flags;
}

// The sources of the file comment, the CuTe ones where CuTe's headers are found.
std::vector<Source> bench_sources() {
  const std::string epilogue = read_file(kExample + "/epilogue.cu");
  const auto first_layout = transfers("d_x32_ld", "d_x32_st");
  const auto new_layout = transfers("f_16x256b_ld", "f_16x256b_st");
  const auto new_count = transfers("d_x64_ld", "d_x64_st");
  auto epilogue_source = [&](std::string name, std::string text, std::vector<std::string> flags) {
    Source source;
    source.name = std::move(name);
    source.text = std::move(text);
    source.flags = std::move(flags);
    source.first = first_layout;
    source.fresh = new_layout;
    source.count = new_count;
    return source;
  };
  std::vector<Source> sources = {
      epilogue_source("epilogue.cu", epilogue, {}),
      epilogue_source(
          "epilogue.cu + <cuda_bf16.h>",
          with_header(epilogue, "#include <cuda_bf16.h>  // a bf16 epilogue's header\n"), {})};
  const std::vector<std::string> flags = cute_flags();
  if (flags.empty()) {
    std::fprintf(stderr,
                 "no CuTe headers (TMEMJIT_CUTE_INCLUDE or the configured "
                 "TMEMJIT_CUTE_INCLUDE_DIR): the CuTe row is skipped\n");
    return sources;
  }
  const std::string with_cute = with_header(epilogue, "#include <cute/tensor.hpp>\n");
  const std::string with_cutlass = with_header(with_cute,
                                               "#include <cutlass/numeric_types.h>\n"
                                               "#include <cute/atom/mma_traits_sm100.hpp>\n"
                                               "#include <cute/atom/copy_traits_sm100.hpp>\n"
                                               "#include <cute/atom/copy_traits_sm90_tma.hpp>\n");
  sources.push_back(epilogue_source("epilogue.cu + CuTe tensor (<cute/tensor.hpp>)",
                                    through_cute_tensor(with_cute), flags));
  sources.push_back(epilogue_source("epilogue.cu + CUTLASS-sized (SM100 MMA/copy atoms, TMA)",
                                    with_cutlass, flags));
  Source gemm;
  gemm.name = "warp-specialized SM100 GEMM (CuTe; ws_gemm_sm100.cu)";
  gemm.text = read_file(kGemm + "/ws_gemm_sm100.cu");
  gemm.flags = flags;
  gemm.entry = "ws_gemm_bf16";
  gemm.path = "ws_gemm_sm100.cu";
  gemm.first = gemm_transfer("x32");
  gemm.fresh = gemm_transfer("16x256b");
  gemm.count = gemm_transfer("x64");
  gemm.load_calls = 1;  // its chunk loop is not unrolled
  gemm.sweep = false;
  sources.push_back(std::move(gemm));
  return sources;
}

// What the run shares across sources.
struct Bench {
  std::filesystem::path scratch;
  std::string cuda_include = TMEMJIT_BENCH_CUDA_INCLUDE;
  std::optional<tmem::sass::Disassembler> tool = tmem::sass::find_disassembler();
  std::vector<tmem::NamedTransfer> first_layout = transfers("d_x32_ld", "d_x32_st");
  std::vector<std::vector<tmem::NamedTransfer>> sweep = sweep_layouts(first_layout);
  unsigned pool = 1;  // threads of the parallel sweep
};

// One source's samples over its repetitions, in milliseconds.
struct Samples {
  std::vector<double> first, fresh, fresh_count, again, memory, disk, nvrtc, nvrtc_new, nvcc,
      front_end, new_front_end, new_ptx_compile, sweep_serial, sweep_parallel, background;
  std::string headers;
  nlohmann::json sass = nlohmann::json::object();
};

// One repetition's kernel: renamed, so that no cache answers.
struct Repetition {
  std::string entry;
  std::string text;
  tmem::KernelSource kernel_source;
  tmem::CompileOptions options;
  bool has_headers = false;  // the source includes headers whose parse a new layout reuses
};

// Prints `error`; false, for the step that failed.
bool fail(const tmem::Error& error) {
  std::fprintf(stderr, "%s\n", error.full_text().c_str());
  return false;
}

// The first layout, a new one and a new register count, then the last once more under another
// name (one compile with the headers already parsed: the least any new layout can cost). The
// first two kernels come back for their SASS; none when a compile failed or a new layout did not
// reuse the parse of the headers (said on stderr).
std::optional<std::pair<tmem::Kernel, tmem::Kernel>> time_layouts(const Source& source,
                                                                  const Repetition& rep,
                                                                  Samples& samples) {
  tmem::CompileReport report;
  auto start = Clock::now();
  auto a = tmem::compile_kernel(rep.kernel_source, source.first, rep.options, &report);
  samples.first.push_back(ms_since(start));
  if (!a.ok()) {
    fail(a.error());
    return std::nullopt;
  }
  samples.front_end.push_back(report.front_end_ms);
  samples.headers = report.headers;
  // The first compile left the precompiled header to the background (issue 41 item 3): the new
  // layout is measured once it is made, as an autotuner's next layout after its first run.
  const auto background = Clock::now();
  tmem::wait_background_compiles();
  samples.background.push_back(ms_since(background));
  start = Clock::now();
  auto b = tmem::compile_kernel(rep.kernel_source, source.fresh, rep.options, &report);
  samples.fresh.push_back(ms_since(start));
  samples.new_front_end.push_back(report.front_end_ms);
  samples.new_ptx_compile.push_back(report.ptx_compile_ms);
  if (!b.ok() || (rep.has_headers && report.front_end_cache != tmem::CacheSource::kMemory)) {
    if (!b.ok()) std::fprintf(stderr, "%s\n", b.error().full_text().c_str());
    std::fprintf(stderr, "the new layout did not reuse the parse of the headers (%s)\n",
                 report.headers.c_str());
    return std::nullopt;
  }
  start = Clock::now();
  auto c = tmem::compile_kernel(rep.kernel_source, source.count, rep.options, &report);
  samples.fresh_count.push_back(ms_since(start));
  if (!c.ok() || (rep.has_headers && report.front_end_cache != tmem::CacheSource::kMemory)) {
    if (!c.ok()) std::fprintf(stderr, "%s\n", c.error().full_text().c_str());
    std::fprintf(stderr, "the new register count did not reuse the parse of the headers\n");
    return std::nullopt;
  }
  // The new register count's layout once more, its kernel renamed so that nothing answers but
  // the precompiled headers: one compile of this kernel with its headers already parsed, the
  // least any new layout of this source can cost. first / again bounds every layout's speedup.
  const std::string again_entry = rep.entry + "_again";
  const tmem::KernelSource again_source{
      tmem::Language::kCuda,
      tmem::bench::replace_first(rep.text, rep.entry + "(", again_entry + "("), again_entry,
      source.path};
  start = Clock::now();
  auto d = tmem::compile_kernel(again_source, source.count, rep.options, &report);
  samples.again.push_back(ms_since(start));
  if (!d.ok() || report.cache != tmem::CacheSource::kCompiled ||
      (rep.has_headers && report.front_end_cache != tmem::CacheSource::kMemory)) {
    if (!d.ok()) std::fprintf(stderr, "%s\n", d.error().full_text().c_str());
    std::fprintf(stderr, "the renamed kernel was not one compile with the headers reused\n");
    return std::nullopt;
  }
  return std::pair{std::move(a).value(), std::move(b).value()};
}

// LDTM and STTM in the first and new layouts' SASS against their plans, and local memory.
nlohmann::json sass_counts(const tmem::sass::Disassembler& tool, const Source& source,
                           const tmem::Kernel& first, const tmem::Kernel& fresh) {
  nlohmann::json sass = nlohmann::json::object();
  for (const auto& [name, kernel, named] :
       {std::tuple{"first", &first, &source.first}, std::tuple{"new", &fresh, &source.fresh}}) {
    const tmem::sass::Listing listing(tmem::sass::disassemble(tool, kernel->cubin()).value());
    const tmem::Plan ld = tmem::check((*named)[0].spec).value();
    const int stores =
        named->size() > 1 ? tmem::check((*named)[1].spec)->instructions_per_warp() : 0;
    sass[name] = {{"ldtm", listing.count("LDTM")},
                  {"sttm", listing.count("STTM")},
                  {"ldtm_plan", source.load_calls * ld.instructions_per_warp()},
                  {"sttm_plan", stores},
                  {"local_memory", listing.uses_local_memory()}};
  }
  return sass;
}

// 200 memory hits, then a disk hit after the memory cache is emptied.
bool time_cache_hits(const Source& source, const Repetition& rep, Samples& samples) {
  tmem::CompileReport report;
  for (int i = 0; i < 200; ++i) {
    const auto start = Clock::now();
    auto hit = tmem::compile_kernel(rep.kernel_source, source.first, rep.options, &report);
    samples.memory.push_back(ms_since(start));
    if (!hit.ok() || report.cache != tmem::CacheSource::kMemory) return false;
  }
  (void)tmem::clear_cache(false);
  const auto start = Clock::now();
  auto from_disk = tmem::compile_kernel(rep.kernel_source, source.first, rep.options, &report);
  samples.disk.push_back(ms_since(start));
  return from_disk.ok() && report.cache == tmem::CacheSource::kDisk;
}

// The autotuner's sweep, each time under a fresh name and with the caches emptied (the layouts'
// own translation units do not depend on the name): one after the other, then from a pool of the
// machine's threads.
bool time_sweeps(const Bench& bench, const Source& source, const Repetition& rep,
                 Samples& samples) {
  for (auto [threads, sweep_samples] :
       {std::pair{1u, &samples.sweep_serial}, {bench.pool, &samples.sweep_parallel}}) {
    if (!source.sweep) break;
    (void)tmem::clear_cache(true);
    const std::string name = "epilogue" + tmem::bench::unique_suffix();
    const tmem::KernelSource swept{
        tmem::Language::kCuda,
        "// " + name + "\n" + tmem::bench::replace_first(source.text, "epilogue(", name + "("),
        name, "epilogue.cu"};
    const double ms = sweep_ms(swept, bench.first_layout, bench.sweep, rep.options, threads);
    if (ms < 0) {
      std::fprintf(stderr, "a layout of the sweep failed to compile\n");
      return false;
    }
    sweep_samples->push_back(ms);
  }
  return true;
}

// The same kernel with the transfers inline, through NVRTC (each layout) and nvcc.
bool time_inline_compilers(const Bench& bench, const Source& source, const Repetition& rep,
                           Samples& samples) {
  const std::string whole = inline_source(rep.text, source.first);
  tmem::CompileOptions options;
  options.extra_options = {"--include-path=" + bench.cuda_include, "--std=c++17"};
  options.extra_options.insert(options.extra_options.end(), source.flags.begin(),
                               source.flags.end());
  for (auto [layouts, nvrtc_samples] :
       {std::pair{&source.first, &samples.nvrtc}, {&source.fresh, &samples.nvrtc_new}}) {
    const auto start = Clock::now();
    auto by_nvrtc = tmem::compile_cuda(inline_source(rep.text, *layouts), "", options);
    nvrtc_samples->push_back(ms_since(start));
    if (!by_nvrtc.ok()) return fail(by_nvrtc.error());
  }
  const std::string file = (bench.scratch / source.path).string();
  std::ofstream(file) << whole;
  const auto start = Clock::now();
  std::vector<std::string> nvcc_argv = {
      TMEMJIT_BENCH_NVCC, "-cubin", "-arch=sm_100a",
      "-std=c++17",       "-o",     (bench.scratch / "nvcc.cubin").string()};
  for (const std::string& flag : source.flags)
    if (flag.rfind("-I", 0) == 0 || flag.rfind("-D", 0) == 0) nvcc_argv.push_back(flag);
  nvcc_argv.push_back(file);
  auto by_nvcc = tmem::run_process(nvcc_argv);
  samples.nvcc.push_back(ms_since(start));
  if (!by_nvcc.ok() || by_nvcc->exit_code != 0) {
    std::fprintf(stderr, "nvcc failed: %s\n",
                 by_nvcc.ok() ? by_nvcc->output.c_str() : by_nvcc.error().message().c_str());
    return false;
  }
  return true;
}

// One repetition of every measurement of `source`; false when one failed.
bool measure(const Bench& bench, const Source& source, int rep_index, Samples& samples) {
  Repetition rep;
  // A fresh entry name per repetition: the code differs, so no compiler cache (the ComputeCache
  // under ~/.nv that NVRTC's, nvcc's and nvJitLink's ptxas keep) answers. The name in a first
  // line too: the text before the transfers' include differs, so the first layout parses (and
  // precompiles) the headers as a new process would.
  rep.entry = source.entry + tmem::bench::unique_suffix();
  rep.text = "// " + rep.entry + "\n" +
             tmem::bench::replace_first(source.text, source.entry + "(", rep.entry + "(");
  rep.kernel_source = {tmem::Language::kCuda, rep.text, rep.entry, source.path};
  rep.options.nvrtc_options = source.flags;
  rep.has_headers = source.text.find("#include <c") != std::string::npos;  // cuda_, cute/
  const auto dir = bench.scratch / ("cache" + std::to_string(rep_index));
  tmem::set_cache_dir(dir.string());
  (void)tmem::clear_cache(false);
  auto kernels = time_layouts(source, rep, samples);
  if (!kernels) return false;
  if (rep_index == 0 && bench.tool)
    samples.sass = sass_counts(*bench.tool, source, kernels->first, kernels->second);
  return time_cache_hits(source, rep, samples) && time_sweeps(bench, source, rep, samples) &&
         time_inline_compilers(bench, source, rep, samples);
}

// The row of one source: medians of its samples, and the ratios docs/benchmarks.md shows.
nlohmann::json row_of(const Bench& bench, const Source& source, const Samples& s) {
  nlohmann::json row = {{"source", source.name},
                        {"first_layout_ms", median(s.first)},
                        {"front_end_ms", median(s.front_end)},
                        {"headers", s.headers},
                        {"new_layout_ms", median(s.fresh)},
                        {"new_count_ms", median(s.fresh_count)},
                        // The same kernel compiled once more, its headers precompiled.
                        {"again_ms", median(s.again)},
                        // Where a new layout's time goes: NVRTC after the headers, then
                        // the PTX compile of the whole kernel.
                        {"new_layout_front_end_ms", median(s.new_front_end)},
                        {"new_layout_ptx_compile_ms", median(s.new_ptx_compile)},
                        {"memory_hit_ms", median(s.memory)},
                        {"disk_hit_ms", median(s.disk)},
                        {"nvrtc_ms", median(s.nvrtc)},
                        // What plain NVRTC pays for the new layout: its inline source.
                        {"nvrtc_new_layout_ms", median(s.nvrtc_new)},
                        {"nvcc_ms", median(s.nvcc)},
                        // What the first layout left to the background after it returned.
                        {"background_pch_wait_ms", median(s.background)},
                        // The first layout against plain NVRTC of its inline source: the
                        // precompiled header is made in the background, so <= 1.05 (issue 41).
                        {"first_vs_nvrtc_inline", median(s.first) / median(s.nvrtc)},
                        {"speedup_new_vs_first", median(s.first) / median(s.fresh)},
                        {"speedup_new_count_vs_first", median(s.first) / median(s.fresh_count)},
                        // The most any new layout can gain: first / one compile with the
                        // headers precompiled. And what a new register count pays on top.
                        {"speedup_bound", median(s.first) / median(s.again)},
                        {"new_count_vs_again", median(s.fresh_count) / median(s.again)},
                        // A new layout against plain NVRTC of its inline source (< 1: ours
                        // is faster).
                        {"new_vs_nvrtc_inline", median(s.fresh) / median(s.nvrtc_new)},
                        {"sass", s.sass}};
  if (source.sweep) {  // An autotuner's sweep after the first layout (sweep_layouts).
    row["sweep_layouts"] = bench.sweep.size();
    row["sweep_threads"] = bench.pool;
    row["sweep_serial_ms"] = median(s.sweep_serial);
    row["sweep_parallel_ms"] = median(s.sweep_parallel);
  }
  return row;
}

// The rows of docs/benchmarks.md.
void print_markdown(const nlohmann::json& out) {
  auto time = [](double ms) {
    char text[32];
    if (ms < 1)
      std::snprintf(text, sizeof text, "%.1f µs", ms * 1000);
    else
      std::snprintf(text, sizeof text, "%.1f ms", ms);
    return std::string(text);
  };
  std::printf(
      "| source | compile_kernel: first layout | new layout, same registers (NVRTC, PTX "
      "compile) | speedup | new register count | speedup | the same kernel again (bound) | "
      "against NVRTC of the inline source | memory hit | disk hit | NVRTC, transfers inline "
      "(first / new layout) | nvcc -cubin |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& s : out["sources"])
    std::printf(
        "| %s | %s (headers %s) | %s (%s, %s) | %.1f× | %s | %.1f× | %s (%.1f×) | %.2f× | %s | "
        "%s | %s / %s | %s |\n",
        s["source"].get<std::string>().c_str(), time(s["first_layout_ms"]).c_str(),
        s["headers"].get<std::string>().c_str(), time(s["new_layout_ms"]).c_str(),
        time(s["new_layout_front_end_ms"]).c_str(), time(s["new_layout_ptx_compile_ms"]).c_str(),
        s["speedup_new_vs_first"].get<double>(), time(s["new_count_ms"]).c_str(),
        s["speedup_new_count_vs_first"].get<double>(), time(s["again_ms"]).c_str(),
        s["speedup_bound"].get<double>(), s["new_vs_nvrtc_inline"].get<double>(),
        time(s["memory_hit_ms"]).c_str(), time(s["disk_hit_ms"]).c_str(),
        time(s["nvrtc_ms"]).c_str(), time(s["nvrtc_new_layout_ms"]).c_str(),
        time(s["nvcc_ms"]).c_str());
  for (const auto& s : out["sources"])
    for (const auto& [name, counts] : s["sass"].items())
      std::printf(
          "\nSASS of the %s layout (%s): LDTM %d (plan %d), STTM %d (plan %d), local "
          "memory: %s",
          name.c_str(), s["source"].get<std::string>().c_str(), counts["ldtm"].get<int>(),
          counts["ldtm_plan"].get<int>(), counts["sttm"].get<int>(), counts["sttm_plan"].get<int>(),
          counts["local_memory"].get<bool>() ? "yes" : "no");
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  const bool markdown = argc > 1 && std::strcmp(argv[1], "--markdown") == 0;
  const int reps =
      std::getenv("TMEMJIT_BENCH_REPS") ? std::atoi(std::getenv("TMEMJIT_BENCH_REPS")) : 5;
  const std::vector<Source> sources = bench_sources();
  const int cute_reps = std::max(1, std::min(reps, 3));
  Bench bench;
  bench.scratch = std::filesystem::temp_directory_path() /
                  ("tmemjit_kernel_bench_" + std::to_string(::getpid()));
  std::filesystem::create_directories(bench.scratch);
  nlohmann::json out = {{"reps", reps}, {"sources", nlohmann::json::array()}};
  nlohmann::json sweep_forms = nlohmann::json::array();
  for (const auto& named : bench.sweep) sweep_forms.push_back(named[0].spec.op().to_string());
  out["sweep_forms"] = sweep_forms;
  bench.pool =
      std::max(1u, std::min(std::thread::hardware_concurrency(), unsigned(bench.sweep.size())));
  for (const auto& source : sources) {
    Samples samples;
    const int source_reps = source.flags.empty() ? reps : cute_reps;
    for (int rep = 0; rep < source_reps; ++rep)
      if (!measure(bench, source, rep, samples)) return 1;
    out["sources"].push_back(row_of(bench, source, samples));
  }
  std::error_code ec;
  std::filesystem::remove_all(bench.scratch, ec);
  if (markdown)
    print_markdown(out);
  else
    std::printf("%s\n", out.dump(2).c_str());
  return 0;
}
