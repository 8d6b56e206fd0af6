// The text lowering of a user's sm_100 PTX module to sm_90 (kernels/user_emulation.h): a scanner
// that follows PTX at statement level, a register table, one rewrite per family of rejected
// statements, and the CUDA C++ of the tcgen05.ld/st forms the module uses.
#include "kernels/user_emulation.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kernels/device_function.h"
#include "kernels/emulation_kernels.h"
#include "runtime/ptx/text.h"
#include "tmem/opcode.h"

namespace tmem::kernels {
namespace {

// Status ids fill bits 23:0 of the status word; the event is in bits 31:24 (emu::record).
constexpr std::uint64_t kMaxEmuId = 1u << 24;

// ---- text helpers -------------------------------------------------------------------------------

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

// ASCII classes (PTX ISA §4.4 identifiers), without the locale lookups of <cctype>: the scanner
// calls them once per character of the module.
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_ident_start(char c) { return is_letter(c) || c == '_' || c == '$' || c == '%'; }

bool is_ident_char(char c) { return is_letter(c) || is_digit(c) || c == '_' || c == '$'; }

// Characters of an opcode and its qualifiers ("tcgen05.mma.cta_group::1.kind::f16"). NVCC's inline
// asm may put the first operand right after it ("...x1.b32{%r1},[%r2];").
bool is_opcode_char(char c) { return is_ident_char(c) || c == '.' || c == ':'; }

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

// The operands of a statement, split at commas outside {}, [] and ().
std::vector<std::string_view> split_operands(std::string_view text) {
  std::vector<std::string_view> operands;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '{' || c == '[' || c == '(') ++depth;
    if (c == '}' || c == ']' || c == ')') --depth;
    if (c == ',' && depth == 0) {
      operands.push_back(trim(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (!trim(text.substr(start)).empty() || !operands.empty())
    operands.push_back(trim(text.substr(start)));
  return operands;
}

// The opcode's qualifiers: "tcgen05.mma.cta_group::1.kind::f16" -> tcgen05, mma, cta_group::1, ...
// ("::" stays inside a qualifier: PTX ISA §9.7.16 spells ".kind::f16" as one qualifier).
std::vector<std::string_view> split_qualifiers(std::string_view opcode) {
  std::vector<std::string_view> tokens;
  for (size_t start = 0;;) {
    const size_t dot = opcode.find('.', start);
    tokens.push_back(opcode.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) return tokens;
    start = dot + 1;
  }
}

bool has_token(const std::vector<std::string_view>& tokens, std::string_view token) {
  for (std::string_view t : tokens)
    if (t == token) return true;
  return false;
}

// A PTX integer literal (PTX ISA §4.5.1: decimal, 0x hex, 0b binary, 0 octal, optional U suffix,
// optional sign) taken modulo 2^32, as ptxas encodes immHalfSplitoff.
std::optional<std::uint32_t> parse_u32_literal(std::string_view text) {
  bool negative = false;
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  if (!text.empty() && (text.back() == 'U' || text.back() == 'u')) text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  unsigned base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  } else if (text.size() > 2 && text[0] == '0' && (text[1] == 'b' || text[1] == 'B')) {
    base = 2;
    text.remove_prefix(2);
  } else if (text.size() > 1 && text[0] == '0') {
    base = 8;
    text.remove_prefix(1);
  }
  std::uint64_t value = 0;
  for (char c : text) {
    const int digit = is_digit(c)            ? c - '0'
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                             : 99;
    if (digit >= static_cast<int>(base)) return std::nullopt;
    value = (value * base + static_cast<unsigned>(digit)) & 0xFFFFFFFFull;
  }
  const auto u = static_cast<std::uint32_t>(value);
  return negative ? static_cast<std::uint32_t>(0u - u) : u;
}

bool is_immediate(std::string_view operand) {
  return !operand.empty() && (is_digit(operand[0]) || operand[0] == '-' || operand[0] == '+');
}

// One line of text for messages: whitespace runs become one space, long statements are cut.
std::string quote_statement(std::string_view text) {
  std::string out;
  for (char c : trim(text)) {
    if (is_space(c)) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  constexpr size_t kMaxQuoted = 200;
  if (out.size() > kMaxQuoted) out = out.substr(0, kMaxQuoted) + " ...";
  return out;
}

size_t count_newlines(std::string_view text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

// `ptx` with its // and /* */ comments (PTX ISA §4.1) replaced by spaces, newlines kept, so that
// offsets and lines stay the module's (ptx::without_comments, which passes an unterminated /* by).
// The offset of an unterminated /* in `unterminated`, else npos.
std::string blank_comments(std::string_view ptx, size_t& unterminated) {
  std::string out(ptx);
  unterminated = std::string::npos;
  bool in_string = false;
  for (size_t i = 0; i < out.size(); ++i) {
    if (in_string) {
      if (out[i] == '\\' && i + 1 < out.size())
        ++i;
      else if (out[i] == '"' || out[i] == '\n')
        in_string = false;
    } else if (out[i] == '"') {
      in_string = true;
    } else if (out[i] == '/' && i + 1 < out.size() && out[i + 1] == '/') {
      while (i < out.size() && out[i] != '\n') out[i++] = ' ';
    } else if (out[i] == '/' && i + 1 < out.size() && out[i + 1] == '*') {
      const size_t close = out.find("*/", i + 2);
      if (close == std::string::npos) {
        unterminated = i;
        return out;
      }
      for (size_t j = i; j < close + 2; ++j)
        if (out[j] != '\n') out[j] = ' ';
      i = close + 1;
    }
  }
  return out;
}

// ---- the scanner --------------------------------------------------------------------------------

// A PTX module as statements (PTX ISA §4 Syntax): instructions and directives end with ';', except
// the header and debugging directives, which end with their line; '{' and '}' open and close
// function bodies and nested blocks; labels end with ':'.
enum class StatementKind {
  kInstruction,    // an instruction, with its guard
  kDirective,      // a directive ending with ';' (or a function header ending before its '{')
  kLineDirective,  // .version, .target, .address_size, .file, .loc, @@DWARF: up to the newline
  kSection,        // .section NAME { ... }: debugging data, skipped whole
  kLabel,
  kOpen,
  kClose,
};

struct Statement {
  StatementKind kind = StatementKind::kInstruction;
  size_t begin = 0;  // offsets in the module: [begin, end)
  size_t end = 0;
  size_t line = 0;  // 1-based line of begin
};

class Scanner {
 public:
  // `text` has its comments blanked (blank_comments), so offsets are the module's.
  Scanner(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  // The next statement; nullopt at the end of the module.
  Result<std::optional<Statement>> next() {
    skip_space();
    if (pos_ >= text_.size()) return std::optional<Statement>();
    Statement s;
    s.begin = pos_;
    s.line = line_at(pos_);
    auto end = statement_end(s);
    if (!end) return std::move(end).error();
    s.end = *end;
    pos_ = s.end;
    return std::optional<Statement>(s);
  }

  size_t line_at(size_t at) {
    if (at < counted_) counted_ = 0, line_ = 1;  // not expected: offsets only grow
    line_ += count_newlines(text_.substr(counted_, at - counted_));
    counted_ = at;
    return line_;
  }

 private:
  void skip_space() {
    while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
  }

  Error malformed(size_t at, const std::string& what) {
    const size_t line = line_at(at);
    return Error(
        ErrorCode::kParse,
        "user emulation: " + std::string(source_) + ", line " + std::to_string(line) + ": " + what,
        std::vector<ErrorDetail>{{"line", std::to_string(line)}});
  }

  Result<size_t> statement_end(Statement& s) {
    const char c = text_[pos_];
    if (c == '{' || c == '}') {
      s.kind = c == '{' ? StatementKind::kOpen : StatementKind::kClose;
      return pos_ + 1;
    }
    if (c == '@' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '@') return line_end(s);
    if (c == '.') return directive_end(s);
    if (const size_t label = label_end(); label != 0) {
      s.kind = StatementKind::kLabel;
      return label;
    }
    s.kind = StatementKind::kInstruction;
    return semicolon_end(false);
  }

  Result<size_t> line_end(Statement& s) {
    s.kind = StatementKind::kLineDirective;
    const size_t newline = text_.find('\n', pos_);
    return newline == std::string_view::npos ? text_.size() : newline;
  }

  Result<size_t> directive_end(Statement& s) {
    size_t name_end = pos_ + 1;
    while (name_end < text_.size() && is_ident_char(text_[name_end])) ++name_end;
    const std::string_view name = text_.substr(pos_ + 1, name_end - pos_ - 1);
    // PTX ISA §11.1 (module directives) and §11.5 (debugging directives): no ';'.
    if (name == "version" || name == "target" || name == "address_size" || name == "file" ||
        name == "loc")
      return line_end(s);
    s.kind = StatementKind::kDirective;
    if (name == "section") {
      s.kind = StatementKind::kSection;
      return section_end();
    }
    return semicolon_end(true);
  }

  // "name:" (not "name::"), the label of the next statement.
  size_t label_end() const {
    if (!is_ident_start(text_[pos_])) return 0;
    size_t at = pos_ + 1;
    while (at < text_.size() && is_ident_char(text_[at])) ++at;
    while (at < text_.size() && (text_[at] == ' ' || text_[at] == '\t')) ++at;
    if (at < text_.size() && text_[at] == ':' && (at + 1 >= text_.size() || text_[at + 1] != ':'))
      return at + 1;
    return 0;
  }

  Result<size_t> section_end() {
    const size_t open = text_.find('{', pos_);
    if (open == std::string_view::npos) return malformed(pos_, ".section without '{'");
    int depth = 0;
    for (size_t at = open; at < text_.size(); ++at) {
      if (text_[at] == '"') {
        auto closed = string_end(at);
        if (!closed) return std::move(closed).error();
        at = *closed;
      } else if (text_[at] == '{') {
        ++depth;
      } else if (text_[at] == '}' && --depth == 0) {
        return at + 1;
      }
    }
    return malformed(pos_, ".section without its closing '}'");
  }

  // The offset of the closing quote of the string opening at `at`.
  Result<size_t> string_end(size_t at) {
    for (size_t i = at + 1; i < text_.size(); ++i) {
      if (text_[i] == '\\') {
        ++i;
      } else if (text_[i] == '"') {
        return i;
      } else if (text_[i] == '\n') {
        break;
      }
    }
    return malformed(at, "unterminated string");
  }

  // A statement ends at ';' outside braces and parentheses. In a directive, a '{' outside them
  // and before any '=' opens the function body: the header ends there. In an instruction, braces
  // hold a vector operand.
  Result<size_t> semicolon_end(bool directive) {
    int braces = 0, parens = 0;
    bool initializer = false;
    for (size_t at = pos_; at < text_.size(); ++at) {
      switch (text_[at]) {
        case '"': {
          auto closed = string_end(at);
          if (!closed) return std::move(closed).error();
          at = *closed;
          break;
        }
        case '(':
          ++parens;
          break;
        case ')':
          --parens;
          break;
        case '=':
          initializer = true;
          break;
        case '{':
          if (directive && !initializer && braces == 0 && parens == 0) return at;
          ++braces;
          break;
        case '}':
          if (braces == 0)
            return malformed(pos_, "statement '" + quote_statement(text_.substr(pos_, at - pos_)) +
                                       "' is not terminated by ';' before '}'");
          --braces;
          break;
        case ';':
          if (braces == 0 && parens == 0) return at + 1;
          break;
        default:
          break;
      }
    }
    return malformed(pos_, "statement '" + quote_statement(text_.substr(pos_, 80)) +
                               "' is not terminated by ';'");
  }

  std::string_view text_;
  std::string_view source_;
  size_t pos_ = 0;
  size_t counted_ = 0;
  size_t line_ = 1;
};

// ---- registers ----------------------------------------------------------------------------------

// The registers in scope (PTX ISA §5.1.1, §11.2.3 .reg): "%r<12>" declares %r0..%r11. Blocks
// shadow: a '}' drops the declarations of its block.
class RegisterTable {
 public:
  void open() { marks_.push_back(entries_.size()); }
  void close() {
    if (marks_.empty()) return;
    entries_.resize(marks_.back());
    marks_.pop_back();
  }

  // Reads ".reg .b32 %r<12>;", ".reg .pred p, q;"; vector registers (.v2/.v4) are skipped.
  void declare(std::string_view statement) {
    std::string_view body = trim(statement.substr(4));  // after ".reg"
    if (body.ends_with(';')) body = trim(body.substr(0, body.size() - 1));
    int bits = 0;
    while (body.starts_with('.')) {
      size_t end = 1;
      while (end < body.size() && !is_space(body[end])) ++end;
      const std::string_view type = body.substr(1, end - 1);
      if (type.starts_with('v')) return;
      bits = type_bits(type);
      body = trim(body.substr(end));
    }
    if (bits == 0) return;
    for (std::string_view name : split_operands(body)) add(name, bits);
  }

  // Bits of the register `name`, or 0 when none is declared in scope.
  int bits(std::string_view name) const {
    for (size_t i = entries_.size(); i-- > 0;) {
      const Entry& e = entries_[i];
      if (e.count < 0) {
        if (e.name == name) return e.bits;
        continue;
      }
      if (!name.starts_with(e.name) || name.size() == e.name.size()) continue;
      const std::string_view index = name.substr(e.name.size());
      if (std::all_of(index.begin(), index.end(), is_digit)) return e.bits;
    }
    return 0;
  }

 private:
  struct Entry {
    std::string name;
    int count = -1;  // -1: one register; else a parameterized "name<count>"
    int bits = 0;
  };

  static int type_bits(std::string_view type) {
    if (type == "pred") return 1;
    if (type == "b128") return 128;
    const size_t digits = type.find_first_of("0123456789");
    if (digits == std::string_view::npos) return 0;
    if (type.ends_with("x2")) return 32;  // .f16x2, .bf16x2
    return std::atoi(std::string(type.substr(digits)).c_str());
  }

  void add(std::string_view name, int bits) {
    const size_t angle = name.find('<');
    if (angle == std::string_view::npos) {
      entries_.push_back({std::string(trim(name)), -1, bits});
      return;
    }
    entries_.push_back({std::string(trim(name.substr(0, angle))),
                        std::atoi(std::string(name.substr(angle + 1)).c_str()), bits});
  }

  std::vector<Entry> entries_;
  std::vector<size_t> marks_;
};

// ---- one lowered statement ----------------------------------------------------------------------

// The text that replaces one statement: "{ .reg/.param declarations; instructions }" on one line,
// with block-scoped names (tmemjit_p*, %tmemjit_u*, ...) that cannot clash with the user's.
// Operand conversions follow the ABI (/work/emu-spec/ABI.md §Calling convention): a 32-bit register
// where a u64 is expected is widened with cvt.u64.u32, a predicate becomes selp.u32. A conversion
// that cannot be made records the first failure, which the caller turns into an error.
class Block {
 public:
  explicit Block(const RegisterTable& registers) : registers_(registers) {}

  const std::string& failure() const { return failure_; }
  void emit(std::string_view instruction) {
    body_ += instruction;
    body_ += "; ";
  }

  // `operand` as a 32-bit value (an operand text usable in a .b32 instruction).
  std::string u32(std::string_view operand) {
    if (is_immediate(operand)) return std::string(operand);
    const int bits = register_bits(operand);
    if (bits == 32) return std::string(operand);
    const std::string t = temp32();
    if (bits == 1)
      emit("selp.u32 " + t + ", 1, 0, " + std::string(operand));
    else if (bits == 16)
      emit("cvt.u32.u16 " + t + ", " + std::string(operand));
    else if (bits == 64)
      emit("cvt.u32.u64 " + t + ", " + std::string(operand));
    else if (bits == 0)  // a variable's name: its address (PTX ISA §6.4.1, mov with a symbol)
      emit("mov.u32 " + t + ", " + std::string(operand));
    else
      fail("operand " + std::string(operand) + " is a " + std::to_string(bits) +
           "-bit register; a 32-bit value is expected");
    return t;
  }

  // `operand` as a 64-bit value.
  std::string u64(std::string_view operand) {
    if (is_immediate(operand)) return std::string(operand);
    const int bits = register_bits(operand);
    if (bits == 64) return std::string(operand);
    const std::string t = temp64();
    if (bits == 32)
      emit("cvt.u64.u32 " + t + ", " + std::string(operand));
    else if (bits == 16)
      emit("cvt.u64.u16 " + t + ", " + std::string(operand));
    else if (bits == 0)
      emit("mov.u64 " + t + ", " + std::string(operand));
    else
      fail("operand " + std::string(operand) + " is a " + std::to_string(bits) +
           "-bit register; a 64-bit value is expected");
    return t;
  }

  // The value of an address operand "[base]", "[base+imm]" (PTX ISA §6.4.1), 32 or 64 bits.
  std::string address(std::string_view operand, bool wide) {
    if (operand.size() < 2 || operand.front() != '[' || operand.back() != ']') {
      fail("operand " + std::string(operand) + " is not an address [..]");
      return "0";
    }
    const std::string_view inner = trim(operand.substr(1, operand.size() - 2));
    size_t split = inner.find_first_of("+-", 1);
    const std::string base =
        wide ? u64(trim(inner.substr(0, split))) : u32(trim(inner.substr(0, split)));
    if (split == std::string_view::npos) return base;
    std::string offset(trim(inner.substr(split + (inner[split] == '+' ? 1 : 0))));
    offset.erase(std::remove_if(offset.begin(), offset.end(), is_space), offset.end());
    const std::string t = wide ? temp64() : temp32();
    emit(std::string(wide ? "add.s64 " : "add.s32 ") + t + ", " + base + ", " + offset);
    return t;
  }

  // A generic address (no state space, PTX ISA §6.4.1) as the 32-bit .shared::cta address.
  std::string generic_to_shared(std::string_view operand) {
    const std::string generic = address(operand, true);
    const std::string shared = temp64(), t = temp32();
    emit("cvta.to.shared.u64 " + shared + ", " + generic);
    emit("cvt.u32.u64 " + t + ", " + shared);
    return t;
  }

  // A predicate operand ("%p", "!%p", or an integer) selecting between two u32 constants.
  std::string select(std::string_view predicate, std::uint32_t if_true, std::uint32_t if_false) {
    if (is_immediate(predicate)) {
      const auto value = parse_u32_literal(predicate);
      return std::to_string(value && *value != 0 ? if_true : if_false);
    }
    const bool negated = predicate.starts_with('!');
    const std::string_view name = negated ? predicate.substr(1) : predicate;
    if (register_bits(name) != 1) fail("operand " + std::string(predicate) + " is not a predicate");
    const std::string t = temp32();
    emit("selp.u32 " + t + ", " + std::to_string(negated ? if_false : if_true) + ", " +
         std::to_string(negated ? if_true : if_false) + ", " + std::string(name));
    return t;
  }

  // Declares a .param and stores `value` into it; returns its name (ABI: .b32 or .b64 by value).
  std::string param(std::string_view value, bool wide) {
    const std::string name = "tmemjit_p" + std::to_string(params_++);
    decls_ += std::string(wide ? ".param .b64 " : ".param .b32 ") + name + "; ";
    emit(std::string(wide ? "st.param.b64 [" : "st.param.b32 [") + name + "], " +
         std::string(value));
    return name;
  }

  // A declaration of the block's own (a return value's .param), before its instructions.
  void declare(std::string_view declaration) {
    decls_ += declaration;
    decls_ += "; ";
  }

  // An aggregate .param of `words` u32 (the struct of the generated ld/st functions).
  std::string aggregate(int words) {
    const std::string name = "tmemjit_a" + std::to_string(params_++);
    decls_ += ".param .align 4 .b8 " + name + "[" + std::to_string(4 * words) + "]; ";
    return name;
  }

  std::string temp32() { return "%tmemjit_u" + std::to_string(u32_++); }
  std::string temp64() { return "%tmemjit_w" + std::to_string(u64_++); }
  std::string temp_pred() { return "%tmemjit_q" + std::to_string(preds_++); }

  void fail(std::string why) {
    if (failure_.empty()) failure_ = std::move(why);
  }

  // Bits of a register operand; 0 for a name that is not a register (a variable's address). A
  // %name without .reg in scope is a failure.
  int register_bits(std::string_view name) {
    if (name.starts_with("%tmemjit_u")) return 32;
    if (name.starts_with("%tmemjit_w")) return 64;
    const int bits = registers_.bits(name);
    if (bits == 0 && name.starts_with('%'))
      fail("register " + std::string(name) + " has no .reg declaration in scope");
    return bits;
  }

  std::string text() const {
    std::string decls = decls_;
    if (u32_) decls += ".reg .b32 %tmemjit_u<" + std::to_string(u32_) + ">; ";
    if (u64_) decls += ".reg .b64 %tmemjit_w<" + std::to_string(u64_) + ">; ";
    if (preds_) decls += ".reg .pred %tmemjit_q<" + std::to_string(preds_) + ">; ";
    return "{ " + decls + body_ + "}";
  }

 private:
  const RegisterTable& registers_;
  std::string decls_, body_, failure_;
  int params_ = 0, u32_ = 0, u64_ = 0, preds_ = 0;
};

// ---- families -----------------------------------------------------------------------------------

enum class Family {
  kAlloc,
  kDealloc,
  kRelinquish,
  kLd,
  kSt,
  kWait,
  kFence,
  kMma,
  kCommit,
  kCp,
  kShift,
  kClusterLaunchControl,
  kF32x2,
  kMin3,
  kMax3,
  kTensorCopy,
  kSetMaxNReg,
  kMbarrierWait,
  kStandaloneEntry,
  kCount,
};

constexpr std::array<const char*, static_cast<size_t>(Family::kCount)> kFamilyNames = {
    "tcgen05.alloc",
    "tcgen05.dealloc",
    "tcgen05.relinquish_alloc_permit",
    "tcgen05.ld",
    "tcgen05.st",
    "tcgen05.wait",
    "tcgen05.fence",
    "tcgen05.mma",
    "tcgen05.commit",
    "tcgen05.cp",
    "tcgen05.shift",
    "clusterlaunchcontrol",
    ".f32x2",
    "min3",
    "max3",
    "cp.async.bulk.tensor",
    "setmaxnreg",
    "mbarrier wait (helps the MMA queue)",
    "kernel entry (clears the standalone state)"};

// An instruction statement taken apart: [@guard] opcode operands;
struct Instruction {
  std::string_view guard;  // "%p1" or "!%p1"; empty when unguarded
  std::string_view opcode;
  std::string_view operand_text;
  std::string_view text;  // the whole statement, comments blanked
  size_t line = 0;
};

Instruction split_instruction(std::string_view text, size_t line) {
  Instruction in;
  in.text = text;
  in.line = line;
  std::string_view rest = trim(text);
  if (rest.ends_with(';')) rest = trim(rest.substr(0, rest.size() - 1));
  if (rest.starts_with('@')) {
    size_t end = 1;
    while (end < rest.size() && !is_space(rest[end])) ++end;
    in.guard = rest.substr(1, end - 1);
    rest = trim(rest.substr(end));
  }
  size_t end = 0;
  while (end < rest.size() && is_opcode_char(rest[end])) ++end;
  in.opcode = rest.substr(0, end);
  in.operand_text = trim(rest.substr(end));
  return in;
}

// A sm_100 feature ptxas rejects for Hopper that the lowering does not rewrite (each checked with
// ptxas 13.0 against sm_90a and sm_100a; tests/kernels/user_emulation_test.cc keeps them honest).
struct Unsupported {
  std::string_view instruction;  // the opcode's first token
  std::string_view marker;       // a qualifier sequence after it
  const char* what;
};
constexpr Unsupported kUnsupported[] = {
    {"ld", ".v8.", "256-bit loads (.v8) need sm_100"},
    {"ld", ".v4.b64", "256-bit loads (.v4.b64) need sm_100"},
    {"ld", ".v4.u64", "256-bit loads (.v4.u64) need sm_100"},
    {"ld", ".v4.s64", "256-bit loads (.v4.s64) need sm_100"},
    {"ld", ".v4.f64", "256-bit loads (.v4.f64) need sm_100"},
    {"st", ".v8.", "256-bit stores (.v8) need sm_100"},
    {"st", ".v4.b64", "256-bit stores (.v4.b64) need sm_100"},
    {"st", ".v4.u64", "256-bit stores (.v4.u64) need sm_100"},
    {"st", ".v4.s64", "256-bit stores (.v4.s64) need sm_100"},
    {"st", ".v4.f64", "256-bit stores (.v4.f64) need sm_100"},
    {"st", ".bulk", "st.bulk needs sm_100"},
    {"add", ".f32.f16", "mixed-precision add.f32.f16 needs sm_100"},
    {"add", ".f32.bf16", "mixed-precision add.f32.bf16 needs sm_100"},
    {"sub", ".f32.f16", "mixed-precision sub.f32.f16 needs sm_100"},
    {"sub", ".f32.bf16", "mixed-precision sub.f32.bf16 needs sm_100"},
    {"fma", ".f32.f16", "mixed-precision fma.f32.f16 needs sm_100"},
    {"fma", ".f32.bf16", "mixed-precision fma.f32.bf16 needs sm_100"},
    {"redux", ".f32", "redux.sync on .f32 needs sm_100a"},
    {"cvt", ".rs.", "stochastic rounding (cvt.rs) needs sm_100a"},
    {"cvt", ".ue8m0x2", "ue8m0 conversions need sm_100a"},
    {"cvt", ".e2m1x2", "fp4 (e2m1) conversions need sm_100a"},
    {"cvt", ".e2m3x2", "fp6 (e2m3) conversions need sm_100a"},
    {"cvt", ".e3m2x2", "fp6 (e3m2) conversions need sm_100a"},
    {"cp", ".tile::gather4", "TMA gather4 needs sm_100"},
    {"cp", ".tile::scatter4", "TMA scatter4 needs sm_100"},
    {"cp", ".im2col::w", "TMA im2col::w needs sm_100"},
    {"cp", ".cp_mask", "bulk copies with .cp_mask need sm_100"},
    {"mma",
     ".kind::", "mma.sync with .kind:: (fp4/fp6/fp8 block scaling) is not a sm_90a instruction"},
};

// Why `opcode` (not one the lowering rewrites; `head` is its first token) cannot run on Hopper, or
// nullptr.
const char* unsupported_reason(std::string_view head, std::string_view opcode) {
  // Every statement of the module passes here: compare the short heads inline (no memcmp call).
  auto same = [](std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i] != b[i]) return false;
    return true;
  };
  for (const Unsupported& u : kUnsupported)
    if (same(head, u.instruction) && opcode.find(u.marker, head.size()) != std::string_view::npos)
      return u.what;
  if (opcode.ends_with(".f32x2"))
    return "of the .f32x2 operations only add, sub, mul and fma are emulated";
  return nullptr;
}

// cta_group::1 -> 1, cta_group::2 -> 2, else 0.
int cta_group_of(const std::vector<std::string_view>& tokens) {
  if (has_token(tokens, "cta_group::1")) return 1;
  if (has_token(tokens, "cta_group::2")) return 2;
  return 0;
}

// tcgen05.ld/st and ld.red: the generated function's name, "tmemjit_emu_ld_16x32bx2_x4_pack_16b".
std::string transfer_function(const Opcode& op) {
  std::string form = op.to_string().substr(std::string("tcgen05.").size());
  for (std::string_view drop : {".sync", ".aligned", ".b32"}) {
    const size_t at = form.find(drop);
    if (at != std::string::npos) form.erase(at, drop.size());
  }
  std::string name = "tmemjit_emu_";
  for (size_t i = 0; i < form.size(); ++i) {
    if (form[i] == ':' && i + 1 < form.size() && form[i + 1] == ':') {
      name += '_';
      ++i;
    } else {
      name += form[i] == '.' ? '_' : form[i];
    }
  }
  return name;
}

std::string words_type(int words) { return "tmemjit_emu_u32x" + std::to_string(words); }

// Words an ld function returns: the registers, then redval for ld.red.
int returned_words(const Opcode& op) { return op.regs_per_thread() + (op.reduces() ? 1 : 0); }

// ---- the lowering -------------------------------------------------------------------------------

// ---- which entries use the emulated state
// ---------------------------------------------------------

bool is_identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%';
}

size_t skip_blanks(std::string_view text, size_t at) {
  while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
  return at;
}

// Past a parenthesized list at `at` (the return parameters of a .func or a call), or `at`.
size_t skip_parenthesized(std::string_view text, size_t at) {
  if (at >= text.size() || text[at] != '(') return at;
  const size_t close = text.find(')', at);
  return close == std::string_view::npos ? text.size() : close + 1;
}

std::string_view identifier_at(std::string_view text, size_t at) {
  size_t end = at;
  while (end < text.size() && is_identifier_char(text[end])) ++end;
  return text.substr(at, end - at);
}

// A function header's name: ".entry NAME(...)" or ".func (.param ...) NAME(...)".
std::string_view function_name(std::string_view header) {
  size_t at = header.find(".entry");
  at = at != std::string_view::npos ? at + 6 : header.find(".func");
  if (at == std::string_view::npos) return {};
  if (header.compare(at, 5, ".func") == 0) at += 5;
  at = skip_blanks(header, skip_parenthesized(header, skip_blanks(header, at)));
  return identifier_at(header, at);
}

// The function a call statement calls ("call.uni (r), f, (a);", "@p call f;"); empty otherwise.
std::string_view callee(std::string_view instruction) {
  size_t at = skip_blanks(instruction, 0);
  if (at < instruction.size() && instruction[at] == '@')
    at = skip_blanks(instruction, instruction.find_first_of(" \t\n", at));
  if (instruction.compare(at, 4, "call") != 0) return {};
  at = instruction.find_first_of(" \t\n(", at);
  if (at == std::string_view::npos) return {};
  at = skip_blanks(instruction, skip_parenthesized(instruction, skip_blanks(instruction, at)));
  if (at < instruction.size() && instruction[at] == ',') at = skip_blanks(instruction, at + 1);
  return identifier_at(instruction, at);
}

// The offsets of the '{' of the entries whose body, or a function it calls (transitively), has a
// tcgen05 statement: the kernels of a standalone module that clear its state (docs/emulation.md
// §Standalone modules). A kernel of the module that touches no emulated state (Thrust's helper
// kernels beside a CuTe tutorial's) neither clears it nor is bounded by it.
Result<std::set<size_t>> entries_using_tcgen05(std::string_view blank, std::string_view name) {
  struct Function {
    size_t open = 0;
    bool entry = false, uses = false;
    std::vector<std::string> calls;
  };
  std::map<std::string, Function, std::less<>> functions;
  Function* current = nullptr;
  std::string_view header;
  int depth = 0;
  Scanner scanner(blank, name);
  for (;;) {
    auto next = scanner.next();
    if (!next) return std::move(next).error();
    if (!next->has_value()) break;
    const Statement& st = **next;
    const std::string_view text = blank.substr(st.begin, st.end - st.begin);
    if (st.kind == StatementKind::kDirective && depth == 0) header = text;
    if (st.kind == StatementKind::kOpen && depth++ == 0) {
      current = &functions[std::string(function_name(header))];
      current->open = st.begin;
      current->entry = header.find(".entry") != std::string_view::npos;
    }
    if (st.kind == StatementKind::kClose && --depth == 0) current = nullptr;
    if (st.kind != StatementKind::kInstruction || current == nullptr) continue;
    if (text.find("tcgen05.") != std::string_view::npos) current->uses = true;
    if (const std::string_view called = callee(text); !called.empty())
      current->calls.emplace_back(called);
  }
  for (bool changed = true; changed;) {  // uses spreads to callers
    changed = false;
    for (auto& [function_name_, function] : functions)
      for (const std::string& called : function.calls)
        if (auto it = functions.find(called);
            !function.uses && it != functions.end() && it->second.uses)
          function.uses = changed = true;
  }
  std::set<size_t> opens;
  for (const auto& [function_name_, function] : functions)
    if (function.entry && function.uses) opens.insert(function.open);
  return opens;
}

class Lowering {
 public:
  Lowering(std::string_view ptx, std::string_view source, std::uint32_t first_id, bool standalone)
      : source_(ptx), name_(source), standalone_(standalone), next_id_(first_id) {}

  Result<UserLowering> run() {
    size_t unterminated = std::string::npos;
    blank_ = blank_comments(source_, unterminated);
    if (unterminated != std::string::npos) {
      const std::string line = std::to_string(ptx::line_of(source_, unterminated));
      return Error(ErrorCode::kParse,
                   prefix() + name_ + ", line " + line + ": unterminated /* comment",
                   std::vector<ErrorDetail>{{"line", line}});
    }
    out_.reserve(source_.size() + source_.size() / 4);
    // A module that issues MMAs has its waits help compute them (see instruction()).
    help_at_waits_ = blank_.find("tcgen05.mma") != std::string::npos;
    // A standalone module's kernels clear their state first, when they use one (docs/emulation.md
    // §Standalone modules).
    standalone_ = standalone_ && blank_.find("tcgen05.") != std::string::npos;
    if (standalone_) {
      auto clearing = entries_using_tcgen05(blank_, name_);
      if (!clearing) return std::move(clearing).error();
      clearing_entries_ = std::move(clearing).value();
    }
    Scanner scanner(blank_, name_);
    for (;;) {
      auto next = scanner.next();
      if (!next) return std::move(next).error();
      if (!next->has_value()) break;
      if (auto done = statement(**next); !done) return std::move(done).error();
    }
    if (depth_ != 0)
      return Error(ErrorCode::kParse,
                   prefix() + name_ + ": the module ends inside a block ('{' without '}')");
    if (!target_seen_)
      return Error(ErrorCode::kParse, prefix() + name_ +
                                          " has no .target directive; a PTX module starts with "
                                          ".version, .target and .address_size");
    out_.append(source_.substr(copied_));
    return finish();
  }

 private:
  using Lowered = Result<std::string>;

  Status statement(const Statement& s) {
    const std::string_view text = std::string_view(blank_).substr(s.begin, s.end - s.begin);
    switch (s.kind) {
      case StatementKind::kOpen:
        ++depth_;
        registers_.open();
        if (depth_ == 1 && standalone_ && is_entry(header_) && clearing_entries_.contains(s.begin))
          insert_after(s, kStandaloneEnter);
        declare_header_registers();
        return ok();
      case StatementKind::kClose:
        if (depth_ == 0) return malformed(s, "'}' without '{'");
        --depth_;
        registers_.close();
        return ok();
      case StatementKind::kLineDirective:
        return header(s, text);
      case StatementKind::kDirective:
        if (text.starts_with(".reg") && text.size() > 4 && is_space(text[4]))
          registers_.declare(text);
        else if (depth_ == 0)
          header_ = text;  // a function's header: its .reg parameters are in scope in its body
        return ok();
      case StatementKind::kInstruction:
        return instruction(split_instruction(text, s.line), s);
      default:
        return ok();
    }
  }

  static Status ok() { return Status(std::monostate{}); }

  // A .func may take and return .reg parameters (PTX ISA §11.2.1: ".func (.reg .b32 r) f(.reg .b32
  // a)"); they are registers of its body.
  void declare_header_registers() {
    if (depth_ != 1) return;
    for (size_t at = header_.find(".reg"); at != std::string_view::npos;
         at = header_.find(".reg", at + 4)) {
      const size_t end = header_.find_first_of(",)", at);
      registers_.declare(header_.substr(at, end == std::string_view::npos ? end : end - at));
    }
    function_header_ = header_;  // its .param names, for the statements of its body
    header_ = {};
  }
  static std::string prefix() { return "user emulation: "; }

  Error malformed(const Statement& s, const std::string& what) const {
    return Error(ErrorCode::kParse,
                 prefix() + name_ + ", line " + std::to_string(s.line) + ": " + what,
                 std::vector<ErrorDetail>{{"line", std::to_string(s.line)}});
  }

  // ---- header ----

  Status header(const Statement& s, std::string_view text) {
    if (text.starts_with(".target")) return retarget(s, text);
    if (text.starts_with(".version")) return version(s, text);
    return ok();
  }

  // .target sm_100a (and every sm_1xx family target) -> sm_90, the emulation's target
  // (docs/emulation.md): what runs on sm_90a runs there too once setmaxnreg is dropped (above).
  Status retarget(const Statement& s, std::string_view text) {
    if (target_seen_) return ok();
    target_seen_ = true;
    const size_t at = text.find("sm_");
    if (at == std::string_view::npos) return malformed(s, ".target names no sm_ architecture");
    size_t end = at + 3;
    while (end < text.size() && is_ident_char(text[end])) ++end;
    const std::string_view target = text.substr(at, end - at);
    if (target != "sm_90") notes_.push_back("the .target " + std::string(target) + " became sm_90");
    std::string line(source_.substr(s.begin, s.end - s.begin));
    line.replace(at, end - at, "sm_90");
    replace(s, line);
    return ok();
  }

  // CUDA 13.0's ptxas reads .version up to 9.0 (docs/tcgen05-rules.md §Targets); newer modules
  // (CuTe DSL writes 9.4) are lowered to 9.0, which works as long as they use nothing newer.
  Status version(const Statement& s, std::string_view text) {
    const std::string_view value = trim(text.substr(8));
    const size_t dot = value.find('.');
    if (dot == std::string_view::npos) return malformed(s, ".version without major.minor");
    const int major = std::atoi(std::string(value.substr(0, dot)).c_str());
    const int minor = std::atoi(std::string(value.substr(dot + 1)).c_str());
    if (major < 9 || (major == 9 && minor == 0)) return ok();
    notes_.push_back(".version " + std::string(value) +
                     " lowered to 9.0, the newest CUDA 13.0's ptxas reads; a feature newer than "
                     "PTX ISA 9.0 will fail there");
    replace(s, ".version 9.0");
    return ok();
  }

  // ---- instructions ----

  Status instruction(const Instruction& in, const Statement& s) {
    const std::string_view op = in.opcode;
    const std::string_view head = op.substr(0, op.find('.'));
    std::optional<Family> family;
    Lowered lowered = std::string();
    if (head == "mbarrier" && help_at_waits_ &&
        (op.starts_with("mbarrier.try_wait") || op.starts_with("mbarrier.test_wait"))) {
      // The MMAs are computed by the threads that wait (kernels/emu/tcgen05_emulation.cuh "The
      // MMA queue"): the wait stays, with a call before it (inside a wait loop, each try helps).
      count(Family::kMbarrierWait);
      assign_id(in);
      insert_before(s, "{ call tmemjit_emu_help, (); } ");
      return ok();
    }
    if (head == "tcgen05") {
      lowered = tcgen05(in, family);
    } else if (head == "clusterlaunchcontrol") {
      family = Family::kClusterLaunchControl;
      lowered = cluster_launch_control(in);
    } else if (op.ends_with(".f32x2") && is_f32x2_arithmetic(head)) {
      family = Family::kF32x2;
      lowered = f32x2(in);
    } else if ((head == "min" || head == "max") && op.ends_with(".f32") &&
               split_operands(in.operand_text).size() == 4) {
      family = head == "min" ? Family::kMin3 : Family::kMax3;
      lowered = min_max3(in);
    } else if (head == "setmaxnreg") {
      // sm_90a only, and a register-allocation request, not a computation: the emulation's
      // target is sm_90 (its cubins load on every 9.x device; its PTX JITs on later ones), where
      // ptxas sizes every warp's registers for the whole kernel instead (PTX ISA §9.7.17.1).
      family = Family::kSetMaxNReg;
      assign_id(in);  // every lowered statement has an id
      // A block comment: a // one would swallow what follows on the line (a statement, the label
      // of a guarded replacement).
      lowered = std::string("/* setmaxnreg: dropped for sm_90 (a register-allocation hint) */");
    } else if (head == "cp" && op.starts_with("cp.async.bulk.tensor") &&
               op.find(".cta_group::") != std::string_view::npos) {
      family = Family::kTensorCopy;
      lowered = tensor_copy(in);
    } else if (const char* why = unsupported_reason(head, op)) {
      return refusal(in, why);
    } else {
      return ok();
    }
    if (!lowered) return std::move(lowered).error();
    count(*family);
    replace(s, guarded(in, *lowered));
    return ok();
  }

  // PTX ISA §9.7.3 (add, sub, mul, fma on .f32x2, sm_100+).
  static bool is_f32x2_arithmetic(std::string_view head) {
    return head == "add" || head == "sub" || head == "mul" || head == "fma";
  }

  // A guarded statement stays guarded: a branch around its replacement (PTX ISA §9.7.9.2 bra).
  std::string guarded(const Instruction& in, const std::string& lowered) {
    const std::string id =
        "/* tmemjit " + std::to_string(next_id_ - 1) + ": " + std::string(in.opcode) + " */ ";
    if (in.guard.empty()) return id + lowered;
    const std::string skip = "$tmemjit_skip_" + std::to_string(labels_++);
    const std::string inverse =
        in.guard.starts_with('!') ? std::string(in.guard.substr(1)) : "!" + std::string(in.guard);
    return id + "@" + inverse + " bra " + skip + "; " + lowered + " " + skip + ":";
  }

  // Gives the statement its id (instructions[id - first_id]).
  std::uint32_t assign_id(const Instruction& in) {
    instructions_.push_back(std::string(in.opcode) + " (PTX line " + std::to_string(in.line) + ")");
    return next_id_++;
  }

  void count(Family family) { ++counts_[static_cast<size_t>(family)]; }

  static constexpr const char* kStandaloneEnter = " { call tmemjit_emu_standalone_enter, (); }";

  static bool is_entry(std::string_view header) {
    const size_t at = header.find(".entry");
    return at != std::string_view::npos && (at + 6 == header.size() || is_space(header[at + 6]));
  }

  void insert_after(const Statement& s, const std::string& text) {
    out_.append(source_.substr(copied_, s.end - copied_));
    out_ += text;
    copied_ = s.end;
    count(Family::kStandaloneEntry);
  }

  void insert_before(const Statement& s, const std::string& text) {
    out_.append(source_.substr(copied_, s.begin - copied_));
    out_ += text;
    copied_ = s.begin;
  }

  void replace(const Statement& s, const std::string& text) {
    out_.append(source_.substr(copied_, s.begin - copied_));
    out_ += text;
    out_.append(count_newlines(source_.substr(s.begin, s.end - s.begin)), '\n');
    copied_ = s.end;
  }

  Error refusal(const Instruction& in, const std::string& why) const {
    return Error(ErrorCode::kUsage,
                 prefix() + name_ + ", line " + std::to_string(in.line) + ": '" +
                     quote_statement(in.text) + "' cannot be emulated on sm_90: " + why,
                 std::vector<ErrorDetail>{{"line", std::to_string(in.line)},
                                          {"operand", std::string(in.opcode)}});
  }

  // The block's conversions failed: the statement's operands are not what the form takes.
  Lowered finish_block(const Instruction& in, const Block& b) const {
    if (!b.failure().empty()) return refusal(in, b.failure());
    return b.text();
  }

  // Rejects qualifiers outside `known` (a newer form the lowering has not learned).
  std::optional<Error> unknown_qualifier(const Instruction& in,
                                         const std::vector<std::string_view>& tokens,
                                         std::initializer_list<std::string_view> known) const {
    for (size_t i = 2; i < tokens.size(); ++i) {
      if (std::find(known.begin(), known.end(), tokens[i]) != known.end()) continue;
      std::string allowed;
      for (std::string_view k : known) allowed += (allowed.empty() ? "." : ", .") + std::string(k);
      return refusal(in, "qualifier '." + std::string(tokens[i]) + "' of " +
                             std::string(tokens[0]) + "." + std::string(tokens[1]) +
                             " is not emulated; the emulation knows " + allowed);
    }
    return std::nullopt;
  }

  std::optional<Error> operand_count(const Instruction& in,
                                     const std::vector<std::string_view>& operands,
                                     size_t expected) const {
    if (operands.size() == expected) return std::nullopt;
    return refusal(in, "expected " + std::to_string(expected) + " operands, got " +
                           std::to_string(operands.size()));
  }

  // ---- tcgen05 (PTX ISA §9.7.16) ----

  Lowered tcgen05(const Instruction& in, std::optional<Family>& family) {
    const std::vector<std::string_view> tokens = split_qualifiers(in.opcode);
    const std::string_view verb = tokens.size() > 1 ? tokens[1] : std::string_view();
    if (verb == "ld" || verb == "st") {
      family = verb == "ld" ? Family::kLd : Family::kSt;
      return transfer(in);
    }
    static constexpr std::pair<std::string_view, Family> kVerbs[] = {
        {"alloc", Family::kAlloc},
        {"dealloc", Family::kDealloc},
        {"relinquish_alloc_permit", Family::kRelinquish},
        {"wait::ld", Family::kWait},
        {"wait::st", Family::kWait},
        {"fence::before_thread_sync", Family::kFence},
        {"fence::after_thread_sync", Family::kFence},
        {"mma", Family::kMma},
        {"commit", Family::kCommit},
        {"cp", Family::kCp},
        {"shift", Family::kShift},
    };
    for (const auto& [name, f] : kVerbs) {
      if (verb != name) continue;
      family = f;
      switch (f) {
        case Family::kAlloc:
          return alloc(in, tokens);
        case Family::kDealloc:
          return dealloc(in, tokens);
        case Family::kRelinquish:
          return relinquish(in, tokens);
        case Family::kWait:
          return wait(in, tokens);
        case Family::kFence:
          return fence(in, tokens);
        case Family::kMma:
          return mma(in, tokens);
        case Family::kCommit:
          return commit(in, tokens);
        case Family::kCp:
          return copy(in, tokens);
        default:
          return shift(in, tokens);
      }
    }
    return refusal(in, "tcgen05." + std::string(verb) +
                           " is not an instruction the emulation knows (it knows alloc, dealloc, "
                           "relinquish_alloc_permit, ld, st, wait, fence, mma, commit, cp, shift)");
  }

  // A call of tmemjit_emu_NAME with the block's params (ABI: one param per argument, in order).
  static void call(Block& b, const std::string& function, const std::vector<std::string>& params,
                   std::string_view guard = {}) {
    std::string text = guard.empty() ? "call " : "@" + std::string(guard) + " call ";
    text += function + ", (";
    for (size_t i = 0; i < params.size(); ++i) text += (i ? ", " : "") + params[i];
    b.emit(text + ")");
  }

  std::string id_text(const Instruction& in) { return std::to_string(assign_id(in)); }

  // §9.7.16.7.1 tcgen05.alloc.cta_group.sync.aligned{.shared::cta}.b32 [dst], nCols;
  Lowered alloc(const Instruction& in, const std::vector<std::string_view>& tokens) {
    if (auto e = unknown_qualifier(
            in, tokens, {"cta_group::1", "cta_group::2", "sync", "aligned", "shared::cta", "b32"}))
      return *e;
    const auto ops = split_operands(in.operand_text);
    if (auto e = operand_count(in, ops, 2)) return *e;
    Block b(registers_);
    // Without .shared::cta, dst is a generic address in the shared window.
    const std::string dst =
        has_token(tokens, "shared::cta") ? b.address(ops[0], false) : b.generic_to_shared(ops[0]);
    const std::string columns = b.u32(ops[1]);
    call(b, "tmemjit_emu_alloc",
         {b.param(dst, false), b.param(columns, false),
          b.param(std::to_string(cta_group_of(tokens)), false), b.param(id_text(in), false)});
    return finish_block(in, b);
  }

  // tcgen05.dealloc.cta_group.sync.aligned.b32 taddr, nCols;
  Lowered dealloc(const Instruction& in, const std::vector<std::string_view>& tokens) {
    if (auto e = unknown_qualifier(in, tokens,
                                   {"cta_group::1", "cta_group::2", "sync", "aligned", "b32"}))
      return *e;
    const auto ops = split_operands(in.operand_text);
    if (auto e = operand_count(in, ops, 2)) return *e;
    Block b(registers_);
    const std::string taddr = b.u32(ops[0]), columns = b.u32(ops[1]);
    call(b, "tmemjit_emu_dealloc",
         {b.param(taddr, false), b.param(columns, false),
          b.param(std::to_string(cta_group_of(tokens)), false), b.param(id_text(in), false)});
    return finish_block(in, b);
  }

  // tcgen05.relinquish_alloc_permit.cta_group.sync.aligned;
  Lowered relinquish(const Instruction& in, const std::vector<std::string_view>& tokens) {
    if (auto e = unknown_qualifier(in, tokens, {"cta_group::1", "cta_group::2", "sync", "aligned"}))
      return *e;
    if (!in.operand_text.empty()) return refusal(in, "expected no operands");
    assign_id(in);
    Block b(registers_);
    call(b, "tmemjit_emu_relinquish", {b.param(std::to_string(cta_group_of(tokens)), false)});
    return finish_block(in, b);
  }

  // §9.7.16.8.5 tcgen05.wait: the emulated ld/st are synchronous per thread; the fence and the
  // warp barrier make the cells one lane wrote visible to the lanes of the warp that read them.
  Lowered wait(const Instruction& in, const std::vector<std::string_view>& tokens) {
    if (auto e = unknown_qualifier(in, tokens, {"sync", "aligned"})) return *e;
    assign_id(in);
    return std::string("{ membar.cta; bar.warp.sync -1; }");
  }

  // §9.7.16.11.1 tcgen05.fence: TMEM is global memory, written by other threads (the MMA's issuer,
  // perhaps in the peer CTA): a gpu-scope fence orders it around the thread synchronization.
  Lowered fence(const Instruction& in, const std::vector<std::string_view>& tokens) {
    if (auto e = unknown_qualifier(in, tokens, {})) return *e;
    assign_id(in);
    return std::string("{ fence.acq_rel.gpu; }");
  }

  // §9.7.16.10.9 tcgen05.mma.cta_group.kind [d], a-desc|[a-tmem], b-desc, idesc,
  //     {disable-output-lane,} enable-input-d {, scale-input-d};
  Lowered mma(const Instruction& in, const std::vector<std::string_view>& tokens) {
    if (auto e = mma_qualifiers(in, tokens)) return *e;
    const auto ops = split_operands(in.operand_text);
    if (ops.size() < 5) return refusal(in, "expected at least 5 operands");
    size_t next = 4;
    const std::string_view mask = ops[next].starts_with('{') ? ops[next++] : std::string_view();
    if (next >= ops.size()) return refusal(in, "enable-input-d is missing");
    const std::string_view enable_d = ops[next++];
    if (next < ops.size()) {
      // scale-input-d: D = A*B + D * 2^-scale; 0 is the plain form.
      const auto scale = parse_u32_literal(ops[next]);
      if (!scale || *scale != 0)
        return refusal(in, "scale-input-d " + std::string(ops[next]) +
                               " is not emulated (only 0, the plain D += A*B)");
      ++next;
    }
    if (next != ops.size()) return refusal(in, "unexpected operands after enable-input-d");
    const bool a_in_tmem = ops[1].starts_with('[');
    const std::uint32_t flags = static_cast<std::uint32_t>(cta_group_of(tokens)) |
                                (mma_kind(tokens) << 2) | (a_in_tmem ? 1u << 6 : 0u);
    Block b(registers_);
    const std::string d = b.address(ops[0], false);
    const std::string a_desc = a_in_tmem ? "0" : b.u64(ops[1]);
    const std::string a_taddr = a_in_tmem ? b.address(ops[1], false) : "0";
    const std::string b_desc = b.u64(ops[2]), idesc = b.u32(ops[3]);
    const std::string flag = b.select(enable_d, flags | 1u << 7, flags);
    const std::string id = id_text(in);
    std::vector<std::string> params = {b.param(d, false),       b.param(a_desc, true),
                                       b.param(a_taddr, false), b.param(b_desc, true),
                                       b.param(idesc, false),   b.param(flag, false),
                                       b.param(id, false)};
    auto skip = output_lane_check(in, b, mask, id);
    if (!skip) return std::move(skip).error();
    call(b, "tmemjit_emu_mma", params, *skip);
    return finish_block(in, b);
  }

  std::optional<Error> mma_qualifiers(const Instruction& in,
                                      const std::vector<std::string_view>& tokens) const {
    for (size_t i = 2; i < tokens.size(); ++i) {
      const std::string_view t = tokens[i];
      if (t == "ws") return refusal(in, "the weight-stationary MMA (.ws) is not emulated");
      if (t == "sp") return refusal(in, "the sparse MMA (.sp) is not emulated");
      if (t == "ashift") return refusal(in, ".ashift (A shifted down a row) is not emulated");
      if (t == "block_scale" || t.starts_with("scale_vec::") || t == "block16" || t == "block32" ||
          t == "kind::mxf8f6f4" || t == "kind::mxf4" || t == "kind::mxf4nvf4")
        return refusal(in,
                       "block-scaled MMA kinds (mxf8f6f4, mxf4, mxf4nvf4) are not emulated yet");
      // The collector buffer only keeps A for a later MMA: reading A from memory each time is the
      // same unless the kernel overwrote A between fill and use, which ::use/::lastuse allow.
      if (t == "collector::a::use" || t == "collector::a::lastuse")
        return refusal(in,
                       ".collector::a::use/::lastuse read A from the collector buffer, which "
                       "the emulation does not keep");
    }
    if (auto e = unknown_qualifier(
            in, tokens,
            {"cta_group::1", "cta_group::2", "kind::f16", "kind::tf32", "kind::f8f6f4", "kind::i8",
             "collector::a::fill", "collector::a::discard"}))
      return e;
    if (cta_group_of(tokens) == 0) return refusal(in, ".cta_group::1 or ::2 is missing");
    if (mma_kind_token(tokens).empty()) return refusal(in, ".kind is missing");
    return std::nullopt;
  }

  static std::string_view mma_kind_token(const std::vector<std::string_view>& tokens) {
    for (std::string_view t : tokens)
      if (t.starts_with("kind::")) return t;
    return {};
  }

  // ABI flags bits 2-5: 0 f16, 1 tf32, 2 f8f6f4, 3 i8.
  static std::uint32_t mma_kind(const std::vector<std::string_view>& tokens) {
    const std::string_view kind = mma_kind_token(tokens);
    if (kind == "kind::tf32") return 1;
    if (kind == "kind::f8f6f4") return 2;
    if (kind == "kind::i8") return 3;
    return 0;
  }

  // disable-output-lane (a vector of 4 or 8 u32; CuTe passes zeros): the emulated MMA writes every
  // lane, so a non-zero mask is refused when it is an immediate and checked at run time otherwise
  // (the MMA is skipped and tmemjit_emu_unsupported records why). Returns the guard of the MMA
  // call.
  Result<std::string> output_lane_check(const Instruction& in, Block& b, std::string_view mask,
                                        const std::string& id) {
    if (mask.empty()) return std::string();
    std::vector<std::string> registers;
    for (std::string_view word : split_operands(mask.substr(1, mask.size() - 2))) {
      if (!is_immediate(word)) {
        registers.push_back(b.u32(word));
        continue;
      }
      const auto value = parse_u32_literal(word);
      if (!value || *value != 0)
        return refusal(in, "a non-zero disable-output-lane mask is not emulated");
    }
    if (registers.empty()) return std::string();
    std::string any = registers[0];
    for (size_t i = 1; i < registers.size(); ++i) {
      if (registers[i] == registers[i - 1]) continue;  // CuTe repeats one register
      const std::string t = b.temp32();
      b.emit("or.b32 " + t + ", " + any + ", " + registers[i]);
      any = t;
    }
    const std::string nonzero = b.temp_pred();
    b.emit("setp.ne.u32 " + nonzero + ", " + any + ", 0");
    const std::string what = b.param(std::to_string(kEmuUnsupportedDisableOutputLane), false);
    call(b, "tmemjit_emu_unsupported", {b.param(id, false), what}, nonzero);
    needs_unsupported_ = true;
    return "!" + nonzero;
  }

  // §9.7.16.10.10 tcgen05.commit.cta_group.mbarrier::arrive::one{.shared::cluster}
  //     {.multicast::cluster}.b64 [mbar] {, ctaMask};
  Lowered commit(const Instruction& in, const std::vector<std::string_view>& tokens) {
    if (auto e = unknown_qualifier(in, tokens,
                                   {"cta_group::1", "cta_group::2", "mbarrier::arrive::one",
                                    "shared::cluster", "multicast::cluster", "b64"}))
      return *e;
    const bool multicast = has_token(tokens, "multicast::cluster");
    const auto ops = split_operands(in.operand_text);
    if (auto e = operand_count(in, ops, multicast ? 2 : 1)) return *e;
    const std::uint32_t flags = static_cast<std::uint32_t>(cta_group_of(tokens)) |
                                (has_token(tokens, "shared::cluster") ? 1u << 2 : 0u) |
                                (multicast ? 1u << 3 : 0u);
    assign_id(in);
    Block b(registers_);
    const std::string mbar = b.address(ops[0], true);
    const std::string mask = multicast ? b.u32(ops[1]) : "0";
    call(b, "tmemjit_emu_commit",
         {b.param(mbar, true), b.param(std::to_string(flags), false), b.param(mask, false)});
    return finish_block(in, b);
  }

  // §9.7.16.9.1 tcgen05.cp.cta_group.shape{.multicast}{.dst_src_fmt} [taddr], s-desc;
  Lowered copy(const Instruction& in, const std::vector<std::string_view>& tokens) {
    for (std::string_view t : tokens)
      if (t == "b8x16" || t == "b6x16_p32" || t == "b4x16_p64")
        return refusal(in,
                       "tcgen05.cp with decompression (.b8x16.b6x16_p32, .b8x16.b4x16_p64) is "
                       "not emulated yet");
    if (auto e =
            unknown_qualifier(in, tokens,
                              {"cta_group::1", "cta_group::2", "128x256b", "4x256b", "128x128b",
                               "64x128b", "32x128b", "warpx2::02_13", "warpx2::01_23", "warpx4"}))
      return *e;
    const auto shape = copy_shape(tokens);
    const std::uint32_t multicast = has_token(tokens, "warpx2::02_13")   ? 1
                                    : has_token(tokens, "warpx2::01_23") ? 2
                                    : has_token(tokens, "warpx4")        ? 3
                                                                         : 0;
    // 64x128b goes with .warpx2 and 32x128b with .warpx4, the others with neither.
    const std::uint32_t expected = shape == 3 ? 1 : shape == 4 ? 3 : 0;
    if (!shape || (multicast == 0) != (expected == 0) || (expected == 3 && multicast != 3))
      return refusal(in,
                     "the shape and the multicast do not match (.64x128b takes .warpx2::02_13 "
                     "or ::01_23, .32x128b takes .warpx4, the others neither)");
    const auto ops = split_operands(in.operand_text);
    if (auto e = operand_count(in, ops, 2)) return *e;
    const std::uint32_t flags =
        static_cast<std::uint32_t>(cta_group_of(tokens)) | (*shape << 2) | (multicast << 6);
    Block b(registers_);
    const std::string taddr = b.address(ops[0], false), desc = b.u64(ops[1]);
    call(b, "tmemjit_emu_cp",
         {b.param(taddr, false), b.param(desc, true), b.param(std::to_string(flags), false),
          b.param(id_text(in), false)});
    return finish_block(in, b);
  }

  // ABI shape codes: 0 128x256b, 1 4x256b, 2 128x128b, 3 64x128b, 4 32x128b.
  static std::optional<std::uint32_t> copy_shape(const std::vector<std::string_view>& tokens) {
    constexpr std::array<std::string_view, 5> kShapes = {"128x256b", "4x256b", "128x128b",
                                                         "64x128b", "32x128b"};
    for (std::uint32_t i = 0; i < kShapes.size(); ++i)
      if (has_token(tokens, kShapes[i])) return i;
    return std::nullopt;
  }

  // §9.7.16.9.2 tcgen05.shift.cta_group.down [taddr];
  Lowered shift(const Instruction& in, const std::vector<std::string_view>& tokens) {
    if (auto e = unknown_qualifier(in, tokens, {"cta_group::1", "cta_group::2", "down"})) return *e;
    const auto ops = split_operands(in.operand_text);
    if (auto e = operand_count(in, ops, 1)) return *e;
    Block b(registers_);
    const std::string taddr = b.address(ops[0], false);
    call(b, "tmemjit_emu_shift",
         {b.param(taddr, false), b.param(std::to_string(cta_group_of(tokens)), false),
          b.param(id_text(in), false)});
    return finish_block(in, b);
  }

  // §9.7.16.8.3-4 tcgen05.ld / tcgen05.st / tcgen05.ld.red: a call of the form's generated
  // function.
  Lowered transfer(const Instruction& in) {
    auto parsed = transfer_opcode(in);
    if (!parsed) return refusal(in, parsed.error().message());
    const Opcode& op = *parsed;
    const auto ops = split_operands(in.operand_text);
    TransferOperands t;
    if (auto e = transfer_operands(in, op, ops, t)) return *e;
    const std::string function = transfer_function(op);
    if (!forms_.contains(function)) {  // the image model of a new form (library_source uses it)
      if (auto split = split_image(op); !split) return refusal(in, split.error().message());
      forms_.emplace(function, op);
    }
    Block b(registers_);
    std::vector<std::string> params = {b.param(b.address(t.taddr, false), false)};
    if (op.is_split()) params.push_back(b.param(std::to_string(t.imm), false));
    if (!op.is_load()) params.push_back(store_aggregate(b, t.vector));
    params.push_back(b.param(id_text(in), false));
    if (op.is_load())
      load_call(b, function, params, t, returned_words(op));
    else
      call(b, function, params);
    return finish_block(in, b);
  }

  // The form of a tcgen05.ld/st. ptxas 13.0 takes it without .aligned, which the PTX ISA requires
  // (docs/tcgen05-rules.md §Syntax, rule R8): the user's sm_100 code assembles so, and the
  // emulation reads it as the aligned form, with a note.
  Result<Opcode> transfer_opcode(const Instruction& in) {
    auto parsed = Opcode::parse(in.opcode);
    if (parsed || in.opcode.find(".aligned") != std::string_view::npos) return parsed;
    std::string aligned(in.opcode);
    const size_t sync = aligned.find(".sync");
    if (sync == std::string::npos) return parsed;
    aligned.insert(sync + 5, ".aligned");
    auto retried = Opcode::parse(aligned);
    if (!retried) return parsed;
    if (!noted_aligned_)
      notes_.push_back("line " + std::to_string(in.line) + ": " + std::string(in.opcode) +
                       " lacks .aligned, which the PTX ISA requires; lowered as " + aligned);
    noted_aligned_ = true;
    return retried;
  }

  struct TransferOperands {
    std::vector<std::string_view> vector;
    std::string_view redval, taddr;
    std::uint32_t imm = 0;
  };

  // ld: {r..}, [taddr] {, imm}; ld.red: {r..}, redval, [taddr] {, imm}; st: [taddr] {, imm}, {r..}.
  std::optional<Error> transfer_operands(const Instruction& in, const Opcode& op,
                                         const std::vector<std::string_view>& ops,
                                         TransferOperands& t) const {
    const size_t fixed = 2 + (op.reduces() ? 1 : 0);
    if (ops.size() != fixed && ops.size() != fixed + 1)
      return refusal(in, "expected " + std::to_string(fixed) + " or " + std::to_string(fixed + 1) +
                             " operands");
    const bool has_imm = ops.size() == fixed + 1;
    const std::string_view vector = op.is_load() ? ops[0] : ops.back();
    t.taddr = op.is_load() ? ops[op.reduces() ? 2 : 1] : ops[0];
    if (op.reduces()) t.redval = ops[1];
    if (has_imm) {
      const std::string_view imm = op.is_load() ? ops.back() : ops[1];
      const auto value = parse_u32_literal(imm);
      if (!value) return refusal(in, "immHalfSplitoff " + std::string(imm) + " is not an integer");
      t.imm = *value;
    }
    if (vector.size() < 2 || vector.front() != '{' || vector.back() != '}')
      return refusal(in, "the registers are not a vector {..}");
    t.vector = split_operands(vector.substr(1, vector.size() - 2));
    if (auto e = op.check_operands(static_cast<int>(t.vector.size()), has_imm, op.reduces()))
      return refusal(in, e->message());
    return std::nullopt;
  }

  // st's registers as the aggregate parameter (struct tmemjit_emu_u32xN by value).
  static std::string store_aggregate(Block& b, const std::vector<std::string_view>& vector) {
    const std::string name = b.aggregate(static_cast<int>(vector.size()));
    for (size_t i = 0; i < vector.size(); ++i)
      b.emit("st.param.b32 [" + name + "+" + std::to_string(4 * i) + "], " +
             std::string(vector[i]));
    return name;
  }

  // ld: call with the aggregate return, then each register (and redval) from it.
  static void load_call(Block& b, const std::string& function,
                        const std::vector<std::string>& params, const TransferOperands& t,
                        int words) {
    const std::string ret = b.aggregate(words);
    std::string text = "call (" + ret + "), " + function + ", (";
    for (size_t i = 0; i < params.size(); ++i) text += (i ? ", " : "") + params[i];
    b.emit(text + ")");
    for (size_t i = 0; i < t.vector.size(); ++i)
      b.emit("ld.param.b32 " + std::string(t.vector[i]) + ", [" + ret + "+" +
             std::to_string(4 * i) + "]");
    if (!t.redval.empty())
      b.emit("ld.param.b32 " + std::string(t.redval) + ", [" + ret + "+" +
             std::to_string(4 * t.vector.size()) + "]");
  }

  // ---- clusterlaunchcontrol (PTX ISA §9.7.13.x, sm_100) ----

  Lowered cluster_launch_control(const Instruction& in) {
    const std::vector<std::string_view> tokens = split_qualifiers(in.opcode);
    const std::string_view verb = tokens.size() > 1 ? tokens[1] : std::string_view();
    if (verb == "try_cancel") return try_cancel(in, tokens);
    if (verb == "query_cancel") return query_cancel(in, tokens);
    return refusal(in, "clusterlaunchcontrol." + std::string(verb) +
                           " is not emulated (try_cancel and query_cancel are)");
  }

  // clusterlaunchcontrol.try_cancel.async{.shared::cta}.mbarrier::complete_tx::bytes
  //     {.multicast::cluster::all}.b128 [addr], [mbar];  "not cancelled" is a legal answer.
  Lowered try_cancel(const Instruction& in, const std::vector<std::string_view>& tokens) {
    if (auto e = unknown_qualifier(in, tokens,
                                   {"async", "shared::cta", "mbarrier::complete_tx::bytes",
                                    "multicast::cluster::all", "b128"}))
      return *e;
    const auto ops = split_operands(in.operand_text);
    if (auto e = operand_count(in, ops, 2)) return *e;
    assign_id(in);
    Block b(registers_);
    const bool shared = has_token(tokens, "shared::cta");
    const std::string result = shared ? b.address(ops[0], false) : b.generic_to_shared(ops[0]);
    const std::string mbar = shared ? b.address(ops[1], false) : b.generic_to_shared(ops[1]);
    const std::string all = has_token(tokens, "multicast::cluster::all") ? "1" : "0";
    call(b, "tmemjit_emu_try_cancel",
         {b.param(result, false), b.param(mbar, false), b.param(all, false)});
    return finish_block(in, b);
  }

  // query_cancel of a "not cancelled" response: is_canceled is false; the ctaid is not defined by
  // the ISA then and reads 0.
  Lowered query_cancel(const Instruction& in, const std::vector<std::string_view>& tokens) {
    const auto ops = split_operands(in.operand_text);
    if (auto e = operand_count(in, ops, 2)) return *e;
    assign_id(in);
    Block b(registers_);
    if (has_token(tokens, "is_canceled")) {
      if (auto e = unknown_qualifier(in, tokens, {"is_canceled", "pred", "b128"})) return *e;
      if (ops[0] != "_") b.emit("mov.pred " + std::string(ops[0]) + ", 0");
      return finish_block(in, b);
    }
    if (auto e = unknown_qualifier(in, tokens,
                                   {"get_first_ctaid", "get_first_ctaid::x", "get_first_ctaid::y",
                                    "get_first_ctaid::z", "v4", "b32", "b128"}))
      return *e;
    const std::string_view dst = ops[0];
    const std::vector<std::string_view> words = dst.starts_with('{')
                                                    ? split_operands(dst.substr(1, dst.size() - 2))
                                                    : std::vector<std::string_view>{dst};
    for (std::string_view word : words)
      if (word != "_") b.emit("mov.b32 " + std::string(word) + ", 0");  // "_": the sink
    return finish_block(in, b);
  }

  // ---- packed and three-source arithmetic ----

  // add/sub/mul{.rnd}{.ftz}.f32x2, fma.rnd{.ftz}.f32x2 (PTX ISA §9.7.3, sm_100): the same
  // operation on each 32-bit half, with the same rounding and flush qualifiers.
  Lowered f32x2(const Instruction& in) {
    const std::vector<std::string_view> tokens = split_qualifiers(in.opcode);
    std::string scalar(tokens[0]);
    for (size_t i = 1; i + 1 < tokens.size(); ++i) {
      const std::string_view t = tokens[i];
      if (t != "rn" && t != "rz" && t != "rm" && t != "rp" && t != "ftz")
        return refusal(in, "qualifier '." + std::string(t) +
                               "' of a .f32x2 operation is not "
                               "emulated; the emulation knows .rn, .rz, .rm, .rp, .ftz");
      scalar += "." + std::string(t);
    }
    scalar += ".f32";
    const auto ops = split_operands(in.operand_text);
    const size_t sources = tokens[0] == "fma" ? 3 : 2;
    if (auto e = operand_count(in, ops, sources + 1)) return *e;
    assign_id(in);
    Block b(registers_);
    std::vector<std::array<std::string, 2>> halves;
    for (size_t i = 1; i <= sources; ++i) halves.push_back(unpack_halves(b, ops[i]));
    std::array<std::string, 2> result = {b.temp32(), b.temp32()};
    for (size_t h = 0; h < 2; ++h) {
      std::string text = scalar + " " + result[h];
      for (const auto& source : halves) text += ", " + source[h];
      b.emit(text);
    }
    b.emit("mov.b64 " + std::string(ops[0]) + ", {" + result[0] + ", " + result[1] + "}");
    return finish_block(in, b);
  }

  // The two 32-bit halves of a .b64 operand, low first (mov.b64 unpacks low into the first).
  static std::array<std::string, 2> unpack_halves(Block& b, std::string_view operand) {
    std::string wide(operand);
    if (is_immediate(operand)) {
      wide = b.temp64();
      b.emit("mov.b64 " + wide + ", " + std::string(operand));
    } else if (b.register_bits(operand) != 64) {
      b.fail("operand " + std::string(operand) + " of a .f32x2 operation is not a 64-bit register");
    }
    std::array<std::string, 2> halves = {b.temp32(), b.temp32()};
    b.emit("mov.b64 {" + halves[0] + ", " + halves[1] + "}, " + wide);
    return halves;
  }

  // min/max{.ftz}{.NaN}{.abs}.f32 d, a, b, c (PTX ISA §9.7.3.x, sm_100): two two-source
  // operations, which give the same value: without .NaN a NaN source is dropped, with .NaN it
  // wins, and -0.0 < +0.0 either way; .abs takes |x| of each source first.
  Lowered min_max3(const Instruction& in) {
    const std::vector<std::string_view> tokens = split_qualifiers(in.opcode);
    std::string scalar(tokens[0]);
    bool abs = false, ftz = false;
    for (size_t i = 1; i + 1 < tokens.size(); ++i) {
      const std::string_view t = tokens[i];
      if (t == "abs") {
        abs = true;
        continue;
      }
      if (t != "ftz" && t != "NaN")
        return refusal(in, "qualifier '." + std::string(t) + "' of a three-source " +
                               std::string(tokens[0]) +
                               " is not emulated; the emulation knows "
                               ".ftz, .NaN, .abs");
      ftz = ftz || t == "ftz";
      scalar += "." + std::string(t);
    }
    scalar += ".f32";
    const auto ops = split_operands(in.operand_text);
    assign_id(in);
    Block b(registers_);
    std::array<std::string, 3> sources = {std::string(ops[1]), std::string(ops[2]),
                                          std::string(ops[3])};
    if (abs)
      for (std::string& source : sources) {
        const std::string t = b.temp32();
        b.emit(std::string(ftz ? "abs.ftz.f32 " : "abs.f32 ") + t + ", " + source);
        source = t;
      }
    const std::string first = b.temp32();
    b.emit(scalar + " " + first + ", " + sources[0] + ", " + sources[1]);
    b.emit(scalar + " " + std::string(ops[0]) + ", " + first + ", " + sources[2]);
    return finish_block(in, b);
  }

  // ---- TMA ----

  // cp.async.bulk.tensor with .cta_group (PTX ISA §9.7.9.25.5.1, sm_100): ::1 signals the
  // barrier of the destination's CTA, which is what the plain sm_90 TMA does; ::2 may signal the
  // peer CTA's barrier, which sm_90 cannot (docs/emulation.md §TMA .cta_group::2): there the TMA
  // completes on a shadow barrier of the issuing CTA, waited on, and its bytes are then completed
  // on the peer's barrier (mbarrier.complete_tx through the cluster address).
  Lowered tensor_copy(const Instruction& in) {
    const std::vector<std::string_view> tokens = split_qualifiers(in.opcode);
    const bool pair = has_token(tokens, "cta_group::2");
    if (!pair && !has_token(tokens, "cta_group::1"))
      return refusal(in, "unexpected .cta_group qualifier");
    if (pair && in.opcode.find(".im2col") != std::string_view::npos)
      return refusal(in, "TMA with .cta_group::2 in an im2col mode is not emulated yet");
    assign_id(in);
    std::string opcode(in.opcode);
    const std::string_view qualifier = pair ? ".cta_group::2" : ".cta_group::1";
    opcode.erase(opcode.find(qualifier), qualifier.size());
    std::string operands(in.operand_text);
    for (char& c : operands)  // one line, as every replacement (its newlines are added back)
      if (c == '\n' || c == '\r') c = ' ';
    if (!pair) return "{ " + opcode + " " + operands + "; }";
    if (has_token(tokens, "multicast::cluster")) return multicast_tensor_copy(in, opcode, operands);
    return peer_tensor_copy(in, opcode, operands);
  }

  // The .cta_group::2 multicast load (docs/emulation.md §TMA .cta_group::2): the box into this
  // CTA alone on the shadow barrier, then the library copies it to the mask's other CTAs and
  // completes each destination's bytes on its pair's barrier.
  Lowered multicast_tensor_copy(const Instruction& in, std::string opcode,
                                const std::string& operands) {
    const auto ops = split_operands(operands);
    if (ops.size() < 4)
      return refusal(in, "expected [dst], [tensorMap, {coordinates}], [mbar], ctaMask");
    const std::string_view multicast = ".multicast::cluster";
    opcode.erase(opcode.find(multicast), multicast.size());
    Block b(registers_);
    const std::string dst = b.address(ops[0], false), mbar = b.address(ops[2], false);
    const std::string mask = b.u32(ops[3]);
    auto map = tensor_map_address(b, ops[1]);
    if (!map) return refusal(in, map.error().message());
    const std::string id = std::to_string(next_id_ - 1);
    const std::string begin_params =
        b.param(*map, true) + ", " + b.param(mask, false) + ", " + b.param(id, false);
    b.declare(".param .b32 tmemjit_r0");
    b.emit("call (tmemjit_r0), tmemjit_emu_tma_multicast_begin, (" + begin_params + ")");
    const std::string shadow = b.temp32();
    b.emit("ld.param.b32 " + shadow + ", [tmemjit_r0]");
    std::string unicast = std::string(ops[0]) + ", " + std::string(ops[1]) + ", [" + shadow + "]";
    for (size_t i = 4; i < ops.size(); ++i) unicast += ", " + std::string(ops[i]);  // cache hint
    b.emit(opcode + " " + unicast);
    call(b, "tmemjit_emu_tma_multicast_end",
         {b.param(shadow, false), b.param(dst, false), b.param(mbar, false), b.param(mask, false),
          b.param(id, false)});
    return finish_block(in, b);
  }

  // The .cta_group::2 load: the plain TMA where the barrier is this CTA's, else the shadow path.
  Lowered peer_tensor_copy(const Instruction& in, const std::string& opcode,
                           const std::string& operands) {
    const auto ops = split_operands(operands);
    if (ops.size() < 3) return refusal(in, "expected [dst], [tensorMap, {coordinates}], [mbar]");
    Block b(registers_);
    const std::string mbar = b.address(ops[2], false);
    auto map = tensor_map_address(b, ops[1]);
    if (!map) return refusal(in, map.error().message());
    const std::string id = std::to_string(next_id_ - 1);
    const std::string rank = b.temp32(), self = b.temp32(), shadow = b.temp32();
    const std::string local = b.temp_pred();
    b.emit("getctarank.shared::cluster.u32 " + rank + ", " + mbar);
    b.emit("mov.u32 " + self + ", %cluster_ctarank");
    b.emit("setp.eq.u32 " + local + ", " + rank + ", " + self);
    b.emit("@" + local + " " + opcode + " " + operands);
    const std::string map_param = b.param(*map, true);
    const std::string begin_params = map_param + ", " + b.param(id, false);
    b.declare(".param .b32 tmemjit_r0");
    b.emit("@!" + local + " call (tmemjit_r0), tmemjit_emu_tma_peer_begin, (" + begin_params + ")");
    b.emit("ld.param.b32 " + shadow + ", [tmemjit_r0]");
    std::string shadowed;
    for (size_t i = 0; i < ops.size(); ++i)
      shadowed += (i ? ", " : "") + (i == 2 ? "[" + shadow + "]" : std::string(ops[i]));
    b.emit("@!" + local + " " + opcode + " " + shadowed);
    const std::string shadow_param = b.param(shadow, false), mbar_param = b.param(mbar, false);
    call(b, "tmemjit_emu_tma_peer_end", {shadow_param, mbar_param, b.param(id, false)},
         "!" + local);
    return finish_block(in, b);
  }

  // The generic address of the tensor map in "[tensorMap, {coordinates}]": a register holds one
  // (PTX ISA §9.7.9.25.5.1); a kernel parameter's name is its .param address, made generic.
  Result<std::string> tensor_map_address(Block& b, std::string_view operand) {
    if (operand.size() < 2 || operand.front() != '[')
      return Error(ErrorCode::kUsage, "the tensor map operand " + std::string(operand) +
                                          " is not [tensorMap, {coordinates}]");
    const auto parts = split_operands(operand.substr(1, operand.size() - 2));
    const std::string_view map = parts.empty() ? std::string_view() : parts[0];
    if (map.starts_with('%')) return b.u64(map);
    if (!declares_param(function_header_, map))
      return Error(ErrorCode::kUsage,
                   "the tensor map " + std::string(map) +
                       " is neither a register nor a parameter of the kernel; the emulation of "
                       ".cta_group::2 reads the map's box through a generic address");
    const std::string param = b.temp64(), generic = b.temp64();
    b.emit("mov.u64 " + param + ", " + std::string(map));
    b.emit("cvta.param.u64 " + generic + ", " + param);
    return generic;
  }

  // Whether the function header declares `name` as a .param.
  static bool declares_param(std::string_view header, std::string_view name) {
    for (size_t at = header.find(name); at != std::string_view::npos;
         at = header.find(name, at + 1)) {
      const bool starts = at == 0 || !is_ident_char(header[at - 1]);
      const size_t end = at + name.size();
      const bool ends = end == header.size() || !is_ident_char(header[end]);
      if (starts && ends && header.substr(0, at).rfind(".param") != std::string_view::npos)
        return true;
    }
    return false;
  }

  // ---- the result ----

  Result<UserLowering> finish() {
    UserLowering result;
    result.ptx = std::move(out_);
    result.instructions = std::move(instructions_);
    result.notes = std::move(notes_);
    for (size_t f = 0; f < counts_.size(); ++f) {
      if (counts_[f] == 0) continue;
      result.families.emplace_back(kFamilyNames[f], counts_[f]);
      result.changed = true;
    }
    auto library = library_source();
    if (!library) return std::move(library).error();
    result.library_source = std::move(*library);
    return result;
  }

  Result<std::string> library_source() const;

  std::string_view source_;
  std::string blank_;
  std::string_view header_;  // the last module-scope directive (a function header before its '{')
  std::string_view function_header_;  // the header of the function whose body is being read
  std::string name_;
  std::string out_;
  size_t copied_ = 0;
  int depth_ = 0;
  bool target_seen_ = false;
  bool help_at_waits_ = false;
  bool standalone_ = false;
  std::set<size_t> clearing_entries_;  // the '{' of each entry that clears a standalone state
  RegisterTable registers_;
  std::vector<std::string> instructions_, notes_;
  std::uint32_t next_id_;
  int labels_ = 0;
  std::array<int, static_cast<size_t>(Family::kCount)> counts_{};
  std::map<std::string, Opcode> forms_;  // generated function -> its form (ordered: deterministic)
  bool needs_unsupported_ = false;
  bool noted_aligned_ = false;
};

// ---- the generated library (CUDA C++) -----------------------------------------------------------

constexpr const char* kU = "unsigned int";

std::string u32_text(std::int64_t value) {
  return std::to_string(static_cast<std::uint32_t>(static_cast<std::uint64_t>(value))) + "u";
}

// C++ of: sum over runs of ((var >> first) & mask) * weight (as cuda_emulated_body writes it).
std::string lane_terms(const std::string& var, const std::vector<std::int64_t>& weights) {
  std::string text;
  for (const BitRun& run : bit_runs(weights)) {
    std::string field = var;
    if (run.first) field = "(" + var + " >> " + std::to_string(run.first) + "u)";
    field = "(" + field + " & " + std::to_string((1u << run.count) - 1) + "u)";
    if (run.weight != 1) field += " * " + u32_text(run.weight);
    text += " + " + field;
  }
  return text;
}

// The thread's first TMEM word: lane and column of its access, then emu::resolve (rules R17/R19,
// the warp-relative lane) with the statement's id; p_ points at the word of register 0's cell
// (lane bits as closed-form terms, as cuda_emulated_body writes them), so that every cell is a
// constant offset from it.
std::string access_prologue(const Opcode& op, const SplitImage& split) {
  std::vector<std::int64_t> rows(kLaneBits), cols(kLaneBits);
  for (size_t b = 0; b < static_cast<size_t>(kLaneBits); ++b) {
    rows[b] = split.lane_bits[b].row;
    cols[b] = split.lane_bits[b].col;
  }
  std::string text =
      "  const " + std::string(kU) + " l_ = tmemjit::emu::thread() % 32u;\n  " + kU + " a_ = taddr";
  // 16x32bx2: lanes with the access bit set make the second access, at taddr + immHalfSplitoff.
  if (op.is_split() && split.access_bit >= 0)
    text += " + (((l_ >> " + std::to_string(split.access_bit) + "u) & 1u) ? imm : 0u)";
  text += ";\n  const bool ok_ = tmemjit::emu::resolve(id, a_, " + std::to_string(op.atom_rows()) +
          "u, " + std::to_string(op.atom_tmem_cols()) + "u);\n  " + kU +
          "* const p_ = tmemjit::emu::tmem() + (((a_ >> 16)" + lane_terms("l_", rows) +
          ") * 512u + (a_ & 0xFFFFu)" + lane_terms("l_", cols) + ");\n";
  return text;
}

std::string cell(const TmemCell& c) { return "p_[" + u32_text(c.row * 512 + c.col) + "]"; }

// tcgen05.ld.red: min/max{.NaN} over the loaded words in register order, after abs.f32 with .abs
// (tmem/reduction.h, as kernels/device_function_cuda.cc computes it).
std::string reduction_text(const Reduction& reduction, int regs) {
  const std::string op = std::string(to_string(reduction.op)) + (reduction.nan ? ".NaN." : ".") +
                         std::string(to_string(reduction.type));
  std::string abs = reduction.abs ? "    asm(\"abs.f32 %0, %0;\" : \"+r\"(x_));\n" : "";
  return "  {\n    " + std::string(kU) + " acc_ = v_.r[0], x_ = acc_;\n" + abs +
         "    acc_ = x_;\n    for (int r_ = 1; r_ < " + std::to_string(regs) +
         "; ++r_) {\n      x_ = v_.r[r_];\n" + abs + "      asm(\"" + op +
         " %0, %0, %1;\" : \"+r\"(acc_) : \"r\"(x_));\n    }\n    v_.r[" + std::to_string(regs) +
         "] = acc_;\n  }\n";
}

// A skipped access (emu::resolve recorded why) loads 0.
std::string load_function(const std::string& name, const Opcode& op, const SplitImage& split) {
  const int regs = op.regs_per_thread();
  const std::string type = words_type(returned_words(op));
  std::string text = "extern \"C\" __device__ __noinline__ " + type + " " + name + "(" + kU +
                     " taddr, " + (op.is_split() ? std::string(kU) + " imm, " : "") + kU +
                     " id) {\n  " + type + " v_ = {};\n" + access_prologue(op, split) +
                     "  if (!ok_) return v_;\n";
  for (int r = 0; r < regs; ++r) {
    const auto& cells = split.cells[static_cast<size_t>(r)];
    const std::string value = split.cells_per_reg == 1
                                  ? cell(cells[0])
                                  : "(" + cell(cells[0]) + " & 0xFFFFu) | (" + cell(cells[1]) +
                                        " << 16)";  // pack::16b: the low halves of two cells
    text += "  v_.r[" + std::to_string(r) + "] = " + value + ";\n";
  }
  if (op.reduces()) text += reduction_text(*op.reduction(), regs);
  return text + "  return v_;\n}\n";
}

std::string store_function(const std::string& name, const Opcode& op, const SplitImage& split) {
  const int regs = op.regs_per_thread();
  std::string text = "extern \"C\" __device__ __noinline__ void " + name + "(" + kU + " taddr, " +
                     (op.is_split() ? std::string(kU) + " imm, " : "") + words_type(regs) + " v, " +
                     kU + " id) {\n" + access_prologue(op, split) + "  if (!ok_) return;\n";
  for (int r = 0; r < regs; ++r) {
    const auto& cells = split.cells[static_cast<size_t>(r)];
    const std::string reg = "v.r[" + std::to_string(r) + "]";
    if (split.cells_per_reg == 1) {
      text += "  " + cell(cells[0]) + " = " + reg + ";\n";
    } else {  // unpack::16b: the upper 16 bits of a cell are unspecified; written 0
      text += "  " + cell(cells[0]) + " = " + reg + " & 0xFFFFu;\n  " + cell(cells[1]) + " = " +
              reg + " >> 16;\n";
    }
  }
  return text + "}\n";
}

Result<std::string> Lowering::library_source() const {
  if (forms_.empty() && !needs_unsupported_) return std::string();
  std::set<int> widths;
  for (const auto& [name, op] : forms_)
    widths.insert(op.is_load() ? returned_words(op) : op.regs_per_thread());
  std::string text =
      "// The tcgen05.ld/st forms of a lowered module (kernels/user_emulation.h), generated by "
      "libtmemjit:\n// TMEM is this CTA's region of tmemjit::emu_state; register r of lane l is "
      "the cell of split_image.\n";
  for (int words : widths)
    text +=
        "struct " + words_type(words) + " {\n  " + kU + " r[" + std::to_string(words) + "];\n};\n";
  for (const auto& [name, op] : forms_) {
    auto split = split_image(op);
    if (!split) return std::move(split).error();
    text += "// " + op.to_string() + "\n" +
            (op.is_load() ? load_function(name, op, *split) : store_function(name, op, *split));
  }
  if (needs_unsupported_)
    text +=
        "// An operand value the emulation does not implement: the statement was skipped.\n"
        "extern \"C\" __device__ __noinline__ void tmemjit_emu_unsupported(" +
        std::string(kU) + " id, " + kU + " what) {\n  tmemjit::emu::record(" +
        std::to_string(kEmuEventUnsupported) + "u, id, what);\n}\n";
  return text;
}

}  // namespace

Result<UserLowering> lower_user_ptx(std::string_view ptx, std::string_view source_name,
                                    std::uint32_t first_id, bool standalone) {
  if (first_id < 1 || first_id >= kMaxEmuId)
    return Error(ErrorCode::kLimit, "user emulation: first_id " + std::to_string(first_id) +
                                        " is outside [1, " + std::to_string(kMaxEmuId) + ")");
  auto lowered =
      Lowering(ptx, source_name.empty() ? "<ptx>" : source_name, first_id, standalone).run();
  if (lowered && first_id + lowered->instructions.size() > kMaxEmuId)
    return Error(ErrorCode::kLimit,
                 "user emulation: " + std::to_string(lowered->instructions.size()) +
                     " lowered statements from id " + std::to_string(first_id) +
                     " pass the largest status id " + std::to_string(kMaxEmuId - 1) +
                     " (bits 23:0 of the status word)");
  return lowered;
}

Result<std::string> splice_emulation_library(std::string_view lowered_ptx,
                                             std::string_view library_ptx) {
  std::string out(lowered_ptx);
  size_t at = ptx::header_end(out);
  if (at == std::string::npos)
    return Error(ErrorCode::kUsage,
                 "splice_emulation_library: the lowered module has no .target directive");
  if (at == out.size() && !out.ends_with('\n')) {
    out += '\n';
    at = out.size();
  }
  std::string body = "\n" + ptx_without_header(std::string(library_ptx));
  if (!body.ends_with('\n')) body += '\n';
  out.insert(at, body);
  return out;
}

}  // namespace tmem::kernels
