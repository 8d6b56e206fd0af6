// NVRTC's automatic precompiled headers (PCH) for compile_kernel: the parse of a user's headers is
// made once per process and reused by every later layout of the same source
// (docs/specialization.md, "How a layout compiles").
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/support/hash.h"
#include "tmem/result.h"

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
// no usable temporary directory, too little room in it, or an earlier failure of NVRTC with
// precompiled headers in this process), and reason() says why.
class PchLease {
 public:
  PchLease() = default;
  PchLease(PchLease&&) noexcept;
  PchLease& operator=(PchLease&&) = delete;
  ~PchLease();

  const std::string& directory() const noexcept { return directory_; }
  const std::string& reason() const noexcept { return reason_; }
  // NVRTC's options for the lease's directory; empty without one.
  std::vector<std::string> options() const;
  // Not empty when the PCH kept for the key failed its check and was removed before this compile
  // (which makes it again): what was wrong, for the report's warnings.
  const std::string& repaired() const noexcept { return repaired_; }
  // From PchCache::lease_if_made only: no PCH is kept for the key yet, so this compile runs
  // without one. claimed(): the caller must have it made (a background job that takes lease()
  // and then calls PchCache::background_done); false when another caller already has.
  bool deferred() const noexcept { return deferred_; }
  // Whether this lease makes the PCH (its key had none, or a damaged one): it runs alone.
  bool creating() const noexcept { return creating_.owns_lock(); }
  bool claimed() const noexcept { return claimed_; }
  // Records the outcome: kCreated or kReused lets later leases of the key run concurrently (a
  // created PCH's size and checksum are recorded, and checked before every reuse);
  // kHeapExhausted grows the heap to `heap_required` once this lease is released.
  void finish(PchUse use, size_t heap_required);
  // The compile failed with options() and succeeded without them: precompiled headers are off for
  // the rest of the process, since every cause seen (the name or room of $TMPDIR, a heap that
  // cannot be mapped) outlives the compile. Returns CompileReport::headers for this compile, "off:
  // ... (compiled without precompiled headers)", naming the setting at fault where the log does.
  std::string fall_back(const Error& with_pch);

 private:
  friend class PchCache;
  struct Slot;
  std::string directory_, reason_, repaired_;
  bool deferred_ = false, claimed_ = false;
  std::shared_ptr<Slot> slot_;
  std::unique_lock<std::shared_mutex> creating_;  // held while this compile may create the PCH
  std::shared_lock<std::shared_mutex> reusing_;   // held while this compile reads a checked PCH
  std::shared_lock<std::shared_mutex> heap_;      // NVRTC's one PCH heap: shared by compiles
  size_t grow_heap_to_ = 0;
  uint64_t created_bytes_ = 0;  // the PCH this compile made: counted against the budget
};

// A directory per key under one temporary directory of the process ($TMPDIR/tmemjit-pch-PID-*,
// removed at exit). The process holds an flock on its `lock` file for its life: a directory whose
// lock can be taken belongs to a process that is gone and is removed on first use (a PID says
// nothing about a process in another PID namespace). The key must cover everything a PCH depends
// on: the text before the header stop, the options and the content of every included file (NVRTC
// checks none of the in-memory headers when it reuses a PCH: a key is never shared between
// differing header prefixes).
//
// Trust: NVRTC maps a PCH file at fixed addresses and reads any file in the directory, so a
// truncated or altered file crashes it and a FIFO blocks it. Before a compile sees a directory,
// the directory must be a real one (no symbolic link) holding exactly the files recorded when the
// PCH was made, each a regular file (opened with O_NOFOLLOW | O_NONBLOCK) of the recorded size and
// XXH3 checksum; otherwise it is emptied and the PCH made again. A compile that may create one
// needs room in $TMPDIR for NVRTC's heap, which NVRTC backs by a file there (a full tmpfs is a
// SIGBUS): without it the compile runs without precompiled headers.
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
  // A lease for a compile that must not pay for making the PCH (the first layout of a prefix is
  // never slower than NVRTC alone: TMEMJIT_PCH_CREATE=background): lease(key) when a checked PCH
  // is kept for the key, else a deferred lease without a directory (see PchLease::deferred).
  PchLease lease_if_made(const Key128& key);
  // The background job that a claimed lease asked for has ended (made the PCH, failed, or was
  // dropped at exit): the next lease_if_made of the key may claim again if none is kept.
  void background_done(const Key128& key);
  static PchCache& instance();
  // The budget of PCH bytes kept; 0 restores the default (tests set a small one).
  void set_budget_bytes(uint64_t bytes);
  // The process's directory ($TMPDIR/tmemjit-pch-PID-*); empty before the first lease or when
  // precompiled headers are off.
  std::string root();
  // Tests: removes the process's directory and forgets every key and the reason PCH was off; the
  // next lease reads the environment again. No compile may hold a lease.
  void restart_for_tests();

 private:
  PchCache() = default;
  friend class PchLease;
  void initialize();  // under mutex_
  // Under mutex_: why no compile may use PCH now (empty when one may), initializing first.
  std::string unavailable_now();
  std::string take(PchLease& lease, PchLease::Slot& slot, const std::string& directory);
  void turn_off(std::string reason);
  std::string heap_setting();  // the heap's size and where it came from, for messages
  void grow_heap(size_t bytes);
  void release(PchLease::Slot& slot, uint64_t created_bytes);
  std::mutex mutex_;  // guards the fields below
  bool initialized_ = false;
  std::string parent_, root_, unavailable_;    // unavailable_: why PCH is off for the process
  uint64_t root_device_ = 0, root_inode_ = 0;  // root_ as made: a replaced root is not used
  uint64_t budget_bytes_ = 0;
  std::atomic<size_t> heap_bytes_{0};  // NVRTC's heap, as set
  bool heap_from_env_ = false;         // heap_bytes_ came from TMEMJIT_PCH_HEAP_MB
  struct SlotTable;
  std::shared_ptr<SlotTable> slots_;
  std::shared_mutex heap_mutex_;
};

// Removes the $PARENT/tmemjit-pch-* directories of this user whose owner is gone: those whose lock
// file can be locked, and those without one (made before the lock, or by a process killed before
// it made one) that are an hour old and whose PID is not running here. PchCache calls it once.
void remove_gone_pch_roots(const std::string& parent);

}  // namespace tmem
