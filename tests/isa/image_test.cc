// Native image: bijection onto the atom for every form, the seed's table, and independent facts.
#include "tmem/image.h"

#include <gtest/gtest.h>

#include <set>
#include <tuple>
#include <vector>

namespace {

using tmem::AtomCoord;
using tmem::Opcode;

std::vector<Opcode> every_form() {
  std::vector<Opcode> forms;
  for (auto dir : {tmem::Direction::kLoad, tmem::Direction::kStore})
    for (tmem::Shape shape : tmem::all_shapes())
      for (int num = 1; num <= 128; num *= 2)
        for (bool pack : {false, true})
          if (auto op = Opcode::make(dir, shape, num, pack)) forms.push_back(*op);
  return forms;
}

TEST(Image, EveryFormIsABijectionOntoItsAtom) {
  auto forms = every_form();
  ASSERT_EQ(forms.size(), 148u);
  for (const Opcode& op : forms) {
    std::set<std::tuple<int, int, int>> words;
    std::set<std::tuple<int, int, int>> cells;
    std::array<tmem::TmemCell, 2> pieces;
    for (int lane = 0; lane < 32; ++lane) {
      for (int reg = 0; reg < op.regs_per_thread(); ++reg) {
        AtomCoord at = tmem::image(op, lane, reg);
        ASSERT_GE(at.row, 0);
        ASSERT_LT(at.row, op.atom_rows()) << op;
        ASSERT_GE(at.col, 0);
        ASSERT_LT(at.col, op.atom_cols()) << op;
        ASSERT_LT(at.access, op.accesses());
        EXPECT_TRUE(words.insert({at.access, at.row, at.col}).second)
            << op << " lane " << lane << " reg " << reg;
        auto back = tmem::inverse_image(op, at);
        EXPECT_EQ(back, (tmem::LaneReg{lane, reg})) << op;
        int count = tmem::tmem_cells(op, lane, reg, pieces);
        ASSERT_EQ(count, op.packed() ? 2 : 1);
        for (int i = 0; i < count; ++i) {
          ASSERT_LT(pieces[i].col, op.atom_tmem_cols());
          EXPECT_TRUE(cells.insert({pieces[i].access, pieces[i].row, pieces[i].col}).second) << op;
        }
      }
    }
    // Onto: every word and every TMEM cell of every access is covered exactly once.
    EXPECT_EQ(words.size(), static_cast<size_t>(op.accesses() * op.atom_rows() * op.atom_cols()))
        << op;
    EXPECT_EQ(cells.size(),
              static_cast<size_t>(op.accesses() * op.atom_rows() * op.atom_tmem_cols()))
        << op;
  }
}

// The seed document's table, written as in the seed (l = lane, r = register).
AtomCoord seed_table(tmem::Shape shape, int l, int r) {
  switch (shape) {
    case tmem::Shape::k32x32b:
      return {0, l, r};
    case tmem::Shape::k16x64b:
      return {0, l / 4 + 8 * (l % 2), l / 2 % 2 + 2 * r};
    case tmem::Shape::k16x128b:
      return {0, l / 4 + 8 * (r % 2), l % 4 + 4 * (r / 2)};
    case tmem::Shape::k16x256b:
      return {0, l / 4 + 8 * (r / 2 % 2), r % 2 + 2 * (l % 4) + 8 * (r / 4)};
    case tmem::Shape::k16x32bx2:
      return {l / 16, l % 16, r};  // seed: lane l owns (l//16, l%16, r)
  }
  return {};
}

TEST(Image, ReproducesTheSeedTable) {
  for (const Opcode& op : every_form())
    for (int lane = 0; lane < 32; ++lane)
      for (int reg = 0; reg < op.regs_per_thread(); ++reg)
        ASSERT_EQ(tmem::image(op, lane, reg), seed_table(op.shape(), lane, reg))
            << op << " " << lane << " " << reg;
}

TEST(Image, HandCheckedPoints) {
  // Values worked out by hand from the PTX ISA fragment figures' descriptions.
  auto op64 = Opcode::parse("tcgen05.ld.sync.aligned.16x64b.x1.b32").value();
  EXPECT_EQ(tmem::image(op64, 0, 0), (AtomCoord{0, 0, 0}));
  EXPECT_EQ(tmem::image(op64, 1, 0), (AtomCoord{0, 8, 0}));  // odd lanes take rows 8-15
  EXPECT_EQ(tmem::image(op64, 2, 0), (AtomCoord{0, 0, 1}));  // lane pairs split the 64 bits
  EXPECT_EQ(tmem::image(op64, 31, 0), (AtomCoord{0, 15, 1}));
  auto op128 = Opcode::parse("tcgen05.st.sync.aligned.16x128b.x1.b32").value();
  EXPECT_EQ(tmem::image(op128, 3, 0), (AtomCoord{0, 0, 3}));
  EXPECT_EQ(tmem::image(op128, 3, 1), (AtomCoord{0, 8, 3}));
  EXPECT_EQ(tmem::image(op128, 31, 1), (AtomCoord{0, 15, 3}));
  auto x2 = Opcode::parse("tcgen05.ld.sync.aligned.16x32bx2.x2.b32").value();
  EXPECT_EQ(tmem::image(x2, 17, 1), (AtomCoord{1, 1, 1}));
}

TEST(Image, SixteenBy256IsTheMmaAccumulatorFragment) {
  // Independent formulation (Triton's getTmemLoadStoreLayout16x256, the m16n8 accumulator):
  // thread l holds c0,c1 at row l/4, columns 2*(l%4)+{0,1}, and c2,c3 at row l/4+8; each
  // further group of four registers moves eight columns right.
  auto op = Opcode::parse("tcgen05.ld.sync.aligned.16x256b.x4.b32").value();
  for (int l = 0; l < 32; ++l) {
    for (int r = 0; r < op.regs_per_thread(); ++r) {
      int c = r % 4;
      AtomCoord expected{0, l / 4 + (c >= 2 ? 8 : 0), 8 * (r / 4) + 2 * (l % 4) + (c % 2)};
      EXPECT_EQ(tmem::image(op, l, r), expected) << l << " " << r;
    }
  }
}

TEST(Image, PackedHalvesGoToAdjacentCells) {
  auto op = Opcode::parse("tcgen05.st.sync.aligned.16x64b.x2.unpack::16b.b32").value();
  std::array<tmem::TmemCell, 2> cells;
  ASSERT_EQ(tmem::tmem_cells(op, 2, 1, cells), 2);
  // plain (row 0, col 1 + 2*1 = 3) -> cells 6 (bits 0-15) and 7 (bits 16-31).
  EXPECT_EQ(cells[0], (tmem::TmemCell{0, 0, 6, 0}));
  EXPECT_EQ(cells[1], (tmem::TmemCell{0, 0, 7, 1}));
}

TEST(Image, OutOfRangeArgumentsThrowUsageErrors) {
  auto op = Opcode::parse("tcgen05.ld.sync.aligned.32x32b.x2.b32").value();
  EXPECT_THROW(tmem::image(op, 32, 0), tmem::Error);
  EXPECT_THROW(tmem::image(op, 0, 2), tmem::Error);
  EXPECT_THROW(tmem::inverse_image(op, {0, 32, 0}), tmem::Error);
  EXPECT_THROW(tmem::inverse_image(op, {1, 0, 0}), tmem::Error);
}

}  // namespace
