// NVRTC's precompiled headers for compile_kernel: the per-process directories, their locks, the
// checks before NVRTC reads a PCH, and the fallbacks when one cannot be made or trusted.
#include "runtime/compile/precompiled_headers.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <optional>
#include <span>
#include <system_error>
#include <unordered_map>
#include <utility>

#include "runtime/cuda/nvrtc.h"
#include "runtime/support/settings.h"
#include "runtime/support/warning.h"
#include "tmem/text.h"

namespace tmem {

// One file NVRTC left in a slot's directory, as it was when made: its identity and times. Any
// write to its bytes, a truncation or a replacement changes the inode, size, mtime or ctime, and no
// unprivileged process can set a ctime back, so an equal signature is the same bytes; a checksum
// would read the whole file on every reuse (0.3 s for a 274 MB CuTe prefix, measured on the 2-core
// machine: half the compile the reuse saves).
struct PchFile {
  std::string name;
  uint64_t bytes = 0;
  uint64_t device = 0, inode = 0;
  int64_t mtime_ns = 0, ctime_ns = 0;
  bool same(const struct stat& info) const {
    return static_cast<uint64_t>(info.st_size) == bytes &&
           static_cast<uint64_t>(info.st_dev) == device &&
           static_cast<uint64_t>(info.st_ino) == inode && ns(info.st_mtim) == mtime_ns &&
           ns(info.st_ctim) == ctime_ns;
  }
  static int64_t ns(const struct timespec& t) {
    return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
  }
};

struct PchLease::Slot {
  // Exclusive while a compile may create the PCH (or empties a damaged directory); shared while
  // compiles read a checked one.
  std::shared_mutex use;
  std::atomic<bool> settled{false};  // a PCH exists, or NVRTC declined to make one
  // What the directory holds once settled; written with `use` held exclusively, or under
  // PchCache::mutex_ when no lease holds the slot (users == 0).
  std::vector<PchFile> files;
  // Guarded by PchCache::mutex_: leases alive, when one was last taken, the bytes of its PCH.
  int users = 0;
  uint64_t last_use = 0;
  uint64_t bytes = 0;
  std::string directory;
  bool background = false;  // a lease_if_made caller claimed the making of its PCH
};

struct PchCache::SlotTable {
  std::unordered_map<Key128, std::shared_ptr<PchLease::Slot>, Key128Hash> slots;
  uint64_t tick = 0;
};

namespace {

constexpr std::string_view kRootPrefix = "tmemjit-pch-";
constexpr const char* kLockName = "lock";

// A folder without a lock file is one being made (for microseconds) or one left by a version
// before the lock or by a process killed in between: only this old is it removed.
constexpr time_t kLocklessAgeSeconds = 3600;

std::string temporary_parent() { return Settings::from_environment().temp_dir; }

// TMEMJIT_PCH_BUDGET_MB, or the default with the warning of a value that does not parse.
uint64_t budget_from_environment() {
  const Parsed<uint64_t> budget = Settings::from_environment().pch_budget_bytes;
  if (!budget.problem.empty()) warn(budget.problem);
  return budget.value;
}

std::string error_text(int error) {
  return std::error_code(error, std::generic_category()).message();
}

std::string kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISREG(mode)) return "a regular file";
  return "of an unknown kind";
}

// Opens `name` in `directory_fd` for reading without following a link or blocking on a FIFO, and
// checks that it is a regular file; -1 and `problem` set otherwise.
int open_regular(int directory_fd, const std::string& name, struct stat& info,
                 std::string& problem) {
  const int fd =
      ::openat(directory_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    problem = errno == ELOOP ? name + " is a symbolic link"
                             : name + " cannot be opened (" + error_text(errno) + ")";
    return -1;
  }
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    problem = name + " is " + kind_of(info.st_mode) + ", not a regular file";
    ::close(fd);
    return -1;
  }
  return fd;
}

