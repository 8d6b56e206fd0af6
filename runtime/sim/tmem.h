// tmem::sim::Tmem: the Tensor Memory of one CTA in the CPU simulator (128 lanes x 512 columns x
// 32 bit, docs/tcgen05-rules.md §Addresses) with its allocation state (§Lifecycle) and, per cell,
// the last asynchronous tcgen05 accesses that the ordering rules (§Sync) are checked against.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace tmem::sim {

inline constexpr int kTmemLanes = 128;    // TMEM lanes per CTA (PTX ISA §9.7.16.1)
inline constexpr int kTmemColumns = 512;  // 32-bit columns per lane on sm_100a/f
inline constexpr int kAllocUnit = 32;     // columns per allocation granule (§9.7.16.1.2)

// One asynchronous tcgen05 operation (an st, an ld or an alloc) of one warp: the warp's running
// count of operations of that kind, and the instruction that issued it (index into the body).
struct OpRef {
  int warp = -1;  // -1: none
  std::uint32_t seq = 0;
  int instr = -1;
  bool valid() const noexcept { return warp >= 0; }
};

// What the simulator remembers of one 32-bit TMEM cell.
struct Cell {
  std::uint32_t value = 0;
  bool upper_unspecified = false;  // written by unpack::16b: bits [16,32) carry no data (§4.2)
  OpRef last_store;                // the st that wrote the cell last
  std::vector<OpRef> loads;        // lds since that st, at most one (the latest) per warp
};

// Where alloc places a block among the free columns. Both are legal; the simulator's executor
// uses kHighest so that a kernel that ignores the address alloc returned reads the wrong cells.
enum class Placement { kLowest, kHighest };

struct Allocation {
  int column = 0;  // first column; lane bits of the address are 0
  int ncols = 0;
  OpRef op;  // the alloc (kind alloc): its warp and instruction
  bool live = true;
};

class Tmem {
 public:
  Tmem();

  Cell& cell(int lane, int column) {
    return cells_[static_cast<size_t>(lane) * kTmemColumns + static_cast<size_t>(column)];
  }

  // A free block of `ncols` columns (a power of two, 32..512) aligned to its size, or nullopt
  // when none is free (alloc would block: rule R30). With `also`, the block must be free there
  // too: a cta_group::2 allocation takes the same columns in both CTAs of the pair.
  std::optional<int> find_free(int ncols, Placement placement, const Tmem* also = nullptr) const;
  // Whether columns [column, column + ncols) are all free.
  bool is_free(int column, int ncols) const;
  // Records a new live block; returns its index in allocations().
  int add(int column, int ncols, OpRef op);
  // Frees block `index` and forgets the access history of its cells.
  void release(int index);
  // The index of the live block holding `column`, or -1.
  int live_block(int column) const;
  // The index of the live block that starts at `column`, or -1.
  int block_at(int column) const;

  const std::vector<Allocation>& allocations() const noexcept { return allocations_; }

  // relinquish_alloc_permit: the first instruction that gave up the permit, or -1.
  void relinquish(int instr) {
    if (relinquish_instr_ < 0) relinquish_instr_ = instr;
  }
  int relinquish_instr() const noexcept { return relinquish_instr_; }

 private:
  std::vector<Cell> cells_;
  std::vector<Allocation> allocations_;        // in execution order; freed ones keep live = false
  int owner_[kTmemColumns / kAllocUnit] = {};  // each granule's block in allocations_, or -1
  int relinquish_instr_ = -1;
};

}  // namespace tmem::sim
