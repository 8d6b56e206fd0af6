// PTX and CUDA C++ to cubin through the backends of tmem/compile.h (nvJitLink, nvPTXCompiler,
// ptxas, the driver JIT, NVRTC).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tmem/compile.h"
#include "tmem/result.h"

namespace tmem {

// nvptxcompiler_built_in, resolve_backend, compile_ptx and compile_cuda are public: tmem/compile.h.

// NVRTC's front end only: CUDA C++ to PTX for the virtual architecture of options.target
// (compute_100a for sm_100a, compute_90 for the emulation target), with `nvrtc_options` after the
// architecture and `headers` provided as named headers (name, text). Relocatable code (-rdc) when
// `relocatable`. `program_name` is the file name the log's lines use. `name_expressions`, when not
// empty, are registered and their lowered names returned in the same order. kToolchain with the
// log on a compile error.
struct CudaToPtx {
  std::string ptx;
  std::string log;
  std::vector<std::string> lowered_names;
  double compile_ms = 0;
};
Result<CudaToPtx> compile_cuda_to_ptx(
    const std::string& cuda_source, const std::string& program_name,
    const std::vector<std::pair<std::string, std::string>>& headers,
    const std::vector<std::string>& nvrtc_options, const std::vector<std::string>& name_expressions,
    const CompileOptions& options, bool relocatable);

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
