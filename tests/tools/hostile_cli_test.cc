// Hostile input to the tmemjit command (issue 30, items 2, 4, 9, 10 and 12): deep JSON, unbounded
// or special input files, bytes that are not UTF-8, long names, NUL bytes, out-of-range integers,
// empty option values and failed output writes. Each case exits with a clear error and its code.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
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

std::string nested(int depth) {
  return std::string(static_cast<size_t>(depth), '[') +
         std::string(static_cast<size_t>(depth), ']');
}

// The --json output as an object; a test fails when it is not valid JSON (invalid UTF-8 made
// nlohmann throw and the command print an internal error instead).
nlohmann::json json_of(const CliResult& result) {
  nlohmann::json out = nlohmann::json::parse(result.out, nullptr, false);
  EXPECT_FALSE(out.is_discarded()) << result.out << result.err;
  return out;
}

std::string message_of(const nlohmann::json& out) {
  return out.is_object() && out.contains("error") ? out["error"].value("message", "") : "";
}

// --- Item 4: JSON nesting --------------------------------------------------------------------

// The 117 KB spec of 58,000 nested arrays under a key: every reader refuses it by name.
TEST(HostileCli, DeeplyNestedJsonIsRefusedByEveryReader) {
  TempDir dir;
  const std::string deep = "{\"op\": " + nested(58000) + "}";
  const fs::path spec = dir.path() / "deep.json";
  write_file(spec, deep);
  const fs::path list = dir.path() / "deep.jsonl";
  write_file(list, deep + "\n");

  const CliResult check = run_cli_argv({"check", "--spec", spec.string(), "--json"});
  EXPECT_EQ(check.exit_code, 1) << check.err;
  EXPECT_NE(message_of(json_of(check)).find("deeper than 64 levels"), std::string::npos)
      << check.out;

  const CliResult specialize = run_cli_argv({"specialize", kExample + "/epilogue.cu", "--transfer",
                                             "acc_load=" + spec.string(), "--json"});
  EXPECT_EQ(specialize.exit_code, 1) << specialize.err;
  EXPECT_NE(message_of(json_of(specialize)).find("deeper than 64 levels"), std::string::npos)
      << specialize.out;

  const CliResult warmup =
      run_cli_argv({"warmup", "--specs", list.string(), "--json", "--no-cache"});
  EXPECT_EQ(warmup.exit_code, 1) << warmup.err;
  const nlohmann::json out = json_of(warmup);
  ASSERT_TRUE(out.contains("errors")) << warmup.out;
  EXPECT_NE(out["errors"][0].value("message", "").find("deeper than 64 levels"), std::string::npos)
      << warmup.out;
}

// --- Item 10: every input read has a bound ----------------------------------------------------

TEST(HostileCli, WarmupRefusesADeviceWithoutReadingIt) {
  const CliResult zero = run_cli_argv({"warmup", "--specs", "/dev/zero", "--json", "--no-cache"});
  EXPECT_EQ(zero.exit_code, 2) << zero.err;
  EXPECT_NE(message_of(json_of(zero)).find("not a regular file or a pipe"), std::string::npos)
      << zero.out;
  TempDir dir;
  const CliResult directory =
      run_cli_argv({"warmup", "--specs", dir.path().string(), "--json", "--no-cache"});
  EXPECT_EQ(directory.exit_code, 2) << directory.err;
}

TEST(HostileCli, WarmupBoundsTheFileAndEachLine) {
  TempDir dir;
  // 65 MiB of zeros without a newline (sparse: nothing is written).
  const fs::path big = dir.path() / "big.jsonl";
  write_file(big, "");
  fs::resize_file(big, (size_t{65} << 20));
  const CliResult large = run_cli_argv({"warmup", "--specs", big.string(), "--json", "--no-cache"});
  EXPECT_EQ(large.exit_code, 1) << large.err;
  EXPECT_NE(message_of(json_of(large)).find("larger than 64 MiB"), std::string::npos) << large.out;

  // A line with a NUL byte is refused, not cut at it.
  const fs::path nul = dir.path() / "nul.jsonl";
  write_file(nul, std::string(read_file(kLoad)).substr(0, 10) + std::string(1, '\0') + "}\n");
  const CliResult with_nul =
      run_cli_argv({"warmup", "--specs", nul.string(), "--json", "--no-cache"});
  EXPECT_EQ(with_nul.exit_code, 1) << with_nul.err;
  const nlohmann::json out = json_of(with_nul);
  ASSERT_TRUE(out.contains("errors")) << with_nul.out;
  EXPECT_NE(out["errors"][0].value("message", "").find("NUL byte"), std::string::npos)
      << with_nul.out;
}

