// NVIDIA libraries opened with dlopen on first use (the driver, libnvJitLink, libnvrtc), so that
// libtmemjit starts, checks and compiles with its other backends where they are missing.
#pragma once

#include <string>
#include <vector>

#include "tmem/result.h"

namespace tmem {

// Where to look for a library, in order: `chosen` alone when it is not empty (the user named it,
// e.g. $TMEMJIT_NVRTC_LIBRARY, so nothing else is tried); else `soname` through the dynamic
// loader's search (LD_LIBRARY_PATH, ld.so.cache), then `toolkit_dir`/`soname`, the toolkit
// libtmemjit was built against.
std::vector<std::string> library_candidates(const std::string& chosen, const std::string& soname,
                                            const std::string& toolkit_dir);

struct SharedLibrary {
  void* handle = nullptr;
  std::string name;  // the candidate that loaded, for messages
};

// Opens the first candidate that loads (RTLD_NOW | RTLD_LOCAL). The handle is never closed: the
// library's own threads and atexit handlers may outlive any owner we could give it. On failure:
// kToolchain "<what> could not be loaded (<candidate>: <dlerror>; ...)".
Result<SharedLibrary> open_shared_library(const std::string& what,
                                          const std::vector<std::string>& candidates);

// The address of `name` in `library`; kToolchain "<library> has no <name> (<hint>)" when absent.
Result<void*> find_symbol(const SharedLibrary& library, const std::string& name,
                          const std::string& hint);

// The address of `name` in `library`, or null: for symbols a caller can do without, or whose
// absence it reports in its own words.
void* find_optional_symbol(const SharedLibrary& library, const std::string& name);

// find_symbol into a typed function pointer.
template <class Function>
Status load_symbol(Function*& slot, const SharedLibrary& library, const std::string& name,
                   const std::string& hint) {
  Result<void*> address = find_symbol(library, name, hint);
  if (!address) return std::move(address).error();
  slot = reinterpret_cast<Function*>(*address);
  return std::monostate{};
}

}  // namespace tmem
