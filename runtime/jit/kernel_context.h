// The compile context of compile_kernel and compile_transfer: where each option goes (NVRTC or
// the PTX compiler), the library's defaults, the options checked before any compile, and the
// cache key, whose every field is listed in kernel_key (docs/cache.md).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "runtime/support/hash.h"
#include "tmem/compile.h"
#include "tmem/result.h"
#include "tmem/specialize.h"

namespace tmem {

struct KernelContext {
  CompileOptions options;               // as given, with the backend resolved
  CompileOptions ptx;                   // what the PTX compile gets (ptx_options; no extra_options)
  std::vector<std::string> nvrtc;       // NVRTC's options after the architecture: the user's, then
                                        // the defaults that theirs do not replace
  std::vector<std::string> user_nvrtc;  // the user's alone (the ones to check)
  // The user's own NVRTC precompiled-header options (--pch, --pch-dir=, --create-pch=,
  // --use-pch=): replaced by the library's, so never given to NVRTC. NVRTC reuses a precompiled
  // header without checking in-memory headers, the generated transfers among them, so one of its
  // own making could serve one layout's transfers to another (docs/specialization.md "Options").
  std::vector<std::string> replaced_pch;
  // A CUDA source with the backend left to auto: NVRTC compiles to the cubin itself (its own
  // ptxas), which is exactly what NVRTC makes of the source; a named backend gets NVRTC's PTX.
  bool nvrtc_compiles = false;
  Key128 digest;  // every option, compiler version and the library build
};

// compile_transfer's context: the harness kernels are PTX, so `ptx` is the options as given (with
// the backend resolved) and NVRTC runs no front end. kUsage for backend nvrtc.
Result<KernelContext> transfer_context(const CompileOptions& options);

// kUsage for a backend that compiles no PTX (nvrtc), an architecture among the NVRTC options
// (the target is CompileOptions::target), NVRTC options for a PTX source, or an empty option.
Result<KernelContext> kernel_context(const KernelSource& source, const CompileOptions& options);

// Runs each compiler once on an empty input with the user's options (once per process and
// context): a wrong option is a kUsage error with the compiler's own message, before the source is
// compiled. Nothing runs when the user gave no options.
Status check_user_options(const KernelSource& source, const KernelContext& context);

// The cache key of compile_kernel, from this explicit list: the context digest (options, compiler
// versions, library build), the source's language, path (compiler messages name it), entry and
// text, the digest of every file it includes (runtime/compile/include_closure.h), and per
// transfer its name, TransferSpec::fingerprint and every DeviceFunctionOptions field (wait,
// warp_argument, column_argument, cta_group, language).
Key128 kernel_key(const KernelSource& source, std::span<const NamedTransfer> transfers,
                  const KernelContext& context, const Key128& includes);

// The toolkit's include directory for NVRTC: $TMEMJIT_CUDA_INCLUDE_DIR, $CUDA_HOME/include or
// $CUDA_PATH/include, else the one libtmemjit was built against; empty when none exists.
const std::string& toolkit_include_dir();

}  // namespace tmem
