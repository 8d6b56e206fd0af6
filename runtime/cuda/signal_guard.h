// Keeps NVRTC's signal handlers out of the way: nvrtcCompileProgram installs its own SIGINT and
// SIGTERM handlers for the length of a compile, which end the process with exit code 0 or 4 (and,
// with another thread compiling, crash it) instead of letting the program's handlers run
// (issue 30; docs/reliability.md "Signals").
#pragma once

#include <nvrtc.h>

#include <chrono>

namespace tmem::nvrtc {

using CompileProgramFn = decltype(&::nvrtcCompileProgram);

// A function with nvrtcCompileProgram's signature that calls `real` (set once, before any call)
// with the process's handlers kept in place:
// * the calling thread blocks SIGINT and SIGTERM for the call, so NVRTC's handler never runs on it;
//   a signal that arrives meanwhile stays pending and is delivered once the call returns;
// * while any compile is in flight, a watcher thread (named "tmemjit-signals", with the signals
//   blocked) puts the process's own dispositions back within kSignalWatchPeriod of NVRTC replacing
//   them (50 us in the first 50 ms of a compile, when NVRTC installs them), so a signal delivered
//   to another thread runs the program's handler. Only one that arrives within that window after
//   NVRTC's install, on a thread that is not compiling, can still reach NVRTC's handler;
// * when the last compile returns, the dispositions saved before the first are restored.
// (nvrtc.cc wraps the process's one NVRTC this way, once.)
CompileProgramFn keep_signal_handlers(CompileProgramFn real);

// The same for one call of `real` (what the function keep_signal_handlers returns does).
nvrtcResult compile_keeping_signal_handlers(CompileProgramFn real, nvrtcProgram program, int count,
                                            const char* const* options);

inline constexpr std::chrono::microseconds kSignalWatchPeriod{500};

}  // namespace tmem::nvrtc
