#include "runtime/compile/precompiled_headers.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <unordered_map>
#include <utility>

#include "runtime/cuda/nvrtc.h"

namespace tmem {

struct PchLease::Slot {
  std::mutex creating;
  std::atomic<bool> settled{false};  // a PCH exists, or NVRTC declined to make one
  // Guarded by PchCache::mutex_: leases alive, when one was last taken, the bytes of its PCH.
  int users = 0;
  uint64_t last_use = 0;
  uint64_t bytes = 0;
  std::string directory;
};

struct PchCache::SlotTable {
  std::unordered_map<Key128, std::shared_ptr<PchLease::Slot>, Key128Hash> slots;
  uint64_t tick = 0;
};

namespace {

// CuTe's headers need about 271 MB (measured, CUDA 13.0); NVRTC's default heap is 256 MB, and a
// heap too small costs a whole compile that makes no PCH. TMEMJIT_PCH_HEAP_MB overrides it.
constexpr size_t kDefaultHeapBytes = size_t{512} << 20;

// A CuTe prefix makes a 274 MB file, and an autotuner that specializes many sources would keep
// every one until it exits: past this many bytes, the least recently used are removed.
// TMEMJIT_PCH_BUDGET_MB overrides it.
constexpr uint64_t kDefaultBudgetBytes = uint64_t{2048} << 20;

// The bytes of the files directly in `directory` (NVRTC writes one PCH file there).
uint64_t directory_bytes(const std::string& directory) {
  uint64_t bytes = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    std::error_code size_error;
    const uintmax_t size = entry.is_regular_file(size_error) ? entry.file_size(size_error) : 0;
    if (!size_error) bytes += size;
  }
  return bytes;
}

// The environment variable `name` as megabytes (1 to `max_mb`) in bytes; else `fallback`.
uint64_t megabytes_from_env(const char* name, uint64_t max_mb, uint64_t fallback) {
  if (const char* env = std::getenv(name); env != nullptr && *env != '\0') {
    char* end = nullptr;
    const unsigned long long mb = std::strtoull(env, &end, 10);
    if (end != nullptr && *end == '\0' && mb > 0 && mb <= max_mb) return mb << 20;
  }
  return fallback;
}

size_t initial_heap_bytes() {
  return megabytes_from_env("TMEMJIT_PCH_HEAP_MB", uint64_t{1} << 20, kDefaultHeapBytes);
}

uint64_t initial_budget_bytes() {
  return megabytes_from_env("TMEMJIT_PCH_BUDGET_MB", uint64_t{1} << 30, kDefaultBudgetBytes);
}

// Removes $TMPDIR/tmemjit-pch-PID-* of this user whose process is gone: a PCH file is hundreds of
// megabytes, and a process that was killed could not remove its own.
void remove_stale_roots(const std::string& parent) {
  DIR* dir = ::opendir(parent.c_str());
  if (dir == nullptr) return;
  constexpr std::string_view kPrefix = "tmemjit-pch-";
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (!name.starts_with(kPrefix)) continue;
    const std::string rest(name.substr(kPrefix.size()));
    char* end = nullptr;
    const long pid = std::strtol(rest.c_str(), &end, 10);
    if (pid <= 0 || end == nullptr || *end != '-') continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    const std::string path = parent + "/" + std::string(name);
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode) || info.st_uid != ::geteuid())
      continue;
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);  // does not follow symlinks
  }
  ::closedir(dir);
}

// Removes the process's root at exit.
struct RootRemover {
  std::string root;
  ~RootRemover() {
    if (root.empty()) return;
    std::error_code ignored;
    std::filesystem::remove_all(root, ignored);
  }
};
RootRemover& root_remover() {
  static RootRemover remover;
  return remover;
}

}  // namespace

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
      slot_(std::move(other.slot_)),
      creating_(std::move(other.creating_)),
      heap_(std::move(other.heap_)),
      grow_heap_to_(std::exchange(other.grow_heap_to_, 0)) {}

