// libnvrtc, opened with dlopen on first use (runtime/cuda/shared_library.h), so that a process
// without it still loads libtmemjit; only compile_cuda (the CUDA C++ form) needs it.
#pragma once

#include <nvrtc.h>

#include "tmem/result.h"

namespace tmem::nvrtc {

// The entry points compile_cuda calls, typed by the header libtmemjit was built with.
struct Api {
  decltype(&::nvrtcGetErrorString) get_error_string = nullptr;
  decltype(&::nvrtcVersion) version = nullptr;
  decltype(&::nvrtcCreateProgram) create_program = nullptr;
  decltype(&::nvrtcDestroyProgram) destroy_program = nullptr;
  decltype(&::nvrtcAddNameExpression) add_name_expression = nullptr;
  decltype(&::nvrtcCompileProgram) compile_program = nullptr;
  decltype(&::nvrtcGetProgramLogSize) get_program_log_size = nullptr;
  decltype(&::nvrtcGetProgramLog) get_program_log = nullptr;
  decltype(&::nvrtcGetCUBINSize) get_cubin_size = nullptr;
  decltype(&::nvrtcGetCUBIN) get_cubin = nullptr;
  decltype(&::nvrtcGetLoweredName) get_lowered_name = nullptr;
  decltype(&::nvrtcGetPTXSize) get_ptx_size = nullptr;  // compile_kernel's front end
  decltype(&::nvrtcGetPTX) get_ptx = nullptr;
  decltype(&::nvrtcGetLTOIRSize) get_lto_ir_size = nullptr;  // -dlto
  decltype(&::nvrtcGetLTOIR) get_lto_ir = nullptr;
  // Precompiled headers (CUDA 12.8+; null when the library is older): compile_kernel reuses the
  // parse of a source's headers across layouts (docs/specialization.md).
  decltype(&::nvrtcGetPCHCreateStatus) get_pch_create_status = nullptr;
  decltype(&::nvrtcGetPCHHeapSize) get_pch_heap_size = nullptr;
  decltype(&::nvrtcSetPCHHeapSize) set_pch_heap_size = nullptr;
  decltype(&::nvrtcGetPCHHeapSizeRequired) get_pch_heap_size_required = nullptr;

  bool has_pch() const noexcept {
    return get_pch_create_status && get_pch_heap_size && set_pch_heap_size &&
           get_pch_heap_size_required;
  }
};

// The library: $TMEMJIT_NVRTC_LIBRARY when set, else libnvrtc.so.<major> from the loader's search
// path, then from the toolkit libtmemjit was built against. Opened once per process; the outcome
// (the Api or the reason it is unavailable, kToolchain) is remembered.
Result<const Api*> api();

}  // namespace tmem::nvrtc
