// The checker's fast path (runtime/check/by_dims.h) against the per-element reference: the per-dim
// tables are exact where they exist, the fast path proves the seed's examples and every identity
// spec, and on thousands of random single-number mutations check() and check_each_element() agree
// on the verdict, the plan and the message.
#include "runtime/check/by_dims.h"

#include <gtest/gtest.h>

#include <random>
#include <regex>

#include "common/spec_fixtures.h"
#include "runtime/descriptor/additive_map.h"
#include "tmem/check.h"

namespace {

using tmemjit_test::identity_spec;
using tmemjit_test::SpecText;

tmem::View view_of(const std::string& text) { return tmem::View::parse(text).value(); }

// Every element of the view: origin + the per-dim sum equals the view's own map.
void expect_exact(const tmem::View& view, const tmem::AdditiveMap& map) {
  std::vector<std::int64_t> coord(static_cast<size_t>(view.ndim()), 0);
  tmem::PhysCoord expected;
  for (std::int64_t flat = 0; flat < view.size(); ++flat) {
    tmem::PhysCoord sum = map.origin;
    for (int d = 0; d < view.ndim(); ++d)
      sum += map.dims[static_cast<size_t>(d)][static_cast<size_t>(coord[d])];
    view.apply_flat(flat, expected);
    ASSERT_EQ(sum, expected) << view.to_string() << " at flat index " << flat;
    for (int d = view.ndim(); d-- > 0;) {
      if (++coord[d] < view.shape()[static_cast<size_t>(d)]) break;
      coord[d] = 0;
    }
  }
}

TEST(AdditiveMap, ExactOnTheSeedAndIdentityViews) {
  std::vector<std::string> views = {tmemjit_test::seed_layout_b(true).tmem,
                                    tmemjit_test::seed_layout_b(true).regs};
  for (bool store : {false, true}) {
    views.push_back(tmemjit_test::seed_pack(store).tmem);
    views.push_back(tmemjit_test::seed_pack(store).regs);
    views.push_back(tmemjit_test::seed_split(store).tmem);
    views.push_back(*tmemjit_test::seed_split(store).tmem2);
  }
  for (tmem::Shape shape : tmem::all_shapes()) {
    auto text = identity_spec(tmem::Opcode::make(tmem::Direction::kLoad, shape, 4, false).value());
    views.push_back(text.tmem);
    views.push_back(text.regs);
  }
  for (const std::string& text : views) {
    const tmem::View view = view_of(text);
    auto map = tmem::additive_map(view);
    ASSERT_TRUE(map.has_value()) << text;
    expect_exact(view, *map);
  }
}

TEST(AdditiveMap, GivesUpWhereDimsCarryIntoEachOther) {
  // Offset column 1 plus a dim reaching column 3 overflows the 4-column iter into the next lane.
  const tmem::View sliced = view_of("tensor((8,), S[(2,4):(1@TLane,1@TCol)], b32)[1:7]");
  EXPECT_FALSE(tmem::additive_map(sliced).has_value());
  // Replicated layouts have several coordinates per element.
  EXPECT_FALSE(tmem::additive_map(view_of("tensor((32,), S[32:1@laneid] + R[2:32@laneid], b32)"))
                   .has_value());
  // An aligned slice of the same layout stays exact.
  const tmem::View aligned = view_of("tensor((8,), S[(2,4):(1@TLane,1@TCol)], b32)[4:8]");
  auto map = tmem::additive_map(aligned);
  ASSERT_TRUE(map.has_value());
  expect_exact(aligned, *map);
}

std::optional<tmem::Plan> by_dims(const tmem::TransferSpec& spec, const tmem::Plan& reference) {
  return tmem::plan_by_dims(spec, reference.repeat_shape, tmem::bits(spec.regs().dtype()) == 16,
                            tmem::bits(spec.tmem().dtype()) == 16);
}

TEST(CheckByDims, ProvesTheSeedExamplesAndEveryIdentitySpec) {
  std::vector<SpecText> specs;
  for (bool store : {false, true}) {
    specs.push_back(tmemjit_test::seed_layout_b(store));
    specs.push_back(tmemjit_test::seed_pack(store));
    specs.push_back(tmemjit_test::seed_split(store));
  }
  for (auto dir : {tmem::Direction::kLoad, tmem::Direction::kStore})
    for (tmem::Shape shape : tmem::all_shapes())
      for (int num = 1; num <= 128; num *= 2)
        for (bool pack : {false, true})
          if (auto op = tmem::Opcode::make(dir, shape, num, pack)) {
            specs.push_back(identity_spec(*op));
            if (op->atom_rows() == 16 && !op->is_split()) specs.push_back(identity_spec(*op, 16));
          }
  ASSERT_EQ(specs.size(), 6u + 148u + 84u);
  for (const SpecText& text : specs) {
    const tmem::TransferSpec spec = text.make();
    auto reference = tmem::check_each_element(spec);
    ASSERT_TRUE(reference.ok()) << text.op << ": " << reference.error().full_text();
    auto fast = by_dims(spec, *reference);
    ASSERT_TRUE(fast.has_value()) << "the fast path gave up on " << text.op << "\n"
                                  << text.tmem << "\n"
                                  << text.regs;
    EXPECT_EQ(*fast, *reference) << text.op;
    auto checked = tmem::check(spec);
    ASSERT_TRUE(checked.ok());
    EXPECT_EQ(*checked, *reference);
  }
}

// Replaces the `which`-th integer literal of `text` with `value`.
std::string replace_number(const std::string& text, size_t which, long value) {
  static const std::regex kNumber("[0-9]+");
  size_t n = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kNumber);
       it != std::sregex_iterator(); ++it, ++n)
    if (n == which)
      return text.substr(0, it->position()) + std::to_string(value) +
             text.substr(it->position() + it->length());
  return text;
}

