// A CTA pair (cta_group::2, docs/tcgen05-rules.md §Lifecycle) through run_transfer and the
// executors: the simulator (label sim) always; Hopper emulation (suite EmuPair, label emu) on a GPU
// of compute capability 9.0 or later, skipping with the reason elsewhere.
#include <gtest/gtest.h>

#include <vector>

#include "common/executor_skip.h"
#include "common/spec_fixtures.h"
#include "kernels/transfer_kernels.h"
#include "runtime/exec/executor.h"
#include "tmem/check.h"
#include "tmem/run.h"

namespace {

using tmem::KernelKind;
using tmemjit_test::SpecText;

std::vector<SpecText> pair_specs() {
  return {tmemjit_test::seed_layout_b(true), tmemjit_test::seed_pack(true),
          tmemjit_test::seed_split(true)};
}

// Every check passes on `device`, and compares twice the elements of a single CTA's run: both
// CTAs' blocks.
void expect_pair_passes(tmem::Device device) {
  for (const SpecText& text : pair_specs()) {
    const tmem::TransferSpec spec = text.make();
    tmem::RunOptions options;
    options.device = device;
    options.seed = 7;
    auto single = tmem::run_transfer(spec, options);
    ASSERT_TRUE(single.ok()) << single.error().full_text();
    options.cta_group = 2;
    auto pair = tmem::run_transfer(spec, options);
    ASSERT_TRUE(pair.ok()) << pair.error().full_text();
    EXPECT_TRUE(pair->passed()) << text.op << "\n" << pair->to_string();
    ASSERT_EQ(pair->checks.size(), single->checks.size());
    for (size_t k = 0; k < pair->checks.size(); ++k)
      EXPECT_EQ(pair->checks[k].elements, 2 * single->checks[k].elements)
          << text.op << " " << pair->checks[k].name;
  }
}

// Executor level: each CTA moves its own block (distinct data per CTA), for the round trip.
void expect_each_cta_uses_its_block(tmem::Executor& executor) {
  const tmem::TransferSpec spec = tmemjit_test::seed_layout_b(true).make();
  const tmem::Plan plan = tmem::check(spec).value();
  const auto shape = tmem::kernels::launch_shape(plan, KernelKind::kRoundtrip, 2);
  const size_t words = static_cast<size_t>(shape.ctas * shape.threads * shape.slots);
  std::vector<std::uint32_t> in(words), out(words, 0);
  for (size_t k = 0; k < words; ++k)
    in[k] = 0x51A70000u ^ static_cast<std::uint32_t>(k * 2654435761u);
  auto ran = executor.run_pair(spec, plan, KernelKind::kRoundtrip, in, out);
  ASSERT_TRUE(ran.ok()) << ran.error().full_text();
  // The seed's register view covers every slot of every thread, so Out is In, block by block.
  EXPECT_EQ(out, in);
}

TEST(SimPairRun, SeedSpecsPassAsACtaPair) { expect_pair_passes(tmem::Device::kSim); }

TEST(SimPairRun, EachCtaUsesItsOwnBlock) {
  auto executor = tmem::make_sim_executor();
  ASSERT_TRUE(executor.ok());
  expect_each_cta_uses_its_block(**executor);
}

TEST(SimPairRun, SingleCtaBuffersAreUsage) {
  auto executor = tmem::make_sim_executor();
  ASSERT_TRUE(executor.ok());
  const tmem::TransferSpec spec = tmemjit_test::seed_layout_b(true).make();
  const tmem::Plan plan = tmem::check(spec).value();
  const auto shape = tmem::kernels::launch_shape(plan, KernelKind::kRoundtrip);
  std::vector<std::uint32_t> in(static_cast<size_t>(shape.threads * shape.slots)), out(in.size());
  auto ran = (*executor)->run_pair(spec, plan, KernelKind::kRoundtrip, in, out);
  ASSERT_FALSE(ran.ok());
  EXPECT_EQ(ran.error().code(), tmem::ErrorCode::kUsage);
}

TEST(SimPairRun, OtherCtaGroupsAreUsage) {
  tmem::RunOptions options;
  options.device = tmem::Device::kSim;
  options.cta_group = 3;
  auto run = tmem::run_transfer(tmemjit_test::seed_layout_b(true).make(), options);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().code(), tmem::ErrorCode::kUsage);
}

// Hopper emulation: a cluster of 2 CTAs (cuLaunchKernelEx), the cluster barrier, TMEM per CTA.
tmemjit_test::ExecutorOrReason& emu() {
  static tmemjit_test::ExecutorOrReason made = tmemjit_test::make_for_suite(tmem::Device::kEmu);
  return made;
}

#define EMU_OR_SKIP()                                  \
  if (!emu().skip.empty()) GTEST_SKIP() << emu().skip; \
  ASSERT_TRUE(emu().failure.empty()) << emu().failure

TEST(EmuPair, SeedSpecsPassAsACtaPairInAClusterOfTwo) {
  EMU_OR_SKIP();
  expect_pair_passes(tmem::Device::kEmu);
}

TEST(EmuPair, EachCtaUsesItsOwnBlock) {
  EMU_OR_SKIP();
  expect_each_cta_uses_its_block(*emu().executor);
}

}  // namespace
