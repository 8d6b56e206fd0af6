// tmem::sim::run_kernel: the CPU simulator. It executes a PTX IR module (the instructions a GPU
// would run, as kernels::build_kernel produced them) for one CTA, or a cluster of two (a
// cta_group::2 pair), thread by thread, with the warp-collective tcgen05 instructions executed when
// all 32 threads of a warp reach them.
//
// It knows nothing of Plans or the checker: ld/st move data by the native image of
// docs/tcgen05-rules.md §Images (tmem/image.h) at the 32-bit address in their register, so a
// planning or code generation bug shows up as wrong data. While it runs it enforces the runtime
// rules of docs/tcgen05-rules.md §Addresses, §Lifecycle, §Sync, §Rules (R16-R26, R29-R31): lane
// slabs, allocated columns, alloc/dealloc sizes and order, relinquish, uniform operands of
// .sync.aligned instructions, waits before reuse, the fence/barrier hand-off between warps, nothing
// left allocated at exit. A violation stops the run with an Error (ErrorCode::kWrongData) naming
// the rule, the PTX line, the warp and the TMEM cell.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "runtime/ptx/ir.h"
#include "runtime/sim/memory.h"
#include "runtime/sim/tmem.h"
#include "tmem/result.h"

namespace tmem::sim {

struct Config {
  int threads = 128;  // threads per CTA; a multiple of 32, at most 1024
  // CTAs of the cluster: 1, or 2 for a kernel whose tcgen05 lifecycle uses cta_group::2. CTA c
  // reads c from %ctaid.x and %cluster_ctarank, has its own TMEM and shared memory, and syncs
  // with its peer only through barrier.cluster.arrive/wait. A pair's alloc/dealloc is modelled
  // as one half per CTA, issued by one warp of each: the halves take the same columns and nCols
  // (R29); a peer's alloc must reach a warp (fence, cluster barrier, fence) before the warp uses
  // or frees the pair's columns, and every access of both CTAs before either frees them (R31).
  int ctas = 1;
  // Instructions executed by all threads together (a warp-collective one counts once per
  // thread) before the run is abandoned: a broken kernel cannot hang the simulator.
  std::uint64_t instruction_budget = std::uint64_t{1} << 24;
  Placement placement = Placement::kHighest;
};

// Runs entry `entry` of `module` (empty: its only .entry) once. `params` are the values of its
// parameters in order (global addresses from `memory`). Errors: kWrongData for a rule broken
// while running, a divergent collective, a bad memory access or an exhausted budget; kInternal
// for an instruction the simulator does not execute; kUsage for a bad configuration; the
// verifier's error for a module that does not verify.
Status run_kernel(const ptx::Module& module, std::string_view entry, const Config& config,
                  std::span<const std::uint64_t> params, GlobalMemory& memory);

}  // namespace tmem::sim
