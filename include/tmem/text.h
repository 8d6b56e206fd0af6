// Text that libtmemjit and its clients (the tmemjit command, the Python package) read or report:
// JSON nesting bounded in every reader, reported text always valid UTF-8, user text quoted short
// (docs/reliability.md).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "tmem/export.h"
#include "tmem/result.h"

TMEMJIT_API_BEGIN
namespace tmem {

// The deepest nesting of arrays and objects a JSON reader accepts (a spec nests 1 level). Deeper
// text is refused before it is parsed: nlohmann's dump() and destructors recurse once per level,
// and 58,000 levels (117 KB) overflowed the stack (issue 30).
inline constexpr int kMaxJsonDepth = 64;

// kParse when `text` nests arrays and objects deeper than kMaxJsonDepth, naming `what` (e.g.
// "spec file 'x.json'") and the byte offset. One pass; strings are skipped, anything else is left
// to the parser.
Status check_json_depth(std::string_view text, std::string_view what);

// `text` with every byte that is not part of a well-formed UTF-8 sequence written as \xNN (as are
// overlong forms, surrogates and code points above U+10FFFF), so that JSON and Python can carry it.
// Valid text is returned unchanged.
std::string valid_utf8(std::string_view text);

// Quoting user text in a message: at most `max_bytes` of `text` (cut before a UTF-8 sequence),
// then "... (N bytes)", made valid UTF-8. Text within the bound is returned unchanged (but valid).
inline constexpr size_t kMaxQuotedBytes = 200;
std::string quote_excerpt(std::string_view text, size_t max_bytes = kMaxQuotedBytes);

}  // namespace tmem
TMEMJIT_API_END
