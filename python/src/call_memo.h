// The last few compile_kernel calls from Python, by what they were given, so that a call
// repeating one of them (an autotuner's loop, a kernel looked up per launch) skips the wrapper's
// checks and every conversion: the memory hit then costs what the C++ hit costs, plus one call
// (issue 29: within 2 µs of C++, python/bench/kernel_hit_bench.py).
//
// A call matches an entry when its compile options are equal to the entry's (a CompileOptions
// value, however given: options= or keywords, issue 42 item 5) and each other argument is the
// same object, or an equal str/int of the same type; the transfers mapping (an exact dict)
// matches item by item, each transfer's value by identity (a TransferSpec is immutable) and, for a
// frozen Transfer, its attributes by identity too: object.__setattr__ can still change one.
// Anything else never matches and is never remembered, so a mutated dict, or a Mapping of the
// user's own type, always takes the full path. Entries hold references to what they were given;
// tmemjit clears them at interpreter exit.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "bindings.h"
#include "tmem/compile.h"
#include "tmem/specialize.h"

namespace tmemjit_py {

// The Python arguments of tmemjit.compile_kernel but the compile options, in its order.
inline constexpr std::size_t kCallArguments = 5;
enum CallArgument : std::size_t { kSource, kEntry, kTransfers, kLanguage, kPath };

// What a call means to the library, built once per remembered call.
struct PreparedCall {
  tmem::KernelSource source;
  std::vector<tmem::NamedTransfer> transfers;
  tmem::CompileOptions options;
};

// The prepared call of a remembered call with these arguments and options, or null. Called with
// the GIL held.
std::shared_ptr<const PreparedCall> recall(const nb::handle (&arguments)[kCallArguments],
                                           const tmem::CompileOptions& options);

// Remembers `prepared` (with its options) for these arguments when they can match later (above);
// the oldest of the few entries makes room. Called with the GIL held.
void remember(const nb::handle (&arguments)[kCallArguments],
              std::shared_ptr<const PreparedCall> prepared);

// Drops every entry (and the references they hold), and zeroes recalled_calls(): at interpreter
// exit, and for tests.
void forget_calls();

// How many calls recall() answered since the process started or forget_calls(), for tests.
std::size_t recalled_calls();

}  // namespace tmemjit_py
