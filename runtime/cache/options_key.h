// How CompileOptions enter a cache key (docs/cache.md §Keys): field by field, by name, never
// through a display string (a field someone forgot to print would silently share entries). Every
// field is either keyed in for_each_keyed_field or named below as not keyed, with the reason; the
// static_assert fails on a new field until it is one or the other, and
// OptionsKey.EveryKeyedFieldChangesTheKey changes each field the visitor lists, in turn.
#pragma once

#include <string>
#include <vector>

#include "runtime/support/hash.h"
#include "tmem/compile.h"

namespace tmem {

// Calls visit(name, field) for every keyed field of `options` (const or not: a test mutates them).
template <class Options, class Visit>
void for_each_keyed_field(Options& options, Visit&& visit) {
  visit("target", options.target);
  visit("backend", options.backend);  // resolved before keying: auto names no compiler
  visit("opt_level", options.opt_level);
  visit("line_info", options.line_info);
  visit("tmem_access_check", options.tmem_access_check);
  visit("cta_group", options.cta_group);
  visit("nvrtc_options", options.nvrtc_options);
  visit("ptx_options", options.ptx_options);
  visit("extra_options", options.extra_options);
  visit("precompile", options.precompile);
  visit("front_end", options.front_end);
}

// CompileOptions' fields in their order, keyed or not:
struct CompileOptionsFields {
  Target target;
  Backend backend;
  int opt_level;
  bool line_info;
  bool tmem_access_check;
  int cta_group;
  std::string keep_dir;  // not keyed: where copies of a compile's files go, not what it makes
  std::vector<std::string> nvrtc_options, ptx_options, extra_options, precompile;
  FrontEndCompiler front_end;
  // not keyed: which tier answers; each tier has its own key (docs/specialization.md §Tiers)
  Specialization specialization;
};
static_assert(sizeof(CompileOptions) == sizeof(CompileOptionsFields),
              "a new CompileOptions field: key it in for_each_keyed_field, or say in "
              "CompileOptionsFields why not");

// Feeds every keyed field of `options` to `key`, each tagged with its name (a list: its length,
// then each element on its own, so that "a b" and "a", "b" differ).
void key_options(KeyBuilder& key, const CompileOptions& options);

}  // namespace tmem