// --- Item 9: reported text is valid UTF-8 -----------------------------------------------------

// A transfer named in Latin-1 ("ñame"): the real error (the name check) reaches --json, with the
// byte written \xF1, instead of an internal "invalid UTF-8 byte" error.
TEST(HostileCli, ALatin1NameGivesTheRealErrorInJson) {
  const CliResult result = run_cli_argv({"specialize", kExample + "/epilogue.cu", "--transfer",
                                         "\xF1"
                                         "ame=" +
                                             kLoad,
                                         "--json"});
  const nlohmann::json out = json_of(result);
  ASSERT_TRUE(out.contains("error")) << result.out;
  EXPECT_NE(out["error"].value("code", ""), "internal") << result.out;
  EXPECT_NE(result.exit_code, 3) << result.out;
  EXPECT_NE(message_of(out).find("\\xF1ame"), std::string::npos) << result.out;
}

// A compiler log quoting Latin-1 bytes (an #error line): the toolchain error and its log reach
// --json.
TEST(HostileCli, ACompilerLogInLatin1ReachesJson) {
  TempDir dir;
  const fs::path source = dir.path() / "latin1.cu";
  write_file(source, read_file(kExample + "/epilogue.cu") + "\n#error caf\xE9 \xFF\n");
  const CliResult result =
      run_cli_argv({"specialize", source.string(), "--transfer", "acc_load=" + kLoad, "--transfer",
                    "acc_store=" + kStore, "--no-wait", "--column-arg", "--no-cache", "--json"});
  const nlohmann::json out = json_of(result);
  ASSERT_TRUE(out.contains("error")) << result.out;
  if (message_of(out).find("not found") != std::string::npos)
    GTEST_SKIP() << "NVRTC is missing: " << message_of(out);
  EXPECT_EQ(out["error"].value("code", ""), "toolchain") << result.out;
  EXPECT_NE(out.dump().find("caf\\\\xE9"), std::string::npos) << result.out;
}

// --- Item 12: the smaller cases ---------------------------------------------------------------

TEST(HostileCli, LongPathsAreQuotedShort) {
  const std::string path = "/nonexistent/" + std::string(5000, 'a') + ".cu";
  const CliResult result = run_cli_argv({"specialize", path, "--transfer", "a=" + kLoad, "--json"});
  EXPECT_EQ(result.exit_code, 2) << result.err;
  const std::string message = message_of(json_of(result));
  EXPECT_LT(message.size(), 400u) << message;
  EXPECT_NE(message.find("(5016 bytes)"), std::string::npos) << message;
}

TEST(HostileCli, ASourceWithANulByteIsRefused) {
  TempDir dir;
  const fs::path source = dir.path() / "nul.cu";
  write_file(source,
             "// a comment\n" + std::string(1, '\0') + read_file(kExample + "/epilogue.cu"));
  const CliResult result =
      run_cli_argv({"specialize", source.string(), "--transfer", "acc_load=" + kLoad, "--json"});
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_NE(message_of(json_of(result)).find("NUL byte at offset 13"), std::string::npos)
      << result.out;
}

// A spec file with a NUL byte after a valid spec: the JSON parser stopped at the NUL and the
// spec passed, whatever followed.
TEST(HostileCli, ASpecWithANulByteIsRefused) {
  TempDir dir;
  std::string spec = read_file(kLoad);
  spec.insert(spec.rfind('}') + 1, std::string(1, '\0') + " garbage {{{");
  const fs::path path = dir.path() / "nul.json";
  write_file(path, spec);
  const CliResult result = run_cli_argv({"check", "--spec", path.string(), "--json"});
  EXPECT_EQ(result.exit_code, 1) << result.out;
  EXPECT_NE(message_of(json_of(result)).find("NUL byte at offset"), std::string::npos)
      << result.out;
}

