// tmemjit warmup: precompiles a list of specs (one JSON object per line) into the cache tiers, so
// that an application's first calls are hits (docs/design.md §Fleet, docs/cache.md).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include "tmem/cache.h"
#include "tmem/jit.h"
#include "tmem/text.h"
#include "tools/cli.h"

namespace tmemjit_cli {
namespace {

// parse_target takes the emulation target; the harness kernels warmup builds are tcgen05 code.
tmem::Error sm90_refused() {
  return tmem::Error(tmem::ErrorCode::kTarget,
                     "warmup precompiles tcgen05 harness kernels, which sm_90 has not; --target "
                     "takes sm_100a, sm_100f, sm_103a, sm_103f, sm_110a, sm_110f")
      .set_rule(tmem::Rule::kTargetAndVersion);
}

constexpr const char* kKinds = "roundtrip, store, load, fill";
// Bounds of a spec list (docs/reliability.md, "Bounds"). A spec is a few hundred bytes
// (tools/spec_args.cc refuses a --spec file over 1 MiB); so is a line. The file and the number of
// specs are bounded too: `--specs /dev/zero` once read 9.9 GB looking for a newline (issue 30).
constexpr size_t kMaxLineBytes = size_t{1} << 20;
constexpr size_t kMaxListBytes = size_t{64} << 20;
constexpr size_t kMaxSpecs = 100000;

// The whole list: a regular file or a pipe (`--specs <(generate)`), at most kMaxListBytes. A
// device, directory or socket is refused before anything is read.
tmem::Result<std::string> read_list(const std::string& path) {
  const std::string quoted = "'" + tmem::quote_excerpt(path) + "'";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return tmem::Error(tmem::ErrorCode::kUsage,
                       "cannot read spec list " + quoted + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))) {
    ::close(fd);
    return tmem::Error(tmem::ErrorCode::kUsage,
                       "spec list " + quoted + " is not a regular file or a pipe");
  }
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error_number = errno;
      ::close(fd);
      return tmem::Error(tmem::ErrorCode::kUsage,
                         "cannot read spec list " + quoted + ": " + std::strerror(error_number));
    }
    if (n == 0) break;
    if (text.size() + static_cast<size_t>(n) > kMaxListBytes) {
      ::close(fd);
      return tmem::Error(tmem::ErrorCode::kLimit, "spec list " + quoted + " is larger than " +
                                                      std::to_string(kMaxListBytes >> 20) + " MiB");
    }
    text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

// What --kernel, --target and --backend set for every line.
struct Defaults {
  tmem::CompileOptions options;
  tmem::KernelKind kind = tmem::KernelKind::kRoundtrip;
};

// One line of the list that names a spec.
struct Item {
  size_t line = 0;
  tmem::TransferSpec spec;
  tmem::CompileOptions options;
  tmem::KernelKind kind = tmem::KernelKind::kRoundtrip;
};

struct LineError {
  size_t line = 0;
  tmem::Error error;
};

// A line: the spec's JSON keys (tmem/transfer.h), plus optional "kernel" and "target" that override
// --kernel and --target for that line.
tmem::Result<Item> parse_line(const std::string& text, size_t line, const Defaults& defaults) {
  if (tmem::Status depth = tmem::check_json_depth(text, "the line"); !depth.ok())
    return std::move(depth).error();
  nlohmann::json object = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded() || !object.is_object())
    return tmem::Error(tmem::ErrorCode::kParse, "not a JSON object");
  Defaults these = defaults;
  if (auto it = object.find("kernel"); it != object.end()) {
    if (!it->is_string())
      return tmem::Error(tmem::ErrorCode::kParse, "\"kernel\" must be a string");
    auto kind = tmem::parse_kernel_kind(it->get<std::string>());
    if (!kind) return kind.error();
    these.kind = *kind;
    object.erase(it);
  }
  if (auto it = object.find("target"); it != object.end()) {
    if (!it->is_string())
      return tmem::Error(tmem::ErrorCode::kParse, "\"target\" must be a string");
    auto target = tmem::parse_target(it->get<std::string>());
    if (!target) return target.error();
    if (*target == tmem::Target::kSm90) return sm90_refused();
    these.options.target = *target;
    object.erase(it);
  }
  auto spec = tmem::TransferSpec::from_json(object.dump());
  if (!spec) return spec.error();
  return Item{line, std::move(spec).value(), these.options, these.kind};
}

std::string seconds_text(double seconds) {
  char text[32];
  if (seconds < 60)
    std::snprintf(text, sizeof text, "%.1f s", seconds);
  else
    std::snprintf(text, sizeof text, "%d min %02d s", static_cast<int>(seconds) / 60,
                  static_cast<int>(seconds) % 60);
  return text;
}

