// A host written against release 0.1.0 (the API as its docs showed it: README's quick example,
// docs/specialization.md's worked example, a report's link_ms, std::span and designated
// initializers under C++20). It must still compile and link against today's headers; what was
// deprecated since warns (CHANGELOG.md, "Deprecation"). Built, never run: the last steps need a
// GPU. tests/api_compat/CMakeLists.txt checks the deprecation warning.
#include <tmem/jit.h>
#include <tmem/run.h>
#include <tmem/select.h>
#include <tmem/specialize.h>

#include <cstdio>
#include <iostream>
#include <span>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 4) return 2;
  const std::string op = argv[1], tmem_view = argv[2], regs_view = argv[3];
  // README, 0.1.0.
  auto spec = tmem::TransferSpec::from_fields(op, "warpgroup", tmem_view, regs_view).value();
  auto compiled = tmem::compile_transfer(spec);
  if (!compiled) std::cerr << compiled.error().full_text() << "\n";

  // docs/specialization.md, 0.1.0: an epilogue specialized for a layout.
  tmem::KernelSource source{tmem::Language::kCuda, "", "epilogue", "epilogue.cu"};
  tmem::DeviceFunctionOptions load{.name = "acc_load", .wait = false, .column_argument = true};
  tmem::DeviceFunctionOptions store = load;
  store.name = "acc_store";
  std::vector<tmem::NamedTransfer> transfers = {{spec, load}, {spec, store}};
  tmem::CompileOptions options;
  options.target = tmem::Target::kSm100a;
  tmem::CompileReport report;
  auto kernel = tmem::compile_kernel(source, std::span<const tmem::NamedTransfer>(transfers),
                                     options, &report);
  std::printf("front end %.1f ms, link %.1f ms, ptx %.1f ms\n", report.front_end_ms, report.link_ms,
              report.ptx_compile_ms);
  if (!kernel) return 1;
  float* out = nullptr;
  void* args[] = {&out};
  tmem::LaunchConfig config;
  config.block = {128, 1, 1};
  return kernel->launch(config, args).ok() ? 0 : 1;
}
