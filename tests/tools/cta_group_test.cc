// --cta-group on ptx, compile and run: the CTA pair's lifecycle (cta_group::2,
// docs/tcgen05-rules.md §Lifecycle) from the command line, and exit 2 for any value but 1 or 2.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/cli_util.h"
#include "common/spec_fixtures.h"

namespace {

using tmemjit_test::run_cli;

tmemjit_test::SpecText spec() { return tmemjit_test::seed_layout_b(true); }

TEST(CliPtx, CtaGroup2PrintsThePairLifecycle) {
  const auto s = spec();
  auto r = run_cli("ptx", "--op", s.op, "--scope", s.scope, "--tmem", s.tmem, "--regs", s.regs,
                   "--cta-group", "2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("tcgen05.alloc.cta_group::2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("barrier.cluster.wait.aligned;"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("cta_group::1"), std::string::npos) << r.out;
  auto func = run_cli("ptx", "--op", s.op, "--scope", s.scope, "--tmem", s.tmem, "--regs", s.regs,
                      "--kernel", "func", "--cta-group", "2");
  ASSERT_EQ(func.exit_code, 0) << func.err;
  EXPECT_NE(func.out.find(".func tmemjit_cluster_sync()"), std::string::npos) << func.out;
}

TEST(CliCompile, CtaGroup2CompilesForSm100a) {
  const auto s = spec();
  auto r = run_cli("compile", "--op", s.op, "--scope", s.scope, "--tmem", s.tmem, "--regs", s.regs,
                   "--cta-group", "2", "--backend", "ptxas", "--no-cache", "--json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_TRUE(json.at("ok").get<bool>());
  EXPECT_GT(json.at("cubin_bytes").get<long>(), 0);
}

TEST(CliRun, CtaGroup2PassesOnTheSimulatorWithBothCtasChecked) {
  const auto s = spec();
  auto one = run_cli("run", "--op", s.op, "--scope", s.scope, "--tmem", s.tmem, "--regs", s.regs,
                     "--device", "sim", "--json");
  auto pair = run_cli("run", "--op", s.op, "--scope", s.scope, "--tmem", s.tmem, "--regs", s.regs,
                      "--device", "sim", "--cta-group", "2", "--json");
  ASSERT_EQ(one.exit_code, 0) << one.out << one.err;
  ASSERT_EQ(pair.exit_code, 0) << pair.out << pair.err;
  const auto a = nlohmann::json::parse(one.out), b = nlohmann::json::parse(pair.out);
  EXPECT_TRUE(b.at("pass").get<bool>());
  EXPECT_EQ(a.at("cta_group").get<int>(), 1);
  EXPECT_EQ(b.at("cta_group").get<int>(), 2);
  EXPECT_EQ(b.at("elements").get<long>(), 2 * a.at("elements").get<long>());
}

TEST(CliRun, OtherCtaGroupsAreUsageErrors) {
  const auto s = spec();
  for (const char* value : {"3", "0", "two", ""}) {
    auto r = run_cli("run", "--op", s.op, "--scope", s.scope, "--tmem", s.tmem, "--regs", s.regs,
                     "--device", "sim", "--cta-group", value, "--json");
    EXPECT_EQ(r.exit_code, 2) << value << ": " << r.out << r.err;
    const auto json = nlohmann::json::parse(r.out);
    EXPECT_EQ(json.at("error").at("code").get<std::string>(), "usage") << value;
  }
}

// R27 from the command line: two transfers of one kernel whose lifecycles disagree (one spec
// file's "cta_group" against the other's default) are refused before anything compiles.
TEST(CliSpecialize, TransfersWithDifferentCtaGroupsAreR27) {
  const std::string dir = testing::TempDir();
  const auto s = spec();
  const nlohmann::json fields = {
      {"op", s.op}, {"scope", s.scope}, {"tmem", s.tmem}, {"regs", s.regs}};
  nlohmann::json pair = fields;
  pair["cta_group"] = 2;
  std::ofstream(dir + "/cta_a.json") << fields.dump();
  std::ofstream(dir + "/cta_b.json") << pair.dump();
  std::ofstream(dir + "/cta_kernel.ptx")
      << ".version 8.6\n.target sm_100a\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n";
  auto specialize = [&](std::vector<std::string> flags) {
    std::vector<std::string> argv = {
        "specialize", dir + "/cta_kernel.ptx",    "--transfer", "a=" + dir + "/cta_a.json",
        "--transfer", "b=" + dir + "/cta_b.json", "--no-cache", "--json"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    return tmemjit_test::run_cli_argv(argv);
  };
  // a takes --cta-group 2, b says 2: one lifecycle.
  auto r = specialize({"--cta-group", "2"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // a keeps the default 1, b says 2: two lifecycles in one kernel.
  r = specialize({});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("error").value("rule", ""), "R27") << r.out;
  // --cta-group 1 against b's 2 is the spec-file rule's usage error, before R27 (README).
  r = specialize({"--cta-group", "1"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
}

}  // namespace
