// tmemjit ptx / tmemjit compile: synthesize the kernels of a checked transfer and compile them.
#include <chrono>
#include <fstream>
#include <iostream>

#include "kernels/transfer_kernels.h"
#include "runtime/compile.h"
#include "tmem/check.h"
#include "tmem/compile.h"
#include "tools/cli.h"

namespace tmemjit_cli {
namespace {

// A CUDA C++ translation unit around the plan's device function, so NVRTC compiles it for real:
// each thread moves its slots between global memory and the registers the function transfers.
std::string cuda_translation_unit(const tmem::Plan& plan) {
  const int slots = std::max(plan.regs_per_thread, 1);
  return tmem::kernels::cuda_device_function(plan) +
         "\nextern \"C\" __global__ void tmem_cuda_transfer(unsigned int tmem_base, unsigned int* io) {\n"
         "  unsigned int regs[" + std::to_string(slots) + "];\n"
         "  for (int s = 0; s < " + std::to_string(slots) + "; ++s) regs[s] = io[threadIdx.x * " +
         std::to_string(slots) + " + s];\n"
         "  tmem_transfer(tmem_base, regs);\n"
         "  for (int s = 0; s < " + std::to_string(slots) + "; ++s) io[threadIdx.x * " + std::to_string(slots) +
         " + s] = regs[s];\n}\n";
}

struct Synthesis {
  std::string kernel;  // roundtrip | store | load | fill | cuda
  std::string text;    // PTX or CUDA C++
  tmem::Target target = tmem::Target::kSm100a;
};

std::vector<OptionSpec> with(std::vector<OptionSpec> extra) {
  auto options = spec_options();
  options.insert(options.end(), extra.begin(), extra.end());
  return options;
}

tmem::Result<Synthesis> synthesize(const Args& args) {
  Synthesis out;
  if (auto target = args.get("--target")) {
    auto parsed = tmem::parse_target(*target);
    if (!parsed) return parsed.error();
    out.target = *parsed;
  }
  out.kernel = args.get("--kernel").value_or("roundtrip");
  std::optional<tmem::kernels::KernelKind> kind;
  if (out.kernel != "cuda") {
    auto parsed = tmem::kernels::parse_kernel_kind(out.kernel);
    if (!parsed) return parsed.error();
    kind = *parsed;
  }
  auto spec = spec_from_args(args);
  if (!spec) return spec.error();
  auto plan = tmem::check(*spec);
  if (!plan) return plan.error();
  if (!kind) {
    out.text = cuda_translation_unit(*plan);
    return out;
  }
  auto module = tmem::kernels::build_kernel(*plan, *kind, out.target);
  if (!module) return module.error();
  auto ptx = tmem::ptx::print(*module);
  if (!ptx) return ptx.error();
  out.text = std::move(ptx).value();
  return out;
}

}  // namespace

int cmd_ptx(const std::vector<std::string>& argv) {
  auto args = parse_args(argv, with({{"--kernel", true}, {"--target", true}}));
  if (!args) return report(args.error(), false);
  auto synthesis = synthesize(*args);
  if (!synthesis) return report(synthesis.error(), args->json());
  std::cout << synthesis->text;
  return kExitOk;
}

int cmd_compile(const std::vector<std::string>& argv) {
  auto args = parse_args(argv, with({{"--kernel", true}, {"--target", true}, {"--backend", true},
                                     {"-o", true}, {"--keep", true}}));
  if (!args) return report(args.error(), false);
  const bool json = args->json();
  auto synthesis = synthesize(*args);
  if (!synthesis) return report(synthesis.error(), json);
  tmem::CompileOptions options;
  options.target = synthesis->target;
  const bool cuda = synthesis->kernel == "cuda";
  options.backend = cuda ? tmem::Backend::kNvrtc : tmem::Backend::kNvJitLink;
  if (auto backend = args->get("--backend")) {
    auto parsed = tmem::parse_backend(*backend);
    if (!parsed) return report(parsed.error(), json);
    options.backend = *parsed;
  }
  if ((options.backend == tmem::Backend::kNvrtc) != cuda)
    return report(tmem::Error(tmem::ErrorCode::kUsage,
                              cuda ? "the CUDA C++ form (--kernel cuda) compiles with --backend nvrtc"
                                   : "--backend nvrtc compiles the CUDA C++ form; add --kernel cuda"),
                  json);
  if (auto keep = args->get("--keep")) options.keep_dir = *keep;
  auto module = cuda ? tmem::compile_cuda(synthesis->text, "tmem_cuda_transfer", options)
                     : tmem::compile_ptx(synthesis->text, options);
  if (!module) return report(module.error(), json);
  std::string output = args->get("-o").value_or("");
  if (!output.empty()) {
    std::ofstream file(output, std::ios::binary);
    file.write(module->cubin.data(), static_cast<std::streamsize>(module->cubin.size()));
    if (!file)
      return report(tmem::Error(tmem::ErrorCode::kIo, "cannot write the cubin to '" + output + "'"), json);
  }
  if (json) {
    print_json({{"ok", true},
                {"kernel", synthesis->kernel},
                {"target", std::string(tmem::to_string(module->target))},
                {"backend", std::string(tmem::to_string(module->backend))},
                {"cubin_bytes", module->cubin.size()},
                {"compile_ms", module->compile_ms},
                {"output", output}});
  } else {
    std::cout << "compiled " << synthesis->kernel << " for " << tmem::to_string(module->target) << " with "
              << tmem::to_string(module->backend) << ": " << module->cubin.size() << " bytes of cubin in "
              << module->compile_ms << " ms" << (output.empty() ? "" : " -> " + output) << "\n";
    if (!module->log.empty()) std::cerr << module->log << "\n";
  }
  return kExitOk;
}

}  // namespace tmemjit_cli
