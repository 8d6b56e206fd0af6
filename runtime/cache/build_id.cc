// library_build_id: the GNU build ID note of the loaded object that holds this code.
#include "runtime/cache/build_id.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/stat.h>

#include <cstring>

namespace tmem {
namespace {

// The object holding this code is libtmemjit (or, for the static core, the program linking it).
struct BuildIdSearch {
  ElfW(Addr) code;
  std::string id;
};

int find_build_id(struct dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<BuildIdSearch*>(data);
  bool holds_code = false;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& phdr = info->dlpi_phdr[i];
    const ElfW(Addr) start = info->dlpi_addr + phdr.p_vaddr;
    if (phdr.p_type == PT_LOAD && search->code >= start && search->code < start + phdr.p_memsz)
      holds_code = true;
  }
  if (!holds_code) return 0;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& phdr = info->dlpi_phdr[i];
    if (phdr.p_type != PT_NOTE) continue;
    const auto* at = reinterpret_cast<const unsigned char*>(info->dlpi_addr + phdr.p_vaddr);
    const unsigned char* end = at + phdr.p_memsz;
    auto align4 = [](size_t n) { return (n + 3) & ~size_t{3}; };
    while (at + sizeof(ElfW(Nhdr)) <= end) {
      const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(at);
      const unsigned char* name = at + sizeof(ElfW(Nhdr));
      const unsigned char* desc = name + align4(note->n_namesz);
      if (desc + note->n_descsz > end) break;
      if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
          std::memcmp(name, "GNU", 4) == 0) {
        static constexpr char kHex[] = "0123456789abcdef";
        for (size_t b = 0; b < note->n_descsz; ++b) {
          search->id += kHex[desc[b] >> 4];
          search->id += kHex[desc[b] & 0xf];
        }
        return 1;
      }
      at = desc + align4(note->n_descsz);
    }
  }
  return 1;  // the object holding the code has no build ID
}

}  // namespace

const std::string& library_build_id() {
  static const std::string id = [] {
    BuildIdSearch search{reinterpret_cast<ElfW(Addr)>(&find_build_id), {}};
    ::dl_iterate_phdr(find_build_id, &search);
    if (!search.id.empty()) return "build-id " + search.id;
    Dl_info info{};
    struct stat file {};
    if (::dladdr(reinterpret_cast<void*>(&find_build_id), &info) != 0 &&
        info.dli_fname != nullptr && ::stat(info.dli_fname, &file) == 0)
      return "file " + std::string(info.dli_fname) + " " + std::to_string(file.st_size) + " " +
             std::to_string(file.st_mtim.tv_sec) + "." + std::to_string(file.st_mtim.tv_nsec);
    return std::string("unknown build");
  }();
  return id;
}

}  // namespace tmem
