// The process-wide cache of include closures (include_closure.h, IncludeClosureCache): the stat
// path revalidates a remembered closure by its probes' signatures; the watched path answers from
// inotify (include_watch.h) with no stat when nothing it depends on changed.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <unordered_map>
#include <utility>

#include "runtime/compile/file_signature.h"
#include "runtime/compile/include_closure.h"
#include "runtime/compile/include_scan.h"
#include "runtime/compile/include_watch.h"
#include "runtime/support/settings.h"
#include "runtime/support/warning.h"

namespace tmem {
namespace {

using closure::FileMemo;
using closure::join;
using closure::Signature;
using closure::signature_of;
using closure::Snapshot;
using closure::split_watched;
using closure::stat_path;
using closure::Walk;
using closure::Watcher;

constexpr size_t kMaxClosures = 1024;  // remembered queries before a reset

// A closure's probes under one directory. A hit opens each directory once (O_PATH) and stats its
// entries relative to it: a one-component lookup each instead of a walk of the whole path, which
// takes a third off a hit on CuTe's closure (bench/include_closure_bench.cc). Opened afresh on
// each hit, the directory is what its path names now, so the answer is stat's on the full path.
struct ProbeGroup {
  std::string dir;  // "": entries are whole paths, looked up from the current directory
  std::vector<std::pair<std::string, Signature>> entries;  // name in dir, what stat said
};

// A remembered closure and the signatures that vouch for it.
struct Remembered {
  std::shared_ptr<const IncludeClosure> closure;
  std::vector<ProbeGroup> groups;
  bool racy = false;  // some probe changed too recently to trust: scan next time
  // Every path stat said something of, and every candidate a failed search tried, by directory
  // as written (split_watched): what a Walk watches.
  std::map<std::string, std::vector<std::string>> watched;
};

std::vector<ProbeGroup> group_by_directory(const std::map<std::string, Signature>& probes) {
  std::map<std::string, ProbeGroup> groups;
  for (const auto& [path, sig] : probes) {
    const size_t slash = path.rfind('/');
    std::string dir, name = path;
    if (slash != std::string::npos && slash + 1 < path.size()) {
      dir = slash == 0 ? std::string("/") : path.substr(0, slash);
      name = path.substr(slash + 1);
    }
    ProbeGroup& group = groups[dir];
    group.dir = dir;
    group.entries.emplace_back(std::move(name), sig);
  }
  std::vector<ProbeGroup> out;
  for (auto& [dir, group] : groups) out.push_back(std::move(group));
  return out;
}

bool entry_holds(int dir_fd, const std::string& name, const Signature& sig) {
  struct stat st;
  Signature now;
  if (::fstatat(dir_fd, name.c_str(), &st, 0) != 0) {
    now.error = errno;
  } else {
    now = signature_of(st);
  }
  return now == sig;
}

bool group_holds(const ProbeGroup& group) {
  if (group.dir.empty()) {
    for (const auto& [name, sig] : group.entries)
      if (!entry_holds(AT_FDCWD, name, sig)) return false;
    return true;
  }
  const int dir_fd = ::open(group.dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) {  // gone, not a directory, or no descriptor left: the whole paths answer
    for (const auto& [name, sig] : group.entries)
      if (!(stat_path(join(group.dir, name)) == sig)) return false;
    return true;
  }
  bool holds = true;
  for (const auto& [name, sig] : group.entries) {
    if (!entry_holds(dir_fd, name, sig)) {
      holds = false;
      break;
    }
  }
  ::close(dir_fd);
  return holds;
}

Key128 query_key(const ClosureQuery& query) {
  KeyBuilder key;
  key.str("source", query.source);
  key.str("path", query.source_path);
  key.integer("include dirs", static_cast<int64_t>(query.include_dirs.size()));
  for (const std::string& dir : query.include_dirs) key.str("dir", dir);
  key.integer("pre-includes", static_cast<int64_t>(query.pre_includes.size()));
  for (const std::string& name : query.pre_includes) key.str("pre-include", name);
  std::vector<std::string> in_memory = query.in_memory;  // a set: order is not the caller's point
  std::sort(in_memory.begin(), in_memory.end());
  for (const std::string& name : in_memory) key.str("in memory", name);
  key.integer("defines", static_cast<int64_t>(query.defines.size()));
  for (const std::string& define : query.defines) key.str("define", define);
  return key.finish();
}

bool still_holds(const Remembered& remembered) {
  if (remembered.racy) return false;
  return std::all_of(remembered.groups.begin(), remembered.groups.end(), group_holds);
}

// A remembered closure and, when its watches vouch for it, their snapshot.
struct Cached {
  std::shared_ptr<const Remembered> remembered;
  std::shared_ptr<const Snapshot> snapshot;  // null: validate by stat (new, or changed since)
  bool unwatchable = false;                  // a watch failed: the stat path, until it changes
};

bool watch_wanted(IncludeClosureCache::ChangeWatch watch) {
  if (watch == IncludeClosureCache::ChangeWatch::kOff) return false;
  const Parsed<bool> wanted = Settings::from_environment().include_watch;
  if (!wanted.problem.empty()) warn(wanted.problem);
  return wanted.value;
}

}  // namespace

struct IncludeClosureCache::State {
  mutable std::shared_mutex mutex;
  std::unordered_map<Key128, Cached, Key128Hash> closures;
  FileMemo memo;
  Watcher* watcher = nullptr;  // null: the stat path only
  std::atomic<int64_t> hits{0}, watched_hits{0}, scans{0}, files_read{0};

