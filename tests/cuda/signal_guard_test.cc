// NVRTC's signal handlers kept out of the way (runtime/cuda/signal_guard.h, issue 30 item 6),
// against a stand-in for nvrtcCompileProgram that installs handlers as NVRTC's does.
#include "runtime/cuda/signal_guard.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace tmem::nvrtc {
namespace {

std::atomic<int> g_program_hits{0};
std::atomic<int> g_foreign_hits{0};
std::atomic<bool> g_in_call{false};
std::atomic<bool> g_hit_during_call{false};

void program_handler(int) {
  g_program_hits.fetch_add(1);
  if (g_in_call.load()) g_hit_during_call.store(true);
}
void foreign_handler(int) { g_foreign_hits.fetch_add(1); }

// As nvrtcCompileProgram does: its own SIGINT and SIGTERM handlers for the call (through signal()),
// `work_ms` of work, then what it found put back.
nvrtcResult fake_compile(nvrtcProgram, int work_ms, const char* const*) {
  g_in_call.store(true);
  const auto old_int = ::signal(SIGINT, foreign_handler);
  const auto old_term = ::signal(SIGTERM, foreign_handler);
  std::this_thread::sleep_for(std::chrono::milliseconds(work_ms));
  ::signal(SIGINT, old_int);
  ::signal(SIGTERM, old_term);
  g_in_call.store(false);
  return NVRTC_SUCCESS;
}

class SignalGuard : public ::testing::Test {
 protected:
  void SetUp() override {
    g_program_hits = 0;
    g_foreign_hits = 0;
    g_hit_during_call = false;
    struct sigaction action {};
    action.sa_handler = program_handler;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, &old_int_);
    ::sigaction(SIGTERM, &action, &old_term_);
  }
  void TearDown() override {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
  }
  static bool program_handler_installed(int number) {
    struct sigaction now {};
    ::sigaction(number, nullptr, &now);
    return now.sa_handler == program_handler;
  }

  struct sigaction old_int_ {
  }, old_term_{};
};

TEST_F(SignalGuard, ASignalToTheProcessDuringACompileRunsTheProgramsHandler) {
  for (int number : {SIGINT, SIGTERM}) {
    g_program_hits = 0;
    std::thread compiling(
        [&] { compile_keeping_signal_handlers(fake_compile, nullptr, 300, nullptr); });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_TRUE(program_handler_installed(number));  // put back within the watch period
    // This thread does not block it: the process-directed signal comes here.
    ::kill(::getpid(), number);
    compiling.join();
    EXPECT_EQ(g_program_hits.load(), 1) << number;
    EXPECT_EQ(g_foreign_hits.load(), 0) << number;
    EXPECT_TRUE(program_handler_installed(number));
  }
}

TEST_F(SignalGuard, ASignalToTheCompilingThreadIsDeliveredAfterTheCall) {
  std::atomic<bool> started{false};
  std::thread compiling([&] {
    started = true;
    compile_keeping_signal_handlers(fake_compile, nullptr, 200, nullptr);
  });
  while (!started) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ::pthread_kill(compiling.native_handle(), SIGINT);
  compiling.join();
  EXPECT_EQ(g_foreign_hits.load(), 0);
  EXPECT_EQ(g_program_hits.load(), 1);
  EXPECT_FALSE(g_hit_during_call.load());  // pending while NVRTC ran, delivered on return
}

// Eight threads whose compiles overlap, each sent a signal while it compiles: every signal
// reaches the program's handler once its thread's call returns, and when the last returns the
// program's handlers are in place.
TEST_F(SignalGuard, OverlappingCompilesOnManyThreadsLeaveTheProgramsHandlers) {
  std::vector<std::thread> threads;
  const auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      std::this_thread::sleep_until(start + std::chrono::milliseconds(15 * t));
      compile_keeping_signal_handlers(fake_compile, nullptr, 150, nullptr);
    });
  for (int t = 0; t < 8; ++t) {
    std::this_thread::sleep_until(start + std::chrono::milliseconds(15 * t + 75));
    ::pthread_kill(threads[static_cast<size_t>(t)].native_handle(), SIGINT);
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(g_foreign_hits.load(), 0);
  EXPECT_EQ(g_program_hits.load(), 8);
  EXPECT_TRUE(program_handler_installed(SIGINT));
  EXPECT_TRUE(program_handler_installed(SIGTERM));
}

}  // namespace
}  // namespace tmem::nvrtc
