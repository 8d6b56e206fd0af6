// tmem::sim::AsyncOrder: when an asynchronous tcgen05 operation of one warp is complete and
// visible to another (docs/tcgen05-rules.md §Sync, PTX ISA §9.7.16.6):
//   same warp:    st -> tcgen05.wait::st, ld -> tcgen05.wait::ld; an alloc is complete at once;
//   another warp: the producer completes it, then tcgen05.fence::before_thread_sync, a barrier,
//                 and the consumer's tcgen05.fence::after_thread_sync after that barrier;
//   another CTA of the cluster (a cta_group::2 pair, docs/tcgen05-rules.md §Lifecycle): the
//                 same, where the barrier is the cluster barrier (barrier.cluster.arrive, then
//                 .wait): bar.sync orders only the warps of one CTA.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/sim/tmem.h"

namespace tmem::sim {

enum class OpKind { kStore, kLoad, kAlloc };
inline constexpr int kOpKinds = 3;

class AsyncOrder {
 public:
  // `warps` of the whole cluster; warp w is in CTA w / warps_per_cta (0: one CTA).
  explicit AsyncOrder(int warps, int warps_per_cta = 0);

  // A new operation of `warp`; an alloc is complete when issued.
  OpRef issue(int warp, OpKind kind, int instr);
  // tcgen05.wait::st / wait::ld: every earlier op of that kind of the warp is complete.
  void wait(int warp, OpKind kind);
  // tcgen05.fence::before_thread_sync: the warp's completed ops are ordered before its next
  // barrier.
  void fence_before(int warp);
  // A CTA barrier that every warp in `warps` passed.
  void barrier(const std::vector<int>& warps);
  // tcgen05.fence::after_thread_sync: the warp sees what the barriers it passed published.
  void fence_after(int warp);
  // barrier.cluster.arrive: publishes what the warp has fenced so far (release) ...
  void cluster_arrive(int warp);
  // ... once every warp of the cluster arrived (`warps`): the phase completes ...
  void cluster_complete(const std::vector<int>& warps);
  // ... and barrier.cluster.wait lets the warp pass it (acquire).
  void cluster_wait(int warp);

  // Whether `op` (of kind `kind`) is complete and, for another warp's op, made visible to `warp`.
  bool visible(OpKind kind, const OpRef& op, int warp) const;
  // Why it is not: the first missing step of the pattern above, e.g. "warp 0 has not executed
  // tcgen05.wait::st since". Requires: !visible(kind, op, warp).
  std::string missing(OpKind kind, const OpRef& op, int warp) const;

  int barriers() const noexcept { return generation_; }
  // "warp 3", or "CTA 1 warp 3" in a cluster.
  std::string warp_name(int warp) const;

 private:
  struct Publication {
    int generation = 0;
    std::array<std::uint32_t, kOpKinds> fenced{};
    bool cluster = false;  // made at a cluster barrier: other CTAs can see it
  };
  struct WarpOrder {
    std::array<std::uint32_t, kOpKinds> issued{}, done{}, fenced{};
    std::vector<Publication> published;  // by increasing generation
    int passed = 0;                      // the last barrier generation the warp passed
    int seen = 0;                        // the generation its last fence::after made visible
    std::array<std::uint32_t, kOpKinds> arrive_fenced{};  // fenced at its last cluster arrive
    int cluster_completed = 0;  // the generation of the cluster phase it arrived in, once complete
    int cluster_passed = 0;     // the last cluster barrier generation it waited for
    int cluster_seen = 0;       // cluster_passed at its last fence::after
  };
  bool same_cta(int a, int b) const {
    return warps_per_cta_ == 0 || a / warps_per_cta_ == b / warps_per_cta_;
  }
  // The last publication of `producer` that `consumer` sees, or null.
  const Publication* seen_publication(int producer, int consumer) const;

  std::vector<WarpOrder> warps_;
  int warps_per_cta_ = 0;
  int generation_ = 0;
};

const char* to_string(OpKind kind) noexcept;  // "tcgen05.st", "tcgen05.ld", "tcgen05.alloc"

}  // namespace tmem::sim
