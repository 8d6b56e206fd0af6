// A file's directives, read through the lexer (include_directives.h).
#include "runtime/compile/include_directives.h"

#include <algorithm>
#include <span>
#include <utility>

#include "runtime/support/lexer.h"

namespace tmem::closure {
namespace {

bool is_comment(TokenKind kind) {
  return kind == TokenKind::kLineComment || kind == TokenKind::kBlockComment;
}

// Finds the includes and macros of a text: only a '#' that begins a logical line (the lexer's
// kDirective) starts a directive, and its operands are read here, the lexer resuming after them.
class DirectiveReader {
 public:
  DirectiveReader(std::string_view text, FileFacts& facts)
      : written_(text), lexer_(text, SourceLanguage::kCpp), t_(lexer_.text()), facts_(facts) {}

  void run() {
    Token token;
    while (lexer_.next(token)) {
      if (token.kind == TokenKind::kDirective) {
        directive(token.end);
      } else if (token.kind == TokenKind::kIdentifier) {
        const std::string_view word = t_.substr(token.begin, token.end - token.begin);
        if (word == "__has_include" || word == "__has_include_next")
          has_include(token.end, word == "__has_include_next");
      }
    }
  }

 private:
  char peek(size_t ahead) const { return i_ + ahead < t_.size() ? t_[i_ + ahead] : '\0'; }

  // The 1-based line, in the text as written, that the line of the lexer's text holding i_
  // begins on (a directive's line, whatever splices it spans).
  int line_number() {
    const size_t newline = i_ == 0 ? std::string_view::npos : t_.rfind('\n', i_ - 1);
    const size_t begin = newline == std::string_view::npos ? 0 : lexer_.original(newline) + 1;
    if (begin < counted_) counted_ = lines_ = 0;  // never expected: directives come in order
    lines_ += static_cast<int>(std::count(written_.begin() + static_cast<ptrdiff_t>(counted_),
                                          written_.begin() + static_cast<ptrdiff_t>(begin), '\n'));
    counted_ = begin;
    return lines_ + 1;
  }

  // Past blanks and comments that do not end the line.
  void skip_horizontal() {
    lexer_.seek(i_);
    Token token;
    while (lexer_.peek(token) &&
           (token.kind == TokenKind::kBlank || token.kind == TokenKind::kBlockComment))
      lexer_.seek(token.end);
    i_ = lexer_.offset();
  }
  // The identifier at i_, moved past; empty when none starts there.
  std::string_view identifier() {
    lexer_.seek(i_);
    Token token;
    if (!lexer_.peek(token) || token.kind != TokenKind::kIdentifier) return {};
    i_ = token.end;
    return t_.substr(token.begin, token.end - token.begin);
  }
  // "name" or <name> on this line, from its opening delimiter: a header name, not a literal
  // (no escapes in it), so read here.
  bool header_name(Include& include) {
    const char close = t_[i_] == '<' ? '>' : '"';
    const size_t end = t_.find_first_of(close == '>' ? ">\n" : "\"\n", i_ + 1);
    if (end == std::string_view::npos || t_[end] != close || end == i_ + 1) return false;
    include.angled = close == '>';
    include.name.assign(t_.substr(i_ + 1, end - i_ - 1));
    i_ = end + 1;
    return true;
  }
  // The rest of the line from i_ for a message or a macro body: cut at its first comment, blanks
  // trimmed.
  std::string rest_of_line() {
    const size_t line_end = std::min(t_.find('\n', i_), t_.size());
    size_t end = i_;
    lexer_.seek(i_);
    Token token;
    while (lexer_.peek(token) && token.begin < line_end && !is_comment(token.kind)) {
      end = std::min(token.end, line_end);
      lexer_.seek(token.end);
    }
    std::string_view rest = t_.substr(i_, end - i_);
    while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t' || rest.back() == '\r'))
      rest.remove_suffix(1);
    return std::string(rest);
  }
  // The ')' closing a parameter list opening at i_, on this line; npos when there is none.
  size_t closing_parenthesis() {
    lexer_.seek(i_ + 1);
    Token token;
    while (lexer_.peek(token) && token.kind != TokenKind::kNewline) {
      if (token.kind == TokenKind::kPunctuation && t_[token.begin] == ')') return token.begin;
      lexer_.seek(token.end);
    }
    return std::string_view::npos;
  }

