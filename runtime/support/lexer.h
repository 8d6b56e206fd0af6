// The lexical structure of C++ and PTX text: where comments, string and character literals, raw
// strings and preprocessor directives begin and end. Every scanner of source text reads through
// it (the include closure, the CUDA unit's header stop, the PTX scans), so they agree on what is
// code (issue 42 item 7). Linear in the text, no allocation per token.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tmem {

enum class SourceLanguage {
  // C and C++ (CUDA C++): line splices, character literals, raw strings, directives; a string or
  // character literal ends with its line.
  kCpp,
  // PTX: the same comments and "strings", which may span lines; no splices, character literals,
  // raw strings or directives.
  kPtx,
};

enum class TokenKind : uint8_t {
  kBlank,         // spaces, tabs, \r, \f, \v
  kNewline,       // one '\n'
  kLineComment,   // from "//" to its line's end, the newline excluded
  kBlockComment,  // "/* ... */"
  kString,        // "...", with its encoding prefix (u8, u, U, L)
  kCharacter,     // '...', with its encoding prefix
  kRawString,     // R"delim(...)delim", with its encoding prefix (u8R, uR, UR, LR)
  kIdentifier,    // letters, digits, '_', '$' and bytes over 0x7f, not starting with a digit
  kNumber,        // a preprocessing number: 1'000'000, 0x1p-3, .5e+3
  kDirective,     // the '#' that begins a logical line (C++): a preprocessor directive follows
  kPunctuation,   // any other character, one per token
};

struct Token {
  size_t begin = 0;  // [begin, end) in Lexer::text()
  size_t end = 0;
  TokenKind kind = TokenKind::kPunctuation;
  // False for a comment or literal cut short before its closing delimiter: by the end of the
  // text, or (a C++ string or character literal) by the end of its line.
  bool terminated = true;
};

// The tokens of a text in order. C++ text is read as the compiler reads it after translation
// phase 2: a backslash ending a line (a line splice) joins it to the next before anything else,
// so a splice continues a // comment, a literal or a directive.
class Lexer {
 public:
  Lexer(std::string_view text, SourceLanguage language);
  Lexer(const Lexer&) = delete;
  Lexer& operator=(const Lexer&) = delete;

  // What the tokens index: the text with its line splices removed; the text itself when it has
  // none (always, for PTX).
  std::string_view text() const { return text_; }
  // The offset in the text as given of offset `at` of text() (its size maps to the given size).
  size_t original(size_t at) const;

  // The next token, or false at the end of the text.
  bool next(Token& token);
  // The token next() would return, without moving on.
  bool peek(Token& token) const;
  // Where the next token starts. seek() moves there, within the logical line being read (a
  // caller that read a directive's operands itself goes on after them).
  size_t offset() const { return at_; }
  void seek(size_t at) { at_ = at; }
  // Whether the logical line of the last token began with a directive's '#'.
  bool in_directive() const { return in_directive_; }

 private:
  void scan(size_t at, Token& token) const;
  size_t quoted_end(size_t quote, bool& terminated) const;
  size_t raw_string_end(size_t quote, bool& terminated) const;
  size_t identifier_end(size_t at) const;
  size_t number_end(size_t at) const;

  SourceLanguage language_;
  std::string spliced_;  // the text without its splices, when it has any
  std::string_view text_;
  // (offset in text_, characters removed before it) at each splice, in order.
  std::vector<std::pair<size_t, size_t>> splices_;
  size_t at_ = 0;
  bool line_start_ = true;  // only blanks and comments so far on this logical line
  bool in_directive_ = false;
};

// What blank_comments does with the inside of string, character and raw string literals.
enum class LiteralText {
  kKept,
  // Replaced by spaces (the quotes and the newlines kept), except on a directive line, where an
  // #include's "name" or a #define's string is what a scan of the directives reads.
  kBlankedOutsideDirectives,
};

// `text` with every comment replaced by spaces and, as `literals` says, the insides of literals:
// the newlines stay, so offsets and line numbers are the text's. A scan of it for directives or
// identifiers sees only code.
std::string blank_comments(std::string_view text, SourceLanguage language,
                           LiteralText literals = LiteralText::kKept);

}  // namespace tmem
