// Completion and cross-warp visibility of asynchronous tcgen05 operations in the simulator.
#include "runtime/sim/order.h"

#include <algorithm>

namespace tmem::sim {

const char* to_string(OpKind kind) noexcept {
  switch (kind) {
    case OpKind::kStore:
      return "tcgen05.st";
    case OpKind::kLoad:
      return "tcgen05.ld";
    case OpKind::kAlloc:
      return "tcgen05.alloc";
  }
  return "?";
}

AsyncOrder::AsyncOrder(int warps, int warps_per_cta)
    : warps_(static_cast<size_t>(warps)), warps_per_cta_(warps_per_cta) {}

std::string AsyncOrder::warp_name(int warp) const {
  if (warps_per_cta_ == 0 || warps_per_cta_ >= static_cast<int>(warps_.size()))
    return "warp " + std::to_string(warp);
  return "CTA " + std::to_string(warp / warps_per_cta_) + " warp " +
         std::to_string(warp % warps_per_cta_);
}

OpRef AsyncOrder::issue(int warp, OpKind kind, int instr) {
  WarpOrder& w = warps_[static_cast<size_t>(warp)];
  const auto k = static_cast<size_t>(kind);
  const std::uint32_t seq = ++w.issued[k];
  if (kind == OpKind::kAlloc) w.done[k] = seq;
  return {warp, seq, instr};
}

void AsyncOrder::wait(int warp, OpKind kind) {
  WarpOrder& w = warps_[static_cast<size_t>(warp)];
  w.done[static_cast<size_t>(kind)] = w.issued[static_cast<size_t>(kind)];
}

void AsyncOrder::fence_before(int warp) {
  WarpOrder& w = warps_[static_cast<size_t>(warp)];
  w.fenced = w.done;
}

void AsyncOrder::barrier(const std::vector<int>& warps) {
  ++generation_;
  for (int warp : warps) {
    WarpOrder& w = warps_[static_cast<size_t>(warp)];
    w.passed = generation_;
    if (w.published.empty() || w.published.back().fenced != w.fenced)
      w.published.push_back({generation_, w.fenced});
  }
}

void AsyncOrder::fence_after(int warp) {
  WarpOrder& w = warps_[static_cast<size_t>(warp)];
  w.seen = w.passed;
  w.cluster_seen = w.cluster_passed;
}

void AsyncOrder::cluster_arrive(int warp) {
  WarpOrder& w = warps_[static_cast<size_t>(warp)];
  w.arrive_fenced = w.fenced;
}

void AsyncOrder::cluster_complete(const std::vector<int>& warps) {
  ++generation_;
  for (int warp : warps) {
    WarpOrder& w = warps_[static_cast<size_t>(warp)];
    w.published.push_back({generation_, w.arrive_fenced, true});
    w.cluster_completed = generation_;
  }
}

void AsyncOrder::cluster_wait(int warp) {
  WarpOrder& w = warps_[static_cast<size_t>(warp)];
  w.passed = std::max(w.passed, w.cluster_completed);
  w.cluster_passed = w.cluster_completed;
}

const AsyncOrder::Publication* AsyncOrder::seen_publication(int producer, int consumer) const {
  const auto& published = warps_[static_cast<size_t>(producer)].published;
  const bool local = same_cta(producer, consumer);
  const WarpOrder& c = warps_[static_cast<size_t>(consumer)];
  const int seen = local ? c.seen : c.cluster_seen;
  const Publication* last = nullptr;
  for (const Publication& p : published) {
    if (p.generation > seen) break;
    if (local || p.cluster) last = &p;
  }
  return last;
}

bool AsyncOrder::visible(OpKind kind, const OpRef& op, int warp) const {
  if (!op.valid()) return true;
  const auto k = static_cast<size_t>(kind);
  if (op.warp == warp) return op.seq <= warps_[static_cast<size_t>(warp)].done[k];
  const Publication* p = seen_publication(op.warp, warp);
  return p != nullptr && p->fenced[k] >= op.seq;
}

std::string AsyncOrder::missing(OpKind kind, const OpRef& op, int warp) const {
  const auto k = static_cast<size_t>(kind);
  const WarpOrder& producer = warps_[static_cast<size_t>(op.warp)];
  const std::string who = warp_name(op.warp);
  const bool local = same_cta(op.warp, warp);
  const WarpOrder& consumer = warps_[static_cast<size_t>(warp)];
  const char* wait = kind == OpKind::kStore ? "tcgen05.wait::st" : "tcgen05.wait::ld";
  if (op.seq > producer.done[k]) return who + " has not executed " + wait + " since";
  if (op.warp == warp) return "";
  // Complete, but not published to `warp`: find the first step of the hand-off that is missing.
  bool fenced = producer.fenced[k] >= op.seq;
  for (const Publication& p : producer.published)
    if (p.fenced[k] >= op.seq && (local || p.cluster)) {
      if (p.generation > (local ? consumer.passed : consumer.cluster_passed))
        return warp_name(warp) + " has not passed the " + (local ? "barrier" : "cluster barrier") +
               " that publishes it";
      return warp_name(warp) + " has not executed tcgen05.fence::after_thread_sync since the " +
             (local ? "barrier" : "cluster barrier");
    }
  if (!fenced)
    return who + " has not executed tcgen05.fence::before_thread_sync after completing it";
  if (!local)
    return "no cluster barrier (barrier.cluster.arrive, then barrier.cluster.wait) has passed "
           "since " +
           who + "'s tcgen05.fence::before_thread_sync: bar.sync does not order another CTA";
  return "no barrier (bar.sync) has passed since " + who + "'s tcgen05.fence::before_thread_sync";
}

}  // namespace tmem::sim
