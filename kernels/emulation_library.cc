// The emulation library's translation unit, from the texts embedded at build time
// (cmake/TmemjitEmbed.cmake) and the lifecycle of the sm_90 emulation.
#include "kernels/emulation_library.h"

#include "kernels/device_function.h"
#include "kernels/emulation_kernels.h"

namespace tmem::kernels {
namespace embedded {
extern const char kEmuUmmaDecode[];  // kernels/emu/umma_decode.cuh
extern const char kEmuTcgen05[];     // kernels/emu/tcgen05_emulation.cuh
}  // namespace embedded

namespace {

constexpr std::string_view kUnboundState = "__device__ EmuState emu_state;\n";

// The state a standalone module owns (emulation_library_source): arrays for `ctas` CTAs, the
// state bound to them from the start, and the entry that clears this CTA's status.
std::string standalone_state(std::uint32_t ctas) {
  const std::string n = std::to_string(ctas) + "ull";
  return "// A standalone module (docs/emulation.md §Standalone modules): its own state, for "
         "grids\n"
         "// of up to " +
         std::to_string(ctas) +
         " CTAs; one launch at a time.\n"
         "__device__ unsigned int standalone_tmem[" +
         n + " * " + std::to_string(kEmuTmemWords) +
         "ull];\n"
         "__device__ unsigned int standalone_status[" +
         n + " * " + std::to_string(kEmuUserStatusWords) +
         "ull];\n"
         "__device__ EmuState emu_state = {standalone_tmem, standalone_status, 0ull};\n";
}

// Called first by every kernel of a standalone module, by all its threads: a CTA past the arrays
// stops the kernel with a message (no host reads the status); otherwise this CTA's status is
// zeroed, as a binding host would, before any CTA of its cluster can touch it.
std::string standalone_entry(std::uint32_t ctas) {
  return "extern \"C\" __device__ __noinline__ void tmemjit_emu_standalone_enter() {\n"
         "  using namespace tmemjit;\n"
         "  const unsigned cta = emu::cta(), threads = blockDim.x * blockDim.y * blockDim.z;\n"
         "  if (emu_state.tmem == standalone_tmem && cta >= " +
         std::to_string(ctas) +
         "u) {\n"
         "    if (emu::thread() == 0u)\n"
         "      printf(\"tmemjit: CTA %u of the grid is past the %u CTAs whose emulated TMEM this "
         "standalone module holds; lower it with a larger standalone_ctas\\n\", cta, " +
         std::to_string(ctas) +
         "u);\n"
         "    __trap();\n  }\n"
         "  unsigned int* status = emu_state.status + static_cast<unsigned long long>(cta) * " +
         std::to_string(kEmuUserStatusWords) +
         "ull;\n"
         "  for (unsigned i = emu::thread(); i < " +
         std::to_string(kEmuUserStatusWords) +
         "u; i += threads) status[i] = 0u;\n"
         "  __syncthreads();\n"
         "  asm volatile(\"barrier.cluster.arrive.release.aligned;\\n\\t\"\n"
         "               \"barrier.cluster.wait.acquire.aligned;\" ::: \"memory\");\n}\n";
}

}  // namespace

EmulationLibrarySource emulation_library_source(std::string_view generated,
                                                std::uint32_t standalone_ctas) {
  EmulationLibrarySource library;
  // cta_group 2: the pair's cluster_sync too; the state and guardrails are the same for both.
  library.text = cuda_lifecycle(Target::kSm90, /*extern_state=*/false, /*cta_group=*/2);
  if (standalone_ctas > 0) {
    const size_t at = library.text.find(kUnboundState);
    if (at != std::string::npos)
      library.text.replace(at, kUnboundState.size(), standalone_state(standalone_ctas));
  }
  library.text += embedded::kEmuTcgen05;
  if (standalone_ctas > 0) library.text += standalone_entry(standalone_ctas);
  library.text += "\n// The tcgen05.ld/st forms of this module (kernels/user_emulation.cc)\n";
  library.text += generated;
  library.headers.emplace_back("kernels/emu/umma_decode.cuh", embedded::kEmuUmmaDecode);
  return library;
}

}  // namespace tmem::kernels
