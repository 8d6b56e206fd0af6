// Numbers, kinds and options checked rather than taken another way from the command line (issue
// 39, item 6): a spec file against the flags (one rule, N19), warmup of a kernel that would build
// what nothing keeps (N16), -I without its value (N13) and the -default-device spellings (N20).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/cache_test_util.h"
#include "common/cli_util.h"
#include "common/files.h"
#include "common/scoped_env.h"
#include "common/spec_fixtures.h"

namespace {

namespace fs = std::filesystem;
using tmem::testing::read_file;
using tmem::testing::ScopedEnv;
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

// --- N13, N20: options routed as written, or a clear error ---------------------------------------

// -Xnvrtc -I with no value of its own: NVRTC took the library's next option as the directory.
TEST(CliCheckedInputs, AnNvrtcIncludeWithoutItsValueIsAUsageError) {
  for (const std::vector<std::string>& tail : std::vector<std::vector<std::string>>{
           {"-Xnvrtc", "-I"}, {"-Xnvrtc", "-I", "-Xnvrtc", "-DX"}, {"-Xnvrtc", "-include"}}) {
    std::vector<std::string> argv = {"specialize",        kSource,      "--transfer",
                                     "acc_load=" + kLoad, "--transfer", "acc_store=" + kStore,
                                     "--no-cache",        "--json"};
    argv.insert(argv.end(), tail.begin(), tail.end());
    const CliResult r = run_cli_argv(argv);
    EXPECT_EQ(r.exit_code, 2) << tail[1] << ": " << r.out << r.err;
    EXPECT_NE(
        message_of(r).find("the NVRTC option '" + tail[1] + "' in nvrtc_options needs a value"),
        std::string::npos)
        << r.out;
  }
}

// -default-device=yes was "unknown option '-default-device'" for an option specialize takes.
TEST(CliCheckedInputs, DefaultDeviceWithAValueSaysItTakesNone) {
  for (const char* option : {"-default-device=yes", "--default-device=1"}) {
    const CliResult r = run_cli_argv({"specialize", kSource, "--transfer", "acc_load=" + kLoad,
                                      "--transfer", "acc_store=" + kStore, option});
    EXPECT_EQ(r.exit_code, 2) << option << ": " << r.err;
    EXPECT_NE(r.err.find("takes no value, got '" + std::string(option) + "'"), std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("unknown option"), std::string::npos) << r.err;
  }
}

// --- N16: warmup FILE.cu refuses to build what nothing keeps
// ---------------------------------------

TEST(CliCheckedInputs, WarmupRefusesAnotherPolicyAndNoCache) {
  for (const std::vector<std::string>& extra : std::vector<std::vector<std::string>>{
           {"--specialization", "eager"}, {"--specialization=lazy"}, {"--no-cache"}}) {
    std::vector<std::string> argv = {
        "warmup", kSource, "--transfer", "acc_load=" + kLoad, "--transfer", "acc_store=" + kStore,
        "--json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const CliResult r = run_cli_argv(argv);
    EXPECT_EQ(r.exit_code, 2) << extra[0] << ": " << r.out << r.err;
    const std::string message = message_of(r);
    EXPECT_NE(message.find(extra[0] == "--no-cache" ? "with --no-cache nothing would keep it"
                                                    : "warmup builds the generic tier, not "
                                                      "--specialization"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("\"tier\""), std::string::npos) << "nothing was compiled: " << r.out;
  }
}

// These compile (label compile).

// A transfer with no generic form (16x32bx2): the specialized kernel came back with exit 0.
TEST(CliCheckedInputsCompile, WarmupOfAKernelWithoutAGenericTierFails) {
  TempDir dir;
  const fs::path source = dir.path() / "split.cu";
  write_file(source,
             "#include <tmemjit/transfers.cuh>\n"
             "__global__ void k(unsigned int* out) {\n"
             "  unsigned int regs[acc_regs];\n"
             "  acc(0u, regs);\n"
             "  out[threadIdx.x] = regs[0];\n"
             "}\n");
  const fs::path spec = dir.path() / "split.json";
  write_file(spec, tmemjit_test::seed_split(false).make().to_json());
  const CliResult r = run_cli_argv({"warmup", source.string(), "--transfer", "acc=" + spec.string(),
                                    "--cache-dir", (dir.path() / "cache").string(), "--json"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  const std::string message = message_of(r);
  const std::string prefix = "warmup: no generic tier for this kernel: ";
  EXPECT_EQ(message.rfind(prefix, 0), 0u) << r.out << r.err;
  EXPECT_GT(message.size(), prefix.size()) << "the reason is given";
}

// With caching off the generic tier was built and dropped, exit 0.
TEST(CliCheckedInputsCompile, WarmupWithCachingOffFails) {
  ScopedEnv off("TMEMJIT_DISABLE_CACHE", "1");
  const CliResult r =
      run_cli_argv({"warmup", kSource, "--transfer", "acc_load=" + kLoad, "--transfer",
                    "acc_store=" + kStore, "--no-wait", "--column-arg", "--json"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(message_of(r).find("caching is off"), std::string::npos) << r.out;
}

// --default-device was forwarded as written and NVRTC refused it; it reaches NVRTC as
// -default-device, which NVRTC knows.
TEST(CliCheckedInputsCompile, TheLongDefaultDeviceSpellingCompiles) {
  for (const char* option : {"--default-device", "--device-as-default-execution-space"}) {
    const CliResult r = run_cli_argv({"specialize", kSource, "--transfer", "acc_load=" + kLoad,
                                      "--transfer", "acc_store=" + kStore, "--no-wait",
                                      "--column-arg", "--no-cache", "--json", option});
    EXPECT_EQ(r.exit_code, 0) << option << ": " << r.out << r.err;
  }
}

}  // namespace
