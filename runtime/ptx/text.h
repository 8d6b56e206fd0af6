// PTX as text: what compile_kernel needs of a user's PTX module (its entries, its declarations of
// the generated functions, its .target), found by scanning with comments skipped. Linear scans
// only: the text is the user's and may be long (no std::regex, whose recursion overflows the
// stack on long lines).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tmem::ptx {

// `ptx` with every // and /* */ comment replaced by spaces (newlines kept), so offsets and line
// numbers stay those of the original.
std::string without_comments(std::string_view ptx);

// The names after ".entry" outside comments, in order.
std::vector<std::string> entry_names(std::string_view ptx);

// "epilogue" for _Z8epiloguePfS_, "ns::epilogue" for _ZN2ns8epilogueEPf; the name itself when it
// is not a plain or nested Itanium name (templates, extern "C").
std::string plain_name(const std::string& mangled);

// The entry of `entries` for what the user wrote: itself, or the one kernel whose plain name it
// is; empty when none or several match.
std::string find_entry(const std::vector<std::string>& entries, const std::string& entry);

// Removes every ".extern <kind> ... SYMBOL(...);" declaration of `symbol`, outside comments, and
// puts as many newlines in its place (the user's line numbers stay). Returns whether one was found.
bool remove_extern_declarations(std::string& ptx, const std::string& symbol,
                                std::string_view kind = ".func");

// Whether `symbol` is used as a whole token outside comments, other than in a .extern or .func
// declaration line (a call).
bool uses_symbol(std::string_view ptx, std::string_view symbol);

// The offset just after the line of the module header's last directive (.address_size, else
// .target) outside comments; npos when the module has no .target.
size_t header_end(std::string_view ptx);

// `ptx` with the operand of its first .target directive (outside comments) replaced by `target`;
// false when it has none.
bool retarget(std::string& ptx, std::string_view target);

// The 1-based line of the first instruction starting with `prefix` outside comments, or 0.
size_t first_line_with(std::string_view ptx, std::string_view prefix);

// The 1-based line of offset `at`.
size_t line_of(std::string_view text, size_t at);

}  // namespace tmem::ptx