  // After a line's '#'. The rest of the line is lexed as usual afterwards, so a __has_include in
  // an #if is seen there.
  void directive(size_t after_hash) {
    i_ = after_hash;
    skip_horizontal();
    const std::string_view word = identifier();
    if (word == "define") {
      define();
    } else if (word == "include" || word == "include_next") {  // #import: Objective-C only
      include(word == "include_next");
    }
    lexer_.seek(i_);
  }
  void include(bool next) {
    Include include;
    include.line = line_number();
    include.next = next;
    skip_horizontal();
    if (i_ < t_.size() && (t_[i_] == '"' || t_[i_] == '<') && header_name(include)) {
      facts_.includes.push_back(std::move(include));
      return;
    }
    facts_.computed.push_back(Computed{include.line, include.next, rest_of_line()});
  }
  // #define NAME BODY or NAME(PARAMS) BODY, from after "define".
  void define() {
    skip_horizontal();
    Macro macro;
    macro.name.assign(identifier());
    if (macro.name.empty()) return;
    if (peek(0) == '(') {  // no blank before '(': function-like
      macro.function_like = true;
      const size_t close = closing_parenthesis();
      if (close == std::string_view::npos) return;
      std::string previous = ",";
      for (std::string& param : directive_tokens(t_.substr(i_ + 1, close - i_ - 1))) {
        // "..." is __VA_ARGS__; after a name (GNU's "args...") the name stands for the rest.
        if (param != "," && (param != "..." || previous == ","))
          macro.params.push_back(param == "..." ? "__VA_ARGS__" : param);
        previous = std::move(param);
      }
      i_ = close + 1;
    }
    macro.body = directive_tokens(rest_of_line());
    if (!macro.body.empty() && macro.body.size() <= 64) facts_.macros.push_back(std::move(macro));
  }
  // __has_include("x") / (<x>): followed as an include (what it finds may change the code). An
  // operand that is not a header name (a macro, or `defined(__has_include)`) is left alone.
  void has_include(size_t after, bool next) {
    i_ = after;
    const int line = line_number();
    skip_horizontal();
    if (peek(0) == '(') {
      ++i_;
      skip_horizontal();
      Include include;
      include.line = line;
      include.next = next;
      if (i_ < t_.size() && (t_[i_] == '"' || t_[i_] == '<') && header_name(include)) {
        facts_.includes.push_back(std::move(include));
        lexer_.seek(i_);
        return;
      }
    }
    lexer_.seek(after);
  }

  std::string_view written_;  // the text as written, for line numbers
  Lexer lexer_;
  std::string_view t_;  // the lexer's text: splices removed
  FileFacts& facts_;
  size_t i_ = 0;
  size_t counted_ = 0;  // line_number(): newlines of written_ before counted_ ...
  int lines_ = 0;       // ... are lines_
};

}  // namespace

FileFacts read_directives(std::string_view text) {
  FileFacts facts;
  facts.content = hash128(std::as_bytes(std::span(text.data(), text.size())));
  DirectiveReader(text, facts).run();
  return facts;
}

std::vector<std::string> directive_tokens(std::string_view text) {
  std::vector<std::string> out;
  Lexer lexer(text, SourceLanguage::kCpp);
  const std::string_view t = lexer.text();
  Token token;
  while (lexer.next(token)) {
    if (token.kind == TokenKind::kBlank || token.kind == TokenKind::kNewline ||
        is_comment(token.kind))
      continue;
    size_t end = token.end;
    if (t.substr(token.begin, 2) == "##") end = token.begin + 2;
    if (t.substr(token.begin, 3) == "...") end = token.begin + 3;
    out.emplace_back(t.substr(token.begin, end - token.begin));
    lexer.seek(end);
  }
  return out;
}

}  // namespace tmem::closure