// Calls `visit(directory_fd, name)` for each entry of `directory`, a real directory of this user
// (not a link); stops at the first problem `visit` returns. Returns the problem; empty when none.
template <class Visit>
std::string for_each_entry(const std::string& directory, Visit&& visit) {
  struct stat info {};
  if (::lstat(directory.c_str(), &info) != 0)
    return "its folder is gone (" + error_text(errno) + ")";
  if (!S_ISDIR(info.st_mode)) return "its folder is " + kind_of(info.st_mode) + ", not a directory";
  if (info.st_uid != ::geteuid()) return "its folder belongs to another user";
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return "its folder cannot be opened (" + error_text(errno) + ")";
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    ::close(fd);
    return std::string("its folder cannot be listed");
  }
  std::string problem;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    problem = visit(fd, name);
    if (!problem.empty()) break;
  }
  ::closedir(dir);
  return problem;
}

// What NVRTC left in `directory` after making a PCH: each file's signature.
std::string record_directory(const std::string& directory, std::vector<PchFile>& files) {
  files.clear();
  return for_each_entry(directory, [&](int directory_fd, const std::string& name) {
    struct stat info {};
    std::string problem;
    const int fd = open_regular(directory_fd, name, info, problem);
    if (fd < 0) return problem;
    ::close(fd);
    files.push_back({name, static_cast<uint64_t>(info.st_size), static_cast<uint64_t>(info.st_dev),
                     static_cast<uint64_t>(info.st_ino), PchFile::ns(info.st_mtim),
                     PchFile::ns(info.st_ctim)});
    return std::string();
  });
}

// Whether `directory` holds exactly `files`, each a regular file of its recorded signature: what
// NVRTC may map. Empty when it does; else what is wrong.
std::string check_directory(const std::string& directory, const std::vector<PchFile>& files) {
  size_t seen = 0;
  std::string problem = for_each_entry(directory, [&](int directory_fd, const std::string& name) {
    const auto file =
        std::find_if(files.begin(), files.end(), [&](const PchFile& f) { return f.name == name; });
    if (file == files.end()) return "holds " + name + ", which NVRTC did not make there";
    struct stat info {};
    std::string trouble;
    const int fd = open_regular(directory_fd, name, info, trouble);
    if (fd < 0) return trouble;
    ::close(fd);
    if (static_cast<uint64_t>(info.st_size) != file->bytes)
      return name + " has " + std::to_string(info.st_size) + " bytes, " +
             std::to_string(file->bytes) + " when made";
    if (!file->same(info))
      return name + " was written or replaced since NVRTC made it (its inode or times differ)";
    ++seen;
    return std::string();
  });
  if (problem.empty() && seen != files.size()) problem = "lost a file NVRTC made there";
  return problem;
}

// Empties `directory` (a link or FIFO in its place is removed, never followed) and makes it anew.
std::string reset_directory(const std::string& directory) {
  std::error_code error;
  std::filesystem::remove_all(directory, error);  // does not follow symbolic links
  if (error) return "cannot empty " + directory + " (" + error.message() + ")";
  if (::mkdir(directory.c_str(), 0700) != 0)
    return "cannot make " + directory + " (" + error_text(errno) + ")";
  return {};
}

// Whether the file system of `parent` has room for NVRTC's PCH heap, which NVRTC backs by an
// unlinked file there: a heap page it cannot back is a SIGBUS in the compile (measured on a 6 MiB
// tmpfs). Empty when it has; else why the compile runs without precompiled headers.
std::string room_problem(const std::string& parent, size_t heap_bytes, bool heap_from_env) {
  struct statvfs info {};
  if (::statvfs(parent.c_str(), &info) != 0) return {};  // NVRTC's own error then says why
  const uint64_t free_bytes = static_cast<uint64_t>(info.f_bavail) * info.f_frsize;
  if (free_bytes >= heap_bytes) return {};
  return "$TMPDIR (" + quote_excerpt(parent) + ") has " + std::to_string(free_bytes >> 20) +
         " MiB free, less than NVRTC's PCH heap of " + std::to_string(heap_bytes >> 20) +
         " MiB, which NVRTC keeps in a file there" +
         (heap_from_env ? " (TMEMJIT_PCH_HEAP_MB)" : " (TMEMJIT_PCH_HEAP_MB sets a smaller one)");
}

