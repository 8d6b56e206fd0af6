// tmemjit cache stats|clear, and the --no-cache / --cache-dir options of the compiling commands.
#include <iostream>
#include <memory>

#include "runtime/cache/module_cache.h"
#include "tmem/cache.h"
#include "tools/cli.h"

namespace tmemjit_cli {

std::vector<OptionSpec> with_cache_options(std::vector<OptionSpec> options) {
  options.push_back({"--no-cache", false});
  options.push_back({"--cache-dir", true});
  return options;
}

tmem::Status apply_cache_args(const Args& args) {
  const std::optional<std::string> dir = args.get("--cache-dir");
  if (dir && args.has("--no-cache"))
    return tmem::Error(tmem::ErrorCode::kUsage, "--no-cache and --cache-dir cannot be combined");
  if (args.has("--no-cache")) {
    tmem::CacheOptions options = tmem::cache_options();
    options.enabled = false;
    tmem::set_cache_options(options);
  } else if (dir) {
    if (dir->empty()) return tmem::Error(tmem::ErrorCode::kUsage, "--cache-dir needs a directory");
    tmem::CacheOptions options = tmem::cache_options();
    options.enabled = true;  // an explicit directory beats TMEMJIT_DISABLE_CACHE
    options.disk = true;
    options.dir = *dir;
    tmem::set_cache_options(options);
  }
  return std::monostate{};
}

namespace {

constexpr const char* kSynopsis = "tmemjit cache stats|clear [--cache-dir DIR] [--json]";

nlohmann::json memory_json(const tmem::CacheStats& stats) {
  return {{"hits", stats.hits},           {"misses", stats.misses},
          {"disk_hits", stats.disk_hits}, {"disk_writes", stats.disk_writes},
          {"evictions", stats.evictions}, {"compile_ms", stats.compile_ms},
          {"entries", stats.entries},     {"bytes", stats.bytes}};
}

int stats(bool json) {
  const tmem::CacheOptions options = tmem::cache_options();
  const tmem::CacheStats memory = tmem::cache_stats();
  const tmem::Result<tmem::DiskCacheUsage> usage = tmem::disk_cache_usage();
  if (json) {
    nlohmann::json disk = nullptr;
    if (usage.ok())
      disk = {{"dir", usage->dir},
              {"entries", usage->entries},
              {"bytes", usage->bytes},
              {"max_bytes", options.max_bytes}};
    print_json({{"ok", true},
                {"enabled", options.enabled},
                {"disk", disk},
                {"memory", memory_json(memory)}});
    return kExitOk;
  }
  if (usage.ok()) {
    std::cout << "disk cache: " << usage->dir << "\n"
              << "  entries: " << usage->entries << "\n"
              << "  bytes: " << usage->bytes << " (cap " << options.max_bytes << ")\n";
  } else {
    std::cout << "disk cache: off (" << usage.error().details() << ")\n";
  }
  // Counters live in the process: a fresh `tmemjit` has seen no lookups yet.
  std::cout << "memory cache (this process): " << (options.enabled ? "on" : "off") << ", "
            << memory.entries << " entries, " << memory.bytes << " bytes; hits " << memory.hits
            << ", disk hits " << memory.disk_hits << ", misses " << memory.misses << "\n";
  return kExitOk;
}

int clear(bool json) {
  const std::shared_ptr<tmem::DiskCache> disk = tmem::module_cache().disk();
  if (!disk) {
    const tmem::Result<tmem::DiskCacheUsage> usage = tmem::disk_cache_usage();
    return report(usage.ok() ? tmem::Error(tmem::ErrorCode::kInternal, "the disk cache is off")
                             : usage.error(),
                  json);
  }
  const tmem::Result<uint64_t> removed = disk->clear();
  if (!removed.ok()) return report(removed.error(), json);
  if (json)
    print_json({{"ok", true}, {"dir", disk->version_dir().string()}, {"removed", *removed}});
  else
    std::cout << "removed " << *removed << " entries from " << disk->version_dir().string() << "\n";
  return kExitOk;
}

}  // namespace

int cmd_cache(const std::vector<std::string>& argv) {
  auto args = parse_args(argv, {{"--cache-dir", true}, {"--json", false}});
  if (!args) return report(args.error(), false);
  const bool json = args->json();
  if (args->positional().size() != 1)
    return report(tmem::Error(tmem::ErrorCode::kUsage,
                              args->positional().empty()
                                  ? std::string("missing the cache command; usage: ") + kSynopsis
                                  : "unexpected argument '" + args->positional()[1] +
                                        "'; usage: " + kSynopsis),
                  json);
  if (auto applied = apply_cache_args(*args); !applied) return report(applied.error(), json);
  const std::string& what = args->positional()[0];
  if (what == "stats") return stats(json);
  if (what == "clear") return clear(json);
  return report(tmem::Error(tmem::ErrorCode::kUsage,
                            "unknown cache command '" + what + "' (allowed: stats, clear)"),
                json);
}

}  // namespace tmemjit_cli
