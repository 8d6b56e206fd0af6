// The device side of the emulation of users' tcgen05 code (docs/emulation.md §Blackwell kernels on
// Hopper): the CUDA C++ that NVRTC compiles for sm_90 into the .func definitions a lowered module
// calls (kernels/user_emulation.h). It is the existing emulated TMEM (kernels::cuda_lifecycle for
// sm_90: tmemjit::emu_state, emu::resolve's guardrails), the hand-written families of
// kernels/emu/tcgen05_emulation.cuh (alloc, mma, commit, cp, shift, ...) and the ld/st functions
// the lowering generated for the forms the module uses.
#pragma once

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
EmulationLibrarySource emulation_library_source(std::string_view generated);

}  // namespace tmem::kernels