// Removes the process's root at exit; the lock is held until then. Only the process that made it
// removes it (a child after fork() shares the lock, not the folder).
struct RootRemover {
  std::string root;
  int lock_fd = -1;
  pid_t owner = 0;
  void remove() {
    if (!root.empty() && owner == ::getpid()) {
      std::error_code ignored;
      std::filesystem::remove_all(root, ignored);
    }
    if (lock_fd >= 0) ::close(lock_fd);
    root.clear();
    lock_fd = -1;
  }
  ~RootRemover() { remove(); }
};
RootRemover& root_remover() {
  static RootRemover remover;
  return remover;
}

// The process's lock on `root`: made under another name, locked, then renamed to kLockName, so
// that a lock file another process finds is always locked while its owner lives. -1 on failure.
int lock_root(const std::string& root) {
  const std::string making = root + "/" + kLockName + ".new";
  const int fd = ::open(making.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0 ||
      ::rename(making.c_str(), (root + "/" + kLockName).c_str()) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The first line of a failed compile's log that names an error (NVRTC's "Catastrophic error: ..."),
// else the error's message.
std::string failure_cause(const Error& error) {
  const std::string_view log = error.detail("log");
  size_t begin = 0;
  while (begin < log.size()) {
    size_t end = log.find('\n', begin);
    if (end == std::string_view::npos) end = log.size();
    std::string_view line = log.substr(begin, end - begin);
    if (line.find("error") != std::string_view::npos) {
      while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
      return quote_excerpt(line);
    }
    begin = end + 1;
  }
  return quote_excerpt(error.message());
}

}  // namespace

void remove_gone_pch_roots(const std::string& parent) {
  DIR* dir = ::opendir(parent.c_str());
  if (dir == nullptr) return;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (!name.starts_with(kRootPrefix)) continue;
    const std::string path = parent + "/" + std::string(name);
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode) || info.st_uid != ::geteuid())
      continue;
    std::error_code ignored;
    const std::string lock = path + "/" + kLockName;
    if (const int fd = ::open(lock.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        fd >= 0) {
      // Its owner holds the lock for its life, in whatever PID namespace it runs.
      struct stat lock_info {};
      if (::fstat(fd, &lock_info) == 0 && S_ISREG(lock_info.st_mode) &&
          ::flock(fd, LOCK_EX | LOCK_NB) == 0)
        std::filesystem::remove_all(path, ignored);  // does not follow symbolic links
      ::close(fd);
      continue;
    }
    if (errno != ENOENT) continue;
    const std::string rest(name.substr(kRootPrefix.size()));
    char* end = nullptr;
    const long pid = std::strtol(rest.c_str(), &end, 10);
    if (pid <= 0 || end == nullptr || *end != '-') continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    if (std::time(nullptr) - info.st_mtime < kLocklessAgeSeconds) continue;
    std::filesystem::remove_all(path, ignored);
  }
  ::closedir(dir);
}

std::string_view to_string(PchUse use) noexcept {
  switch (use) {
    case PchUse::kOff:
      return "off";
    case PchUse::kNone:
      return "none";
    case PchUse::kCreated:
      return "created";
    case PchUse::kReused:
      return "reused";
    case PchUse::kHeapExhausted:
      return "heap exhausted";
  }
  return "off";
}

PchLease::PchLease(PchLease&& other) noexcept
    : directory_(std::move(other.directory_)),
      reason_(std::move(other.reason_)),
      repaired_(std::move(other.repaired_)),
      deferred_(other.deferred_),
      claimed_(std::exchange(other.claimed_, false)),
      slot_(std::move(other.slot_)),
      creating_(std::move(other.creating_)),
      reusing_(std::move(other.reusing_)),
      heap_(std::move(other.heap_)),
      grow_heap_to_(std::exchange(other.grow_heap_to_, 0)),
      created_bytes_(std::exchange(other.created_bytes_, 0)) {}

