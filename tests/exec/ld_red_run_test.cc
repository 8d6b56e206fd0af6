// tcgen05.ld.red through run_transfer on the simulator: the load and the round trip compare every
// thread's reduction result (redval) with tmem::reduce over the values the register view predicts,
// and a plan that puts a reduction result in the wrong slot fails as wrong data.
#include <gtest/gtest.h>

#include <utility>

#include "common/spec_fixtures.h"
#include "tmem/check.h"
#include "tmem/run.h"

namespace {

tmem::RunOptions sim(std::uint64_t seed = 1) { return {tmem::Device::kSim, seed}; }

// The warpgroup identity of 32x32b.xN, in `repeats` instructions of N columns each.
tmem::TransferSpec accumulator(const std::string& tail, int num, int repeats) {
  const std::string n = std::to_string(num), cols = std::to_string(num * repeats),
                    r = std::to_string(repeats);
  return tmem::TransferSpec::from_fields("tcgen05.ld.red.sync.aligned.32x32b.x" + n + "." + tail,
                                         "warpgroup",
                                         "tensor((128," + cols + "), S[(128," + cols +
                                             "):(1@TLane,1@TCol)], f32)"
                                             ".rearrange(\"(g l) (k c) -> g k l c\", g=4, k=" +
                                             r + ")",
                                         "tensor((128," + cols + "), S[(128," + cols +
                                             "):(1@tid_in_wg,1)], f32)"
                                             ".rearrange(\"(g l) (k c) -> g k l c\", g=4, k=" +
                                             r + ")")
      .value();
}

// Passed; roundtrip and load compared the loaded words and one redval per thread and instruction.
void expect_pass(const tmem::TransferSpec& spec, std::int64_t words, std::int64_t redvals) {
  auto report = tmem::run_transfer(spec, sim());
  ASSERT_TRUE(report.ok()) << report.error().full_text();
  ASSERT_TRUE(report->passed()) << report->to_string();
  ASSERT_EQ(report->checks.size(), 4u);
  for (const tmem::CheckResult& c : report->checks) {
    if (c.name == "raw") continue;
    const bool loads = c.name == "roundtrip" || c.name == "load";
    EXPECT_EQ(c.elements, loads ? words + redvals : words) << c.name;
  }
}

TEST(LdRedRun, EveryReductionOnTheSimulator) {
  for (const char* tail : {"max.f32", "min.f32", "max.abs.f32", "min.abs.NaN.f32", "max.NaN.f32",
                           "min.u32", "max.s32"}) {
    SCOPED_TRACE(tail);
    expect_pass(accumulator(tail, 8, 2), 128 * 16, 128 * 2);
  }
}

TEST(LdRedRun, SplitShapeWithItsImmediate) {
  tmemjit_test::SpecText split = tmemjit_test::seed_split(false);
  split.op = "tcgen05.ld.red.sync.aligned.16x32bx2.x4.max.abs.f32";
  expect_pass(split.make(), 128 * 4, 128);
}

TEST(LdRedRun, PlanPlacesRedvalsAfterTheViewsSlots) {
  const tmem::Plan plan = tmem::check(accumulator("max.f32", 8, 2)).value();
  ASSERT_EQ(plan.instructions_per_warp(), 2);
  EXPECT_EQ(plan.repeats[0].redval_slot, 16);
  EXPECT_EQ(plan.repeats[1].redval_slot, 17);
  EXPECT_EQ(plan.regs_per_thread, 18);
  const tmem::Plan plain =
      tmem::check(tmem::TransferSpec::make(plan.op.without_reduction(), plan.scope,
                                           accumulator("max.f32", 8, 2).tmem(),
                                           accumulator("max.f32", 8, 2).regs())
                      .value())
          .value();
  EXPECT_EQ(plain.repeats[0].redval_slot, -1);
  EXPECT_EQ(plain.regs_per_thread, 16);
}

// Fault injection: the kernel writes instruction 0's result where instruction 1's is expected.
TEST(LdRedRun, SwappedRedvalSlotsAreWrongData) {
  const tmem::TransferSpec spec = accumulator("max.u32", 8, 2);
  tmem::Plan plan = tmem::check(spec).value();
  std::swap(plan.repeats[0].redval_slot, plan.repeats[1].redval_slot);
  auto report = tmem::run_transfer(spec, plan, sim());
  ASSERT_TRUE(report.ok()) << report.error().full_text();
  EXPECT_FALSE(report->passed());
  const tmem::CheckResult* failure = report->first_failure();
  ASSERT_NE(failure, nullptr);
  ASSERT_TRUE(failure->mismatch.has_value());
  EXPECT_TRUE(failure->mismatch->slot == 16 || failure->mismatch->slot == 17)
      << failure->mismatch->to_string();
}

// 16-bit elements have no ld.red form (R14: f32, u32, s32).
TEST(LdRedRun, SixteenBitViewsAreRefused) {
  auto spec =
      tmem::TransferSpec::from_fields("tcgen05.ld.red.sync.aligned.32x32b.x2.max.f32", "warp:0",
                                      "tensor((32,4), S[(32,4):(1@TLane,1@TCol)], f16)",
                                      "tensor((32,4), S[(32,4):(1@laneid,1)], f16)");
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  auto plan = tmem::check(*spec);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().rule(), tmem::Rule::kDtype);
}

}  // namespace
