// Where the library's warnings go (a cache that falls back, a variable it cannot read, a transfer
// a kernel never calls): one handler a host program or the Python package can take over.
#pragma once

#include <functional>
#include <string_view>

#include "tmem/export.h"

TMEMJIT_API_BEGIN
namespace tmem {

// Receives one warning's text, without the "tmemjit: warning: " prefix or a newline. It may be
// called from any thread that compiles or caches; the library calls it under no lock of its own.
using WarningHandler = std::function<void(std::string_view message)>;

// Sends every later warning to `handler` and returns the one it replaces. An empty handler
// restores the default: "tmemjit: warning: MESSAGE" and a newline on stderr.
WarningHandler set_warning_handler(WarningHandler handler);

}  // namespace tmem
TMEMJIT_API_END