PchLease::~PchLease() {
  if (heap_.owns_lock()) heap_.unlock();
  if (creating_.owns_lock()) creating_.unlock();
  if (reusing_.owns_lock()) reusing_.unlock();
  if (slot_) PchCache::instance().release(*slot_, std::exchange(created_bytes_, 0));
  if (grow_heap_to_ != 0) PchCache::instance().grow_heap(std::exchange(grow_heap_to_, 0));
}

std::vector<std::string> PchLease::options() const {
  if (directory_.empty()) return {};
  // 20283: "PCH creation disabled because #line directive encountered", said of the header
  // stop's #line, which comes after the PCH is made (measured: it is made and reused).
  return {"--pch", "--pch-dir=" + directory_, "--pch-messages=true", "--diag-suppress=20283"};
}

void PchLease::finish(PchUse use, size_t heap_required) {
  if (!slot_ || directory_.empty()) return;
  if (use == PchUse::kHeapExhausted) {
    grow_heap_to_ = heap_required + heap_required / 4;
    return;
  }
  if (!creating_.owns_lock()) {
    // A reuse that made a PCH instead (NVRTC found the checked one incompatible, e.g. after the
    // heap grew) left a file nobody recorded: the next lease makes the PCH again, alone.
    if (use != PchUse::kReused) slot_->settled.store(false, std::memory_order_release);
    return;
  }
  std::vector<PchFile> files;
  if (!record_directory(directory_, files).empty()) return;  // the next lease starts again
  uint64_t bytes = 0;
  for (const PchFile& file : files) bytes += file.bytes;
  if (use == PchUse::kCreated) created_bytes_ = std::max<uint64_t>(1, bytes);
  slot_->files = std::move(files);
  slot_->settled.store(true, std::memory_order_release);
}

std::string PchLease::fall_back(const Error& with_pch) {
  const std::string cause = failure_cause(with_pch);
  std::string hint;
  const std::string_view log = with_pch.detail("log");
  if (log.find("temporary files") != std::string_view::npos) {
    const std::string parent = temporary_parent();
    hint = "; $TMPDIR is " + std::to_string(parent.size()) + " characters long";
  }
  if (log.find("Heap") != std::string_view::npos || log.find("heap") != std::string_view::npos ||
      log.find("mapped memory") != std::string_view::npos)
    hint += "; " + PchCache::instance().heap_setting();
  std::string reason = "NVRTC failed with precompiled headers: " + cause + hint;
  PchCache::instance().turn_off(
      "NVRTC failed with precompiled headers earlier in this process: " + cause + hint);
  return "off: " + reason + " (compiled without precompiled headers)";
}

PchCache& PchCache::instance() {
  static PchCache cache;
  return cache;
}

void PchCache::set_budget_bytes(uint64_t bytes) {
  std::lock_guard lock(mutex_);
  budget_bytes_ = bytes != 0 ? bytes : budget_from_environment();
}

std::string PchCache::root() {
  std::lock_guard lock(mutex_);
  return root_;
}

std::string PchCache::heap_setting() {
  std::lock_guard lock(mutex_);
  const std::string mb = std::to_string(heap_bytes_.load() >> 20);
  return heap_from_env_ ? "NVRTC's PCH heap is TMEMJIT_PCH_HEAP_MB=" + mb
                        : "NVRTC's PCH heap is " + mb + " MB (TMEMJIT_PCH_HEAP_MB sets it)";
}

void PchCache::turn_off(std::string reason) {
  std::lock_guard lock(mutex_);
  if (unavailable_.empty()) unavailable_ = std::move(reason);
}

void PchCache::restart_for_tests() {
  std::lock_guard lock(mutex_);
  root_remover().remove();
  initialized_ = false;
  root_.clear();
  unavailable_.clear();
  budget_bytes_ = 0;
  slots_.reset();
}