PchLease::~PchLease() {
  if (heap_.owns_lock()) heap_.unlock();
  if (creating_.owns_lock()) creating_.unlock();
  if (slot_) PchCache::instance().release(*slot_, std::exchange(created_bytes_, 0));
  if (grow_heap_to_ != 0) PchCache::instance().grow_heap(std::exchange(grow_heap_to_, 0));
}

void PchLease::finish(PchUse use, size_t heap_required) {
  if (!slot_) return;
  if (use == PchUse::kHeapExhausted) {
    grow_heap_to_ = heap_required + heap_required / 4;
    return;
  }
  if (use == PchUse::kCreated) created_bytes_ = std::max<uint64_t>(1, directory_bytes(directory_));
  slot_->settled.store(true, std::memory_order_release);
}

PchCache& PchCache::instance() {
  static PchCache cache;
  return cache;
}

void PchCache::set_budget_bytes(uint64_t bytes) {
  std::lock_guard lock(mutex_);
  budget_bytes_ = bytes != 0 ? bytes : initial_budget_bytes();
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
    oldest->settled.store(false, std::memory_order_release);
  }
}

void PchCache::grow_heap(size_t bytes) {
  Result<const nvrtc::Api*> api = nvrtc::api();
  if (!api.ok() || !(*api)->has_pch()) return;
  std::unique_lock heap(heap_mutex_);  // waits for every compile using the heap
  size_t current = 0;
  if ((*api)->get_pch_heap_size(&current) == NVRTC_SUCCESS && current >= bytes) return;
  (void)(*api)->set_pch_heap_size(bytes);
}

PchLease PchCache::lease(const Key128& key) {
  PchLease lease;
  std::shared_ptr<PchLease::Slot> slot;
  std::string directory;  // the slot's, copied under the lock that guards it
  {
    std::lock_guard lock(mutex_);
    if (!initialized_) {
      initialized_ = true;
      slots_ = std::make_shared<SlotTable>();
      Result<const nvrtc::Api*> api = nvrtc::api();
      const char* off = std::getenv("TMEMJIT_PCH");
      if (off != nullptr && std::string_view(off) == "0") {
        unavailable_ = "TMEMJIT_PCH=0";
      } else if (!api.ok() || !(*api)->has_pch()) {
        unavailable_ = "NVRTC has no precompiled headers (CUDA 12.8 or later has them)";
      } else {
        const char* tmp = std::getenv("TMPDIR");
        const std::string parent = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
        remove_stale_roots(parent);
        std::string pattern =
            parent + "/tmemjit-pch-" + std::to_string(static_cast<long>(::getpid())) + "-XXXXXX";
        if (::mkdtemp(pattern.data()) == nullptr) {
          unavailable_ = "cannot make a directory in " + parent + " for precompiled headers";
        } else {
          root_ = pattern;
          root_remover().root = root_;
          if (budget_bytes_ == 0) budget_bytes_ = initial_budget_bytes();
          std::unique_lock heap(heap_mutex_);
          size_t current = 0;
          const size_t wanted = initial_heap_bytes();
          if ((*api)->get_pch_heap_size(&current) == NVRTC_SUCCESS && current < wanted)
            (void)(*api)->set_pch_heap_size(wanted);
        }
      }
    }
    if (root_.empty()) {
      lease.reason_ = unavailable_;
      return lease;
    }
    auto& entry = slots_->slots[key];
    if (!entry) entry = std::make_shared<PchLease::Slot>();
    slot = entry;
    slot->directory = root_ + "/" + key.hex();
    if (::mkdir(slot->directory.c_str(), 0700) != 0 && errno != EEXIST) {
      lease.reason_ = "cannot make " + slot->directory;
      return lease;
    }
    ++slot->users;  // from here on, the directory stays until the lease is released
    slot->last_use = ++slots_->tick;
    directory = slot->directory;
  }
  if (!slot->settled.load(std::memory_order_acquire)) {
    lease.creating_ = std::unique_lock(slot->creating);
    if (slot->settled.load(std::memory_order_acquire)) lease.creating_.unlock();
  }
  lease.heap_ = std::shared_lock(heap_mutex_);
  lease.directory_ = directory;
  lease.slot_ = std::move(slot);
  return lease;
}

}  // namespace tmem
