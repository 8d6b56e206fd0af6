// Compiler logs read for the user: compile_kernel's NVRTC and ptxas errors turned into what the
// caller of compile_kernel should read (the entry they named, the transfer they called wrongly or
// left out, the line of their own file).
#pragma once

#include <span>
#include <string>

#include "tmem/device_function.h"
#include "tmem/result.h"

namespace tmem {

// The front end's error with hints: an entry NVRTC could not resolve (a usage error naming it), a
// call that matches none of a transfer's overloads (the parameters it was generated with), a
// transfer the source uses but the call does not give; the user's file is named instead of being
// echoed back as "cuda source" (the log quotes the lines in error).
Error explain_front_end_error(const KernelSource& source,
                              std::span<const DeviceFunctionOptions> transfers, Error error);

// ptxas's "line N" of a module into which `inserted_lines` lines were inserted after line
// `inserted_after`, as the user's file and line (or "line K of the generated functions").
std::string user_log(const std::string& log, const std::string& path, size_t inserted_after,
                     size_t inserted_lines);

}  // namespace tmem
