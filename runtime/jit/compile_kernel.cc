// compile_kernel and device_function (DESIGN.md §7): the user's kernel specialized for transfers
// chosen at run time. CUDA C++ goes through NVRTC once per source and register counts, to LTO IR
// that calls the transfers as external functions; each layout compiles its generated functions
// to LTO IR too, and nvJitLink links the two, inlining and folding the layout into the kernel
// (docs/specialization.md). A PTX source gets the generated .funcs spliced into its module.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <set>
#include <shared_mutex>
#include <sstream>
#include <unordered_map>

#include "kernels/device_function.h"
#include "kernels/emulation_kernels.h"
#include "kernels/transfer_kernels.h"
#include "runtime/compile/backends.h"
#include "runtime/jit/compile_transfer.h"
#include "runtime/jit/kernel_impl.h"
#include "runtime/jit/kernel_table.h"
#include "runtime/ptx/ir.h"
#include "tmem/check.h"
#include "tmem/jit.h"
#include "tmem/specialize.h"

namespace tmem {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

CacheSource source_of(ModuleCache::Lookup lookup) noexcept {
  // A tier added below disk (the remote cache) is neither memory, disk nor a compile.
  if (lookup == ModuleCache::Lookup::kMemoryHit) return CacheSource::kMemory;
  if (lookup == ModuleCache::Lookup::kDiskHit) return CacheSource::kDisk;
  if (lookup == ModuleCache::Lookup::kCompiled || lookup == ModuleCache::Lookup::kUncached)
    return CacheSource::kCompiled;
  return CacheSource::kRemote;
}

constexpr std::string_view kLogMarker = "log:\n";

// key=value lines, then "log:\n" and the compiler's log.
struct Meta {
  std::multimap<std::string, std::string> fields;
  std::string log;