size_t count_numbers(const std::string& text) {
  static const std::regex kNumber("[0-9]+");
  return static_cast<size_t>(std::distance(std::sregex_iterator(text.begin(), text.end(), kNumber),
                                           std::sregex_iterator()));
}

TEST(CheckByDims, AgreesWithTheElementCheckerOnRandomMutations) {
  std::vector<SpecText> bases;
  for (bool store : {false, true}) {
    bases.push_back(tmemjit_test::seed_layout_b(store));
    bases.push_back(tmemjit_test::seed_pack(store));
    bases.push_back(tmemjit_test::seed_split(store));
    for (tmem::Shape shape : tmem::all_shapes()) {
      auto op = tmem::Opcode::make(store ? tmem::Direction::kStore : tmem::Direction::kLoad, shape,
                                   2, false)
                    .value();
      bases.push_back(identity_spec(op));
      if (shape != tmem::Shape::k32x32b && shape != tmem::Shape::k16x32bx2)
        bases.push_back(identity_spec(op, 16));
    }
  }
  // Other scopes and repeat axes: Layout B at warp:2 and cta:8, and a two-repeat 32x32b.x32.
  const SpecText seed = tmemjit_test::seed_layout_b(true);
  bases.push_back({seed.op, "warp:2", seed.tmem + "[2]", seed.regs + "[2]"});
  bases.push_back({seed.op, "cta:8",
                   "tensor((2,64,128), S[(2,64,2,64):(64@TCol,1@TLane,64@TLane,1@TCol)], f32)"
                   ".rearrange(\"t (wh r) (wl c) -> (t wl wh) r c\", wh=2, r=32, wl=2)",
                   "tensor((2,64,128), S[(2,64,2,64):(128@tx,1@tx,64@tx,1)], f32)"
                   ".rearrange(\"t (wh r) (wl c) -> (t wl wh) r c\", wh=2, r=32, wl=2)"});
  bases.push_back({"tcgen05.ld.sync.aligned.32x32b.x32.b32", "warpgroup",
                   "tmem_datapath_layout(\"B\",64,128).rearrange(\"(wh r) (wl k c) -> (wl wh) k r "
                   "c\", wh=2, r=32, wl=2, k=2)",
                   "tensor((64,128), S[(64,2,64):(1@tid_in_wg,64@tid_in_wg,1)], f32)"
                   ".rearrange(\"(wh r) (wl k c) -> (wl wh) k r c\", wh=2, r=32, wl=2, k=2)"});
  for (const SpecText& base : bases)
    ASSERT_TRUE(tmem::check(base.make()).ok()) << base.op << " " << base.scope;
  std::mt19937_64 rng(20261130);
  const long kValues[] = {0, 1, 2, 3, 4, 8, 16, 32, 64, 128};
  int valid = 0, accepted = 0, proven = 0;
  for (int trial = 0; trial < 6000; ++trial) {
    SpecText text = bases[rng() % bases.size()];
    std::string& field = rng() % 2 ? text.tmem : text.regs;
    const size_t numbers = count_numbers(field);
    const size_t which = rng() % numbers;
    const long value =
        rng() % 3 == 0 ? kValues[rng() % std::size(kValues)] : static_cast<long>(rng() % 130);
    field = replace_number(field, which, value);
    std::optional<std::string_view> t2, im;
    if (text.tmem2) t2 = *text.tmem2;
    if (text.imm) im = *text.imm;
    auto spec = tmem::TransferSpec::from_fields(text.op, text.scope, text.tmem, text.regs, t2, im);
    if (!spec) continue;
    ++valid;
    auto reference = tmem::check_each_element(*spec);
    auto checked = tmem::check(*spec);
    ASSERT_EQ(checked.ok(), reference.ok()) << text.op << "\n" << text.tmem << "\n" << text.regs;
    if (!reference.ok()) {
      // The fast path only proves; on a failing spec it must give up (or never be reached).
      EXPECT_EQ(checked.error().message(), reference.error().message());
      continue;
    }
    ++accepted;
    EXPECT_EQ(*checked, *reference) << text.tmem << "\n" << text.regs;
    auto fast = by_dims(*spec, *reference);
    if (fast) {
      ++proven;
      EXPECT_EQ(*fast, *reference) << text.tmem << "\n" << text.regs;
    }
  }
  // The generator must exercise both verdicts and the fast path, or the test proves nothing.
  EXPECT_GT(valid, 1500);
  EXPECT_GT(accepted, 100);
  EXPECT_GT(proven, 50);
  std::printf("random mutations: %d valid specs, %d accepted, %d proven by dims\n", valid, accepted,
              proven);
}

}  // namespace
