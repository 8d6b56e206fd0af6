// One lexer for C++ and PTX text (lexer.h).
#include "runtime/support/lexer.h"

#include <algorithm>
#include <array>
#include <iterator>

namespace tmem {
namespace {

constexpr size_t kMaxRawDelimiter = 16;  // C++ [lex.string]

// What each byte may be, one lookup per character on the hot paths.
constexpr uint8_t kBlankByte = 1;       // ' ', \t, \r, \f, \v
constexpr uint8_t kIdentifierByte = 2;  // a letter, '_', '$' or a byte over 0x7f
constexpr uint8_t kDigitByte = 4;
constexpr std::array<uint8_t, 256> kByteClasses = [] {
  std::array<uint8_t, 256> classes{};
  for (int c = 0; c < 256; ++c) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') classes[c] = kBlankByte;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c >= 0x80)
      classes[c] = kIdentifierByte;
    if (c >= '0' && c <= '9') classes[c] = kDigitByte;
  }
  return classes;
}();
uint8_t byte_class(char c) { return kByteClasses[static_cast<unsigned char>(c)]; }
bool is_blank(char c) { return byte_class(c) == kBlankByte; }
bool is_digit(char c) { return byte_class(c) == kDigitByte; }
bool is_identifier_char(char c) { return (byte_class(c) & (kIdentifierByte | kDigitByte)) != 0; }

// The length of the line splice at `at` ("\\\n" or "\\\r\n"), 0 when there is none.
size_t splice_at(std::string_view text, size_t at) {
  if (text[at] != '\\') return 0;
  size_t next = at + 1;
  if (next < text.size() && text[next] == '\r') ++next;
  return next < text.size() && text[next] == '\n' ? next + 1 - at : 0;
}

bool is_raw_prefix(std::string_view word) {
  return word == "R" || word == "u8R" || word == "uR" || word == "UR" || word == "LR";
}
bool is_encoding_prefix(std::string_view word) {
  return word == "u8" || word == "u" || word == "U" || word == "L";
}

}  // namespace

Lexer::Lexer(std::string_view text, SourceLanguage language) : language_(language), text_(text) {
  if (language != SourceLanguage::kCpp) return;
  // Copies the text between splices; most texts have none and are not copied.
  size_t copied = 0, removed = 0;
  for (size_t at = text.find('\\'); at != std::string_view::npos; at = text.find('\\', at + 1)) {
    const size_t length = splice_at(text, at);
    if (length == 0) continue;
    if (splices_.empty()) spliced_.reserve(text.size());
    spliced_.append(text.substr(copied, at - copied));
    removed += length;
    splices_.emplace_back(spliced_.size(), removed);
    copied = at + length;
    at = copied - 1;
  }
  if (splices_.empty()) return;
  spliced_.append(text.substr(copied));
  text_ = spliced_;
}

size_t Lexer::original(size_t at) const {
  // The last splice at or before `at` says how much was removed before it.
  auto after =
      std::upper_bound(splices_.begin(), splices_.end(), at,
                       [](size_t offset, const auto& splice) { return offset < splice.first; });
  return after == splices_.begin() ? at : at + std::prev(after)->second;
}

// Inlined into next() and peek(): one call per token.
[[gnu::always_inline]] inline void Lexer::scan(size_t at, Token& token) const {
  const std::string_view t = text_;
  const bool cpp = language_ == SourceLanguage::kCpp;
  const char c = t[at];
  token.begin = at;
  token.end = at + 1;
  token.kind = TokenKind::kPunctuation;
  token.terminated = true;
  switch (byte_class(c)) {
    case kIdentifierByte: {
      token.kind = TokenKind::kIdentifier;
      token.end = identifier_end(at + 1);
      const char after = token.end < t.size() ? t[token.end] : '\0';
      if (!cpp || (after != '"' && after != '\'')) return;
      const std::string_view word = t.substr(at, token.end - at);
      if (after == '"' && is_raw_prefix(word)) {
        // A malformed delimiter makes no raw string: the prefix stays an identifier.
        if (const size_t end = raw_string_end(token.end, token.terminated); end != token.end) {
          token.kind = TokenKind::kRawString;
          token.end = end;
        }
      } else if (is_encoding_prefix(word)) {
        token.kind = after == '"' ? TokenKind::kString : TokenKind::kCharacter;
        token.end = quoted_end(token.end, token.terminated);
      }
      return;
    }
    case kBlankByte:
      token.kind = TokenKind::kBlank;
      while (token.end < t.size() && is_blank(t[token.end])) ++token.end;
      return;
    case kDigitByte:
      token.kind = TokenKind::kNumber;
      token.end = number_end(at);
      return;
    default:
      break;
  }
  const char next = at + 1 < t.size() ? t[at + 1] : '\0';
  if (c == '\n') {
    token.kind = TokenKind::kNewline;
  } else if (c == '/' && next == '/') {
    token.kind = TokenKind::kLineComment;
    token.end = std::min(t.find('\n', at), t.size());
  } else if (c == '/' && next == '*') {
    token.kind = TokenKind::kBlockComment;
    const size_t close = t.find("*/", at + 2);
    token.terminated = close != std::string_view::npos;
    token.end = token.terminated ? close + 2 : t.size();
  } else if (c == '#' && cpp && line_start_) {
    token.kind = TokenKind::kDirective;
  } else if (c == '"' || (c == '\'' && cpp)) {
    token.kind = c == '"' ? TokenKind::kString : TokenKind::kCharacter;
    token.end = quoted_end(at, token.terminated);
  } else if (c == '.' && is_digit(next)) {
    token.kind = TokenKind::kNumber;
    token.end = number_end(at);
  }
}

