// tcgen05.ld.red's value semantics (tmem/reduction.h) against a small independent reference: the
// reference works on float and int values with the C++ comparison operators (no bit tricks), the
// library on bit patterns. Inputs cover NaN (quiet, signalling, negative), ±0, ±inf, denormals
// and the integer extremes.
#include "tmem/reduction.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace {

using tmem::Reduction;
using tmem::ReductionOp;
using tmem::ReductionType;

float as_float(std::uint32_t bits) { return std::bit_cast<float>(bits); }
std::uint32_t as_bits(float value) { return std::bit_cast<std::uint32_t>(value); }

// The reference of PTX min/max{.NaN}.f32 after abs.f32 (PTX ISA min/max: a NaN operand yields the
// other operand, two NaNs the canonical NaN; .NaN: any NaN yields the canonical NaN; -0 < +0).
std::uint32_t reference_f32(const Reduction& r, const std::vector<std::uint32_t>& values) {
  bool seen_nan = false, have = false;
  float best = 0;
  for (std::uint32_t bits : values) {
    float x = as_float(bits);
    if (r.abs) x = std::fabs(x);
    if (std::isnan(x)) {
      seen_nan = true;
      continue;
    }
    if (!have) {
      best = x;
      have = true;
      continue;
    }
    const bool smaller =
        x < best || (x == 0 && best == 0 && std::signbit(x) && !std::signbit(best));
    const bool larger = x > best || (x == 0 && best == 0 && !std::signbit(x) && std::signbit(best));
    if (r.op == ReductionOp::kMin ? smaller : larger) best = x;
  }
  if ((r.nan && seen_nan) || !have) return 0x7FFFFFFFu;
  return as_bits(best);
}

std::uint32_t reference_int(const Reduction& r, const std::vector<std::uint32_t>& values) {
  if (r.type == ReductionType::kU32) {
    std::uint32_t best = values[0];
    for (std::uint32_t v : values)
      best = r.op == ReductionOp::kMin ? std::min(best, v) : std::max(best, v);
    return best;
  }
  std::int32_t best = static_cast<std::int32_t>(values[0]);
  for (std::uint32_t v : values) {
    const auto s = static_cast<std::int32_t>(v);
    best = r.op == ReductionOp::kMin ? std::min(best, s) : std::max(best, s);
  }
  return static_cast<std::uint32_t>(best);
}

const std::vector<std::uint32_t> kSpecials = {
    0x00000000u,  // +0
    0x80000000u,  // -0
    0x7F800000u,  // +inf
    0xFF800000u,  // -inf
    0x7FC00000u,  // quiet NaN
    0xFFC00001u,  // negative quiet NaN with a payload
    0x7F800001u,  // signalling NaN
    0x00000001u,  // smallest denormal
    0x807FFFFFu,  // largest negative denormal
    0x00400000u,  // a denormal
    0x3F800000u,  // 1
    0xBF800000u,  // -1
    0x7F7FFFFFu,  // largest finite
    0xFF7FFFFFu,  // most negative finite
    0x80000001u,  // smallest negative denormal; as s32 near INT_MIN
    0x7FFFFFFFu,  // canonical NaN; as s32 INT_MAX
};

std::vector<Reduction> all_reductions() {
  std::vector<Reduction> out;
  for (auto op : {ReductionOp::kMin, ReductionOp::kMax}) {
    for (int flags = 0; flags < 4; ++flags)
      out.push_back({op, ReductionType::kF32, (flags & 1) != 0, (flags & 2) != 0});
    out.push_back({op, ReductionType::kU32, false, false});
    out.push_back({op, ReductionType::kS32, false, false});
  }
  return out;
}

std::uint32_t reference(const Reduction& r, const std::vector<std::uint32_t>& values) {
  return r.type == ReductionType::kF32 ? reference_f32(r, values) : reference_int(r, values);
}

