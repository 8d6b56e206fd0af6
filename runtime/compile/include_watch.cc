// inotify watches over the include closures' paths (include_watch.h).
#include "runtime/compile/include_watch.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>

namespace tmem::closure {
namespace {

// What a watch reports: a change to an entry's content, attributes or name, and the watched
// inode's own removal or move. IN_Q_OVERFLOW, IN_IGNORED and IN_UNMOUNT come unasked.
constexpr uint32_t kWatchMask = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM |
                                IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF;
constexpr int kMaxLinks = 40;         // symbolic links followed in one path, the kernel's limit
constexpr size_t kFirstSweep = 1024;  // watches held before unused ones are removed

// File systems whose files may change without this kernel's knowing (another machine, a user-space
// server): their watches are not trusted (statfs(2) f_type).
bool is_remote(uint32_t type) {
  static constexpr uint32_t kRemote[] = {
      0x6969,      // NFS
      0x517B,      // SMB
      0xFF534D42,  // CIFS
      0xFE534D42,  // SMB2
      0x73757245,  // Coda
      0x5346414F,  // AFS
      0x6B414653,  // kAFS
      0x01021997,  // 9p
      0x00C36400,  // Ceph
      0x65735546,  // FUSE (sshfs, virtiofs, gcsfuse, ...)
      0x0BD00BD0,  // Lustre
      0x47504653,  // GPFS
      0x01161970,  // GFS2
      0x7461636F,  // OCFS2
      0x19830326,  // BeeGFS
      0x20030528,  // OrangeFS
      0x564C,      // NCP
  };
  return std::find(std::begin(kRemote), std::end(kRemote), type) != std::end(kRemote);
}

// `name` in the symlink-free directory `dir` ("": the current directory).
std::string join_name(const std::string& dir, const std::string& name) {
  return dir.empty() ? name : dir == "/" ? "/" + name : dir + "/" + name;
}

// The directory above the symlink-free `dir`: its parent as written, or one ".." more where `dir`
// is the current directory or climbs already.
std::string parent_of(const std::string& dir) {
  if (dir.empty()) return "..";
  if (dir == ".." || (dir.size() > 2 && dir.compare(dir.size() - 3, 3, "/..") == 0))
    return dir + "/..";
  const size_t slash = dir.rfind('/');
  if (slash == std::string::npos) return "";
  return slash == 0 ? std::string("/") : dir.substr(0, slash);
}

}  // namespace

Watcher* Watcher::instance() {
  static Watcher* const watcher = [] {
    const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd < 0) return static_cast<Watcher*>(nullptr);
    forking_ = new Watcher(fd);  // never deleted: queries may run during exit
    // A child shares the descriptor's queue: reading it would steal the parent's events. The
    // child makes its own at its next query; mutex_ is held across fork so it is sane there.
    ::pthread_atfork([] { forking_->mutex_.lock(); }, [] { forking_->mutex_.unlock(); },
                     [] {
                       forking_->forked_ = true;
                       forking_->mutex_.unlock();
                     });
    return forking_;
  }();
  return watcher;
}

Watcher::Watcher(int fd) : fd_(fd), sweep_at_(kFirstSweep) {}

void Watcher::drain() {
  std::lock_guard lock(mutex_);
  if (!ready()) return;
  alignas(inotify_event) char buffer[16384];
  for (;;) {
    const ssize_t got = ::read(fd_, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && errno == EAGAIN) return;
    if (got <= 0) {  // never expected: trust no watch from now on
      broken_.store(true, std::memory_order_release);
      epoch_.fetch_add(1, std::memory_order_acq_rel);
      return;
    }
    for (ssize_t at = 0; at < got;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      apply(*event);
    }
  }
}

bool Watcher::holds(const Snapshot& snapshot) const {
  if (broken_.load(std::memory_order_acquire) || snapshot.epoch != epoch()) return false;
  for (const auto& [watch, generation] : snapshot.watches)
    if (watch->generation.load(std::memory_order_acquire) != generation) return false;
  if (snapshot.relative) {
    struct stat st;
    if (::stat(".", &st) != 0 || st.st_dev != snapshot.cwd_device ||
        st.st_ino != snapshot.cwd_inode)
      return false;
  }
  return true;
}

