// Helper programs through posix_spawnp (no shell, so no quoting issues) and scratch directories.
#include "runtime/support/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/support/settings.h"
#include "runtime/support/warning.h"

extern char** environ;

namespace tmem {

std::chrono::milliseconds default_process_timeout() {
  const Settings settings = Settings::from_environment();
  // Once per process: this runs before every helper program, and one line says it all.
  static std::atomic<bool> warned{false};
  if (!settings.subprocess_timeout.problem.empty() && !warned.exchange(true))
    warn(settings.subprocess_timeout.problem);
  return settings.subprocess_timeout.value;
}

Result<ProcessOutput> run_process(const std::vector<std::string>& argv,
                                  std::chrono::milliseconds timeout) {
  if (argv.empty()) return Error(ErrorCode::kInternal, "run_process needs a program");
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return Error(ErrorCode::kToolchain,
                 "cannot create a pipe for " + argv[0] + ": " + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // Its own process group, so a timeout kills whatever it started too. The child starts with no
  // signal blocked and SIGINT/SIGTERM at their defaults: the calling thread may block them (the
  // CLI's signal guard, docs/reliability.md §Signals), and a mask or an ignored signal is
  // inherited, which would leave a helper that a signal cannot stop.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attributes, 0);
  sigset_t none, defaults;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attributes, &none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0].c_str(), &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return Error(ErrorCode::kToolchain, "cannot run " + argv[0] + ": " + std::strerror(rc));
  }
  ProcessOutput result;
  char buffer[4096];
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd readable{fds[0], POLLIN, 0};
    const int ready = poll(&readable, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    const ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n > 0) {
      result.output.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(fds[0]);
  if (timed_out) kill(-pid, SIGKILL);
  // The output is closed; the program may still run (it closed its stdout, or the deadline passed).
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, timed_out ? 0 : WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) break;
    if (done == 0) {
      if (std::chrono::steady_clock::now() >= deadline) {
        timed_out = true;
        kill(-pid, SIGKILL);
      } else {
        usleep(1000);
      }
    }
  }
  if (timed_out)
    return Error(ErrorCode::kToolchain,
                 argv[0] + " did not finish within " + std::to_string(timeout.count()) +
                     " ms and was killed",
                 {{"output", result.output},
                  {"note", "set TMEMJIT_SUBPROCESS_TIMEOUT_S to allow more time"}});
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

Result<ScratchDir> ScratchDir::create(const std::string& prefix) {
  std::string pattern = Settings::from_environment().temp_dir + "/" + prefix + "XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr)
    return Error(ErrorCode::kIo,
                 "cannot create a scratch directory " + pattern + ": " + std::strerror(errno));
  return ScratchDir(pattern);
}

ScratchDir::~ScratchDir() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error(ErrorCode::kIo, "cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

namespace {
Result<bool> write_bytes(const std::string& path, const char* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Error(ErrorCode::kIo, "cannot write " + path);
  out.write(data, static_cast<std::streamsize>(size));
  if (!out) return Error(ErrorCode::kIo, "cannot write " + path);
  return true;
}
}  // namespace

Result<bool> write_file(const std::string& path, const std::string& bytes) {
  return write_bytes(path, bytes.data(), bytes.size());
}

Result<bool> write_file(const std::string& path, const std::vector<char>& bytes) {
  return write_bytes(path, bytes.data(), bytes.size());
}

}  // namespace tmem
