// tmem::Plan: a checked transfer, instruction by instruction, ready for code generation and the
// simulator (docs/transfer-semantics.md §Plan, "Plan = opcode, scope, per repeat k: (h_k, c_k,
// slots), d, ncols, imm").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tmem/export.h"
#include "tmem/opcode.h"
#include "tmem/transfer.h"

TMEMJIT_API_BEGIN
namespace tmem {

// A thread has at most 255 registers; check refuses register slots past 254.
inline constexpr int kMaxRegistersPerThread = 255;
// A plan that holds more registers than this per thread leaves fewer than 63 of the 255 for the
// rest of a kernel (addresses, loop counters, predicates, an epilogue's math): ptxas will likely
// spill (Plan::warnings). Move such a tile in parts, or let select() pick smaller forms.
inline constexpr int kSpillWarningRegisters = 192;

// One instruction per warp: repeat k of the transfer.
struct RepeatStep {
  std::vector<std::int64_t> index;  // the repeat coordinate (empty when there are no repeat axes)
  int lane_offset = 0;              // h_k: 0, or 16 for a 16-row shape on the upper half-slab
  int column = 0;                   // c_k: 32-bit TMEM column of the access for group 0
  std::vector<int> slots;  // register slot (32-bit register index) of instruction register r
  // tcgen05.ld.red: the slot of this instruction's reduction result (redval), after every slot
  // of the register view; -1 for other forms.
  int redval_slot = -1;
  friend bool operator==(const RepeatStep& a, const RepeatStep& b) {
    return a.index == b.index && a.lane_offset == b.lane_offset && a.column == b.column &&
           a.slots == b.slots && a.redval_slot == b.redval_slot;
  }
  friend bool operator!=(const RepeatStep& a, const RepeatStep& b) { return !(a == b); }
};

struct Plan {
  Opcode op;
  Scope scope;
  std::vector<std::int64_t> repeat_shape;  // extents of the repeat axes
  std::vector<RepeatStep> repeats;         // row-major over repeat_shape
  // Column of group g: c_k + d*(g % 4) + e*(g / 4). docs/transfer-semantics.md §Rules rule 4 has
  // c_k + d*g; warps w and w+4 share a lane slab, so cta scope may also step by warpgroup (e = 4*d
  // recovers d*g).
  int group_column_stride = 0;      // d: per warp rank in the warpgroup
  int warpgroup_column_stride = 0;  // e: per warpgroup (cta scope with more than 4 warps)
  int alloc_columns = 32;           // power of two in [32, 512]
  int columns_used = 0;             // one past the highest column touched
  int regs_per_thread = 0;          // register budget: highest slot + 1 (redval slots included)
  std::optional<std::int64_t> imm;  // 16x32bx2 only

  int warps() const noexcept { return scope.groups(); }
  int instructions_per_warp() const noexcept { return static_cast<int>(repeats.size()); }

  // TMEM address (lane << 16 | column) of repeat k for the warp of group g, relative to the
  // allocation base: lane 32*(warp % 4) + h_k, column c_k + d*(g % 4) + e*(g / 4) (rule 4).
  std::uint32_t address(int group, int repeat) const noexcept {
    const int warp = scope.warp_of_group(group);
    const std::uint32_t lane =
        static_cast<std::uint32_t>(32 * (warp % 4) + repeats[repeat].lane_offset);
    const std::uint32_t column =
        static_cast<std::uint32_t>(repeats[repeat].column + group_column_stride * (group % 4) +
                                   warpgroup_column_stride * (group / 4));
    return lane << 16 | column;
  }

  // What is legal but likely costly, one sentence each (lower-case, no final period): more than
  // kSpillWarningRegisters registers per thread. `tmemjit check` prints them as "warning: ..."
  // and `check --json` as "warnings".
  std::vector<std::string> warnings() const;

  // A readable listing; summary() is the one-paragraph form printed by `tmemjit check`.
  std::string to_string() const;
  std::string summary() const;
  // JSON with the keys of docs/design.md §CLI (op, scope, warps, repeats,
  // instructions_per_warp, regs_per_thread, alloc_columns) and, with `full`, every repeat's lane,
  // column and slots. The CLI adds its "ok" envelope; the plan is data only.
  std::string to_json(bool full) const;

  friend bool operator==(const Plan& a, const Plan& b) {
    return a.op == b.op && a.scope == b.scope && a.repeat_shape == b.repeat_shape &&
           a.repeats == b.repeats && a.group_column_stride == b.group_column_stride &&
           a.warpgroup_column_stride == b.warpgroup_column_stride &&
           a.alloc_columns == b.alloc_columns && a.columns_used == b.columns_used &&
           a.regs_per_thread == b.regs_per_thread && a.imm == b.imm;
  }
  friend bool operator!=(const Plan& a, const Plan& b) { return !(a == b); }
};

}  // namespace tmem
TMEMJIT_API_END