bool Watcher::watch(const std::string& path, const std::string& name, bool directory,
                    std::shared_ptr<Watch>& watch, std::optional<uint64_t>& added) {
  std::lock_guard lock(mutex_);
  if (!ready()) return false;
  if (watch == nullptr) {
    if (by_wd_.size() >= sweep_at_) sweep();
    const char* at = path.empty() ? "." : path.c_str();
    const int wd = ::inotify_add_watch(fd_, at, kWatchMask | (directory ? IN_ONLYDIR : 0));
    if (wd < 0) return false;
    std::shared_ptr<Watch>& slot = by_wd_[wd];
    if (slot == nullptr) {
      slot = std::make_shared<Watch>();
      struct statfs fs;
      slot->trusted = ::statfs(at, &fs) == 0 && !is_remote(static_cast<uint32_t>(fs.f_type));
    }
    watch = slot;
    added = slot->generation.load(std::memory_order_acquire);
  }
  if (!watch->trusted) return false;
  watch->names.insert(name);
  return true;
}

bool Watcher::ready() {
  if (forked_) {
    forked_ = false;
    ::close(fd_);  // the parent's stays open in the parent
    fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    for (auto& [wd, watch] : by_wd_) watch->generation.fetch_add(1, std::memory_order_acq_rel);
    by_wd_.clear();
    epoch_.fetch_add(1, std::memory_order_acq_rel);
    if (fd_ < 0) broken_.store(true, std::memory_order_release);
  }
  return !broken_.load(std::memory_order_relaxed);
}

void Watcher::apply(const inotify_event& event) {
  if ((event.mask & IN_Q_OVERFLOW) != 0) {  // events were lost: nothing is known clean
    epoch_.fetch_add(1, std::memory_order_acq_rel);
    return;
  }
  auto it = by_wd_.find(event.wd);
  if (it == by_wd_.end()) return;  // removed by sweep()
  Watch& watch = *it->second;
  // An event with no name is the watched inode's own (moved, deleted, chmod, written).
  if (event.len == 0 || event.name[0] == '\0' || watch.names.count(event.name) != 0)
    watch.generation.fetch_add(1, std::memory_order_acq_rel);
  if ((event.mask & IN_IGNORED) != 0) {  // the inode is gone or unmounted: the watch with it
    watch.generation.fetch_add(1, std::memory_order_acq_rel);
    by_wd_.erase(it);
  }
}

void Watcher::sweep() {
  for (auto it = by_wd_.begin(); it != by_wd_.end();) {
    if (it->second.use_count() == 1) {
      ::inotify_rm_watch(fd_, it->first);
      it = by_wd_.erase(it);
    } else {
      ++it;
    }
  }
  sweep_at_ = std::max(kFirstSweep, 2 * by_wd_.size());
}

