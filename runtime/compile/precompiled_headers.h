// NVRTC's automatic precompiled headers (PCH) for compile_kernel: the parse of a user's headers is
// made once per process and reused by every later layout of the same source
// (docs/specialization.md, "How a layout compiles").
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>

#include "runtime/support/hash.h"

namespace tmem {

// What NVRTC did with the headers of one compile.
enum class PchUse {
  kOff,            // not asked for (no header prefix to keep, or disabled)
  kNone,           // asked for; NVRTC neither made nor used one (e.g. an empty header prefix)
  kCreated,        // this compile parsed the headers and kept them
  kReused,         // this compile reused headers parsed by an earlier one
  kHeapExhausted,  // NVRTC's PCH heap was too small; it is grown for the next compile
};
std::string_view to_string(PchUse use) noexcept;  // "off", "none", "created", "reused", ...

// One compile's use of a PCH directory: holds the locks that make it safe (see PchCache) until
// destroyed. directory() is empty when PCH is unavailable (NVRTC older than 12.8, TMEMJIT_PCH=0,
// or no temporary directory), and reason() says why.
class PchLease {
 public:
  PchLease() = default;
  PchLease(PchLease&&) noexcept;
  PchLease& operator=(PchLease&&) = delete;
  ~PchLease();

  const std::string& directory() const noexcept { return directory_; }
  const std::string& reason() const noexcept { return reason_; }
  // Records the outcome: kCreated or kReused lets later leases of the key run concurrently;
  // kHeapExhausted grows the heap to `heap_required` once this lease is released.
  void finish(PchUse use, size_t heap_required);

 private:
  friend class PchCache;
  struct Slot;
  std::string directory_, reason_;
  std::shared_ptr<Slot> slot_;
  std::unique_lock<std::mutex> creating_;     // held while this compile may create the PCH
  std::shared_lock<std::shared_mutex> heap_;  // NVRTC's one PCH heap: shared by compiles
  size_t grow_heap_to_ = 0;
  uint64_t created_bytes_ = 0;  // the PCH this compile made: counted against the budget
};

// A directory per key under one temporary directory of the process ($TMPDIR/tmemjit-pch-PID-*,
// removed at exit; directories of processes that are gone are removed on first use). The key must
// cover everything a PCH depends on: the text before the header stop, the options and the content
// of every included file (NVRTC checks none of the in-memory headers when it reuses a PCH: a key
// is never shared between differing header prefixes).
//
// Concurrency: the first compile of a key runs alone (two compiles creating one PCH file would
// race); once a PCH exists, or NVRTC declined to make one, compiles of the key run in parallel.
// NVRTC's PCH heap is one per process: resizing it waits for every compile that uses it.
//
// Size: when the PCH files exceed the budget (2 GiB, TMEMJIT_PCH_BUDGET_MB), the least recently
// leased ones that no compile holds are removed as a compile creates another; a later compile of
// a removed key parses its headers again.
class PchCache {
 public:
  PchLease lease(const Key128& key);
  static PchCache& instance();
  // The budget of PCH bytes kept; 0 restores the default (tests set a small one).
  void set_budget_bytes(uint64_t bytes);

 private:
  PchCache() = default;
  friend class PchLease;
  void grow_heap(size_t bytes);
  void release(PchLease::Slot& slot, uint64_t created_bytes);
  std::mutex mutex_;  // guards the fields below
  bool initialized_ = false;
  std::string root_, unavailable_;
  uint64_t budget_bytes_ = 0;
  struct SlotTable;
  std::shared_ptr<SlotTable> slots_;
  std::shared_mutex heap_mutex_;
};

}  // namespace tmem
