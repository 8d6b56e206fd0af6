// Process exit as a defined point for the library's compiles (docs/reliability.md "Exit"): the
// compiles in flight when exit() begins finish before anything they use is torn down.
#pragma once

#include <functional>
#include <optional>

#include "tmem/result.h"

namespace tmem {

// exit() runs atexit handlers and static destructors in the reverse order of their registration,
// so a compile still running on another thread when exit() begins uses objects (NVRTC's own
// statics, the caches) that may already be gone: a join in a static destructor comes too late.
// The handler runs first in exit() from the main thread, as the destructor of a thread_local of
// that thread (exit() calls those before anything else); for exit() from another thread it is
// also registered with atexit, again before each front-end call (arm()), so it runs before every
// destructor registered up to then. The handler
//  1. closes the door: enter() fails from now on, so no new compile starts;
//  2. runs the hooks (the background compiler drops its queued jobs, finishes the running one and
//     joins its thread);
//  3. waits until every compile that entered has left (other threads' foreground compiles: a
//     Python daemon thread, a host's worker pool). A compile entered on the exiting thread itself
//     (exit() called from a warning handler) is not waited for.
// The instance is never destroyed: a compile may still reach it during exit.
class ExitPoint {
 public:
  static ExitPoint& instance();

  // Held for the length of one compile; leaving wakes the exit handler.
  class Guard {
   public:
    Guard(Guard&& other) noexcept : armed_(other.armed_) { other.armed_ = false; }
    Guard& operator=(Guard&&) = delete;
    ~Guard();

   private:
    friend class ExitPoint;
    Guard() = default;
    bool armed_ = true;
  };

  // A guard for a compile about to start, or nullopt once exit has begun.
  std::optional<Guard> enter();
  // Registers the handler again (at most kMaxRegistrations times in all; each is a few bytes in
  // libc's list), so that it runs before whatever registered a destructor since the last call.
  void arm();
  // Runs `hook` first in the handler (once; hooks run in the order added).
  void on_exit(std::function<void()> hook);
  bool exiting() const;

  // The handler itself (idempotent; later calls return at once). Tests call it to simulate exit.
  void run();

  static constexpr int kMaxRegistrations = 4096;

 private:
  ExitPoint() = default;
  struct State;
  State& state() const;
};

// What a compile asked for after exit began returns.
Error exiting_error();

}  // namespace tmem
