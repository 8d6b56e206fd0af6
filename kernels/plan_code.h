// A Plan's tcgen05 instructions emitted into a PTX function: the per-warp TMEM address
// (docs/transfer-semantics.md §Rules rule 4) and one st or ld per repeat, then the wait. The
// harness kernels and the embeddable .func share it, so every form addresses TMEM the same way.
#pragma once

#include <map>

#include "runtime/ptx/ir.h"
#include "tmem/plan.h"

namespace tmem::kernels {

// The TMEM address of this warp's first cell: base + ((32 * (warp % 4)) << 16), plus
// d * (warp % 4) + e * (warp / 4) at warpgroup and cta scope (the group index is the warp id).
// `warp` is %tid.x >> 5 (%warpid is not stable, PTX ISA §10.7).
ptx::Reg emit_warp_address(ptx::Function& f, const Plan& plan, ptx::Reg base, ptx::Reg warp);

// One tcgen05.st (store) or tcgen05.ld per repeat k at warp_base + (h_k << 16) + c_k, with the
// registers of the repeat's slots, then (unless `wait` is false) tcgen05.wait::st or wait::ld.
// tcgen05.ld.red writes each repeat's reduction result to the register of its redval_slot.
// Requires: `slot_regs` holds a b32 register for every slot of the plan (redval slots included).
void emit_transfer(ptx::Function& f, const Plan& plan, bool store, ptx::Reg warp_base,
                   const std::map<int, ptx::Reg>& slot_regs, bool wait = true);

}  // namespace tmem::kernels
