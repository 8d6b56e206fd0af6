// tmemjit ptx / tmemjit compile: synthesize the kernels of a checked transfer and compile them.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <optional>

#include "tmem/check.h"
#include "tmem/compile.h"
#include "tmem/jit.h"
#include "tmem/specialize.h"
#include "tools/cli.h"

namespace tmemjit_cli {
namespace {

// A CUDA C++ translation unit around the device function, so NVRTC compiles it for real: each
// thread moves its slots between global memory and the registers the function transfers.
std::string cuda_translation_unit(const tmem::DeviceFunction& function) {
  const std::string slots = std::to_string(std::max(function.regs_per_thread, 1));
  return function.source +
         "\nextern \"C\" __global__ void tmem_cuda_transfer(unsigned int tmem_base, unsigned int* "
         "io) {\n"
         "  unsigned int regs[" +
         slots +
         "];\n"
         "  for (int s = 0; s < " +
         slots + "; ++s) regs[s] = io[threadIdx.x * " + slots +
         " + s];\n"
         "  " +
         function.name +
         "(tmem_base, regs);\n"
         "  for (int s = 0; s < " +
         slots + "; ++s) io[threadIdx.x * " + slots + " + s] = regs[s];\n}\n";
}

// The --kernel forms (docs/design.md §CLI). Beyond the harness KernelKinds: `dump` is the
// `store` kernel -- the plan's st, then TMEM -> Raw through the 32x32b identity -- under the
// design's name; TMEM does not outlive a kernel, so a dump on its own would read cells nothing
// wrote. `func` is the embeddable .func (kernels/device_function.h) and `cuda` the CUDA C++ form.
constexpr const char* kKernelForms = "roundtrip, store, load, fill, dump, func, cuda";

std::string kind_name(const std::string& form) { return form == "dump" ? "store" : form; }

tmem::Result<std::string> kernel_form(const Args& args) {
  const std::string form = args.get("--kernel").value_or("roundtrip");
  if (form == "func" || form == "cuda" || tmem::parse_kernel_kind(kind_name(form)).ok())
    return form;
  return tmem::Error(tmem::ErrorCode::kUsage,
                     "unknown kernel '" + form + "'; allowed: " + kKernelForms);
}

struct Synthesis {
  std::string kernel;  // one of kKernelForms
  std::string text;    // PTX or CUDA C++
  tmem::Target target = tmem::Target::kSm100a;
  std::optional<tmem::DeviceFunction> function;  // for cuda and func
};

std::vector<OptionSpec> with(std::vector<OptionSpec> extra) {
  auto options = spec_options();
  options.insert(options.end(), extra.begin(), extra.end());
  return options;
}

// --target: a tcgen05 target, or sm_90 for the emulated forms.
tmem::Result<tmem::Target> target_of(const Args& args) {
  return tmem::parse_target(args.get("--target").value_or("sm_100a"));
}

// The device functions are text until compiled: refuse a target the opcode does not run on here,
// with the opcode's own error (tcgen05.ld.red on sm_100a names sm_103a.., rule R14), rather than
// leave it to the compiler's log. sm_90 is the emulation, which runs every form.
std::optional<tmem::Error> unsupported_target(const tmem::TransferSpec& spec, tmem::Target target) {
  if (target == tmem::Target::kSm90 || spec.op().supports(target)) return std::nullopt;
  return spec.op().unsupported_target_error(target);
}

// --name, --no-wait, --warp-arg, --column-arg: the device function's options (docs/design.md
// §Specialization).
tmem::Result<tmem::DeviceFunctionOptions> function_options(const Args& args,
                                                           tmem::Language language) {
  tmem::DeviceFunctionOptions options;
  options.language = language;
  if (auto name = args.get("--name")) options.name = *name;
  options.wait = !args.has("--no-wait");
  options.warp_argument = args.has("--warp-arg");
  options.column_argument = args.has("--column-arg");
  auto cta_group = cta_group_from_args(args);
  if (!cta_group) return cta_group.error();
  options.cta_group = *cta_group;
  return options;
}

tmem::Result<Synthesis> synthesize(const Args& args) {
  Synthesis out;
  auto target = target_of(args);
  if (!target) return target.error();
  out.target = *target;
  auto form = kernel_form(args);
  if (!form) return form.error();
  out.kernel = *form;
  const bool function = out.kernel == "cuda" || out.kernel == "func";
  for (const char* flag : {"--name", "--no-wait", "--warp-arg", "--column-arg"})
    if (args.has(flag) && !function)
      return tmem::Error(tmem::ErrorCode::kUsage, std::string(flag) +
                                                      " shapes a device function: use it with "
                                                      "--kernel cuda or --kernel func");
  auto options =
      function_options(args, out.kernel == "cuda" ? tmem::Language::kCuda : tmem::Language::kPtx);
  if (!options) return options.error();
  // A --spec file's options (wait, warp_argument, ...) override the flags' defaults.
  auto file = spec_file_from_args(args, *options);
  if (!file) return file.error();
  const tmem::TransferSpec* spec = &file->spec;
  if (function) {
    if (auto error = unsupported_target(*spec, out.target)) return *error;
    auto made = tmem::device_function(*spec, file->options, out.target);
    if (!made) return made.error();
    out.text = made->source;
    out.function = std::move(made).value();
    return out;
  }
  tmem::CompileOptions compile_options;
  compile_options.target = out.target;
  compile_options.cta_group = file->options.cta_group;
  auto ptx = tmem::transfer_ptx(*spec, tmem::parse_kernel_kind(kind_name(out.kernel)).value(),
                                compile_options);
  if (!ptx) return ptx.error();
  out.text = std::move(ptx).value();
  return out;
}

// "memory hit", "disk hit", "remote hit", "miss" or "off": compile --json's words for the tier.
std::string cache_text(const tmem::CompileReport& report) {
  switch (report.cache) {
    case tmem::CacheSource::kMemory:
      return "memory hit";
    case tmem::CacheSource::kDisk:
      return "disk hit";
    case tmem::CacheSource::kRemote:
      return "remote hit";
    case tmem::CacheSource::kCompiled:
      break;
  }
  return report.cache_enabled ? "miss" : "off";
}

// compile --json's "cache": the tier's name as specialize --json gives it (docs/design.md
// §Specialization): "memory", "disk", "remote", "miss", or "off" when caching is off.
std::string cache_json(const tmem::CompileReport& report) {
  if (report.cache != tmem::CacheSource::kCompiled)
    return std::string(tmem::to_string(report.cache));
  return report.cache_enabled ? "miss" : "off";
}

// compile's command line, checked: the compile options and the kernel form.
struct CompileRequest {
  tmem::CompileOptions options;
  std::string kernel;  // one of kKernelForms
  bool cuda = false;   // the CUDA C++ form, through NVRTC
  bool func = false;   // the relocatable .func, through ptxas -c
};

// What compile made, and the cache's answer for the harness kernels.
struct Compiled {
  std::vector<char> cubin;
  std::string log;
  tmem::Backend backend = tmem::Backend::kAuto;
  double compile_ms = 0;
  std::string cache = "none";       // the text's words ("disk hit"); "none": not cached
  std::string cache_word = "none";  // the JSON's ("disk")
  std::string key;
};

std::vector<OptionSpec> compile_option_specs() {
  return with(with_cache_options({{"--kernel", true},
                                  {"--target", true},
                                  {"--backend", true},
                                  {"-o", true},
                                  {"--keep", true},
                                  {"--cta-group", true},
                                  {"-Xptxas", true, true},
                                  {"-Xnvrtc", true, true}}));
}

// --target for compile: a tcgen05 target (parse_target also takes sm_90, the emulation's).
tmem::Result<tmem::Target> compile_target(const std::string& text) {
  auto parsed = tmem::parse_target(text);
  if (!parsed) return parsed.error();
  if (*parsed == tmem::Target::kSm90)
    return tmem::Error(tmem::ErrorCode::kTarget,
                       "tmemjit compile builds tcgen05 code, which sm_90 has not; --target "
                       "takes sm_100a, sm_100f, sm_103a, sm_103f, sm_110a, sm_110f (the "
                       "emulation runs through tmemjit run --device emu, or tmemjit "
                       "specialize --target sm_90)")
        .set_rule(tmem::Rule::kTargetAndVersion);
  return parsed;
}

// The backend of --kernel func: a whole-program compile or link drops an uncalled .func
// (nvJitLink and the driver JIT link, ptxas without -c compiles whole programs), so the .func is
// relocatable code, from ptxas -c: the auto backend is nvPTXCompiler where built in, else the
// ptxas subprocess.
tmem::Status use_relocatable_backend(tmem::CompileOptions& options) {
  if (options.backend == tmem::Backend::kAuto)
    options.backend =
        tmem::nvptxcompiler_built_in() ? tmem::Backend::kNvPtxCompiler : tmem::Backend::kPtxas;
  if (options.backend != tmem::Backend::kNvPtxCompiler &&
      options.backend != tmem::Backend::kPtxas && options.backend != tmem::Backend::kNvrtc)
    return tmem::Error(tmem::ErrorCode::kUsage,
                       "--kernel func is relocatable code (ptxas -c); backend " +
                           std::string(tmem::to_string(options.backend)) +
                           " links whole programs, which drop an uncalled .func; use "
                           "--backend nvptxcompiler, ptxas or auto");
  options.extra_options.push_back("-c");
  return std::monostate{};
}

tmem::Result<CompileRequest> compile_request(const Args& args) {
  CompileRequest request;
  tmem::CompileOptions& options = request.options;
  options.ptx_options = args.all("-Xptxas");
  options.nvrtc_options = args.all("-Xnvrtc");
  if (auto target = args.get("--target")) {
    auto parsed = compile_target(*target);
    if (!parsed) return parsed.error();
    options.target = *parsed;
  }
  auto cta_group = cta_group_from_args(args);
  if (!cta_group) return cta_group.error();
  options.cta_group = *cta_group;
  auto form = kernel_form(args);
  if (!form) return form.error();
  request.kernel = *form;
  request.cuda = request.kernel == "cuda";
  request.func = request.kernel == "func";
  if (request.cuda) options.backend = tmem::Backend::kNvrtc;
  if (auto backend = args.get("--backend")) {
    auto parsed = tmem::parse_backend(*backend);
    if (!parsed) return parsed.error();
    options.backend = *parsed;
  }
  if (request.func)
    if (tmem::Status relocatable = use_relocatable_backend(options); !relocatable.ok())
      return relocatable.error();
  if ((options.backend == tmem::Backend::kNvrtc) != request.cuda)
    return tmem::Error(tmem::ErrorCode::kUsage,
                       request.cuda
                           ? "the CUDA C++ form (--kernel cuda) compiles with --backend nvrtc"
                           : "--backend nvrtc compiles the CUDA C++ form; add --kernel cuda");
  if (!options.nvrtc_options.empty() && !request.cuda)
    return tmem::Error(tmem::ErrorCode::kUsage,
                       "-Xnvrtc options go to NVRTC, which compiles only the CUDA C++ form "
                       "(--kernel cuda); the PTX compiler's options are -Xptxas");
  if (auto keep = args.get("--keep")) options.keep_dir = *keep;
  return request;
}

// The cuda and func forms: the device function compiled on its own, not cached (neither is a
// harness kernel).
tmem::Result<Compiled> compile_function(const Args& args, const CompileRequest& request) {
  const tmem::CompileOptions& options = request.options;
  tmem::DeviceFunctionOptions function_options;
  function_options.language = request.cuda ? tmem::Language::kCuda : tmem::Language::kPtx;
  function_options.cta_group = options.cta_group;
  // One spec-file format: a --spec file's device-function options apply here too.
  auto file = spec_file_from_args(args, function_options);
  if (!file) return file.error();
  if (auto error = unsupported_target(file->spec, options.target)) return *error;
  auto function = tmem::device_function(file->spec, file->options, options.target);
  if (!function) return function.error();
  auto module = request.cuda ? tmem::compile_cuda(cuda_translation_unit(*function),
                                                  "tmem_cuda_transfer", options)
                             : tmem::compile_ptx(function->source, options);
  if (!module) return module.error();
  Compiled out;
  out.cubin = std::move(module->cubin);
  out.log = std::move(module->log);
  out.backend = module->backend;
  out.compile_ms = module->compile_ms;
  return out;
}

// A harness kernel, through compile_transfer and its cache. When the compile itself fails,
// `error_fields` gets the cache's answer for compile --json's report.
tmem::Result<Compiled> compile_harness(const Args& args, CompileRequest& request,
                                       nlohmann::json& error_fields) {
  tmem::CompileOptions& options = request.options;
  auto kind = tmem::parse_kernel_kind(kind_name(request.kernel));
  if (!kind) return kind.error();
  tmem::DeviceFunctionOptions defaults;
  defaults.cta_group = options.cta_group;
  auto file = spec_file_from_args(args, defaults);  // a --spec file may name cta_group
  if (!file) return file.error();
  options.cta_group = file->options.cta_group;
  tmem::CompileReport info;
  auto compiled = tmem::compile_transfer(file->spec, options, *kind, &info);
  if (!compiled) {
    error_fields = {{"cache", cache_json(info)}};
    return compiled.error();
  }
  Compiled out;
  out.cubin.assign(compiled->cubin().begin(), compiled->cubin().end());
  out.log = std::move(info.log);
  out.backend = info.backend;
  out.compile_ms = info.compile_ms;
  out.cache = cache_text(info);
  out.cache_word = cache_json(info);
  out.key = info.key;
  return out;
}

void print_compiled(const CompileRequest& request, const Compiled& compiled,
                    const std::string& output, bool json) {
  const std::string target(tmem::to_string(request.options.target));
  if (json) {
    print_json({{"ok", true},
                {"kernel", request.kernel},
                {"target", target},
                {"backend", std::string(tmem::to_string(compiled.backend))},
                {"cubin_bytes", compiled.cubin.size()},
                {"compile_ms", compiled.compile_ms},
                {"cache", compiled.cache_word},
                {"key", compiled.key},
                {"output", output}});
    return;
  }
  std::cout << "compiled " << request.kernel << " for " << target << " with "
            << tmem::to_string(compiled.backend) << ": " << compiled.cubin.size()
            << " bytes of cubin";
  if (compiled.cache.ends_with(" hit"))
    std::cout << " from the cache (" << compiled.cache << ")";
  else
    std::cout << " in " << compiled.compile_ms << " ms";
  std::cout << (output.empty() ? "" : " -> " + output) << "\n";
  if (!compiled.log.empty()) std::cerr << compiled.log << "\n";
}

}  // namespace

int cmd_ptx(const std::vector<std::string>& argv) {
  auto args = parse_args("ptx", argv,
                         with({{"--kernel", true},
                               {"--target", true},
                               {"--name", true},
                               {"--no-wait", false},
                               {"--warp-arg", false},
                               {"--column-arg", false},
                               {"--cta-group", true}}));
  if (!args) return report(args.error(), false);
  auto synthesis = synthesize(*args);
  if (!synthesis) return report(synthesis.error(), args->json());
  std::cout << synthesis->text;
  return kExitOk;
}

int cmd_compile(const std::vector<std::string>& argv) {
  auto args = parse_args("compile", argv, compile_option_specs());
  if (!args) return report(args.error(), false);
  const bool json = args->json();
  if (auto applied = apply_cache_args(*args); !applied) return report(applied.error(), json);
  auto request = compile_request(*args);
  if (!request) return report(request.error(), json);
  // The harness kernels go through compile_transfer and its cache; the device function's forms
  // are not cached.
  nlohmann::json error_fields = nlohmann::json::object();
  auto compiled = request->cuda || request->func ? compile_function(*args, *request)
                                                 : compile_harness(*args, *request, error_fields);
  if (!compiled) return report(compiled.error(), json, error_fields);
  if (compiled->cache != "none") std::cerr << "cache: " << compiled->cache << "\n";  // harness
  const std::string output = args->get("-o").value_or("");
  if (!output.empty())
    if (auto written = write_output_file(
            output, std::string_view(compiled->cubin.data(), compiled->cubin.size()));
        !written)
      return report(written.error(), json);
  print_compiled(*request, *compiled, output, json);
  return kExitOk;
}

}  // namespace tmemjit_cli
