// The process-wide module cache and the public tmem::cache_* functions.
#include "runtime/cache/module_cache.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace tmem {
namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

}  // namespace

std::optional<uint64_t> parse_byte_count(std::string_view text) {
  if (text.empty()) return std::nullopt;
  uint64_t value = 0;
  size_t i = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    const uint64_t digit = static_cast<uint64_t>(text[i] - '0');
    if (value > (UINT64_MAX - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  if (i == 0) return std::nullopt;
  int shift = 0;
  if (i < text.size()) {
    switch (text[i]) {
      case 'K':
      case 'k':
        shift = 10;
        break;
      case 'M':
      case 'm':
        shift = 20;
        break;
      case 'G':
      case 'g':
        shift = 30;
        break;
      case 'T':
      case 't':
        shift = 40;
        break;
      default:
        return std::nullopt;
    }
    ++i;
    if (i < text.size() && (text[i] == 'B' || text[i] == 'b')) ++i;  // "512MB" too
    if (i != text.size()) return std::nullopt;
  }
  if (shift != 0 && value > (UINT64_MAX >> shift)) return std::nullopt;
  return value << shift;
}

CacheOptions cache_options_from_env() {
  CacheOptions options;
  const std::string disable = env("TMEMJIT_DISABLE_CACHE");
  options.enabled = disable.empty() || disable == "0";
  if (std::string dir = env("TMEMJIT_CACHE_DIR"); !dir.empty()) {
    options.dir = dir;
  } else if (std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty() && xdg.front() == '/') {
    options.dir = xdg + "/tmemjit";  // the XDG spec ignores relative paths
  } else if (std::string home = env("HOME"); !home.empty()) {
    options.dir = home + "/.cache/tmemjit";
  }
  options.disk = !options.dir.empty();
  if (std::string cap = env("TMEMJIT_CACHE_MAX_BYTES"); !cap.empty()) {
    if (std::optional<uint64_t> bytes = parse_byte_count(cap))
      options.max_bytes = *bytes;
    else
      std::fprintf(stderr,
                   "tmemjit: warning: TMEMJIT_CACHE_MAX_BYTES='%s' is not a byte count (like "
                   "1073741824 or 512M); using %llu\n",
                   cap.c_str(), static_cast<unsigned long long>(options.max_bytes));
  }
  return options;
}

ModuleCache::ModuleCache(const CacheOptions& options) { configure(options); }

void ModuleCache::configure(const CacheOptions& options) {
  std::shared_ptr<DiskCache> disk;
  if (options.enabled && options.disk && !options.dir.empty())
    disk = std::make_shared<DiskCache>(options.dir, options.max_bytes);
  {
    std::unique_lock lock(config_mutex_);
    options_ = options;
    disk_ = std::move(disk);
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

std::shared_ptr<DiskCache> ModuleCache::disk() const {
  std::shared_lock lock(config_mutex_);
  return disk_;
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
  const std::shared_ptr<DiskCache> disk_cache = disk();
  bool from_disk = false;
  MemoryCache::Outcome outcome = MemoryCache::Outcome::kHit;
  Result<Ptr> result = memory_.get_or_compute(
      key,
      [&]() -> Result<Payload> {
        if (disk_cache) {
          if (std::optional<Payload> stored = disk_cache->read(key)) {
            from_disk = true;
            return std::move(*stored);
          }
        }
        Result<Payload> made = timed_compile(compile);
        if (made.ok() && disk_cache) {
          const DiskCache::WriteOutcome written = disk_cache->write(key, *made);
          if (written.written) disk_writes_.fetch_add(1, std::memory_order_relaxed);
          evictions_.fetch_add(written.evicted, std::memory_order_relaxed);
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
      where = from_disk ? Lookup::kDiskHit : Lookup::kCompiled;
      break;
  }
  (where == Lookup::kMemoryHit ? hits_
   : where == Lookup::kDiskHit ? disk_hits_
                               : misses_)
      .fetch_add(1, std::memory_order_relaxed);
  if (lookup != nullptr) *lookup = where;
  return result;
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
  return stats;
}

void ModuleCache::reset_stats() {
  hits_.store(0);
  misses_.store(0);
  disk_hits_.store(0);
  disk_writes_.store(0);
  evictions_.store(0);
  compile_ns_.store(0);
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

ModuleCache& module_cache() {
  static ModuleCache cache(cache_options_from_env());
  return cache;
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

Result<DiskCacheUsage> disk_cache_usage() {
  const std::shared_ptr<DiskCache> disk_cache = module_cache().disk();
  if (!disk_cache)
    return Error(ErrorCode::kUsage, "the disk cache is off",
                 "set TMEMJIT_CACHE_DIR, XDG_CACHE_HOME or HOME, and leave TMEMJIT_DISABLE_CACHE "
                 "unset");
  const DiskCache::Usage usage = disk_cache->usage();
  return DiskCacheUsage{disk_cache->version_dir().string(), usage.entries, usage.bytes};
}

}  // namespace tmem
