// Stage 2 of a compile_kernel miss: the front end (front_end_stage.h). A CUDA source is one
// ordinary NVRTC compile of the source with the transfers inline, so the code outside the
// transfers is what NVRTC makes of the source itself; the parse of its headers is reused across
// layouts through NVRTC's precompiled headers (docs/specialization.md, "How a layout compiles").
#include "runtime/jit/front_end_stage.h"

#include <algorithm>
#include <cctype>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/device_function.h"
#include "kernels/specialized_source.h"
#include "runtime/compile/backends.h"
#include "runtime/compile/closure_search.h"
#include "runtime/compile/include_closure.h"
#include "runtime/compile/log_hints.h"
#include "runtime/compile/nvcc_front_end.h"
#include "runtime/compile/precompiled_headers.h"
#include "runtime/jit/emulate_module.h"
#include "runtime/jit/kernel_context.h"
#include "runtime/jit/runtime_state.h"
#include "runtime/jit/tiers.h"
#include "runtime/ptx/text.h"
#include "runtime/support/settings.h"
#include "runtime/support/warning.h"
#include "tmem/text.h"

namespace tmem {
namespace {

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

// ---- the CUDA route -----------------------------------------------------------------------------

// What the CUDA route made: the module and what the report says of its front end.
struct CudaRoute {
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
Result<CudaRoute> compile_cuda_source_with_nvcc(
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
  CudaRoute out;
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
    auto closure = current_runtime_state().include_closures().closure(query);
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
  background_compiler().post(std::move(job), [key] { PchCache::instance().background_done(key); });
}

Result<CudaRoute> compile_cuda_source(const KernelSource& source,
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
  CudaRoute out;
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

// ---- the stage ---------------------------------------------------------------------------------

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

// The kernel's own tcgen05 statements lowered for sm_90 (emulate_module), their status ids after
// those already in `out` (docs/emulation.md §Blackwell kernels on Hopper).
Status lower(std::string& text, const KernelSource& source, const KernelContext& context,
             FrontEnd& out) {
  auto lowered = emulate_module(text, path_of(source), context.ptx,
                                static_cast<int>(out.instructions.size()) + 1);
  if (!lowered.ok()) return std::move(lowered).error();
  text = std::move(lowered->ptx);
  out.instructions.insert(out.instructions.end(), lowered->instructions.begin(),
                          lowered->instructions.end());
  return std::monostate{};
}

Status run_cuda(const SpecializedSource& specialized, FrontEnd& out) {
  const Request& request = *specialized.request;
  const KernelSource& source = request.source;
  const KernelContext& context = request.context;
  const bool emulated = context.options.target == Target::kSm90;
  // sm_90: the front end compiles for sm_100a, so the kernel's own tcgen05 code (a body under
  // `#if __CUDA_ARCH__ >= 1000` too) is there for the lowering; the transfers' header is the
  // emulated one (docs/emulation.md §Blackwell kernels on Hopper).
  const KernelContext front = emulated ? blackwell_front_end(context) : context;
  auto cuda = compile_cuda_source(source, specialized.prepared, specialized.transfers_header, front,
                                  request.includes, specialized.keep_stem);
  if (!cuda.ok()) return std::move(cuda).error();
  out.ptx = std::move(cuda->ptx);
  out.cubin = std::move(cuda->cubin);
  if (emulated)
    if (Status lowered = lower(out.ptx, source, context, out); !lowered.ok()) return lowered;
  out.headers = std::move(cuda->headers);
  out.log = std::move(cuda->log);
  if (!cuda->warning.empty()) out.warnings.push_back(cuda->warning);
  if (!context.replaced_pch.empty()) out.warnings.push_back(replaced_pch_warning(context));
  out.headers_reused = cuda->headers_reused;
  out.ms = cuda->ms;
  const std::vector<std::string> entries = ptx::entry_names(out.ptx);
  out.entry = !cuda->entry.empty() ? cuda->entry : ptx::find_entry(entries, source.entry);
  if (out.entry.empty() || std::find(entries.begin(), entries.end(), out.entry) == entries.end())
    return unknown_entry(source, entries);
  add_never_called_warnings(source, specialized.prepared, request.includes, out.warnings);
  return std::monostate{};
}

Status run_ptx(const SpecializedSource& specialized, FrontEnd& out) {
  const KernelSource& source = specialized.request->source;
  const KernelContext& context = specialized.request->context;
  const std::vector<std::string> entries = ptx::entry_names(source.text);
  out.entry = ptx::find_entry(entries, source.entry);
  if (out.entry.empty()) return unknown_entry(source, entries);
  for (const kernels::TransferCode& code : specialized.prepared.codes)
    if (!ptx::uses_symbol(source.text, code.options.name))
      out.warnings.push_back("transfer '" + code.options.name + "' is never called by " +
                             path_of(source));
  // Lowered before the generated functions are spliced in: errors name the user's lines.
  KernelSource user = source;
  if (context.options.target == Target::kSm90)
    if (Status lowered = lower(user.text, source, context, out); !lowered.ok()) return lowered;
  auto spliced = splice_ptx(user, specialized.prepared, context);
  if (!spliced.ok()) return std::move(spliced).error();
  out.ptx = std::move(spliced->ptx);
  out.inserted_after = spliced->inserted_after;
  out.inserted_lines = spliced->inserted_lines;
  return std::monostate{};
}

}  // namespace

Result<FrontEnd> run_front_end(const SpecializedSource& specialized) {
  FrontEnd out;
  out.instructions = specialized.instructions;
  const Status ran = specialized.request->source.language == Language::kCuda
                         ? run_cuda(specialized, out)
                         : run_ptx(specialized, out);
  if (!ran.ok()) return ran.error();
  if (specialized.request->context.options.target == Target::kSm90) {
    keep_first_emulation_state(out.ptx);
    out.cubin.clear();  // the lowered PTX is what the PTX compile makes the cubin of
  }
  return out;
}

}  // namespace tmem
