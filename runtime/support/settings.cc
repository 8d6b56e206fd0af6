// Settings::from_environment: each variable read and, where it is a number or a switch, parsed.
#include "runtime/support/settings.h"

#include <algorithm>
#include <cstdlib>

#include "tmem/text.h"

namespace tmem {
namespace {

// The library's only getenv (tests/layering/check_getenv.py); unset reads as empty. Every
// variable is named here as the first argument of a read_* function, where the gate finds it and
// checks that docs/settings.md has its row.
std::string read_text(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

// Whole milliseconds, at most 9 digits (the cache's bounds; 0 is taken, and the tiers clamp it).
Parsed<uint32_t> read_ms(const char* name, uint32_t fallback) {
  const std::string text = read_text(name);
  Parsed<uint32_t> parsed{fallback};
  if (text.empty()) return parsed;
  const bool ok = text.size() <= 9 && std::all_of(text.begin(), text.end(),
                                                  [](char c) { return c >= '0' && c <= '9'; });
  if (!ok) {
    parsed.problem = std::string(name) + "='" + text.substr(0, 64) +
                     "' is not a number of milliseconds; using " + std::to_string(fallback);
    return parsed;
  }
  parsed.value = static_cast<uint32_t>(std::strtoul(text.c_str(), nullptr, 10));
  parsed.from_environment = true;
  return parsed;
}

Parsed<uint64_t> read_bytes(const char* name, uint64_t fallback) {
  const std::string text = read_text(name);
  Parsed<uint64_t> parsed{fallback};
  if (text.empty()) return parsed;
  if (std::optional<uint64_t> bytes = parse_byte_count(text)) {
    parsed.value = *bytes;
    parsed.from_environment = true;
  } else {
    parsed.problem = std::string(name) + "='" + text +
                     "' is not a byte count (like 1073741824 or 512M); using " +
                     std::to_string(fallback);
  }
  return parsed;
}

// Whole megabytes from 1 to `max_mb`, in bytes. Digits only: strtoull would take "-1" as
// 2^64 - 1 and " 5" or "5MB" in part.
Parsed<uint64_t> read_megabytes(const char* name, uint64_t max_mb, uint64_t fallback) {
  const std::string text = read_text(name);
  Parsed<uint64_t> parsed{fallback};
  if (text.empty()) return parsed;
  const bool digits = text.size() <= 19 && std::all_of(text.begin(), text.end(),
                                                       [](char c) { return c >= '0' && c <= '9'; });
  const uint64_t mb = digits ? std::strtoull(text.c_str(), nullptr, 10) : 0;
  if (mb >= 1 && mb <= max_mb) {
    parsed.value = mb << 20;
    parsed.from_environment = true;
    return parsed;
  }
  parsed.problem = std::string(name) + "=" + quote_excerpt(text) +
                   " is not a whole number of megabytes from 1 to " + std::to_string(max_mb) +
                   "; the default of " + std::to_string(fallback >> 20) + " is used";
  return parsed;
}

// "0" is off, "1" on; unset or empty is on, and so is anything else, with a warning: a typo must
// not turn a feature off unasked.
Parsed<bool> read_switch(const char* name, const char* feature) {
  const std::string text = read_text(name);
  Parsed<bool> parsed{true};
  if (text == "0" || text == "1") {
    parsed.value = text == "1";
    parsed.from_environment = true;
  } else if (!text.empty()) {
    parsed.problem = std::string(name) + "=" + quote_excerpt(text) +
                     " is neither 0 (off) nor 1 (on); " + feature;
  }
  return parsed;
}

// TMEMJIT_PCH_CREATE: "background" or "inline".
Parsed<PchCreation> read_pch_creation() {
  const std::string text = read_text("TMEMJIT_PCH_CREATE");
  Parsed<PchCreation> parsed{PchCreation::kBackground};
  if (text == "background" || text == "inline") {
    parsed.value = text == "inline" ? PchCreation::kInline : PchCreation::kBackground;
    parsed.from_environment = true;
  } else if (!text.empty()) {
    parsed.problem = "TMEMJIT_PCH_CREATE=" + quote_excerpt(text) +
                     " is neither background nor inline; precompiled headers are made in the "
                     "background";
  }
  return parsed;
}

// Seconds as strtod reads them (so "2.5" and "1e2" too), above 0 and below 10^6.
Parsed<std::chrono::milliseconds> read_seconds(const char* name,
                                               std::chrono::milliseconds fallback) {
  const std::string text = read_text(name);
  Parsed<std::chrono::milliseconds> parsed{fallback};
  if (text.empty()) return parsed;
  char* end = nullptr;
  const double seconds = std::strtod(text.c_str(), &end);
  if (end != text.c_str() && *end == '\0' && seconds > 0 && seconds < 1e6) {
    parsed.value = std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
    parsed.from_environment = true;
    return parsed;
  }
  parsed.problem = std::string(name) + "=" + quote_excerpt(text) +
                   " is not a number of seconds above 0 and below 1000000; the default of " +
                   std::to_string(fallback.count() / 1000) + " is used";
  return parsed;
}

void read_cache(Settings& s) {
  const std::string disable = read_text("TMEMJIT_DISABLE_CACHE");
  s.cache_disabled = !disable.empty() && disable != "0";
  s.cache_dir = read_text("TMEMJIT_CACHE_DIR");
  s.xdg_cache_home = read_text("XDG_CACHE_HOME");
  s.home = read_text("HOME");
  s.cache_max_bytes = read_bytes("TMEMJIT_CACHE_MAX_BYTES", s.cache_max_bytes.value);
  s.remote_cache = read_text("TMEMJIT_REMOTE_CACHE");
  s.remote_cache_secret = read_text("TMEMJIT_REMOTE_CACHE_SECRET");
  s.remote_cache_connect_timeout_ms =
      read_ms("TMEMJIT_REMOTE_CACHE_CONNECT_TIMEOUT_MS", s.remote_cache_connect_timeout_ms.value);
  s.remote_cache_timeout_ms =
      read_ms("TMEMJIT_REMOTE_CACHE_TIMEOUT_MS", s.remote_cache_timeout_ms.value);
  s.remote_cache_lock_wait_ms =
      read_ms("TMEMJIT_REMOTE_CACHE_LOCK_WAIT_MS", s.remote_cache_lock_wait_ms.value);
  s.remote_cache_lock_ttl_ms =
      read_ms("TMEMJIT_REMOTE_CACHE_LOCK_TTL_MS", s.remote_cache_lock_ttl_ms.value);
  s.remote_cache_retry_ms = read_ms("TMEMJIT_REMOTE_CACHE_RETRY_MS", s.remote_cache_retry_ms.value);
}

void read_toolkit(Settings& s) {
  s.ptxas = read_text("TMEMJIT_PTXAS");
  s.nvcc = read_text("TMEMJIT_NVCC");
  s.nvdisasm = read_text("TMEMJIT_NVDISASM");
  s.nvrtc_library = read_text("TMEMJIT_NVRTC_LIBRARY");
  s.nvjitlink_library = read_text("TMEMJIT_NVJITLINK_LIBRARY");
  s.cuda_include_dir = read_text("TMEMJIT_CUDA_INCLUDE_DIR");
  s.cuda_home = read_text("CUDA_HOME");
  s.cuda_path = read_text("CUDA_PATH");
  s.path = read_text("PATH");
}

void read_compiling(Settings& s) {
  s.subprocess_timeout = read_seconds("TMEMJIT_SUBPROCESS_TIMEOUT_S", s.subprocess_timeout.value);
  if (std::string tmp = read_text("TMPDIR"); !tmp.empty()) s.temp_dir = std::move(tmp);
  s.pch = read_switch("TMEMJIT_PCH", "precompiled headers stay on");
  s.pch_creation = read_pch_creation();
  s.pch_budget_bytes =
      read_megabytes("TMEMJIT_PCH_BUDGET_MB", Settings::kMaxPchBudgetMb, s.pch_budget_bytes.value);
  s.pch_heap_bytes =
      read_megabytes("TMEMJIT_PCH_HEAP_MB", Settings::kMaxPchHeapMb, s.pch_heap_bytes.value);
  s.include_watch = read_switch("TMEMJIT_INCLUDE_WATCH", "the include watch stays on");
}

}  // namespace

Settings Settings::from_environment() {
  Settings settings;
  read_cache(settings);
  read_toolkit(settings);
  read_compiling(settings);
  return settings;
}

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

}  // namespace tmem
