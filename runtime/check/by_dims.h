// The fast path of tmem::check: proves the native-image rules per view dim (and once per atom)
// instead of per element, using AdditiveMap tables (docs/transfer-semantics.md §Rules). It only
// ever says "proven"; when a condition does not hold or cannot be shown this way it gives up, and
// the per-element checker decides and explains. So it changes speed, never answers or messages.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "tmem/plan.h"
#include "tmem/transfer.h"

namespace tmem {

// Requires: `spec` passed the axis, shape, ownership-axis and replica checks of check.cc;
// `repeat_shape` are its repeat extents; `regs_halves`/`tmem_halves` say whether the operand's
// atom ends in a 16-bit half axis. Returns the same Plan the per-element checker would, or nullopt.
std::optional<Plan> plan_by_dims(const TransferSpec& spec,
                                 std::span<const std::int64_t> repeat_shape, bool regs_halves,
                                 bool tmem_halves);

// Variants of tmem::check (check.cc).
// The per-element checker alone, without this fast path: the reference it must match, for tests
// and benchmarks.
Result<Plan> check_each_element(const TransferSpec& spec);
// tmem::check without the search for another opcode or view that would fit when a view does not:
// the same verdict and plan, a message without the "(these views match ...)" hint. For callers
// that try many candidates themselves (tmem::select).
Result<Plan> check_without_hints(const TransferSpec& spec);

}  // namespace tmem
