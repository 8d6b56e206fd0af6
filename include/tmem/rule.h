// tmem::Rule: which rule an Error breaks (Error::rule()), so callers and tests can act on it
// without reading the message.
#pragma once

#include <optional>
#include <string_view>

#include "tmem/export.h"

TMEMJIT_API_BEGIN
namespace tmem {

// The native-image rules (docs/transfer-semantics.md §Rules) that tmem::check applies (to_string()
// is the prefix of the message, "placement: ..."), then the rule ids of docs/tcgen05-rules.md
// §Rules that the opcode parser, the target table and the simulator cite (to_string() is "R1" ..
// "R31").
enum class Rule {
  kNone,  // the error is not a rule violation (parse, limit, toolchain, driver, wrong data, ...)

  // docs/transfer-semantics.md §Rules, in the order tmem::check applies them (docs/checking.md).
  kAxes,       // an operand uses an axis of the other side (TLane/TCol vs thread axes and m)
  kDtype,      // the operands' element widths do not match the opcode
  kPack,       // .pack::16b / .unpack::16b needs a 16-bit TMEM operand
  kShape,      // operand shapes are not (*group, *repeat, *atom); 16x32bx2's extra operands
  kImm,        // immHalfSplitoff does not fit a 32-bit TMEM address delta
  kOwnership,  // rule 1: an element sits in another thread than the instruction's image says
  kSlot,       // rule 2: a register slot differs between lanes/warps, or a thread has no such slot
  kReplicas,   // rule 7: a replica (R[...]) that cannot exist or would make the transfer ambiguous
  kSlab,       // rule 4: the instruction's lane (the warp's slab, the half-slab offset)
  kColumns,    // rule 4: one column stride per warp (and per warpgroup)
  kSplit,      // rule 6: the second access of 16x32bx2 leaves the warp's slab
  kPlacement,  // rule 3: a TMEM element is not where the instruction puts it
  kBounds,     // rule 5: a lane or column that TMEM does not have
  kCoverage,   // rule 7: two elements on one TMEM cell (a store) or one register slot

  // docs/tcgen05-rules.md §Rules: opcode text (R1-R15), addresses (R16-R21), lifecycle (R22-R31).
  kR1,
  kR2,
  kR3,
  kR4,
  kR5,
  kR6,
  kR7,
  kR8,
  kR9,
  kR10,
  kR11,
  kR12,
  kR13,
  kR14,
  kR15,
  kR16,
  kR17,
  kR18,
  kR19,
  kR20,
  kR21,
  kR22,
  kR23,
  kR24,
  kR25,
  kR26,
  kR27,
  kR28,
  kR29,
  kR30,
  kR31,
};

// "none", the rule's word for the rules of docs/transfer-semantics.md §Rules ("placement"),
// "R1".."R31" for docs/tcgen05-rules.md ids.
const char* to_string(Rule rule) noexcept;

// The inverse of to_string(); nullopt for text that names no rule.
std::optional<Rule> parse_rule(std::string_view text) noexcept;

// docs/tcgen05-rules.md §Rules rule `id` (1..31) as a Rule; kNone outside that range.
Rule tcgen05_rule(int id) noexcept;

}  // namespace tmem
TMEMJIT_API_END
