#include "runtime/cuda/nvjitlink.h"

#include <string>

#include "runtime/cuda/shared_library.h"
#include "runtime/support/settings.h"

// Set by runtime/CMakeLists.txt from the toolkit found at configure time.
#ifndef TMEMJIT_NVJITLINK_SONAME
#error "TMEMJIT_NVJITLINK_SONAME (e.g. libnvJitLink.so.13) must be defined"
#endif
#ifndef TMEMJIT_CUDA_LIBRARY_DIR
#define TMEMJIT_CUDA_LIBRARY_DIR ""
#endif
#define TMEMJIT_STRING_(x) #x
#define TMEMJIT_STRING(x) TMEMJIT_STRING_(x)

namespace tmem::nvjitlink {
namespace {

#define TMEMJIT_LOAD_VERSIONED(slot, name)                                                     \
  if (Status loaded = load_symbol(api.slot, library,                                           \
                                  TMEMJIT_STRING(TMEMJIT_NVJITLINK_VERSIONED(name)), too_old); \
      !loaded)                                                                                 \
    return std::move(loaded).error();

Result<Api> open_api() {
  Result<SharedLibrary> opened = open_shared_library(
      "nvJitLink", library_candidates(Settings::from_environment().nvjitlink_library,
                                      TMEMJIT_NVJITLINK_SONAME, TMEMJIT_CUDA_LIBRARY_DIR));
  if (!opened) return std::move(opened).error();
  const SharedLibrary& library = *opened;
  const std::string too_old =
      "not nvJitLink, or one older than the nvJitLink.h libtmemjit was built with";
  Api api;
  TMEMJIT_LOAD_VERSIONED(create, nvJitLinkCreate)
  TMEMJIT_LOAD_VERSIONED(destroy, nvJitLinkDestroy)
  TMEMJIT_LOAD_VERSIONED(add_data, nvJitLinkAddData)
  TMEMJIT_LOAD_VERSIONED(complete, nvJitLinkComplete)
  TMEMJIT_LOAD_VERSIONED(get_linked_cubin_size, nvJitLinkGetLinkedCubinSize)
  TMEMJIT_LOAD_VERSIONED(get_linked_cubin, nvJitLinkGetLinkedCubin)
  TMEMJIT_LOAD_VERSIONED(get_linked_ptx_size, nvJitLinkGetLinkedPtxSize)
  TMEMJIT_LOAD_VERSIONED(get_linked_ptx, nvJitLinkGetLinkedPtx)
  TMEMJIT_LOAD_VERSIONED(get_error_log_size, nvJitLinkGetErrorLogSize)
  TMEMJIT_LOAD_VERSIONED(get_error_log, nvJitLinkGetErrorLog)
  TMEMJIT_LOAD_VERSIONED(get_info_log_size, nvJitLinkGetInfoLogSize)
  TMEMJIT_LOAD_VERSIONED(get_info_log, nvJitLinkGetInfoLog)
  // nvJitLinkVersion has no versioned name: it is how a caller learns the version.
  if (Status loaded = load_symbol(api.version, library, "nvJitLinkVersion", too_old); !loaded)
    return std::move(loaded).error();
  return api;
}

#undef TMEMJIT_LOAD_VERSIONED

}  // namespace

Result<const Api*> api() {
  static const Result<Api> opened = open_api();  // thread-safe, once per process
  if (!opened) return opened.error();
  return &*opened;
}

}  // namespace tmem::nvjitlink
