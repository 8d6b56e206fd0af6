// The R27 check of PTX text: .cta_group per function, then per kernel through its calls.
#include "runtime/ptx/cta_group_check.h"

#include <cctype>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "runtime/ptx/text.h"
#include "tmem/rule.h"

namespace tmem::ptx {
namespace {

struct GroupUse {
  int group = 0;
  int line = 0;  // 1-based line of the instruction
};

struct FunctionInfo {
  std::vector<GroupUse> uses;  // the first use of each .cta_group value
  std::set<std::string> callees;
  bool entry = false;
};

bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '$' || c == '%';
}

// The identifier starting at `at` after blanks; empty when there is none.
std::string identifier_at(const std::string& text, size_t& at) {
  while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
  const size_t start = at;
  while (at < text.size() && ident_char(text[at])) ++at;
  return text.substr(start, at - start);
}

bool word_at(const std::string& text, size_t at, std::string_view word) {
  return text.compare(at, word.size(), word) == 0 && (at == 0 || !ident_char(text[at - 1])) &&
         (at + word.size() >= text.size() || !ident_char(text[at + word.size()]));
}

std::map<std::string, FunctionInfo> scan(const std::string& text) {
  std::map<std::string, FunctionInfo> functions;
  std::string pending, current;
  bool pending_entry = false;
  int depth = 0, line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') ++line;
    if (depth == 0) {
      if (c == '.' && (word_at(text, i + 1, "entry") || word_at(text, i + 1, "func"))) {
        pending_entry = text[i + 1] == 'e';
        size_t at = i + (pending_entry ? 6 : 5);
        while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
        if (!pending_entry && at < text.size() && text[at] == '(') {  // .func (return params)
          while (at < text.size() && text[at] != ')') ++at;
          ++at;
        }
        pending = identifier_at(text, at);
      } else if (c == ';') {
        pending.clear();  // a declaration without a body
      } else if (c == '{' && !pending.empty()) {
        current = pending;
        functions[current].entry = pending_entry;
        pending.clear();
      }
    }
    if (c == '{') ++depth;
    if (c == '}' && depth > 0 && --depth == 0) current.clear();
    if (current.empty() || depth == 0) continue;
    FunctionInfo& f = functions[current];
    static constexpr std::string_view kGroup = ".cta_group::";
    if (c == '.' && text.compare(i, kGroup.size(), kGroup) == 0 &&
        i + kGroup.size() < text.size()) {
      const int group = text[i + kGroup.size()] - '0';
      bool seen = false;
      for (const GroupUse& use : f.uses) seen = seen || use.group == group;
      if (!seen) f.uses.push_back({group, line});
    } else if (c == 'c' && word_at(text, i, "call")) {
      size_t at = i + 4;
      if (text.compare(at, 4, ".uni") == 0) at += 4;
      while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
      if (at < text.size() && text[at] == '(') {  // call (return params), name, ...
        while (at < text.size() && text[at] != ')') ++at;
        while (at < text.size() && (text[at] == ')' || text[at] == ',' ||
                                    std::isspace(static_cast<unsigned char>(text[at]))))
          ++at;
      }
      if (std::string callee = identifier_at(text, at); !callee.empty()) f.callees.insert(callee);
    }
  }
  return functions;
}

}  // namespace

Status check_cta_groups(std::string_view ptx_text) {
  // Only a module that names ::2 somewhere can mix: most compiles skip the scan.
  if (ptx_text.find(".cta_group::2") == std::string_view::npos) return std::monostate{};
  const std::map<std::string, FunctionInfo> functions = scan(without_comments(ptx_text));
  for (const auto& [name, info] : functions) {
    if (!info.entry) continue;
    // Every function the kernel reaches, and the first use of each group among them.
    std::map<int, std::pair<std::string, int>> first;  // group -> (function, line)
    std::set<std::string> seen{name};
    std::vector<std::string> work{name};
    while (!work.empty()) {
      const std::string f = work.back();
      work.pop_back();
      auto it = functions.find(f);
      if (it == functions.end()) continue;
      for (const GroupUse& use : it->second.uses) first.try_emplace(use.group, f, use.line);
      for (const std::string& callee : it->second.callees)
        if (seen.insert(callee).second) work.push_back(callee);
    }
    if (first.size() < 2) continue;
    auto where = [&](int group) {
      const auto& [function, line] = first.at(group);
      return ".cta_group::" + std::to_string(group) + " (line " + std::to_string(line) + ", in " +
             function + ")";
    };
    const int a = first.begin()->first, b = std::next(first.begin())->first;
    return Error(ErrorCode::kRule, "ptx: kernel " + name + " mixes " + where(a) + " and " +
                                       where(b) +
                                       "; all tcgen05 instructions of a kernel use one .cta_group")
        .set_rule(Rule::kOneCtaGroupPerKernel);
  }
  return std::monostate{};
}

}  // namespace tmem::ptx
