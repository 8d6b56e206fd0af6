// compile_kernel's tiers (runtime/jit/tiers.h): the TieredCompiler over the eager pipeline, the
// lazy kernel's tier switch and the background compiler.
#include "runtime/jit/tiers.h"

#include <chrono>
#include <string>

#include "kernels/emulation_kernels.h"
#include "kernels/specialized_source.h"
#include "runtime/cache/module_cache.h"
#include "runtime/jit/cached_build.h"
#include "runtime/jit/compile_transfer.h"
#include "runtime/jit/kernel_impl.h"
#include "runtime/jit/runtime_state.h"
#include "runtime/support/exit_point.h"
#include "tmem/compile.h"
#include "tmem/jit.h"

namespace tmem {

std::string_view to_string(Specialization specialization) noexcept {
  switch (specialization) {
    case Specialization::kEager:
      return "eager";
    case Specialization::kLazy:
      return "lazy";
    case Specialization::kGeneric:
      return "generic";
  }
  return "eager";
}

Result<Specialization> parse_specialization(std::string_view text) {
  for (Specialization s : {Specialization::kEager, Specialization::kLazy, Specialization::kGeneric})
    if (to_string(s) == text) return s;
  return Error(ErrorCode::kUsage,
               "unknown specialization '" + std::string(text) + "'; allowed: eager, lazy, generic");
}

void TierSwitch::finish(Result<std::shared_ptr<Kernel::Impl>> result) {
  {
    std::lock_guard lock(mutex_);
    if (done_) return;
    done_ = true;
    if (result.ok()) {
      holder_ = std::move(result).value();
      published_.store(holder_.get(), std::memory_order_release);
    } else {
      error_ = std::move(result).error();
    }
  }
  done_cv_.notify_all();
}

Status TierSwitch::wait() const {
  std::unique_lock lock(mutex_);
  done_cv_.wait(lock, [&] { return done_; });
  if (error_) return *error_;
  return std::monostate{};
}

BackgroundCompiler::BackgroundCompiler(std::function<void()> on_thread_start)
    : on_thread_start_(std::move(on_thread_start)) {}

void BackgroundCompiler::post(std::function<void()> job, std::function<void()> dropped) {
  std::lock_guard lock(mutex_);
  if (stopping_) {
    if (dropped) dropped();
    return;
  }
  queue_.push_back({std::move(job), std::move(dropped)});
  if (!thread_) {
    // What the job will use exists by now; the exit handler goes after it (exit_point.h).
    ExitPoint::instance().arm();
    thread_.emplace([this] {
      if (on_thread_start_) on_thread_start_();
      loop();
    });
  }
  cv_.notify_one();
}

void BackgroundCompiler::loop() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.erase(queue_.begin());
      running_ = true;
    }
    job.run();
    {
      std::lock_guard lock(mutex_);
      running_ = false;
    }
    idle_cv_.notify_all();
  }
}

void BackgroundCompiler::drain() {
  std::unique_lock lock(mutex_);
  idle_cv_.wait(lock, [&] { return stopping_ || (queue_.empty() && !running_); });
}

BackgroundCompiles BackgroundCompiler::pending() const {
  std::lock_guard lock(mutex_);
  return {static_cast<int>(queue_.size()), running_ ? 1 : 0};
}

BackgroundCompiles background_compiles() { return background_compiler().pending(); }
void wait_background_compiles() { background_compiler().drain(); }
bool process_exiting() { return ExitPoint::instance().exiting(); }

int BackgroundCompiler::shutdown() {
  std::vector<Job> dropped;
  std::optional<std::thread> thread;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    dropped.swap(queue_);
    thread.swap(thread_);
  }
  cv_.notify_all();
  idle_cv_.notify_all();
  if (thread && thread->joinable()) {
    // exit() called from a job itself (a warning handler): that job cannot be waited for.
    if (thread->get_id() == std::this_thread::get_id())
      thread->detach();
    else
      thread->join();
  }
  for (Job& job : dropped)
    if (job.dropped) job.dropped();
  return static_cast<int>(dropped.size());
}

BackgroundCompiler::~BackgroundCompiler() { shutdown(); }

// ---- the TieredCompiler -------------------------------------------------------------------------

std::shared_ptr<Kernel::Impl> TieredCompiler::find_pending(const Key128& key) {
  std::lock_guard lock(mutex_);
  const auto it = pending_.find(key);
  return it == pending_.end() ? nullptr : it->second;
}

void TieredCompiler::insert_pending(const Key128& key, std::shared_ptr<Kernel::Impl> impl) {
  std::lock_guard lock(mutex_);
  pending_.emplace(key, std::move(impl));
}

void TieredCompiler::erase_pending(const Key128& key) {
  std::lock_guard lock(mutex_);
  pending_.erase(key);
}

bool TieredCompiler::claim_build(const Key128& key) {
  std::lock_guard lock(mutex_);
  return !building_.insert(key).second;
}

void TieredCompiler::release_build(const Key128& key) {
  std::lock_guard lock(mutex_);
  building_.erase(key);
}

