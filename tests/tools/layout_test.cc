// tmemjit layout: the documented examples through the built command, its JSON, its table and its
// exit codes (docs/design.md §CLI).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/cli_util.h"

namespace {

using tmemjit_test::run_cli;

const char* kSeedTmem =
    "tmem_datapath_layout(\"B\",64,128).rearrange(\"(wh r) (wl c) -> (wl wh) r c\", wh=2, r=32, "
    "wl=2)";
const char* kSeedRegs =
    "tensor((64,128), S[(64, 2, 64) : (1 @ tid_in_wg, 64 @ tid_in_wg, 1)], f32)"
    ".rearrange(\"(wh r) (wl c) -> (wl wh) r c\", wh=2, r=32, wl=2)";

nlohmann::json layout_json(const std::string& view, const std::string& at) {
  auto result = run_cli("layout", view, "--at", at, "--json");
  EXPECT_EQ(result.exit_code, 0) << view << "\n" << result.err;
  return nlohmann::json::parse(result.out);
}

TEST(CliLayout, SeedRearrangeText) {
  auto result = run_cli("layout", kSeedTmem, "--at", "3,5,7");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(
      result.out,
      "shape: (4,32,64)\n"
      "dtype: f32\n"
      "layout: tmem_datapath_layout(\"B\", 64, 128).rearrange(\"(wh r) (wl c) -> (wl wh) r c\", "
      "wh=2, r=32, wl=2)\n"
      "at (3,5,7): {TLane: 101, TCol: 7}\n");
  EXPECT_EQ(result.err, "");
}

TEST(CliLayout, SeedRearrangeJson) {
  for (int g = 0; g < 4; ++g) {
    for (int r : {0, 31}) {
      for (int c : {0, 63}) {
        const std::string at =
            std::to_string(g) + "," + std::to_string(r) + "," + std::to_string(c);
        auto tmem = layout_json(kSeedTmem, at);
        EXPECT_EQ(tmem["ok"], true);
        EXPECT_EQ(tmem["shape"], nlohmann::json({4, 32, 64}));
        EXPECT_EQ(tmem["dtype"], "f32");
        ASSERT_EQ(tmem["at"].size(), 1u);
        EXPECT_EQ(tmem["at"][0], nlohmann::json({{"TLane", 32 * g + r}, {"TCol", c}}));
        auto regs = layout_json(kSeedRegs, at);
        EXPECT_EQ(regs["at"][0], nlohmann::json({{"tid_in_wg", 32 * g + r}, {"m", c}}));
      }
    }
  }
}

TEST(CliLayout, LayoutBMapping) {
  for (int r : {0, 9, 63}) {
    for (int c : {0, 63, 64, 100, 127}) {
      auto out = layout_json("tmem_datapath_layout(\"B\", 64, 128)",
                             std::to_string(r) + "," + std::to_string(c));
      EXPECT_EQ(out["at"][0], nlohmann::json({{"TLane", r + 64 * (c / 64)}, {"TCol", c % 64}}));
    }
  }
}

TEST(CliLayout, ReplicaExample) {
  auto out = layout_json(
      "tensor((8,16), S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1)] + R[2:4@warpid] + 5@warpid)",
      "1,3");
  ASSERT_EQ(out["at"].size(), 2u);
  EXPECT_EQ(out["at"][0], nlohmann::json({{"laneid", 5}, {"warpid", 5}, {"m", 1}}));
  EXPECT_EQ(out["at"][1], nlohmann::json({{"laneid", 5}, {"warpid", 9}, {"m", 1}}));
  EXPECT_EQ(out["replicas"], 2);
}

TEST(CliLayout, EveryDatapathLetter) {
  struct Case {
    const char* view;
    const char* at;
    int lane;
    int col;
  };
  const Case cases[] = {
      {"tmem_datapath_layout(\"A\", 128, 64)", "100,5", 100, 5},
      {"tmem_datapath_layout(\"D\", 128, 64)", "127,63", 127, 63},
      {"tmem_datapath_layout(\"B\", 64, 64)", "10,40", 74, 8},
      {"tmem_datapath_layout(\"E\", 64, 64)", "10,20", 10, 20},
      {"tmem_datapath_layout(\"F\", 64, 32)", "37,3", 69, 3},
      {"tmem_datapath_layout(\"F\", 64, 32, sub_slab=1)", "37,3", 85, 3},
      {"tmem_datapath_layout(\"C\", 64, 32, sub_slab=1)", "15,0", 31, 0},
      {"tmem_datapath_layout(\"G\", 32, 64)", "7,50", 103, 2},
  };
  for (const Case& test : cases) {
    auto out = layout_json(test.view, test.at);
    EXPECT_EQ(out["at"][0], nlohmann::json({{"TLane", test.lane}, {"TCol", test.col}}))
        << test.view;
  }
}

TEST(CliLayout, TableOfEveryElement) {
  auto result = run_cli("layout", "tensor((2,2), S[(2,2):(1@TLane,1@TCol)] + R[2:32@TLane], bf16)");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out,
            "shape: (2,2)\n"
            "dtype: bf16\n"
            "layout: tensor((2,2), S[(2,2):(1@TLane,1@TCol)] + R[2:32@TLane], bf16)\n"
            "units: TCol and m count 16-bit halves (unit u is half u%2 of 32-bit word u/2)\n"
            "coordinate\tTLane\tTCol\n"
            "(0,0)\t0\t0\n(0,0)\t32\t0\n"
            "(0,1)\t0\t1\n(0,1)\t32\t1\n"
            "(1,0)\t1\t0\n(1,0)\t33\t0\n"
            "(1,1)\t1\t1\n(1,1)\t33\t1\n");
  auto json = run_cli("layout", "wg_local_layout(2, rows=2)", "--json");
  ASSERT_EQ(json.exit_code, 0);
  auto out = nlohmann::json::parse(json.out);
  ASSERT_EQ(out["table"].size(), 4u);
  EXPECT_EQ(out["table"][3]["coord"], nlohmann::json({1, 1}));
  EXPECT_EQ(out["table"][3]["at"][0], nlohmann::json({{"tid_in_wg", 1}, {"m", 1}}));
  auto large = run_cli("layout", "wg_local_layout(64)");
  ASSERT_EQ(large.exit_code, 0);
  EXPECT_NE(large.out.find("(8192 elements, more than 4096: pass --at i,j,... to see one)"),
            std::string::npos);
}

