// --op auto (tmem/select.h): the seed's choice for Layout B, wide forms over narrow ones, a 16-row
// shape where only it fits, 16-bit tiles (plain .b32 and pack forms), and clear errors for tiles
// it cannot split.
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
  // 16-bit TMEM halves against a 32-bit register image: only an explicit pack form says that.
  auto widths = tmem::select(tmem::Direction::kLoad, scope,
                             view_of("tensor((128,32), S[(128,32):(1@TLane,2@TCol)], f16)"),
                             view_of("tensor((128,32), S[(128,32):(1@tid_in_wg,1)], b32)"));
  ASSERT_FALSE(widths.ok());
  EXPECT_EQ(widths.error().code(), tmem::ErrorCode::kLayout);
  EXPECT_NE(widths.error().message().find("16-bit (f16) and the register tile 32-bit (b32)"),
            std::string::npos)
      << widths.error().message();
  EXPECT_NE(widths.error().message().find(".pack::16b"), std::string::npos);
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

// ---- 16-bit tiles (issue 29, item 1) ---------------------------------------------------------

// FA4's P: a bf16 tile whose register pairs (columns 2q, 2q+1 of a row) share one TMEM cell.
const std::string kDenseBf16 = "tensor((128,32), S[(128,32):(1@TLane,1@TCol)], bf16)";
const std::string kPackedBf16 = "tensor((128,32), S[(128,32):(1@TLane,2@TCol)], bf16)";
const std::string kRegsBf16 = "tensor((128,32), S[(128,32):(1@tid_in_wg,1)], bf16)";

TEST(Select16Bit, RegisterPairsInOneCellTakeThePlainB32Form) {
  for (auto direction : {tmem::Direction::kStore, tmem::Direction::kLoad}) {
    auto selection =
        tmem::select(direction, tmem::Scope::warpgroup(), view_of(kDenseBf16), view_of(kRegsBf16));
    ASSERT_TRUE(selection.ok()) << selection.error().full_text();
    const std::string dir = direction == tmem::Direction::kLoad ? "ld" : "st";
    EXPECT_EQ(selection->spec.op().to_string(), "tcgen05." + dir + ".sync.aligned.32x32b.x16.b32")
        << selection->explain();
    // Two bf16 per register: 16 registers and 16 cells per row of 32 elements.
    EXPECT_EQ(selection->plan.regs_per_thread, 16);
    EXPECT_EQ(selection->plan.columns_used, 16);
    EXPECT_EQ(selection->spec.regs().shape().back(), 2) << "the trailing half axis";
    ASSERT_EQ(selection->notes.size(), 1u);
    EXPECT_NE(selection->notes[0].find("share one TMEM cell"), std::string::npos);
    EXPECT_NE(selection->notes[0].find("plain .b32"), std::string::npos);
    EXPECT_EQ(selection->explain().rfind(selection->notes[0], 0), 0u) << "the note comes first";
    for (const auto& candidate : selection->considered) EXPECT_FALSE(candidate.op.packed());
    // The plan equals the hand-written spec's.
    auto hand = tmem::check(tmem::TransferSpec::from_fields(
                                "tcgen05." + dir + ".sync.aligned.32x32b.x16.b32", "warpgroup",
                                kDenseBf16 + ".rearrange(\"(g r) (c h) -> g r c h\", g=4, h=2)",
                                kRegsBf16 + ".rearrange(\"(g r) (c h) -> g r c h\", g=4, h=2)")
                                .value());
    ASSERT_TRUE(hand.ok()) << hand.error().full_text();
    EXPECT_EQ(selection->plan, *hand);
  }
}