TEST(HostileCli, CtaGroupOutOfRangeIsRefusedNamingTheKey) {
  TempDir dir;
  for (const std::string value : {"4294967298", "-4294967295", "3", "0", "1.0", "\"2\""}) {
    std::string spec = read_file(kLoad);
    spec.insert(spec.rfind('}'), ", \"cta_group\": " + value);
    const fs::path path = dir.path() / "spec.json";
    write_file(path, spec);
    const CliResult result = run_cli_argv({"specialize", kExample + "/epilogue.cu", "--transfer",
                                           "acc_load=" + path.string(), "--json"});
    EXPECT_EQ(result.exit_code, 1) << value << ": " << result.out;
    EXPECT_NE(message_of(json_of(result)).find("'cta_group' must be 1 or 2, got " + value),
              std::string::npos)
        << result.out;
  }
}

TEST(HostileCli, EmptyIncludeAndDefineValuesDoNotSwallowTheNextOption) {
  for (const char* option : {"-D", "-I"}) {
    for (const std::string value : {"", "--json", "-DX"}) {
      const CliResult result = run_cli_argv({"specialize", kExample + "/epilogue.cu", option, value,
                                             "--transfer", "acc_load=" + kLoad});
      EXPECT_EQ(result.exit_code, 2) << option << " '" << value << "': " << result.err;
      EXPECT_NE(result.err.find("option '" + std::string(option) + "' needs a value"),
                std::string::npos)
          << result.err;
    }
  }
}

// A failed -o write (the file-size limit, as a full disk would) leaves the previous file whole
// and no temporary file, instead of a truncated cubin.
TEST(HostileCli, AFailedOutputWriteLeavesNoTruncatedFile) {
  TempDir dir;
  const fs::path output = dir.path() / "out.cubin";
  write_file(output, "previous");
  const std::string command = "ulimit -f 2; trap '' XFSZ; exec " +
                              tmemjit_test::shell_quote(TMEMJIT_CLI_PATH) + " compile --spec " +
                              tmemjit_test::shell_quote(kLoad) + " --no-cache -o " +
                              tmemjit_test::shell_quote(output.string()) + " >/dev/null 2>" +
                              tmemjit_test::shell_quote((dir.path() / "err").string());
  const int status = std::system(("bash -c " + tmemjit_test::shell_quote(command)).c_str());
  const std::string err = read_file(dir.path() / "err");
  if (err.find("toolchain") != std::string::npos && err.find("cannot write") == std::string::npos)
    GTEST_SKIP() << "no PTX compiler here: " << err;
  ASSERT_TRUE(WIFEXITED(status)) << err;
  EXPECT_EQ(WEXITSTATUS(status), 3) << err;
  EXPECT_NE(err.find("cannot write"), std::string::npos) << err;
  EXPECT_EQ(read_file(output), "previous");
  for (const auto& file : fs::directory_iterator(dir.path()))
    EXPECT_EQ(file.path().filename().string().find(".tmp."), std::string::npos) << file.path();
}

// --- Item 2: no std::regex on untrusted text --------------------------------------------------

// specialize without --entry on a source with a 64 KB line (std::regex overflowed the stack at
// 26.5 KB): the kernel is found by a scanner; a kernel named in a comment is not counted.
TEST(HostileCli, TheDefaultEntryIsFoundInASourceWithAVeryLongLine) {
  TempDir dir;
  for (const bool ptx : {false, true}) {
    const fs::path source = dir.path() / (ptx ? "long.ptx" : "long.cu");
    const std::string line =
        ptx ? "// " + std::string(65536, ' ') + "\n.target sm_100a" + std::string(65536, ' ') + "\n"
            : "#define LONG " + std::string(65536, ' ') + "x\n";
    const std::string body = ptx ? ".version 8.7\n" + line +
                                       "// .entry in_a_comment\n.visible .entry the_kernel()\n{\n"
                                       "ret;\n}\n"
                                 : line + "/* __global__ void in_a_comment() */\n" +
                                       "extern \"C\" __global__ void the_kernel() {}\n";
    write_file(source, body);
    // A bad target: the command stops right after finding the entry, so that the test needs no
    // compiler.
    const CliResult result =
        run_cli_argv({"specialize", source.string(), "--target", "sm_1", "--json"});
    EXPECT_EQ(result.exit_code, 2) << "crashed? " << result.err;
    const std::string message = message_of(json_of(result));
    EXPECT_EQ(message.find("several kernels"), std::string::npos) << message;
    EXPECT_EQ(message.find("no kernel found"), std::string::npos) << message;
    EXPECT_NE(message.find("sm_1"), std::string::npos) << message;
  }
}

}  // namespace
