// AdditiveMap: a view's element -> physical coordinate map split into one table per view dim, so
// that coordinate(x) = origin + sum over dims d of dims[d][x[d]]. The checker uses it to decide
// the native-image rules per dim (and per atom) instead of per element (docs/transfer-semantics.md
// §Rules).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tmem/layout.h"
#include "tmem/view.h"

namespace tmem {

struct AdditiveMap {
  PhysCoord origin;  // the element at (0, ..., 0)
  std::vector<std::vector<PhysCoord>>
      dims;  // dims[d][i]: what index i of dim d adds; dims[d][0] is 0
};

// The split exists when the view's base-index contributions can never carry from one layout iter
// into the next: for every shard iter j of the base layout, the largest digit j of the offset plus
// the largest digit j each dim contributes stays below the iter's extent. Then the layout's
// div/mod is applied digit by digit and the sum of per-dim coordinates is exact. nullopt when that
// sufficient condition fails, when the base layout has replicas (several coordinates per element)
// or when the tables would hold more than `max_entries` coordinates; callers then fall back to
// evaluating elements one by one.
std::optional<AdditiveMap> additive_map(const View& view, std::int64_t max_entries = 1 << 16);

}  // namespace tmem
