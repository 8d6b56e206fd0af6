// Native images of tcgen05.ld/st (docs/tcgen05-rules.md §Images, §Packing, §Split; PTX ISA
// §9.7.16.2.3 Figures 183-187, §9.7.16.8.2).
#include "tmem/image.h"

#include <string>

namespace tmem {
namespace {

[[noreturn]] void usage_error(const Opcode& op, const std::string& what) {
  throw Error(ErrorCode::kUsage, what + " for " + op.to_string());
}

}  // namespace

AtomCoord image(const Opcode& op, int lane, int reg) {
  // Checked here, formatted only on failure: image() sits in the checker's per-element loop.
  if (lane < 0 || lane >= 32) usage_error(op, "lane " + std::to_string(lane) + " is outside 0..31");
  if (reg < 0 || reg >= op.regs_per_thread())
    usage_error(op, "register " + std::to_string(reg) + " is outside 0.." +
                        std::to_string(op.regs_per_thread() - 1));
  const int l = lane, r = reg;
  switch (op.shape()) {
    case Shape::k32x32b:
      return {0, l, r};
    case Shape::k16x64b:
      return {0, l / 4 + 8 * (l % 2), (l / 2) % 2 + 2 * r};
    case Shape::k16x128b:
      return {0, l / 4 + 8 * (r % 2), l % 4 + 4 * (r / 2)};
    case Shape::k16x256b:
      return {0, l / 4 + 8 * ((r / 2) % 2), r % 2 + 2 * (l % 4) + 8 * (r / 4)};
    case Shape::k16x32bx2:
      // Lanes 0-15 perform the access at taddr, lanes 16-31 the one at taddr + imm (SASS:
      // LDTM.16dp32bit_t0_t15 / _t16_t31); columns are relative to each access's own address.
      return {l / 16, l % 16, r};
  }
  throw Error(ErrorCode::kInternal, "unknown shape in image()");
}

int tmem_cells(const Opcode& op, int lane, int reg, std::array<TmemCell, 2>& cells) {
  AtomCoord at = image(op, lane, reg);
  if (!op.packed()) {
    cells[0] = {at.access, at.row, at.col, -1};
    return 1;
  }
  // pack/unpack: register bits [0,16) <-> low half of cell 2c, bits [16,32) <-> low half of 2c+1.
  cells[0] = {at.access, at.row, 2 * at.col, 0};
  cells[1] = {at.access, at.row, 2 * at.col + 1, 1};
  return 2;
}

LaneReg inverse_image(const Opcode& op, AtomCoord coord) {
  const int rows = op.atom_rows(), cols = op.atom_cols();
  if (coord.access < 0 || coord.access >= op.accesses())
    usage_error(op, "access " + std::to_string(coord.access) + " does not exist");
  if (coord.row < 0 || coord.row >= rows || coord.col < 0 || coord.col >= cols)
    usage_error(op, "(row " + std::to_string(coord.row) + ", column " + std::to_string(coord.col) +
                        ") is outside the atom (" + std::to_string(rows) + ", " +
                        std::to_string(cols) + ")");
  const int L = coord.row, C = coord.col;
  switch (op.shape()) {
    case Shape::k32x32b:
      return {L, C};
    case Shape::k16x64b:
      return {4 * (L % 8) + 2 * (C % 2) + L / 8, C / 2};
    case Shape::k16x128b:
      return {4 * (L % 8) + C % 4, L / 8 + 2 * (C / 4)};
    case Shape::k16x256b:
      return {4 * (L % 8) + (C / 2) % 4, C % 2 + 2 * (L / 8) + 4 * (C / 8)};
    case Shape::k16x32bx2:
      return {16 * coord.access + L, C};
  }
  throw Error(ErrorCode::kInternal, "unknown shape in inverse_image()");
}

}  // namespace tmem