std::pair<std::string, std::string> split_watched(const std::string& path) {
  const size_t slash = path.rfind('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.empty() || name == "." || name == "..") return {path, ""};
  return {slash == std::string::npos ? ""
          : slash == 0               ? "/"
                                     : path.substr(0, slash),
          std::move(name)};
}

Walk::~Walk() {
  for (auto& [path, dir] : directories_at_)
    if (dir.fd >= 0) ::close(dir.fd);
}

void Walk::add(const std::string& dir, const std::vector<std::string>& names) {
  if (failed_) return;
  if (std::find(names.begin(), names.end(), "") != names.end()) walk(dir, 0, false);
  const std::optional<std::string>& resolved = directory(dir, 0);
  if (!resolved || failed_) return;
  Directory& at = directories_at_[*resolved];
  for (const std::string& name : names) {
    bool not_directory = false;
    if (!name.empty()) step(*resolved, at, name, 0, not_directory);
    if (failed_) return;
  }
}

std::shared_ptr<const Snapshot> Walk::snapshot() const {
  if (failed_) return nullptr;
  auto out = std::make_shared<Snapshot>();
  out->watches = captured_;
  out->epoch = epoch_;
  out->relative = relative_;
  out->cwd_device = cwd_device_;
  out->cwd_inode = cwd_inode_;
  return out;
}

std::optional<std::string> Walk::resolve(const std::string& path, int links) {
  const auto [dir, name] = split_watched(path);
  if (name.empty()) return walk(dir, links, false);
  const std::optional<std::string> resolved = directory(dir, links);
  if (!resolved) return std::nullopt;
  bool not_directory = false;
  return step(*resolved, directories_at_[*resolved], name, links, not_directory);
}

const std::optional<std::string>& Walk::directory(const std::string& dir, int links) {
  auto it = directories_.find(dir);
  if (it != directories_.end()) return it->second;
  std::optional<std::string> resolved = walk(dir, links, true);
  return directories_.insert_or_assign(dir, std::move(resolved)).first->second;
}

std::optional<std::string> Walk::walk(std::string_view path, int links, bool directory) {
  std::string cur = !path.empty() && path.front() == '/' ? "/" : "";
  if (cur.empty()) note_relative();
  bool not_directory = false;
  size_t begin = 0;
  while (begin < path.size() && !failed_) {
    const size_t slash = std::min(path.find('/', begin), path.size());
    const std::string_view part = path.substr(begin, slash - begin);
    begin = slash + 1;
    if (part.empty() || part == ".") continue;
    if (not_directory) return std::nullopt;
    if (part == "..") {
      Directory& dir = directories_at_[cur];
      if (!dir.parent_watched) {  // a move of `cur` (its own event) changes what ".." is
        dir.parent_watched = true;
        watch(cur, dir, "..", true);
      }
      cur = parent_of(cur);
      continue;
    }
    std::optional<std::string> next =
        step(cur, directories_at_[cur], std::string(part), links, not_directory);
    if (!next) return std::nullopt;
    cur = std::move(*next);
  }
  if (failed_ || (directory && not_directory)) return std::nullopt;
  return cur;
}

std::optional<std::string> Walk::step(const std::string& cur, Directory& dir,
                                      const std::string& name, int links, bool& not_directory) {
  auto it = dir.entries.find(name);
  if (it == dir.entries.end()) {
    watch(cur, dir, name, true);
    if (failed_) return std::nullopt;
    Entry entry = look_up(cur, dir, name, links);
    it = dir.entries.insert_or_assign(name, std::move(entry)).first;
  }
  not_directory = it->second.kind == Kind::kOther;
  switch (it->second.kind) {
    case Kind::kMissing:
      return std::nullopt;
    case Kind::kLink:
      return it->second.target;
    default:
      return join_name(cur, name);
  }
}

Walk::Entry Walk::look_up(const std::string& cur, Directory& dir, const std::string& name,
                          int links) {
  if (!dir.opened) {
    dir.opened = true;
    dir.fd = ::open(cur.empty() ? "." : cur.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  }
  const std::string path = join_name(cur, name);
  const int at = dir.fd >= 0 ? dir.fd : AT_FDCWD;
  const char* const name_at = dir.fd >= 0 ? name.c_str() : path.c_str();
  Entry entry;
  struct stat st;
  if (::fstatat(at, name_at, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    // Absent, or not searchable: a name appearing, or a chmod of a directory on the way, is
    // an event of a watch already set. Anything else is not understood here.
    if (errno != ENOENT && errno != ENOTDIR && errno != EACCES) failed_ = true;
  } else if (S_ISLNK(st.st_mode)) {
    entry.kind = Kind::kLink;
    std::string target(static_cast<size_t>(std::max<off_t>(st.st_size, 0)) + 256, '\0');
    const ssize_t got = ::readlinkat(at, name_at, target.data(), target.size());
    if (links >= kMaxLinks || got <= 0 || static_cast<size_t>(got) == target.size()) {
      failed_ = true;  // a loop, or a link changing under us: not worth understanding
    } else {
      target.resize(static_cast<size_t>(got));
      if (target.front() != '/' && !cur.empty()) target = (cur == "/" ? cur : cur + "/") + target;
      entry.target = resolve(target, links + 1);
    }
  } else if (S_ISDIR(st.st_mode)) {
    entry.kind = Kind::kDirectory;
  } else {
    entry.kind = Kind::kOther;
    // Written through another of its names, a file's change reaches only that name's
    // directory: watch the file itself.
    if (S_ISREG(st.st_mode) && st.st_nlink > 1) watch(path, directories_at_[path], "", false);
  }
  return entry;
}

void Walk::watch(const std::string& path, Directory& dir, const std::string& name, bool directory) {
  if (failed_) return;
  ++points_;
  std::optional<uint64_t> added;
  if (!watcher_.watch(path, name, directory, dir.watch, added)) {
    failed_ = true;
    return;
  }
  if (added) captured_.emplace_back(dir.watch, *added);
}

void Walk::note_relative() {
  if (relative_) return;
  relative_ = true;
  struct stat st;
  if (::stat(".", &st) != 0) {
    failed_ = true;
    return;
  }
  cwd_device_ = st.st_dev;
  cwd_inode_ = st.st_ino;
}

}  // namespace tmem::closure
