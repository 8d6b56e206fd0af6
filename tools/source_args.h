// What the commands that compile a user's kernel share (specialize, warmup FILE.cu, emulate): the
// source file's reading and language, and the compiler flags taken out of the command line before
// the common parser (docs/design.md §CLI).
#pragma once

#include <ios>
#include <string>
#include <vector>

#include "tmem/device_function.h"
#include "tmem/result.h"

namespace tmemjit_cli {

inline constexpr std::streamsize kMaxSourceBytes = std::streamsize{16} << 20;

// A text file or pipe of at most `limit` bytes, `what` naming it in errors: a device or directory,
// an unreadable file, more than the limit or a NUL byte is an error naming it; a FIFO nobody
// writes reads as empty rather than blocking for ever (issue 39 N11).
tmem::Result<std::string> read_text(const std::string& path, std::streamsize limit,
                                    const std::string& what);

// The language of a source file from its name: FILE.ptx, or FILE.cu/.cuh/.cpp/.cc (CUDA C++).
tmem::Result<tmem::Language> source_language(const std::string& path);

// The kernel source at `path`: its language from the name, its text (read_text); no entry yet.
tmem::Result<tmem::KernelSource> read_source(const std::string& path);

// -I DIR and -D NAME[=VALUE] (also attached: -IDIR), -std=..., -default-device and -Xnvrtc OPT go
// to NVRTC, -Xptxas OPT to the PTX compiler, --precompile HEADER to CompileOptions::precompile,
// each may repeat (as nvcc's -X options); `repeated`
// options (specialize's --transfer) are collected in order. The rest goes to parse_args.
struct CompilerFlags {
  std::vector<std::string> rest;
  std::vector<std::string> nvrtc;
  std::vector<std::string> ptxas;
  std::vector<std::string> precompile;  // --precompile HEADER, in order
  std::vector<std::string> repeated;    // the values of the `repeated` option, in order
};
tmem::Result<CompilerFlags> split_compiler_flags(const std::vector<std::string>& argv,
                                                 const std::string& repeated = {});

}  // namespace tmemjit_cli
