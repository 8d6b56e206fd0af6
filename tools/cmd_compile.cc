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

}  // namespace

int cmd_ptx(const std::vector<std::string>& argv) {
  auto args = parse_args(argv, with({{"--kernel", true},
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
  auto args = parse_args(argv, with(with_cache_options({{"--kernel", true},
                                                        {"--target", true},
                                                        {"--backend", true},
                                                        {"-o", true},
                                                        {"--keep", true},
                                                        {"--cta-group", true},
                                                        {"-Xptxas", true, true},
                                                        {"-Xnvrtc", true, true}})));
  if (!args) return report(args.error(), false);
  const bool json = args->json();
  if (auto applied = apply_cache_args(*args); !applied) return report(applied.error(), json);
  tmem::CompileOptions options;
  options.ptx_options = args->all("-Xptxas");
  options.nvrtc_options = args->all("-Xnvrtc");
  if (auto target = args->get("--target")) {
    auto parsed = tmem::parse_target(*target);
    if (!parsed) return report(parsed.error(), json);
    // parse_target takes the emulation target; the kernels compile builds are tcgen05 code.
    if (*parsed == tmem::Target::kSm90)
      return report(
          tmem::Error(tmem::ErrorCode::kTarget,
                      "tmemjit compile builds tcgen05 code, which sm_90 has not; --target "
                      "takes sm_100a, sm_100f, sm_103a, sm_103f, sm_110a, sm_110f (the "
                      "emulation runs through tmemjit run --device emu, or tmemjit "
                      "specialize --target sm_90)")
              .set_rule(tmem::Rule::kTargetAndVersion),
          json);
    options.target = *parsed;
  }
  auto cta_group = cta_group_from_args(*args);
  if (!cta_group) return report(cta_group.error(), json);
  options.cta_group = *cta_group;
  auto form = kernel_form(*args);
  if (!form) return report(form.error(), json);
  const std::string kernel = *form;
  const bool cuda = kernel == "cuda";
  const bool func = kernel == "func";
  if (cuda) options.backend = tmem::Backend::kNvrtc;
  if (auto backend = args->get("--backend")) {
    auto parsed = tmem::parse_backend(*backend);
    if (!parsed) return report(parsed.error(), json);
    options.backend = *parsed;
  }
  if (func) {
    // A whole-program compile or link drops an uncalled .func (nvJitLink and the driver JIT
    // link, ptxas without -c compiles whole programs), so the .func is relocatable code, from
    // ptxas -c: the auto backend is nvPTXCompiler where built in, else the ptxas subprocess.
    if (options.backend == tmem::Backend::kAuto)
      options.backend =
          tmem::nvptxcompiler_built_in() ? tmem::Backend::kNvPtxCompiler : tmem::Backend::kPtxas;
    if (options.backend != tmem::Backend::kNvPtxCompiler &&
        options.backend != tmem::Backend::kPtxas && options.backend != tmem::Backend::kNvrtc)
      return report(tmem::Error(tmem::ErrorCode::kUsage,
                                "--kernel func is relocatable code (ptxas -c); backend " +
                                    std::string(tmem::to_string(options.backend)) +
                                    " links whole programs, which drop an uncalled .func; use "
                                    "--backend nvptxcompiler, ptxas or auto"),
                    json);
    options.extra_options.push_back("-c");
  }
  if ((options.backend == tmem::Backend::kNvrtc) != cuda)
    return report(
        tmem::Error(tmem::ErrorCode::kUsage,
                    cuda ? "the CUDA C++ form (--kernel cuda) compiles with --backend nvrtc"
                         : "--backend nvrtc compiles the CUDA C++ form; add --kernel cuda"),
        json);
  if (!options.nvrtc_options.empty() && !cuda)
    return report(tmem::Error(tmem::ErrorCode::kUsage,
                              "-Xnvrtc options go to NVRTC, which compiles only the CUDA C++ form "
                              "(--kernel cuda); the PTX compiler's options are -Xptxas"),
                  json);
  if (auto keep = args->get("--keep")) options.keep_dir = *keep;

  // The harness kernels go through compile_transfer and its cache; the CUDA C++ form is not cached.
  std::string cache = "none";  // the text's words ("disk hit"); cache_word: the JSON's ("disk")
  std::string cache_word = "none";
  std::string key;
  std::vector<char> cubin;
  std::string log;
  tmem::Backend backend = options.backend;
  double compile_ms = 0;
  if (cuda || func) {  // not cached: neither is a harness kernel
    tmem::DeviceFunctionOptions function_options;
    function_options.language = cuda ? tmem::Language::kCuda : tmem::Language::kPtx;
    function_options.cta_group = options.cta_group;
    // One spec-file format: a --spec file's device-function options apply here too.
    auto file = spec_file_from_args(*args, function_options);
    if (!file) return report(file.error(), json);
    if (auto error = unsupported_target(file->spec, options.target)) return report(*error, json);
    auto function = tmem::device_function(file->spec, file->options, options.target);
    if (!function) return report(function.error(), json);
    auto module =
        cuda ? tmem::compile_cuda(cuda_translation_unit(*function), "tmem_cuda_transfer", options)
             : tmem::compile_ptx(function->source, options);
    if (!module) return report(module.error(), json);
    cubin = std::move(module->cubin);
    log = std::move(module->log);
    backend = module->backend;
    compile_ms = module->compile_ms;
  } else {
    auto kind = tmem::parse_kernel_kind(kind_name(kernel));
    if (!kind) return report(kind.error(), json);
    tmem::DeviceFunctionOptions defaults;
    defaults.cta_group = options.cta_group;
    auto file = spec_file_from_args(*args, defaults);  // a --spec file may name cta_group
    if (!file) return report(file.error(), json);
    options.cta_group = file->options.cta_group;
    tmem::CompileReport info;
    auto compiled = tmem::compile_transfer(file->spec, options, *kind, &info);
    if (!compiled) return report(compiled.error(), json, {{"cache", cache_json(info)}});
    cubin.assign(compiled->cubin().begin(), compiled->cubin().end());
    log = std::move(info.log);
    backend = info.backend;
    compile_ms = info.compile_ms;
    cache = cache_text(info);
    cache_word = cache_json(info);
    key = info.key;
    std::cerr << "cache: " << cache << "\n";
  }
  std::string output = args->get("-o").value_or("");
  if (!output.empty()) {
    if (auto written = write_output_file(output, std::string_view(cubin.data(), cubin.size()));
        !written)
      return report(written.error(), json);
  }
  if (json) {
    print_json({{"ok", true},
                {"kernel", kernel},
                {"target", std::string(tmem::to_string(options.target))},
                {"backend", std::string(tmem::to_string(backend))},
                {"cubin_bytes", cubin.size()},
                {"compile_ms", compile_ms},
                {"cache", cache_word},
                {"key", key},
                {"output", output}});
  } else {
    std::cout << "compiled " << kernel << " for " << tmem::to_string(options.target) << " with "
              << tmem::to_string(backend) << ": " << cubin.size() << " bytes of cubin";
    if (cache.ends_with(" hit"))
      std::cout << " from the cache (" << cache << ")";
    else
      std::cout << " in " << compile_ms << " ms";
    std::cout << (output.empty() ? "" : " -> " + output) << "\n";
    if (!log.empty()) std::cerr << log << "\n";
  }
  return kExitOk;
}

}  // namespace tmemjit_cli