// Every malformed input: exit 1 and one line on stderr that says what and where.
TEST(CliLayout, MalformedInputExitsOne) {
  const std::pair<const char*, const char*> cases[] = {
      {"tensor((64,128), S[(64,2,64):(1@TLane 64@TLane,1@TCol)])",
       "error: at column 39: expected ',' after stride 1\n"},
      {"tensor((64,128), S[(64,2,64):(1 64@TLane,1@TCol)])",
       "error: at column 33: expected '@' or ',' after stride 1\n"},
      {"tmem_datapath_layout(\"B\", 64, 127)",
       "error: at column 1: tmem_datapath_layout(\"B\") needs even cols, not 127\n"},
      {"tmem_datapath_layout(\"B\", 64, 128).rearrange('(wh r) c -> r c wh')",
       "error: at column 36: rearrange(\"(wh r) c -> r c wh\") cannot infer both 'wh' and 'r' in "
       "left "
       "group 0; give one as a keyword\n"},
      {"tmem_datapath_layout(\"B\", 64, 128)[64]",
       "error: at column 35: index 64 is out of range for dim 0 of extent 64\n"},
      {"tensor((64,), S[64:1@lane])",
       "error: at column 22: unknown axis 'lane' (allowed: TLane, TCol, m, tx, warpid, laneid, "
       "wgid, "
       "tid_in_wg, wid_in_wg)\n"},
  };
  for (const auto& [view, message] : cases) {
    auto result = run_cli("layout", view);
    EXPECT_EQ(result.exit_code, 1) << view;
    EXPECT_EQ(result.err, message) << view;
    EXPECT_EQ(result.out, "") << view;
  }
  auto json = run_cli("layout", "wg_local_layout(64).view(3, 3)", "--json");
  EXPECT_EQ(json.exit_code, 1);
  auto out = nlohmann::json::parse(json.out);
  EXPECT_EQ(out["ok"], false);
  EXPECT_EQ(out["error"]["code"], "layout");
  EXPECT_EQ(out["error"]["message"],
            "at column 21: view(3, 3) has 9 elements but the view (128,64) has 8192");
}

TEST(CliLayout, BadCoordinates) {
  auto malformed = run_cli("layout", "wg_local_layout(64)", "--at", "1,x");
  EXPECT_EQ(malformed.exit_code, 1);
  EXPECT_EQ(malformed.err, "error: --at '1,x': expected an integer at character 3\n");
  auto separator = run_cli("layout", "wg_local_layout(64)", "--at", "1;2");
  EXPECT_EQ(separator.exit_code, 1);
  EXPECT_EQ(separator.err, "error: --at '1;2': expected ',' at character 2\n");
  auto outside = run_cli("layout", "wg_local_layout(64)", "--at", "(1,64)");
  EXPECT_EQ(outside.exit_code, 1);
  EXPECT_EQ(outside.err, "error: coordinate (1, 64) is outside view shape (128,64) in dim 1\n");
  auto rank = run_cli("layout", "wg_local_layout(64)", "--at", "1");
  EXPECT_EQ(rank.exit_code, 1);
  EXPECT_EQ(rank.err, "error: coordinate (1) has 1 entries but the view has 2 dims (128,64)\n");
}

TEST(CliLayout, Usage) {
  EXPECT_EQ(run_cli("layout").exit_code, 2);
  EXPECT_EQ(run_cli("layout", "wg_local_layout(64)", "wg_local_layout(32)").exit_code, 2);
  EXPECT_EQ(run_cli("layout", "wg_local_layout(64)", "--bogus").exit_code, 2);
  EXPECT_EQ(run_cli("layout", "wg_local_layout(64)", "--at").exit_code, 2);
}

}  // namespace
