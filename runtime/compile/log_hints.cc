#include "runtime/compile/log_hints.h"

#include <cctype>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

#include "kernels/device_function.h"
#include "kernels/specialized_source.h"

namespace tmem {
namespace {

// NVRTC compiles a name-expression entry into a pseudo-file "__nv_name_map"; its errors there
// are about the entry the caller named, not about the source.
Error entry_expression_error(const KernelSource& source, Error error) {
  const std::string_view log = error.detail("log");
  const size_t at = log.find("__nv_name_map");
  if (at == std::string_view::npos) return error;
  std::istringstream lines{std::string(log)};
  for (std::string line; std::getline(lines, line);)
    if (line.find(": error") != std::string::npos && !line.starts_with("__nv_name_map"))
      return error;  // the source has errors of its own: its log says where
  const size_t reason = log.find("error: ", at);
  const std::string why(reason == std::string_view::npos
                            ? std::string_view("NVRTC could not resolve it")
                            : log.substr(reason + 7, log.find('\n', reason) - reason - 7));
  return Error(ErrorCode::kUsage,
               "compile_kernel: entry '" + source.entry +
                   "' is not a name expression of a __global__ function in " + source.path + " (" +
                   why + ")",
               std::vector<ErrorDetail>{
                   {"note",
                    "name the entry as written in the source: a plain or extern \"C\" name, or "
                    "a template instance such as \"epilogue<64>\""},
                   {"log", std::string(log)}});
}

// A call that matches none of a transfer's overloads is most often a missing or extra warp or
// column argument (DeviceFunctionOptions): say which parameters this transfer was generated with.
Error with_transfer_call_hints(Error error, std::span<const DeviceFunctionOptions> transfers) {
  const std::string log(error.detail("log"));
  for (const DeviceFunctionOptions& o : transfers) {
    const std::string& name = o.name;
    if (log.find("no instance of overloaded function \"" + name + "\"") == std::string::npos)
      continue;
    error.add_detail(
        "hint", name + " was generated as " + name + "(tmem_base, regs" +
                    (o.warp_argument ? ", warp" : "") + (o.column_argument ? ", column" : "") +
                    "): warp_argument and column_argument add those parameters "
                    "(tmemjit specialize --warp-arg / --column-arg, or the keys in the spec file)");
  }
  return error;
}

// An identifier the front end cannot find that looks like a transfer's symbol (NAME_regs,
// NAME_coord, ...) for a NAME the call did not give is a transfer left out or misspelt: say which
// names the call has. Only suffixed symbols count: an undefined bare name could be anything.
Error with_missing_transfer_hints(Error error, std::span<const DeviceFunctionOptions> transfers) {
  const std::string log(error.detail("log"));
  const std::vector<std::string> suffixes = kernels::transfer_symbols("");
  std::set<std::string> given;
  for (const DeviceFunctionOptions& o : transfers) given.insert(o.name);
  std::set<std::string> missing;  // ordered: the hint reads the same every time
  static constexpr std::string_view kUndefined = "error: identifier \"";
  for (size_t at = log.find(kUndefined); at != std::string::npos;
       at = log.find(kUndefined, at + 1)) {
    const size_t begin = at + kUndefined.size();
    const size_t end = log.find('"', begin);
    if (end == std::string::npos) break;
    static constexpr std::string_view kIsUndefined = "\" is undefined";
    if (log.compare(end, kIsUndefined.size(), kIsUndefined) != 0) continue;
    const std::string_view symbol = std::string_view(log).substr(begin, end - begin);
    for (const std::string& suffix : suffixes) {
      if (suffix.empty() || symbol.size() <= suffix.size() || !symbol.ends_with(suffix)) continue;
      const std::string name(symbol.substr(0, symbol.size() - suffix.size()));
      if (!given.contains(name)) missing.insert(name);
    }
  }
  if (missing.empty()) return error;
  std::string names, has;
  for (const std::string& name : missing) names += (names.empty() ? "" : ", ") + name;
  for (const std::string& name : given) has += (has.empty() ? "" : ", ") + name;
  error.add_detail("hint", "the source uses transfers this call does not give (" + names +
                               "; it gives " + (has.empty() ? "none" : has) +
                               "): each transfer NAME defines NAME, NAME_regs, NAME_is_load, "
                               "NAME_wait and NAME_coord; give each one a spec "
                               "(tmemjit specialize --transfer " +
                               *missing.begin() + "=SPEC.json)");
  return error;
}

// A given transfer's symbol (or the tmemjit:: lifecycle) undefined in a source that never includes
// <tmemjit/transfers.cuh>: the include is what is missing, not the transfer (issue 39 N20).
Error with_missing_include_hint(const KernelSource& source, Error error,
                                std::span<const DeviceFunctionOptions> transfers) {
  if (source.text.find(kernels::kTransfersHeader) != std::string::npos) return error;
  const std::string log(error.detail("log"));
  bool undefined =
      log.find("name followed by \"::\" must be a class or namespace name") != std::string::npos &&
      log.find("tmemjit") != std::string::npos;
  for (const DeviceFunctionOptions& o : transfers)
    for (const std::string& symbol : kernels::transfer_symbols(o.name))
      undefined |= log.find("identifier \"" + symbol + "\" is undefined") != std::string::npos;
  if (!undefined) return error;
  error.add_detail("hint", source.path + " does not #include <" +
                               std::string(kernels::kTransfersHeader) +
                               ">, which defines the transfers and tmemjit::alloc/dealloc "
                               "(docs/specialization.md §The device contract)");
  return error;
}

}  // namespace

// The front end's error as the caller of compile_kernel should read it: an unresolvable entry
// named, transfer calls explained, and the user's own file named rather than echoed back as
// "cuda source" (the log quotes the lines in error).
Error explain_front_end_error(const KernelSource& source,
                              std::span<const DeviceFunctionOptions> transfers, Error error) {
  error = with_missing_include_hint(
      source,
      with_missing_transfer_hints(
          with_transfer_call_hints(entry_expression_error(source, std::move(error)), transfers),
          transfers),
      transfers);
  std::vector<ErrorDetail> details;
  for (const ErrorDetail& detail : error.detail_entries())
    details.push_back(detail.key == "cuda source"
                          ? ErrorDetail{detail.key, source.path + " (not repeated)"}
                          : detail);
  Error out(error.code(), error.message(), std::move(details));
  out.set_rule(error.rule());
  return out;
}

// Rewrites ptxas's "line N" of the combined module to the user's line (PTX sources).
std::string user_log(const std::string& log, const std::string& path, size_t inserted_after,
                     size_t inserted_lines) {
  std::string out;
  std::istringstream lines(log);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t at = line.find("line ");
    if (at != std::string::npos) {
      size_t end = at + 5;
      size_t number = 0;
      while (end < line.size() && std::isdigit(static_cast<unsigned char>(line[end])))
        number = 10 * number + static_cast<size_t>(line[end++] - '0');
      if (end > at + 5) {
        const std::string where =
            number > inserted_after && number <= inserted_after + inserted_lines
                ? "line " + std::to_string(number) + " of the generated functions"
                : path + ", line " +
                      std::to_string(number > inserted_after ? number - inserted_lines : number);
        line = line.substr(0, at) + where + line.substr(end);
      }
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace tmem
