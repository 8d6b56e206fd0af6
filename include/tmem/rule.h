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

  // docs/tcgen05-rules.md §Rules: opcode text (R1-R15), addresses (R16-R21), lifecycle (R22-R31),
  // in id order (tcgen05_rule(id) counts on it); named after what each rule requires, printed as
  // its id ("R27").
  kLdOrSt,                      // R1: the operation is ld or st
  kKnownShape,                  // R2: the shape is one of the five data-movement shapes
  kNumPowerOfTwo,               // R3: .num is present and N is a power of two in [1, 128]
  kAtMost128Registers,          // R4: an instruction takes at most 128 registers
  kVectorLengthIsNregs,         // R5: the register vector has nregs elements
  kPackModeOfDirection,         // R6: ld takes only .pack::16b, st only .unpack::16b
  kTypeB32,                     // R7: the type of ld/st is .b32
  kSyncAligned,                 // R8: .sync and .aligned are present
  kSplitOffsetOnlyFor16x32bx2,  // R9: immHalfSplitoff exactly with 16x32bx2, an integer literal
  kOperandOrder,                // R10: operands in the ISA order
  kVector32BitRegisters,        // R11: vector elements are 32-bit registers
  kAddressRegisterInBrackets,   // R12: taddr is a 32-bit register in brackets
  kDistinctRegisters,           // R13: (policy) no register repeated or loaded into taddr
  kLoadReduceForm,              // R14: the tcgen05.ld.red form (shape, N, .redOp, type, target)
  kTargetAndVersion,            // R15: a .target and .version the toolchain and the ISA accept
  kAddressInTmem,               // R16: lane0 < 128 and col0 < 512
  kLanesInWarpChunk,            // R17: the lanes stay in the warp's 32-lane chunk
  kLaneAlignment,               // R18: lane0 is 32q, or 32q + 16 for the 16-lane shapes
  kColumnsAllocated,            // R19: the columns lie in a live allocation, below 512
  kSplitInSlab,                 // R20: 16x32bx2's second access stays in the warp's slab
  kUniformWarp,                 // R21: the warp executes uniformly with one taddr
  kAllocColumnsPowerOfTwo,      // R22: alloc/dealloc nCols in {32, 64, 128, 256, 512}
  kDeallocWhatAllocReturned,    // R23: dealloc frees what an alloc returned, with its nCols
  kAllocNeverGrows,             // R24: an allocation is no larger than the CTA's previous one
  kNoAllocAfterRelinquish,      // R25: no alloc after relinquish_alloc_permit
  kDeallocBeforeExit,           // R26: every column is deallocated before the kernel exits
  kOneCtaGroupPerKernel,        // R27: a kernel uses one .cta_group, ::1 or ::2
  kAllocToSharedCta,            // R28: alloc writes a .b32 to .shared::cta
  kOneWarpAllocates,            // R29: one whole warp (one per peer CTA with ::2) allocates
  kAtMost512Columns,            // R30: at most 512 columns live in a CTA
  kWaitBeforeReuse,             // R31: wait::ld/st and fences before reuse or hand-off
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
