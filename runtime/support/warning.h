// Emits a library warning through the handler of tmem/warning.h (default: stderr).
#pragma once

#include <string_view>

namespace tmem {

// Hands `message` (no prefix, no newline) to the current warning handler.
void warn(std::string_view message);

}  // namespace tmem
