// tmemjit cache stats|clear|export|import, and the --no-cache / --cache-dir options of the
// compiling commands.
#include <cstdio>
#include <iostream>
#include <memory>

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

constexpr const char* kSynopsis =
    "tmemjit cache stats|clear|export BUNDLE|import BUNDLE [--cache-dir DIR] [--json]";

nlohmann::json memory_json(const tmem::CacheStats& stats) {
  return {{"hits", stats.hits},
          {"misses", stats.misses},
          {"disk_hits", stats.disk_hits},
          {"disk_writes", stats.disk_writes},
          {"evictions", stats.evictions},
          {"compile_ms", stats.compile_ms},
          {"entries", stats.entries},
          {"bytes", stats.bytes},
          {"remote_hits", stats.remote_hits},
          {"remote_misses", stats.remote_misses},
          {"remote_writes", stats.remote_writes},
          {"remote_errors", stats.remote_errors},
          {"remote_rejected", stats.remote_rejected},
          {"remote_lock_waits", stats.remote_lock_waits}};
}

// The remote tier as configured, and whether its server answers now (one PING, bounded by the
// connect and command timeouts).
nlohmann::json remote_json(std::string* line) {
  const tmem::RemoteCacheInfo info = tmem::remote_cache_info();
  if (info.url.empty() && !info.active) {
    *line = "remote cache: off (" + info.note + ")";
    return nullptr;
  }
  nlohmann::json remote = {{"url", info.url},
                           {"active", info.active},
                           {"signed", info.signed_entries},
                           {"note", info.note}};
  *line = "remote cache: " + info.url + (info.signed_entries ? " (entries signed)" : "");
  if (!info.active && !info.note.empty()) {
    *line += ": off (" + info.note + ")";
    return remote;
  }
  const tmem::Result<double> ping = tmem::ping_remote_cache();
  remote["reachable"] = ping.ok();
  if (ping.ok()) {
    remote["ping_ms"] = *ping;
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.2f", *ping);
    *line += ", reachable (PING " + std::string(ms) + " ms)";
  } else {
    remote["error"] = ping.error().message();
    *line += ", unreachable: " + ping.error().message();
  }
  return remote;
}

int stats(bool json) {
  const tmem::CacheOptions options = tmem::cache_options();
  const tmem::CacheStats memory = tmem::cache_stats();
  const tmem::Result<tmem::DiskCacheUsage> usage = tmem::disk_cache_usage();
  std::string remote_line;
  const nlohmann::json remote = remote_json(&remote_line);
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
                {"remote", remote},
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
            << ", disk hits " << memory.disk_hits << ", remote hits " << memory.remote_hits
            << ", misses " << memory.misses << "\n";
  std::cout << remote_line << "\n";
  if (!remote.is_null() && remote.value("active", false))
    std::cout << "remote cache (this process): hits " << memory.remote_hits << ", misses "
              << memory.remote_misses << ", writes " << memory.remote_writes << ", errors "
              << memory.remote_errors << ", rejected entries " << memory.remote_rejected
              << ", lock waits " << memory.remote_lock_waits << "\n";
  return kExitOk;
}

int clear(bool json) {
  const tmem::Result<tmem::DiskCacheUsage> usage = tmem::disk_cache_usage();
  if (!usage.ok()) return report(usage.error(), json);
  const tmem::Result<uint64_t> removed = tmem::clear_disk_cache();
  if (!removed.ok()) return report(removed.error(), json);
  if (json)
    print_json({{"ok", true}, {"dir", usage->dir}, {"removed", *removed}});
  else
    std::cout << "removed " << *removed << " entries from " << usage->dir << "\n";
  return kExitOk;
}

int bundle(bool import, const std::string& path, bool json) {
  const tmem::Result<tmem::DiskCacheUsage> usage = tmem::disk_cache_usage();
  if (!usage.ok()) return report(usage.error(), json);
  const tmem::Result<tmem::BundleSummary> done =
      import ? tmem::import_cache_bundle(path) : tmem::export_cache_bundle(path);
  if (!done.ok()) return report(done.error(), json);
  if (json) {
    print_json({{"ok", true},
                {"bundle", done->path},
                {"dir", usage->dir},
                {"entries", done->entries},
                {"bytes", done->bytes},
                {"skipped", done->skipped}});
  } else if (import) {
    std::cout << "imported " << done->entries << " entries from " << done->path << " into "
              << usage->dir << "\n";
  } else {
    std::cout << "exported " << done->entries << " entries from " << usage->dir << " to "
              << done->path << " (" << done->bytes << " bytes)";
    if (done->skipped != 0) std::cout << "; left out " << done->skipped << " invalid entries";
    std::cout << "\n";
  }
  return kExitOk;
}

}  // namespace

int cmd_cache(const std::vector<std::string>& argv) {
  auto args = parse_args("cache", argv, {{"--cache-dir", true}, {"--json", false}});
  if (!args) return report(args.error(), false);
  const bool json = args->json();
  const std::vector<std::string>& words = args->positional();
  const bool takes_bundle = !words.empty() && (words[0] == "export" || words[0] == "import");
  const size_t expected = takes_bundle ? 2 : 1;
  if (words.size() != expected)
    return report(
        tmem::Error(tmem::ErrorCode::kUsage,
                    words.empty() ? std::string("missing the cache command; usage: ") + kSynopsis
                    : words.size() < expected
                        ? "cache " + words[0] + " needs a bundle file; usage: " + kSynopsis
                        : "unexpected argument '" + words[expected] + "'; usage: " + kSynopsis),
        json);
  if (auto applied = apply_cache_args(*args); !applied) return report(applied.error(), json);
  const std::string& what = words[0];
  if (what == "stats") return stats(json);
  if (what == "clear") return clear(json);
  if (takes_bundle) return bundle(what == "import", words[1], json);
  return report(
      tmem::Error(tmem::ErrorCode::kUsage,
                  "unknown cache command '" + what + "' (allowed: stats, clear, export, import)"),
      json);
}

}  // namespace tmemjit_cli
