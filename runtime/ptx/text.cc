#include "runtime/ptx/text.h"

#include <algorithm>
#include <cctype>

#include "runtime/support/lexer.h"

namespace tmem::ptx {
namespace {

bool is_symbol_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%';
}

// Offsets of whole-token occurrences of `word` in `text` (which has its comments blanked).
std::vector<size_t> token_offsets(std::string_view text, std::string_view word) {
  std::vector<size_t> offsets;
  if (word.empty()) return offsets;
  for (size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
    const bool starts = at == 0 || !is_symbol_char(text[at - 1]);
    const size_t after = at + word.size();
    const bool ends = after >= text.size() || !is_symbol_char(text[after]);
    if (starts && ends) offsets.push_back(at);
  }
  return offsets;
}

size_t line_start(std::string_view text, size_t at) {
  const size_t newline = at == 0 ? std::string_view::npos : text.rfind('\n', at - 1);
  return newline == std::string_view::npos ? 0 : newline + 1;
}

size_t line_end(std::string_view text, size_t at) {
  const size_t newline = text.find('\n', at);
  return newline == std::string_view::npos ? text.size() : newline;
}

// The first directive `name` (e.g. ".target") that starts a statement, in blanked text.
size_t find_directive(std::string_view text, std::string_view name) {
  for (size_t at : token_offsets(text, name.substr(1))) {
    if (at == 0 || text[at - 1] != '.') continue;
    const size_t dot = at - 1;
    size_t before = dot;
    while (before > 0 && (text[before - 1] == ' ' || text[before - 1] == '\t')) --before;
    if (before == 0 || text[before - 1] == '\n' || text[before - 1] == ';' ||
        text[before - 1] == '}')
      return dot;
  }
  return std::string_view::npos;
}

}  // namespace

std::string without_comments(std::string_view ptx) {
  return blank_comments(ptx, SourceLanguage::kPtx);
}

std::vector<std::string> entry_names(std::string_view ptx) {
  const std::string text = without_comments(ptx);
  std::vector<std::string> entries;
  for (size_t at : token_offsets(text, "entry")) {
    if (at == 0 || text[at - 1] != '.') continue;
    size_t begin = at + 5;
    while (begin < text.size() && (text[begin] == ' ' || text[begin] == '\t')) ++begin;
    size_t end = begin;
    while (end < text.size() && is_symbol_char(text[end]) && text[end] != '%') ++end;
    if (end > begin) entries.emplace_back(text.substr(begin, end - begin));
  }
  return entries;
}

std::string plain_name(const std::string& mangled) {
  if (!mangled.starts_with("_Z")) return mangled;
  size_t at = 2;
  const bool nested = at < mangled.size() && mangled[at] == 'N';
  if (nested) ++at;
  std::string name;
  while (at < mangled.size() && std::isdigit(static_cast<unsigned char>(mangled[at]))) {
    size_t length = 0;
    while (at < mangled.size() && std::isdigit(static_cast<unsigned char>(mangled[at]))) {
      length = 10 * length + static_cast<size_t>(mangled[at++] - '0');
      if (length > mangled.size()) return mangled;
    }
    if (at + length > mangled.size()) return mangled;
    name += (name.empty() ? "" : "::") + mangled.substr(at, length);
    at += length;
    if (!nested) break;
  }
  if (name.empty() || (nested && (at >= mangled.size() || mangled[at] != 'E'))) return mangled;
  return name;
}

std::string find_entry(const std::vector<std::string>& entries, const std::string& entry) {
  for (const std::string& name : entries)
    if (name == entry) return name;
  std::string found;
  for (const std::string& name : entries) {
    if (plain_name(name) != entry) continue;
    if (!found.empty()) return {};  // overloads: the user must name one
    found = name;
  }
  return found;
}

bool remove_extern_declarations(std::string& ptx, const std::string& symbol,
                                std::string_view kind) {
  bool found = false;
  // Offsets in the blanked copy are offsets in `ptx`: blanking keeps every position, and each
  // removal below keeps the newlines (so later offsets only shift by what was removed).
  std::string text = without_comments(ptx);
  for (size_t search = 0;;) {
    const std::vector<size_t> offsets =
        token_offsets(std::string_view(text).substr(search), symbol);
    if (offsets.empty()) break;
    const size_t at = search + offsets.front();
    search = at + symbol.size();
    const size_t decl = text.rfind(".extern", at);
    const size_t previous_end = text.rfind(';', at);
    const size_t previous_brace = text.rfind('}', at);
    if (decl == std::string::npos || (previous_end != std::string::npos && previous_end > decl) ||
        (previous_brace != std::string::npos && previous_brace > decl) ||
        text.find(kind, decl) > at)
      continue;
    const size_t end = text.find(';', at);
    if (end == std::string::npos) break;
    const std::string newlines(
        static_cast<size_t>(std::count(text.begin() + static_cast<long>(decl),
                                       text.begin() + static_cast<long>(end), '\n')),
        '\n');
    ptx.replace(decl, end + 1 - decl, newlines);
    text.replace(decl, end + 1 - decl, newlines);
    search = decl + newlines.size();
    found = true;
  }
  return found;
}

bool uses_symbol(std::string_view ptx, std::string_view symbol) {
  const std::string text = without_comments(ptx);
  for (size_t at : token_offsets(text, symbol)) {
    const std::string_view prefix =
        std::string_view(text).substr(line_start(text, at), at - line_start(text, at));
    if (prefix.find(".extern") != std::string_view::npos ||
        prefix.find(".func") != std::string_view::npos)
      continue;
    return true;
  }
  return false;
}

size_t header_end(std::string_view ptx) {
  const std::string text = without_comments(ptx);
  size_t at = find_directive(text, ".address_size");
  if (at == std::string_view::npos) at = find_directive(text, ".target");
  if (at == std::string_view::npos) return std::string_view::npos;
  const size_t end = line_end(text, at);
  return end < text.size() ? end + 1 : end;
}

bool retarget(std::string& ptx, std::string_view target) {
  const std::string text = without_comments(ptx);
  const size_t at = find_directive(text, ".target");
  if (at == std::string_view::npos) return false;
  size_t begin = at + 7;
  while (begin < text.size() && (text[begin] == ' ' || text[begin] == '\t')) ++begin;
  size_t end = begin;
  while (end < text.size() && text[end] != '\n' && text[end] != ';') ++end;
  while (end > begin && (text[end - 1] == ' ' || text[end - 1] == '\t' || text[end - 1] == '\r'))
    --end;
  ptx.replace(begin, end - begin, target);
  return true;
}

size_t first_line_with(std::string_view ptx, std::string_view prefix) {
  const std::string text = without_comments(ptx);
  const size_t at = text.find(prefix);
  return at == std::string::npos ? 0 : line_of(text, at);
}

size_t line_of(std::string_view text, size_t at) {
  return 1 +
         static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

}  // namespace tmem::ptx
