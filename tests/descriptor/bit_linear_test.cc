// BitLinearMap (runtime/descriptor/bit_linear.h): probing finds linear maps and refuses the rest,
// and compose, inverse and product agree with evaluating the maps they combine.
#include "runtime/descriptor/bit_linear.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>

namespace {

using tmem::BitLinearMap;
using Vector = BitLinearMap::Vector;

// (row, col) of lane l in 16x64b (docs/tcgen05-rules.md §Images): (l//4 + 8·(l%2), (l//2)%2).
Vector lane_16x64b(std::uint64_t l) {
  return {static_cast<std::int64_t>(l / 4 + 8 * (l % 2)), static_cast<std::int64_t>(l / 2 % 2)};
}

// A function of the probe's kind from one that always has a value.
template <typename F>
BitLinearMap::Function total(F f) {
  return [f](std::uint64_t x, Vector& value) {
    value = f(x);
    return true;
  };
}

TEST(BitLinearMap, ProbesTheImagesOfSingleBitsAndChecksTheRest) {
  for (auto verify : {BitLinearMap::Verify::kPairs, BitLinearMap::Verify::kAll}) {
    auto map = BitLinearMap::probe(5, total(lane_16x64b), verify);
    ASSERT_TRUE(map);
    EXPECT_EQ(map->bits(), 5);
    EXPECT_EQ(map->width(), 2u);
    EXPECT_EQ(map->origin(), (Vector{0, 0}));
    EXPECT_EQ(map->image(0), (Vector{8, 0}));
    EXPECT_EQ(map->image(1), (Vector{0, 1}));
    EXPECT_EQ(map->image(4), (Vector{4, 0}));
    for (std::uint64_t l = 0; l < 32; ++l) EXPECT_EQ(map->apply(l), lane_16x64b(l)) << l;
  }
}

TEST(BitLinearMap, RefusesCarriesMissingValuesAndOtherWidths) {
  // x + x / 3 carries between bits 0 and 1: the pairs see it.
  auto carry = total([](std::uint64_t x) { return Vector{static_cast<std::int64_t>(x + x / 3)}; });
  EXPECT_FALSE(BitLinearMap::probe(4, carry, BitLinearMap::Verify::kPairs));
  // Nonlinear only where three bits are set: the pairs miss it, every input does not.
  auto triple = total(
      [](std::uint64_t x) { return Vector{static_cast<std::int64_t>(x + (x == 7 ? 1 : 0))}; });
  EXPECT_TRUE(BitLinearMap::probe(3, triple, BitLinearMap::Verify::kPairs));
  EXPECT_FALSE(BitLinearMap::probe(3, triple, BitLinearMap::Verify::kAll));
  auto partial = [](std::uint64_t x, Vector& value) {
    value = {static_cast<std::int64_t>(x)};
    return x != 3;
  };
  EXPECT_FALSE(BitLinearMap::probe(2, partial, BitLinearMap::Verify::kAll));
  auto widths = total([](std::uint64_t x) { return Vector(x == 0 ? 1 : 2, 0); });
  EXPECT_FALSE(BitLinearMap::probe(2, widths, BitLinearMap::Verify::kPairs));
  EXPECT_FALSE(BitLinearMap::probe(63, carry, BitLinearMap::Verify::kPairs));
}

TEST(BitLinearMap, MakeChecksItsInvariants) {
  EXPECT_TRUE(BitLinearMap::make({1, 2}, {{0, 1}, {1, 0}}));
  EXPECT_FALSE(BitLinearMap::make({1, 2}, {{0, 1}, {1}}));
  EXPECT_FALSE(BitLinearMap::make({0}, std::vector<Vector>(63, Vector{0})));
  EXPECT_EQ(*BitLinearMap::make({1}, {{2}}), *BitLinearMap::make({1}, {{2}}));
  EXPECT_NE(*BitLinearMap::make({1}, {{2}}), *BitLinearMap::make({0}, {{2}}));
}

TEST(BitLinearMap, TheInverseOfABitPermutationUndoesIt) {
  auto swap = BitLinearMap::make({0}, {{4}, {1}, {2}}).value();  // bit 0 -> 2, 1 -> 0, 2 -> 1
  auto back = swap.inverse();
  ASSERT_TRUE(back);
  for (std::uint64_t x = 0; x < 8; ++x) {
    EXPECT_EQ(back->apply(static_cast<std::uint64_t>(swap.apply(x)[0])), (Vector{std::int64_t(x)}));
    EXPECT_EQ(swap.compose(*back)->apply(x), (Vector{std::int64_t(x)}));
  }
  EXPECT_FALSE(BitLinearMap::make({1}, {{4}, {1}, {2}})->inverse());      // an origin
  EXPECT_FALSE(BitLinearMap::make({0}, {{4}, {4}, {2}})->inverse());      // a bit twice
  EXPECT_FALSE(BitLinearMap::make({0}, {{8}, {1}, {2}})->inverse());      // out of range
  EXPECT_FALSE(BitLinearMap::make({0}, {{3}, {1}, {2}})->inverse());      // two bits
  EXPECT_FALSE(BitLinearMap::make({0, 0}, {{1, 0}, {2, 0}})->inverse());  // width 2
}

TEST(BitLinearMap, ComposeEvaluatesTheOuterMapAtTheInnersValue) {
  auto outer = BitLinearMap::make({10, 0}, {{1, 0}, {0, 1}, {5, 5}}).value();
  auto inner = BitLinearMap::make({1}, {{4}, {2}}).value();
  auto both = outer.compose(inner);
  ASSERT_TRUE(both);
  for (std::uint64_t x = 0; x < 4; ++x)
    EXPECT_EQ(both->apply(x), outer.apply(static_cast<std::uint64_t>(inner.apply(x)[0])));
  EXPECT_FALSE(outer.compose(*BitLinearMap::make({1}, {{1}})));  // shares bit 0: a carry
  EXPECT_FALSE(outer.compose(*BitLinearMap::make({0}, {{8}})));  // past outer's bits
  EXPECT_FALSE(outer.compose(outer));                            // width 2
}

TEST(BitLinearMap, AProductIsCopiesAtAStride) {
  auto granule = BitLinearMap::make({0, 0}, {{1, 0}, {0, 1}}).value();
  auto four = granule.product(4, {0, 2});
  ASSERT_TRUE(four);
  EXPECT_EQ(four->bits(), 4);
  for (std::uint64_t copy = 0; copy < 4; ++copy)
    for (std::uint64_t x = 0; x < 4; ++x) {
      Vector expected = granule.apply(x);
      expected[1] += 2 * static_cast<std::int64_t>(copy);
      EXPECT_EQ(four->apply(x | copy << 2), expected);
    }
  EXPECT_EQ(*granule.product(1, {0, 2}), granule);
  EXPECT_FALSE(granule.product(3, {0, 2}));
  EXPECT_FALSE(granule.product(2, {2}));
}

}  // namespace
