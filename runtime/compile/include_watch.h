// Change notification for the include closure's cache (include_closure.h, "the watched path"):
// one process-wide inotify descriptor, and the walk that sets its watches over a closure's paths
// as the kernel resolves them (symbolic links followed), so that a change anywhere on the way is
// an event. A closure none of whose watches saw an event since its snapshot still holds.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

struct inotify_event;

namespace tmem::closure {

// One watched inode (a directory, or a file with other hard links) and the names in it that some
// closure's paths go through.
struct Watch {
  std::atomic<uint64_t> generation{0};    // bumped by each event on a name that matters
  std::unordered_set<std::string> names;  // under Watcher::mutex_
  bool trusted = true;                    // on a file system whose changes this kernel sees
};

// A closure's watches as they stood when it was last known to hold: it still holds while none
// has moved on.
struct Snapshot {
  std::vector<std::pair<std::shared_ptr<Watch>, uint64_t>> watches;
  uint64_t epoch = 0;     // Watcher::epoch() then
  bool relative = false;  // some path resolves from the current directory: chdir moves it
  uint64_t cwd_device = 0, cwd_inode = 0;
};

// The process's inotify descriptor and what each of its watches is for. Events are drained under
// mutex_ and applied before it is released, so a query that drains after another thread's drain
// sees that thread's events applied.
class Watcher {
 public:
  // Null where inotify is unavailable.
  static Watcher* instance();

  uint64_t epoch() const { return epoch_.load(std::memory_order_acquire); }

  // Applies every queued event: one read(2) returning EAGAIN when nothing changed.
  void drain();

  // Whether no watch of `snapshot` saw an event since it was taken. Call after drain().
  bool holds(const Snapshot& snapshot) const;

  // Watches `path` (a directory, or with `directory` false a file) for events on `name` in it
  // ("": the inode itself). `watch` is this walk's watch of `path`: when null, the watch is added
  // and its generation returned through `added`. False when it cannot be watched or trusted.
  bool watch(const std::string& path, const std::string& name, bool directory,
             std::shared_ptr<Watch>& watch, std::optional<uint64_t>& added);

 private:
  explicit Watcher(int fd);

  // Under mutex_: whether fd_ may be used, after making a forked child its own.
  bool ready();
  // Under mutex_.
  void apply(const inotify_event& event);
  // Under mutex_: removes the watches no closure and no walk holds any more.
  void sweep();

  static inline Watcher* forking_ = nullptr;  // instance(), for the fork handlers
  std::mutex mutex_;
  int fd_;
  bool forked_ = false;  // set in a forked child, under mutex_
  std::atomic<bool> broken_{false};
  std::atomic<uint64_t> epoch_{1};
  std::unordered_map<int, std::shared_ptr<Watch>> by_wd_;  // under mutex_
  size_t sweep_at_;                                        // watches held before the next sweep
};

// `path` as (its directory as written, its last name); the name is empty where the last component
// is "." or ".." or the path ends in '/': then the whole path is the directory.
std::pair<std::string, std::string> split_watched(const std::string& path);

// The watches over the paths of one or two closures, each set before the lookup it guards: walks
// each path as the kernel resolves it (symbolic links followed), watching each directory it looks
// a name up in for that name, so a change anywhere on the way after the lookup is an event.
class Walk {
 public:
  explicit Walk(Watcher& watcher) : watcher_(watcher), epoch_(watcher.epoch()) {}
  ~Walk();
  Walk(const Walk&) = delete;
  Walk& operator=(const Walk&) = delete;

  // Watches the paths `dir`/NAME for each of `names` ("": `dir` itself, walked whole).
  void add(const std::string& dir, const std::vector<std::string>& names);
  // A watch could not be set or trusted: the closure takes the stat path.
  bool failed() const { return failed_; }
  // (directory, name) pairs watched so far.
  int64_t points() const { return points_; }

  std::shared_ptr<const Snapshot> snapshot() const;

 private:
  enum class Kind { kMissing, kDirectory, kOther, kLink };
  struct Entry {
    Kind kind = Kind::kMissing;
    std::optional<std::string> target;  // a link's resolution, symlink-free
  };
  // A symlink-free directory (or a hard-linked file) this walk watches.
  struct Directory {
    std::shared_ptr<Watch> watch;
    int fd = -1;  // O_PATH, opened once watched; -1: whole paths are looked up
    bool opened = false;
    bool parent_watched = false;
    std::unordered_map<std::string, Entry> entries;  // name -> what lstat said, once watched
  };

  // `path` symlink-free (in `cur`'s terms: "" is the current directory), or none when it does not
  // resolve to an existing file or directory. A path's directory is walked once per Walk.
  std::optional<std::string> resolve(const std::string& path, int links);
  // `dir` (as a path spells it) symlink-free, or none when it is not a directory; walked once.
  const std::optional<std::string>& directory(const std::string& dir, int links);
  // Every component of `path` in turn; with `directory`, none unless it ends in a directory.
  std::optional<std::string> walk(std::string_view path, int links, bool directory);
  // `name` looked up in the symlink-free directory `cur`, watched first.
  std::optional<std::string> step(const std::string& cur, Directory& dir, const std::string& name,
                                  int links, bool& not_directory);
  // What lstat says of `name` in `cur`, through the directory's descriptor (one component looked
  // up, not the whole path).
  Entry look_up(const std::string& cur, Directory& dir, const std::string& name, int links);
  void watch(const std::string& path, Directory& dir, const std::string& name, bool directory);
  void note_relative();

  Watcher& watcher_;
  uint64_t epoch_;
  bool failed_ = false;
  bool relative_ = false;
  uint64_t cwd_device_ = 0, cwd_inode_ = 0;
  // A directory as a path spells it -> symlink-free, none when it does not resolve.
  std::unordered_map<std::string, std::optional<std::string>> directories_;
  // Symlink-free path -> what is watched there; its elements stay put as it grows.
  std::unordered_map<std::string, Directory> directories_at_;
  int64_t points_ = 0;  // (directory, name) pairs watched
  std::vector<std::pair<std::shared_ptr<Watch>, uint64_t>> captured_;
};

}  // namespace tmem::closure
