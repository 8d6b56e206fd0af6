// --op auto (tmem/select.h): the seed's choice for Layout B, wide forms over narrow ones, a 16-row
// shape where only it fits, and clear errors for tiles it cannot split.
#include "tmem/select.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/cli_util.h"
#include "common/spec_fixtures.h"
#include "tmem/check.h"

namespace {

tmem::View view_of(const std::string& text) { return tmem::View::parse(text).value(); }

const std::string kSeedRegsTile =
    "tensor((64,128), S[(64, 2, 64) : (1 @ tid_in_wg, 64 @ tid_in_wg, 1)], f32)";

TEST(Select, FindsTheSeedsOpcodeAndPlanForLayoutB) {
  auto selection =
      tmem::select(tmem::Direction::kStore, tmem::Scope::warpgroup(),
                   view_of("tmem_datapath_layout(\"B\",64,128)"), view_of(kSeedRegsTile));
  ASSERT_TRUE(selection.ok()) << selection.error().full_text();
  EXPECT_EQ(selection->spec.op().to_string(), "tcgen05.st.sync.aligned.32x32b.x64.b32")
      << selection->explain();
  // The same instructions the seed's hand-written views give.
  auto seed = tmem::check(tmemjit_test::seed_layout_b(true).make()).value();
  EXPECT_EQ(selection->plan, seed);
  // Narrower 32x32b forms are legal but lose on instruction count; 16-row shapes do not fit.
  bool x32_lost = false;
  for (const auto& candidate : selection->considered) {
    if (candidate.op.to_string() == "tcgen05.st.sync.aligned.32x32b.x32.b32") {
      EXPECT_TRUE(candidate.legal);
      EXPECT_EQ(candidate.instructions_per_warp, 2);
      x32_lost = candidate.verdict.starts_with("legal, lost");
    }
    if (candidate.op.shape() != tmem::Shape::k32x32b) {
      EXPECT_FALSE(candidate.legal) << candidate.op.to_string();
    }
  }
  EXPECT_TRUE(x32_lost) << selection->explain();
}

// A rejected candidate's verdict is the rule it broke, nothing more: select does not search for
// other opcodes or views for each of them (check_without_hints), and --explain stays one line each.
TEST(Select, RejectedCandidatesCarryOnlyTheBrokenRule) {
  // Layout F in 16x256b's register image: each 16x64b candidate's arranged views would match a
  // 16x256b form, which the full tmem::check appends as "(these views match ...)".
  auto selection = tmem::select(
      tmem::Direction::kLoad, tmem::Scope::warpgroup(),
      view_of("tmem_datapath_layout(\"F\",64,64)"),
      view_of(
          "tensor((64,64), S[(4,2,8,8,4,2):(32@tid_in_wg,2,4@tid_in_wg,4,1@tid_in_wg,1)], f32)"));
  ASSERT_TRUE(selection.ok()) << selection.error().full_text();
  int rejected = 0;
  for (const auto& candidate : selection->considered) {
    if (!candidate.verdict.starts_with("rejected: ")) continue;
    ++rejected;
    EXPECT_EQ(candidate.verdict.find("these views match"), std::string::npos) << candidate.verdict;
    EXPECT_EQ(candidate.verdict.find("the spec passes with"), std::string::npos)
        << candidate.verdict;
  }
  EXPECT_GT(rejected, 0) << selection->explain();
}

TEST(Select, PrefersOneWideInstructionOverManyNarrowOnes) {
  // A 128 x 32 tile, thread = row, register = column: x32 does it in one instruction, x4 in eight.
  auto selection = tmem::select(tmem::Direction::kLoad, tmem::Scope::warpgroup(),
                                view_of("tensor((128,32), S[(128,32):(1@TLane,1@TCol)], f32)"),
                                view_of("tensor((128,32), S[(128,32):(1@tid_in_wg,1)], f32)"));
  ASSERT_TRUE(selection.ok()) << selection.error().full_text();
  EXPECT_EQ(selection->spec.op().to_string(), "tcgen05.ld.sync.aligned.32x32b.x32.b32");
  EXPECT_EQ(selection->plan.instructions_per_warp(), 1);
  for (const auto& candidate : selection->considered)
    if (candidate.op.to_string() == "tcgen05.ld.sync.aligned.32x32b.x4.b32") {
      EXPECT_EQ(candidate.instructions_per_warp, 8);
    }
}

TEST(Select, PicksTheSixteenRowShapeThatMatchesTheRegisters) {
  // Layout F (M=64) with registers in 16x256b's native image: only 16x256b.x8 fits.
  auto selection = tmem::select(
      tmem::Direction::kLoad, tmem::Scope::warpgroup(),
      view_of("tmem_datapath_layout(\"F\",64,64)"),
      view_of(
          "tensor((64,64), S[(4,2,8,8,4,2):(32@tid_in_wg,2,4@tid_in_wg,4,1@tid_in_wg,1)], f32)"));
  ASSERT_TRUE(selection.ok()) << selection.error().full_text();
  EXPECT_EQ(selection->spec.op().to_string(), "tcgen05.ld.sync.aligned.16x256b.x8.b32")
      << selection->explain();
  EXPECT_EQ(selection->plan.instructions_per_warp(), 1);
}

TEST(Select, RefusesWhatItCannotSplitWithTheReason) {
  auto scope = tmem::Scope::warpgroup();
  auto different =
      tmem::select(tmem::Direction::kLoad, scope, view_of("tmem_datapath_layout(\"B\",64,128)"),
                   view_of("tensor((128,64), S[(128,64):(1@tid_in_wg,1)], f32)"));
  ASSERT_FALSE(different.ok());
  EXPECT_NE(different.error().message().find("same logical shape"), std::string::npos);
  auto halves = tmem::select(tmem::Direction::kLoad, scope,
                             view_of("tensor((128,32), S[(128,32):(1@TLane,1@TCol)], f16)"),
                             view_of("tensor((128,32), S[(128,32):(1@tid_in_wg,1)], f16)"));
  ASSERT_FALSE(halves.ok());
  EXPECT_NE(halves.error().message().find(".pack::16b"), std::string::npos);
  // Registers spread over 4 warps at warp scope.
  auto warp = tmem::select(tmem::Direction::kLoad, tmem::Scope::warp(0).value(),
                           view_of("tensor((128,32), S[(128,32):(1@TLane,1@TCol)], f32)"),
                           view_of("tensor((128,32), S[(128,32):(1@tid_in_wg,1)], f32)"));
  ASSERT_FALSE(warp.ok());
  EXPECT_NE(warp.error().message().find("4 warps"), std::string::npos) << warp.error().message();
  // Registers that no form's image matches (thread = column): every candidate is explained.
  auto none = tmem::select(tmem::Direction::kLoad, scope,
                           view_of("tensor((128,32), S[(128,32):(1@TLane,1@TCol)], f32)"),
                           view_of("tensor((128,32), S[(128,32):(1,128@tid_in_wg)], f32)"));
  ASSERT_FALSE(none.ok());
}

TEST(Select, CheckOpAutoExplainOnTheCommandLine) {
  auto r = tmemjit_test::run_cli("check", "--op", "auto", "--scope", "warpgroup", "--tmem",
                                 "tmem_datapath_layout(\"B\",64,128)", "--regs", kSeedRegsTile,
                                 "--explain");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("32x32b.x64.b32: chosen: 1 instruction(s) per warp"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("32x32b.x32.b32: legal, lost"), std::string::npos) << r.out;
  auto json = tmemjit_test::run_cli("check", "--op", "auto.ld", "--scope", "warpgroup", "--tmem",
                                    "tmem_datapath_layout(\"B\",64,128)", "--regs", kSeedRegsTile,
                                    "--json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"op\":\"tcgen05.ld.sync.aligned.32x32b.x64.b32\""), std::string::npos)
      << json.out;
}

