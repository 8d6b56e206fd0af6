// Completion and cross-warp visibility of asynchronous tcgen05 operations in the simulator.
#include "runtime/sim/order.h"

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

AsyncOrder::AsyncOrder(int warps) : warps_(static_cast<size_t>(warps)) {}

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
}

const AsyncOrder::Publication* AsyncOrder::seen_publication(int producer, int consumer) const {
  const auto& published = warps_[static_cast<size_t>(producer)].published;
  const int seen = warps_[static_cast<size_t>(consumer)].seen;
  const Publication* last = nullptr;
  for (const Publication& p : published) {
    if (p.generation > seen) break;
    last = &p;
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
  const std::string who = "warp " + std::to_string(op.warp);
  const char* wait = kind == OpKind::kStore ? "tcgen05.wait::st" : "tcgen05.wait::ld";
  if (op.seq > producer.done[k]) return who + " has not executed " + wait + " since";
  if (op.warp == warp) return "";
  // Complete, but not published to `warp`: find the first step of the hand-off that is missing.
  bool fenced = producer.fenced[k] >= op.seq;
  for (const Publication& p : producer.published)
    if (p.fenced[k] >= op.seq) {
      if (p.generation > warps_[static_cast<size_t>(warp)].passed)
        return "warp " + std::to_string(warp) + " has not passed the barrier that publishes it";
      return "warp " + std::to_string(warp) +
             " has not executed tcgen05.fence::after_thread_sync since the barrier";
    }
  if (!fenced)
    return who + " has not executed tcgen05.fence::before_thread_sync after completing it";
  return "no barrier (bar.sync) has passed since " + who + "'s tcgen05.fence::before_thread_sync";
}

}  // namespace tmem::sim
