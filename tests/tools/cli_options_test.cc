// The command line's repeatable options (issue 42, item 5): the compiler flags (-I, -D, -std=,
// -default-device, -Xnvrtc, -Xptxas, --precompile) and specialize's --transfer, in every spelling
// the commands accept, in the order given, mixed with positional arguments and other options; a
// missing value and an option a command does not take are usage errors naming the option.
//
// CliOptions needs no compiler: emulate refuses a PTX module with an NVRTC option before
// compiling anything, naming the first one as it would reach NVRTC, and specialize reads its
// source file after parsing, so a missing file says the command line was taken. CliOptionsCompile
// reads the order NVRTC got from what --keep writes.
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
using Words = std::vector<std::string>;

const std::string kExample = std::string(TMEMJIT_SOURCE_DIR) + "/examples/epilogue";
const std::string kLoad = kExample + "/layouts/d_x32_ld.json";
const std::string kStore = kExample + "/layouts/d_x32_st.json";
const std::string kSource = kExample + "/epilogue.cu";

Words joined(Words head, const Words& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

std::string shown(const Words& words) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "'" : " '") + word + "'";
  return text;
}

// A PTX module for emulate: its NVRTC options are refused before it is read as PTX.
class CliOptions : public ::testing::Test {
 protected:
  void SetUp() override { write_file(ptx_, ".version 8.7\n.target sm_100a\n"); }
  // emulate with `options` before and after the module: the NVRTC option it names first.
  void expect_first_nvrtc_option(const Words& options, const std::string& first) {
    for (const Words& argv : {joined(joined({"emulate"}, options), {ptx_.string()}),
                              joined({"emulate", ptx_.string()}, options)}) {
      const CliResult r = run_cli_argv(argv);
      EXPECT_EQ(r.exit_code, 2) << shown(argv) << ": " << r.err;
      EXPECT_NE(r.err.find("'" + first + "' is an option of the CUDA front end"), std::string::npos)
          << shown(argv) << ": " << r.err;
    }
  }
  // specialize (and warmup FILE.cu) with `options`: the command line is taken, and the missing
  // source file is the error.
  void expect_taken_by_specialize(const Words& options) {
    const std::string missing = (dir_.path() / "missing.cu").string();
    for (const char* command : {"specialize", "warmup"}) {
      const Words argv =
          joined({command, missing, "--transfer", "acc_load=" + kLoad}, joined(options, {"-o"}));
      const CliResult r = run_cli_argv(joined(argv, {"out.cubin"}));
      EXPECT_EQ(r.exit_code, 2) << shown(argv) << ": " << r.err;
      EXPECT_NE(r.err.find("cannot read source file '" + missing + "'"), std::string::npos)
          << shown(argv) << ": " << r.err;
    }
  }
  // A usage error (exit 2) whose message has each of `says`.
  static void expect_usage(const Words& argv, const Words& says) {
    const CliResult r = run_cli_argv(argv);
    EXPECT_EQ(r.exit_code, 2) << shown(argv) << ": " << r.err << r.out;
    for (const std::string& text : says)
      EXPECT_NE(r.err.find(text), std::string::npos) << shown(argv) << ": " << r.err;
  }

  TempDir dir_;
  fs::path ptx_ = dir_.path() / "module.ptx";
};

// Each spelling, separate and attached, reaches NVRTC as written: -I DIR as -IDIR, -D NAME=V as
// -DNAME=V, --default-device as -default-device, -Xnvrtc's value as it is (an option too).
TEST_F(CliOptions, EachNvrtcSpellingReachesNvrtcAsWritten) {
  const std::vector<std::pair<Words, std::string>> cases = {
      {{"-I", "inc"}, "-Iinc"},
      {{"-Iinc"}, "-Iinc"},
      {{"-I=inc"}, "-I=inc"},
      {{"-D", "NAME=1"}, "-DNAME=1"},
      {{"-DNAME=1"}, "-DNAME=1"},
      {{"-DNAME"}, "-DNAME"},
      {{"-std=c++17"}, "-std=c++17"},
      {{"--std=c++20"}, "--std=c++20"},
      {{"-default-device"}, "-default-device"},
      {{"--default-device"}, "-default-device"},
      {{"--device-as-default-execution-space"}, "--device-as-default-execution-space"},
      {{"-Xnvrtc", "-lineinfo"}, "-lineinfo"},
      {{"-Xnvrtc=-lineinfo"}, "-lineinfo"},
      {{"-Xnvrtc", "--json"}, "--json"},
      {{"-Xnvrtc", "-I"}, "-I"},
      {{"-Xnvrtc", "-default-device"}, "-default-device"},
      {{"-Xnvrtc", "--precompile"}, "--precompile"},
  };
  for (const auto& [options, first] : cases) expect_first_nvrtc_option(options, first);
}

