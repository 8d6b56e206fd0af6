// The native images as maps linear over the bits of the lane (docs/tcgen05-rules.md §Images):
// split_image's lane part of every opcode and the generic tier's granule check
// (kernels::is_granule_copies, docs/specialization.md §Tiers) for every opcode and granule,
// pinned from the image formulas.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <string>
#include <vector>

#include "kernels/emulation_kernels.h"
#include "kernels/generic_transfer.h"
#include "tmem/image.h"
#include "tmem/opcode.h"

namespace {

using tmem::Opcode;
using tmem::Shape;

// Every opcode: both directions, every shape, .num and packing, and the ld.red forms.
std::vector<Opcode> every_opcode() {
  std::vector<Opcode> ops;
  for (tmem::Direction direction : {tmem::Direction::kLoad, tmem::Direction::kStore})
    for (Shape shape : tmem::all_shapes())
      for (int num = 1; num <= 128; num *= 2)
        for (bool pack : {false, true})
          if (auto op = Opcode::make(direction, shape, num, pack); op.ok()) ops.push_back(*op);
  for (Shape shape : {Shape::k32x32b, Shape::k16x32bx2})
    for (int num = 1; num <= 128; num *= 2)
      for (tmem::ReductionOp reduce : {tmem::ReductionOp::kMin, tmem::ReductionOp::kMax})
        if (auto op = Opcode::make_load_reduce(shape, num, {reduce, tmem::ReductionType::kF32});
            op.ok())
          ops.push_back(*op);
  return ops;
}

struct LaneBits {
  std::array<std::array<int, 2>, tmem::kernels::kLaneBits> terms;  // (row, col) per lane bit
  int access_bit;
};

// What each lane bit adds, from the image formulas of docs/tcgen05-rules.md §Images (plain
// columns; packed forms take two cells per register, so twice the columns).
LaneBits expected_lane_bits(Shape shape) {
  switch (shape) {
    case Shape::k32x32b:
      return {{{{1, 0}, {2, 0}, {4, 0}, {8, 0}, {16, 0}}}, -1};
    case Shape::k16x64b:  // (l//4 + 8·(l%2), (l//2)%2 + 2r)
      return {{{{8, 0}, {0, 1}, {1, 0}, {2, 0}, {4, 0}}}, -1};
    case Shape::k16x128b:  // (l//4 + 8·(r%2), l%4 + 4·(r//2))
      return {{{{0, 1}, {0, 2}, {1, 0}, {2, 0}, {4, 0}}}, -1};
    case Shape::k16x256b:  // (l//4 + 8·((r//2)%2), r%2 + 2·(l%4) + 8·(r//4))
      return {{{{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}}}, -1};
    case Shape::k16x32bx2:  // lanes 16-31 are the second access
      return {{{{1, 0}, {2, 0}, {4, 0}, {8, 0}, {0, 0}}}, 4};
  }
  return {};
}

TEST(SplitImage, TheLanePartOfEveryOpcodeIsPinned) {
  int count = 0;
  for (const Opcode& op : every_opcode()) {
    SCOPED_TRACE(op.to_string());
    auto split = tmem::kernels::split_image(op);
    ASSERT_TRUE(split.ok()) << split.error().full_text();
    const LaneBits expected = expected_lane_bits(op.shape());
    const int scale = op.packed() ? 2 : 1;
    EXPECT_EQ(split->access_bit, expected.access_bit);
    for (int b = 0; b < tmem::kernels::kLaneBits; ++b) {
      EXPECT_EQ(split->lane_bits[static_cast<size_t>(b)].row,
                expected.terms[static_cast<size_t>(b)][0])
          << "lane bit " << b;
      EXPECT_EQ(split->lane_bits[static_cast<size_t>(b)].col,
                scale * expected.terms[static_cast<size_t>(b)][1])
          << "lane bit " << b;
    }
    EXPECT_EQ(split->cells_per_reg, op.packed() ? 2 : 1);
    ASSERT_EQ(split->cells.size(), static_cast<size_t>(op.regs_per_thread()));
    for (int r = 0; r < op.regs_per_thread(); ++r) {
      std::array<tmem::TmemCell, 2> at{};
      const int n = tmem::tmem_cells(op, 0, r, at);
      for (int k = 0; k < n; ++k)
        EXPECT_EQ(split->cells[static_cast<size_t>(r)][static_cast<size_t>(k)],
                  at[static_cast<size_t>(k)])
            << "register " << r << " cell " << k;
    }
    ++count;
  }
  EXPECT_EQ(count, 148 + 28);  // the 148 ld/st forms and the 28 ld.red ones
}

// The granules of each (direction, packing): the .x1 of every shape but 16x32bx2. An opcode is
// copies of a granule exactly when it has the granule's shape and packing (either direction, the
// ld.red forms of 32x32b too), and never for 16x32bx2, whose two accesses are no row of copies.
TEST(GenericGranules, EveryOpcodeIsCopiesOfItsShapesGranuleAndOfNoOther) {
  int checked = 0;
  for (bool load : {true, false})
    for (bool packed : {false, true}) {
      const std::vector<Opcode> granules = tmem::kernels::generic_granules(load, packed, 128);
      std::vector<std::string> names;
      for (const Opcode& g : granules) names.push_back(g.to_string());
      const std::string dir = load ? "tcgen05.ld.sync.aligned." : "tcgen05.st.sync.aligned.";
      const std::string pack = packed ? (load ? ".pack::16b" : ".unpack::16b") : "";
      EXPECT_EQ(names,
                (std::vector<std::string>{
                    dir + "32x32b.x1" + pack + ".b32", dir + "16x64b.x1" + pack + ".b32",
                    dir + "16x128b.x1" + pack + ".b32", dir + "16x256b.x1" + pack + ".b32"}));
      for (const Opcode& op : every_opcode())
        for (const Opcode& g : granules) {
          const bool expected =
              op.shape() == g.shape() && op.packed() == g.packed() && !op.is_split();
          EXPECT_EQ(tmem::kernels::is_granule_copies(op, g), expected)
              << op.to_string() << " of " << g.to_string();
          ++checked;
        }
    }
  EXPECT_EQ(checked, 4 * 4 * (148 + 28));
}

// Every native image is linear over the bits of (lane, cell, register) on every input
// (docs/tcgen05-rules.md §Images), so is_granule_copies checks only pairs of bits at run time.
TEST(NativeImageMap, IsLinearOnEveryInputOfEveryOpcode) {
  for (const Opcode& op : every_opcode()) {
    SCOPED_TRACE(op.to_string());
    auto all = tmem::kernels::native_image_map(op, tmem::BitLinearMap::Verify::kAll);
    ASSERT_TRUE(all);
    EXPECT_EQ(all->bits(),
              5 + (op.packed() ? 1 : 0) + std::countr_zero(unsigned(op.regs_per_thread())));
    EXPECT_EQ(tmem::kernels::native_image_map(op, tmem::BitLinearMap::Verify::kPairs), all);
    auto split = tmem::kernels::split_image(op).value();
    for (int b = 0; b < tmem::kernels::kLaneBits; ++b) {
      const auto& image = all->image(b);
      EXPECT_EQ(image[0], b == split.access_bit ? 1 : 0);
      EXPECT_EQ(image[1], split.lane_bits[static_cast<size_t>(b)].row);
      EXPECT_EQ(image[2], split.lane_bits[static_cast<size_t>(b)].col);
    }
  }
}

}  // namespace