TEST(Select16Bit, LowHalvesOfAdjacentCellsTakeThePackForms) {
  auto load = tmem::select(tmem::Direction::kLoad, tmem::Scope::warpgroup(), view_of(kPackedBf16),
                           view_of(kRegsBf16));
  ASSERT_TRUE(load.ok()) << load.error().full_text();
  EXPECT_EQ(load->spec.op().to_string(), "tcgen05.ld.sync.aligned.32x32b.x16.pack::16b.b32");
  EXPECT_EQ(load->plan.columns_used, 32) << "one element per cell";
  ASSERT_EQ(load->notes.size(), 1u);
  EXPECT_NE(load->notes[0].find(".pack::16b"), std::string::npos) << load->notes[0];
  for (const auto& candidate : load->considered) EXPECT_TRUE(candidate.op.packed());
  auto store = tmem::select(tmem::Direction::kStore, tmem::Scope::warpgroup(), view_of(kPackedBf16),
                            view_of(kRegsBf16));
  ASSERT_TRUE(store.ok()) << store.error().full_text();
  EXPECT_EQ(store->spec.op().to_string(), "tcgen05.st.sync.aligned.32x32b.x16.unpack::16b.b32");
  EXPECT_NE(store->notes[0].find(".unpack::16b"), std::string::npos) << store->notes[0];
}

// Layout F (M=64) in bf16 with 16x128b-like registers: a 16-row shape for 16-bit data.
TEST(Select16Bit, SixteenRowShapesTakeSixteenBitTiles) {
  // Thread (l, g) of warp w holds row 16w + l/4 + 8*(q%2), columns 2*(l%4 + 4*(q/2)) + h: each
  // register a pair of one row (16x128b's image over bf16x2 words).
  auto selection = tmem::select(
      tmem::Direction::kLoad, tmem::Scope::warpgroup(),
      view_of("tmem_datapath_layout(\"F\",64,16, dtype=bf16)"),
      view_of("tensor((64,16), S[(4,2,8,2,4,2):(32@tid_in_wg,2,4@tid_in_wg,4,1@tid_in_wg,1)], "
              "bf16)"));
  ASSERT_TRUE(selection.ok()) << selection.error().full_text();
  EXPECT_EQ(selection->spec.op().shape(), tmem::Shape::k16x128b) << selection->explain();
  EXPECT_FALSE(selection->spec.op().packed());
}

TEST(Select16Bit, RefusesPairsThatNoFormHoldsWithTheReason) {
  auto scope = tmem::Scope::warpgroup();
  // A register's two elements in two lanes.
  auto lanes =
      tmem::select(tmem::Direction::kStore, scope,
                   view_of("tensor((128,32), S[(2,64,32):(1@TLane,2@TLane,1@TCol)], bf16)"),
                   view_of("tensor((128,32), S[(2,64,32):(1,2@tid_in_wg,2)], bf16)"));
  ASSERT_FALSE(lanes.ok());
  EXPECT_EQ(lanes.error().code(), tmem::ErrorCode::kLayout);
  EXPECT_NE(lanes.error().message().find("1 TMEM lane apart"), std::string::npos)
      << lanes.error().message();
  // Four units apart: neither one cell nor adjacent cells.
  auto far = tmem::select(tmem::Direction::kLoad, scope,
                          view_of("tensor((128,32), S[(128,32):(1@TLane,4@TCol)], bf16)"),
                          view_of(kRegsBf16));
  ASSERT_FALSE(far.ok());
  EXPECT_NE(far.error().message().find("4 16-bit units apart"), std::string::npos)
      << far.error().message();
  // No register pairs at all: every element in a register of its own.
  auto single = tmem::select(tmem::Direction::kLoad, scope, view_of(kDenseBf16),
                             view_of("tensor((128,32), S[(128,32):(1@tid_in_wg,2)], bf16)"));
  ASSERT_FALSE(single.ok());
  EXPECT_NE(single.error().message().find("other half of its register"), std::string::npos)
      << single.error().message();
}

TEST(Select16Bit, CheckOpAutoExplainSaysWhy) {
  auto r = tmemjit_test::run_cli("check", "--op", "auto.st", "--scope", "warpgroup", "--tmem",
                                 kDenseBf16, "--regs", kRegsBf16, "--explain");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("16-bit tiles: the two elements of a register share one TMEM cell"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("32x32b.x16.b32: chosen"), std::string::npos) << r.out;
  auto packed = tmemjit_test::run_cli("check", "--op", "auto.ld", "--scope", "warpgroup", "--tmem",
                                      kPackedBf16, "--regs", kRegsBf16, "--json");
  ASSERT_EQ(packed.exit_code, 0) << packed.err;
  EXPECT_EQ(nlohmann::json::parse(packed.out)["op"],
            "tcgen05.ld.sync.aligned.32x32b.x16.pack::16b.b32");
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
