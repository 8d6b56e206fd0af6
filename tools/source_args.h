// What the commands that compile a user's kernel share (specialize, warmup FILE.cu, emulate): the
// source file's reading and language, and the compiler flags as options of the common parser
// (docs/design.md §CLI).
#pragma once

#include <ios>
#include <string>
#include <vector>

#include "tmem/device_function.h"
#include "tmem/result.h"
#include "tools/cli.h"

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

// The compiler flags, options of parse_args like any other, each may repeat (as nvcc's -X
// options): -I DIR and -D NAME[=VALUE] (also attached: -IDIR), -std=..., -default-device and
// -Xnvrtc OPT go to NVRTC, in the order given, all under the name "-Xnvrtc" (Args::all("-Xnvrtc")
// is what NVRTC gets: -IDIR for -I DIR); -Xptxas OPT to the PTX compiler; --precompile HEADER to
// CompileOptions::precompile.
std::vector<OptionSpec> compiler_flag_options();

// `options` with the compiler flags added.
std::vector<OptionSpec> with_compiler_flag_options(std::vector<OptionSpec> options);

}  // namespace tmemjit_cli
