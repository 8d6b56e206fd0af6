// PTX and CUDA C++ to cubin through the backends of tmem/compile.h (nvJitLink, ptxas, NVRTC).
#pragma once

#include <string>
#include <vector>

#include "tmem/compile.h"
#include "tmem/result.h"

namespace tmem {

// Compiles PTX for options.target with options.backend: kNvJitLink (in-process) or kPtxas
// (subprocess). kDriver is not available in this build yet and kNvrtc takes CUDA C++ (see
// compile_cuda); both are errors. Every failure is Error(kToolchain, "<stage> failed: <reason>")
// whose details hold the backend, the options, the full compiler log and the PTX.
Result<CompiledModule> compile_ptx(const std::string& ptx, const CompileOptions& options);

// Compiles CUDA C++ (e.g. a kernel around inline-asm tcgen05) with NVRTC straight to a cubin for
// options.target; options.backend is ignored and the result says kNvrtc. `kernel_name`, when not
// empty, is registered as a name expression and its lowered (mangled) name is returned in
// CompiledModule::entry_name.
Result<CompiledModule> compile_cuda(const std::string& cuda_source, const std::string& kernel_name,
                                    const CompileOptions& options);

// The exact option list a backend receives for `options` (without input and output files).
std::vector<std::string> backend_options(Backend backend, const CompileOptions& options);

// The ptxas executable: $TMEMJIT_PTXAS when set, else the toolkit's (TMEMJIT_PTXAS_PATH).
std::string ptxas_path();

// Versions of the compilers, for cache keys ("13.0"; ptxas: its "release ..., V..." line). A tool
// that cannot be asked gives "unavailable". Queried once per process.
struct ToolchainVersions {
  std::string nvjitlink;
  std::string nvrtc;
  std::string ptxas;
};
const ToolchainVersions& toolchain_versions();

}  // namespace tmem
