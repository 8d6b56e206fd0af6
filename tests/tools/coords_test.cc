// tmemjit coords and tmemjit twin through the built command: the table as text and JSON (equal to
// tmem::coord_table), both halves of a 16-bit view, the twin as a spec file that check --spec
// takes, and the exit codes of what they refuse.
#include "tmem/coords.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/cli_util.h"
#include "common/spec_fixtures.h"

namespace {

using tmemjit_test::run_cli;

std::vector<std::string> spec_args(const tmemjit_test::SpecText& spec) {
  return {"--op", spec.op, "--scope", spec.scope, "--tmem", spec.tmem, "--regs", spec.regs};
}

tmemjit_test::CliResult run_with(std::vector<std::string> head, const tmemjit_test::SpecText& spec,
                                 std::vector<std::string> tail = {}) {
  for (auto& word : spec_args(spec)) head.push_back(word);
  for (auto& word : tail) head.push_back(word);
  return tmemjit_test::run_cli_argv(head);
}

// FA4's S: one 128x32 f32 chunk in one 32x32b.x32 per warp.
tmemjit_test::SpecText s_chunk() {
  const std::string rearrange = ".rearrange(\"(g r) c -> g r c\", g=4)";
  return {"tcgen05.ld.sync.aligned.32x32b.x32.b32", "warpgroup",
          "tensor((128,32), S[(128,32):(1@TLane,1@TCol)], f32)" + rearrange,
          "tensor((128,32), S[(128,32):(1@tid_in_wg,1)], f32)" + rearrange};
}

TEST(CliCoords, TextNamesEveryRegisterOfEveryThread) {
  auto r = run_with({"coords"}, tmemjit_test::seed_layout_b(false));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("tcgen05.ld.sync.aligned.32x32b.x64.b32 at scope warpgroup: 128 threads "
                        "x 64 registers, rank 2\n",
                        0),
            0u)
      << r.out.substr(0, 200);
  // Layout B: thread 64 + i holds row i, columns 64..127.
  EXPECT_NE(r.out.find("\nthread 65: 0=(1,64) 1=(1,65) "), std::string::npos);
  EXPECT_NE(r.out.find(" 63=(63,127)\n"), std::string::npos) << "thread 127's last register";
}

