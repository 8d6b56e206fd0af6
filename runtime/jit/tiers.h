// The tiers of compile_kernel (docs/specialization.md §Tiers), one layer over its eager pipeline
// as ORC's LLLazyJIT is over LLJIT: the TieredCompiler (policy: eager, lazy or generic; the
// pending table, the generic key), a lazy kernel's switch from the generic tier to the specialized
// kernel, and the background compiler that makes the latter.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kernels/generic_transfer.h"
#include "runtime/cache/payload.h"
#include "runtime/jit/entry_meta.h"
#include "runtime/jit/kernel_request.h"
#include "tmem/kernel.h"
#include "tmem/result.h"
#include "tmem/specialize.h"

namespace tmem {

namespace kernels {
struct PreparedTransfers;
}  // namespace kernels

// What a lazy Kernel's copies share: the specialized Impl once it is ready. It is published once
// with a release store and never replaced, so a launch reads one pointer (acquire) and runs one
// whole kernel of either tier; the shared_ptr below keeps the published Impl alive.
class TierSwitch {
 public:
  // The specialized Impl, or null while the generic tier runs.
  Kernel::Impl* specialized() const noexcept { return published_.load(std::memory_order_acquire); }
  // Publishes `impl` (the first call wins) or records why the compile failed; wakes waiters.
  void finish(Result<std::shared_ptr<Kernel::Impl>> result);
  // Blocks until finish(); the compile's error, if it failed.
  Status wait() const;
  // The Impl that ran the last launch (emulation_check reads its records).
  void launched(Kernel::Impl* impl) noexcept { last_.store(impl, std::memory_order_release); }
  Kernel::Impl* last_launched() const noexcept { return last_.load(std::memory_order_acquire); }

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable done_cv_;
  bool done_ = false;
  std::optional<Error> error_;
  std::shared_ptr<Kernel::Impl> holder_;
  std::atomic<Kernel::Impl*> published_{nullptr};
  std::atomic<Kernel::Impl*> last_{nullptr};
};

// One background thread that runs compile jobs in order (the specialized kernels of lazy
// compiles, generic tiers built for later layouts), one per tmem::Runtime. At shutdown (its
// runtime's, or process exit: ExitPoint's handler, before any static destructor) the job that
// runs finishes, the queued ones are dropped, their TierSwitch told why, and the thread is
// joined; a job posted after that is dropped at once.
class BackgroundCompiler {
 public:
  // `on_thread_start` runs first on the thread (the runtime makes itself the thread's current).
  explicit BackgroundCompiler(std::function<void()> on_thread_start);
  // `job` runs on the background thread; `dropped` runs instead when the process exits first.
  void post(std::function<void()> job, std::function<void()> dropped = {});
  // Blocks until no job is queued or running (tests; a host that wants its caches filled).
  void drain();
  // Drops the queued jobs, waits for the running one and joins the thread; later posts are
  // dropped. Returns how many jobs it dropped. Idempotent (exit calls it).
  int shutdown();
  // Jobs queued or running now.
  BackgroundCompiles pending() const;
  ~BackgroundCompiler();

 private:
  struct Job {
    std::function<void()> run, dropped;
  };
  void loop();
  std::function<void()> on_thread_start_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<Job> queue_;
  bool running_ = false;  // a job runs now
  std::condition_variable idle_cv_;
  bool stopping_ = false;
  std::optional<std::thread> thread_;
};

// The eager pipeline a TieredCompiler sits over (compile_kernel.cc): what the tiers ask of it.
class EagerCompiler {
 public:
  virtual ~EagerCompiler() = default;
  // The specialized kernel: memory table, module cache, or a build.
  virtual Result<std::shared_ptr<Kernel::Impl>> compile(const Request& request,
                                                        CompileReport* report) = 0;
  // Whether the memory table holds the specialized kernel of `key` now.
  virtual bool ready(const Key128& key) = 0;
  // The generic tier's payload for `generic` (one per transfer): a build, no cache.
  virtual Result<Payload> build_generic(const Request& request,
                                        std::span<const kernels::GenericTransfer> generic) = 0;
  // A cached payload's typed metadata, with `report` filled from it when given.
  virtual Result<std::shared_ptr<const KernelEntryMeta>> read_meta(const Payload& payload,
                                                                   CompileReport* report) = 0;
  // `report`'s kernel fields from a payload's metadata (a memory hit's).
  virtual void fill_report(CompileReport& report, const KernelEntryMeta& meta) = 0;
};

// The eager pipeline of compile_kernel (compile_kernel.cc), for a runtime's TieredCompiler.
std::unique_ptr<EagerCompiler> make_eager_pipeline();

// compile_kernel's tier policy (docs/specialization.md §Tiers) over the eager pipeline: eager
// passes through; generic compiles (or finds) the generic tier of the transfers' signatures; lazy
// answers with a cached generic tier and compiles the specialized kernel in the background, or
// compiles it now and builds the generic tier in the background. It owns the pending table: the
// lazy kernels whose specialized compile is in flight (by the specialized key, so that asking
// again meanwhile shares the handle and its one background compile) and the generic tiers being
// built (by the generic key).
class TieredCompiler {
 public:
  explicit TieredCompiler(EagerCompiler& eager) : eager_(eager) {}
  // The Impl of `request` under `mode`; report->tier_reason says why a lazy or generic request
  // was compiled eagerly after all.
  Result<std::shared_ptr<Kernel::Impl>> compile(const Request& request, Specialization mode,
                                                CompileReport* report);

  // The generic tier's key: the specialized key's fields with each transfer's layout replaced by
  // its signature (docs/cache.md).
  static Key128 generic_key(const Request& request,
                            std::span<const kernels::GenericTransfer> generic, int cta_group);

 private:
  using Tiered = std::optional<Result<std::shared_ptr<Kernel::Impl>>>;
  // Lazy and generic. nullopt: this request is eager after all (report->tier_reason says why).
  Tiered compile_tiered(const Request& request, Specialization mode, CompileReport* report);
  // The lazy kernel of this layout whose specialized compile is in flight, if any.
  Tiered pending_kernel(const Request& request, CompileReport* report);
  // The generic tier's Kernel for this layout: its own Impl over the shared payload, with the
  // layout's descriptors (and, emulated, its instruction names).
  Result<std::shared_ptr<Kernel::Impl>> generic_impl(
      std::shared_ptr<const Payload> payload, const Request& request,
      const kernels::PreparedTransfers& prepared, std::span<const kernels::GenericTransfer> generic,
      std::shared_ptr<TierSwitch> tiers, CompileReport* report);
  // Builds a generic tier in the background, for the next layout of its signature (lazy without
  // one).
  void post_generic_build(const Request& request, const Key128& key);
  // Compiles the specialized kernel in the background and switches `tiers` to it.
  void post_specialized(const Request& request, std::shared_ptr<TierSwitch> tiers);

  std::shared_ptr<Kernel::Impl> find_pending(const Key128& key);
  void insert_pending(const Key128& key, std::shared_ptr<Kernel::Impl> impl);
  void erase_pending(const Key128& key);
  // Whether `key` (a generic tier's) is already being built in the background; marks it if not.
  bool claim_build(const Key128& key);
  void release_build(const Key128& key);

  EagerCompiler& eager_;
  std::mutex mutex_;
  std::unordered_map<Key128, std::shared_ptr<Kernel::Impl>, Key128Hash> pending_;
  std::unordered_set<Key128, Key128Hash> building_;
};

}  // namespace tmem
