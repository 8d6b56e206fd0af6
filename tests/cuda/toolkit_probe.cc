// A separate process for toolkit_library_test: libnvJitLink and libnvrtc are opened once per
// process, so each missing-library case needs a fresh one (TMEMJIT_NVJITLINK_LIBRARY and
// TMEMJIT_NVRTC_LIBRARY are set by the test). Prints one line per step; exit 0 unless a step
// crashed the expectations of the mode.
//
//   toolkit_probe ptx BACKEND   compile the seed round trip twice with BACKEND (nvjitlink, auto)
//   toolkit_probe cuda          compile the seed's CUDA C++ form with NVRTC, then its PTX with auto
#include <cstdio>
#include <string>

#include "common/ptx_fixtures.h"
#include "runtime/compile/backends.h"
#include "runtime/ptx/ir.h"

namespace {

void report(const char* step, const tmem::Result<tmem::CompiledModule>& module) {
  if (module)
    std::printf("%s: backend=%s cubin=%zu\n", step,
                std::string(tmem::to_string(module->backend)).c_str(), module->cubin.size());
  else
    std::printf("%s: error %s: %s\n", step, tmem::to_string(module.error().code()),
                module.error().message().c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const std::string ptx = tmem::ptx::print(tmem::testing::seed_roundtrip_kernel()).value();
  if (mode == "ptx" && argc == 3) {
    tmem::CompileOptions options;
    options.backend = tmem::parse_backend(argv[2]).value();
    std::printf("resolved: %s\n",
                std::string(tmem::to_string(tmem::resolve_backend(options.backend))).c_str());
    report("compile 1", tmem::compile_ptx(ptx, options));
    report("compile 2", tmem::compile_ptx(ptx, options));
    std::printf("nvjitlink version: %s\n", tmem::toolchain_versions().nvjitlink.c_str());
    return 0;
  }
  if (mode == "cuda") {
    const std::string source = "extern \"C\" __global__ void probe(int* out) { *out = 1; }\n";
    report("nvrtc", tmem::compile_cuda(source, "probe", {}));
    report("ptx", tmem::compile_ptx(ptx, {}));
    std::printf("nvrtc version: %s\n", tmem::toolchain_versions().nvrtc.c_str());
    return 0;
  }
  std::fprintf(stderr, "usage: toolkit_probe ptx BACKEND | toolkit_probe cuda\n");
  return 2;
}
