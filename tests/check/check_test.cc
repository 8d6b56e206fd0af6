// The native-image rules (docs/transfer-semantics.md §Rules): the seed's examples, identity specs
// of every form, and single-field mutations that must each fail with the right rule.
#include "tmem/check.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/spec_fixtures.h"
#include "tmem/specialize.h"

namespace {

using tmemjit_test::identity_spec;
using tmemjit_test::SpecText;

tmem::Result<tmem::Plan> check_text(const SpecText& text) {
  std::optional<std::string_view> t2, im;
  if (text.tmem2) t2 = *text.tmem2;
  if (text.imm) im = *text.imm;
  auto spec = tmem::TransferSpec::from_fields(text.op, text.scope, text.tmem, text.regs, t2, im);
  if (!spec) return spec.error();
  return tmem::check(*spec);
}

// Expects an error that breaks `rule` and whose message mentions `fragment`.
void expect_rule(const SpecText& text, tmem::Rule rule, const std::string& fragment = "") {
  auto plan = check_text(text);
  ASSERT_FALSE(plan.ok()) << "accepted:\n" << text.tmem << "\n" << text.regs;
  EXPECT_EQ(plan.error().code(), tmem::ErrorCode::kRule) << plan.error().message();
  EXPECT_EQ(tmem::to_string(plan.error().rule()), tmem::to_string(rule)) << plan.error().message();
  if (!fragment.empty()) {
    EXPECT_NE(plan.error().message().find(fragment), std::string::npos) << plan.error().message();
  }
  EXPECT_NE(plan.error().details().find("operand: "), std::string::npos)
      << "the operand is printed";
}

TEST(CheckSeed, LayoutBRoundTrip) {
  for (bool store : {true, false}) {
    auto plan = check_text(tmemjit_test::seed_layout_b(store));
    ASSERT_TRUE(plan.ok()) << plan.error().full_text();
    EXPECT_EQ(plan->warps(), 4);
    EXPECT_EQ(plan->instructions_per_warp(), 1);
    EXPECT_EQ(plan->regs_per_thread, 64);
    EXPECT_EQ(plan->alloc_columns, 64);
    EXPECT_EQ(plan->repeats[0].lane_offset, 0);
    EXPECT_EQ(plan->repeats[0].column, 0);
    for (int r = 0; r < 64; ++r) EXPECT_EQ(plan->repeats[0].slots[r], r);
    // Warp w's address: lane 32*w, column 0.
    for (int g = 0; g < 4; ++g)
      EXPECT_EQ(plan->address(g, 0), static_cast<std::uint32_t>(32 * g) << 16);
  }
}

TEST(CheckSeed, PackUnpack) {
  for (bool store : {true, false}) {
    auto plan = check_text(tmemjit_test::seed_pack(store));
    ASSERT_TRUE(plan.ok()) << plan.error().full_text();
    EXPECT_EQ(plan->regs_per_thread, 64);
    EXPECT_EQ(plan->columns_used, 128);  // 64 words -> 128 cells, low halves only
    EXPECT_EQ(plan->alloc_columns, 128);
  }
}

TEST(CheckSeed, PackWithDenseHalvesIsRejected) {
  // Strides 2 and 1 select both halves of one cell: the seed says this does not satisfy pack.
  auto text = tmemjit_test::seed_pack(true);
  text.tmem =
      "tensor((128,64,2), S[(128,64,2):(1@TLane,2@TCol,1@TCol)], f16).rearrange(\"(g r) c h -> g r "
      "c h\", g=4)";
  expect_rule(text, tmem::Rule::kPlacement, "column stride 4");
}

TEST(CheckSeed, SplitWithTheSeedImmediate) {
  for (bool store : {true, false}) {
    auto plan = check_text(tmemjit_test::seed_split(store));
    ASSERT_TRUE(plan.ok()) << plan.error().full_text();
    EXPECT_EQ(plan->imm, (16 << 16) + 8);
    EXPECT_EQ(plan->columns_used, 12);
    EXPECT_EQ(plan->alloc_columns, 32);
    EXPECT_EQ(plan->regs_per_thread, 4);
  }
}

TEST(CheckSeed, SplitWithAMismatchedImmediateFails) {
  expect_rule(tmemjit_test::seed_split(false, (16L << 16) + 9), tmem::Rule::kPlacement, "column 9");
  expect_rule(tmemjit_test::seed_split(false, 8), tmem::Rule::kPlacement, "lane 16");
  // An immediate that leaves the warp's slab.
  expect_rule(tmemjit_test::seed_split(false, (32L << 16) + 8), tmem::Rule::kSplit,
              "outside the warp's lanes");
}

TEST(CheckIdentity, EveryFormPassesAtWarpgroupScope) {
  int checked = 0;
  for (auto dir : {tmem::Direction::kLoad, tmem::Direction::kStore}) {
    for (tmem::Shape shape : tmem::all_shapes()) {
      for (int num = 1; num <= 128; num *= 2) {
        for (bool pack : {false, true}) {
          auto op = tmem::Opcode::make(dir, shape, num, pack);
          if (!op) continue;
          for (int offset : {0, 16}) {
            if (offset && (op->atom_rows() == 32 || op->is_split())) continue;
            auto plan = check_text(identity_spec(*op, offset));
            ASSERT_TRUE(plan.ok())
                << op->to_string() << " offset " << offset << ": " << plan.error().full_text();
            EXPECT_EQ(plan->instructions_per_warp(), 1);
            EXPECT_EQ(plan->repeats[0].lane_offset, offset);
            EXPECT_EQ(plan->regs_per_thread, op->regs_per_thread());
            for (int r = 0; r < op->regs_per_thread(); ++r) ASSERT_EQ(plan->repeats[0].slots[r], r);
            EXPECT_EQ(plan->columns_used, op->atom_tmem_cols() * op->accesses());
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 148 + 2 * (8 + 7 + 6) * 2);  // + the upper half-slab of 16x64b/128b/256b
}

SpecText x4(tmem::Shape shape, bool store = true, bool pack = false) {
  auto op =
      tmem::Opcode::make(store ? tmem::Direction::kStore : tmem::Direction::kLoad, shape, 4, pack)
          .value();
  return identity_spec(op);
}

TEST(CheckMutation, WrongLaneBase) {
  auto text = x4(tmem::Shape::k32x32b);
  text.tmem = "tensor((4,32,4), S[(4,32,4):(32@TLane,1@TLane,1@TCol)] + 1@TLane, b32)";
  expect_rule(text, tmem::Rule::kSlab, "lane 1");
}

TEST(CheckMutation, WrongColumnStride) {
  auto text = x4(tmem::Shape::k32x32b);
  text.tmem = "tensor((4,32,4), S[(4,32,4):(32@TLane,1@TLane,2@TCol)], b32)";
  expect_rule(text, tmem::Rule::kPlacement, "column 2");
}

TEST(CheckMutation, SwappedLanes) {
  auto text = x4(tmem::Shape::k16x64b);
  // Lane bits swapped relative to the native image: 1@tid and 2@tid exchanged.
  text.regs =
      "tensor((4,2,8,4,2), S[(4,2,8,4,2):(32@tid_in_wg,2@tid_in_wg,4@tid_in_wg,1,1@tid_in_wg)], "
      "b32)"
      ".rearrange(\"g rh rl ch cl -> g (rh rl) (ch cl)\")";
  expect_rule(text, tmem::Rule::kOwnership, "lane");
}

TEST(CheckMutation, SlotThatDiffersBetweenLanes) {
  // A store's register source may be replicated; here lanes 16-31 find their element only in the
  // replica, at slot r + 4: one PTX register name cannot serve both.
  auto text = x4(tmem::Shape::k32x32b);
  text.regs =
      "tensor((4,32,4), S[(4,2,16,4):(32@tid_in_wg,4,1@tid_in_wg,1)] + R[2:16@tid_in_wg], b32)";
  expect_rule(text, tmem::Rule::kSlot, "one PTX register name");
}

TEST(CheckMutation, WarpScopeOutsideTheWarpsSlab) {
  SpecText text{"tcgen05.st.sync.aligned.32x32b.x4.b32", "warp:1",
                "tensor((32,4), S[(32,4):(1@TLane,1@TCol)], b32)",
                "tensor((32,4), S[(32,4):(1@laneid,1)], b32)"};
  expect_rule(text, tmem::Rule::kSlab, "lanes 32..63");
  text.tmem = "tensor((32,4), S[(32,4):(1@TLane,1@TCol)] + 32@TLane, b32)";
  auto plan = check_text(text);
  ASSERT_TRUE(plan.ok()) << plan.error().full_text();
  EXPECT_EQ(plan->address(0, 0), 32u << 16);
}

TEST(CheckMutation, HalfOffsetOfEight) {
  auto op = tmem::Opcode::parse("tcgen05.ld.sync.aligned.16x64b.x4.b32").value();
  auto text = identity_spec(op);
  text.tmem = "tensor((4,16,8), S[(4,16,8):(32@TLane,1@TLane,1@TCol)] + 8@TLane, b32)";
  expect_rule(text, tmem::Rule::kSlab, "half 0 or 16");
}

TEST(CheckMutation, ColumnsPast512) {
  auto text = x4(tmem::Shape::k32x32b);
  text.tmem = "tensor((4,32,4), S[(4,32,4):(32@TLane,1@TLane,1@TCol)] + 510@TCol, b32)";
  expect_rule(text, tmem::Rule::kBounds, "512");
}

TEST(CheckMutation, TwoElementsOnOneCell) {
  // Two repeats stored to the same columns.
  SpecText text{"tcgen05.st.sync.aligned.32x32b.x4.b32", "warpgroup",
                "tensor((4,2,32,4), S[(4,2,32,4):(32@TLane,0@TCol,1@TLane,1@TCol)], b32)",
                "tensor((4,2,32,4), S[(4,2,32,4):(32@tid_in_wg,4,1@tid_in_wg,1)], b32)"};
  expect_rule(text, tmem::Rule::kCoverage, "two elements");
  // A load may read one cell twice (into different registers).
  text.op = "tcgen05.ld.sync.aligned.32x32b.x4.b32";
  EXPECT_TRUE(check_text(text).ok());
}

TEST(CheckMutation, DestinationReplicasAreRejected) {
  auto text = x4(tmem::Shape::k32x32b);
  text.tmem = "tensor((4,32,4), S[(4,32,4):(32@TLane,1@TLane,1@TCol)] + R[2:8@TCol], b32)";
  expect_rule(text, tmem::Rule::kReplicas, "destination");
}

TEST(CheckMutation, WrongAtomExtentNamesTheAxisAndSuggestsTheFittingOpcode) {
  auto text = tmemjit_test::seed_layout_b(true);
  text.op = "tcgen05.st.sync.aligned.32x32b.x32.b32";
  expect_rule(text, tmem::Rule::kShape, "axis 2");
  auto plan = check_text(text);
  EXPECT_NE(plan.error().message().find("these views match tcgen05.st.sync.aligned.32x32b.x64.b32"),
            std::string::npos)
      << plan.error().message();
}

TEST(CheckMutation, RegisterViewOfAnotherShapeIsNamed) {
  // The 16x256b.x4 identity views checked as 16x128b.x8 (same register count, other image).
  auto text = x4(tmem::Shape::k16x256b, false);
  text.op = "tcgen05.ld.sync.aligned.16x128b.x8.b32";
  auto plan = check_text(text);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.error().message().find("these views match tcgen05.ld.sync.aligned.16x256b.x4.b32"),
            std::string::npos)
      << plan.error().message();
}

TEST(CheckScopes, LayoutBAtWarpWarpgroupAndCta8) {
  // warp:2 takes the seed's group 2 (wl=1, wh=0): lanes 64..95.
  auto seed = tmemjit_test::seed_layout_b(true);
  SpecText warp{seed.op, "warp:2", seed.tmem + "[2]", seed.regs + "[2]"};
  auto plan = check_text(warp);
  ASSERT_TRUE(plan.ok()) << plan.error().full_text();
  EXPECT_EQ(plan->address(0, 0), 64u << 16);
  // cta:8: two Layout B tiles side by side in columns; warps 4-7 take the second one.
  SpecText cta{seed.op, "cta:8",
               "tensor((2,64,128), S[(2,64,2,64):(64@TCol,1@TLane,64@TLane,1@TCol)], f32)"
               ".rearrange(\"t (wh r) (wl c) -> (t wl wh) r c\", wh=2, r=32, wl=2)",
               "tensor((2,64,128), S[(2,64,2,64):(128@tx,1@tx,64@tx,1)], f32)"
               ".rearrange(\"t (wh r) (wl c) -> (t wl wh) r c\", wh=2, r=32, wl=2)"};
  plan = check_text(cta);
  ASSERT_TRUE(plan.ok()) << plan.error().full_text();
  EXPECT_EQ(plan->warps(), 8);
  EXPECT_EQ(plan->group_column_stride, 0);
  EXPECT_EQ(plan->warpgroup_column_stride, 64);
  EXPECT_EQ(plan->alloc_columns, 128);
  EXPECT_EQ(plan->address(5, 0), (32u << 16) | 64u);
}

TEST(CheckScopes, LayoutFReadBy16x256b) {
  // Layout F (M=64): lane 32*(r/16) + r%16; each warp's 16 rows are read by 16x256b.x8 (64 cols).
  const std::string regs =
      "tensor((4,2,8,8,4,2), S[(4,2,8,8,4,2):(32@tid_in_wg,2,4@tid_in_wg,4,1@tid_in_wg,1)], f32)"
      ".rearrange(\"g rh rl ch cm cl -> g (rh rl) (ch cm cl)\")";
  SpecText text{"tcgen05.ld.sync.aligned.16x256b.x8.b32", "warpgroup",
                "tmem_datapath_layout(\"F\",64,64).rearrange(\"(g r) c -> g r c\", g=4)", regs};
  auto plan = check_text(text);
  ASSERT_TRUE(plan.ok()) << plan.error().full_text();
  EXPECT_EQ(plan->repeats[0].lane_offset, 0);
  text.tmem = "tmem_datapath_layout(\"F\",64,64,sub_slab=1).rearrange(\"(g r) c -> g r c\", g=4)";
  plan = check_text(text);
  ASSERT_TRUE(plan.ok()) << plan.error().full_text();
  EXPECT_EQ(plan->repeats[0].lane_offset, 16);
}

TEST(CheckScopes, SixtyFourRowReadOfA128RowLayoutDIsNotReinterpreted) {
  // TIRx pitfall: a 16x* read over the first 64 rows of a 128-row Layout D tile. Rows 16-31 of
  // warp 0 live in lanes 16-31, not in warp 1's lanes: the checker must refuse, not reinterpret.
  const std::string regs =
      "tensor((4,2,8,8,4,2), S[(4,2,8,8,4,2):(32@tid_in_wg,2,4@tid_in_wg,4,1@tid_in_wg,1)], f32)"
      ".rearrange(\"g rh rl ch cm cl -> g (rh rl) (ch cm cl)\")";
  SpecText text{"tcgen05.ld.sync.aligned.16x256b.x8.b32", "warpgroup",
                "tmem_datapath_layout(\"D\",128,64)[0:64].rearrange(\"(g r) c -> g r c\", g=4)",
                regs};
  expect_rule(text, tmem::Rule::kSlab, "lane 16");
}

TEST(CheckAxes, OperandsUseTheirOwnAxes) {
  auto text = x4(tmem::Shape::k32x32b);
  text.regs = "tensor((4,32,4), S[(4,32,4):(32@TLane,1@tid_in_wg,1)], b32)";
  expect_rule(text, tmem::Rule::kAxes, "TLane");
  text = x4(tmem::Shape::k32x32b);
  text.regs = "tensor((4,32,4), S[(4,32,4):(32@m,1@laneid,1)], b32)";
  expect_rule(text, tmem::Rule::kOwnership, "which warp");
}

TEST(CheckPlan, JsonHasTheContractKeys) {
  auto plan = check_text(tmemjit_test::seed_layout_b(true)).value();
  auto json = nlohmann::json::parse(plan.to_json(true));
  for (const char* key : {"op", "scope", "warps", "repeats", "instructions_per_warp",
                          "regs_per_thread", "alloc_columns", "steps", "addresses"})
    EXPECT_TRUE(json.contains(key)) << key;
  EXPECT_FALSE(json.contains("ok"));  // the CLI's envelope, added by tmemjit plan --json
  EXPECT_EQ(json["alloc_columns"], 64);
  EXPECT_EQ(json["addresses"][3]["taddr"][0], 96u << 16);
}

TEST(CheckPlan, RepeatsGetTheirOwnColumns) {
  // Two repeats of 32x32b.x4 side by side: columns 0 and 4, slots 0-3 and 4-7.
  SpecText text{"tcgen05.ld.sync.aligned.32x32b.x4.b32", "warpgroup",
                "tensor((4,2,32,4), S[(4,2,32,4):(32@TLane,4@TCol,1@TLane,1@TCol)], b32)",
                "tensor((4,2,32,4), S[(4,2,32,4):(32@tid_in_wg,4,1@tid_in_wg,1)], b32)"};
  auto plan = check_text(text);
  ASSERT_TRUE(plan.ok()) << plan.error().full_text();
  ASSERT_EQ(plan->instructions_per_warp(), 2);
  EXPECT_EQ(plan->repeats[1].column, 4);
  EXPECT_EQ(plan->repeats[1].slots[0], 4);
  EXPECT_EQ(plan->repeats[1].index, (std::vector<std::int64_t>{1}));
}

TEST(TransferSpec, TextAndJsonRoundTrip) {
  auto spec = tmemjit_test::seed_split(true).make();
  auto again = tmem::TransferSpec::parse(spec.to_string());
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_EQ(*again, spec);
  EXPECT_EQ(again->hash(), spec.hash());
  auto from_json = tmem::TransferSpec::from_json(spec.to_json());
  ASSERT_TRUE(from_json.ok()) << from_json.error().message();
  EXPECT_EQ(*from_json, spec);
  EXPECT_FALSE(tmem::TransferSpec::from_json("{\"op\": 3}").ok());
  EXPECT_FALSE(tmem::TransferSpec::from_json("not json").ok());
  EXPECT_FALSE(tmem::TransferSpec::parse("op: x\nbogus: 1").ok());
}

// One spec-file format (issue 29 item 5): the device-function options ride in the spec's JSON;
// from_json checks and drops them, parse_spec_file returns them over the caller's defaults.
TEST(TransferSpec, SpecFileCarriesTheDeviceFunctionOptions) {
  const tmem::TransferSpec spec = tmemjit_test::seed_layout_b(true).make();
  nlohmann::json json = nlohmann::json::parse(spec.to_json());
  json["name"] = "acc_load";
  json["wait"] = false;
  json["warp_argument"] = true;
  json["column_argument"] = true;
  json["cta_group"] = 2;
  auto plain = tmem::TransferSpec::from_json(json.dump());
  ASSERT_TRUE(plain.ok()) << plain.error().message();
  EXPECT_EQ(*plain, spec);
  tmem::DeviceFunctionOptions defaults;
  defaults.language = tmem::Language::kPtx;
  auto file = tmem::parse_spec_file(json.dump(), defaults);
  ASSERT_TRUE(file.ok()) << file.error().message();
  EXPECT_EQ(file->spec, spec);
  EXPECT_EQ(file->options.name, "acc_load");
  EXPECT_EQ(file->options.language, tmem::Language::kPtx);  // not a file key: the default's
  EXPECT_FALSE(file->options.wait);
  EXPECT_TRUE(file->options.warp_argument);
  EXPECT_TRUE(file->options.column_argument);
  EXPECT_EQ(file->options.cta_group, 2);
  EXPECT_EQ(file->option_keys, (std::vector<std::string>{"name", "wait", "warp_argument",
                                                         "column_argument", "cta_group"}));
  // Without option keys the options are the defaults.
  auto bare = tmem::parse_spec_file(spec.to_json(), defaults);
  ASSERT_TRUE(bare.ok()) << bare.error().message();
  EXPECT_EQ(bare->options, defaults);
  EXPECT_TRUE(bare->option_keys.empty());
}

TEST(TransferSpec, SpecFileRefusesABadOptionNamingTheKey) {
  const std::string base = tmemjit_test::seed_layout_b(true).make().to_json();
  struct Case {
    const char* key;
    const char* value;
    const char* message;
  };
  for (const Case& c :
       {Case{"wait", "1", "'wait' must be true or false, got 1"},
        Case{"column_argument", "\"yes\"", "'column_argument' must be true or false"},
        Case{"cta_group", "3", "'cta_group' must be 1 or 2, got 3"},
        Case{"name", "7", "'name' must be a string, got 7"},
        Case{"bogus", "1",
             "unknown key 'bogus' (keys: op, scope, tmem, regs, "
             "tmem2, imm; device function: name, wait"}}) {
    nlohmann::json json = nlohmann::json::parse(base);
    json[c.key] = nlohmann::json::parse(c.value);
    for (bool options : {false, true}) {
      auto error = options ? tmem::parse_spec_file(json.dump()).error()
                           : tmem::TransferSpec::from_json(json.dump()).error();
      EXPECT_EQ(error.code(), tmem::ErrorCode::kParse) << c.key;
      EXPECT_NE(error.message().find(c.message), std::string::npos) << error.message();
    }
  }
}

TEST(TransferSpec, SplitNeedsItsSecondRegionAndImmediate) {
  auto text = tmemjit_test::seed_split(true);
  text.imm.reset();
  std::optional<std::string_view> t2 = *text.tmem2;
  auto spec =
      tmem::TransferSpec::from_fields(text.op, text.scope, text.tmem, text.regs, t2, std::nullopt);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().rule(), tmem::Rule::kSplitOffsetOnlyFor16x32bx2) << spec.error().message();
  auto plain = tmemjit_test::seed_layout_b(true);
  spec = tmem::TransferSpec::from_fields(plain.op, plain.scope, plain.tmem, plain.regs,
                                         std::nullopt, "8");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().rule(), tmem::Rule::kSplitOffsetOnlyFor16x32bx2) << spec.error().message();
  EXPECT_FALSE(tmem::Scope::parse("warp:32").ok());
  EXPECT_FALSE(tmem::Scope::parse("cta:0").ok());
  EXPECT_FALSE(tmem::Scope::parse("block").ok());
}

}  // namespace

namespace {

// A register view whose warps are numbered in the other digit order: the checker names the
// re-ordered view that fits, and that view really passes.
TEST(CheckMutation, SwappedGroupOrderSuggestsTheFittingView) {
  SpecText text = tmemjit_test::seed_layout_b(true);
  text.regs =
      "tensor((64,128), S[(64, 2, 64) : (1 @ tid_in_wg, 64 @ tid_in_wg, 1)], f32)"
      ".rearrange(\"(wh r) (wl c) -> (wh wl) r c\", wh=2, r=32, wl=2)";
  auto plan = check_text(text);
  ASSERT_FALSE(plan.ok());
  const std::string& message = plan.error().message();
  const std::string marker = "the spec passes with the register view ";
  const size_t at = message.find(marker);
  ASSERT_NE(at, std::string::npos) << message;
  std::string suggested = message.substr(at + marker.size());
  ASSERT_TRUE(suggested.ends_with(")"));
  suggested.pop_back();
  text.regs = suggested;
  auto fixed = check_text(text);
  EXPECT_TRUE(fixed.ok()) << suggested << "\n" << (fixed.ok() ? "" : fixed.error().full_text());
}

}  // namespace