void PchCache::release(PchLease::Slot& slot, uint64_t created_bytes) {
  std::lock_guard lock(mutex_);
  --slot.users;
  if (created_bytes == 0) return;
  slot.bytes = created_bytes;
  // Over the budget: remove the least recently used PCHs that no compile holds. The removal is
  // under the lock, so no lease can take the slot (or make its directory again) meanwhile; the
  // slot is unsettled, and its next lease creates the PCH anew.
  uint64_t total = 0;
  for (const auto& [key, held] : slots_->slots) total += held->bytes;
  while (total > budget_bytes_) {
    PchLease::Slot* oldest = nullptr;
    for (const auto& [key, held] : slots_->slots)
      if (held->bytes > 0 && held->users == 0 && held.get() != &slot &&
          (oldest == nullptr || held->last_use < oldest->last_use))
        oldest = held.get();
    if (oldest == nullptr) break;
    std::error_code ignored;
    std::filesystem::remove_all(oldest->directory, ignored);
    total -= oldest->bytes;
    oldest->bytes = 0;
    oldest->files.clear();
    oldest->settled.store(false, std::memory_order_release);
  }
}

void PchCache::grow_heap(size_t bytes) {
  Result<const nvrtc::Api*> api = nvrtc::api();
  if (!api.ok() || !(*api)->has_pch()) return;
  std::unique_lock heap(heap_mutex_);  // waits for every compile using the heap
  size_t current = 0;
  if ((*api)->get_pch_heap_size(&current) == NVRTC_SUCCESS && current >= bytes) return;
  if ((*api)->set_pch_heap_size(bytes) == NVRTC_SUCCESS) heap_bytes_.store(bytes);
}

void PchCache::initialize() {
  initialized_ = true;
  slots_ = std::make_shared<SlotTable>();
  const Settings settings = Settings::from_environment();
  if (!settings.pch.value) {
    unavailable_ = "TMEMJIT_PCH=0";
    return;
  }
  if (!settings.pch.problem.empty()) warn(settings.pch.problem);
  Result<const nvrtc::Api*> api = nvrtc::api();
  if (!api.ok() || !(*api)->has_pch()) {
    unavailable_ = "NVRTC has no precompiled headers (CUDA 12.8 or later has them)";
    return;
  }
  parent_ = temporary_parent();
  remove_gone_pch_roots(parent_);
  std::string pattern = parent_ + "/" + std::string(kRootPrefix) +
                        std::to_string(static_cast<long>(::getpid())) + "-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    unavailable_ = "cannot make a directory in $TMPDIR (" + quote_excerpt(parent_) +
                   ") for precompiled headers (" + error_text(errno) + ")";
    return;
  }
  const int lock_fd = lock_root(pattern);
  struct stat info {};
  if (lock_fd < 0 || ::lstat(pattern.c_str(), &info) != 0) {
    unavailable_ = "cannot lock " + quote_excerpt(pattern) + " for precompiled headers (" +
                   error_text(errno) + ")";
    if (lock_fd >= 0) ::close(lock_fd);
    std::error_code ignored;
    std::filesystem::remove_all(pattern, ignored);
    return;
  }
  root_ = pattern;
  root_device_ = info.st_dev;
  root_inode_ = info.st_ino;
  root_remover().remove();  // a root of an earlier restart_for_tests
  root_remover().root = root_;
  root_remover().lock_fd = lock_fd;
  root_remover().owner = ::getpid();
  if (budget_bytes_ == 0) budget_bytes_ = budget_from_environment();
  // A value that does not parse warns and is the default: only a valid one is "from the
  // environment" in messages.
  if (!settings.pch_heap_bytes.problem.empty()) warn(settings.pch_heap_bytes.problem);
  const uint64_t wanted = settings.pch_heap_bytes.value;
  heap_from_env_ = settings.pch_heap_bytes.from_environment;
  std::unique_lock heap(heap_mutex_);
  size_t current = 0;
  // The default only grows NVRTC's heap; a size the user set is taken as it is (a small one lets
  // a small $TMPDIR hold it).
  if (heap_from_env_ || ((*api)->get_pch_heap_size(&current) == NVRTC_SUCCESS && current < wanted))
    (void)(*api)->set_pch_heap_size(wanted);
  if ((*api)->get_pch_heap_size(&current) == NVRTC_SUCCESS) heap_bytes_.store(current);
}

