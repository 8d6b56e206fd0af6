// PTX and CUDA C++ to cubin through the backends of tmem/compile.h (nvJitLink, nvPTXCompiler,
// ptxas, the driver JIT, NVRTC).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/compile/precompiled_headers.h"
#include "tmem/compile.h"
#include "tmem/result.h"

namespace tmem {

// nvptxcompiler_built_in, resolve_backend, compile_ptx and compile_cuda are public: tmem/compile.h.

// compile_ptx whose files under options.keep_dir are named keep_file_stem(keep_stem, hash) rather
// than tmemjit_<hash>, so that the kernels kept in one folder say which is which (compile_kernel:
// "<entry>-<layout tag>"). An empty keep_stem is the plain compile_ptx.
Result<CompiledModule> compile_ptx(const std::string& ptx, const CompileOptions& options,
                                   std::string_view keep_stem);

// The name (without suffix) of kept files: `stem` cut to kKeepStemChars characters, every
// character outside [A-Za-z0-9_.-] turned into '_' (a leading '.' or '-' too), "tmemjit" when
// empty, then '_' and `hash` (16 hex digits of the input and options), so that two compiles with
// one stem never overwrite each other's files.
inline constexpr size_t kKeepStemChars = 96;
std::string keep_file_stem(std::string_view stem, std::string_view hash);

// NVRTC on CUDA C++ for options.target, with `nvrtc_options` after the architecture and `headers`
// provided as named headers (name, text). `program_name` is the file name the log's lines use.
// `name_expressions`, when not empty, are registered and their lowered names returned in the same
// order. kToolchain with the log on a compile error.
//   kPtx, kRelocatablePtx: PTX for the virtual architecture (compute_XX), whole-program or -rdc.
//   kCubin: NVRTC compiles for the real architecture itself (its own ptxas, with options.opt_level,
//     line_info, tmem_access_check and options.ptx_options through --ptxas-options): `cubin` and
//     `output` (the PTX) are both filled; with options.keep_dir the input, log, cubin and SASS are
//     kept under `keep_stem` as compile_ptx keeps them. compile_kernel's route for CUDA sources.
enum class FrontEndOutput { kPtx, kRelocatablePtx, kCubin };
// With "--pch" among `nvrtc_options` (automatic precompiled headers), `pch` says what NVRTC did
// and its messages about it are taken out of the log (runtime/compile/precompiled_headers.h).
struct CudaFrontEnd {
  std::vector<char> output;  // PTX text
  std::vector<char> cubin;   // kCubin only
  std::string log;
  std::vector<std::string> lowered_names;
  double compile_ms = 0;
  PchUse pch = PchUse::kOff;
  size_t pch_heap_required = 0;  // with kHeapExhausted: the heap NVRTC asked for
};
Result<CudaFrontEnd> compile_cuda_front_end(
    const std::string& cuda_source, const std::string& program_name,
    const std::vector<std::pair<std::string, std::string>>& headers,
    const std::vector<std::string>& nvrtc_options, const std::vector<std::string>& name_expressions,
    const CompileOptions& options, FrontEndOutput output, std::string_view keep_stem = {});

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

// The version of the compiler behind resolve_backend(backend), asking only that compiler (so an
// in-process backend never starts `ptxas --version`): "nvjitlink 13.0", "ptxas Cuda compilation
// tools, release 13.0, V13.0.48", "driver 13000", ...; "<backend> unavailable" when it cannot be
// asked. Each answer is computed once per process.
const std::string& compiler_version(Backend backend);

}  // namespace tmem
