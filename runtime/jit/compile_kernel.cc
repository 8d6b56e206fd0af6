// compile_kernel (docs/specialization.md): the user's kernel specialized for transfers chosen at
// run time, as one pipeline of typed steps:
//   context (options, defaults, key digest) → include closure → key → memory table →
//   module cache (memory, disk, remote) → on a miss: prepare the transfers, check the user's
//   options, generate (kernels/specialized_source.h), NVRTC with precompiled headers (CUDA) or
//   splice (PTX), the PTX compile, typed metadata → Kernel.
// This is the eager pipeline; the tiers (lazy, generic) are one layer over it, the TieredCompiler
// of tiers.h, which every call goes through.
// A CUDA source is one ordinary NVRTC compile of the source with the transfers inline, so the code
// outside the transfers is what NVRTC makes of the source itself; the parse of its headers is
// reused across layouts through NVRTC's precompiled headers.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/device_function.h"
#include "kernels/emulation_kernels.h"
#include "kernels/generic_transfer.h"
#include "kernels/specialized_source.h"
#include "runtime/compile/backends.h"
#include "runtime/compile/closure_search.h"
#include "runtime/compile/include_closure.h"
#include "runtime/compile/log_hints.h"
#include "runtime/compile/nvcc_front_end.h"
#include "runtime/compile/precompiled_headers.h"
#include "runtime/jit/compile_transfer.h"
#include "runtime/jit/emulate_module.h"
#include "runtime/jit/entry_meta.h"
#include "runtime/jit/kernel_context.h"
#include "runtime/jit/kernel_impl.h"
#include "runtime/jit/kernel_request.h"
#include "runtime/jit/kernel_table.h"
#include "runtime/jit/tiers.h"
#include "runtime/ptx/text.h"
#include "runtime/support/exit_point.h"
#include "runtime/support/settings.h"
#include "runtime/support/warning.h"
#include "tmem/code_stats.h"
#include "tmem/jit.h"
#include "tmem/specialize.h"
#include "tmem/text.h"

