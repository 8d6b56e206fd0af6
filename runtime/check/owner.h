// Which warp and lane own a register element, from the thread axes its layout uses (DESIGN.md §3
// rule 1). Shared by the per-element and the per-dim checkers so both read ownership alike.
#pragma once

#include <cstdint>

#include "tmem/layout.h"

namespace tmem {

inline constexpr AxisMask kThreadAxes = axis_bit(Axis::kTx) | axis_bit(Axis::kWarpid) |
                                        axis_bit(Axis::kLaneid) | axis_bit(Axis::kWgid) |
                                        axis_bit(Axis::kTidInWg) | axis_bit(Axis::kWidInWg);

// -1: the layout does not say; -2: its thread axes disagree (laneid 3 but tid_in_wg 37).
struct Owner {
  std::int64_t warp = -1;
  std::int64_t lane = -1;
};

inline Owner owner_of(const PhysCoord& at, AxisMask axes) noexcept {
  auto has = [&](Axis axis) { return (axes & axis_bit(axis)) != 0; };
  // Every thread axis the layout uses must tell the same story; a disagreement makes the owner
  // unknown, which fails the ownership rule.
  Owner owner;
  auto set = [](std::int64_t& field, std::int64_t value) {
    field = field < 0 || field == value ? value : -2;
  };
  const std::int64_t wg = has(Axis::kWgid) ? at[Axis::kWgid] : 0;
  if (has(Axis::kLaneid)) set(owner.lane, at[Axis::kLaneid]);
  if (has(Axis::kTidInWg)) {
    set(owner.lane, at[Axis::kTidInWg] % 32);
    set(owner.warp, 4 * wg + at[Axis::kTidInWg] / 32);
  }
  if (has(Axis::kTx)) {
    set(owner.lane, at[Axis::kTx] % 32);
    set(owner.warp, at[Axis::kTx] / 32);
  }
  if (has(Axis::kWarpid)) set(owner.warp, at[Axis::kWarpid]);
  if (has(Axis::kWidInWg)) set(owner.warp, 4 * wg + at[Axis::kWidInWg]);
  if (has(Axis::kLaneid) && owner.lane >= 32) owner.lane = -2;
  return owner;
}

}  // namespace tmem
