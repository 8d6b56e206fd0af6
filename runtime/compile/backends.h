// PTX and CUDA C++ to cubin through the backends of tmem/compile.h (nvJitLink, nvPTXCompiler,
// ptxas, the driver JIT, NVRTC).
#pragma once

#include <string>
#include <vector>

#include "tmem/compile.h"
#include "tmem/result.h"

namespace tmem {

// True when libtmemjit was built with nvPTXCompiler (cmake/TmemjitNvPtxCompiler.cmake).
bool nvptxcompiler_built_in() noexcept;

// The backend that `backend` stands for: kAuto is kNvPtxCompiler when built in (whole-program code,
// as compact as ptxas, in-process), else kNvJitLink. kNvJitLink (given or from kAuto) becomes
// kPtxas when libnvJitLink cannot be loaded (runtime/cuda/nvjitlink.h), with one warning on stderr
// per process; every other backend is itself. Cache keys and anything else that must name the
// compiler use the resolved backend.
Backend resolve_backend(Backend backend) noexcept;

// Compiles PTX for options.target with resolve_backend(options.backend): kNvJitLink,
// kNvPtxCompiler (in-process), kPtxas (subprocess) or kDriver (the driver's JIT; kDriver errors
// where no driver exists). kNvrtc takes CUDA C++ (see compile_cuda) and is a kUsage error here.
// Every failure is Error(kToolchain, "<stage> failed: <reason>") -- kDriver for a missing driver --
// whose details hold the backend, the options, the full compiler log and the PTX.
Result<CompiledModule> compile_ptx(const std::string& ptx, const CompileOptions& options);

// Compiles CUDA C++ (e.g. a kernel around inline-asm tcgen05) with NVRTC straight to a cubin for
// options.target; options.backend is ignored and the result says kNvrtc. `kernel_name`, when not
// empty, is registered as a name expression and its lowered (mangled) name is returned in
// CompiledModule::entry_name.
Result<CompiledModule> compile_cuda(const std::string& cuda_source, const std::string& kernel_name,
                                    const CompileOptions& options);

// The exact option list a backend receives for `options` (without input and output files); for
// kDriver the cuLinkCreate options as NAME=VALUE. kAuto is resolved first.
std::vector<std::string> backend_options(Backend backend, const CompileOptions& options);

// The ptxas executable: $TMEMJIT_PTXAS when set, else the toolkit's (TMEMJIT_PTXAS_PATH).
std::string ptxas_path();

// Versions of the compilers, for cache keys ("13.0"; ptxas: its "release ..., V..." line). A tool
// that cannot be asked gives "unavailable" (nvPTXCompiler: also when not built in). Queried once
// per process. The driver JIT's version is the driver's (driver::driver_version), asked only when
// that backend is used, so that a driver-less process never opens libcuda here.
struct ToolchainVersions {
  std::string nvjitlink;
  std::string nvrtc;
  std::string ptxas;
  std::string nvptxcompiler;
};
const ToolchainVersions& toolchain_versions();

}  // namespace tmem
