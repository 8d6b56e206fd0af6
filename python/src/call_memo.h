// The last few compile_kernel calls from Python, by the objects they were given, so that a call
// repeating one of them (an autotuner's loop, a kernel looked up per launch) skips the wrapper's
// checks and every conversion: the memory hit then costs what the C++ hit costs, plus one call
// (issue 29: within 2 µs of C++, python/bench/kernel_hit_bench.py).
//
// A call matches an entry when each argument is the same object, or an equal str/int/bool of the
// same type; the transfers mapping (an exact dict) and the option lists (exact tuples or lists)
// match item by item, each transfer's value by identity (a TransferSpec is immutable) and, for a
// frozen Transfer, its attributes by identity too: object.__setattr__ can still change one.
// Anything else never matches and is never remembered, so a mutated list or dict, or a Mapping of
// the user's own type, always takes the full path. Entries hold references to what they were given;
// tmemjit clears them at interpreter exit.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "bindings.h"
#include "tmem/compile.h"
#include "tmem/specialize.h"

namespace tmemjit_py {

// The Python arguments of tmemjit.compile_kernel, in its order.
inline constexpr std::size_t kCallArguments = 17;
enum CallArgument : std::size_t {
  kSource,
  kEntry,
  kTransfers,
  kLanguage,
  kTarget,
  kBackend,
  kOptLevel,
  kLineInfo,
  kKeepDir,
  kExtraOptions,
  kCtaGroup,
  kPath,
  kNvrtcOptions,
  kPtxOptions,
  kSpecialization,
  kPrecompile,
  kFrontEnd,
};

// What a call means to the library, built once per remembered call.
struct PreparedCall {
  tmem::KernelSource source;
  std::vector<tmem::NamedTransfer> transfers;
  tmem::CompileOptions options;
};

// The prepared call of a remembered call with these arguments, or null. Called with the GIL held.
std::shared_ptr<const PreparedCall> recall(const nb::handle (&arguments)[kCallArguments]);

// Remembers `prepared` for these arguments when they can match later (above); the oldest of the
// few entries makes room. Called with the GIL held.
void remember(const nb::handle (&arguments)[kCallArguments],
              std::shared_ptr<const PreparedCall> prepared);

// Drops every entry (and the references they hold): at interpreter exit, and for tests.
void forget_calls();

}  // namespace tmemjit_py