// Every ordered pair and triple of special values, for every reduction.
TEST(Reduction, MatchesTheReferenceOnSpecialValues) {
  int compared = 0;
  for (const Reduction& r : all_reductions()) {
    for (std::uint32_t a : kSpecials)
      for (std::uint32_t b : kSpecials) {
        const std::vector<std::uint32_t> pair = {a, b};
        EXPECT_EQ(*tmem::reduce(r, pair), reference(r, pair))
            << r.to_string() << " of " << std::hex << a << ", " << b;
        ++compared;
        for (std::uint32_t c : kSpecials) {
          const std::vector<std::uint32_t> triple = {a, b, c};
          ASSERT_EQ(*tmem::reduce(r, triple), reference(r, triple))
              << r.to_string() << " of " << std::hex << a << ", " << b << ", " << c;
          ++compared;
        }
      }
  }
  EXPECT_EQ(compared, 12 * (16 * 16 + 16 * 16 * 16));  // 12 reductions x 16 special values
}

// Seeded random vectors of 2..128 words (the .num range), where a fraction are special values.
TEST(Reduction, MatchesTheReferenceOnRandomVectors) {
  std::uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>(state >> 32);
  };
  for (const Reduction& r : all_reductions())
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<std::uint32_t> values(2u << (trial % 7));
      for (auto& v : values) v = next() % 4 == 0 ? kSpecials[next() % kSpecials.size()] : next();
      ASSERT_EQ(*tmem::reduce(r, values), reference(r, values)) << r.to_string();
    }
}

// The rules spelled out, one case each, so that a failure names the rule.
TEST(Reduction, NamedCases) {
  const Reduction max_f32{ReductionOp::kMax, ReductionType::kF32, false, false};
  const Reduction max_nan{ReductionOp::kMax, ReductionType::kF32, false, true};
  const Reduction min_abs{ReductionOp::kMin, ReductionType::kF32, true, false};
  const Reduction min_f32{ReductionOp::kMin, ReductionType::kF32, false, false};
  const std::uint32_t nan = 0x7FC00000u, one = as_bits(1.0f), two = as_bits(2.0f);
  // Without .NaN the numeric operand wins; two NaNs give the canonical NaN.
  EXPECT_EQ(tmem::reduce_pair(max_f32, nan, one), one);
  EXPECT_EQ(tmem::reduce_pair(max_f32, one, nan), one);
  EXPECT_EQ(tmem::reduce_pair(max_f32, nan, 0xFFC00001u), tmem::kCanonicalNan);
  // With .NaN any NaN gives the canonical NaN.
  EXPECT_EQ(tmem::reduce_pair(max_nan, nan, two), tmem::kCanonicalNan);
  EXPECT_EQ(tmem::reduce_pair(max_nan, one, two), two);
  // -0 < +0.
  EXPECT_EQ(tmem::reduce_pair(min_f32, 0x00000000u, 0x80000000u), 0x80000000u);
  EXPECT_EQ(tmem::reduce_pair(max_f32, 0x80000000u, 0x00000000u), 0x00000000u);
  // .abs: |-2| > |1|, so min.abs of {-2, 1} is 1; of {-1, 2}, +1 (the magnitude, sign cleared).
  EXPECT_EQ(tmem::reduce_pair(min_abs, as_bits(-2.0f), one), one);
  EXPECT_EQ(tmem::reduce_pair(min_abs, as_bits(-1.0f), two), one);
  // Denormals are kept, not flushed: the smallest denormal beats +0 for max.
  EXPECT_EQ(tmem::reduce_pair(max_f32, 0x00000000u, 0x00000001u), 0x00000001u);
  // Integers: unsigned and signed order differ on the sign bit.
  const Reduction max_u{ReductionOp::kMax, ReductionType::kU32, false, false};
  const Reduction max_s{ReductionOp::kMax, ReductionType::kS32, false, false};
  EXPECT_EQ(tmem::reduce_pair(max_u, 0xFFFFFFFFu, 1u), 0xFFFFFFFFu);
  EXPECT_EQ(tmem::reduce_pair(max_s, 0xFFFFFFFFu, 1u), 1u);
  EXPECT_FALSE(tmem::reduce(max_u, {}).has_value());
}

TEST(Reduction, Spelling) {
  EXPECT_EQ((Reduction{ReductionOp::kMax, ReductionType::kF32, true, true}).to_string(),
            "max.abs.NaN.f32");
  EXPECT_EQ((Reduction{ReductionOp::kMin, ReductionType::kS32, false, false}).to_string(),
            "min.s32");
}

}  // namespace