  std::string text() const {
    std::string out;
    for (const auto& [key, value] : fields) out += key + "=" + value + "\n";
    return out + std::string(kLogMarker) + log;
  }
  static Meta parse(const std::string& text) {
    Meta meta;
    const size_t at = text.find(kLogMarker);
    const std::string head = at == std::string::npos ? text : text.substr(0, at);
    if (at != std::string::npos) meta.log = text.substr(at + kLogMarker.size());
    std::istringstream lines(head);
    std::string line;
    while (std::getline(lines, line)) {
      const size_t eq = line.find('=');
      if (eq != std::string::npos) meta.fields.emplace(line.substr(0, eq), line.substr(eq + 1));
    }
    return meta;
  }
  std::string get(const std::string& key) const {
    auto it = fields.find(key);
    return it == fields.end() ? std::string() : it->second;
  }
  std::vector<std::string> all(const std::string& key) const {
    std::vector<std::string> values;
    auto [begin, end] = fields.equal_range(key);
    for (auto it = begin; it != end; ++it) values.push_back(it->second);
    return values;
  }
};

// The NVRTC front end takes the options that shape the C++ (macros, include paths, the
// language standard, math flags); the PTX compiler takes the rest (-maxrregcount, ...).
bool is_front_end_option(const std::string& option) {
  static const char* kPrefixes[] = {
      "-D",    "-U",      "-I",       "--define-macro",  "--undefine-macro", "--include-path",
      "-std",  "--std",   "-include", "--pre-include",   "--use_fast_math",  "-use_fast_math",
      "--ftz", "--prec-", "--fmad",   "-default-device", "--expt-",          "--extended-lambda",
      "-dopt", "--dopt",  "-G",       "--device-debug"};
  for (const char* prefix : kPrefixes)
    if (option.rfind(prefix, 0) == 0) return true;
  return false;
}

// Entry points of a PTX module: the names after ".entry".
std::vector<std::string> ptx_entries(const std::string& ptx) {
  std::vector<std::string> entries;
  for (size_t at = ptx.find(".entry"); at != std::string::npos; at = ptx.find(".entry", at + 6)) {
    size_t begin = at + 6;
    while (begin < ptx.size() && (ptx[begin] == ' ' || ptx[begin] == '\t')) ++begin;
    size_t end = begin;
    while (end < ptx.size() && (std::isalnum(static_cast<unsigned char>(ptx[end])) ||
                                ptx[end] == '_' || ptx[end] == '$'))
      ++end;
    if (end > begin) entries.push_back(ptx.substr(begin, end - begin));
  }
  return entries;
}

// "epilogue" for _Z8epiloguePfS_, "ns::epilogue" for _ZN2ns8epilogueEPf; the name itself when it
// is not a plain or nested Itanium name (templates, extern "C").
std::string plain_name(const std::string& mangled) {
  if (mangled.rfind("_Z", 0) != 0) return mangled;
  size_t at = 2;
  const bool nested = at < mangled.size() && mangled[at] == 'N';
  if (nested) ++at;
  std::string name;
  while (at < mangled.size() && std::isdigit(static_cast<unsigned char>(mangled[at]))) {
    size_t length = 0;
    while (at < mangled.size() && std::isdigit(static_cast<unsigned char>(mangled[at])))
      length = 10 * length + static_cast<size_t>(mangled[at++] - '0');
    if (at + length > mangled.size()) return mangled;
    name += (name.empty() ? "" : "::") + mangled.substr(at, length);
    at += length;
    if (!nested) break;
  }
  if (name.empty() || (nested && (at >= mangled.size() || mangled[at] != 'E'))) return mangled;
  return name;
}

// The entry's name in `ptx` for what the user wrote: itself, or the one kernel whose plain name
// it is; empty when none or several match.
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

Error unknown_entry(const KernelSource& source, const std::vector<std::string>& entries) {
  std::string list;
  for (const std::string& name : entries) {
    const std::string plain = plain_name(name);
    list += (list.empty() ? "" : ", ") + plain + (plain != name ? " (" + name + ")" : "");
  }
  return Error(ErrorCode::kUsage,
               "compile_kernel: no kernel '" + source.entry + "' in " + source.path +
                   "; the __global__ functions found: " + (list.empty() ? "none" : list),
               "name the entry as written in the source (a plain or extern \"C\" name, or a name "
               "expression such as \"epilogue<64>\"), or its lowered name");
}

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
Error with_transfer_call_hints(Error error, const std::vector<kernels::TransferCode>& codes) {
  const std::string log(error.detail("log"));
  for (const kernels::TransferCode& code : codes) {
    const std::string& name = code.options.name;
    if (log.find("no instance of overloaded function \"" + name + "\"") == std::string::npos)
      continue;
    const DeviceFunctionOptions& o = code.options;
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
Error with_missing_transfer_hints(Error error, const std::vector<kernels::TransferCode>& codes) {
  const std::string log(error.detail("log"));
  const std::vector<std::string> suffixes = kernels::transfer_symbols("");
  std::set<std::string> given;
  for (const kernels::TransferCode& code : codes) given.insert(code.options.name);
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

// The front end's error as the caller of compile_kernel should read it: an unresolvable entry
// named, transfer calls explained, and the user's own file named rather than echoed back as
// "cuda source" (the log quotes the lines in error).
Error front_end_error(const KernelSource& source, const std::vector<kernels::TransferCode>& codes,
                      Error error) {
  error = with_missing_transfer_hints(
      with_transfer_call_hints(entry_expression_error(source, std::move(error)), codes), codes);
  std::vector<ErrorDetail> details;
  for (const ErrorDetail& detail : error.detail_entries())
    details.push_back(detail.key == "cuda source" && detail.text == source.text
                          ? ErrorDetail{detail.key, source.path + " (not repeated)"}
                          : detail);
  Error out(error.code(), error.message(), std::move(details));
  out.set_rule(error.rule());
  return out;
}

// ---- splicing ---------------------------------------------------------------------------------

// Removes every ".extern .func ... SYMBOL(...);" declaration of `symbol` from `ptx`, replacing it
// by `replacement` at the first one (or by as many newlines as it had, keeping line numbers).
// Returns whether a declaration was found.
bool replace_extern(std::string& ptx, const std::string& symbol, const std::string& replacement,
                    bool keep_lines, const char* kind = ".func") {
  bool found = false;
  size_t search = 0;
  while (true) {
    size_t at = ptx.find(symbol, search);
    if (at == std::string::npos) break;
    const size_t after = at + symbol.size();
    const bool whole =
        (after < ptx.size() && (ptx[after] == '(' || ptx[after] == '[' || ptx[after] == ';' ||
                                std::isspace(static_cast<unsigned char>(ptx[after])))) &&
        at > 0 && !(std::isalnum(static_cast<unsigned char>(ptx[at - 1])) || ptx[at - 1] == '_');
    const size_t decl = ptx.rfind(".extern", at);
    const size_t previous_end = ptx.rfind(';', at);
    const size_t previous_brace = ptx.rfind('}', at);
    if (!whole || decl == std::string::npos ||
        (previous_end != std::string::npos && previous_end > decl) ||
        (previous_brace != std::string::npos && previous_brace > decl) ||
        ptx.compare(decl, 7, ".extern") != 0 || ptx.find(kind, decl) > at) {
      search = after;
      continue;
    }
    const size_t end = ptx.find(';', after);
    if (end == std::string::npos) break;
    std::string text;
    if (keep_lines)
      text.assign(static_cast<size_t>(std::count(ptx.begin() + static_cast<long>(decl),
                                                 ptx.begin() + static_cast<long>(end), '\n')),
                  '\n');
    if (!found && !keep_lines) text = replacement;
    ptx.replace(decl, end + 1 - decl, text);
    search = decl + text.size();
    found = true;
  }
  return found;
}

// Whether `ptx` calls `symbol` (a use besides declarations).
bool calls(const std::string& ptx, const std::string& symbol) {
  for (size_t at = ptx.find(symbol); at != std::string::npos; at = ptx.find(symbol, at + 1)) {
    const size_t line = ptx.rfind('\n', at);
    const size_t start = line == std::string::npos ? 0 : line + 1;
    const std::string prefix = ptx.substr(start, at - start);
    if (prefix.find(".extern") != std::string::npos || prefix.find(".func") != std::string::npos)
      continue;
    return true;
  }
  return false;
}

// ---- the key ------------------------------------------------------------------------------------

// The toolkit's include directory for NVRTC: $TMEMJIT_CUDA_INCLUDE_DIR, $CUDA_HOME/include or
// $CUDA_PATH/include, else the one libtmemjit was built against; empty when none exists.
const std::string& toolkit_include_dir() {
  static const std::string dir = [] {
    auto exists = [](const std::string& path) {
      struct stat info {};
      return !path.empty() && ::stat((path + "/cuda_runtime.h").c_str(), &info) == 0;
    };
    if (const char* env = std::getenv("TMEMJIT_CUDA_INCLUDE_DIR"); env && exists(env))
      return std::string(env);
    for (const char* home : {"CUDA_HOME", "CUDA_PATH"})
      if (const char* env = std::getenv(home); env && exists(std::string(env) + "/include"))
        return std::string(env) + "/include";
#ifdef TMEMJIT_CUDA_INCLUDE_DIR
    std::string built = TMEMJIT_CUDA_INCLUDE_DIR;
    if (const size_t semicolon = built.find(';'); semicolon != std::string::npos)
      built.resize(semicolon);
    if (exists(built)) return built;
#endif
    return std::string();
  }();
  return dir;
}

struct Context {
  CompileOptions options;      // with the backend resolved
  CompileOptions ptx_options;  // the PTX compiler's: without the front end's options
  std::vector<std::string> front_end_options;
  Key128 digest;
};

Result<Context> context_of(const KernelSource& source, const CompileOptions& given) {
  if (given.backend == Backend::kNvrtc)
    return Error(ErrorCode::kUsage,
                 "compile_kernel runs NVRTC's front end itself and compiles the PTX with "
                 "options.backend; backend nvrtc names no PTX compiler",
                 "use auto, nvptxcompiler, nvjitlink, ptxas or driver");
  Context context;
  context.options = given;
  context.options.backend = resolve_backend(given.backend);
  context.ptx_options = context.options;
  context.ptx_options.extra_options.clear();
  for (const std::string& option : given.extra_options) {
    if (source.language == Language::kCuda && is_front_end_option(option))
      context.front_end_options.push_back(option);
    else
      context.ptx_options.extra_options.push_back(option);
  }
  if (source.language == Language::kCuda && !toolkit_include_dir().empty())
    context.front_end_options.push_back("--include-path=" + toolkit_include_dir());
  KeyBuilder key;
  key.str("context", "compile-kernel");
  key.integer("format", kCacheKeyFormatVersion);
  key.str("target", to_string(context.options.target));
  key.str("backend", to_string(context.options.backend));
  key.str("options", to_string(context.ptx_options));
  key.integer("extra_options", static_cast<int64_t>(given.extra_options.size()));
  for (const std::string& extra : given.extra_options) key.str("extra", extra);
  key.str("compiler", compiler_version(context.options.backend));
  if (source.language == Language::kCuda) key.str("front end", compiler_version(Backend::kNvrtc));
  for (const std::string& option : context.front_end_options) key.str("front end option", option);
  key.str("library", library_build_id());
  context.digest = key.finish();
  return context;
}

Key128 kernel_key(const KernelSource& source, std::span<const NamedTransfer> transfers,
                  const Context& context) {
  KeyBuilder key;
  key.str("domain", "tmemjit/kernel");
  key.integer("context.lo", static_cast<int64_t>(context.digest.lo));
  key.integer("context.hi", static_cast<int64_t>(context.digest.hi));
  key.str("language", to_string(source.language));
  key.str("entry", source.entry);
  key.str("source", source.text);
  key.integer("transfers", static_cast<int64_t>(transfers.size()));
  for (const NamedTransfer& t : transfers) {
    const SpecFingerprint fingerprint = t.spec.fingerprint();
    key.str("name", t.options.name);
    key.integer("spec.lo", static_cast<int64_t>(fingerprint.lo));
    key.integer("spec.hi", static_cast<int64_t>(fingerprint.hi));
    key.integer("flags", (t.options.wait ? 1 : 0) | (t.options.warp_argument ? 2 : 0) |
                             (t.options.column_argument ? 4 : 0));
  }
  return key.finish();
}

// ---- Kernel handles per entry (as compile_transfer's) ---------------------------------------

using KernelTable = tmem::KernelTable<Key128, Key128Hash>;

KernelTable& kernel_table() {
  static KernelTable table;
  return table;
}

// ---- the compile
// ---------------------------------------------------------------------------------

struct Prepared {
  std::vector<kernels::TransferCode> codes;
  int cta_group = 1;  // the one lifecycle of the kernel (R27), checked by prepare
};

Result<Prepared> prepare(std::span<const NamedTransfer> transfers) {
  Prepared prepared;
  std::map<std::string, std::string> symbols;  // generated symbol -> its transfer
  int next_id = 1;
  for (const NamedTransfer& t : transfers) {
    auto code = kernels::prepare_transfer(t.spec, t.options);
    if (!code.ok()) {
      Error error = std::move(code).error();
      if (error.code() == ErrorCode::kUsage) return error;
      return Error(error.code(), "transfer '" + t.options.name + "': " + error.message(),
                   error.details());
    }
    code->first_id = next_id;
    next_id += code->plan.instructions_per_warp();
    prepared.codes.push_back(std::move(code).value());
  }
  // One lifecycle per kernel, so one .cta_group for all its transfers (R27).
  auto group = kernels::lifecycle_cta_group(prepared.codes);
  if (!group.ok()) return std::move(group).error();
  prepared.cta_group = *group;
  return prepared;
}

Status check_names(std::span<const NamedTransfer> transfers) {
  std::map<std::string, std::string> symbols;  // generated symbol -> its transfer
  for (const NamedTransfer& t : transfers) {
    if (Status ok = kernels::check_identifier(t.options.name); !ok.ok()) return ok;
    for (const std::string& symbol : kernels::transfer_symbols(t.options.name)) {
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

std::string transfers_header(const Prepared& prepared, Target target) {
  std::string header =
      "// tmemjit/transfers.cuh: generated by libtmemjit for compile_kernel (DESIGN.md §7).\n"
      "#pragma once\n"
      // The contract's signatures say uint32_t; NVRTC has no <stdint.h> to give it. Repeating
      // a typedef of the same type is legal C++, so a source that has its own one still builds.
      "#if defined(__CUDACC_RTC__)\n"
      "typedef unsigned int uint32_t;\n"
      "typedef int int32_t;\n"
      "#else\n"
      "#include <stdint.h>\n"
      "#endif\n";
  header += kernels::cuda_lifecycle(target, false, prepared.cta_group);
  for (const kernels::TransferCode& code : prepared.codes)
    header += "\n" + kernels::cuda_front_end_declarations(code, target);
  return header;
}

bool is_identifier(const std::string& text) {
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  for (char c : text)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

// An NVRTC compile to LTO IR, cached like a kernel (memory, disk): the blob is the IR, the meta
// holds the lowered entry (for a name expression) and the log.
struct FrontEnd {
  std::shared_ptr<const Payload> payload;
  std::string entry;  // the lowered name of a name-expression entry; else empty
  CacheSource cache = CacheSource::kCompiled;
  double ms = 0;
};

Result<FrontEnd> lto_compile(const std::string& domain, const std::string& text,
                             const std::string& path, const std::string& header,
                             const std::string& expression, const Context& context,
                             const std::vector<std::string>& signatures,
                             const std::vector<std::string>& extra_options = {}) {
  KeyBuilder key;
  key.str("domain", domain);
  key.integer("context.lo", static_cast<int64_t>(context.digest.lo));
  key.integer("context.hi", static_cast<int64_t>(context.digest.hi));
  key.str("path", path);  // the log names it
  key.str("expression", expression);
  key.str("source", text);
  for (const std::string& signature : signatures) key.str("transfer", signature);
  for (const std::string& option : extra_options) key.str("option", option);
  double ms = 0;
  auto compile = [&]() -> Result<Payload> {
    std::vector<std::pair<std::string, std::string>> headers;
    if (!header.empty()) headers.emplace_back("tmemjit/transfers.cuh", header);
    std::vector<std::string> options = context.front_end_options;
    options.insert(options.begin(), "--std=c++17");
    options.insert(options.end(), extra_options.begin(), extra_options.end());
    std::vector<std::string> expressions;
    if (!expression.empty()) expressions.push_back(expression);
    auto ir = compile_cuda_front_end(text, path, headers, options, expressions, context.options,
                                     /*relocatable=*/true, /*lto=*/true);
    if (!ir.ok()) return std::move(ir).error();
    ms = ir->compile_ms;
    Payload payload;
    payload.blob = std::move(ir->output);
    Meta meta;
    if (!ir->lowered_names.empty()) meta.fields.emplace("entry", ir->lowered_names[0]);
    meta.log = std::move(ir->log);
    payload.meta = meta.text();
    return payload;
  };
  ModuleCache::Lookup lookup = ModuleCache::Lookup::kCompiled;
  auto payload = module_cache().get_or_compile(Key128(key.finish()), compile, &lookup);
  if (!payload.ok()) return std::move(payload).error();
  FrontEnd out;
  out.payload = *payload;
  out.entry = Meta::parse((*payload)->meta).get("entry");
  out.cache = source_of(lookup);
  out.ms = ms;
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

struct Built {
  Payload payload;
  std::vector<std::string> warnings;
  CacheSource front_end_cache = CacheSource::kCompiled;
  double front_end_ms = 0;
  double link_ms = 0;         // the LTO link to PTX (CUDA sources)
  double ptx_compile_ms = 0;  // the whole-program PTX compile
};

// The PTX form's .funcs for a tcgen05 target: the transfers, their waits and index maps, and
// the lifecycle.
Result<std::string> real_ptx_functions(const Prepared& prepared, Target target) {
  ptx::Module module(target);
  for (const kernels::TransferCode& code : prepared.codes) {
    const std::string& name = code.options.name;
    if (Status ok =
            kernels::add_transfer_functions(module, code, name, name + "_wait", name + "_coord");
        !ok.ok())
      return std::move(ok).error();
  }
  kernels::add_lifecycle_functions(module, prepared.cta_group);
  return ptx::print(module);
}

// The 1-based line of the first tcgen05 instruction in `ptx` (comments aside), or 0.
size_t first_tcgen05_line(const std::string& ptx) {
  std::istringstream lines(ptx);
  std::string line;
  for (size_t number = 1; std::getline(lines, line); ++number) {
    const size_t comment = line.find("//");
    if (line.substr(0, comment).find("tcgen05.") != std::string::npos) return number;
  }
  return 0;
}

// The same .funcs emulated for sm_90 (docs/specialization.md): CUDA C++ through NVRTC to
// relocatable PTX with the PTX form's ABI. The user's module is retargeted to sm_90; a tcgen05
// instruction of its own cannot run there and is refused with its line.
Result<std::string> emulated_ptx_functions(const KernelSource& source, const Prepared& prepared,
                                           std::string& ptx, const Context& context) {
  if (const size_t line = first_tcgen05_line(ptx); line != 0)
    return Error(
        ErrorCode::kUsage,
        "compile_kernel: " + source.path + ", line " + std::to_string(line) +
            " issues a tcgen05 instruction itself; the sm_90 emulation replaces only "
            "the generated functions",
        std::vector<ErrorDetail>{{"line", std::to_string(line)},
                                 {"note",
                                  "call the transfers and tmemjit_alloc, tmemjit_dealloc, "
                                  "tmemjit_fence_before_sync and tmemjit_fence_after_sync instead, "
                                  "or compile for a tcgen05 target"}});
  static const std::regex target_line(R"((^|\n)([ \t]*\.target[ \t]+)[^\n]*)");
  if (!std::regex_search(ptx, target_line))
    return Error(ErrorCode::kUsage, "compile_kernel: " + source.path +
                                        " has no .target directive; a PTX module starts with "
                                        ".version, .target and .address_size");
  ptx = std::regex_replace(ptx, target_line, "$1$2sm_90", std::regex_constants::format_first_only);
  std::vector<const kernels::TransferCode*> codes;
  for (const kernels::TransferCode& code : prepared.codes) codes.push_back(&code);
  auto emulation = compile_cuda_front_end(kernels::cuda_emulated_ptx_functions(codes),
                                          "tmemjit_emulation.cu", {}, {"--std=c++17"}, {},
                                          context.options, /*relocatable=*/true, /*lto=*/false);
  if (!emulation.ok()) return std::move(emulation).error();
  return std::string(emulation->output.begin(), emulation->output.end());
}

// The miss path: prepare, front end (cached), splice, compile.
Result<Built> build(const KernelSource& source, std::span<const NamedTransfer> transfers,
                    const Context& context) {
  auto prepared = prepare(transfers);
  if (!prepared.ok()) return std::move(prepared).error();
  const Target target = context.options.target;
  const bool emulated = target == Target::kSm90;
  Built built;
  Meta meta;
  std::string ptx, entry;
  if (source.language == Language::kCuda) {
    // The kernel's side: NVRTC once per source and register counts.
    std::vector<std::string> signatures;
    for (const kernels::TransferCode& code : prepared->codes)
      signatures.push_back(kernels::front_end_signature(code));
    const std::string expression = is_identifier(source.entry) ? "" : source.entry;
    auto fe = lto_compile("tmemjit/kernel-side", source.text, source.path,
                          transfers_header(*prepared, target), expression, context, signatures);
    if (!fe.ok()) return front_end_error(source, prepared->codes, std::move(fe).error());
    built.front_end_cache = fe->cache;
    built.front_end_ms = fe->ms;
    // The layout's side: the generated functions, one translation unit per set of layouts.
    std::vector<const kernels::TransferCode*> codes;
    for (const kernels::TransferCode& code : prepared->codes) codes.push_back(&code);
    // Every new layout pays this translation unit. The generated code uses none of the CUDA
    // runtime's declarations, and NVRTC's -minimal omits them (measured: 24-36 ms become 18-21).
    auto impl = lto_compile("tmemjit/layout-side", kernels::cuda_implementation(codes, target),
                            "tmemjit_transfers.cu", "", "", context, {}, {"-minimal"});
    if (!impl.ok()) return std::move(impl).error();
    // One program: LTO inlines the transfers into the kernel and folds NAME_coord.
    auto linked =
        link_lto_to_ptx({{source.path, std::span<const char>(fe->payload->blob)},
                         {"tmemjit_transfers.cu", std::span<const char>(impl->payload->blob)}},
                        context.options);
    if (!linked.ok()) return std::move(linked).error();
    built.link_ms = linked->link_ms;
    ptx = std::move(linked->ptx);
    const std::vector<std::string> entries = ptx_entries(ptx);
    entry = !fe->entry.empty() ? fe->entry : find_entry(entries, source.entry);
    if (entry.empty() || std::find(entries.begin(), entries.end(), entry) == entries.end())
      return unknown_entry(source, entries);
    for (const kernels::TransferCode& code : prepared->codes)
      if (ptx.find(std::string(kernels::kTransferMarker) + code.options.name + "\n") ==
              std::string::npos &&
          ptx.find(std::string(kernels::kTransferMarker) + code.options.name + ";") ==
              std::string::npos)
        built.warnings.push_back("transfer '" + code.options.name + "' is never called by " +
                                 source.path);
  } else {
    ptx = source.text;
    const std::vector<std::string> entries = ptx_entries(ptx);
    entry = find_entry(entries, source.entry);
    if (entry.empty()) return unknown_entry(source, entries);
    // The generated .funcs go right after the module header; the user's own declarations of
    // them are dropped (keeping its line numbers), and the log's lines are mapped back.
    std::set<std::string> symbols = {"tmemjit_alloc", "tmemjit_dealloc",
                                     "tmemjit_fence_before_sync", "tmemjit_fence_after_sync"};
    for (const kernels::TransferCode& code : prepared->codes) {
      const std::string& name = code.options.name;
      if (!calls(ptx, name))
        built.warnings.push_back("transfer '" + name + "' is never called by " + source.path);
      symbols.insert({name, name + "_wait", name + "_coord"});
    }
    auto generated = emulated ? emulated_ptx_functions(source, *prepared, ptx, context)
                              : real_ptx_functions(*prepared, target);
    if (!generated.ok()) return std::move(generated).error();
    if (prepared->cta_group == 2) symbols.insert("tmemjit_cluster_sync");
    for (const std::string& symbol : symbols) replace_extern(ptx, symbol, "", true);
    const std::string body = "\n" + kernels::ptx_without_header(*generated);
    size_t header_end = ptx.find(".address_size");
    if (header_end == std::string::npos) header_end = ptx.find(".target");
    if (header_end == std::string::npos)
      return Error(ErrorCode::kUsage, "compile_kernel: " + source.path +
                                          " has no .target directive; a PTX module starts with "
                                          ".version, .target and .address_size");
    header_end = ptx.find('\n', header_end);
    if (header_end == std::string::npos) header_end = ptx.size();
    const size_t after_line = static_cast<size_t>(std::count(
                                  ptx.begin(), ptx.begin() + static_cast<long>(header_end), '\n')) +
                              1;
    const size_t lines = static_cast<size_t>(std::count(body.begin(), body.end(), '\n'));
    ptx.insert(header_end + (header_end < ptx.size() ? 1 : 0), body);
    meta.fields.emplace("inserted_after", std::to_string(after_line));
    meta.fields.emplace("inserted_lines", std::to_string(lines));
  }

  CompileOptions options = context.ptx_options;
  auto compiled = compile_ptx(ptx, options);
  if (!compiled.ok()) {
    Error error = std::move(compiled).error();
    if (source.language != Language::kPtx) return error;
    // ptxas counts lines of the combined module: name the user's file and line instead.
    const size_t after = std::stoul(meta.get("inserted_after"));
    const size_t lines = std::stoul(meta.get("inserted_lines"));
    std::string message = user_log(error.message(), source.path, after, lines);
    while (!message.empty() && message.back() == '\n') message.pop_back();
    return Error(error.code(), message, user_log(error.details(), source.path, after, lines));
  }
  built.ptx_compile_ms = compiled->compile_ms;
  meta.fields.emplace("entry", entry);
  meta.fields.emplace("emulated", emulated ? "1" : "0");
  meta.fields.emplace("backend", std::string(to_string(compiled->backend)));
  for (const kernels::TransferCode& code : prepared->codes) {
    meta.fields.emplace("transfer", code.options.name + "|" + code.plan.op.to_string() + "|" +
                                        std::to_string(code.plan.regs_per_thread) + "|" +
                                        std::to_string(code.plan.instructions_per_warp()) + "|" +
                                        std::to_string(code.plan.alloc_columns));
    if (emulated)
      for (const std::string& instruction : kernels::emulated_instructions(code))
        meta.fields.emplace("instruction", instruction);
  }
  for (const std::string& warning : built.warnings) meta.fields.emplace("warning", warning);
  meta.log = compiled->log;
  built.payload.blob = std::move(compiled->cubin);
  built.payload.text = std::move(ptx);
  built.payload.meta = meta.text();
  return built;
}

std::shared_ptr<Kernel::Impl> make_impl(std::shared_ptr<const Payload> payload, Target target) {
  const Meta meta = Meta::parse(payload->meta);
  auto impl = std::make_shared<Kernel::Impl>(meta.get("entry"), target, std::move(payload));
  if (meta.get("emulated") == "1") {
    // Fields are kept in key order, and within a key in insertion order.
    impl->set_emulation(meta.all("instruction"));
  }
  return impl;
}

void fill_report(CompileReport& report, const Payload& payload) {
  const Meta meta = Meta::parse(payload.meta);
  report.log = meta.log;
  report.warnings = meta.all("warning");
  report.entry = meta.get("entry");
  report.transfers.clear();
  for (const std::string& line : meta.all("transfer")) {
    std::vector<std::string> parts;
    std::istringstream fields(line);
    std::string part;
    while (std::getline(fields, part, '|')) parts.push_back(part);
    if (parts.size() != 5) continue;
    report.transfers.push_back(
        {parts[0], parts[1], std::stoi(parts[2]), std::stoi(parts[3]), std::stoi(parts[4])});
  }
}

}  // namespace

// ---- public -------------------------------------------------------------------------------------

std::string_view to_string(CacheSource source) noexcept {
  switch (source) {
    case CacheSource::kCompiled:
      return "miss";
    case CacheSource::kMemory:
      return "memory";
    case CacheSource::kDisk:
      return "disk";
    case CacheSource::kRemote:
      return "remote";
  }
  return "miss";
}

std::string_view to_string(Language language) noexcept {
  return language == Language::kPtx ? "ptx" : "cuda";
}

Result<Language> parse_language(std::string_view text) {
  if (text == "cuda") return Language::kCuda;
  if (text == "ptx") return Language::kPtx;
  return Error(ErrorCode::kUsage,
               "unknown language '" + std::string(text) + "'; allowed: cuda, ptx");
}

Result<DeviceFunction> device_function(const TransferSpec& spec,
                                       const DeviceFunctionOptions& options, Target target) {
  auto code = kernels::prepare_transfer(spec, options);
  if (!code.ok()) return std::move(code).error();
  if (auto group = kernels::lifecycle_cta_group(std::span(&*code, 1)); !group.ok())
    return std::move(group).error();
  const Plan& plan = code->plan;
  DeviceFunction fn;
  fn.name = options.name;
  fn.language = options.language;
  fn.direction = plan.op.direction();
  fn.regs_per_thread = plan.regs_per_thread;
  fn.instructions_per_warp = plan.instructions_per_warp();
  fn.alloc_columns = plan.alloc_columns;
  fn.coord_rank = code->coord.rank;
  fn.target = target;
  const std::string regs = std::to_string(plan.regs_per_thread);
  std::string extra;
  if (options.warp_argument) extra += ", uint32_t warp";
  if (options.column_argument) extra += ", uint32_t column";
  if (options.language == Language::kCuda) {
    fn.source = kernels::cuda_lifecycle(target, false, options.cta_group) + "\n" +
                kernels::cuda_transfer(*code, target);
    fn.signature = "__device__ void " + options.name + "(uint32_t tmem_base, uint32_t (&regs)[" +
                   regs + "]" + extra + ")";
    return fn;
  }
  if (target == Target::kSm90)
    return Error(ErrorCode::kUsage,
                 "the PTX form of a device function is not emulated for sm_90; use the CUDA form "
                 "(language cuda), whose emulated functions compile for sm_90");
  ptx::Module module(target);
  if (Status ok = kernels::add_transfer_functions(*&module, *code, options.name,
                                                  options.name + "_wait", options.name + "_coord");
      !ok.ok())
    return std::move(ok).error();
  kernels::add_lifecycle_functions(module, options.cta_group);
  auto text = ptx::print(module);
  if (!text.ok()) return std::move(text).error();
  fn.source = "// " + options.name + ": " + plan.op.to_string() + " at scope " +
              plan.scope.to_string() + "; " + options.name + "_regs = " + regs + " (" +
              std::to_string(plan.instructions_per_warp()) + " instructions per warp, " +
              std::to_string(plan.alloc_columns) + " columns to allocate)\n" + *text;
  const std::string params = std::string(".param .b32 tmem_base") +
                             (options.warp_argument ? ", .param .b32 warp" : "") +
                             (options.column_argument ? ", .param .b32 column" : "");
  if (plan.op.is_load()) {
    fn.signature = ".visible .func (.param .align 4 .b8 regs[" +
                   std::to_string(4 * plan.regs_per_thread) + "]) " + options.name + "(" + params +
                   ")";
  } else {
    std::string slots;
    for (int s = 0; s < plan.regs_per_thread; ++s)
      slots += ", .param .b32 slot" + std::to_string(s);
    fn.signature = ".visible .func " + options.name + "(.param .b32 tmem_base" + slots +
                   (options.warp_argument ? ", .param .b32 warp" : "") +
                   (options.column_argument ? ", .param .b32 column" : "") + ")";
  }
  return fn;
}

Result<Kernel> compile_transfer(const TransferSpec& spec, const CompileOptions& options,
                                KernelKind kind, CompileReport* report) {
  TransferCompileReport info;
  Result<Kernel> kernel = compile_transfer_reported(spec, options, kind, &info);
  if (report != nullptr) {
    *report = CompileReport{};
    report->cache = source_of(info.lookup);
    report->cache_enabled = info.lookup != ModuleCache::Lookup::kUncached;
    report->backend = info.backend;
    report->compile_ms = info.compile_ms;
    report->key = info.key.hex();
    report->log = info.log;
    report->entry = kernels::kernel_name(kind);
  }
  return kernel;
}

Result<Kernel> compile_kernel(const KernelSource& source, std::span<const NamedTransfer> transfers,
                              const CompileOptions& options) {
  return compile_kernel(source, transfers, options, nullptr);
}

Result<Kernel> compile_kernel(const KernelSource& given, std::span<const NamedTransfer> transfers,
                              const CompileOptions& options, CompileReport* report) {
  if (report != nullptr) *report = CompileReport{};
  KernelSource source = given;
  if (source.path.empty())
    source.path = source.language == Language::kPtx ? "kernel.ptx" : "kernel.cu";
  if (source.text.empty())
    return Error(ErrorCode::kUsage, "compile_kernel: the source " + source.path + " is empty");
  if (source.entry.empty())
    return Error(ErrorCode::kUsage, "compile_kernel: no entry named",
                 "KernelSource::entry names the __global__ function to launch");
  if (Status ok = check_names(transfers); !ok.ok()) return std::move(ok).error();
  auto context = context_of(source, options);
  if (!context.ok()) return std::move(context).error();
  const Key128 key = kernel_key(source, transfers, *context);
  if (report != nullptr) {
    report->key = key.hex();
    report->backend = context->options.backend;
  }
  ModuleCache& cache = module_cache();
  const uint64_t generation = cache.generation();
  if (cache.enabled()) {
    if (std::shared_ptr<Kernel::Impl> hit = kernel_table().find(key, generation)) {
      cache.count_hit();
      if (report != nullptr) {
        report->cache = CacheSource::kMemory;
        report->front_end_cache = CacheSource::kMemory;
        fill_report(*report, hit->payload());
      }
      return Kernel(std::move(hit));
    }
  }
  ModuleCache::Lookup lookup = ModuleCache::Lookup::kCompiled;
  double compile_ms = 0;
  std::vector<std::string> new_warnings;
  CacheSource front_end_cache = CacheSource::kCompiled;
  double front_end_ms = 0, link_ms = 0, ptx_compile_ms = 0;
  auto payload = cache.get_or_compile(
      key,
      [&]() -> Result<Payload> {
        const auto start = Clock::now();
        auto built = build(source, transfers, *context);
        compile_ms = ms_since(start);
        if (!built.ok()) return std::move(built).error();
        new_warnings = built->warnings;
        front_end_cache = built->front_end_cache;
        front_end_ms = built->front_end_ms;
        link_ms = built->link_ms;
        ptx_compile_ms = built->ptx_compile_ms;
        return std::move(built->payload);
      },
      &lookup);
  if (report != nullptr) {
    report->cache = source_of(lookup);
    report->cache_enabled = lookup != ModuleCache::Lookup::kUncached;
    report->compile_ms = compile_ms;
    report->front_end_cache =
        lookup == ModuleCache::Lookup::kCompiled || lookup == ModuleCache::Lookup::kUncached
            ? front_end_cache
            : source_of(lookup);
    report->front_end_ms = front_end_ms;
    report->link_ms = link_ms;
    report->ptx_compile_ms = ptx_compile_ms;
  }
  if (!payload.ok()) return std::move(payload).error();
  for (const std::string& warning : new_warnings)
    std::fprintf(stderr, "tmemjit: warning: %s\n", warning.c_str());
  std::shared_ptr<Kernel::Impl> impl = make_impl(*payload, context->options.target);
  if (report != nullptr) fill_report(*report, **payload);
  if (lookup == ModuleCache::Lookup::kUncached) return Kernel(std::move(impl));
  return Kernel(kernel_table().insert(key, generation, std::move(impl)));
}

}  // namespace tmem
