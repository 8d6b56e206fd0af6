// SIGINT and SIGTERM in the tmemjit command: exit 130 and 143 (docs/reliability.md "Signals").
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <thread>

#include "tools/cli.h"

namespace tmemjit_cli {

void exit_on_stop_signals() {
  // Blocked in the main thread before any other starts, so every thread of the process blocks
  // them, and one thread takes them with sigwait: neither NVRTC's handlers (installed during a
  // compile; they exited 0 or 4, issue 30) nor any other code runs on them. A signal ignored when
  // the command starts (nohup, a background job of a script) stays ignored.
  sigset_t stop;
  sigemptyset(&stop);
  for (int number : {SIGINT, SIGTERM}) {
    struct sigaction now {};
    if (::sigaction(number, nullptr, &now) == 0 && now.sa_handler != SIG_IGN)
      sigaddset(&stop, number);
  }
  if (pthread_sigmask(SIG_BLOCK, &stop, nullptr) != 0) return;
  std::thread([stop] {
    int number = 0;
    while (sigwait(&stop, &number) != 0) {
    }
    // The compile in flight cannot be cancelled: the process ends here, as the shell expects of
    // 128 + the signal number. Temporary files a write had open are removed by the cache's own
    // scans (older than an hour) or `tmemjit cache clear`.
    // What the command printed stays printed (issue 39 N17): stdout's buffer goes out unless
    // another thread holds it mid-write (then waiting could hang the exit).
    if (::ftrylockfile(stdout) == 0) {
      ::fflush_unlocked(stdout);
      ::funlockfile(stdout);
    }
    const char* message = number == SIGINT ? "tmemjit: interrupted\n" : "tmemjit: terminated\n";
    [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, message, std::strlen(message));
    ::_exit(number == SIGINT ? kExitInterrupted : kExitTerminated);
  }).detach();
}

}  // namespace tmemjit_cli
