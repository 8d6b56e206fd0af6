// tmemjit emulate: a module written for a tcgen05 target (PTX, or CUDA C++ compiled for sm_100a
// first) lowered to run on Hopper, through tmem::emulate_ptx / emulate_cuda (docs/emulation.md
// §Blackwell kernels on Hopper).
#include <charconv>
#include <cstdint>
#include <iostream>

#include "tmem/emulate.h"
#include "tools/cli.h"
#include "tools/source_args.h"

namespace tmemjit_cli {

namespace {

// --standalone-ctas N: the largest grid the standalone module serves, a positive count.
tmem::Result<std::uint32_t> standalone_ctas(const std::string& text) {
  std::uint32_t count = 0;
  const char* end = text.data() + text.size();
  auto [stop, ec] = std::from_chars(text.data(), end, count);
  if (ec != std::errc() || stop != end || count == 0)
    return tmem::Error(tmem::ErrorCode::kUsage,
                       "--standalone-ctas takes the largest grid's CTA count (a positive number), "
                       "got '" +
                           text + "'");
  return count;
}

// emulate's command line, checked: what emulate_ptx / emulate_cuda get.
struct EmulateRequest {
  tmem::KernelSource source;
  tmem::EmulateOptions options;
  std::string output;  // -o; empty: none
};

std::vector<OptionSpec> emulate_option_specs() {
  return with_compiler_flag_options({{"--entry", true},
                                     {"-o", true},
                                     {"--json", false},
                                     {"--target", true},
                                     {"--backend", true},
                                     {"--keep", true},
                                     {"--standalone-ctas", true}});
}

// The request of a parsed command line, in the order its errors are reported.
tmem::Result<EmulateRequest> emulate_request(const Args& args) {
  if (args.positional().size() != 1)
    return tmem::Error(tmem::ErrorCode::kUsage,
                       args.positional().empty()
                           ? "emulate needs a module: FILE.ptx, or FILE.cu (compiled for "
                             "--target first)"
                           : "emulate takes one file, got '" + args.positional()[1] + "' too");
  auto read = read_source(args.positional()[0]);
  if (!read) return read.error();
  EmulateRequest request;
  tmem::KernelSource& source = request.source;
  source = std::move(read).value();
  source.entry = args.get("--entry").value_or("");

  tmem::EmulateOptions& options = request.options;
  options.entry = source.entry;
  options.path = source.path;
  if (auto target = args.get("--target")) {
    if (source.language == tmem::Language::kPtx)
      return tmem::Error(tmem::ErrorCode::kUsage,
                         "--target picks the tcgen05 target a CUDA source is compiled for; "
                         "a PTX module names its own (.target)");
    auto parsed = tmem::parse_target(*target);
    if (!parsed) return tmem::Error(tmem::ErrorCode::kUsage, parsed.error().message());
    options.compile.target = *parsed;
  }
  if (args.has("--precompile"))
    return tmem::Error(tmem::ErrorCode::kUsage,
                       "--precompile is specialize's (headers parsed once for every "
                       "layout); emulate compiles one module once");
  const std::vector<std::string> nvrtc = args.all("-Xnvrtc");
  if (source.language == tmem::Language::kPtx && !nvrtc.empty())
    return tmem::Error(
        tmem::ErrorCode::kUsage,
        "'" + nvrtc.front() + "' is an option of the CUDA front end; a PTX module has none");
  if (auto backend = args.get("--backend")) {
    auto parsed = tmem::parse_backend(*backend);
    if (!parsed) return parsed.error();
    options.compile.backend = *parsed;
  }
  if (auto keep = args.get("--keep")) options.compile.keep_dir = *keep;
  if (auto ctas = args.get("--standalone-ctas")) {
    auto count = standalone_ctas(*ctas);
    if (!count) return count.error();
    options.standalone_ctas = *count;
  }
  options.compile.nvrtc_options = nvrtc;
  options.compile.ptx_options = args.all("-Xptxas");
  request.output = args.get("-o").value_or("");
  return request;
}

int statements_lowered(const tmem::EmulationReport& info) {
  int statements = 0;
  for (const auto& [family, count] : info.lowered) statements += count;
  return statements;
}

void print_emulated_json(const EmulateRequest& request, const tmem::EmulatedKernel& emulated) {
  const tmem::EmulationReport& info = emulated.report;
  nlohmann::json lowered = nlohmann::json::object();
  for (const auto& [family, count] : info.lowered) lowered[family] = count;
  print_json({{"ok", true},
              {"entry", emulated.kernel.name()},
              {"source", request.source.path},
              {"target", "sm_90"},
              {"changed", info.changed},
              {"lowered", lowered},
              {"statements", statements_lowered(info)},
              {"code",
               {{"registers", info.code.registers},
                {"local_bytes", info.code.local_bytes},
                {"instructions", info.code.instructions}}},
              {"lower_ms", info.lower_ms},
              {"library_ms", info.library_ms},
              {"ptx_compile_ms", info.ptx_compile_ms},
              {"cubin_bytes", emulated.kernel.cubin().size()},
              {"standalone_ctas", request.options.standalone_ctas},
              {"warnings", info.warnings},
              {"output", request.output}});
}

void print_emulated_text(const EmulateRequest& request, const tmem::EmulatedKernel& emulated) {
  const tmem::EmulationReport& info = emulated.report;
  const std::string& output = request.output;
  std::cout << "emulated " << emulated.kernel.name() << " (" << request.source.path
            << ") for sm_90: " << statements_lowered(info) << " statements lowered";
  if (!info.lowered.empty()) {
    std::cout << " (";
    for (size_t i = 0; i < info.lowered.size(); ++i)
      std::cout << (i ? ", " : "") << info.lowered[i].first << " " << info.lowered[i].second;
    std::cout << ")";
  }
  std::cout << "; " << info.code.registers << " registers, " << info.code.local_bytes
            << " bytes of local memory, " << emulated.kernel.cubin().size()
            << " bytes of cubin; lowering " << info.lower_ms << " ms, library " << info.library_ms
            << " ms, PTX compile " << info.ptx_compile_ms << " ms"
            << (output.empty() ? "" : " -> " + output) << "\n";
  for (const std::string& warning : info.warnings) std::cerr << "warning: " << warning << "\n";
}

}  // namespace

int cmd_emulate(const std::vector<std::string>& argv) {
  auto args = parse_args("emulate", argv, emulate_option_specs());
  if (!args) return report(args.error(), false);
  const bool json = args->json();
  auto request = emulate_request(*args);
  if (!request) return report(request.error(), json);
  const tmem::KernelSource& source = request->source;
  auto emulated = source.language == tmem::Language::kPtx
                      ? tmem::emulate_ptx(source.text, request->options)
                      : tmem::emulate_cuda(source, request->options);
  if (!emulated) return report(emulated.error(), json);
  const std::string& output = request->output;
  if (!output.empty()) {
    // OUT.ptx: the lowered module; anything else: the sm_90 cubin.
    const bool ptx_out = output.size() > 4 && output.ends_with(".ptx");
    const std::span<const char> cubin = emulated->kernel.cubin();
    if (auto written =
            write_output_file(output, ptx_out ? std::string_view(emulated->ptx)
                                              : std::string_view(cubin.data(), cubin.size()));
        !written)
      return report(written.error(), json);
  }
  if (json)
    print_emulated_json(*request, *emulated);
  else
    print_emulated_text(*request, *emulated);
  return kExitOk;
}

}  // namespace tmemjit_cli