// ---- register budget and spill warnings (issue 16, item 8) ----------------------------------

const std::string kTile128 = "tensor((128,128), S[(128,128):(1@TLane,1@TCol)], f32)";
const std::string kRegs128 = "tensor((128,128), S[(128,128):(1@tid_in_wg,1)], f32)";

TEST(SelectBudget, ABudgetPicksMoreRepeatsOfASmallerNum) {
  auto wide = tmem::select(tmem::Direction::kLoad, tmem::Scope::warpgroup(), view_of(kTile128),
                           view_of(kRegs128));
  ASSERT_TRUE(wide.ok()) << wide.error().full_text();
  EXPECT_EQ(wide->spec.op().to_string(), "tcgen05.ld.sync.aligned.32x32b.x128.b32");
  EXPECT_EQ(wide->plan.instructions_per_warp(), 1);
  auto narrow = tmem::select(tmem::Direction::kLoad, tmem::Scope::warpgroup(), view_of(kTile128),
                             view_of(kRegs128), {.register_budget = 32});
  ASSERT_TRUE(narrow.ok()) << narrow.error().full_text();
  EXPECT_EQ(narrow->spec.op().to_string(), "tcgen05.ld.sync.aligned.32x32b.x32.b32")
      << narrow->explain();
  EXPECT_EQ(narrow->plan.instructions_per_warp(), 4);
  EXPECT_EQ(narrow->plan.regs_per_thread, 128);  // the same tile, in four instructions
  EXPECT_NE(narrow->explain().find("32x32b.x64.b32: skipped: 64 registers per instruction, "
                                   "above the budget of 32"),
            std::string::npos)
      << narrow->explain();
  // A 16x256b form takes 4 registers per .num: x8 fits a budget of 32.
  for (const auto& candidate : narrow->considered) {
    if (candidate.legal) {
      EXPECT_LE(candidate.op.regs_per_thread(), 32) << candidate.op.to_string();
    }
  }
}

