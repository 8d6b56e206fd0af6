// nvcc as compile_kernel's CUDA C++ front end (CompileOptions::front_end = kNvcc,
// docs/specialization.md "nvcc as the front end"): the toolkit's nvcc in a subprocess, so that a
// kernel's SASS is what nvcc, the compiler a team ships with, makes of the source with the
// transfers pasted in, rather than NVRTC's.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "runtime/compile/backends.h"
#include "tmem/compile.h"
#include "tmem/result.h"

namespace tmem {

// $TMEMJIT_NVCC, else $CUDA_HOME/bin/nvcc or $CUDA_PATH/bin/nvcc, else the toolkit's libtmemjit was
// built against, else "nvcc" (looked up in PATH).
std::string nvcc_path();

// nvcc's "Build ..." line (its version, for cache keys); "unavailable" when it cannot be run.
// Asked once per process.
const std::string& nvcc_version();

// nvcc on `source` (written as `program_name`'s file name into a scratch directory, with
// `headers` under it and that directory searched first; a header named by an absolute path or
// with ".." is written inside it too, its `#include "<name>"` in `source` rewritten to match, and
// its name's directory searched next, so nothing is ever written beside the user's file) for
// options.target, `nvcc_options` after the library's: kCubin compiles to the cubin
// (options.opt_level, line_info, tmem_access_check and ptx_options go to its ptxas through -Xptxas)
// and keeps the PTX it made; kPtx makes PTX for the virtual architecture. No name expressions, no
// precompiled headers: kUsage for expressions; kToolchain with nvcc's output on a failed compile.
Result<CudaFrontEnd> compile_cuda_with_nvcc(
    const std::string& source, const std::string& program_name,
    const std::vector<std::pair<std::string, std::string>>& headers,
    const std::vector<std::string>& nvcc_options, const CompileOptions& options,
    FrontEndOutput output);

}  // namespace tmem