// The NVRTC options keep the order given, whichever spelling each has, between other options.
TEST_F(CliOptions, NvrtcOptionsKeepTheirOrder) {
  expect_first_nvrtc_option({"-D", "A", "-I", "b"}, "-DA");
  expect_first_nvrtc_option({"-I", "b", "-D", "A"}, "-Ib");
  expect_first_nvrtc_option({"-Xnvrtc", "-x1", "-std=c++17"}, "-x1");
  expect_first_nvrtc_option({"-std=c++17", "-Xnvrtc", "-x1"}, "-std=c++17");
  expect_first_nvrtc_option({"--entry", "k", "-Xptxas", "-v", "-DZ", "--keep", "kept", "-Ia"},
                            "-DZ");
  expect_first_nvrtc_option({"-Xptxas=-v", "--default-device", "-Ia"}, "-default-device");
}

// Every spelling is an option of specialize and of warmup FILE.cu, --transfer in both of its.
TEST_F(CliOptions, SpecializeAndWarmupTakeEverySpelling) {
  for (const Words& options : std::vector<Words>{
           {},
           {"-I", "inc", "-Iinc", "-I=inc"},
           {"-D", "NAME=1", "-DNAME=1"},
           {"-std=c++17", "--std=c++20"},
           {"-default-device", "--default-device", "--device-as-default-execution-space"},
           {"-Xnvrtc", "-lineinfo", "-Xnvrtc=-lineinfo", "-Xnvrtc", "--json"},
           {"-Xptxas", "-v", "-Xptxas=-O3", "-Xptxas", "--json"},
           {"--precompile", "a.h", "--precompile=b.h"},
           {"--transfer", "acc_store=" + kStore, "--transfer=acc_store=" + kStore},
           {"--json", "-Ia", "--entry", "k", "-DB", "--no-wait", "-Xnvrtc", "-c"},
       })
    expect_taken_by_specialize(options);
}

// emulate takes --precompile to refuse it (specialize's), in both spellings, and -Xptxas.
TEST_F(CliOptions, EmulatePrecompileIsSpecializes) {
  for (const Words& options : std::vector<Words>{{"--precompile", "a.h"}, {"--precompile=a.h"}})
    expect_usage(joined({"emulate", ptx_.string()}, options),
                 {"--precompile is specialize's (headers parsed once for every layout)"});
}

// A repeatable option without its value: a usage error naming it.
TEST_F(CliOptions, AMissingValueNamesTheOption) {
  const std::string missing = (dir_.path() / "missing.cu").string();
  const Words specialize = {"specialize", missing, "--transfer", "acc_load=" + kLoad};
  for (const Words& head : {specialize, Words{"emulate", ptx_.string()}}) {
    for (const char* option : {"-I", "-D", "-Xnvrtc", "-Xptxas", "--precompile"})
      expect_usage(joined(head, {option}), {"option '" + std::string(option) + "' needs a value"});
    for (const char* option : {"-I", "-D"})
      expect_usage(joined(head, {option, "--json"}),
                   {"option '" + std::string(option) + "' needs a value, got '--json'"});
    expect_usage(joined(head, {"--precompile", "-Ia"}), {"option '--precompile' needs a value"});
    expect_usage(joined(head, {"-I", ""}), {"option '-I' needs a value, got ''"});
  }
  expect_usage({"specialize", missing, "--transfer"}, {"option '--transfer' needs a value"});
  expect_usage({"compile", "--spec", kLoad, "-Xptxas"}, {"option '-Xptxas' needs a value"});
  expect_usage({"compile", "--spec", kLoad, "-Xnvrtc", "--json"},
               {"option '-Xnvrtc' needs a value, got the option '--json'"});
}

// A flag of the compiler flags given a value: it takes none.
TEST_F(CliOptions, ADefaultDeviceValueIsRefused) {
  for (const char* option : {"-default-device=1", "--default-device=yes"})
    expect_usage({"emulate", ptx_.string(), option},
                 {"takes no value, got '" + std::string(option) + "'"});
}

// A repeatable option of another command is an unknown option, named, with what the command takes.
TEST_F(CliOptions, AnOptionTheCommandDoesNotTakeIsAUsageError) {
  const std::vector<std::pair<Words, std::string>> cases = {
      {{"compile", "--spec", kLoad, "-I", "inc"}, "-I"},
      {{"compile", "--spec", kLoad, "-Iinc"}, "-Iinc"},
      {{"compile", "--spec", kLoad, "-DX=1"}, "-DX"},
      {{"compile", "--spec", kLoad, "-std=c++17"}, "-std"},
      {{"compile", "--spec", kLoad, "-default-device"}, "-default-device"},
      {{"compile", "--spec", kLoad, "--precompile", "a.h"}, "--precompile"},
      {{"compile", "--spec", kLoad, "--transfer", "a=" + kLoad}, "--transfer"},
      {{"run", "--spec", kLoad, "-Xnvrtc", "-lineinfo"}, "-Xnvrtc"},
      {{"check", "--spec", kLoad, "-Xptxas=-v"}, "-Xptxas"},
      {{"emulate", "module.ptx", "--transfer", "a=" + kLoad}, "--transfer"},
      {{"warmup", "--specs", "list.jsonl", "-I", "inc"}, "-I"},
  };
  for (const auto& [argv, name] : cases)
    expect_usage(argv, {"unknown option '" + name + "' for " + argv[0] + " (allowed: "});
}

