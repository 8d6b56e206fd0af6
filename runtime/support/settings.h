// Every environment variable the library reads, as one value: the one place that calls getenv
// (docs/settings.md, tests/layering/check_getenv.py).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tmem {

// A variable read as a number or a switch. `value` is the default where the variable is unset,
// empty or does not parse; then `problem` is the warning that names the variable, its text and the
// default, for the reader to emit where it always has (a bad value is never an error: it must not
// stop a compile that the default would let run).
template <typename T>
struct Parsed {
  T value;
  bool from_environment = false;  // a valid value was set and replaced the default
  std::string problem;            // empty unless a value was set that is not taken
};

// Who makes a prefix's precompiled header (TMEMJIT_PCH_CREATE, docs/specialization.md "How a
// layout compiles").
enum class PchCreation {
  kBackground,  // "background": a background job, while the first compile runs without it
  kInline,      // "inline": the first compile of the prefix, which pays for it
};

// One field per variable; a text field is empty where its variable is unset or empty. Defaults
// are the library's: those of the cache equal CacheOptions' (tests/cache/module_cache_test.cc).
struct Settings {
  // The module cache (docs/cache.md).
  bool cache_disabled = false;                            // TMEMJIT_DISABLE_CACHE: set, not "0"
  std::string cache_dir;                                  // TMEMJIT_CACHE_DIR
  std::string xdg_cache_home;                             // XDG_CACHE_HOME
  std::string home;                                       // HOME
  Parsed<uint64_t> cache_max_bytes{uint64_t{1} << 30};    // TMEMJIT_CACHE_MAX_BYTES
  std::string remote_cache;                               // TMEMJIT_REMOTE_CACHE
  std::string remote_cache_secret;                        // TMEMJIT_REMOTE_CACHE_SECRET
  Parsed<uint32_t> remote_cache_connect_timeout_ms{100};  // TMEMJIT_REMOTE_CACHE_CONNECT_TIMEOUT_MS
  Parsed<uint32_t> remote_cache_timeout_ms{500};          // TMEMJIT_REMOTE_CACHE_TIMEOUT_MS
  Parsed<uint32_t> remote_cache_lock_wait_ms{15000};      // TMEMJIT_REMOTE_CACHE_LOCK_WAIT_MS
  Parsed<uint32_t> remote_cache_lock_ttl_ms{10000};       // TMEMJIT_REMOTE_CACHE_LOCK_TTL_MS
  Parsed<uint32_t> remote_cache_retry_ms{30000};          // TMEMJIT_REMOTE_CACHE_RETRY_MS

  // The toolkit: programs, libraries and headers (docs/compile-backends.md).
  std::string ptxas;              // TMEMJIT_PTXAS
  std::string nvcc;               // TMEMJIT_NVCC
  std::string nvdisasm;           // TMEMJIT_NVDISASM
  std::string nvrtc_library;      // TMEMJIT_NVRTC_LIBRARY
  std::string nvjitlink_library;  // TMEMJIT_NVJITLINK_LIBRARY
  std::string cuda_include_dir;   // TMEMJIT_CUDA_INCLUDE_DIR
  std::string cuda_home;          // CUDA_HOME
  std::string cuda_path;          // CUDA_PATH
  std::string path;               // PATH

  // Compiling: helper programs, scratch files, precompiled headers, the include watch.
  // TMEMJIT_SUBPROCESS_TIMEOUT_S: seconds above 0 and below 10^6 (a hung ptxas must not hang us).
  Parsed<std::chrono::milliseconds> subprocess_timeout{std::chrono::seconds(300)};
  std::string temp_dir = "/tmp";  // TMPDIR
  Parsed<bool> pch{true};         // TMEMJIT_PCH: "0" off, "1" on
  // TMEMJIT_PCH_CREATE: who makes a prefix's precompiled header. The first compile of a prefix
  // returns as fast as NVRTC without one (issue 41: it cost +33%), so by default a background
  // job makes it for later layouts; "inline" lets that first compile make it itself (one core,
  // or a host that wants no thread).
  Parsed<PchCreation> pch_creation{PchCreation::kBackground};
  // TMEMJIT_PCH_BUDGET_MB: a CuTe prefix makes a 274 MB file, and an autotuner that specializes
  // many sources would keep every one until it exits; past this many bytes, the least recently
  // used are removed.
  Parsed<uint64_t> pch_budget_bytes{uint64_t{2048} << 20};
  // TMEMJIT_PCH_HEAP_MB: CuTe's headers need about 271 MB (measured, CUDA 13.0); NVRTC's default
  // heap is 256 MB, and a heap too small costs a whole compile that makes no PCH.
  Parsed<uint64_t> pch_heap_bytes{uint64_t{512} << 20};
  Parsed<bool> include_watch{true};  // TMEMJIT_INCLUDE_WATCH: "0" off

  // The largest megabyte counts the PCH variables take: 1 TiB of files, and a heap of 240 times
  // CuTe's need (a larger value is a typo, not a heap).
  static constexpr uint64_t kMaxPchBudgetMb = uint64_t{1} << 20;
  static constexpr uint64_t kMaxPchHeapMb = 65536;

  // Reads every variable now. Call sites call this each time they need a value, not once: tests
  // and hosts setenv between compiles and expect the next one to see it, and a read (some 30
  // getenv calls) costs nothing beside what each caller then does (a subprocess, a dlopen, a
  // compile). Nothing here warns: a caller emits a field's `problem` where the value takes effect.
  static Settings from_environment();
};

// A byte count with an optional K, M, G or T suffix (powers of 1024) and an optional B after it
// ("512M", "512MB"); nullopt when invalid or past 2^64 - 1.
std::optional<uint64_t> parse_byte_count(std::string_view text);

}  // namespace tmem
