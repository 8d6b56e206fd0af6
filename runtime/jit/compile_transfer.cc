// compile_transfer and warmup: the cache key, the kernel handles kept per entry, the miss path.
#include "runtime/jit/compile_transfer.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <vector>

#include "kernels/emulation_kernels.h"
#include "kernels/transfer_kernels.h"
#include "runtime/compile/backends.h"
#include "runtime/jit/cached_build.h"
#include "runtime/jit/entry_meta.h"
#include "runtime/jit/kernel_context.h"
#include "runtime/jit/kernel_impl.h"
#include "runtime/jit/kernel_table.h"
#include "runtime/jit/runtime_state.h"
#include "runtime/ptx/ir.h"
#include "runtime/support/exit_point.h"
#include "runtime/support/warning.h"
#include "tmem/check.h"
#include "tmem/code_stats.h"

namespace tmem {
namespace {

// The compile context of a key (runtime/jit/kernel_context.h): everything but the spec and the
// kind. Each thread keeps the contexts of the last few options it saw, so a hit with options seen
// before builds no string.
struct Context {
  bool valid = false;
  CompileOptions given;  // the options as the caller gave them: what a hit compares
  KernelContext context;
};

constexpr size_t kContextsPerThread = 4;
struct ThreadContexts {
  std::array<Context, kContextsPerThread> slots;
  size_t next = 0;  // the slot to replace next (round robin)
};
thread_local ThreadContexts t_contexts;

Result<const KernelContext*> context_of(const CompileOptions& options) {
  ThreadContexts& contexts = t_contexts;
  for (const Context& slot : contexts.slots)
    if (slot.valid && slot.given == options) return &slot.context;
  Result<KernelContext> made = transfer_context(options);
  if (!made.ok()) return std::move(made).error();
  Context& slot = contexts.slots[contexts.next];
  contexts.next = (contexts.next + 1) % kContextsPerThread;
  slot.valid = false;  // stays false if the copies below throw
  slot.given = options;
  slot.context = std::move(made).value();
  slot.valid = true;
  return &slot.context;
}

void store_le64(std::byte* out, uint64_t value) noexcept {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::byte>(value >> (8 * i));
}

Key128 key_of(const SpecFingerprint& spec, KernelKind kind, const Key128& context) noexcept {
  static constexpr char kDomain[16] = {'t', 'm', 'e', 'm', 'j', 'i', 't', '/',
                                       't', 'r', 'a', 'n', 's', 'f', 'e', 'r'};
  std::array<std::byte, 16 + 5 * 8> record{};
  for (size_t i = 0; i < 16; ++i) record[i] = static_cast<std::byte>(kDomain[i]);
  store_le64(&record[16], spec.lo);
  store_le64(&record[24], spec.hi);
  store_le64(&record[32], static_cast<uint64_t>(kind));
  store_le64(&record[40], context.lo);
  store_le64(&record[48], context.hi);
  return hash128(record);
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// The miss path: check, build, print, compile; the entry's metadata is typed JSON (entry_meta.h).
Result<Payload> compile_payload(const TransferSpec& spec, const KernelContext& context,
                                KernelKind kind) {
  Result<Plan> plan = check(spec);
  if (!plan.ok()) return std::move(plan).error();
  Result<HarnessModule> harness = harness_module(*plan, kind, context.ptx);
  if (!harness.ok()) return std::move(harness).error();
  Result<std::string> ptx = ptx::print(harness->module);
  if (!ptx.ok()) return std::move(ptx).error();
  Result<CompiledModule> compiled = compile_ptx(*ptx, context.ptx);
  if (!compiled.ok()) return std::move(compiled).error();
  KernelEntryMeta meta;
  meta.kind = "transfer";
  meta.entry = kernels::kernel_name(kind);
  meta.target = to_string(context.ptx.target);
  meta.backend = to_string(context.options.backend);
  meta.checked = std::move(harness->checked);
  if (Result<CodeStats> code = code_stats(compiled->cubin, meta.entry); code.ok())
    meta.code = std::move(code).value();
  meta.log = std::move(compiled->log);
  Payload payload;
  payload.blob = std::move(compiled->cubin);
  payload.text = std::move(ptx).value();
  payload.meta = meta.to_json();
  return payload;
}

// The handle of an entry: its metadata parsed once, so a memory hit reads it without JSON. An
// emulated harness kernel keeps its PTX for the driver's JIT on devices an sm_90 cubin does not
// load on (kernel_impl.h).
Result<std::shared_ptr<Kernel::Impl>> make_impl(std::shared_ptr<const Payload> payload,
                                                Target target) {
  Result<KernelEntryMeta> parsed = KernelEntryMeta::parse(payload->meta, "transfer");
  if (!parsed.ok()) return std::move(parsed).error();
  auto meta = std::make_shared<const KernelEntryMeta>(std::move(parsed).value());
  std::string entry = meta->entry;
  return std::make_shared<Kernel::Impl>(std::move(entry), target, std::move(payload),
                                        Kernel::Impl::Native{}, std::move(meta),
                                        /*ptx_fallback=*/target == Target::kSm90);
}

void fill_report(CompileReport* report, std::vector<kernels::EmulatedInstruction>* checked,
                 const Kernel::Impl& impl) {
  const KernelEntryMeta* meta = impl.meta();
  if (meta == nullptr) return;
  if (report != nullptr) {
    report->log = meta->log;
    report->code = meta->code;
  }
  if (checked != nullptr) *checked = meta->checked;
}

void report_lookup(CompileReport* report, ModuleCache::Lookup lookup, double compile_ms) {
  if (report == nullptr) return;
  report->cache = source_of(lookup);
  report->cache_enabled = lookup != ModuleCache::Lookup::kUncached;
  report->compile_ms = compile_ms;
}

Result<Kernel> compile_slow(const TransferSpec& spec, const KernelContext& context, KernelKind kind,
                            const HitKey& hit_key, const Key128& key, CompileReport* report,
                            std::vector<kernels::EmulatedInstruction>* checked) {
  const auto entered = ExitPoint::instance().enter();
  if (!entered) return exiting_error();
  const uint64_t generation = module_cache().generation();
  CachedBuild cached;
  Result<std::shared_ptr<Kernel::Impl>> impl = cached_build(
      key, /*cacheable=*/true, "transfer kernel " + key.hex(),
      [&] { return compile_payload(spec, context, kind); },
      [&](std::shared_ptr<const Payload> payload) {
        return make_impl(std::move(payload), context.options.target);
      },
      cached);
  const ModuleCache::Lookup lookup = cached.lookup;
  report_lookup(report, lookup, cached.compile_ms);
  if (!impl.ok()) return std::move(impl).error();
  fill_report(report, checked, **impl);
  if (lookup == ModuleCache::Lookup::kUncached) return Kernel(std::move(impl).value());
  return Kernel(current_runtime_state().transfer_kernels().insert(hit_key, generation,
                                                                  std::move(impl).value()));
}

}  // namespace

Result<HarnessModule> harness_module(const Plan& plan, KernelKind kind,
                                     const CompileOptions& options) {
  if (options.target == Target::kSm90) {
    Result<kernels::EmulationKernel> emulated =
        kernels::build_emulation_kernel(plan, kind, options.cta_group);
    if (!emulated.ok()) return std::move(emulated).error();
    return HarnessModule{std::move(emulated->module), std::move(emulated->checked)};
  }
  Result<ptx::Module> module = kernels::build_kernel(plan, kind, options.target, options.cta_group);
  if (!module.ok()) return std::move(module).error();
  return HarnessModule{std::move(module).value(), {}};
}

Result<Key128> transfer_cache_key(const TransferSpec& spec, const CompileOptions& options,
                                  KernelKind kind) {
  Result<const KernelContext*> context = context_of(options);
  if (!context.ok()) return std::move(context).error();
  return key_of(spec.fingerprint(), kind, (*context)->digest);
}

Result<Kernel> compile_transfer_reported(const TransferSpec& spec, const CompileOptions& options,
                                         KernelKind kind, CompileReport* report,
                                         std::vector<kernels::EmulatedInstruction>* checked) {
  if (report != nullptr) {
    *report = CompileReport{};
    report->entry = kernels::kernel_name(kind);
  }
  Result<const KernelContext*> context = context_of(options);
  if (!context.ok()) return std::move(context).error();
  const HitKey hit_key{spec.fingerprint(), (*context)->digest, kind};
  ModuleCache& cache = module_cache();
  if (cache.enabled()) {
    if (std::shared_ptr<Kernel::Impl> hit =
            current_runtime_state().transfer_kernels().find(hit_key, cache.generation())) {
      cache.count_hit();
      if (report != nullptr) {
        report->key = key_of(hit_key.spec, kind, hit_key.context).hex();
        report->backend = (*context)->options.backend;
      }
      report_lookup(report, ModuleCache::Lookup::kMemoryHit, 0);
      fill_report(report, checked, *hit);
      return Kernel(std::move(hit));
    }
  }
  // The cache key's XXH3 is computed only here: memory and disk caches are keyed by it.
  const Key128 key = key_of(hit_key.spec, kind, hit_key.context);
  if (report != nullptr) {
    report->key = key.hex();
    report->backend = (*context)->options.backend;
  }
  return compile_slow(spec, **context, kind, hit_key, key, report, checked);
}

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

Result<Kernel> compile_transfer(const TransferSpec& spec, const CompileOptions& options,
                                KernelKind kind, CompileReport* report) {
  return compile_transfer_reported(spec, options, kind, report, nullptr);
}

Result<Kernel> compile_transfer(const TransferSpec& spec, const CompileOptions& options,
                                KernelKind kind) {
  return compile_transfer_reported(spec, options, kind, nullptr, nullptr);
}

std::vector<Status> warmup_each(Span<const WarmupItem> items, unsigned jobs,
                                const WarmupProgress& progress) {
  std::vector<Status> outcomes(items.size(), Status(std::monostate{}));
  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};
  std::mutex progress_mutex;  // progress is told one call at a time
  auto work = [&]() noexcept {
    for (size_t i = next.fetch_add(1); i < items.size(); i = next.fetch_add(1)) {
      try {
        Result<Kernel> kernel = compile_transfer(items[i].spec, items[i].options, items[i].kind);
        if (!kernel.ok()) outcomes[i] = std::move(kernel).error();
      } catch (const Error& error) {
        outcomes[i] = error;
      } catch (const std::exception& exception) {
        outcomes[i] =
            Error(ErrorCode::kInternal, std::string("warmup: compile threw: ") + exception.what());
      } catch (...) {
        outcomes[i] = Error(ErrorCode::kInternal, "warmup: compile threw an unknown exception");
      }
      const size_t finished = done.fetch_add(1) + 1;
      if (progress) {
        std::lock_guard lock(progress_mutex);
        try {
          progress(finished, items.size());
        } catch (...) {  // a caller's progress display must not end the compiles
        }
      }
    }
  };
  const size_t wanted = jobs != 0 ? jobs : std::max(1u, std::thread::hardware_concurrency());
  const size_t threads = std::min(wanted, items.size());
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // fewer threads than hoped: the ones running (and this one) do the rest
    }
  }
  work();
  for (std::thread& thread : pool) thread.join();
  return outcomes;
}

