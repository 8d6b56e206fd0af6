#include "kernels/specialized_source.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "runtime/ptx/ir.h"
#include "runtime/support/lexer.h"

namespace tmem::kernels {
namespace {

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// `source` with comments and the insides of literals blanked (newlines kept), so a scan for
// directives or identifiers sees only code; an #include's "name" stays for the directive scan.
std::string code_only(std::string_view source) {
  return blank_comments(source, SourceLanguage::kCpp, LiteralText::kBlankedOutsideDirectives);
}

// The offset of the line holding the first #include of the transfers header, or npos.
size_t header_include_line(const std::string& code) {
  const std::string angle = "<" + std::string(kTransfersHeader) + ">";
  const std::string quoted = "\"" + std::string(kTransfersHeader) + "\"";
  for (size_t line = 0; line < code.size();) {
    size_t end = code.find('\n', line);
    if (end == std::string::npos) end = code.size();
    size_t at = line;
    auto skip_blanks = [&] {
      while (at < end && (code[at] == ' ' || code[at] == '\t')) ++at;
    };
    skip_blanks();
    if (at < end && code[at] == '#') {
      ++at;
      skip_blanks();
      if (code.compare(at, 7, "include") == 0) {
        at += 7;
        skip_blanks();
        if (code.compare(at, angle.size(), angle) == 0 ||
            code.compare(at, quoted.size(), quoted) == 0)
          return line;
      }
    }
    line = end + 1;
  }
  return std::string::npos;
}

// The #include directives of `code` (comments and literals blanked) from `from` on, other than
// the transfers' own.
int other_includes(const std::string& code, size_t from) {
  int count = 0;
  for (size_t line = from; line < code.size();) {
    size_t end = code.find('\n', line);
    if (end == std::string::npos) end = code.size();
    size_t at = code.find_first_not_of(" \t", line);
    if (at < end && code[at] == '#') {
      at = code.find_first_not_of(" \t", at + 1);
      if (at < end && code.compare(at, 7, "include") == 0 &&
          code.substr(at, end - at).find(kTransfersHeader) == std::string::npos)
        ++count;
    }
    line = end + 1;
  }
  return count;
}

// Whether `code` (comments and literals blanked) can end a header: every #if closed and every
// brace, parenthesis and bracket of its code closed, so the transfers' include is at file scope.
bool stands_alone(std::string_view code) {
  int conditionals = 0, brackets = 0;
  for (size_t line = 0; line < code.size();) {
    size_t end = code.find('\n', line);
    if (end == std::string_view::npos) end = code.size();
    size_t at = code.find_first_not_of(" \t", line);
    if (at < end && code[at] == '#') {
      // A directive, with its continuation lines: only conditionals count.
      while (end < code.size() && end > line && code[end - 1] == '\\')
        end = std::min(code.find('\n', end + 1), code.size());
      at = code.find_first_not_of(" \t", at + 1);
      const std::string_view word = at < end ? code.substr(at, end - at) : std::string_view();
      if (word.starts_with("if")) ++conditionals;  // #if, #ifdef, #ifndef
      if (word.starts_with("endif")) --conditionals;
    } else {
      for (size_t i = line; i < end; ++i) {
        if (code[i] == '{' || code[i] == '(' || code[i] == '[') ++brackets;
        if (code[i] == '}' || code[i] == ')' || code[i] == ']') --brackets;
      }
    }
    line = end + 1;
  }
  return conditionals == 0 && brackets == 0;
}

// Whether `code` (comments and literals blanked) has a line that is not a directive or blank.
bool has_code(std::string_view code) {
  bool continued = false;  // the line continues a directive
  for (size_t line = 0; line < code.size();) {
    size_t end = code.find('\n', line);
    if (end == std::string_view::npos) end = code.size();
    const size_t at = code.find_first_not_of(" \t\r", line);
    const bool directive = continued || (at < end && code[at] == '#');
    if (!directive && at < end) return true;
    continued = directive && end > line && code[end - 1] == '\\';
    line = end + 1;
  }
  return false;
}

// Whether `path` can be written inside "..." of an #include and a #line as it is.
bool spellable_in_line(std::string_view path) {
  for (const char c : path)
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  return !path.empty();
}

}  // namespace

std::vector<DeviceFunctionOptions> PreparedTransfers::options() const {
  std::vector<DeviceFunctionOptions> out;
  for (const TransferCode& code : codes) out.push_back(code.options);
  return out;
}

Status check_transfer_names(std::span<const NamedTransfer> transfers) {
  std::map<std::string, std::string> symbols;  // generated symbol -> its transfer
  for (const NamedTransfer& t : transfers) {
    if (Status ok = check_identifier(t.options.name); !ok.ok()) return ok;
    for (const std::string& symbol : transfer_symbols(t.options.name)) {
      auto [it, inserted] = symbols.emplace(symbol, t.options.name);
      if (inserted) continue;
      if (it->second == t.options.name)
        return Error(ErrorCode::kUsage,
                     "compile_kernel: two transfers are named '" + t.options.name + "'",
                     "each transfer needs its own name (NamedTransfer::options.name)");
      return Error(ErrorCode::kUsage, "compile_kernel: transfer '" + t.options.name +
                                          "' defines '" + symbol + "', as transfer '" + it->second +
                                          "' does; rename one of them");
    }
  }
  return std::monostate{};
}

Result<PreparedTransfers> prepare_transfers(std::span<const NamedTransfer> transfers,
                                            CoordDetail detail) {
  PreparedTransfers prepared;
  int next_id = 1;
  for (const NamedTransfer& t : transfers) {
    auto code = prepare_transfer(t.spec, t.options, detail);
    if (!code.ok()) {
      Error error = std::move(code).error();
      if (error.code() == ErrorCode::kUsage) return error;
      return Error(error.code(), "transfer '" + t.options.name + "': " + error.message(),
                   error.details());
    }
    code->first_id = next_id;  // the emulation's status codes, one range per transfer
    next_id += code->plan.instructions_per_warp();
    prepared.codes.push_back(std::move(code).value());
  }
  // One lifecycle per kernel, so one .cta_group for all its transfers (R27).
  auto group = lifecycle_cta_group(prepared.codes);
  if (!group.ok()) return std::move(group).error();
  prepared.cta_group = *group;
  return prepared;
}

std::string transfers_header_prelude(std::string_view title, int cta_group, Target target) {
  std::string header = "// tmemjit/transfers.cuh: " + std::string(title) +
                       "\n"
                       "#pragma once\n"
                       // The contract's signatures say uint32_t; NVRTC has no <stdint.h> to give
                       // it. Repeating a typedef of the same type is legal C++, so a source that
                       // has its own one still builds.
                       "#if defined(__CUDACC_RTC__)\n"
                       "typedef unsigned int uint32_t;\n"
                       "typedef int int32_t;\n"
                       "#else\n"
                       "#include <stdint.h>\n"
                       "#endif\n";
  return header + cuda_lifecycle(target, false, cta_group);
}

std::string transfers_header(const PreparedTransfers& prepared, Target target) {
  std::string header = transfers_header_prelude(
      "generated by libtmemjit for compile_kernel (docs/specialization.md).", prepared.cta_group,
      target);
  for (const TransferCode& code : prepared.codes) header += "\n" + cuda_transfer(code, target);
  return header;
}

namespace {
// The unit without CompileOptions::precompile (specialized_source.h, cuda_unit).
CudaUnit cuda_unit_alone(std::string_view source, std::string_view path, size_t reaching);
}  // namespace

std::string include_lines(std::span<const std::string> headers) {
  std::string lines;
  for (const std::string& header : headers) lines += "#include <" + header + ">\n";
  return lines;
}

std::vector<IncludeDirective> include_directives(std::string_view source) {
  std::vector<IncludeDirective> directives;
  const std::string code = code_only(source);
  for (size_t line = 0; line < code.size();) {
    size_t end = code.find('\n', line);
    if (end == std::string::npos) end = code.size();
    size_t at = code.find_first_not_of(" \t", line);
    if (at < end && code[at] == '#') {
      at = code.find_first_not_of(" \t", at + 1);
      // The line as written (code_only keeps offsets), for an include scan of it alone.
      if (at < end && code.compare(at, 7, "include") == 0)
        directives.push_back({line, std::string(source.substr(line, end - line))});
    }
    line = end + 1;
  }
  return directives;
}

CudaUnit cuda_unit(std::string_view source, std::string_view path,
                   std::span<const std::string> precompile, size_t reaching) {
  CudaUnit unit = cuda_unit_alone(source, path, reaching);
  if (precompile.empty()) return unit;
  const std::string first = include_lines(precompile);
  if (!unit.prefix_header_name.empty()) {  // the headers first, then the user's prefix
    unit.prefix_header = first + unit.prefix_header;
    return unit;
  }
  // No prefix header of the user's text (the transfers reached through a header, or included
  // inside a namespace or an #if): one of the named headers alone, then the stop ";", before the
  // whole unit. Its first token is the stop, so nothing the source includes enters the PCH.
  unit.prefix_header_name = std::string(path) + ".tmemjit-prefix.cuh";
  unit.prefix_header = first;
  unit.text = "#include \"" + unit.prefix_header_name + "\"\n;\n#line 1\n" + unit.text;
  unit.inline_stop_reason.clear();  // the named headers are precompiled whatever the source does
  return unit;
}

namespace {
CudaUnit cuda_unit_alone(std::string_view source, std::string_view path, size_t reaching) {
  CudaUnit unit;
  const std::string code = code_only(source);
  size_t line = header_include_line(code);
  unit.includes_after = other_includes(code, line == std::string::npos ? 0 : line);
  // Reached through a header of the main file: the stop goes before that header's #include, and
  // the includes after it are the ones parsed again.
  if (line == std::string::npos && reaching < source.size()) {
    line = reaching;
    const size_t end = code.find('\n', line);
    unit.includes_after = end == std::string::npos ? 0 : other_includes(code, end + 1);
  }
  if (line == std::string::npos) {
    unit.text = std::string(source);
    return unit;
  }
  size_t number = 1;
  for (size_t i = 0; i < line; ++i) number += source[i] == '\n' ? 1 : 0;
  unit.prefix = std::string(source.substr(0, line));
  unit.header_stop = true;
  const std::string rest =
      "#line " + std::to_string(number) + "\n" + std::string(source.substr(line));
  const std::string_view before = std::string_view(code).substr(0, line);
  const bool alone = stands_alone(before);
  if (!alone || !spellable_in_line(path)) {
    unit.text = unit.prefix + ";\n" + rest;
    if (has_code(before))
      unit.inline_stop_reason = alone ? "its file name cannot be written in an #include"
                                      : "its #include <" + std::string(kTransfersHeader) +
                                            "> is inside a namespace, a block or an #if";
    return unit;
  }
  // Beside the user's file, so that its `#include "x"` searches the user's directory.
  unit.prefix_header_name = std::string(path) + ".tmemjit-prefix.cuh";
  unit.prefix_header = "#line 1 \"" + std::string(path) + "\"\n" + unit.prefix;
  // The ";" is the stop: the first token of the source file, before the #line (which would
  // otherwise turn precompiling off) and before the transfers header.
  unit.text = "#include \"" + unit.prefix_header_name + "\"\n;\n" + rest;
  return unit;
}
}  // namespace

bool mentions_identifier(std::string_view source, std::string_view name) {
  if (name.empty()) return false;
  const std::string code = code_only(source);
  for (size_t at = code.find(name); at != std::string::npos; at = code.find(name, at + 1)) {
    const size_t after = at + name.size();
    if ((at == 0 || !is_identifier_char(code[at - 1])) &&
        (after >= code.size() || !is_identifier_char(code[after])))
      return true;
  }
  return false;
}

Result<std::string> ptx_functions(const PreparedTransfers& prepared, Target target) {
  ptx::Module module(target);
  for (const TransferCode& code : prepared.codes) {
    const std::string& name = code.options.name;
    if (Status ok = add_transfer_functions(module, code, name, name + "_wait", name + "_coord");
        !ok.ok())
      return std::move(ok).error();
  }
  add_lifecycle_functions(module, prepared.cta_group);
  return ptx::print(module);
}

}  // namespace tmem::kernels
