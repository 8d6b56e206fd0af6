// Numbers, kinds and options checked rather than taken another way from the command line (issue
// 39, item 6): a spec file against the flags (one rule, N19).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/cache_test_util.h"
#include "common/cli_util.h"
#include "common/files.h"

namespace {

namespace fs = std::filesystem;
using tmem::testing::read_file;
using tmem::testing::TempDir;
using tmem::testing::write_file;
using tmemjit_test::CliResult;
using tmemjit_test::run_cli_argv;

const std::string kExample = std::string(TMEMJIT_SOURCE_DIR) + "/examples/epilogue";
const std::string kLoad = kExample + "/layouts/d_x32_ld.json";
const std::string kStore = kExample + "/layouts/d_x32_st.json";
const std::string kSource = kExample + "/epilogue.cu";

// The example's load spec with `keys` (", \"wait\": true") added to its object, written in `dir`.
std::string spec_with(const TempDir& dir, const std::string& keys) {
  std::string spec = read_file(kLoad);
  spec.insert(spec.rfind('}'), keys);
  const fs::path path = dir.path() / "spec.json";
  write_file(path, spec);
  return path.string();
}

std::string message_of(const CliResult& result) {
  const nlohmann::json out = nlohmann::json::parse(result.out, nullptr, false);
  return out.is_object() && out.contains("error") ? out["error"].value("message", "") : "";
}

// --- N19: one rule for spec-file options against flags, in every command -----------------------

struct Disagreement {
  std::string keys;  // added to the spec file
  std::vector<std::string> flags;
  std::string says;  // what the message quotes of each side
};

const std::vector<Disagreement> kDisagreements = {
    {", \"name\": \"acc\"",
     {"--name", "other"},
     "says \"name\": \"acc\" but the command line "
     "says --name other"},
    {", \"wait\": true", {"--no-wait"}, "says \"wait\": true but the command line says --no-wait"},
    {", \"warp_argument\": false",
     {"--warp-arg"},
     "says \"warp_argument\": false but the command line says --warp-arg"},
    {", \"column_argument\": false",
     {"--column-arg"},
     "says \"column_argument\": false but the command line says --column-arg"},
    {", \"cta_group\": 1",
     {"--cta-group", "2"},
     "says \"cta_group\": 1 but the command line says --cta-group 2"},
};

// ptx let the file win silently: each disagreement is now a usage error naming both.
TEST(CliSpecFileFlags, PtxRefusesAFlagTheFileContradicts) {
  TempDir dir;
  for (const Disagreement& d : kDisagreements) {
    std::vector<std::string> argv = {"ptx",      "--spec", spec_with(dir, d.keys),
                                     "--kernel", "cuda",   "--json"};
    argv.insert(argv.end(), d.flags.begin(), d.flags.end());
    const CliResult result = run_cli_argv(argv);
    EXPECT_EQ(result.exit_code, 2) << d.keys << ": " << result.out << result.err;
    EXPECT_NE(message_of(result).find(d.says), std::string::npos) << result.out;
  }
}

// Agreement, or a key only one side gives, is no error: the file's key or the flag stands.
TEST(CliSpecFileFlags, AgreementAndOneSidedOptionsStand) {
  TempDir dir;
  const CliResult agreed =
      run_cli_argv({"ptx", "--spec", spec_with(dir, ", \"name\": \"acc\", \"wait\": false"),
                    "--kernel", "cuda", "--name", "acc", "--no-wait"});
  ASSERT_EQ(agreed.exit_code, 0) << agreed.err;
  EXPECT_NE(agreed.out.find("void acc(unsigned int tmem_base"), std::string::npos) << agreed.out;
  const CliResult flag_only = run_cli_argv(
      {"ptx", "--spec", spec_with(dir, ""), "--kernel", "cuda", "--name", "mine", "--no-wait"});
  ASSERT_EQ(flag_only.exit_code, 0) << flag_only.err;
  EXPECT_NE(flag_only.out.find("void mine_wait()"), std::string::npos) << flag_only.out;
  const CliResult file_only =
      run_cli_argv({"ptx", "--spec", spec_with(dir, ", \"name\": \"theirs\""), "--kernel", "cuda"});
  ASSERT_EQ(file_only.exit_code, 0) << file_only.err;
  EXPECT_NE(file_only.out.find("void theirs(unsigned int tmem_base"), std::string::npos);
}

// specialize refused a differing name, and now says so in the same words; the other flags are
// held to the file too. Each is refused before anything compiles.
TEST(CliSpecFileFlags, SpecializeAndCompileAndRunFollowTheSameRule) {
  TempDir dir;
  CliResult r = run_cli_argv({"specialize", kSource, "--transfer",
                              "acc_load=" + spec_with(dir, ", \"name\": \"other\""), "--transfer",
                              "acc_store=" + kStore, "--no-cache", "--json"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(message_of(r).find("says \"name\": \"other\" but the command line says --transfer "
                               "acc_load"),
            std::string::npos)
      << r.out;
  r = run_cli_argv({"specialize", kSource, "--transfer",
                    "acc_load=" + spec_with(dir, ", \"wait\": true"), "--transfer",
                    "acc_store=" + kStore, "--no-wait", "--no-cache", "--json"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(message_of(r).find("says \"wait\": true but the command line says --no-wait"),
            std::string::npos)
      << r.out;
  r = run_cli_argv({"compile", "--spec", spec_with(dir, ", \"cta_group\": 1"), "--cta-group", "2",
                    "--no-cache", "--json"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(message_of(r).find("says \"cta_group\": 1 but the command line says --cta-group 2"),
            std::string::npos)
      << r.out;
  r = run_cli_argv({"run", "--spec", spec_with(dir, ", \"cta_group\": 2"), "--cta-group", "1",
                    "--device", "sim", "--json"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(message_of(r).find("says \"cta_group\": 2 but the command line says --cta-group 1"),
            std::string::npos)
      << r.out;
}

// run read a spec file's cta_group and dropped it; it now counts, as in compile.
TEST(CliSpecFileFlagsRun, RunTakesTheFilesCtaGroup) {
  TempDir dir;
  const CliResult r = run_cli_argv(
      {"run", "--spec", spec_with(dir, ", \"cta_group\": 2"), "--device", "sim", "--json"});
  const nlohmann::json out = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(out.is_object()) << r.out << r.err;
  ASSERT_TRUE(out.contains("cta_group")) << r.out << r.err;
  EXPECT_EQ(out["cta_group"], 2) << r.out;
}

}  // namespace