// What the pre-scan let through to odder errors, the parser names: an empty --precompile=, -std
// without '=', a value given to --device-as-default-execution-space, --transfer followed by an
// option.
TEST_F(CliOptions, TheParserNamesWhatThePreScanLetThrough) {
  const std::string missing = (dir_.path() / "missing.cu").string();
  const Words specialize = {"specialize", missing, "--transfer", "acc_load=" + kLoad};
  expect_usage(joined(specialize, {"--precompile="}), {"option '--precompile' needs a value"});
  expect_usage(joined(specialize, {"-std", "c++17"}),
               {"option '-std' takes its value after '=': -std=VALUE"});
  expect_usage(joined(specialize, {"--device-as-default-execution-space=1"}),
               {"option '--device-as-default-execution-space' takes no value, got "
                "'--device-as-default-execution-space=1'"});
  expect_usage(joined(specialize, {"--transfer", "--json"}),
               {"option '--transfer' needs a value, got the option '--json'"});
  expect_usage({"specialize", missing, "--bogus"},
               {"unknown option '--bogus' for specialize (allowed: ", "-I, -D, -std=..., "});
  expect_usage({"warmup", missing, "--bogus"}, {"unknown option '--bogus' for warmup"});
}

// "--" is no end of the options: an unknown option, as before.
TEST_F(CliOptions, DoubleDashIsAnUnknownOption) {
  expect_usage({"emulate", ptx_.string(), "--", "-Ia"}, {"unknown option '--'"});
  expect_usage({"specialize", kSource, "--transfer", "acc_load=" + kLoad, "--"},
               {"unknown option '--'"});
}

// --- with NVRTC ---------------------------------------------------------------------------------

// The options NVRTC got, from the reproducer --keep writes before compiling.
Words kept_nvrtc_options(const fs::path& keep) {
  for (const auto& entry : fs::directory_iterator(keep))
    if (entry.path().string().ends_with(".nvrtc.json")) {
      const nlohmann::json recipe = nlohmann::json::parse(read_file(entry.path()));
      return recipe["options"].get<Words>();
    }
  return {};
}

// Whether `inner` is in `outer` in its order (the library adds its own options around them).
bool in_order(const Words& inner, const Words& outer) {
  size_t at = 0;
  for (const std::string& word : outer)
    if (at < inner.size() && word == inner[at]) ++at;
  return at == inner.size();
}

TEST(CliOptionsCompile, NvrtcGetsTheOptionsInTheOrderGivenAndTransfersKeepTheirs) {
  TempDir dir;
  const fs::path keep = dir.path() / "keep";
  const std::string a = (dir.path() / "a").string(), b = (dir.path() / "b").string();
  fs::create_directories(a);
  fs::create_directories(b);
  const CliResult r = run_cli_argv({"specialize",
                                    kSource,
                                    "-I",
                                    b,
                                    "--transfer",
                                    "acc_store=" + kStore,
                                    "-DTMEMJIT_CLI_A=1",
                                    "--no-wait",
                                    "-Xnvrtc",
                                    "-DTMEMJIT_CLI_B",
                                    "-I" + a,
                                    "--no-cache",
                                    "--json",
                                    "--keep",
                                    keep.string(),
                                    "--transfer=acc_load=" + kLoad,
                                    "-std=c++20",
                                    "--column-arg",
                                    "-D",
                                    "TMEMJIT_CLI_C",
                                    "-default-device"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Words expected = {"-I" + b,     "-DTMEMJIT_CLI_A=1", "-DTMEMJIT_CLI_B", "-I" + a,
                          "-std=c++20", "-DTMEMJIT_CLI_C",   "-default-device"};
  const Words got = kept_nvrtc_options(keep);
  EXPECT_TRUE(in_order(expected, got)) << shown(got);
  const nlohmann::json out = nlohmann::json::parse(r.out);
  ASSERT_EQ(out["transfers"].size(), 2u) << r.out;
  EXPECT_EQ(out["transfers"][0]["name"], "acc_store");
  EXPECT_EQ(out["transfers"][1]["name"], "acc_load");
}

}  // namespace
