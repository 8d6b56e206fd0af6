// tmemjit.CompileOptions, tmem::CompileOptions as an immutable Python value, and the compile
// options of a call (compile_kernel, compile_transfer, warmup): options=CompileOptions(...) or the
// same fields as keyword arguments. Every field is one row of the table in options.cc.
#pragma once

#include <string>

#include "bindings.h"
#include "tmem/compile.h"

namespace tmemjit_py {

// The options of a call of `function` that takes `options` (a CompileOptions or None) and the
// fields as keyword arguments (`keywords`, a dict): the value `options` holds (valid while it
// lives), the defaults, or `made`, filled from the keywords. Both at once is a TypeError, as are
// an unknown keyword and an `options` of another type; a field's own errors are those of
// CompileOptions(...): TypeError naming the field and the type it needs, Error naming the value.
// Called with the GIL held.
const tmem::CompileOptions& call_options(nb::handle options, nb::handle keywords,
                                         const char* function, tmem::CompileOptions& made);

// "target: str = 'sm_100a', backend: str = 'auto', ...": the fields as keyword parameters, for the
// signature (nb::sig) of a function that takes them; "target: str = ..., ..." without defaults
// (replace(): a field not named stays as it is).
std::string option_parameters(bool with_defaults = true);

}  // namespace tmemjit_py
