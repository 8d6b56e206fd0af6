// Computed includes expanded with a closure's macros (computed_include.h).
#include "runtime/compile/computed_include.h"

#include <algorithm>
#include <utility>

namespace tmem::closure {
namespace {

constexpr size_t kMaxAlternatives = 16;    // header names one computed include may expand to
constexpr size_t kMaxExpansionDepth = 16;  // macros within macros, for a computed include

}  // namespace

void MacroTable::add(const FileFacts& facts) {
  for (const Macro& macro : facts.macros) macros_.emplace(macro.name, &macro);
}

std::vector<Include> MacroTable::header_names(const Computed& computed) const {
  std::vector<std::string> hidden;
  std::vector<Include> out;
  for (const Tokens& tokens : expand(directive_tokens(computed.tokens), hidden)) {
    Include include;
    include.line = computed.line;
    include.next = computed.next;
    if (tokens.empty()) continue;
    const std::string& first = tokens.front();
    if (first.size() > 2 && first.front() == '"' && first.back() == '"') {
      include.name = first.substr(1, first.size() - 2);
    } else if (first == "<") {
      // The tokens up to '>' make the name; a header name has no blanks worth keeping.
      size_t i = 1;
      for (; i < tokens.size() && tokens[i] != ">"; ++i) include.name += tokens[i];
      if (i == tokens.size()) continue;
      include.angled = true;
    }
    if (include.name.empty()) continue;
    const bool seen = std::any_of(out.begin(), out.end(), [&](const Include& other) {
      return other.name == include.name && other.angled == include.angled;
    });
    if (!seen) out.push_back(std::move(include));
  }
  return out;
}

// Every expansion of `in` over the known definitions (one alternative per definition of each
// macro, at most kMaxAlternatives in all). `hidden`: macros being expanded, not expanded again
// (C++ [cpp.rescan]).
std::vector<MacroTable::Tokens> MacroTable::expand(const Tokens& in,
                                                   std::vector<std::string>& hidden) const {
  std::vector<Tokens> out(1);
  for (size_t i = 0; i < in.size(); ++i) {
    const std::string& token = in[i];
    auto [first, last] = macros_.equal_range(token);
    if (hidden.size() >= kMaxExpansionDepth ||
        std::find(hidden.begin(), hidden.end(), token) != hidden.end())
      first = last;
    // The arguments, when a '(' follows: split at top-level commas.
    std::vector<Tokens> args;
    size_t close = i;
    if (first != last && i + 1 < in.size() && in[i + 1] == "(") {
      int nesting = 0;
      args.emplace_back();
      for (size_t j = i + 2; j < in.size(); ++j) {
        if (in[j] == ")" && nesting == 0) {
          close = j;
          break;
        }
        if (in[j] == "(") ++nesting;
        if (in[j] == ")") --nesting;
        if (in[j] == "," && nesting == 0) {
          args.emplace_back();
        } else {
          args.back().push_back(in[j]);
        }
      }
    }
    std::vector<Tokens> expansions;
    bool took_args = false;
    for (auto it = first; it != last && expansions.size() < kMaxAlternatives; ++it) {
      const Macro& macro = *it->second;
      if (macro.function_like && close == i) continue;  // a function-like name without '('
      hidden.push_back(token);
      for (Tokens& expansion :
           expand(macro.function_like ? substitute(macro, args) : macro.body, hidden))
        expansions.push_back(std::move(expansion));
      hidden.pop_back();
      took_args = took_args || macro.function_like;
    }
    if (expansions.empty()) {
      for (Tokens& alternative : out) alternative.push_back(token);
      continue;
    }
    if (took_args) i = close;
    std::vector<Tokens> product;
    for (const Tokens& alternative : out)
      for (const Tokens& expansion : expansions) {
        if (product.size() == kMaxAlternatives) break;
        product.push_back(alternative);
        product.back().insert(product.back().end(), expansion.begin(), expansion.end());
      }
    out = std::move(product);
  }
  return out;
}

// A function-like macro's body with its parameters replaced: #p as a string literal, a ## b
// joined (the header name joins its tokens anyway).
MacroTable::Tokens MacroTable::substitute(const Macro& macro, const std::vector<Tokens>& args) {
  auto argument = [&](const std::string& token) -> const Tokens* {
    for (size_t k = 0; k < macro.params.size(); ++k) {
      if (macro.params[k] != token) continue;
      static const Tokens kNone;
      return k < args.size() ? &args[k] : &kNone;
    }
    return nullptr;
  };
  Tokens out;
  for (size_t j = 0; j < macro.body.size(); ++j) {
    const std::string& token = macro.body[j];
    if (token == "##") continue;
    if (token == "#" && j + 1 < macro.body.size()) {
      if (const Tokens* arg = argument(macro.body[j + 1])) {
        std::string text = "\"";
        for (const std::string& part : *arg) text += part;
        out.push_back(text + "\"");
        ++j;
        continue;
      }
    }
    if (const Tokens* arg = argument(token)) {
      out.insert(out.end(), arg->begin(), arg->end());
      if (token == "__VA_ARGS__")  // the variadic rest, commas restored
        for (size_t k = macro.params.size(); k < args.size(); ++k) {
          out.push_back(",");
          out.insert(out.end(), args[k].begin(), args[k].end());
        }
      continue;
    }
    out.push_back(token);
  }
  return out;
}

}  // namespace tmem::closure
