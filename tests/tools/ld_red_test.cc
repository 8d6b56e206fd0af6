// tmemjit with tcgen05.ld.red: describe, image, check, ptx, compile --target sm_103a and
// run --device sim, and the R14 errors (exit 1, the rule in the JSON).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/cli_util.h"
#include "common/spec_fixtures.h"

namespace {

using tmemjit_test::CliResult;
using tmemjit_test::run_cli;
using tmemjit_test::run_cli_argv;

const std::string kOp = "tcgen05.ld.red.sync.aligned.32x32b.x8.max.abs.f32";

// `tmemjit COMMAND <two ld.red instructions per warp> EXTRA...`.
CliResult run_spec(const std::string& command, std::vector<std::string> extra,
                   const std::string& op = kOp) {
  const tmemjit_test::SpecText spec = tmemjit_test::ld_red_accumulator(op);
  std::vector<std::string> argv = {command,  "--op",    spec.op,  "--scope", spec.scope,
                                   "--tmem", spec.tmem, "--regs", spec.regs};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return run_cli_argv(argv);
}

TEST(CliDescribe, LdRedNamesItsReductionTargetsAndVersion) {
  auto r = run_cli("describe", kOp, "--json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["opcode"], kOp);
  EXPECT_EQ(j["reduction"], "max.abs.f32");
  EXPECT_EQ(j["redval"], 1);
  EXPECT_EQ(j["regs"], 8);
  EXPECT_EQ(j["ptx_version"], "8.8");
  EXPECT_EQ(j["targets"], nlohmann::json({"sm_103a", "sm_103f", "sm_110a", "sm_110f"}));
  EXPECT_EQ(j["min_ptx_version"]["sm_110a"], "9.0");
  auto plain = nlohmann::json::parse(
      run_cli("describe", "tcgen05.ld.sync.aligned.32x32b.x8.b32", "--json").out);
  EXPECT_TRUE(plain["reduction"].is_null());
  EXPECT_EQ(plain["redval"], 0);
  auto text = run_cli("describe", kOp);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("redval"), std::string::npos) << text.out;
}

TEST(CliDescribe, LdRedR14ViolationsExitOneWithTheRule) {
  for (const char* bad : {"tcgen05.ld.red.sync.aligned.16x64b.x2.max.f32",
                          "tcgen05.ld.red.sync.aligned.32x32b.x1.max.f32",
                          "tcgen05.ld.red.sync.aligned.32x32b.x2.max.abs.u32"}) {
    auto r = run_cli("describe", bad, "--json");
    EXPECT_EQ(r.exit_code, 1) << bad;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["error"]["rule"], "R14") << bad;
  }
}

TEST(CliImage, LdRedIsThePlainImagePlusRedval) {
  auto r = run_cli("image", kOp, "--json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  auto plain = nlohmann::json::parse(
      run_cli("image", "tcgen05.ld.sync.aligned.32x32b.x8.b32", "--json").out);
  EXPECT_EQ(j["entries"], plain["entries"]);
  EXPECT_EQ(j["redval"]["reduction"], "max.abs.f32");
  EXPECT_EQ(j["redval"]["regs"], 8);
}

TEST(CliCheck, LdRedPlanListsRedvalSlots) {
  auto r = run_spec("check", {"--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["op"], kOp);
  EXPECT_EQ(j["regs_per_thread"], 18);
  EXPECT_EQ(j["instructions_per_warp"], 2);
  EXPECT_EQ(j["reduction"], "max.abs.f32");
  EXPECT_EQ(j["redval_slots"], nlohmann::json({16, 17}));
  auto plan = run_spec("plan", {"--json"});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  auto steps = nlohmann::json::parse(plan.out)["steps"];
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0]["redval_slot"], 16);
  EXPECT_EQ(steps[1]["redval_slot"], 17);
  auto text = run_spec("check", {});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("redval of instruction k in slot 16 + k"), std::string::npos) << text.out;
}

TEST(CliPtx, LdRedForSm103a) {
  auto r = run_spec("ptx", {"--kernel", "load", "--target", "sm_103a"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(".target sm_103a"), std::string::npos);
  EXPECT_NE(r.out.find(kOp + " {"), std::string::npos) << r.out;
  auto cuda = run_spec("ptx", {"--kernel", "cuda", "--target", "sm_103a", "--name", "acc"});
  ASSERT_EQ(cuda.exit_code, 0) << cuda.err;
  EXPECT_NE(cuda.out.find("constexpr int acc_redval = 16;"), std::string::npos) << cuda.out;
}

// The default target (sm_100a) and sm_100f lack ld.red: an R14 error naming the targets with it.
TEST(CliPtx, LdRedOnSm100aNamesTheTargetsThatHaveIt) {
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--kernel", "load", "--json"},
        std::vector<std::string>{"--kernel", "load", "--target", "sm_100f", "--json"},
        std::vector<std::string>{"--kernel", "cuda", "--json"},
        std::vector<std::string>{"--kernel", "func", "--json"}}) {
    auto r = run_spec("ptx", extra);
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["error"]["code"], "target");
    EXPECT_EQ(j["error"]["rule"], "R14");
    EXPECT_NE(j["error"]["message"].get<std::string>().find("sm_103a"), std::string::npos);
  }
}

TEST(CliCompile, LdRedForSm103a) {
  auto r = run_spec("compile", {"--kernel", "load", "--target", "sm_103a", "--backend", "ptxas",
                                "--no-cache", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["target"], "sm_103a");
  EXPECT_GT(j["cubin_bytes"].get<int>(), 0);
  auto wrong = run_spec("compile", {"--kernel", "load", "--target", "sm_100a", "--no-cache"});
  EXPECT_EQ(wrong.exit_code, 1) << wrong.out << wrong.err;
  EXPECT_EQ(wrong.err.rfind("error: ", 0), 0u) << wrong.err;
}

TEST(CliRun, LdRedPassesOnTheSimulatorWithRedvalsCompared) {
  for (const char* op : {"tcgen05.ld.red.sync.aligned.32x32b.x8.max.abs.f32",
                         "tcgen05.ld.red.sync.aligned.32x32b.x8.min.NaN.f32",
                         "tcgen05.ld.red.sync.aligned.32x32b.x8.max.s32"}) {
    auto r = run_spec("run", {"--device", "sim", "--json"}, op);
    ASSERT_EQ(r.exit_code, 0) << op << "\n" << r.out << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["pass"], true);
    for (const auto& check : j["checks"]) {
      if (check["name"] == "raw") continue;
      // 128 x 16 loaded words, plus 128 threads x 2 reduction results where an ld.red runs.
      const bool loads = check["name"] == "roundtrip" || check["name"] == "load";
      EXPECT_EQ(check["elements"], loads ? 128 * 16 + 128 * 2 : 128 * 16) << check["name"];
    }
  }
}

}  // namespace
