// The simulated TMEM of one CTA: cells with deterministic junk at start, and the allocator.
#include "runtime/sim/tmem.h"

#include <algorithm>

namespace tmem::sim {

Tmem::Tmem() : cells_(static_cast<size_t>(kTmemLanes) * kTmemColumns) {
  // Never-written TMEM holds junk on hardware; a fixed, cell-dependent pattern makes a missing
  // write visible as wrong data and keeps runs reproducible.
  std::uint32_t state = 0x9E3779B9u;
  for (Cell& c : cells_) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    c.value = state;
  }
  std::fill(std::begin(owner_), std::end(owner_), -1);
}

std::optional<int> Tmem::find_free(int ncols, Placement placement, const Tmem* also) const {
  const int blocks = kTmemColumns / ncols;
  for (int i = 0; i < blocks; ++i) {
    const int block = placement == Placement::kLowest ? i : blocks - 1 - i;
    if (is_free(block * ncols, ncols) && (!also || also->is_free(block * ncols, ncols)))
      return block * ncols;
  }
  return std::nullopt;
}

bool Tmem::is_free(int column, int ncols) const {
  if (column < 0 || ncols <= 0 || column + ncols > kTmemColumns) return false;
  for (int g = column / kAllocUnit; g < (column + ncols) / kAllocUnit; ++g)
    if (owner_[g] >= 0) return false;
  return true;
}

int Tmem::add(int column, int ncols, OpRef op) {
  const int index = static_cast<int>(allocations_.size());
  allocations_.push_back({column, ncols, op, true});
  for (int g = column / kAllocUnit; g < (column + ncols) / kAllocUnit; ++g) owner_[g] = index;
  return index;
}

void Tmem::release(int index) {
  Allocation& block = allocations_[static_cast<size_t>(index)];
  block.live = false;
  for (int g = block.column / kAllocUnit; g < (block.column + block.ncols) / kAllocUnit; ++g)
    owner_[g] = -1;
  for (int lane = 0; lane < kTmemLanes; ++lane)
    for (int column = block.column; column < block.column + block.ncols; ++column) {
      Cell& c = cell(lane, column);
      c.last_store = {};
      c.loads.clear();
    }
}

int Tmem::live_block(int column) const {
  if (column < 0 || column >= kTmemColumns) return -1;
  return owner_[column / kAllocUnit];
}

int Tmem::block_at(int column) const {
  const int index = live_block(column);
  return index >= 0 && allocations_[static_cast<size_t>(index)].column == column ? index : -1;
}

}  // namespace tmem::sim