Status warmup(Span<const TransferSpec> specs, const CompileOptions& options, KernelKind kind) {
  if (specs.empty()) return std::monostate{};
  // Options errors are the same for every spec: report them once, as themselves.
  if (Result<const KernelContext*> context = context_of(options); !context.ok())
    return std::move(context).error();

  std::vector<WarmupItem> items;
  items.reserve(specs.size());
  for (const TransferSpec& spec : specs) items.push_back({spec, options, kind});
  const std::vector<Status> outcomes = warmup_each(items);
  std::vector<const Error*> errors(specs.size(), nullptr);
  for (size_t i = 0; i < outcomes.size(); ++i)
    if (!outcomes[i].ok()) errors[i] = &outcomes[i].error();
  size_t failed = 0;
  std::optional<size_t> first;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!errors[i]) continue;
    ++failed;
    if (!first) first = i;
  }
  if (!first) return std::monostate{};
  const Error& error = *errors[*first];
  const TransferSpec& spec = specs[*first];
  std::string message = "warmup: spec " + std::to_string(*first) + " of " +
                        std::to_string(specs.size()) + " (" + spec.op().to_string() + " at " +
                        spec.scope().to_string() + "): " + error.message();
  if (failed > 1) message += " (" + std::to_string(failed - 1) + " more specs failed)";
  std::string details = "spec " + std::to_string(*first) + ":\n" + spec.to_string();
  if (!error.details().empty()) details += "\n" + error.details();
  return Error(error.code(), std::move(message), std::move(details));
}

Result<std::string> transfer_ptx(const TransferSpec& spec, KernelKind kind, Target target) {
  CompileOptions options;
  options.target = target;
  return transfer_ptx(spec, kind, options);
}

Result<std::string> transfer_ptx(const TransferSpec& spec, KernelKind kind,
                                 const CompileOptions& options) {
  Result<Plan> plan = check(spec);
  if (!plan.ok()) return std::move(plan).error();
  Result<HarnessModule> harness = harness_module(*plan, kind, options);
  if (!harness.ok()) return std::move(harness).error();
  return ptx::print(harness->module);
}

}  // namespace tmem
