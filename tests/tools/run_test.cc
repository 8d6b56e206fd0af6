// tmemjit run: PASS with counts, the device it used, and the exit codes of docs/design.md §CLI.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "common/cli_util.h"
#include "common/spec_fixtures.h"

namespace {

using tmemjit_test::run_cli;

TEST(CliRun, SeedLayoutBPassesOnTheSimulator) {
  auto spec = tmemjit_test::seed_layout_b(true);
  auto r = run_cli("run", "--op", spec.op, "--scope", spec.scope, "--tmem", spec.tmem, "--regs",
                   spec.regs, "--device", "sim", "--seed", "5");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("device: sim (CPU simulator"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("seed: 5"), std::string::npos) << r.out;
  for (const char* check : {"raw       PASS  8192 elements", "roundtrip PASS  8192 elements",
                            "store     PASS  8192 elements", "load      PASS  8192 elements"})
    EXPECT_NE(r.out.find(check), std::string::npos) << check << "\n" << r.out;
  EXPECT_NE(r.out.find("PASS: 4 checks, 32768 elements on sim"), std::string::npos) << r.out;
}

TEST(CliRun, JsonFromASpecFile) {
  auto spec = tmemjit_test::seed_split(false).make();
  const std::string path = testing::TempDir() + "/run_seed_split.json";
  std::ofstream(path) << spec.to_json();
  auto r = run_cli("run", "--spec", path, "--device", "sim", "--json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["pass"], true);
  EXPECT_EQ(j["device"], "sim");
  EXPECT_EQ(j["seed"], 1);
  ASSERT_EQ(j["checks"].size(), 4u);
  EXPECT_EQ(j["checks"][2]["name"], "store");
  EXPECT_EQ(j["checks"][2]["elements"], 512);
}

TEST(CliRun, AutoPicksADeviceAndSaysWhich) {
  auto spec = tmemjit_test::seed_pack(false);
  auto r = run_cli("run", "--op", spec.op, "--scope", spec.scope, "--tmem", spec.tmem, "--regs",
                   spec.regs);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("device: ", 0), 0u) << r.out;
  if (r.out.find("device: sim") == 0) {
    // Without a GPU both others were passed over, each with its reason.
    EXPECT_NE(r.out.find("passed over gpu: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("passed over emu: "), std::string::npos) << r.out;
  }
  EXPECT_NE(r.out.find("\nPASS: 4 checks"), std::string::npos) << r.out;
}

TEST(CliRun, InvalidSpecExitsOne) {
  auto spec = tmemjit_test::seed_layout_b(true);
  auto r = run_cli("run", "--op", "tcgen05.st.sync.aligned.32x32b.x32.b32", "--scope", spec.scope,
                   "--tmem", spec.tmem, "--regs", spec.regs, "--device", "sim");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  auto j = run_cli("run", "--op", "tcgen05.st.sync.aligned.32x32b.x32.b32", "--scope", spec.scope,
                   "--tmem", spec.tmem, "--regs", spec.regs, "--device", "sim", "--json");
  EXPECT_EQ(j.exit_code, 1);
  EXPECT_EQ(nlohmann::json::parse(j.out)["ok"], false);
}

TEST(CliRun, UsageErrorsExitTwo) {
  auto spec = tmemjit_test::seed_layout_b(true);
  auto bad_device = run_cli("run", "--op", spec.op, "--scope", spec.scope, "--tmem", spec.tmem,
                            "--regs", spec.regs, "--device", "tpu");
  EXPECT_EQ(bad_device.exit_code, 2) << bad_device.err;
  EXPECT_NE(bad_device.err.find("unknown device 'tpu'; allowed: auto, gpu, emu, sim"),
            std::string::npos)
      << bad_device.err;
  for (const char* seed : {"-1", "x", "99999999999999999999999"}) {
    auto bad_seed = run_cli("run", "--op", spec.op, "--scope", spec.scope, "--tmem", spec.tmem,
                            "--regs", spec.regs, "--seed", seed);
    EXPECT_EQ(bad_seed.exit_code, 2) << seed << ": " << bad_seed.err;
  }
  EXPECT_EQ(run_cli("run", "--op", spec.op).exit_code, 2);
}

TEST(CliRun, AnUnavailableDeviceIsADriverFailure) {
  // gpu needs an sm_100-class GPU, emu any GPU with a driver. Where one is missing, asking for it
  // is exit 3 with the reason; where it exists the run passes.
  auto spec = tmemjit_test::seed_split(true);
  for (const char* device : {"gpu", "emu"}) {
    auto r = run_cli("run", "--op", spec.op, "--scope", spec.scope, "--tmem", spec.tmem, "--regs",
                     spec.regs, "--tmem2", *spec.tmem2, "--imm", *spec.imm, "--device", device);
    if (r.exit_code == 0) {
      EXPECT_NE(r.out.find(std::string("device: ") + device), std::string::npos) << r.out;
      continue;
    }
    EXPECT_EQ(r.exit_code, 3) << device << ": " << r.out << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  }
}

}  // namespace
