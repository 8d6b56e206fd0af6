// Searches the headers of a CUDA source's include closure (include_closure.h) for a name: the
// "never called" check of compile_kernel (docs/specialization.md "Options"), where a transfer
// called from a header the source includes is called all the same.
#pragma once

#include <string_view>

#include "runtime/compile/include_closure.h"

namespace tmem {

// Whether any file of `closure` names `name` as an identifier outside comments and strings. Each
// file is read again (a regular file only, opened without blocking, up to 64 MiB), in the
// closure's order, until one names it; a file that cannot be read is passed over.
bool closure_mentions_identifier(const IncludeClosure& closure, std::string_view name);

}  // namespace tmem
