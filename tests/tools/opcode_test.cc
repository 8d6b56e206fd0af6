// tmemjit describe / image: the command contract of docs/design.md §CLI for opcodes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "common/cli_util.h"

namespace {

using tmemjit_test::run_cli;

TEST(CliDescribe, NamesThe128RegisterLimit) {
  auto r = run_cli("describe", "tcgen05.ld.sync.aligned.16x256b.x64.b32");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("128"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(".x64"), std::string::npos) << r.err;
}

TEST(CliDescribe, JsonHasTheContractKeys) {
  auto r = run_cli("describe", "tcgen05.st.sync.aligned.16x128b.x4.unpack::16b.b32", "--json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["valid"], true);
  EXPECT_EQ(j["dir"], "st");
  EXPECT_EQ(j["shape"], "16x128b");
  EXPECT_EQ(j["num"], 4);
  EXPECT_EQ(j["pack"], true);
  EXPECT_EQ(j["regs"], 8);
  EXPECT_EQ(j["atom_rows"], 16);
  EXPECT_EQ(j["atom_cols"], 16);
  EXPECT_EQ(j["columns"], 32);
  EXPECT_EQ(j["targets"].size(), 6u);
  EXPECT_EQ(j["targets"][0], "sm_100a");
}

TEST(CliDescribe, JsonErrorObject) {
  auto r = run_cli("describe", "tcgen05.ld.sync.aligned.32x32b.x3.b32", "--json");
  EXPECT_EQ(r.exit_code, 1);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["valid"], false);
  EXPECT_NE(j["error"]["message"].get<std::string>().find(".x3"), std::string::npos);
}

TEST(CliDescribe, UsageErrorsExitTwo) {
  EXPECT_EQ(run_cli("describe").exit_code, 2);
  EXPECT_EQ(run_cli("describe", "tcgen05.ld.sync.aligned.32x32b.x1.b32", "--bogus").exit_code, 2);
  EXPECT_EQ(run_cli("no-such-command").exit_code, 2);
  EXPECT_EQ(run_cli().exit_code, 2);
}

TEST(CliHelp, EveryCommandAnswersHelpWithItsOwnSynopsis) {
  for (const char* command : {"describe", "image", "check", "plan", "ptx", "compile", "draw",
                              "layout", "cache", "warmup", "specialize", "run"}) {
    SCOPED_TRACE(command);
    for (const char* flag : {"--help", "-h"}) {
      auto r = run_cli(command, flag);
      EXPECT_EQ(r.exit_code, 0) << r.err;
      EXPECT_EQ(r.out.rfind(std::string("usage: tmemjit ") + command + " ", 0), 0u) << r.out;
      EXPECT_EQ(r.out.find("commands:"), std::string::npos) << "only this command's synopsis";
    }
  }
  // After other words too: the help is what was asked for, not a check of the rest.
  auto r = run_cli("specialize", "kernel.cu", "--transfer", "acc=x.json", "--help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("--keep DIR"), std::string::npos) << r.out;
  EXPECT_NE(run_cli("check", "--help").out.find("SPEC :="), std::string::npos);
  EXPECT_EQ(run_cli("layout", "--help").out.find("SPEC :="), std::string::npos);
}

TEST(CliImage, UnpackListsLanesTimesRegistersTimesHalves) {
  auto r = run_cli("image", "tcgen05.st.sync.aligned.16x64b.x2.unpack::16b.b32", "--json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["opcode"], "tcgen05.st.sync.aligned.16x64b.x2.unpack::16b.b32");
  const auto& entries = j["entries"];
  ASSERT_EQ(entries.size(), 32u * 2u * 2u);
  std::set<std::tuple<int, int, int>> keys;
  std::set<std::pair<int, int>> cells;
  for (const auto& e : entries) {
    ASSERT_TRUE(e.contains("half"));
    EXPECT_FALSE(e.contains("access"));
    keys.insert({e["lane"].get<int>(), e["reg"].get<int>(), e["half"].get<int>()});
    cells.insert({e["row"].get<int>(), e["col"].get<int>()});
  }
  EXPECT_EQ(keys.size(), 128u);
  EXPECT_EQ(cells.size(), 16u * 8u);  // 16 lanes x 8 TMEM columns, each once
}

TEST(CliImage, SplitEntriesCarryTheAccess) {
  auto r = run_cli("image", "tcgen05.ld.sync.aligned.16x32bx2.x2.b32", "--json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["entries"].size(), 64u);
  for (const auto& e : j["entries"]) {
    EXPECT_EQ(e["access"], e["lane"].get<int>() / 16);
    EXPECT_EQ(e["row"], e["lane"].get<int>() % 16);
    EXPECT_EQ(e["col"], e["reg"]);
  }
}

TEST(CliImage, TextPictureShowsEveryCell) {
  auto r = run_cli("image", "tcgen05.ld.sync.aligned.16x64b.x1.b32");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("row\\col"), std::string::npos);
  EXPECT_NE(r.out.find(" 1.0"), std::string::npos);  // lane 1, register 0
  EXPECT_NE(r.out.find("31.0"), std::string::npos);
}

}  // namespace
