// SIGINT and SIGTERM to the tmemjit command (issue 30 item 6): the reproduction, specialize
// of a 15 MB CUDA source (15,000 comment lines of 1 KB), signalled early and while NVRTC compiles
// (when NVRTC's own handlers once made it exit 0 or 4): exit 130 for SIGINT, 143 for SIGTERM, soon
// after the signal.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "common/cache_test_util.h"
#include "common/files.h"

namespace {

namespace fs = std::filesystem;
using tmem::testing::read_file;
using tmem::testing::TempDir;
using Clock = std::chrono::steady_clock;

const std::string kExample = std::string(TMEMJIT_SOURCE_DIR) + "/examples/epilogue";

// True while a thread named `name` runs in process `pid` (the library's "tmemjit-signals" watcher
// runs only while NVRTC compiles).
bool has_thread(pid_t pid, const std::string& name) {
  std::error_code ec;
  for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::string comm = read_file(task.path() / "comm");
    if (!comm.empty() && comm.back() == '\n') comm.pop_back();
    if (comm == name) return true;
  }
  return false;
}

struct Outcome {
  bool exited = false;
  int code = -1;   // the exit code, when exited
  int signal = 0;  // the signal that killed it, otherwise
  double ms_after_signal = 0;
  bool sent = false;
  std::string err;
};

// specialize of `source` in a child with default signal handling; `when` decides when to signal:
// "early" 200 ms after the start, "nvrtc" once NVRTC compiles, "output" once the JSON is out
// (with `extra` asking for it). The child's stdout goes to `dir`/out.
Outcome specialize_and_signal(const fs::path& dir, const fs::path& source, int number,
                              const std::string& when,
                              const std::vector<std::string>& extra = {"--no-cache"}) {
  const std::string err_path = (dir / "err").string();
  const std::string out_path = (dir / "out").string();
  std::vector<std::string> args = {TMEMJIT_CLI_PATH,
                                   "specialize",
                                   source.string(),
                                   "--transfer",
                                   "acc_load=" + kExample + "/layouts/d_x32_ld.json",
                                   "--transfer",
                                   "acc_store=" + kExample + "/layouts/d_x32_st.json",
                                   "--no-wait",
                                   "--column-arg"};
  args.insert(args.end(), extra.begin(), extra.end());
  const pid_t pid = ::fork();
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(err, STDERR_FILENO);
    std::vector<char*> argv;
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  Outcome outcome;
  const auto start = Clock::now();
  Clock::time_point sent_at{};
  int status = 0;
  for (;;) {
    if (::waitpid(pid, &status, WNOHANG) == pid) break;
    if (!outcome.sent) {
      const std::string printed = when == "output" ? read_file(out_path) : "";
      const bool now = when == "early" ? Clock::now() - start > std::chrono::milliseconds(200)
                       : when == "output"
                           ? printed.size() > 2 && printed.substr(printed.size() - 2) == "}\n"
                           : has_thread(pid, "tmemjit-signals");
      if (now || Clock::now() - start > std::chrono::seconds(120)) {
        ::kill(pid, number);
        sent_at = Clock::now();
        outcome.sent = now;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  outcome.ms_after_signal =
      std::chrono::duration<double, std::milli>(Clock::now() - sent_at).count();
  outcome.exited = WIFEXITED(status);
  outcome.code = outcome.exited ? WEXITSTATUS(status) : -1;
  outcome.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  outcome.err = read_file(err_path);
  return outcome;
}

class CliSignals : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    source_dir_ = new TempDir;
    std::ofstream out(source_dir_->path() / "big.cu", std::ios::binary);
    const std::string line = "// " + std::string(1021, 'x') + "\n";
    for (int i = 0; i < 15000; ++i) out << line;
    out << read_file(kExample + "/epilogue.cu");
  }
  static void TearDownTestSuite() {
    delete source_dir_;
    source_dir_ = nullptr;
  }
  static fs::path source() { return source_dir_->path() / "big.cu"; }

  void expect_exit(int number, const std::string& when, int expected) {
    TempDir dir;
    const Outcome outcome = specialize_and_signal(dir.path(), source(), number, when);
    if (!outcome.sent && outcome.exited && outcome.code == 3 &&
        outcome.err.find("NVRTC") != std::string::npos)
      GTEST_SKIP() << "no NVRTC here: " << outcome.err;
    ASSERT_TRUE(outcome.sent) << "NVRTC's compile was never seen; exit " << outcome.code << ": "
                              << outcome.err;
    EXPECT_TRUE(outcome.exited) << "killed by signal " << outcome.signal << ": " << outcome.err;
    EXPECT_EQ(outcome.code, expected) << outcome.err;
    EXPECT_LT(outcome.ms_after_signal, 2000) << "the exit waited for the compile";
    EXPECT_NE(outcome.err.find(number == SIGINT ? "interrupted" : "terminated"), std::string::npos)
        << outcome.err;
  }

  static inline TempDir* source_dir_ = nullptr;
};

// A lazy specialize with no generic tier cached prints its JSON, then builds the generic tier it
// promised before exiting (seconds): SIGTERM during that wait exits 143 with the JSON intact (issue
// 39 N17: it was never flushed).
TEST_F(CliSignals, SigtermWhileFinishingBackgroundWorkKeepsTheOutput) {
  TempDir dir;
  TempDir cache;
  const Outcome outcome = specialize_and_signal(
      dir.path(), kExample + "/epilogue.cu", SIGTERM, "output",
      {"--json", "--specialization", "lazy", "--cache-dir", cache.path().string()});
  ASSERT_TRUE(outcome.sent) << "no JSON seen; exit " << outcome.code << ": " << outcome.err;
  EXPECT_TRUE(outcome.exited) << "killed by signal " << outcome.signal << ": " << outcome.err;
  EXPECT_EQ(outcome.code, 143) << outcome.err;
  const std::string out = read_file(dir.path() / "out");
  EXPECT_NE(out.find("\"tier_reason\""), std::string::npos) << out;
  EXPECT_EQ(out.substr(out.size() - 2), "}\n");
}

TEST_F(CliSignals, SigintEarlyExits130) { expect_exit(SIGINT, "early", 130); }
TEST_F(CliSignals, SigintWhileNvrtcCompilesExits130) { expect_exit(SIGINT, "nvrtc", 130); }
TEST_F(CliSignals, SigtermEarlyExits143) { expect_exit(SIGTERM, "early", 143); }
TEST_F(CliSignals, SigtermWhileNvrtcCompilesExits143) { expect_exit(SIGTERM, "nvrtc", 143); }

}  // namespace
