// The device side of the emulation of users' tcgen05 code (docs/emulation.md §Blackwell kernels on
// Hopper): the CUDA C++ that NVRTC compiles for sm_90 into the .func definitions a lowered module
// calls (kernels/user_emulation.h). It is the existing emulated TMEM (kernels::cuda_lifecycle for
// sm_90: tmemjit::emu_state, emu::resolve's guardrails), the hand-written families of
// kernels/emu/tcgen05_emulation.cuh (alloc, mma, commit, cp, shift, ...) and the ld/st functions
// the lowering generated for the forms the module uses.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tmem::kernels {

struct EmulationLibrarySource {
  std::string text;                                          // the translation unit
  std::vector<std::pair<std::string, std::string>> headers;  // in-memory headers it includes
};

// The library for one lowered module: `generated` is UserLowering::library_source.
// standalone_ctas > 0 (docs/emulation.md §Standalone modules): tmemjit::emu_state starts bound to
// the module's own TMEM and status for grids of up to that many CTAs, and
// tmemjit_emu_standalone_enter (which the lowering calls first in each kernel) zeroes this CTA's
// status, so that a host that knows nothing of the emulation can launch the kernel.
EmulationLibrarySource emulation_library_source(std::string_view generated,
                                                std::uint32_t standalone_ctas = 0);

}  // namespace tmem::kernels