TEST(SelectBudget, ABudgetOutsideTheFormsIsAUsageError) {
  for (int budget : {-1, 129, 256}) {
    auto selection =
        tmem::select(tmem::Direction::kLoad, tmem::Scope::warpgroup(), view_of(kTile128),
                     view_of(kRegs128), {.register_budget = budget});
    ASSERT_FALSE(selection.ok());
    EXPECT_EQ(selection.error().code(), tmem::ErrorCode::kUsage) << selection.error().message();
  }
}

TEST(SelectBudget, TheCommandLineTakesABudget) {
  auto r = tmemjit_test::run_cli("check", "--op", "auto.ld", "--scope", "warpgroup", "--tmem",
                                 kTile128, "--regs", kRegs128, "--register-budget", "16", "--json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["op"], "tcgen05.ld.sync.aligned.32x32b.x16.b32");
  EXPECT_EQ(json["instructions_per_warp"], 8);
  auto explicit_op = tmemjit_test::run_cli(
      "check", "--op", "tcgen05.ld.sync.aligned.32x32b.x16.b32", "--scope", "warpgroup", "--tmem",
      kTile128, "--regs", kRegs128, "--register-budget", "16");
  EXPECT_EQ(explicit_op.exit_code, 2) << explicit_op.err;
  auto bad = tmemjit_test::run_cli("check", "--op", "auto", "--scope", "warpgroup", "--tmem",
                                   kTile128, "--regs", kRegs128, "--register-budget", "x");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
}

TEST(SpillWarning, PlansAbove192RegistersPerThreadWarn) {
  auto seed = tmem::check(tmemjit_test::seed_layout_b(false).make()).value();
  EXPECT_TRUE(seed.warnings().empty());
  // 255 repeats of 32x32b.x1 into slots 0..254: legal, and nothing is left for the kernel.
  const std::string op = "tcgen05.ld.sync.aligned.32x32b.x1.b32";
  const std::string tmem = "tensor((255,32,1), S[(255,32):(1@TCol,1@TLane)], f32)";
  const std::string regs = "tensor((255,32,1), S[(255,32):(1,1@laneid)], f32)";
  auto full = tmem::check(tmem::TransferSpec::from_fields(op, "warp:0", tmem, regs).value());
  ASSERT_TRUE(full.ok()) << full.error().full_text();
  ASSERT_EQ(full->warnings().size(), 1u);
  EXPECT_EQ(full->warnings()[0].rfind("spills likely: the plan holds 255 registers per thread", 0),
            0u)
      << full->warnings()[0];
  auto text = tmemjit_test::run_cli("check", "--op", op, "--scope", "warp:0", "--tmem", tmem,
                                    "--regs", regs);
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.err.find("warning: spills likely: the plan holds 255 registers per thread"),
            std::string::npos)
      << text.err;
  auto json = tmemjit_test::run_cli("check", "--op", op, "--scope", "warp:0", "--tmem", tmem,
                                    "--regs", regs, "--json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(nlohmann::json::parse(json.out)["warnings"].size(), 1u) << json.out;
  auto quiet =
      tmemjit_test::run_cli("check", "--op", tmemjit_test::seed_layout_b(false).op, "--scope",
                            "warpgroup", "--tmem", tmemjit_test::seed_layout_b(false).tmem,
                            "--regs", tmemjit_test::seed_layout_b(false).regs, "--json");
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_TRUE(nlohmann::json::parse(quiet.out)["warnings"].empty()) << quiet.out;
}

}  // namespace