Key128 TieredCompiler::generic_key(const Request& request,
                                   std::span<const kernels::GenericTransfer> generic,
                                   int cta_group) {
  KeyBuilder key;
  key.str("domain", "tmemjit/kernel-generic");
  key.integer("context.lo", static_cast<int64_t>(request.context.digest.lo));
  key.integer("context.hi", static_cast<int64_t>(request.context.digest.hi));
  key.str("language", to_string(request.source.language));
  key.str("path", request.source.path);
  key.str("entry", request.source.entry);
  key.str("source", request.source.text);
  key.integer("includes.lo", static_cast<int64_t>(request.includes.digest.lo));
  key.integer("includes.hi", static_cast<int64_t>(request.includes.digest.hi));
  key.integer("cta_group", cta_group);
  key.integer("transfers", static_cast<int64_t>(generic.size()));
  for (const kernels::GenericTransfer& t : generic) key.str("signature", t.signature.text());
  return key.finish();
}

Result<std::shared_ptr<Kernel::Impl>> TieredCompiler::generic_impl(
    std::shared_ptr<const Payload> payload, const Request& request,
    const kernels::PreparedTransfers& prepared, std::span<const kernels::GenericTransfer> generic,
    std::shared_ptr<TierSwitch> tiers, CompileReport* report) {
  auto meta = eager_.read_meta(*payload, report);
  if (!meta.ok()) return std::move(meta).error();
  Kernel::Impl::Generic binding;
  for (const kernels::GenericTransfer& t : generic)
    binding.descriptors.emplace_back(kernels::generic_descriptor_symbol(t.signature.name),
                                     t.descriptor);
  if ((*meta)->emulated) {
    binding.emulation = Kernel::Impl::Emulated{};
    for (const kernels::TransferCode& code : prepared.codes)
      for (std::string& instruction : kernels::emulated_instructions(code))
        binding.emulation->instructions.push_back(std::move(instruction));
  }
  binding.tiers = std::move(tiers);
  std::string entry = (*meta)->entry;
  auto impl =
      std::make_shared<Kernel::Impl>(std::move(entry), request.context.options.target,
                                     std::move(payload), std::move(binding), std::move(*meta));
  if (report != nullptr) {
    report->tier = "generic";
    report->transfers.clear();
    for (const kernels::TransferCode& code : prepared.codes)
      report->transfers.push_back({code.options.name, code.plan.op.to_string(),
                                   code.plan.regs_per_thread, code.plan.instructions_per_warp(),
                                   code.plan.alloc_columns});
  }
  return impl;
}

void TieredCompiler::post_generic_build(const Request& request, const Key128& key) {
  if (claim_build(key)) return;
  auto owned = std::make_shared<OwnedRequest>(request);
  background_compiler().post(
      [this, owned, key] {
        auto prepared = kernels::prepare_transfers(owned->transfers, kernels::CoordDetail::kForm);
        if (prepared.ok()) {
          std::vector<kernels::GenericTransfer> generic;
          for (const kernels::TransferCode& code : prepared->codes)
            if (auto form =
                    kernels::generic_form(code, owned->context.options.target, owned->source.text);
                form.transfer)
              generic.push_back(std::move(*form.transfer));
          if (generic.size() == prepared->codes.size()) {
            // Through the cached build, so an unusable entry lazy found is replaced.
            CachedBuild cached;
            (void)cached_build(
                key, /*cacheable=*/true, "the generic tier of " + owned->source.path,
                [&] { return eager_.build_generic(owned->view(), generic); },
                [&](std::shared_ptr<const Payload> payload) {
                  return generic_impl(std::move(payload), owned->view(), *prepared, generic,
                                      nullptr, nullptr);
                },
                cached);
          }
        }
        release_build(key);
      },
      [this, key] { release_build(key); });
}

void TieredCompiler::post_specialized(const Request& request, std::shared_ptr<TierSwitch> tiers) {
  auto owned = std::make_shared<OwnedRequest>(request);
  background_compiler().post(
      [this, owned, tiers] {
        tiers->finish(eager_.compile(owned->view(), nullptr));
        erase_pending(owned->key);
      },
      [this, owned, tiers] {
        tiers->finish(
            Error(ErrorCode::kUsage, "the process exited before the specialized kernel compiled"));
        erase_pending(owned->key);
      });
}

TieredCompiler::Tiered TieredCompiler::pending_kernel(const Request& request,
                                                      CompileReport* report) {
  std::shared_ptr<Kernel::Impl> pending = find_pending(request.key);
  if (pending == nullptr) return std::nullopt;
  module_cache().count_hit();
  if (report != nullptr) {
    if (const KernelEntryMeta* meta = pending->meta()) eager_.fill_report(*report, *meta);
    report->key = request.key.hex();
    report->cache = CacheSource::kMemory;
    report->front_end_cache = CacheSource::kMemory;
    report->tier = std::string(Kernel(pending).tier());
  }
  return pending;
}

