// tmem::select: picks the tcgen05.ld/st form and the operand views for two logical tiles
// (`tmemjit check --op auto`), preferring the fewest instructions per warp
// (docs/transfer-semantics.md §Plan).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tmem/export.h"
#include "tmem/opcode.h"
#include "tmem/plan.h"
#include "tmem/result.h"
#include "tmem/transfer.h"
#include "tmem/view.h"

TMEMJIT_API_BEGIN
namespace tmem {

// One form that was tried, and what became of it.
struct SelectionCandidate {
  Opcode op;
  bool legal = false;
  int instructions_per_warp = 0;  // when legal
  int regs_per_thread = 0;        // when legal
  std::string verdict;  // "chosen: ...", "legal but ...", "rejected: <rule>", "skipped: ..."
};

struct Selection {
  TransferSpec spec;  // the chosen opcode with its (group, *repeat, *atom) views
  Plan plan;
  std::vector<SelectionCandidate> considered;  // every form tried, in the order tried
  // Why these forms were tried: for 16-bit tiles, how the two elements of a register pair up in
  // TMEM (plain .b32, or .pack::16b / .unpack::16b). Empty for 32-bit tiles.
  std::vector<std::string> notes;
  // The notes, then one line per candidate: why it won or lost.
  std::string explain() const;
};

struct SelectOptions {
  // The most registers one instruction may take (its vector, docs/tcgen05-rules.md §Registers), so
  // that a load's destination fits beside the rest of a kernel: forms above it are skipped, and the
  // tile moves in more repeats of a smaller .num (32x32b.x32 four times rather than x128 once). 0:
  // no budget (128, the widest form). Outside 0..128 is kUsage.
  int register_budget = 0;
};

// `tmem` and `regs` are the same logical tile (equal shapes, both 32-bit or both 16-bit dtypes),
// without group or repeat axes: e.g. tmem_datapath_layout("B",64,128) and the 64x128 register
// tile. Every form of `direction` except 16x32bx2 (which needs a second region) is tried: the
// tile's index bits are sorted into warps (the register layout's thread bits above the lane),
// atom rows and columns (the TMEM layout's low lane and column bits) and repeats (the rest), and
// the result is checked like any spec. The legal form with the fewest instructions per warp wins,
// then the smaller register budget, then the earlier shape (32x32b first).
// 16-bit tiles: the bit that moves an element to the other half of its register (m step 1, in
// 16-bit units) becomes the trailing half axis. Where it moves the element in TMEM picks the
// forms (Selection::notes says which): 1 unit, the same cell, gives the plain .b32 forms (two
// 16-bit elements per 32-bit register and cell: FA4's bf16x2 P); 2 units, the low half of the next
// cell, gives the .pack::16b (ld) / .unpack::16b (st) forms.
// Errors: kLayout for tiles it cannot split (shapes differ, 32-bit against 16-bit, size not a
// power of two, 16-bit elements not paired as above), kRule when no form fits (the explanation
// lists why each failed).
Result<Selection> select(Direction direction, const Scope& scope, const View& tmem,
                         const View& regs, const SelectOptions& options = {});

}  // namespace tmem
TMEMJIT_API_END
