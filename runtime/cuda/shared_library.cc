#include "runtime/cuda/shared_library.h"

#include <dlfcn.h>

namespace tmem {

std::vector<std::string> library_candidates(const std::string& chosen, const std::string& soname,
                                            const std::string& toolkit_dir) {
  if (!chosen.empty()) return {chosen};
  std::vector<std::string> candidates = {soname};
  if (!toolkit_dir.empty()) candidates.push_back(toolkit_dir + "/" + soname);
  return candidates;
}

Result<SharedLibrary> open_shared_library(const std::string& what,
                                          const std::vector<std::string>& candidates) {
  std::string tried;
  for (const std::string& candidate : candidates) {
    if (void* handle = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL))
      return SharedLibrary{handle, candidate};
    const char* why = ::dlerror();
    tried += (tried.empty() ? "" : "; ") + std::string(why != nullptr ? why : candidate);
  }
  return Error(ErrorCode::kToolchain, what + " could not be loaded (" + tried + ")");
}

Result<void*> find_symbol(const SharedLibrary& library, const std::string& name,
                          const std::string& hint) {
  if (void* address = find_optional_symbol(library, name)) return address;
  return Error(ErrorCode::kToolchain, library.name + " has no " + name + " (" + hint + ")");
}

void* find_optional_symbol(const SharedLibrary& library, const std::string& name) {
  return ::dlsym(library.handle, name.c_str());
}

}  // namespace tmem