  // Records that `remembered`, still the one cached for `key`, holds as `snapshot` says (null: it
  // cannot be watched).
  void vouch(const Key128& key, const std::shared_ptr<const Remembered>& remembered,
             std::shared_ptr<const Snapshot> snapshot) {
    std::unique_lock lock(mutex);
    auto it = closures.find(key);
    if (it == closures.end() || it->second.remembered != remembered) return;
    it->second.unwatchable = snapshot == nullptr;
    it->second.snapshot = std::move(snapshot);
  }
};

IncludeClosureCache::IncludeClosureCache(ChangeWatch watch) : state_(std::make_unique<State>()) {
  if (watch_wanted(watch)) state_->watcher = Watcher::instance();
}
IncludeClosureCache::~IncludeClosureCache() = default;

Result<std::shared_ptr<const IncludeClosure>> IncludeClosureCache::closure(
    const ClosureQuery& query) {
  const Key128 key = query_key(query);
  Watcher* const watcher = state_->watcher;
  // Every event queued before this query began is applied before any snapshot is trusted.
  if (watcher != nullptr) watcher->drain();
  std::shared_ptr<const Remembered> remembered;
  bool unwatchable = true;
  {
    std::shared_lock lock(state_->mutex);
    auto it = state_->closures.find(key);
    if (it != state_->closures.end()) {
      const Cached& cached = it->second;
      if (cached.snapshot != nullptr && watcher != nullptr && watcher->holds(*cached.snapshot)) {
        state_->hits.fetch_add(1, std::memory_order_relaxed);
        state_->watched_hits.fetch_add(1, std::memory_order_relaxed);
        return cached.remembered->closure;
      }
      remembered = cached.remembered;
      unwatchable = cached.unwatchable;
    }
  }
  // Watches first, then the stats: a change after a stat is an event.
  std::optional<Walk> walk;
  if (watcher != nullptr && remembered != nullptr && !unwatchable) {
    walk.emplace(*watcher);
    for (const auto& [dir, names] : remembered->watched) walk->add(dir, names);
  }
  if (remembered != nullptr && still_holds(*remembered)) {
    state_->hits.fetch_add(1, std::memory_order_relaxed);
    if (walk) state_->vouch(key, remembered, walk->snapshot());
    return remembered->closure;
  }
  state_->scans.fetch_add(1, std::memory_order_relaxed);
  int64_t files_read = 0;
  auto scanned = closure::scan_closure(query, &state_->memo, files_read);
  state_->files_read.fetch_add(files_read, std::memory_order_relaxed);
  if (!scanned.ok()) return std::move(scanned).error();
  auto fresh = std::make_shared<Remembered>();
  fresh->closure = std::make_shared<const IncludeClosure>(std::move(scanned->closure));
  fresh->groups = group_by_directory(scanned->probes);
  fresh->racy = scanned->racy;
  for (const auto& [path, sig] : scanned->probes) {
    auto [dir, name] = split_watched(path);
    fresh->watched[std::move(dir)].push_back(std::move(name));
  }
  for (const std::string& path : scanned->absent) {
    auto [dir, name] = split_watched(path);
    fresh->watched[std::move(dir)].push_back(std::move(name));
  }
  Cached cached{fresh, nullptr, false};
  if (walk && !walk->failed()) {
    // The scan read under the old closure's watches: when they cover every path of the new one
    // (an edit that moved no include), a change since they were set is an event, so the new
    // closure is clean as of then, its timestamps racy or not. Else a stat validates it next time.
    const int64_t before = walk->points();
    for (const auto& [dir, names] : fresh->watched) walk->add(dir, names);
    if (walk->points() == before) cached.snapshot = walk->snapshot();
  }
  std::unique_lock lock(state_->mutex);
  if (state_->closures.size() >= kMaxClosures) state_->closures.clear();
  state_->closures[key] = std::move(cached);
  return fresh->closure;
}

IncludeClosureCache::Counters IncludeClosureCache::counters() const {
  Counters out;
  out.hits = state_->hits.load(std::memory_order_relaxed);
  out.watched_hits = state_->watched_hits.load(std::memory_order_relaxed);
  out.scans = state_->scans.load(std::memory_order_relaxed);
  out.files_read = state_->files_read.load(std::memory_order_relaxed);
  return out;
}

void IncludeClosureCache::clear() {
  std::unique_lock lock(state_->mutex);
  state_->closures.clear();
  std::unique_lock memo_lock(state_->memo.mutex);
  state_->memo.files.clear();
}

}  // namespace tmem
