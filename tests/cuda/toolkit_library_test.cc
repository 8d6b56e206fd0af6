// libnvJitLink and libnvrtc are optional at run time (runtime/cuda/shared_library.h): libtmemjit
// does not link them, a missing nvJitLink makes the nvjitlink and auto backends compile with ptxas
// after one warning, and a missing NVRTC is one clear error from compile_cuda. Each case runs
// toolkit_probe in a fresh process, because the libraries are opened once per process.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/cli_util.h"
#include "runtime/compile/backends.h"
#include "runtime/support/subprocess.h"

namespace tmem {
namespace {

size_t count_of(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++count;
  return count;
}

struct Probe {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs toolkit_probe ARGS with the environment assignments `env` (NAME=VALUE) added.
Probe run_probe(const std::vector<std::string>& env, const std::vector<std::string>& args) {
  std::string command = "env";
  for (const std::string& assignment : env) command += " " + tmemjit_test::shell_quote(assignment);
  command += " " + tmemjit_test::shell_quote(TMEMJIT_TOOLKIT_PROBE_PATH);
  for (const std::string& arg : args) command += " " + tmemjit_test::shell_quote(arg);
  Result<ScratchDir> dir = ScratchDir::create("toolkit_probe");
  EXPECT_TRUE(dir.ok());
  if (!dir) return {};
  command += " >" + tmemjit_test::shell_quote(dir->file("out")) + " 2>" +
             tmemjit_test::shell_quote(dir->file("err"));
  const int status = std::system(command.c_str());
  Probe probe;
  probe.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  probe.out = read_file(dir->file("out")).value();
  probe.err = read_file(dir->file("err")).value();
  return probe;
}

constexpr const char* kMissing = "/nonexistent/libnvJitLink.so.13";

TEST(ToolkitLibraries, LibtmemjitDoesNotNeedNvJitLinkOrNvrtcToStart) {
  Result<ProcessOutput> dynamic = run_process({"readelf", "--dynamic", TMEMJIT_LIBRARY_PATH});
  if (!dynamic || dynamic->exit_code != 0)
    GTEST_SKIP() << "readelf (binutils) could not read " << TMEMJIT_LIBRARY_PATH;
  ASSERT_NE(dynamic->output.find("(NEEDED)"), std::string::npos) << dynamic->output;
  EXPECT_EQ(dynamic->output.find("libnvJitLink"), std::string::npos) << dynamic->output;
  EXPECT_EQ(dynamic->output.find("libnvrtc"), std::string::npos) << dynamic->output;
  EXPECT_EQ(dynamic->output.find("libcuda"), std::string::npos) << dynamic->output;
}

TEST(ToolkitLibraries, PresentNvJitLinkIsUsedSilently) {
  const Probe probe = run_probe({}, {"ptx", "nvjitlink"});
  ASSERT_EQ(probe.exit_code, 0) << probe.out << probe.err;
  EXPECT_EQ(count_of(probe.err, "tmemjit: warning: "), 0u) << probe.err;
  EXPECT_EQ(count_of(probe.out, "backend=nvjitlink cubin="), 2u) << probe.out;
  EXPECT_NE(probe.out.find("nvjitlink version: 13."), std::string::npos) << probe.out;
}

// Issue 9: "missing nvJitLink (falls back to ptxas with a warning)".
TEST(ToolkitLibraries, MissingNvJitLinkCompilesWithPtxasAfterOneWarning) {
  const Probe probe =
      run_probe({std::string("TMEMJIT_NVJITLINK_LIBRARY=") + kMissing}, {"ptx", "nvjitlink"});
  ASSERT_EQ(probe.exit_code, 0) << probe.out << probe.err;
  EXPECT_NE(probe.out.find("resolved: ptxas"), std::string::npos) << probe.out;
  EXPECT_EQ(count_of(probe.out, "backend=ptxas cubin="), 2u) << probe.out;
  EXPECT_NE(probe.out.find("nvjitlink version: unavailable"), std::string::npos) << probe.out;
  EXPECT_EQ(count_of(probe.err, "tmemjit: warning: "), 1u) << probe.err;
  EXPECT_NE(probe.err.find(std::string("nvJitLink could not be loaded (") + kMissing),
            std::string::npos)
      << probe.err;
  EXPECT_NE(probe.err.find("compiling with ptxas"), std::string::npos) << probe.err;
}

TEST(ToolkitLibraries, AutoNeedsNvJitLinkOnlyWithoutNvPtxCompiler) {
  const Probe probe =
      run_probe({std::string("TMEMJIT_NVJITLINK_LIBRARY=") + kMissing}, {"ptx", "auto"});
  ASSERT_EQ(probe.exit_code, 0) << probe.out << probe.err;
  if (nvptxcompiler_built_in()) {
    EXPECT_EQ(count_of(probe.out, "backend=nvptxcompiler cubin="), 2u) << probe.out;
    EXPECT_EQ(count_of(probe.err, "tmemjit: warning: "), 0u)
        << "the default backend must not touch nvJitLink: " << probe.err;
  } else {
    EXPECT_EQ(count_of(probe.out, "backend=ptxas cubin="), 2u) << probe.out;
    EXPECT_EQ(count_of(probe.err, "tmemjit: warning: "), 1u) << probe.err;
  }
}

// A file that loads but is not nvJitLink (or is older than the headers): refused by its versioned
// symbols, never called through a wrong signature.
TEST(ToolkitLibraries, ALibraryWithoutTheVersionedSymbolsIsNotUsed) {
  const Probe probe = run_probe({"TMEMJIT_NVJITLINK_LIBRARY=libc.so.6"}, {"ptx", "nvjitlink"});
  ASSERT_EQ(probe.exit_code, 0) << probe.out << probe.err;
  EXPECT_EQ(count_of(probe.out, "backend=ptxas cubin="), 2u) << probe.out;
  EXPECT_NE(probe.err.find("libc.so.6 has no __nvJitLinkCreate_"), std::string::npos) << probe.err;
  EXPECT_EQ(count_of(probe.err, "tmemjit: warning: "), 1u) << probe.err;
}

TEST(ToolkitLibraries, NoNvJitLinkAndNoPtxasIsOneClearError) {
  const Probe probe = run_probe(
      {std::string("TMEMJIT_NVJITLINK_LIBRARY=") + kMissing, "TMEMJIT_PTXAS=/nonexistent/ptxas"},
      {"ptx", "nvjitlink"});
  ASSERT_EQ(probe.exit_code, 0) << probe.out << probe.err;
  EXPECT_EQ(count_of(probe.out, "error toolchain: "), 2u) << probe.out;
  EXPECT_NE(probe.out.find("/nonexistent/ptxas"), std::string::npos) << probe.out;
  EXPECT_EQ(count_of(probe.err, "tmemjit: warning: "), 1u) << probe.err;
}

TEST(ToolkitLibraries, MissingNvrtcFailsCompileCudaClearlyAndNothingElse) {
  const Probe probe = run_probe({"TMEMJIT_NVRTC_LIBRARY=/nonexistent/libnvrtc.so.13"}, {"cuda"});
  ASSERT_EQ(probe.exit_code, 0) << probe.out << probe.err;
  EXPECT_NE(probe.out.find("nvrtc: error toolchain: nvrtc failed: NVRTC could not be loaded "
                           "(/nonexistent/libnvrtc.so.13"),
            std::string::npos)
      << probe.out;
  EXPECT_NE(probe.out.find("ptx: backend="), std::string::npos) << probe.out;
  EXPECT_NE(probe.out.find("nvrtc version: unavailable"), std::string::npos) << probe.out;
}

TEST(ToolkitLibraries, PresentNvrtcCompiles) {
  const Probe probe = run_probe({}, {"cuda"});
  ASSERT_EQ(probe.exit_code, 0) << probe.out << probe.err;
  EXPECT_NE(probe.out.find("nvrtc: backend=nvrtc cubin="), std::string::npos) << probe.out;
  EXPECT_NE(probe.out.find("nvrtc version: 13."), std::string::npos) << probe.out;
}

}  // namespace
}  // namespace tmem