std::string PchCache::unavailable_now() {
  if (!initialized_) initialize();
  if (unavailable_.empty()) {
    struct stat info {};
    if (::lstat(root_.c_str(), &info) != 0 || !S_ISDIR(info.st_mode) ||
        info.st_dev != root_device_ || info.st_ino != root_inode_)
      unavailable_ =
          "the folder of precompiled headers " + quote_excerpt(root_) + " was removed or replaced";
  }
  if (!unavailable_.empty()) return unavailable_;
  return room_problem(parent_, heap_bytes_.load(), heap_from_env_);
}

PchLease PchCache::lease_if_made(const Key128& key) {
  {
    std::lock_guard lock(mutex_);
    PchLease deferred;
    if (std::string problem = unavailable_now(); !problem.empty()) {
      deferred.reason_ = std::move(problem);
      return deferred;
    }
    auto& entry = slots_->slots[key];
    if (!entry) entry = std::make_shared<PchLease::Slot>();
    if (!entry->settled.load(std::memory_order_acquire)) {
      deferred.deferred_ = true;
      deferred.claimed_ = !std::exchange(entry->background, true);
      deferred.reason_ = "not made yet";
      return deferred;
    }
  }
  return lease(key);  // a damaged one is made again by this compile, as lease() does
}

void PchCache::background_done(const Key128& key) {
  std::lock_guard lock(mutex_);
  if (!slots_) return;  // restart_for_tests forgot the key
  if (auto it = slots_->slots.find(key); it != slots_->slots.end()) it->second->background = false;
}

PchLease PchCache::lease(const Key128& key) {
  PchLease lease;
  std::shared_ptr<PchLease::Slot> slot;
  std::string directory;  // the slot's, copied under the lock that guards it
  {
    std::lock_guard lock(mutex_);
    if (std::string problem = unavailable_now(); !problem.empty()) {
      lease.reason_ = std::move(problem);
      return lease;
    }
    auto& entry = slots_->slots[key];
    if (!entry) entry = std::make_shared<PchLease::Slot>();
    slot = entry;
    slot->directory = root_ + "/" + key.hex();
    ++slot->users;  // from here on, the directory stays until the lease is released
    slot->last_use = ++slots_->tick;
    directory = slot->directory;
  }
  lease.slot_ = slot;
  if (std::string problem = take(lease, *slot, directory); !problem.empty()) {
    lease.reason_ = problem;
    return lease;
  }
  lease.heap_ = std::shared_lock(heap_mutex_);
  lease.directory_ = directory;
  return lease;
}

// Takes `slot` for `lease`: alone, with an empty directory, when no PCH is settled (or the one kept
// fails its check); shared with other compiles when a checked one is. Returns why the compile runs
// without precompiled headers; empty when it may use them.
std::string PchCache::take(PchLease& lease, PchLease::Slot& slot, const std::string& directory) {
  auto make_anew = [&](std::unique_lock<std::shared_mutex> alone) {
    slot.files.clear();
    slot.settled.store(false, std::memory_order_release);
    std::string problem = reset_directory(directory);
    if (problem.empty()) lease.creating_ = std::move(alone);
    return problem;
  };
  // Each pass that does not return saw another compile change the slot; a few are plenty.
  for (int pass = 0; pass < 8; ++pass) {
    if (!slot.settled.load(std::memory_order_acquire)) {
      std::unique_lock alone(slot.use);
      if (!slot.settled.load(std::memory_order_acquire)) return make_anew(std::move(alone));
    }
    std::shared_lock reading(slot.use);
    if (!slot.settled.load(std::memory_order_acquire)) continue;
    if (check_directory(directory, slot.files).empty()) {
      lease.reusing_ = std::move(reading);
      return {};
    }
    reading.unlock();
    std::unique_lock alone(slot.use);
    if (!slot.settled.load(std::memory_order_acquire)) continue;
    const std::string problem = check_directory(directory, slot.files);
    if (problem.empty()) continue;  // made again by another compile meanwhile
    lease.repaired_ = "the precompiled header kept for this source was damaged (" + problem +
                      "): removed, and made again";
    return make_anew(std::move(alone));
  }
  return "the precompiled header of this source changed while it was checked";
}

}  // namespace tmem
