// compile_kernel (docs/specialization.md): the user's kernel specialized for transfers chosen at
// run time, as one pipeline of typed steps:
//   context (options, defaults, key digest) → include closure → key → memory table →
//   module cache (memory, disk, remote) → on a miss, three stages: the specialized source
//   (source_stage.h) → the front end (front_end_stage.h: NVRTC with precompiled headers, nvcc, or
//   the PTX splice; the sm_90 lowering) → the compiled kernel (compile_stage.h) → Kernel.
// This is the eager pipeline; the tiers (lazy, generic) are one layer over it, the TieredCompiler
// of tiers.h, which every call goes through.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/generic_transfer.h"
#include "kernels/specialized_source.h"
#include "runtime/compile/closure_search.h"
#include "runtime/compile/include_closure.h"
#include "runtime/jit/cached_build.h"
#include "runtime/jit/compile_stage.h"
#include "runtime/jit/compile_transfer.h"
#include "runtime/jit/entry_meta.h"
#include "runtime/jit/front_end_stage.h"
#include "runtime/jit/kernel_context.h"
#include "runtime/jit/kernel_impl.h"
#include "runtime/jit/kernel_request.h"
#include "runtime/jit/kernel_table.h"
#include "runtime/jit/runtime_state.h"
#include "runtime/jit/source_stage.h"
#include "runtime/jit/tiers.h"
#include "runtime/support/exit_point.h"
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

KernelTable<Key128, Key128Hash>& kernel_table() {
  return current_runtime_state().specialized_kernels();
}

// The source's file name and entry in messages: user text, quoted up to a bound
// (docs/reliability.md §Bounds on every input read).
std::string path_of(const KernelSource& source) { return quote_excerpt(source.path); }

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
    auto alone = current_runtime_state().include_closures().closure(query);
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
  auto closure = current_runtime_state().include_closures().closure(query);
  if (!closure.ok()) return std::move(closure).error();
  Includes includes{(*closure)->digest, static_cast<int>((*closure)->files.size()), *closure, {}};
  if (!(*closure)->unresolved.empty())
    includes.uncacheable = "the include scan cannot follow " + (*closure)->unresolved.front() +
                           ": an edit to what it names would go unseen, so this kernel is "
                           "compiled each time and never cached (name the header in the source, "
                           "or define its macro with -D)";
  return includes;
}

// ---- the build: three stages --------------------------------------------------------------------

// The miss path: the specialized kernel, or with `generic` the generic tier of those transfers
// (docs/specialization.md §Tiers), as three typed stages (docs/architecture.md).
Result<CompiledKernel> build(const Request& request,
                             std::span<const kernels::GenericTransfer> generic = {}) {
  auto source = specialize_source(request, generic);
  if (!source.ok()) return std::move(source).error();
  auto front = run_front_end(*source);
  if (!front.ok()) return std::move(front).error();
  return compile_front_end(*source, std::move(front).value());
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
  double front_end_ms = 0, ptx_compile_ms = 0;
  bool headers_reused = false;
  std::vector<std::string> new_warnings;
  std::vector<std::string> call_warnings;  // about this call's caching, not the kernel
  std::optional<Payload> changed_during;   // built while a header changed: used once, not cached
  auto compile = [&]() -> Result<Payload> {
    auto built = build(request);
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
  // Warnings of the kernel (once, when it was compiled) then of this call, before the report is
  // filled from the entry's metadata.
  bool warned = false;
  auto make = [&](std::shared_ptr<const Payload> payload) {
    if (!std::exchange(warned, true)) {
      for (const std::string& warning : new_warnings) warn(warning);
      for (const std::string& warning : call_warnings) warn(warning);
    }
    return make_impl(std::move(payload), request.context.options.target, report);
  };
  const bool cacheable = request.includes.uncacheable.empty();
  if (!cacheable) call_warnings.push_back(request.includes.uncacheable);
  CachedBuild cached;
  auto impl = cached_build(key, cacheable, request.source.path, compile, make, cached);
  if (changed_during) {
    cached.lookup = ModuleCache::Lookup::kUncached;
    call_warnings.push_back(
        "a header of " + request.source.path +
        " changed while it compiled: this kernel was made from the text NVRTC read then, and is "
        "not cached (the next call compiles the header as it is)");
    impl = make(std::make_shared<const Payload>(std::move(*changed_during)));
  }
  if (!cached.replaced.empty()) call_warnings.push_back(cached.replaced);
  const ModuleCache::Lookup lookup = cached.lookup;
  if (report != nullptr) {
    report->cache = source_of(lookup);
    report->cache_enabled = lookup != ModuleCache::Lookup::kUncached;
    report->compile_ms = cached.compile_ms;
    const bool compiled =
        lookup == ModuleCache::Lookup::kCompiled || lookup == ModuleCache::Lookup::kUncached;
    report->front_end_cache = !compiled        ? source_of(lookup)
                              : headers_reused ? CacheSource::kMemory
                                               : CacheSource::kCompiled;
    report->front_end_ms = front_end_ms;
    report->ptx_compile_ms = ptx_compile_ms;
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
    auto built = build(request, generic);
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

}  // namespace

std::unique_ptr<EagerCompiler> make_eager_pipeline() { return std::make_unique<EagerPipeline>(); }

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
  auto impl = current_runtime_state().tiers().compile(request, options.specialization, report);
  if (!impl.ok()) return std::move(impl).error();
  return Kernel(std::move(*impl));
}

}  // namespace tmem
