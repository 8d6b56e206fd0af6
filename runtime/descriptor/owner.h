// Which warp and lane own a register element, from the thread axes its layout uses
// (docs/transfer-semantics.md §Rules rule 1). Shared by the per-element and the per-dim checkers
// and by the run harness's placement (view_placement.h), so all three read ownership alike.
#pragma once

#include <cstdint>

#include "tmem/layout.h"

namespace tmem {

inline constexpr AxisMask kThreadAxes = axis_bit(Axis::kTx) | axis_bit(Axis::kWarpid) |
                                        axis_bit(Axis::kLaneid) | axis_bit(Axis::kWgid) |
                                        axis_bit(Axis::kTidInWg) | axis_bit(Axis::kWidInWg);

// Threads per warp, warps per warpgroup, threads per warpgroup: the ranges of laneid, wid_in_wg
// and tid_in_wg (docs/transfer-semantics.md §Rules).
inline constexpr std::int64_t kLanesPerWarp = 32;
inline constexpr std::int64_t kWarpsPerWarpgroup = 4;
inline constexpr std::int64_t kThreadsPerWarpgroup = 128;

// warp, lane: -1 when the layout does not say; -2 when its thread axes disagree (laneid 3 but
// tid_in_wg 37) or one names no thread (`range` says which).
struct Owner {
  std::int64_t warp = -1;
  std::int64_t lane = -1;
  const char* range = nullptr;  // an axis value outside its range, e.g. "tid_in_wg counts 0..127"
  bool valid() const noexcept { return warp >= -1 && lane >= 0; }
};

// tid_in_wg and wid_in_wg count inside warpgroup wgid: tid_in_wg 130 is not thread 2 of the next
// warpgroup but no thread at all (that is wgid 1 + tid_in_wg 2, or tx 130). Reading it as the next
// warpgroup would make `S[256:1@tid_in_wg]` mean two warpgroups at cta scope and one half-empty
// warpgroup elsewhere; rejecting it keeps each axis one meaning at every scope.
inline Owner owner_of(const PhysCoord& at, AxisMask axes) noexcept {
  auto has = [&](Axis axis) { return (axes & axis_bit(axis)) != 0; };
  // Every thread axis the layout uses must tell the same story; a disagreement makes the owner
  // unknown, which fails the ownership rule.
  Owner owner;
  auto set = [](std::int64_t& field, std::int64_t value) {
    field = field < 0 || field == value ? value : -2;
  };
  auto out_of_range = [&](const char* why) {
    owner.warp = owner.lane = -2;
    owner.range = why;
    return owner;
  };
  const std::int64_t wg = has(Axis::kWgid) ? at[Axis::kWgid] : 0;
  if (wg < 0) return out_of_range("wgid counts warpgroups from 0");
  if (has(Axis::kLaneid)) {
    if (at[Axis::kLaneid] < 0 || at[Axis::kLaneid] >= kLanesPerWarp)
      return out_of_range("laneid counts 0..31");
    set(owner.lane, at[Axis::kLaneid]);
  }
  if (has(Axis::kTidInWg)) {
    const std::int64_t tid = at[Axis::kTidInWg];
    if (tid < 0 || tid >= kThreadsPerWarpgroup)
      return out_of_range(
          "tid_in_wg counts 0..127 inside warpgroup wgid (the next warpgroup is wgid 1, or tx)");
    set(owner.lane, tid % kLanesPerWarp);
    set(owner.warp, kWarpsPerWarpgroup * wg + tid / kLanesPerWarp);
  }
  if (has(Axis::kTx)) {
    if (at[Axis::kTx] < 0) return out_of_range("tx counts threads of the CTA from 0");
    set(owner.lane, at[Axis::kTx] % kLanesPerWarp);
    set(owner.warp, at[Axis::kTx] / kLanesPerWarp);
  }
  if (has(Axis::kWarpid)) {
    if (at[Axis::kWarpid] < 0) return out_of_range("warpid counts warps of the CTA from 0");
    set(owner.warp, at[Axis::kWarpid]);
  }
  if (has(Axis::kWidInWg)) {
    const std::int64_t wid = at[Axis::kWidInWg];
    if (wid < 0 || wid >= kWarpsPerWarpgroup)
      return out_of_range(
          "wid_in_wg counts 0..3 inside warpgroup wgid (the next warpgroup is wgid 1, or warpid)");
    set(owner.warp, kWarpsPerWarpgroup * wg + wid);
  }
  return owner;
}

}  // namespace tmem
