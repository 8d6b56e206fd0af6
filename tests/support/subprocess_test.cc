// run_process: output and exit codes, and the timeout that keeps a hung helper from hanging us.
#include "runtime/support/subprocess.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>

namespace tmem {
namespace {

TEST(Subprocess, ReturnsOutputAndExitCode) {
  auto run = run_process({"sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(run.ok()) << run.error().full_text();
  EXPECT_EQ(run->exit_code, 3);
  EXPECT_EQ(run->output, "out\nerr\n");
}

// A helper starts with no signal blocked even when the calling thread blocks SIGINT and SIGTERM
// (the CLI's signal guard): an inherited mask would leave a ptxas that no signal can stop.
TEST(Subprocess, AHelperStartsWithNoSignalBlocked) {
  sigset_t blocked, saved;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGINT);
  sigaddset(&blocked, SIGTERM);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &blocked, &saved), 0);
  auto run = run_process({"sh", "-c", "grep SigBlk /proc/self/status"});
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  ASSERT_TRUE(run.ok()) << run.error().full_text();
  EXPECT_EQ(run->output, "SigBlk:\t0000000000000000\n");
}

TEST(Subprocess, AProgramThatIsMissingIsAToolchainError) {
  auto run = run_process({"/nonexistent/tmemjit-no-such-program"});
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().code(), ErrorCode::kToolchain);
  EXPECT_NE(run.error().message().find("/nonexistent/tmemjit-no-such-program"), std::string::npos);
}

TEST(Subprocess, AHungProgramIsKilledAtTheTimeout) {
  auto run = run_process({"sh", "-c", "echo started; sleep 60"}, std::chrono::milliseconds(300));
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().code(), ErrorCode::kToolchain);
  EXPECT_NE(run.error().message().find("did not finish within 300 ms"), std::string::npos)
      << run.error().message();
  EXPECT_EQ(run.error().detail("output"), "started\n");
}

TEST(Subprocess, AProgramThatClosesItsOutputAndHangsIsKilledToo) {
  // EOF on the pipe does not mean the program ended: the wait is bounded as well.
  auto run = run_process({"sh", "-c", "exec >&- 2>&-; sleep 60"}, std::chrono::milliseconds(300));
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.error().message().find("did not finish"), std::string::npos);
}

TEST(Subprocess, TheDefaultTimeoutComesFromTheEnvironment) {
  ::setenv("TMEMJIT_SUBPROCESS_TIMEOUT_S", "2.5", 1);
  EXPECT_EQ(default_process_timeout(), std::chrono::milliseconds(2500));
  ::setenv("TMEMJIT_SUBPROCESS_TIMEOUT_S", "soon", 1);  // not a number: the default
  testing::internal::CaptureStderr();
  EXPECT_EQ(default_process_timeout(), std::chrono::seconds(300));
  EXPECT_EQ(default_process_timeout(), std::chrono::seconds(300));
  // One warning per process, not one per helper program.
  EXPECT_EQ(
      testing::internal::GetCapturedStderr(),
      "tmemjit: warning: TMEMJIT_SUBPROCESS_TIMEOUT_S=soon is not a number of seconds above 0 "
      "and below 1000000; the default of 300 is used\n");
  ::unsetenv("TMEMJIT_SUBPROCESS_TIMEOUT_S");
  EXPECT_EQ(default_process_timeout(), std::chrono::seconds(300));
}

}  // namespace
}  // namespace tmem
