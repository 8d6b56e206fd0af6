// The emulation library's translation unit, from the texts embedded at build time
// (cmake/TmemjitEmbed.cmake) and the lifecycle of the sm_90 emulation.
#include "kernels/emulation_library.h"

#include "kernels/device_function.h"

namespace tmem::kernels {
namespace embedded {
extern const char kEmuUmmaDecode[];  // kernels/emu/umma_decode.cuh
extern const char kEmuTcgen05[];     // kernels/emu/tcgen05_emulation.cuh
}  // namespace embedded

EmulationLibrarySource emulation_library_source(std::string_view generated) {
  EmulationLibrarySource library;
  // cta_group 2: the pair's cluster_sync too; the state and guardrails are the same for both.
  library.text = cuda_lifecycle(Target::kSm90, /*extern_state=*/false, /*cta_group=*/2);
  library.text += embedded::kEmuTcgen05;
  library.text += "\n// The tcgen05.ld/st forms of this module (kernels/user_emulation.cc)\n";
  library.text += generated;
  library.headers.emplace_back("kernels/emu/umma_decode.cuh", embedded::kEmuUmmaDecode);
  return library;
}

}  // namespace tmem::kernels
