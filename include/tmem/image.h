// The native image of a tcgen05.ld/st form: which TMEM cell each register of each lane holds.
//
// Formulas: docs/tcgen05-rules.md §Images (checked against CUTLASS's copy_traits_sm100 atoms and
// the seed table).
#pragma once

#include <array>

#include "tmem/export.h"
#include "tmem/opcode.h"

TMEMJIT_API_BEGIN
namespace tmem {

// Where register `reg` of lane `lane` lives in the register-word atom of one access.
// row: TMEM lane relative to the access's base lane; col: 32-bit register-word column relative to
// the access's base column. access: 0, or 1 for the second access of 16x32bx2 (lanes 16-31).
struct AtomCoord {
  int access = 0;
  int row = 0;
  int col = 0;
  friend bool operator==(const AtomCoord& a, const AtomCoord& b) {
    return a.access == b.access && a.row == b.row && a.col == b.col;
  }
  friend bool operator!=(const AtomCoord& a, const AtomCoord& b) { return !(a == b); }
};

// One TMEM cell (row, column in 32-bit cells relative to the access base) and, for packed forms,
// which 16-bit half of the register it carries (0 = bits [0,16), 1 = bits [16,32)); -1 when plain.
// A packed half always sits in the low 16 bits of its cell (PTX ISA §9.7.16.8.2).
struct TmemCell {
  int access = 0;
  int row = 0;
  int col = 0;
  int half = -1;
  friend bool operator==(const TmemCell& a, const TmemCell& b) {
    return a.access == b.access && a.row == b.row && a.col == b.col && a.half == b.half;
  }
  friend bool operator!=(const TmemCell& a, const TmemCell& b) { return !(a == b); }
};

struct LaneReg {
  int lane = 0;
  int reg = 0;
  friend bool operator==(const LaneReg& a, const LaneReg& b) {
    return a.lane == b.lane && a.reg == b.reg;
  }
  friend bool operator!=(const LaneReg& a, const LaneReg& b) { return !(a == b); }
};

// Requires: 0 <= lane < 32, 0 <= reg < op.regs_per_thread(). Out-of-range arguments throw
// tmem::Error(kUsage).
AtomCoord image(const Opcode& op, int lane, int reg);

// The TMEM cells of register `reg` of lane `lane`: one cell (half = -1) for plain forms; two
// cells (half 0 at column 2c, half 1 at column 2c+1) for pack/unpack. Returns the count used.
int tmem_cells(const Opcode& op, int lane, int reg, std::array<TmemCell, 2>& cells);

// Inverse of image(): the lane and register holding register-word (row, col) of `access`.
// Requires: the coordinate lies in the atom; otherwise throws tmem::Error(kUsage).
LaneReg inverse_image(const Opcode& op, AtomCoord coord);

}  // namespace tmem
TMEMJIT_API_END
