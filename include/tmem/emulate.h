// Blackwell kernels on Hopper (docs/emulation.md §Blackwell kernels on Hopper): a module compiled
// for a tcgen05 target (sm_100a/f, sm_103a/f, ...), the library's or anyone's, lowered so that
// every statement sm_90 lacks (tcgen05.alloc/ld/st/mma/commit/cp/shift, fences and waits, the
// cluster launch control, packed f32x2 arithmetic) runs as emulation code with TMEM in global
// memory, then compiled for sm_90 and launched through a Kernel that binds the emulated TMEM.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tmem/code_stats.h"
#include "tmem/compile.h"
#include "tmem/device_function.h"
#include "tmem/export.h"
#include "tmem/kernel.h"
#include "tmem/result.h"

TMEMJIT_API_BEGIN
namespace tmem {

struct EmulateOptions {
  // The kernel the handle launches: its name in the PTX (plain or lowered). Empty: the module's
  // only entry (more than one is a kUsage error naming them).
  std::string entry;
  // The file name messages use ("kernel.ptx" when empty).
  std::string path;
  // Strict mode (docs/emulation.md §Strict mode): a tcgen05.ld/st of TMEM columns that an MMA
  // writes, before the tcgen05.commit that completes it, is a kRule error from emulation_check()
  // (on hardware it races with the MMA), and a fresh allocation reads as all ones (NaN as f32)
  // until written. Costs one check per access.
  bool strict = false;
  // A standalone module (docs/emulation.md §Standalone modules), for a host that launches the
  // cubin itself and knows nothing of the emulation: > 0 makes the module hold the emulated TMEM
  // and status of that many CTAs (256 KB and 10 KB each, allocated when the module loads) and
  // clear a CTA's status as it starts. Grids of up to that many CTAs, one launch at a time; a CTA
  // past them prints why and traps. Kernel::launch still binds its own state. 0: the host binds.
  std::uint32_t standalone_ctas = 0;
  // backend, opt_level, line_info, keep_dir and ptx_options apply to the sm_90 compile; target is
  // ignored (the emulation target is sm_90).
  CompileOptions compile;
};

// What the lowering did, for the CLI's report and the docs' tables.
struct EmulationReport {
  // Statements rewritten, per family ("tcgen05.mma", "tcgen05.ld", ...), in first-seen order.
  std::vector<std::pair<std::string, int>> lowered;
  // false: the module had nothing sm_90 lacks and was only retargeted.
  bool changed = false;
  CodeStats code;             // of the entry, from the sm_90 cubin
  double lower_ms = 0;        // the text lowering
  double library_ms = 0;      // NVRTC's compile of the emulation functions the module needs
  double ptx_compile_ms = 0;  // the sm_90 PTX compile of the whole module
  std::vector<std::string> warnings;
};

struct EmulatedKernel {
  Kernel kernel;    // launches bind the emulated TMEM; emulation_check() reports violations
  std::string ptx;  // the lowered sm_90 module, the emulation functions spliced in
  EmulationReport report;
};

// Lowers `ptx` (a module for a tcgen05 target) and compiles it for sm_90. kUsage for PTX that does
// not parse, a statement sm_90 lacks that the lowering does not know (naming it and its line), a
// form not emulated yet (docs/emulation.md lists them), or an entry the module lacks.
Result<EmulatedKernel> emulate_ptx(std::string_view ptx, const EmulateOptions& options = {});

// A CUDA C++ kernel (source.language kCuda) compiled by NVRTC to PTX for options.compile.target (a
// tcgen05 target; sm_90 stands for sm_100a, as a kernel whose body is under
// `#if __CUDA_ARCH__ >= 1000` is empty for sm_90) with options.compile.nvrtc_options, then
// emulate_ptx. source.entry names the kernel (empty: the module's only one).
Result<EmulatedKernel> emulate_cuda(const KernelSource& source, const EmulateOptions& options = {});

}  // namespace tmem
TMEMJIT_API_END
