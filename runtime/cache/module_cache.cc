// The process-wide module cache and the public tmem::cache_* functions.
#include "runtime/cache/module_cache.h"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "runtime/support/exit_point.h"
#include "runtime/support/settings.h"
#include "runtime/support/warning.h"

namespace tmem {
namespace {

std::atomic<bool> g_shared_dir_warned{false};
std::atomic<bool> g_remote_config_warned{false};
std::atomic<bool> g_secret_warned{false};

void warn_once(std::atomic<bool>& latch, const std::string& message) {
  if (!latch.exchange(true)) warn(message);
}

}  // namespace

void ModuleCache::reset_warnings_for_testing() noexcept {
  g_shared_dir_warned.store(false);
  g_remote_config_warned.store(false);
  g_secret_warned.store(false);
}

CacheOptions cache_options_from_env() {
  const Settings settings = Settings::from_environment();
  CacheOptions options;
  options.enabled = !settings.cache_disabled;
  if (!settings.cache_dir.empty()) {
    options.dir = settings.cache_dir;
  } else if (!settings.xdg_cache_home.empty() && settings.xdg_cache_home.front() == '/') {
    options.dir = settings.xdg_cache_home + "/tmemjit";  // the XDG spec ignores relative paths
  } else if (!settings.home.empty()) {
    options.dir = settings.home + "/.cache/tmemjit";
  }
  options.disk = !options.dir.empty();
  options.max_bytes = settings.cache_max_bytes.value;
  options.remote = settings.remote_cache;
  options.secret = settings.remote_cache_secret;
  options.remote_connect_timeout_ms = settings.remote_cache_connect_timeout_ms.value;
  options.remote_timeout_ms = settings.remote_cache_timeout_ms.value;
  options.remote_lock_wait_ms = settings.remote_cache_lock_wait_ms.value;
  options.remote_lock_ttl_ms = settings.remote_cache_lock_ttl_ms.value;
  options.remote_retry_ms = settings.remote_cache_retry_ms.value;
  // Here, where they take effect, in the order the variables were always read.
  for (const std::string* problem :
       {&settings.cache_max_bytes.problem, &settings.remote_cache_connect_timeout_ms.problem,
        &settings.remote_cache_timeout_ms.problem, &settings.remote_cache_lock_wait_ms.problem,
        &settings.remote_cache_lock_ttl_ms.problem, &settings.remote_cache_retry_ms.problem})
    if (!problem->empty()) warn(*problem);
  return options;
}

ModuleCache::ModuleCache(const CacheOptions& options) { configure(options); }

std::shared_ptr<const ModuleCache::Tiers> ModuleCache::build_tiers(const CacheOptions& options) {
  auto tiers = std::make_shared<Tiers>();
  if (!options.enabled) return tiers;
  // A secret that cannot be used fails closed: nothing shared is trusted without it.
  std::string no_signer;
  if (!options.secret.empty()) {
    if (EntrySigner::available()) {
      tiers->signer = std::make_shared<const EntrySigner>(options.secret);
    } else {
      no_signer =
          "TMEMJIT_REMOTE_CACHE_SECRET is set, but this libtmemjit was built without OpenSSL "
          "(libcrypto), so entries cannot be signed";
      warn_once(g_secret_warned, no_signer +
                                     ": the remote tier stays off and a cache directory other "
                                     "users can write is not used");
    }
  }
  if (options.disk && !options.dir.empty()) {
    if (std::optional<std::string> shared = others_can_write(options.dir);
        shared && !tiers->signer) {
      tiers->disk_note = "the cache directory " + *shared +
                         ", so anyone there could plant a cubin; it is used only with "
                         "TMEMJIT_REMOTE_CACHE_SECRET set (entries signed and checked)";
      warn_once(g_shared_dir_warned, "disk cache off: " + tiers->disk_note);
    } else {
      tiers->disk = std::make_shared<DiskCache>(options.dir, options.max_bytes, tiers->signer);
    }
  }
  if (!options.remote.empty()) {
    Result<RedisEndpoint> endpoint = parse_redis_url(options.remote);
    if (!RemoteCache::built_in()) {
      tiers->remote_note =
          "this libtmemjit was built without hiredis, so it has no remote cache tier";
    } else if (!endpoint.ok()) {
      tiers->remote_note = endpoint.error().message();
    } else if (!no_signer.empty()) {
      tiers->remote_note = no_signer;
    } else {
      RemoteOptions remote;
      remote.endpoint = std::move(endpoint).value();
      // 0 would mean "no timeout" to the socket: the bounds stay bounds.
      remote.connect_timeout_ms = std::max<uint32_t>(1, options.remote_connect_timeout_ms);
      remote.command_timeout_ms = std::max<uint32_t>(1, options.remote_timeout_ms);
      remote.lock_ttl_ms = std::max<uint32_t>(1, options.remote_lock_ttl_ms);  // PX 0 is an error
      remote.lock_wait_ms = options.remote_lock_wait_ms;
      remote.retry_ms = options.remote_retry_ms;
      tiers->remote = std::make_shared<RemoteCache>(std::move(remote), tiers->signer);
    }
    if (!tiers->remote && no_signer.empty())
      warn_once(g_remote_config_warned,
                "remote cache off (TMEMJIT_REMOTE_CACHE): " + tiers->remote_note);
  }
  return tiers;
}

std::shared_ptr<const ModuleCache::Tiers> ModuleCache::tiers() const {
  {
    std::shared_lock lock(config_mutex_);
    if (tiers_) return tiers_;
  }
  std::unique_lock lock(config_mutex_);
  if (!tiers_) tiers_ = build_tiers(options_);
  return tiers_;
}

void ModuleCache::configure(const CacheOptions& options) {
  {
    std::unique_lock lock(config_mutex_);
    options_ = options;
    tiers_ = nullptr;
  }
  enabled_.store(options.enabled, std::memory_order_release);
  if (!options.enabled) {
    memory_.clear();
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
}

CacheOptions ModuleCache::options() const {
  std::shared_lock lock(config_mutex_);
  return options_;
}

std::shared_ptr<DiskCache> ModuleCache::disk() const { return tiers()->disk; }

ModuleCache::Ptr ModuleCache::replace(const Key128& key, Payload payload) {
  if (!enabled()) return std::make_shared<const Payload>(std::move(payload));
  Ptr stored = memory_.replace(key, std::move(payload));
  if (std::shared_ptr<DiskCache> disk_cache = disk()) (void)disk_cache->write(key, *stored);
  return stored;
}
std::string ModuleCache::disk_note() const { return tiers()->disk_note; }
std::shared_ptr<RemoteCache> ModuleCache::remote() const { return tiers()->remote; }
std::string ModuleCache::remote_note() const { return tiers()->remote_note; }

// Holds a compile lock on the remote server until the lookup that took it ends (after the entry
// was stored, or the compile failed).
class ModuleCache::RemoteLock {
 public:
  RemoteLock() = default;
  RemoteLock(const RemoteLock&) = delete;
  RemoteLock& operator=(const RemoteLock&) = delete;
  ~RemoteLock() { release(); }
  void hold(RemoteCache* remote, const Key128& key, std::string token) {
    remote_ = remote;
    key_ = key;
    token_ = std::move(token);
  }
  void release() {
    if (remote_ != nullptr) remote_->unlock(key_, token_);
    remote_ = nullptr;
  }

 private:
  RemoteCache* remote_ = nullptr;
  Key128 key_;
  std::string token_;
};

// Counts a fault; notes a rejected entry (counted once per lookup by the caller). False when the
// lookup should stop asking the server.
bool ModuleCache::counted(const RemoteCache::Fetched& fetched, bool* rejected) {
  switch (fetched.status) {
    case RemoteCache::Status::kFault:
      remote_errors_.fetch_add(1, std::memory_order_relaxed);
      return false;
    case RemoteCache::Status::kResting:
      return false;
    case RemoteCache::Status::kRejected:
      *rejected = true;
      return true;
    case RemoteCache::Status::kHit:
    case RemoteCache::Status::kAbsent:
      return true;
  }
  return false;
}

std::optional<Payload> ModuleCache::remote_lookup(RemoteCache& remote, const Key128& key,
                                                  RemoteLock* lock, RemoteOutcome* outcome) {
  bool* const rejected = &outcome->rejected;
  RemoteCache::Fetched fetched = remote.fetch(key);
  if (!counted(fetched, rejected)) return std::nullopt;
  outcome->reached = true;
  if (fetched.payload) return std::move(fetched.payload);
  // One compile per key across the fleet: take the key's lock, or wait for its holder's entry.
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(remote.options().lock_wait_ms);
  auto backoff = std::chrono::milliseconds(2);
  constexpr auto kMaxBackoff = std::chrono::milliseconds(50);
  bool waited = false;
  for (;;) {
    std::string token;
    const RemoteCache::LockStatus status = remote.try_lock(key, &token);
    if (status == RemoteCache::LockStatus::kFault)
      remote_errors_.fetch_add(1, std::memory_order_relaxed);
    if (status == RemoteCache::LockStatus::kFault || status == RemoteCache::LockStatus::kResting)
      return std::nullopt;
    if (status == RemoteCache::LockStatus::kAcquired) {
      lock->hold(&remote, key, std::move(token));
      // The previous holder may have stored the entry and unlocked between our GET and our SET.
      fetched = remote.fetch(key);
      if (!counted(fetched, rejected)) return std::nullopt;
      if (fetched.payload) lock->release();
      return std::move(fetched.payload);  // nullopt: compile here, under the lock
    }
    if (!waited) {
      waited = true;
      remote_lock_waits_.fetch_add(1, std::memory_order_relaxed);
    }
    // Exit began (N06): the process is leaving, and the exit handler waits for this lookup.
    if (ExitPoint::instance().exiting()) {
      outcome->abandoned = true;
      return std::nullopt;
    }
    const auto now = Clock::now();
    if (now >= deadline) return std::nullopt;  // the holder is slow or gone: compile here
    std::this_thread::sleep_for(std::min<Clock::duration>(backoff, deadline - now));
    backoff = std::min(backoff * 2, kMaxBackoff);
    fetched = remote.fetch(key);
    if (!counted(fetched, rejected)) return std::nullopt;
    if (fetched.payload) return std::move(fetched.payload);
  }
}

Result<Payload> ModuleCache::timed_compile(const Compile& compile) {
  const auto start = std::chrono::steady_clock::now();
  Result<Payload> made = compile();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  compile_ns_.fetch_add(
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count()),
      std::memory_order_relaxed);
  return made;
}

Result<ModuleCache::Ptr> ModuleCache::get_or_compile_slow(const Key128& key, const Compile& compile,
                                                          Lookup* lookup) {
  if (!enabled_.load(std::memory_order_acquire)) {
    misses_.fetch_add(1, std::memory_order_relaxed);
    if (lookup != nullptr) *lookup = Lookup::kUncached;
    Result<Payload> made = timed_compile(compile);
    if (!made.ok()) return std::move(made).error();
    return Ptr(std::make_shared<const Payload>(std::move(made).value()));
  }
  const std::shared_ptr<const Tiers> tiers = this->tiers();
  DiskCache* const disk_cache = tiers->disk.get();
  RemoteCache* const remote = tiers->remote.get();
  Lookup source = Lookup::kCompiled;
  auto write_disk = [&](const Payload& payload) {
    if (disk_cache == nullptr) return;
    const DiskCache::WriteOutcome written = disk_cache->write(key, payload);
    if (written.written) disk_writes_.fetch_add(1, std::memory_order_relaxed);
    evictions_.fetch_add(written.evicted, std::memory_order_relaxed);
  };
  MemoryCache::Outcome outcome = MemoryCache::Outcome::kHit;
  Result<Ptr> result = memory_.get_or_compute(
      key,
      [&]() -> Result<Payload> {
        if (disk_cache) {
          if (std::optional<Payload> stored = disk_cache->read(key)) {
            source = Lookup::kDiskHit;
            return std::move(*stored);
          }
        }
        RemoteLock lock;  // released when this lookup ends, after its entry is stored
        RemoteOutcome met;
        const bool& reached = met.reached;
        if (remote) {
          std::optional<Payload> fetched = remote_lookup(*remote, key, &lock, &met);
          if (met.rejected) remote_rejected_.fetch_add(1, std::memory_order_relaxed);
          if (fetched) {
            source = Lookup::kRemoteHit;
            write_disk(*fetched);
            return std::move(*fetched);
          }
          if (met.abandoned) return exiting_error();  // nothing compiled, nothing stored
          if (reached) remote_misses_.fetch_add(1, std::memory_order_relaxed);
        }
        Result<Payload> made = timed_compile(compile);
        if (made.ok()) {
          write_disk(*made);
          if (reached) {
            const RemoteCache::Status stored = remote->store(key, *made);
            if (stored == RemoteCache::Status::kAbsent)
              remote_writes_.fetch_add(1, std::memory_order_relaxed);
            else if (stored == RemoteCache::Status::kFault)
              remote_errors_.fetch_add(1, std::memory_order_relaxed);
          }
        }
        return made;
      },
      &outcome);
  Lookup where = Lookup::kMemoryHit;
  switch (outcome) {
    case MemoryCache::Outcome::kHit:
      break;
    case MemoryCache::Outcome::kWaited:
      if (!result.ok()) where = Lookup::kCompiled;  // the compile it waited for failed
      break;
    case MemoryCache::Outcome::kComputed:
      where = source;
      break;
  }
  (where == Lookup::kMemoryHit   ? hits_
   : where == Lookup::kDiskHit   ? disk_hits_
   : where == Lookup::kRemoteHit ? remote_hits_
                                 : misses_)
      .fetch_add(1, std::memory_order_relaxed);
  if (lookup != nullptr) *lookup = where;
  return result;
}

ModuleCache::Ptr ModuleCache::find_now(const Key128& key, Lookup* lookup) {
  if (!enabled_.load(std::memory_order_acquire)) return nullptr;
  auto found = [&](Lookup where, std::atomic<uint64_t>& counter, Ptr ptr) {
    counter.fetch_add(1, std::memory_order_relaxed);
    if (lookup != nullptr) *lookup = where;
    return ptr;
  };
  if (Ptr hit = memory_.find(key)) return found(Lookup::kMemoryHit, hits_, std::move(hit));
  const std::shared_ptr<const Tiers> tiers = this->tiers();
  if (tiers->disk) {
    if (std::optional<Payload> stored = tiers->disk->read(key))
      return found(Lookup::kDiskHit, disk_hits_, memory_.insert(key, std::move(*stored)));
  }
  if (tiers->remote) {
    bool rejected = false;
    RemoteCache::Fetched fetched = tiers->remote->fetch(key);
    if (counted(fetched, &rejected) && fetched.payload) {
      if (tiers->disk && tiers->disk->write(key, *fetched.payload).written)
        disk_writes_.fetch_add(1, std::memory_order_relaxed);
      return found(Lookup::kRemoteHit, remote_hits_,
                   memory_.insert(key, std::move(*fetched.payload)));
    }
    if (rejected) remote_rejected_.fetch_add(1, std::memory_order_relaxed);
  }
  return nullptr;
}

CacheStats ModuleCache::stats() const {
  CacheStats stats;
  stats.hits = hits_.load(std::memory_order_relaxed);
  stats.misses = misses_.load(std::memory_order_relaxed);
  stats.disk_hits = disk_hits_.load(std::memory_order_relaxed);
  stats.disk_writes = disk_writes_.load(std::memory_order_relaxed);
  stats.evictions = evictions_.load(std::memory_order_relaxed);
  stats.compile_ms = static_cast<double>(compile_ns_.load(std::memory_order_relaxed)) / 1e6;
  stats.bytes = memory_.bytes();
  stats.entries = memory_.entries();
  stats.remote_hits = remote_hits_.load(std::memory_order_relaxed);
  stats.remote_misses = remote_misses_.load(std::memory_order_relaxed);
  stats.remote_writes = remote_writes_.load(std::memory_order_relaxed);
  stats.remote_errors = remote_errors_.load(std::memory_order_relaxed);
  stats.remote_rejected = remote_rejected_.load(std::memory_order_relaxed);
  stats.remote_lock_waits = remote_lock_waits_.load(std::memory_order_relaxed);
  return stats;
}

void ModuleCache::reset_stats() {
  hits_.store(0);
  misses_.store(0);
  disk_hits_.store(0);
  disk_writes_.store(0);
  evictions_.store(0);
  compile_ns_.store(0);
  remote_hits_.store(0);
  remote_misses_.store(0);
  remote_writes_.store(0);
  remote_errors_.store(0);
  remote_rejected_.store(0);
  remote_lock_waits_.store(0);
}

Status ModuleCache::clear(bool disk_too) {
  memory_.clear();
  generation_.fetch_add(1, std::memory_order_acq_rel);
  if (disk_too) {
    if (const std::shared_ptr<DiskCache> disk_cache = disk()) {
      Result<uint64_t> removed = disk_cache->clear();
      if (!removed.ok()) return std::move(removed).error();
    }
  }
  return std::monostate{};
}

CacheOptions cache_options() { return module_cache().options(); }
void set_cache_options(const CacheOptions& options) { module_cache().configure(options); }
void set_cache_dir(const std::string& dir) {
  CacheOptions options = module_cache().options();
  options.dir = dir;
  options.disk = !dir.empty();
  module_cache().configure(options);
}
CacheStats cache_stats() { return module_cache().stats(); }
void reset_cache_stats() { module_cache().reset_stats(); }
Status clear_cache(bool disk) { return module_cache().clear(disk); }

namespace {

Result<std::shared_ptr<DiskCache>> disk_in_use() {
  ModuleCache& cache = module_cache();
  if (std::shared_ptr<DiskCache> disk_cache = cache.disk()) return disk_cache;
  if (std::string note = cache.disk_note(); !note.empty())
    return Error(ErrorCode::kUsage, "the disk cache is off", std::move(note));
  return Error(ErrorCode::kUsage, "the disk cache is off",
               "set TMEMJIT_CACHE_DIR, XDG_CACHE_HOME or HOME, and leave TMEMJIT_DISABLE_CACHE "
               "unset");
}

}  // namespace

Result<DiskCacheUsage> disk_cache_usage() {
  Result<std::shared_ptr<DiskCache>> disk_cache = disk_in_use();
  if (!disk_cache.ok()) return std::move(disk_cache).error();
  const DiskCache::Usage usage = (*disk_cache)->usage();
  return DiskCacheUsage{(*disk_cache)->version_dir().string(), usage.entries, usage.bytes};
}

Result<uint64_t> clear_disk_cache() {
  Result<std::shared_ptr<DiskCache>> disk_cache = disk_in_use();
  if (!disk_cache.ok()) return std::move(disk_cache).error();
  return (*disk_cache)->clear();
}

RemoteCacheInfo remote_cache_info() {
  ModuleCache& cache = module_cache();
  const CacheOptions options = cache.options();
  RemoteCacheInfo info;
  if (!options.enabled || options.remote.empty()) {
    info.note = options.enabled ? "TMEMJIT_REMOTE_CACHE is not set" : "the cache is off";
    return info;
  }
  Result<RedisEndpoint> endpoint = parse_redis_url(options.remote);
  info.url = endpoint.ok() ? endpoint->url() : options.remote.substr(0, 64);
  if (const std::shared_ptr<RemoteCache> remote = cache.remote()) {
    info.signed_entries = remote->signer() != nullptr;
    info.active = !remote->resting();
    if (!info.active) info.note = "resting after a fault";
  } else {
    info.note = cache.remote_note();
  }
  return info;
}

Result<double> ping_remote_cache() {
  const std::shared_ptr<RemoteCache> remote = module_cache().remote();
  if (!remote) {
    std::string note = module_cache().remote_note();
    return Error(
        ErrorCode::kUsage, "no remote cache tier",
        note.empty() ? std::string("set TMEMJIT_REMOTE_CACHE=redis://HOST:PORT[/DB]") : note);
  }
  return remote->ping();
}

std::string_view to_string(ModuleCache::Lookup lookup) noexcept {
  switch (lookup) {
    case ModuleCache::Lookup::kMemoryHit:
      return "memory hit";
    case ModuleCache::Lookup::kDiskHit:
      return "disk hit";
    case ModuleCache::Lookup::kRemoteHit:
      return "remote hit";
    case ModuleCache::Lookup::kCompiled:
      return "miss";
    case ModuleCache::Lookup::kUncached:
      return "off";
  }
  return "miss";
}

CacheSource source_of(ModuleCache::Lookup lookup) noexcept {
  // A tier added below disk (the remote cache) is neither memory, disk nor a compile.
  if (lookup == ModuleCache::Lookup::kMemoryHit) return CacheSource::kMemory;
  if (lookup == ModuleCache::Lookup::kDiskHit) return CacheSource::kDisk;
  if (lookup == ModuleCache::Lookup::kCompiled || lookup == ModuleCache::Lookup::kUncached)
    return CacheSource::kCompiled;
  return CacheSource::kRemote;
}

}  // namespace tmem
