// Runs the tmemjit command from tests and captures its exit code, stdout and stderr.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tmemjit_test {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string shell_quote(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// Runs `tmemjit ARGV...` with an argument list built at run time; arguments are shell-quoted so
// layouts and specs pass unchanged.
inline CliResult run_cli_argv(const std::vector<std::string>& argv) {
  static std::atomic<int> counter{0};  // one sequence for every caller: output files never collide
  const std::string base =
      "/tmp/tmemjit_cli_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
  std::string command = shell_quote(TMEMJIT_CLI_PATH);
  for (const std::string& arg : argv) command += " " + shell_quote(arg);
  command += " >" + base + ".out 2>" + base + ".err";
  const int status = std::system(command.c_str());
  CliResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  auto slurp = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream buffer;
    buffer << in.rdbuf();
    std::remove(path.c_str());
    return buffer.str();
  };
  result.out = slurp(base + ".out");
  result.err = slurp(base + ".err");
  return result;
}

// Runs `tmemjit ARGS...`.
template <class... Args>
CliResult run_cli(const Args&... args) {
  return run_cli_argv({std::string(args)...});
}

}  // namespace tmemjit_test