bool Lexer::next(Token& token) {
  if (at_ >= text_.size()) return false;
  scan(at_, token);
  at_ = token.end;
  switch (token.kind) {
    case TokenKind::kNewline:
      line_start_ = true;
      in_directive_ = false;
      break;
    case TokenKind::kBlank:
    case TokenKind::kLineComment:
    case TokenKind::kBlockComment:
      break;  // a comment is a blank: a '#' after one still begins the line
    case TokenKind::kDirective:
      in_directive_ = true;
      line_start_ = false;
      break;
    default:
      line_start_ = false;
  }
  return true;
}

bool Lexer::peek(Token& token) const {
  if (at_ >= text_.size()) return false;
  scan(at_, token);
  return true;
}

// After the literal whose opening quote is at `quote`. An escape takes the character after the
// backslash whatever it is; a C++ literal ends unterminated at its line's end (the newline not
// taken), a PTX one runs on.
size_t Lexer::quoted_end(size_t quote, bool& terminated) const {
  const std::string_view t = text_;
  const char close = t[quote];
  const bool ends_with_line = language_ == SourceLanguage::kCpp;
  for (size_t i = quote + 1; i < t.size();) {
    const char c = t[i];
    if (c == '\\') {
      i += 2;
      continue;
    }
    if (c == '\n' && ends_with_line) {
      terminated = false;
      return i;
    }
    ++i;
    if (c == close) {
      terminated = true;
      return i;
    }
  }
  terminated = false;
  return t.size();
}

// After the raw string whose '"' is at `quote`; `quote` itself when its delimiter is malformed
// (over 16 characters, or holding a blank, a backslash, a quote or a parenthesis).
size_t Lexer::raw_string_end(size_t quote, bool& terminated) const {
  const std::string_view t = text_;
  const size_t open = t.substr(quote + 1, kMaxRawDelimiter + 1).find('(');
  if (open == std::string_view::npos) return quote;
  const std::string_view delimiter = t.substr(quote + 1, open);
  if (delimiter.find_first_of(" \t\n\\)\"") != std::string_view::npos) return quote;
  std::string close = ")";
  close.append(delimiter);
  close += '"';
  const size_t end = t.find(close, quote + 1 + open + 1);
  terminated = end != std::string_view::npos;
  return terminated ? end + close.size() : t.size();
}

size_t Lexer::identifier_end(size_t at) const {
  while (at < text_.size() && is_identifier_char(text_[at])) ++at;
  return at;
}

// A digit separator is a quote between two characters of the number (1'000); a sign after an
// exponent letter belongs to the number (0x1p-3, 1e+5).
size_t Lexer::number_end(size_t at) const {
  const std::string_view t = text_;
  for (++at; at < t.size();) {
    const char c = t[at];
    const char previous = t[at - 1];
    if ((c == '+' || c == '-') &&
        (previous == 'e' || previous == 'E' || previous == 'p' || previous == 'P')) {
      ++at;
    } else if (c == '\'' && at + 1 < t.size() && is_identifier_char(t[at + 1])) {
      at += 2;
    } else if (is_identifier_char(c) || c == '.') {
      ++at;
    } else {
      break;
    }
  }
  return at;
}

namespace {

// Spaces over [begin, end) of the lexer's text in `out` (the text as given), newlines kept.
void blank(std::string& out, const Lexer& lexer, size_t begin, size_t end) {
  if (end <= begin) return;
  const size_t last = lexer.original(end - 1) + 1;
  for (size_t i = lexer.original(begin); i < last; ++i)
    if (out[i] != '\n') out[i] = ' ';
}

// The inside of a literal token: after its opening quote, before its closing one.
std::pair<size_t, size_t> inside(std::string_view text, const Token& token) {
  const size_t quote = text.find_first_of("\"'", token.begin);
  const size_t end = token.terminated ? token.end - 1 : token.end;
  return {quote + 1, std::max(quote + 1, end)};
}

}  // namespace

std::string blank_comments(std::string_view text, SourceLanguage language, LiteralText literals) {
  std::string out(text);
  Lexer lexer(text, language);
  Token token;
  while (lexer.next(token)) {
    switch (token.kind) {
      case TokenKind::kLineComment:
      case TokenKind::kBlockComment:
        blank(out, lexer, token.begin, token.end);
        break;
      case TokenKind::kString:
      case TokenKind::kCharacter:
      case TokenKind::kRawString:
        if (literals == LiteralText::kBlankedOutsideDirectives && !lexer.in_directive()) {
          const auto [begin, end] = inside(lexer.text(), token);
          blank(out, lexer, begin, end);
        }
        break;
      default:
        break;
    }
  }
  return out;
}

}  // namespace tmem
