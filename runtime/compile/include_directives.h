// What one file's text says to the include scan (include_closure.h): its #include and
// __has_include operands, its computed includes and its #defines. Read through the lexer of
// runtime/support, so a comment, a literal or a spliced line is what every other scanner says it
// is; every directive is taken whatever the #if around it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "runtime/support/hash.h"

namespace tmem::closure {

// One #include (or __has_include operand) the scan follows.
struct Include {
  std::string name;     // between the delimiters
  int line = 0;         // 1-based, in the file as written
  bool angled = false;  // <name>: the include dirs only
  bool next = false;    // #include_next: the search resumes after the includer's directory
};

// `#include TOKENS` (or #include_next): resolved, when it can be, by expanding TOKENS with the
// macros defined in the closure.
struct Computed {
  int line = 0;
  bool next = false;
  std::string tokens;  // as written, comments cut: "CUDA_STD_HEADER(tuple)"
};

// A #define, kept for computed includes.
struct Macro {
  std::string name;
  bool function_like = false;
  std::vector<std::string> params;  // "__VA_ARGS__" for "..."
  std::vector<std::string> body;    // tokens
};

// What a file's text says, kept per file version.
struct FileFacts {
  Key128 content;
  std::vector<Include> includes;
  std::vector<Computed> computed;
  std::vector<Macro> macros;
};

FileFacts read_directives(std::string_view text);

// The preprocessing tokens of one line of directive text, spelled as written (blanks and comments
// dropped; a literal is one token, "##" and "..." are one each).
std::vector<std::string> directive_tokens(std::string_view text);

}  // namespace tmem::closure
