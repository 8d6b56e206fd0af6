// Coordinates on the host (docs/design.md §Production): which logical element each thread holds in
// each register of a transfer, whether two transfers hold their common elements in the same
// threads, and the 16-bit store that packs a 32-bit load's register pairs (FA4's P over S).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tmem/dtype.h"
#include "tmem/export.h"
#include "tmem/result.h"
#include "tmem/transfer.h"

TMEMJIT_API_BEGIN
namespace tmem {

// The (thread, register[, half]) -> element table of a transfer: the logical index, in the
// register tensor as written (before rearrange/view/permute/[]), that thread `t` (numbered in the
// scope: laneid, tid_in_wg or tx) holds in register slot `r` of the plan (regs[r] of the device
// functions), and for a 16-bit register view in half `h` of it (0: bits 0-15, 1: bits 16-31;
// docs/descriptor-language.md §Units). -1 in every dim where the plan moves no element. It is what
// N_coord returns, for every thread and slot at once, with both halves of a 16-bit register.
struct CoordTable {
  int threads = 0;    // threads of the scope: 32 (warp), 128 (warpgroup), 32 * NW (cta)
  int registers = 0;  // the plan's registers per thread (N_regs), ld.red's result slots included
  int halves = 1;     // 2 for a 16-bit register view, else 1
  int rank = 0;       // the register tensor's rank
  // Row-major over shape(): [thread][register][dim], or [thread][register][half][dim].
  std::vector<std::int32_t> values;

  // (threads, registers, rank), or (threads, registers, 2, rank) for a 16-bit register view.
  std::vector<std::int64_t> shape() const;
  // Requires: every argument in range (half 0 for 32-bit views).
  std::int32_t at(int thread, int reg, int half, int dim) const noexcept {
    return values[((static_cast<size_t>(thread) * static_cast<size_t>(registers) +
                    static_cast<size_t>(reg)) *
                       static_cast<size_t>(halves) +
                   static_cast<size_t>(half)) *
                      static_cast<size_t>(rank) +
                  static_cast<size_t>(dim)];
  }
  bool used(int thread, int reg, int half = 0) const noexcept {
    return rank > 0 && at(thread, reg, half, 0) >= 0;
  }
};

// Checks `spec` (the errors of tmem::check) and returns its table.
Result<CoordTable> coord_table(const TransferSpec& spec);

// Where a transfer holds one element: a thread of its scope, a register slot and a 16-bit half
// (0 for 32-bit views).
struct Holder {
  int thread = -1;
  int reg = -1;
  int half = 0;
  friend bool operator==(const Holder& a, const Holder& b) {
    return a.thread == b.thread && a.reg == b.reg && a.half == b.half;
  }
  friend bool operator!=(const Holder& a, const Holder& b) { return !(a == b); }
};

// One element both transfers hold, and where each holds it.
struct HeldElement {
  std::vector<std::int64_t> index;  // the logical index in the (common) register tensor
  Holder a, b;
  friend bool operator==(const HeldElement& a, const HeldElement& b) {
    return a.index == b.index && a.a == b.a && a.b == b.b;
  }
  friend bool operator!=(const HeldElement& a, const HeldElement& b) { return !(a == b); }
};

// What same_owners found.
struct OwnerComparison {
  // Every element both transfers hold sits in the same threads of the CTA in both.
  bool same = false;
  std::int64_t common = 0;  // elements both hold
  std::int64_t only_a = 0;  // elements only `a` holds
  std::int64_t only_b = 0;  // elements only `b` holds
  int halves_a = 1;         // 2 where a's register view is 16-bit (Holder::half counts), else 1
  int halves_b = 1;
  // Row-major over the common elements, one entry per thread that holds the element in both (one,
  // unless a register view is replicated): which register and half in each. Filled when `same`.
  std::vector<HeldElement> pairs;
  // When not `same`: the first element (row-major) whose threads differ, with a holder in `a`
  // whose thread does not hold it in `b` (or `a`'s first) and the same for `b`.
  std::optional<HeldElement> counterexample;
  // One line: "same owners: 4096 common elements ..." or the counterexample.
  std::string to_string() const;
};

// Whether transfers `a` and `b` hold every element they have in common (by logical index in
// their register tensors, which must have the same shape: kLayout otherwise) in the same threads.
// Threads are compared as CTA threads (32 * warp + lane, the warp of the scope's group), so a
// warpgroup transfer and a cta:4 transfer compare alike; Holder::thread is numbered in each
// transfer's own scope. Both specs are checked first (the errors of tmem::check).
Result<OwnerComparison> same_owners(const TransferSpec& a, const TransferSpec& b);

// FA4's P over S: the 16-bit store whose register q holds, in the same thread, the elements of
// the load's registers 2q (low half) and 2q + 1 (high half), placed over the load's TMEM: each
// element in the lane where `load` reads it, the load's 32-bit column c becoming 16-bit unit
// c + c0 (c0: the load's first column, rounded down to even), so P's cells start at S's first
// column and take half as many. Both views keep the load's layouts with `dtype` (bf16 or f16,
// kUsage otherwise) and the form is what select() picks for them: the plain .b32 store when each
// register pair sits in one row of two adjacent columns (32x32b.xN gives 32x32b.x(N/2), 16x256b
// gives 16x128b), else kLayout naming the pair that no 32-bit register can hold (16x128b and
// 16x64b loads keep a thread's register pairs in two rows or two columns apart). `load` must be a
// checked tcgen05.ld (or ld.red) of a 32-bit view without pack and not 16x32bx2 (kUsage). The
// result is checked: its plan passes tmem::check, same_owners(load, twin) holds and register q of
// the twin holds the load's slots 2q and 2q + 1 (kInternal if not).
Result<TransferSpec> packed_twin(const TransferSpec& load, DType dtype);

}  // namespace tmem
TMEMJIT_API_END