namespace tmem {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

using KernelTable = tmem::KernelTable<Key128, Key128Hash>;

KernelTable& kernel_table() {
  static KernelTable table;
  return table;
}

bool is_identifier(const std::string& text) {
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  for (char c : text)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

// The source's file name and entry in messages: user text, quoted up to a bound
// (docs/reliability.md §Bounds on every input read).
std::string path_of(const KernelSource& source) { return quote_excerpt(source.path); }
std::string entry_of(const KernelSource& source) { return quote_excerpt(source.entry); }

// ---- the include closure ------------------------------------------------------------------------

// Whether a header of the closure was written, replaced or removed since the scan: the kernel
// compiled meanwhile may come from text the key does not describe (issue 39 N03).
bool changed_since_scan(const Includes& includes) {
  return includes.closure != nullptr &&
         closure_stamps_now(*includes.closure) != includes.closure->stamps;
}

// Every file the source may include, by content (docs/cache.md): an edited header is a new key.
// The generated header is skipped: the transfers are in the key already.
Result<Includes> includes_of(const KernelSource& source, const KernelContext& context) {
  if (source.language != Language::kCuda) return Includes{};
  auto search = include_search_of(context.nvrtc);
  if (!search.ok()) return std::move(search).error();
  ClosureQuery query;
  query.source = source.text;
  query.source_path = source.path;
  query.include_dirs = std::move(search->include_dirs);
  query.pre_includes = std::move(search->pre_includes);
  query.defines = std::move(search->defines);
  const std::string named_first = kernels::include_lines(context.options.precompile);
  if (!named_first.empty()) {
    // A header parsed once must not reach the transfers: its precompiled parse would hold one
    // layout's transfers and serve them to the next. Scanned alone, the transfers' header is
    // looked up like any other and is missing when reached.
    query.source = named_first;
    auto alone = include_closure_cache().closure(query);
    if (!alone.ok()) return std::move(alone).error();
    for (const std::string& missing : (*alone)->missing)
      if (missing.starts_with(kernels::kTransfersHeader))
        return Error(ErrorCode::kUsage,
                     "CompileOptions::precompile: a header named there includes <" +
                         std::string(kernels::kTransfersHeader) +
                         ">, so its parse would hold one layout's transfers",
                     "name only headers that do not reach the transfers (CuTe, the library's "
                     "own utilities); the one that includes them is compiled with each layout");
    query.source = std::string_view();
  }
  const std::string source_text = named_first + source.text;  // as NVRTC reads it
  query.source = source_text;
  query.in_memory = {std::string(kernels::kTransfersHeader)};
  auto closure = include_closure_cache().closure(query);
  if (!closure.ok()) return std::move(closure).error();
  Includes includes{(*closure)->digest, static_cast<int>((*closure)->files.size()), *closure, {}};
  if (!(*closure)->unresolved.empty())
    includes.uncacheable = "the include scan cannot follow " + (*closure)->unresolved.front() +
                           ": an edit to what it names would go unseen, so this kernel is "
                           "compiled each time and never cached (name the header in the source, "
                           "or define its macro with -D)";
  return includes;
}

// ---- the CUDA route -----------------------------------------------------------------------------

struct FrontEnd {
  std::string ptx;
  std::vector<char> cubin;  // when NVRTC compiled to the cubin itself (KernelContext)
  std::string entry;        // the lowered name of a name-expression entry; else empty
  std::string log;
  std::string headers;  // CompileReport::headers
  bool headers_reused = false;
  std::string warning;  // the user's code before the transfers could not be precompiled
  double ms = 0;
};

// Why the library makes no precompiled headers for this compile; empty when it does.
std::string pch_off_reason(const kernels::CudaUnit& unit, const KernelContext& context) {
  if (!context.options.precompile.empty()) return {};
  if (!unit.header_stop)
    return std::string("off: the source does not write #include <") +
           std::string(kernels::kTransfersHeader) + "> itself";
  if (unit.prefix.find("#") == std::string::npos) return "none: no header before the transfers";
  return {};
}

// The nvcc front end (docs/specialization.md "nvcc as the front end"): the same unit and headers
// as NVRTC's, compiled by the toolkit's nvcc; no precompiled headers, no name expressions.
Result<FrontEnd> compile_cuda_source_with_nvcc(
    const KernelSource& source, const kernels::PreparedTransfers& prepared,
    const kernels::CudaUnit& unit, const std::vector<std::pair<std::string, std::string>>& headers,
    const KernelContext& context) {
  if (!source.entry.empty() && !is_identifier(source.entry))
    return Error(ErrorCode::kUsage,
                 "compile_kernel: '" + source.entry +
                     "' is a name expression, which only NVRTC lowers; the nvcc front end takes "
                     "the kernel's plain, extern \"C\" or mangled name",
                 "front_end nvrtc, or the lowered name (tmemjit specialize --front-end nvrtc "
                 "reports it)");
  auto compiled = compile_cuda_with_nvcc(
      unit.text, source.path, headers, context.nvrtc,
      context.nvrtc_compiles ? context.ptx : context.options,
      context.nvrtc_compiles ? FrontEndOutput::kCubin : FrontEndOutput::kPtx);
  if (!compiled.ok())
    return explain_front_end_error(source, prepared.options(), std::move(compiled).error());
  FrontEnd out;
  out.headers = "off: the nvcc front end has no in-process precompiled headers";
  out.ptx.assign(compiled->output.begin(), compiled->output.end());
  out.cubin = std::move(compiled->cubin);
  out.log = std::move(compiled->log);
  out.ms = compiled->compile_ms;
  return out;
}

// The main file's #include through which a source reaches <tmemjit/transfers.cuh> without writing
// it (a header-only library's header calls the transfers): where the precompiled headers stop
// (docs/specialization.md "Header-only libraries"). Each directive's closure is scanned alone,
// without the transfers' header in memory, so that reaching it shows as that name missing.
struct ReachingInclude {
  size_t offset = std::string_view::npos;  // npos: none (or the source includes it itself)
  std::string line;                        // the directive as written
  bool brings_more = false;                // its closure has headers besides itself
};

ReachingInclude reaching_include(const KernelSource& source, const KernelContext& context) {
  ReachingInclude found;
  if (!context.options.precompile.empty()) return found;  // the user placed the stop
  const std::vector<kernels::IncludeDirective> directives =
      kernels::include_directives(source.text);
  for (const kernels::IncludeDirective& directive : directives)
    if (directive.line.find(kernels::kTransfersHeader) != std::string::npos) return found;
  auto search = include_search_of(context.nvrtc);
  if (!search.ok()) return found;
  ClosureQuery query;
  query.source_path = source.path;
  query.include_dirs = std::move(search->include_dirs);
  query.defines = std::move(search->defines);
  for (const kernels::IncludeDirective& directive : directives) {
    const std::string text = directive.line + "\n";
    query.source = text;
    auto closure = include_closure_cache().closure(query);
    if (!closure.ok()) continue;
    for (const std::string& missing : (*closure)->missing)
      if (missing.starts_with(kernels::kTransfersHeader))
        return {directive.offset, directive.line, (*closure)->files.size() > 1};
  }
  return found;
}

// The warning that headers are parsed again for every layout, with what to change; empty when
// none are (or the user named the ones to parse once).
std::string parsed_again_warning(const kernels::CudaUnit& unit, const KernelSource& source,
                                 const KernelContext& context, const ReachingInclude& reaching) {
  if (!context.options.precompile.empty()) return {};
  const bool through_header = !unit.header_stop || reaching.offset != std::string_view::npos;
  if (unit.includes_after == 0 && !reaching.brings_more) return {};
  std::string what;
  if (!through_header)
    what = "the headers " + source.path + " includes after <tmemjit/transfers.cuh>";
  else if (reaching.offset != std::string_view::npos)
    what = source.path + " reaches <tmemjit/transfers.cuh> through '" + reaching.line +
           "', so the headers included from there on";
  else
    what = source.path + " reaches <tmemjit/transfers.cuh> through a header, so its headers";
  return what +
         " are parsed again for every layout: name the ones to parse once in "
         "CompileOptions::precompile (CLI --precompile HEADER)" +
         (through_header ? "" : ", or include them before the transfers") +
         " (docs/specialization.md, \"Header-only libraries\")";
}

// ---- precompiled headers ------------------------------------------------------------------------

// CompileReport::headers of a compile that ran without precompiled headers because none were
// kept for its prefix yet, with a background job making them (TMEMJIT_PCH_CREATE=background).
constexpr std::string_view kDeferredHeaders =
    "deferred: made in the background for the next layout";

// One NVRTC front-end call with everything but its options: what the compile runs, and what a
// background job runs again to make the precompiled header (copies: the job outlives the compile).
struct FrontEndCall {
  std::string text, path;
  std::vector<std::pair<std::string, std::string>> headers;
  std::vector<std::string> expressions;
  CompileOptions options;
  FrontEndOutput output;
  Result<CudaFrontEnd> run(const std::vector<std::string>& nvrtc_options,
                           std::string_view keep_stem = {}) const {
    return compile_cuda_front_end(text, path, headers, nvrtc_options, expressions, options, output,
                                  keep_stem);
  }
};

// Whether the compile that claimed a background PCH passed without one: a job whose compile with
// the PCH fails turns precompiled headers off only when the plain compile passed (the failure is
// then theirs, not the user's code). Told once; told false if the compile returns early.
class PlainVerdict {
 public:
  PlainVerdict() : future_(promise_.get_future().share()) {}
  PlainVerdict(const PlainVerdict&) = delete;
  PlainVerdict& operator=(const PlainVerdict&) = delete;
  ~PlainVerdict() { tell(false); }
  void tell(bool passed) {
    if (!told_) promise_.set_value(passed);
    told_ = true;
  }
  std::shared_future<bool> future() const { return future_; }

 private:
  std::promise<bool> promise_;
  std::shared_future<bool> future_;
  bool told_ = false;
};

// One directory per header prefix: NVRTC reuses a PCH without checking in-memory headers or files
// edited since, so the key covers the prefix, the options and the include closure.
Key128 pch_key(const KernelSource& source, const kernels::CudaUnit& unit,
               const KernelContext& context, const Includes& includes) {
  KeyBuilder key;
  key.str("domain", "tmemjit/pch");
  key.integer("context.lo", static_cast<int64_t>(context.digest.lo));
  key.integer("context.hi", static_cast<int64_t>(context.digest.hi));
  key.integer("includes.lo", static_cast<int64_t>(includes.digest.lo));
  key.integer("includes.hi", static_cast<int64_t>(includes.digest.hi));
  // And the headers' signatures: a PCH parsed while a header was edited and put back (same
  // content, new change time) is never reused for the restored text (issue 39 N03).
  if (includes.closure != nullptr) {
    key.integer("stamps.lo", static_cast<int64_t>(includes.closure->stamps.lo));
    key.integer("stamps.hi", static_cast<int64_t>(includes.closure->stamps.hi));
  }
  key.str("path", source.path);
  key.str("prefix", unit.prefix);
  return key.finish();
}

bool lease_used(const std::optional<PchLease>& lease) {
  return lease && !lease->directory().empty();
}

// Makes the PCH of `key` on the background compiler (docs/specialization.md "How a layout
// compiles"): the claiming compile's front end once more, with the PCH options, its output
// dropped. A failure with the PCH where NVRTC alone passed turns precompiled headers off for the
// process (PchLease::fall_back) and warns once, since no report is left to carry it.
void make_pch_in_background(const Key128& key, FrontEndCall call, std::vector<std::string> nvrtc,
                            std::shared_future<bool> plain_passed) {
  call.options.keep_dir.clear();  // the claiming compile kept its own files; this is no layout
  auto job = [key, call = std::move(call), nvrtc = std::move(nvrtc), plain_passed] {
    PchLease lease = PchCache::instance().lease(key);
    if (lease.creating()) {
      std::vector<std::string> options = nvrtc;
      const std::vector<std::string> pch = lease.options();
      options.insert(options.end(), pch.begin(), pch.end());
      auto made = call.run(options);
      if (made.ok()) {
        lease.finish(made->pch, made->pch_heap_required);
      } else if (plain_passed.get()) {
        warn("compile_kernel: making the precompiled header of " + call.path +
             " in the background failed, so later compiles of this process go without them: " +
             lease.fall_back(made.error()).substr(5));
      }
    }
    PchCache::instance().background_done(key);
  };
  BackgroundCompiler::instance().post(std::move(job),
                                      [key] { PchCache::instance().background_done(key); });
}

Result<FrontEnd> compile_cuda_source(const KernelSource& source,
                                     const kernels::PreparedTransfers& prepared,
                                     const std::string& transfers_header,
                                     const KernelContext& context, const Includes& includes,
                                     std::string_view keep_stem) {
  const ReachingInclude reaching = reaching_include(source, context);
  const kernels::CudaUnit unit =
      kernels::cuda_unit(source.text, source.path, context.options.precompile, reaching.offset);
  std::vector<std::pair<std::string, std::string>> headers = {
      {std::string(kernels::kTransfersHeader), transfers_header}};
  if (!unit.prefix_header_name.empty())
    headers.emplace_back(unit.prefix_header_name, unit.prefix_header);
  if (context.options.front_end == FrontEndCompiler::kNvcc)
    return compile_cuda_source_with_nvcc(source, prepared, unit, headers, context);
  std::vector<std::string> options = context.nvrtc;
  FrontEnd out;
  out.headers = pch_off_reason(unit, context);
  out.warning = parsed_again_warning(unit, source, context, reaching);
  // A precompiled header is keyed by the include digest too: one the scan cannot follow would
  // serve its old parse after an edit.
  if (out.headers.empty() && !includes.uncacheable.empty())
    out.headers = "off: the include scan cannot follow every header (see the warning)";
  std::optional<PchLease> lease;
  const std::string expression = is_identifier(source.entry) ? "" : source.entry;
  std::vector<std::string> expressions;
  if (!expression.empty()) expressions.push_back(expression);
  const FrontEndCall call{unit.text,
                          source.path,
                          headers,
                          expressions,
                          context.nvrtc_compiles ? context.ptx : context.options,
                          context.nvrtc_compiles ? FrontEndOutput::kCubin : FrontEndOutput::kPtx};
  PlainVerdict verdict;  // told to a background job that makes the PCH: whether NVRTC alone passed
  if (out.headers.empty()) {
    const Key128 key = pch_key(source, unit, context, includes);
    const bool defer = Settings::from_environment().pch_creation.value == PchCreation::kBackground;
    lease.emplace(defer ? PchCache::instance().lease_if_made(key)
                        : PchCache::instance().lease(key));
    if (lease->deferred()) {
      out.headers = std::string(kDeferredHeaders);
      if (lease->claimed()) make_pch_in_background(key, call, context.nvrtc, verdict.future());
    } else if (lease->directory().empty()) {
      out.headers = "off: " + lease->reason();
    } else {
      const std::vector<std::string> pch = lease->options();
      options.insert(options.end(), pch.begin(), pch.end());
      if (!lease->repaired().empty())
        out.warning += (out.warning.empty() ? "" : "; ") + lease->repaired();
    }
    if (!unit.inline_stop_reason.empty() && (lease->deferred() || lease_used(lease)))
      out.warning += std::string(out.warning.empty() ? "" : "; ") +
                     "only the headers before the first line of code of " + source.path +
                     " are precompiled: " + unit.inline_stop_reason +
                     ", so the code before it is parsed again for every layout "
                     "(docs/specialization.md, \"How a layout compiles\")";
  }
  auto front_end = [&](const std::vector<std::string>& nvrtc_options) {
    return call.run(nvrtc_options, keep_stem);
  };
  auto compiled = front_end(options);
  verdict.tell(compiled.ok());
  if (!compiled.ok() && lease_used(lease)) {
    // A precompiled header that cannot be made or read is never the user's error: once more
    // without one (docs/reliability.md, "Precompiled headers degrade, never fail").
    auto plain = front_end(context.nvrtc);
    if (plain.ok()) out.headers = lease->fall_back(compiled.error());
    lease.reset();
    compiled = std::move(plain);
  }
  if (!compiled.ok()) {
    return explain_front_end_error(source, prepared.options(), std::move(compiled).error());
  }
  if (lease_used(lease)) {
    lease->finish(compiled->pch, compiled->pch_heap_required);
    out.headers = std::string(to_string(compiled->pch));
    out.headers_reused = compiled->pch == PchUse::kReused;
  }
  out.ptx.assign(compiled->output.begin(), compiled->output.end());
  out.cubin = std::move(compiled->cubin);
  if (!compiled->lowered_names.empty()) out.entry = compiled->lowered_names[0];
  out.log = std::move(compiled->log);
  out.ms = compiled->compile_ms;
  return out;
}

// ---- the PTX route ------------------------------------------------------------------------------

// The generated .funcs emulated for sm_90 (docs/specialization.md): CUDA C++ through NVRTC to
// relocatable PTX with the PTX form's ABI. The user's module is retargeted to sm_90; its own
// tcgen05 instructions are lowered after the splice (emulate_module).
Result<std::string> emulated_ptx_functions(const KernelSource& source,
                                           const kernels::PreparedTransfers& prepared,
                                           std::string& ptx, const KernelContext& context) {
  if (!ptx::retarget(ptx, "sm_90"))
    return Error(ErrorCode::kUsage, "compile_kernel: " + path_of(source) +
                                        " has no .target directive; a PTX module starts with "
                                        ".version, .target and .address_size");
  std::vector<const kernels::TransferCode*> codes;
  for (const kernels::TransferCode& code : prepared.codes) codes.push_back(&code);
  auto emulation = compile_cuda_front_end(kernels::cuda_emulated_ptx_functions(codes),
                                          "tmemjit_emulation.cu", {}, {"--std=c++17"}, {},
                                          context.options, FrontEndOutput::kRelocatablePtx);
  if (!emulation.ok()) return std::move(emulation).error();
  return std::string(emulation->output.begin(), emulation->output.end());
}

struct SplicedPtx {
  std::string ptx;
  size_t inserted_after = 0;  // the user's line after which the generated functions sit
  size_t inserted_lines = 0;
};

// The user's module with the generated .funcs after its header; its own declarations of them
// are dropped (keeping its line numbers).
Result<SplicedPtx> splice_ptx(const KernelSource& source,
                              const kernels::PreparedTransfers& prepared,
                              const KernelContext& context) {
  SplicedPtx out;
  out.ptx = source.text;
  const Target target = context.options.target;
  auto generated = target == Target::kSm90
                       ? emulated_ptx_functions(source, prepared, out.ptx, context)
                       : kernels::ptx_functions(prepared, target);
  if (!generated.ok()) return std::move(generated).error();
  std::vector<std::string> symbols = {"tmemjit_alloc", "tmemjit_dealloc",
                                      "tmemjit_fence_before_sync", "tmemjit_fence_after_sync"};
  if (prepared.cta_group == 2) symbols.push_back("tmemjit_cluster_sync");
  for (const kernels::TransferCode& code : prepared.codes)
    symbols.insert(symbols.end(),
                   {code.options.name, code.options.name + "_wait", code.options.name + "_coord"});
  for (const std::string& symbol : symbols) ptx::remove_extern_declarations(out.ptx, symbol);
  size_t header_end = ptx::header_end(out.ptx);
  if (header_end == std::string::npos)
    return Error(ErrorCode::kUsage, "compile_kernel: " + path_of(source) +
                                        " has no .target directive; a PTX module starts with "
                                        ".version, .target and .address_size");
  if (header_end == out.ptx.size() && !out.ptx.ends_with('\n')) {
    out.ptx += '\n';
    header_end = out.ptx.size();
  }
  std::string body = "\n" + kernels::ptx_without_header(*generated);
  if (!body.ends_with('\n')) body += '\n';
  out.inserted_after = ptx::line_of(out.ptx, header_end - 1);
  out.inserted_lines = static_cast<size_t>(std::count(body.begin(), body.end(), '\n'));
  out.ptx.insert(header_end, body);
  return out;
}

// ---- the build ----------------------------------------------------------------------------------

struct Built {
  Payload payload;
  KernelEntryMeta meta;
  bool headers_reused = false;
  double front_end_ms = 0;
  double ptx_compile_ms = 0;
};

Error unknown_entry(const KernelSource& source, const std::vector<std::string>& entries) {
  std::string list;
  for (const std::string& name : entries) {
    const std::string plain = ptx::plain_name(name);
    list += (list.empty() ? "" : ", ") + plain + (plain != name ? " (" + name + ")" : "");
  }
  return Error(ErrorCode::kUsage,
               "compile_kernel: no kernel '" + entry_of(source) + "' in " + path_of(source) +
                   "; the __global__ functions found: " + (list.empty() ? "none" : list),
               "name the entry as written in the source (a plain or extern \"C\" name, or a name "
               "expression such as \"epilogue<64>\"), or its lowered name");
}

// The miss path.
// The PTX compile of `ptx` by the backend, a PTX source's log lines mapped back to its file.
Result<CompiledModule> compile_module(const KernelSource& source, const std::string& ptx,
                                      const KernelContext& context, const SplicedPtx& spliced,
                                      std::string_view keep_stem) {
  auto compiled = compile_ptx(ptx, context.ptx, keep_stem);
  if (compiled.ok() || source.language != Language::kPtx) return compiled;
  // ptxas counts lines of the combined module: name the user's file and line instead.
  Error error = std::move(compiled).error();
  std::string message =
      user_log(error.message(), source.path, spliced.inserted_after, spliced.inserted_lines);
  while (!message.empty() && message.back() == '\n') message.pop_back();
  return Error(
      error.code(), message,
      user_log(error.details(), source.path, spliced.inserted_after, spliced.inserted_lines));
}

// The front end of an sm_90 compile: NVRTC makes PTX for sm_100a, which the emulation lowers.
KernelContext blackwell_front_end(const KernelContext& context) {
  KernelContext front = context;
  front.options.target = Target::kSm100a;
  front.nvrtc_compiles = false;
  return front;
}

// The user's NVRTC precompiled-header options are replaced by the library's (kernel_context.h).
std::string replaced_pch_warning(const KernelContext& context) {
  std::string given;
  for (const std::string& option : context.replaced_pch) given += " " + option;
  return "your NVRTC precompiled-header options (" + given.substr(1) +
         ") are replaced by the library's own: NVRTC reuses a precompiled header without "
         "checking the generated <" +
         std::string(kernels::kTransfersHeader) +
         ">, so one of its making could serve one layout's transfers to another "
         "(docs/specialization.md \"Options\"); leave them out to silence this";
}

// A transfer no file names is never called. A header-only library calls its transfers from a
// header the source includes: the closure's headers are searched too, only when the source
// itself does not name the transfer.
void add_never_called_warnings(const KernelSource& source,
                               const kernels::PreparedTransfers& prepared, const Includes& includes,
                               std::vector<std::string>& warnings) {
  for (const kernels::TransferCode& code : prepared.codes)
    if (!kernels::mentions_identifier(source.text, code.options.name) &&
        (includes.closure == nullptr ||
         !closure_mentions_identifier(*includes.closure, code.options.name)))
      warnings.push_back("transfer '" + code.options.name + "' is never called by " +
                         path_of(source) + " or a header it includes");
}

// The miss path: the specialized kernel, or with `generic` the generic tier of those transfers
// (docs/specialization.md §Tiers).
Result<Built> build(const KernelSource& source, std::span<const NamedTransfer> transfers,
                    const KernelContext& context, const Includes& includes,
                    std::span<const kernels::GenericTransfer> generic = {}) {
  auto prepared = kernels::prepare_transfers(transfers);
  if (!prepared.ok()) return std::move(prepared).error();
  const bool generic_tier = !generic.empty();
  if (Status ok = check_user_options(source, context); !ok.ok()) return std::move(ok).error();
  const Target target = context.options.target;
  Built built;
  KernelEntryMeta& meta = built.meta;
  meta.target = std::string(to_string(target));
  meta.emulated = target == Target::kSm90;
  meta.include_files = includes.files;
  // Kept files are named after the entry and the transfers' opcodes (CompileOptions::keep_dir).
  std::string keep_stem = source.entry;
  for (const kernels::TransferCode& code : prepared->codes)
    keep_stem += "-" + std::string(to_string(code.plan.op.shape())) + ".x" +
                 std::to_string(code.plan.op.num());
  if (generic_tier) keep_stem = source.entry + "-generic";
  std::string ptx;
  std::vector<char> cubin;
  SplicedPtx spliced;
  // sm_90: the user's own tcgen05 statements are lowered (emulate_module), their status ids after
  // the transfers' (docs/emulation.md §Blackwell kernels on Hopper).
  std::vector<std::string> instructions;
  if (meta.emulated)
    for (const kernels::TransferCode& code : prepared->codes)
      for (std::string& instruction : kernels::emulated_instructions(code))
        instructions.push_back(std::move(instruction));
  auto lower = [&](std::string& text) -> Status {
    auto lowered = emulate_module(text, path_of(source), context.ptx,
                                  static_cast<int>(instructions.size()) + 1);
    if (!lowered.ok()) return std::move(lowered).error();
    text = std::move(lowered->ptx);
    instructions.insert(instructions.end(), lowered->instructions.begin(),
                        lowered->instructions.end());
    return std::monostate{};
  };
  if (source.language == Language::kCuda) {
    const std::string header =
        generic_tier ? kernels::generic_transfers_header(generic, prepared->cta_group, target)
                     : kernels::transfers_header(*prepared, target);
    // sm_90: the front end compiles for sm_100a, so the kernel's own tcgen05 code (a body under
    // `#if __CUDA_ARCH__ >= 1000` too) is there for the lowering below; the transfers' header is
    // the emulated one (docs/emulation.md §Blackwell kernels on Hopper).
    const KernelContext front = target == Target::kSm90 ? blackwell_front_end(context) : context;
    auto front_end = compile_cuda_source(source, *prepared, header, front, includes, keep_stem);
    if (!front_end.ok()) return std::move(front_end).error();
    ptx = std::move(front_end->ptx);
    cubin = std::move(front_end->cubin);
    if (meta.emulated)
      if (Status lowered = lower(ptx); !lowered.ok()) return std::move(lowered).error();
    meta.headers = front_end->headers;
    meta.log = front_end->log;
    if (!front_end->warning.empty()) meta.warnings.push_back(front_end->warning);
    if (!context.replaced_pch.empty()) meta.warnings.push_back(replaced_pch_warning(context));
    built.headers_reused = front_end->headers_reused;
    built.front_end_ms = front_end->ms;
    const std::vector<std::string> entries = ptx::entry_names(ptx);
    meta.entry =
        !front_end->entry.empty() ? front_end->entry : ptx::find_entry(entries, source.entry);
    if (meta.entry.empty() ||
        std::find(entries.begin(), entries.end(), meta.entry) == entries.end())
      return unknown_entry(source, entries);
    add_never_called_warnings(source, *prepared, includes, meta.warnings);
  } else {
    const std::vector<std::string> entries = ptx::entry_names(source.text);
    meta.entry = ptx::find_entry(entries, source.entry);
    if (meta.entry.empty()) return unknown_entry(source, entries);
    for (const kernels::TransferCode& code : prepared->codes)
      if (!ptx::uses_symbol(source.text, code.options.name))
        meta.warnings.push_back("transfer '" + code.options.name + "' is never called by " +
                                path_of(source));
    // Lowered before the generated functions are spliced in: errors name the user's lines.
    KernelSource user = source;
    if (meta.emulated)
      if (Status lowered = lower(user.text); !lowered.ok()) return std::move(lowered).error();
    auto made = splice_ptx(user, *prepared, context);
    if (!made.ok()) return std::move(made).error();
    spliced = std::move(made).value();
    ptx = spliced.ptx;
  }
  if (meta.emulated) {
    keep_first_emulation_state(ptx);
    cubin.clear();
  }
  if (cubin.empty()) {  // a PTX source, or a backend named for a CUDA one
    auto compiled = compile_module(source, ptx, context, spliced, keep_stem);
    if (!compiled.ok()) return std::move(compiled).error();
    built.ptx_compile_ms = compiled->compile_ms;
    meta.backend = std::string(to_string(compiled->backend));
    if (!compiled->log.empty()) meta.log += (meta.log.empty() ? "" : "\n") + compiled->log;
    cubin = std::move(compiled->cubin);
  } else {  // the front end compiled to the cubin itself (nvcc through the toolkit's ptxas)
    meta.backend = std::string(to_string(
        context.options.front_end == FrontEndCompiler::kNvcc ? Backend::kPtxas : Backend::kNvrtc));
  }
  for (const kernels::TransferCode& code : prepared->codes) {
    meta.transfers.push_back({code.options.name, code.plan.op.to_string(),
                              code.plan.regs_per_thread, code.plan.instructions_per_warp(),
                              code.plan.alloc_columns});
  }
  meta.instructions = std::move(instructions);
  if (auto code = code_stats(cubin, meta.entry); code.ok())
    meta.code = std::move(code).value();
  else
    meta.warnings.push_back("no code statistics: " + code.error().message());
  built.payload.blob = std::move(cubin);
  built.payload.text = std::move(ptx);
  built.payload.meta = meta.to_json();
  return built;
}

void fill_report(CompileReport& report, const KernelEntryMeta& meta) {
  report.log = meta.log;
  report.warnings = meta.warnings;
  report.entry = meta.entry;
  report.transfers = meta.transfers;
  report.headers = meta.headers;
  report.include_files = meta.include_files;
  report.code = meta.code;
  if (auto backend = parse_backend(meta.backend); backend.ok()) report.backend = *backend;
}

// The payload's typed metadata, `report` filled from it when given.
Result<std::shared_ptr<const KernelEntryMeta>> read_meta(const Payload& payload,
                                                         CompileReport* report) {
  auto parsed = KernelEntryMeta::parse(payload.meta);
  if (!parsed.ok()) return std::move(parsed).error();
  auto meta = std::make_shared<const KernelEntryMeta>(std::move(parsed).value());
  if (report != nullptr) fill_report(*report, *meta);
  return meta;
}

// The specialized kernel's Impl over a payload: emulated where the metadata says so.
Result<std::shared_ptr<Kernel::Impl>> make_impl(std::shared_ptr<const Payload> payload,
                                                Target target, CompileReport* report) {
  auto meta = read_meta(*payload, report);
  if (!meta.ok()) return std::move(meta).error();
  Kernel::Impl::Binding binding = Kernel::Impl::Native{};
  if ((*meta)->emulated) binding = Kernel::Impl::Emulated{(*meta)->instructions};
  std::string entry = (*meta)->entry;
  return std::make_shared<Kernel::Impl>(std::move(entry), target, std::move(payload),
                                        std::move(binding), std::move(*meta));
}

Status check_request(const KernelSource& source, std::span<const NamedTransfer> transfers) {
  if (source.text.empty())
    return Error(ErrorCode::kUsage, "compile_kernel: the source " + path_of(source) + " is empty");
  if (source.entry.empty())
    return Error(ErrorCode::kUsage, "compile_kernel: no entry named",
                 "KernelSource::entry names the __global__ function to launch");
  if (source.text.find('\0') != std::string::npos)
    return Error(ErrorCode::kUsage,
                 "compile_kernel: the source " + path_of(source) + " holds a NUL byte at offset " +
                     std::to_string(source.text.find('\0')),
                 "a compiler reads a source up to its first NUL: the rest would be dropped");
  return kernels::check_transfer_names(transfers);
}

// The specialized kernel: memory table, module cache, or a build.
Result<std::shared_ptr<Kernel::Impl>> compile_specialized(const Request& request,
                                                          CompileReport* report) {
  const Key128& key = request.key;
  if (report != nullptr) {
    report->key = key.hex();
    report->backend = request.context.options.backend;
  }
  ModuleCache& cache = module_cache();
  const uint64_t generation = cache.generation();
  if (cache.enabled()) {
    if (std::shared_ptr<Kernel::Impl> hit = kernel_table().find(key, generation)) {
      cache.count_hit();
      if (report != nullptr) {
        report->cache = CacheSource::kMemory;
        report->front_end_cache = CacheSource::kMemory;
        if (const KernelEntryMeta* meta = hit->meta()) fill_report(*report, *meta);
      }
      return hit;
    }
  }
  ModuleCache::Lookup lookup = ModuleCache::Lookup::kCompiled;
  double compile_ms = 0, front_end_ms = 0, ptx_compile_ms = 0;
  bool headers_reused = false;
  std::vector<std::string> new_warnings;
  std::vector<std::string> call_warnings;  // about this call's caching, not the kernel
  std::optional<Payload> changed_during;   // built while a header changed: used once, not cached
  auto compile = [&]() -> Result<Payload> {
    const auto start = Clock::now();
    auto built = build(request.source, request.transfers, request.context, request.includes);
    compile_ms = ms_since(start);
    if (!built.ok()) return std::move(built).error();
    new_warnings = built->meta.warnings;
    headers_reused = built->headers_reused;
    front_end_ms = built->front_end_ms;
    ptx_compile_ms = built->ptx_compile_ms;
    if (changed_since_scan(request.includes)) {
      // A failed compile is not cached: the kernel goes back through changed_during instead.
      changed_during = std::move(built->payload);
      return Error(ErrorCode::kIo, "a header changed during the compile");
    }
    return std::move(built->payload);
  };
  Result<ModuleCache::Ptr> payload = ModuleCache::Ptr();
  if (request.includes.uncacheable.empty()) {
    payload = cache.get_or_compile(key, compile, &lookup);
  } else {
    lookup = ModuleCache::Lookup::kUncached;
    call_warnings.push_back(request.includes.uncacheable);
    Result<Payload> made = compile();
    if (made.ok())
      payload = std::make_shared<const Payload>(std::move(made).value());
    else if (!changed_during)
      payload = std::move(made).error();
  }
  if (changed_during) {
    lookup = ModuleCache::Lookup::kUncached;
    payload = std::make_shared<const Payload>(std::move(*changed_during));
    call_warnings.push_back(
        "a header of " + request.source.path +
        " changed while it compiled: this kernel was made from the text NVRTC read then, and is "
        "not cached (the next call compiles the header as it is)");
  }
  if (report != nullptr) {
    report->cache = source_of(lookup);
    report->cache_enabled = lookup != ModuleCache::Lookup::kUncached;
    report->compile_ms = compile_ms;
    const bool compiled =
        lookup == ModuleCache::Lookup::kCompiled || lookup == ModuleCache::Lookup::kUncached;
    report->front_end_cache = !compiled        ? source_of(lookup)
                              : headers_reused ? CacheSource::kMemory
                                               : CacheSource::kCompiled;
    report->front_end_ms = front_end_ms;
    report->ptx_compile_ms = ptx_compile_ms;
  }
  if (!payload.ok()) return std::move(payload).error();
  for (const std::string& warning : new_warnings) warn(warning);
  for (const std::string& warning : call_warnings) warn(warning);
  auto impl = make_impl(*payload, request.context.options.target, report);
  const bool hit = lookup == ModuleCache::Lookup::kMemoryHit ||
                   lookup == ModuleCache::Lookup::kDiskHit ||
                   lookup == ModuleCache::Lookup::kRemoteHit;
  if (!impl.ok() && hit) {
    // An entry whose metadata does not parse (damaged, forged, of another kind) is a miss: compiled
    // again and put in its place, never an error of the caller's (issue 39).
    const std::string why = impl.error().message();
    Result<Payload> made = compile();
    if (!made.ok()) return std::move(made).error();
    payload = cache.replace(key, std::move(made).value());
    lookup = ModuleCache::Lookup::kCompiled;
    const std::string warning = "the cache entry of " + request.source.path +
                                " had unusable metadata (" + why + "); compiled again";
    warn(warning);
    call_warnings.push_back(warning);
    if (report != nullptr) {
      report->cache = CacheSource::kCompiled;
      report->compile_ms = compile_ms;
    }
    impl = make_impl(*payload, request.context.options.target, report);
  }
  if (!impl.ok()) return std::move(impl).error();
  if (report != nullptr)
    report->warnings.insert(report->warnings.end(), call_warnings.begin(), call_warnings.end());
  if (lookup == ModuleCache::Lookup::kUncached) return std::move(*impl);
  return kernel_table().insert(key, generation, std::move(*impl));
}

// ---- the layer over it
// ---------------------------------------------------------------------------

// The eager pipeline as the TieredCompiler (tiers.h) sees it.
class EagerPipeline final : public EagerCompiler {
 public:
  Result<std::shared_ptr<Kernel::Impl>> compile(const Request& request,
                                                CompileReport* report) override {
    return compile_specialized(request, report);
  }
  bool ready(const Key128& key) override {
    return kernel_table().find(key, module_cache().generation()) != nullptr;
  }
  Result<Payload> build_generic(const Request& request,
                                std::span<const kernels::GenericTransfer> generic) override {
    auto built =
        build(request.source, request.transfers, request.context, request.includes, generic);
    if (!built.ok()) return std::move(built).error();
    return std::move(built->payload);
  }
  Result<std::shared_ptr<const KernelEntryMeta>> read_meta(const Payload& payload,
                                                           CompileReport* report) override {
    return tmem::read_meta(payload, report);
  }
  void fill_report(CompileReport& report, const KernelEntryMeta& meta) override {
    tmem::fill_report(report, meta);
  }
};

// Never destroyed: background jobs refer to it until the exit point joins them (tiers.h).
TieredCompiler& tiered_compiler() {
  static TieredCompiler* tiers = new TieredCompiler(*new EagerPipeline);
  return *tiers;
}

}  // namespace

Result<Kernel> compile_kernel(const KernelSource& source, Span<const NamedTransfer> transfers,
                              const CompileOptions& options) {
  return compile_kernel(source, transfers, options, nullptr);
}

Result<Kernel> compile_kernel(const KernelSource& given, Span<const NamedTransfer> transfers,
                              const CompileOptions& options, CompileReport* report) {
  if (report != nullptr) *report = CompileReport{};
  const auto entered = ExitPoint::instance().enter();
  if (!entered) return exiting_error();
  KernelSource source = given;
  if (source.path.empty())
    source.path = source.language == Language::kPtx ? "kernel.ptx" : "kernel.cu";
  if (Status ok = check_request(source, transfers); !ok.ok()) return std::move(ok).error();
  auto context = kernel_context(source, options);
  if (!context.ok()) return std::move(context).error();
  auto includes = includes_of(source, *context);
  if (!includes.ok()) return std::move(includes).error();
  const Request request{source, transfers, *context, *includes,
                        kernel_key(source, transfers, *context, includes->digest)};
  auto impl = tiered_compiler().compile(request, options.specialization, report);
  if (!impl.ok()) return std::move(impl).error();
  return Kernel(std::move(*impl));
}

}  // namespace tmem
