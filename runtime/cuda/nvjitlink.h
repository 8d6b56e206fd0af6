// libnvJitLink, opened with dlopen on first use (runtime/cuda/shared_library.h), so that a process
// without it still loads libtmemjit and compiles with ptxas instead (resolve_backend).
#pragma once

#include <nvJitLink.h>

#include "tmem/result.h"

// Set by runtime/CMakeLists.txt from nvJitLink.h: the suffix of the versioned functions its inline
// wrappers call (nvJitLinkCreate calls __nvJitLinkCreate_13_0).
#ifndef TMEMJIT_NVJITLINK_SYMBOL_SUFFIX
#error "TMEMJIT_NVJITLINK_SYMBOL_SUFFIX (e.g. _13_0, read from nvJitLink.h) must be defined"
#endif
#define TMEMJIT_NVJITLINK_CONCAT_(a, b) a##b
#define TMEMJIT_NVJITLINK_CONCAT(a, b) TMEMJIT_NVJITLINK_CONCAT_(a, b)
// __nvJitLinkCreate_13_0 for nvJitLinkCreate; naming it in decltype proves the header declares it.
#define TMEMJIT_NVJITLINK_VERSIONED(name) \
  TMEMJIT_NVJITLINK_CONCAT(__##name, TMEMJIT_NVJITLINK_SYMBOL_SUFFIX)

namespace tmem::nvjitlink {

// The entry points the nvjitlink backend calls: the versioned functions of the header libtmemjit
// was built with, which is what its inline wrappers call, so a library older than the header is
// refused rather than misused.
struct Api {
  decltype(&::TMEMJIT_NVJITLINK_VERSIONED(nvJitLinkCreate)) create = nullptr;
  decltype(&::TMEMJIT_NVJITLINK_VERSIONED(nvJitLinkDestroy)) destroy = nullptr;
  decltype(&::TMEMJIT_NVJITLINK_VERSIONED(nvJitLinkAddData)) add_data = nullptr;
  decltype(&::TMEMJIT_NVJITLINK_VERSIONED(nvJitLinkComplete)) complete = nullptr;
  decltype(&::TMEMJIT_NVJITLINK_VERSIONED(nvJitLinkGetLinkedCubinSize)) get_linked_cubin_size =
      nullptr;
  decltype(&::TMEMJIT_NVJITLINK_VERSIONED(nvJitLinkGetLinkedCubin)) get_linked_cubin = nullptr;
  // LTO links (compile_kernel): the linked, optimized program as PTX (-lto -ptx).
  decltype(&::TMEMJIT_NVJITLINK_VERSIONED(nvJitLinkGetLinkedPtxSize)) get_linked_ptx_size = nullptr;
  decltype(&::TMEMJIT_NVJITLINK_VERSIONED(nvJitLinkGetLinkedPtx)) get_linked_ptx = nullptr;
  decltype(&::TMEMJIT_NVJITLINK_VERSIONED(nvJitLinkGetErrorLogSize)) get_error_log_size = nullptr;
  decltype(&::TMEMJIT_NVJITLINK_VERSIONED(nvJitLinkGetErrorLog)) get_error_log = nullptr;
  decltype(&::TMEMJIT_NVJITLINK_VERSIONED(nvJitLinkGetInfoLogSize)) get_info_log_size = nullptr;
  decltype(&::TMEMJIT_NVJITLINK_VERSIONED(nvJitLinkGetInfoLog)) get_info_log = nullptr;
  decltype(&::nvJitLinkVersion) version = nullptr;  // unversioned: it is how one asks
};

// The library: $TMEMJIT_NVJITLINK_LIBRARY when set, else libnvJitLink.so.<major> from the loader's
// search path, then from the toolkit libtmemjit was built against. Opened once per process; the
// outcome (the Api or the reason it is unavailable, kToolchain) is remembered.
Result<const Api*> api();

}  // namespace tmem::nvjitlink
