// Computed includes (`#include CUDA_STD_HEADER(tuple)`, as CUTLASS writes): the macros a closure
// defines, and the header names an include's tokens may expand to with them. Every definition of
// a macro counts, whatever the #if around it, so each spelling a configuration may choose is
// followed (include_closure.h).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "runtime/compile/include_directives.h"

namespace tmem::closure {

class MacroTable {
 public:
  // Adds the definitions of `facts`, which must outlive the table.
  void add(const FileFacts& facts);
  // The header names `computed`'s tokens may expand to, each once; none when no expansion gives
  // a "name" or a <name>.
  std::vector<Include> header_names(const Computed& computed) const;

 private:
  using Tokens = std::vector<std::string>;
  std::vector<Tokens> expand(const Tokens& in, std::vector<std::string>& hidden) const;
  static Tokens substitute(const Macro& macro, const std::vector<Tokens>& args);

  std::unordered_multimap<std::string_view, const Macro*> macros_;  // views of Macro::name
};

}  // namespace tmem::closure
