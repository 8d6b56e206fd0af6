// The lowering pipeline of a module that issues its own tcgen05 instructions (docs/emulation.md
// §Blackwell kernels on Hopper), shared by tmem::emulate_ptx and compile_kernel for sm_90: the text
// lowering (kernels/user_emulation.h), NVRTC's compile of the emulation library the module needs
// (kernels/emulation_library.h, once per process for each library text), and the splice.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tmem/compile.h"
#include "tmem/result.h"

namespace tmem {

struct EmulatedModule {
  std::string ptx;                        // sm_90, the library's functions spliced in
  std::vector<std::string> instructions;  // status id k names instructions[k - 1]
  std::vector<std::pair<std::string, int>> lowered;
  bool changed = false;
  double lower_ms = 0;
  double library_ms = 0;  // 0 when this process compiled the same library before
};

// `options` are the sm_90 compile's (target kSm90): the library's NVRTC compile follows its
// line_info. Status ids start at `first_id` (compile_kernel's transfers take the ones before).
// standalone_ctas: EmulateOptions::standalone_ctas.
Result<EmulatedModule> emulate_module(std::string_view ptx, std::string_view path,
                                      const CompileOptions& options, int first_id = 1,
                                      std::uint32_t standalone_ctas = 0);

// One tmemjit::emu_state in a module that has several definitions (the library's, spliced after
// the header, and compile_kernel's emulated transfers'): the first, which precedes every use.
void keep_first_emulation_state(std::string& ptx);

}  // namespace tmem
