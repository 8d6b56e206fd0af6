// Running a helper program (ptxas, nvdisasm) without a shell, and scratch directories for its
// files.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "tmem/result.h"

namespace tmem {

struct ProcessOutput {
  int exit_code = -1;  // the exit status; 128 + N when killed by signal N
  std::string output;  // stdout and stderr, interleaved as written
};

// How long a helper program may run before it is killed: $TMEMJIT_SUBPROCESS_TIMEOUT_S seconds
// when set to a positive number, else 300 s (a hung ptxas must not hang its caller). A value that
// does not parse is a warning, once per process, and the 300 s.
std::chrono::milliseconds default_process_timeout();

// Runs argv[0] (a path, or a name looked up in PATH) with the arguments, waits for it and returns
// its exit code and output. A failure to start it is an Error (kToolchain, naming the program),
// and so is running past `timeout`: then the program and its process group are killed.
Result<ProcessOutput> run_process(const std::vector<std::string>& argv,
                                  std::chrono::milliseconds timeout = default_process_timeout());

// A fresh directory under $TMPDIR (or /tmp), removed with its files on destruction.
class ScratchDir {
 public:
  static Result<ScratchDir> create(const std::string& prefix);
  ScratchDir(ScratchDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  ScratchDir& operator=(ScratchDir&&) = delete;
  ScratchDir(const ScratchDir&) = delete;
  ~ScratchDir();

  const std::string& path() const noexcept { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  explicit ScratchDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// Whole-file helpers; failures are kIo errors naming the path.
Result<std::string> read_file(const std::string& path);
Result<bool> write_file(const std::string& path, const std::string& bytes);
Result<bool> write_file(const std::string& path, const std::vector<char>& bytes);

}  // namespace tmem
