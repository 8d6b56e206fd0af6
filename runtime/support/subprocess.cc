// Helper programs through posix_spawnp (no shell, so no quoting issues) and scratch directories.
#include "runtime/support/subprocess.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

extern char** environ;

namespace tmem {

Result<ProcessOutput> run_process(const std::vector<std::string>& argv) {
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
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return Error(ErrorCode::kToolchain, "cannot run " + argv[0] + ": " + std::strerror(rc));
  }
  ProcessOutput result;
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n > 0) {
      result.output.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

Result<ScratchDir> ScratchDir::create(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "XXXXXX";
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
