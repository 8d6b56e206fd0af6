#include "runtime/cuda/nvrtc.h"

#include <string>

#include "runtime/cuda/shared_library.h"
#include "runtime/cuda/signal_guard.h"
#include "runtime/support/settings.h"

// Set by runtime/CMakeLists.txt from the toolkit found at configure time.
#ifndef TMEMJIT_NVRTC_SONAME
#error "TMEMJIT_NVRTC_SONAME (e.g. libnvrtc.so.13) must be defined"
#endif
#ifndef TMEMJIT_CUDA_LIBRARY_DIR
#define TMEMJIT_CUDA_LIBRARY_DIR ""
#endif

namespace tmem::nvrtc {
namespace {

Result<Api> open_api() {
  Result<SharedLibrary> opened = open_shared_library(
      "NVRTC", library_candidates(Settings::from_environment().nvrtc_library, TMEMJIT_NVRTC_SONAME,
                                  TMEMJIT_CUDA_LIBRARY_DIR));
  if (!opened) return std::move(opened).error();
  const SharedLibrary& library = *opened;
  const std::string too_old = "not NVRTC, or one older than the nvrtc.h libtmemjit was built with";
  Api api;
  for (Status loaded : {
           load_symbol(api.get_error_string, library, "nvrtcGetErrorString", too_old),
           load_symbol(api.version, library, "nvrtcVersion", too_old),
           load_symbol(api.create_program, library, "nvrtcCreateProgram", too_old),
           load_symbol(api.destroy_program, library, "nvrtcDestroyProgram", too_old),
           load_symbol(api.add_name_expression, library, "nvrtcAddNameExpression", too_old),
           load_symbol(api.compile_program, library, "nvrtcCompileProgram", too_old),
           load_symbol(api.get_program_log_size, library, "nvrtcGetProgramLogSize", too_old),
           load_symbol(api.get_program_log, library, "nvrtcGetProgramLog", too_old),
           load_symbol(api.get_cubin_size, library, "nvrtcGetCUBINSize", too_old),
           load_symbol(api.get_cubin, library, "nvrtcGetCUBIN", too_old),
           load_symbol(api.get_lowered_name, library, "nvrtcGetLoweredName", too_old),
           load_symbol(api.get_ptx_size, library, "nvrtcGetPTXSize", too_old),
           load_symbol(api.get_ptx, library, "nvrtcGetPTX", too_old),
           load_symbol(api.get_lto_ir_size, library, "nvrtcGetLTOIRSize", too_old),
           load_symbol(api.get_lto_ir, library, "nvrtcGetLTOIR", too_old),
       })
    if (!loaded) return std::move(loaded).error();
  // NVRTC's compile installs SIGINT/SIGTERM handlers of its own; the program's are kept.
  api.compile_program = keep_signal_handlers(api.compile_program);
  // Optional: an NVRTC without them compiles every layout from scratch.
  (void)load_symbol(api.get_pch_create_status, library, "nvrtcGetPCHCreateStatus", too_old);
  (void)load_symbol(api.get_pch_heap_size, library, "nvrtcGetPCHHeapSize", too_old);
  (void)load_symbol(api.set_pch_heap_size, library, "nvrtcSetPCHHeapSize", too_old);
  (void)load_symbol(api.get_pch_heap_size_required, library, "nvrtcGetPCHHeapSizeRequired",
                    too_old);
  return api;
}

}  // namespace

Result<const Api*> api() {
  static const Result<Api> opened = open_api();  // thread-safe, once per process
  if (!opened) return opened.error();
  return &*opened;
}

}  // namespace tmem::nvrtc
