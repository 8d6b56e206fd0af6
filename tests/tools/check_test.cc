// tmemjit check / plan: the command contract of docs/design.md §CLI for transfer specs.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "common/cli_util.h"
#include "common/spec_fixtures.h"

namespace {

using tmemjit_test::run_cli;

TEST(CliCheck, AcceptsTheSeedExamples) {
  for (const auto& spec : {tmemjit_test::seed_layout_b(true), tmemjit_test::seed_layout_b(false),
                           tmemjit_test::seed_pack(true), tmemjit_test::seed_split(false)}) {
    auto r = spec.tmem2 ? run_cli("check", "--op", spec.op, "--scope", spec.scope, "--tmem",
                                  spec.tmem, "--regs", spec.regs, "--tmem2", *spec.tmem2, "--imm",
                                  *spec.imm, "--json")
                        : run_cli("check", "--op", spec.op, "--scope", spec.scope, "--tmem",
                                  spec.tmem, "--regs", spec.regs, "--json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    for (const char* key : {"ok", "op", "scope", "warps", "repeats", "instructions_per_warp",
                            "regs_per_thread", "alloc_columns"})
      EXPECT_TRUE(j.contains(key)) << key;
    EXPECT_EQ(j["ok"], true);
    EXPECT_EQ(j["warps"], 4);
  }
}

TEST(CliCheck, RejectsAMutationWithExitOne) {
  auto spec = tmemjit_test::seed_layout_b(true);
  auto r = run_cli("check", "--op", spec.op, "--scope", spec.scope, "--tmem",
                   "tensor((4,32,64), S[(4,32,64):(32@TLane,1@TLane,2@TCol)], f32)", "--regs",
                   spec.regs);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("error: placement:", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("tmem operand:"), std::string::npos) << r.err;
}

TEST(CliCheck, SpecFileAndPlan) {
  auto spec = tmemjit_test::seed_split(true).make();
  std::string path = testing::TempDir() + "/seed_split.json";
  std::ofstream(path) << spec.to_json();
  auto r = run_cli("plan", "--spec", path, "--json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["imm"], (16 << 16) + 8);
  EXPECT_EQ(j["steps"][0]["slots"].size(), 4u);
  auto text = run_cli("plan", "--spec", path);
  EXPECT_NE(text.out.find("repeat (): lane offset 0, column 0, slots 0-3"), std::string::npos)
      << text.out;
}

// One spec-file format (issue 29 item 5): check, plan and ptx --spec read a file that carries
// the device function's options; ptx --kernel cuda applies them, specialize refuses a "name"
// that is not the transfer's.
TEST(CliCheck, SpecFileWithDeviceFunctionOptions) {
  nlohmann::json json = nlohmann::json::parse(tmemjit_test::seed_layout_b(true).make().to_json());
  json["name"] = "acc_load";
  json["wait"] = false;
  json["column_argument"] = true;
  json["cta_group"] = 1;
  std::string path = testing::TempDir() + "/with_options.json";
  std::ofstream(path) << json.dump();
  for (const char* command : {"check", "plan"}) {
    auto r = run_cli(command, "--spec", path, "--json");
    EXPECT_EQ(r.exit_code, 0) << command << ": " << r.out << r.err;
  }
  auto cuda = run_cli("ptx", "--kernel", "cuda", "--spec", path);
  ASSERT_EQ(cuda.exit_code, 0) << cuda.err;
  EXPECT_NE(cuda.out.find("constexpr int acc_load_regs"), std::string::npos) << cuda.out;
  EXPECT_NE(cuda.out.find("unsigned int column)"), std::string::npos) << cuda.out;
  json["bogus"] = 1;
  std::ofstream(path) << json.dump();
  auto bad = run_cli("check", "--spec", path, "--json");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.out.find("unknown key 'bogus'"), std::string::npos) << bad.out;
}

TEST(CliCheck, CompileOfAHarnessKernelRefusesTheEmulationTarget) {
  auto spec = tmemjit_test::seed_layout_b(true).make();
  std::string path = testing::TempDir() + "/seed_b.json";
  std::ofstream(path) << spec.to_json();
  auto r = run_cli("compile", "--target", "sm_90", "--spec", path, "--json");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("tmemjit compile builds tcgen05 code, which sm_90 has not"),
            std::string::npos)
      << r.out;
}

TEST(CliCheck, UsageErrors) {
  EXPECT_EQ(run_cli("check", "--op", "tcgen05.ld.sync.aligned.32x32b.x1.b32").exit_code, 2);
  EXPECT_EQ(run_cli("check", "--spec", "/nonexistent/spec.json").exit_code, 2);
  auto r = run_cli("check", "--op", "tcgen05.ld.sync.aligned.32x32b.x1.b32", "--scope", "warpgroup",
                   "--tmem", "tensor((4,32,1), S[(4,32,1):(32@TLane,1@TLane,1@TCol]", "--regs", "x",
                   "--json");
  EXPECT_EQ(r.exit_code, 1);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["error"]["code"], "parse");
}

TEST(CliCheck, ARuleErrorNamesItsRuleInJson) {
  // Lane 32 of warp 0's slab belongs to warp 1: the placement (slab) rule, as data for scripts.
  auto r = run_cli("check", "--op", "tcgen05.ld.sync.aligned.32x32b.x1.b32", "--scope", "warp:0",
                   "--tmem", "tensor((32,1), S[(32,1):(1@TLane,1@TCol)] + 32@TLane, f32)", "--regs",
                   "tensor((32,1), S[(32,1):(1@laneid,1)], f32)", "--json");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["error"]["code"], "rule");
  ASSERT_TRUE(j["error"].contains("rule")) << r.out;
  EXPECT_NE(j["error"]["rule"], "");
  auto parse_error = run_cli("check", "--spec", "/nonexistent/spec.json", "--json");
  EXPECT_FALSE(nlohmann::json::parse(parse_error.out)["error"].contains("rule"));
}

}  // namespace