TieredCompiler::Tiered TieredCompiler::compile_tiered(const Request& request, Specialization mode,
                                                      CompileReport* report) {
  using Clock = std::chrono::steady_clock;
  const bool lazy = mode == Specialization::kLazy;
  auto eager_because = [&](std::string why) -> Tiered {
    if (report != nullptr) report->tier_reason = std::move(why);
    return std::nullopt;
  };
  ModuleCache& cache = module_cache();
  if (lazy && cache.enabled()) {
    // The specialized kernel is ready, or this layout's lazy kernel is waiting for it.
    if (eager_.ready(request.key)) return std::nullopt;
    if (Tiered pending = pending_kernel(request, report)) return pending;
  }
  if (request.source.language != Language::kCuda)
    return eager_because("the generic tier compiles CUDA C++ sources; a PTX source is specialized");
  if (!request.includes.uncacheable.empty())
    return eager_because("no tier can be cached: " + request.includes.uncacheable);
  if (lazy && !cache.enabled())
    return eager_because("the cache is off, so no generic tier can be cached for lazy to use");
  // Only NAME_coord's closed form: the descriptors need no table (a new layout in microseconds).
  auto prepared = kernels::prepare_transfers(request.transfers, kernels::CoordDetail::kForm);
  if (!prepared.ok()) return Result<std::shared_ptr<Kernel::Impl>>(std::move(prepared).error());
  std::vector<kernels::GenericTransfer> generic;
  for (const kernels::TransferCode& code : prepared->codes) {
    auto form = kernels::generic_form(code, request.context.options.target, request.source.text);
    if (!form.transfer)
      return eager_because("transfer '" + code.options.name + "': " + form.why_not);
    generic.push_back(std::move(*form.transfer));
  }
  const Key128 key = generic_key(request, generic, prepared->cta_group);
  // Lazy: the switch to the specialized kernel, part of the handle from the start.
  auto tiers = lazy ? std::make_shared<TierSwitch>() : nullptr;
  auto make = [&](std::shared_ptr<const Payload> payload) {
    return generic_impl(std::move(payload), request, *prepared, generic, tiers, report);
  };
  CachedBuild cached;
  bool built_now = false;
  Result<std::shared_ptr<Kernel::Impl>> impl = std::shared_ptr<Kernel::Impl>();
  if (lazy) {
    // Lazy never waits for a generic tier: not for this process's build of it in flight, nor for
    // another process's lock on it; asking the tiers is all it does. An entry it cannot use is
    // none: the background build puts a good one in its place.
    ModuleCache::Ptr payload = cache.find_now(key, &cached.lookup);
    if (payload == nullptr || !eager_.read_meta(*payload, nullptr).ok()) {
      post_generic_build(request, key);
      return eager_because(
          "no cache holds the generic tier of this source and signature yet: this call compiled "
          "the specialized kernel, and the generic tier builds in the background for the next "
          "layout (warmup builds it ahead of time)");
    }
    impl = make(std::move(payload));
    if (!impl.ok()) return impl;
  } else {
    impl = cached_build(
        key, /*cacheable=*/true, "the generic tier of " + request.source.path,
        [&]() -> Result<Payload> {
          auto built = eager_.build_generic(request, generic);
          built_now = built.ok();
          return built;
        },
        make, cached);
    if (!impl.ok()) return impl;
    if (!cached.replaced.empty() && report != nullptr) report->warnings.push_back(cached.replaced);
  }
  const ModuleCache::Lookup lookup = cached.lookup;
  const double compile_ms = cached.compile_ms;
  if (report != nullptr) {
    report->key = key.hex();
    report->cache = source_of(lookup);
    report->cache_enabled = lookup != ModuleCache::Lookup::kUncached;
    report->compile_ms = compile_ms;
    if (!built_now) report->front_end_cache = source_of(lookup);
  }
  if (lazy) {
    insert_pending(request.key, *impl);
    post_specialized(request, std::move(tiers));
  }
  return impl;
}

Result<std::shared_ptr<Kernel::Impl>> TieredCompiler::compile(const Request& request,
                                                              Specialization mode,
                                                              CompileReport* report) {
  if (mode != Specialization::kEager)
    if (Tiered tiered = compile_tiered(request, mode, report)) return std::move(*tiered);
  std::string tier_reason = report != nullptr ? report->tier_reason : std::string();
  auto impl = eager_.compile(request, report);
  if (report != nullptr) report->tier_reason = std::move(tier_reason);
  return impl;
}

Status warmup_kernel(const KernelSource& source, Span<const NamedTransfer> transfers,
                     const CompileOptions& options) {
  CompileOptions generic = options;
  generic.specialization = Specialization::kGeneric;
  CompileReport report;
  auto kernel = compile_kernel(source, transfers, generic, &report);
  if (!kernel.ok()) return std::move(kernel).error();
  if (report.tier != "generic")
    return Error(ErrorCode::kUsage,
                 "warmup_kernel: no generic tier for this kernel: " + report.tier_reason,
                 "lazy compiles such layouts eagerly; warm them up with compile_kernel instead");
  return std::monostate{};
}

}  // namespace tmem