// "\r[ 37/120] 12.3 specs/s, 7.2 s left" on a terminal, at most ten times a second.
class Progress {
 public:
  explicit Progress(size_t total) : total_(total), on_(::isatty(STDERR_FILENO) == 1) {}
  void done_one() {
    const size_t done = ++done_;
    if (!on_) return;
    const auto now = Clock::now();
    std::lock_guard lock(mutex_);
    if (done != total_ && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
    const double left = rate > 0 ? static_cast<double>(total_ - done) / rate : 0;
    std::fprintf(stderr, "\r[%*zu/%zu] %.1f specs/s, %s left   ", digits(), done, total_, rate,
                 seconds_text(left).c_str());
    if (done == total_) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }

 private:
  using Clock = std::chrono::steady_clock;
  int digits() const { return static_cast<int>(std::to_string(total_).size()); }

  size_t total_;
  bool on_;
  std::atomic<size_t> done_{0};
  std::mutex mutex_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_{};
};

// warmup's command line, checked.
struct WarmupRequest {
  std::string path;  // --specs FILE.jsonl
  Defaults defaults;
  size_t jobs = 1;
};

std::vector<OptionSpec> warmup_option_specs() {
  return with_cache_options({{"--specs", true},
                             {"--kernel", true},
                             {"--target", true},
                             {"--backend", true},
                             {"--jobs", true},
                             {"--json", false}});
}

tmem::Error usage(const std::string& message) {
  return tmem::Error(tmem::ErrorCode::kUsage, message);
}

// --kernel, --target and --backend: what every line gets unless it says otherwise.
tmem::Result<Defaults> defaults_of(const Args& args) {
  Defaults defaults;
  if (auto kernel = args.get("--kernel")) {
    auto kind = tmem::parse_kernel_kind(*kernel);
    if (!kind)
      return usage("warmup precompiles the cached harness kernels; --kernel '" + *kernel +
                   "' is not one of " + kKinds);
    defaults.kind = *kind;
  }
  if (auto target = args.get("--target")) {
    auto parsed = tmem::parse_target(*target);
    if (!parsed) return parsed.error();
    if (*parsed == tmem::Target::kSm90) return sm90_refused();
    defaults.options.target = *parsed;
  }
  if (auto backend = args.get("--backend")) {
    auto parsed = tmem::parse_backend(*backend);
    if (!parsed) return parsed.error();
    defaults.options.backend = *parsed;
  }
  return defaults;
}

// The request of a parsed command line, in the order its errors are reported. Applies the cache
// options to the process's cache on the way, as every command that compiles does.
tmem::Result<WarmupRequest> warmup_request(const Args& args) {
  if (!args.positional().empty())
    return usage("unexpected argument '" + args.positional()[0] +
                 "'; usage: tmemjit warmup --specs FILE.jsonl [--kernel K] [--target T]");
  WarmupRequest request;
  const std::optional<std::string> path = args.get("--specs");
  if (!path) return usage("missing --specs FILE.jsonl (one JSON spec per line)");
  request.path = *path;
  if (auto applied = apply_cache_args(args); !applied) return applied.error();
  auto defaults = defaults_of(args);
  if (!defaults) return defaults.error();
  request.defaults = std::move(defaults).value();
  request.jobs = std::max(1u, std::thread::hardware_concurrency());
  if (auto text = args.get("--jobs")) {
    const bool digits =
        !text->empty() && text->size() <= 4 &&
        std::all_of(text->begin(), text->end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits || std::stoul(*text) == 0) return usage("--jobs takes a positive number");
    request.jobs = std::stoul(*text);
  }
  return request;
}

// The lines of a list: the specs to compile and the lines refused.
struct SpecList {
  std::vector<Item> items;
  std::vector<LineError> errors;
  size_t specs = 0;  // every line that is not blank or a comment
};

// Blank lines and lines starting with '#' are skipped; a line over kMaxLineBytes, with a NUL byte
// or not a spec is an error of its own. More than kMaxSpecs specs is an error of the whole list.
tmem::Result<SpecList> parse_list(const std::string& list, const WarmupRequest& request) {
  SpecList out;
  size_t line = 0;
  for (size_t at = 0; at < list.size();) {
    ++line;
    size_t end = list.find('\n', at);
    if (end == std::string::npos) end = list.size();
    std::string text = list.substr(at, end - at);
    at = end + 1;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    const size_t first = text.find_first_not_of(" \t");
    if (first == std::string::npos || text[first] == '#') continue;  // blank lines and comments
    if (out.items.size() + out.errors.size() == kMaxSpecs)
      return tmem::Error(tmem::ErrorCode::kLimit,
                         "spec list '" + tmem::quote_excerpt(request.path) + "' has more than " +
                             std::to_string(kMaxSpecs) + " specs; split it");
    if (text.size() > kMaxLineBytes) {
      out.errors.push_back(
          {line, tmem::Error(tmem::ErrorCode::kLimit, "line is longer than 1 MiB")});
      continue;
    }
    // Refused rather than cut: the JSON parser would stop at it and drop the rest of the line.
    if (const size_t nul = text.find('\0'); nul != std::string::npos) {
      out.errors.push_back(
          {line, tmem::Error(tmem::ErrorCode::kParse,
                             "line has a NUL byte at column " + std::to_string(nul + 1))});
      continue;
    }
    tmem::Result<Item> item = parse_line(text, line, request.defaults);
    if (item)
      out.items.push_back(std::move(item).value());
    else
      out.errors.push_back({line, item.error()});
  }
  out.specs = out.items.size() + out.errors.size();
  return out;
}

// What the compiles did: the cache's counters before and after, and the time they took.
struct WarmupRun {
  tmem::CacheStats before, after;
  double seconds = 0;
};

// Compiles the list's specs on `jobs` threads through the public warmup_each; each key compiles
// once, across processes too. A spec that fails joins the list's errors, which end in line order.
WarmupRun compile_all(SpecList& list, size_t jobs) {
  WarmupRun run;
  const std::vector<Item>& items = list.items;
  run.before = tmem::cache_stats();
  const auto start = std::chrono::steady_clock::now();
  std::vector<tmem::WarmupItem> each;
  each.reserve(items.size());
  for (const Item& item : items) each.push_back({item.spec, item.options, item.kind});
  Progress progress(items.size());
  const std::vector<tmem::Status> outcomes = tmem::warmup_each(
      each, static_cast<unsigned>(jobs), [&](size_t, size_t) { progress.done_one(); });
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.after = tmem::cache_stats();
  for (size_t i = 0; i < items.size(); ++i)
    if (!outcomes[i].ok()) list.errors.push_back({items[i].line, outcomes[i].error()});
  std::sort(list.errors.begin(), list.errors.end(),
            [](const LineError& a, const LineError& b) { return a.line < b.line; });
  return run;
}

void print_warmup_json(const std::string& path, const SpecList& list, const WarmupRun& run) {
  const std::vector<LineError>& errors = list.errors;
  const tmem::CacheStats& before = run.before;
  const tmem::CacheStats& after = run.after;
  nlohmann::json error_list = nlohmann::json::array();
  for (const LineError& e : errors)
    error_list.push_back({{"line", e.line},
                          {"code", tmem::to_string(e.error.code())},
                          {"message", e.error.message()}});
  nlohmann::json out = {{"ok", errors.empty()},
                        {"file", path},
                        {"specs", list.specs},
                        {"compiled", after.misses - before.misses},
                        {"memory_hits", after.hits - before.hits},
                        {"disk_hits", after.disk_hits - before.disk_hits},
                        {"remote_hits", after.remote_hits - before.remote_hits},
                        {"remote_lock_waits", after.remote_lock_waits - before.remote_lock_waits},
                        {"remote_errors", after.remote_errors - before.remote_errors},
                        {"remote_rejected", after.remote_rejected - before.remote_rejected},
                        {"failed", errors.size()},
                        {"errors", error_list},
                        {"seconds", run.seconds}};
  if (!errors.empty())
    out["error"] = {
        {"code", tmem::to_string(errors.front().error.code())},
        {"message", tmem::quote_excerpt(path) + ":" + std::to_string(errors.front().line) + ": " +
                        errors.front().error.message()}};
  print_json(out);
}

void print_warmup_text(const std::string& path, const SpecList& list, const WarmupRun& run) {
  for (const LineError& e : list.errors)
    std::cerr << tmem::quote_excerpt(path) << ":" << e.line
              << ": error: " << tmem::to_string(e.error.code()) << ": " << e.error.message()
              << "\n";
  std::cout << "warmed up " << list.specs << " specs from " << path << " in "
            << seconds_text(run.seconds) << ": " << run.after.misses - run.before.misses
            << " compiled, " << run.after.hits - run.before.hits << " memory hits, "
            << run.after.disk_hits - run.before.disk_hits << " disk hits, "
            << run.after.remote_hits - run.before.remote_hits << " remote hits";
  if (!list.errors.empty()) std::cout << "; " << list.errors.size() << " failed";
  std::cout << "\n";
}

}  // namespace

int cmd_warmup(const std::vector<std::string>& argv) {
  // A user's kernel: its generic tier, so that lazy specialization answers a new layout at once
  // (docs/specialization.md §Tiers). The same options as specialize, which compiles it.
  if (!argv.empty() && !argv[0].starts_with("-")) return cmd_warmup_kernel(argv);
  auto args = parse_args("warmup", argv, warmup_option_specs());
  if (!args) return report(args.error(), false);
  const bool json = args->json();
  auto request = warmup_request(*args);
  if (!request) return report(request.error(), json);
  auto text = read_list(request->path);
  if (!text) return report(text.error(), json);
  auto list = parse_list(*text, *request);
  if (!list) return report(list.error(), json);
  const WarmupRun run = compile_all(*list, request->jobs);
  if (json)
    print_warmup_json(request->path, *list, run);
  else
    print_warmup_text(request->path, *list, run);
  return list->errors.empty() ? kExitOk : exit_code(list->errors.front().error);
}

}  // namespace tmemjit_cli