TEST(CliCoords, JsonIsTheTableOfTheLibrary) {
  const auto spec = tmemjit_test::seed_layout_b(true);
  auto r = run_with({"coords"}, spec, {"--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["ok"], true);
  EXPECT_EQ(json["shape"], (std::vector<int>{128, 64, 2}));
  EXPECT_EQ(json["halves"], 1);
  const tmem::CoordTable table = tmem::coord_table(spec.make()).value();
  for (int t = 0; t < table.threads; ++t)
    for (int reg = 0; reg < table.registers; ++reg)
      for (int d = 0; d < table.rank; ++d)
        ASSERT_EQ(json["table"][t][reg][d].get<int>(), table.at(t, reg, 0, d));
}

TEST(CliCoords, SixteenBitViewsHaveBothHalves) {
  // P of FA4: bf16x2 registers, plain .b32.
  const std::string rearrange = ".rearrange(\"(g r) (c h) -> g r c h\", g=4, h=2)";
  const tmemjit_test::SpecText p{"tcgen05.st.sync.aligned.32x32b.x16.b32", "warpgroup",
                                 "tensor((128,32), S[(128,32):(1@TLane,1@TCol)], bf16)" + rearrange,
                                 "tensor((128,32), S[(128,32):(1@tid_in_wg,1)], bf16)" + rearrange};
  auto r = run_with({"coords"}, p, {"--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["shape"], (std::vector<int>{128, 16, 2, 2}));
  EXPECT_EQ(json["table"][5][3][0], (std::vector<int>{5, 6}));
  EXPECT_EQ(json["table"][5][3][1], (std::vector<int>{5, 7}));
  auto text = run_with({"coords"}, p);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("x 2 halves (low/high)"), std::string::npos);
  EXPECT_NE(text.out.find("\nthread 5: 0=(5,0)/(5,1) 1=(5,2)/(5,3) "), std::string::npos);
}

TEST(CliCoords, RefusesWhatCheckRefuses) {
  auto spec = tmemjit_test::seed_layout_b(false);
  spec.op = "tcgen05.ld.sync.aligned.32x32b.x32.b32";
  auto r = run_with({"coords"}, spec);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  auto json = run_with({"coords"}, spec, {"--json"});
  EXPECT_EQ(json.exit_code, 1);
  EXPECT_EQ(nlohmann::json::parse(json.out)["ok"], false);
  EXPECT_EQ(run_cli("coords").exit_code, 2);
}

TEST(CliTwin, PrintsASpecThatCheckTakes) {
  auto r = run_with({"twin"}, s_chunk(), {"--dtype", "bf16"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["op"], "tcgen05.st.sync.aligned.32x32b.x16.b32");
  auto twin = tmem::TransferSpec::from_json(r.out);
  ASSERT_TRUE(twin.ok()) << twin.error().full_text();
  EXPECT_EQ(*twin, tmem::packed_twin(s_chunk().make(), tmem::DType::kBF16).value());
  const std::string path = "/tmp/tmemjit_twin_" + std::to_string(::getpid()) + ".json";
  std::ofstream(path) << r.out;
  auto checked = run_cli("check", "--spec", path, "--json");
  std::remove(path.c_str());
  ASSERT_EQ(checked.exit_code, 0) << checked.err;
  EXPECT_EQ(nlohmann::json::parse(checked.out)["regs_per_thread"], 16);
  auto f16 = run_with({"twin"}, s_chunk(), {"--dtype", "f16", "--json"});
  ASSERT_EQ(f16.exit_code, 0) << f16.err;
  EXPECT_NE(f16.out.find(", f16)"), std::string::npos) << f16.out;
}

// The twin is a transfer like any other: the simulator's round trip passes (its store puts each
// element where its TMEM view says, its load reads it back), for a 32x32b S and a 16x256b one.
TEST(CliTwin, TheTwinPassesTheSimulatorsRoundTrip) {
  auto op = tmem::Opcode::make(tmem::Direction::kLoad, tmem::Shape::k16x256b, 8, false).value();
  for (const auto& s : {s_chunk(), tmemjit_test::identity_spec(op)}) {
    auto twin = run_with({"twin"}, s, {"--dtype", "bf16"});
    ASSERT_EQ(twin.exit_code, 0) << twin.err;
    const std::string path = "/tmp/tmemjit_twin_sim_" + std::to_string(::getpid()) + ".json";
    std::ofstream(path) << twin.out;
    auto run = run_cli("run", "--spec", path, "--device", "sim", "--no-cache");
    std::remove(path.c_str());
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
    EXPECT_NE(run.out.find("PASS: "), std::string::npos) << run.out;
  }
}

TEST(CliTwin, ExitCodes) {
  // No --dtype, a 32-bit one, a store: usage.
  EXPECT_EQ(run_with({"twin"}, s_chunk()).exit_code, 2);
  auto f32 = run_with({"twin"}, s_chunk(), {"--dtype", "f32"});
  EXPECT_EQ(f32.exit_code, 2);
  EXPECT_NE(f32.err.find("allowed: bf16, f16"), std::string::npos) << f32.err;
  EXPECT_EQ(run_with({"twin"}, tmemjit_test::seed_layout_b(true), {"--dtype", "bf16"}).exit_code,
            2);
  // A 16x128b load keeps a thread's register pairs in two rows: no twin, and why.
  auto op = tmem::Opcode::make(tmem::Direction::kLoad, tmem::Shape::k16x128b, 4, false).value();
  auto none = run_with({"twin"}, tmemjit_test::identity_spec(op), {"--dtype", "bf16"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("no 16-bit store holds the load's registers 0 and 1"), std::string::npos)
      << none.err;
}

}  // namespace
