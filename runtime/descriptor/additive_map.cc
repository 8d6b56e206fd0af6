// Per-dim tables of a view's physical map; see additive_map.h for when they are exact.
#include "runtime/descriptor/additive_map.h"

#include <algorithm>
#include <span>

namespace tmem {
namespace {

// Base-index contribution of index i of a dim: i split over the dim's digits, last digit lowest.
std::int64_t dim_value(std::span<const Digit> digits, std::int64_t index) {
  std::int64_t value = 0;
  for (size_t n = digits.size(); n-- > 0;) {
    value += index % digits[n].extent * digits[n].stride;
    index /= digits[n].extent;
  }
  return value;
}

std::int64_t extent_of(std::span<const Digit> digits) {
  std::int64_t extent = 1;
  for (const Digit& digit : digits) extent *= digit.extent;
  return extent;
}

}  // namespace

std::optional<AdditiveMap> additive_map(const View& view, std::int64_t max_entries) {
  const Layout& layout = view.base().layout();
  if (layout.replica_count() != 1) return std::nullopt;
  const std::span<const Iter> shard = layout.shard();
  const size_t iters = shard.size();
  // suffix[j]: product of the extents after iter j (the last iter is the lowest digit).
  std::vector<std::int64_t> suffix(iters, 1);
  for (size_t j = iters; j-- > 1;) suffix[j - 1] = suffix[j] * shard[j].extent;
  auto digit = [&](std::int64_t base_index, size_t j) {
    return base_index / suffix[j] % shard[j].extent;
  };

  std::int64_t entries = 0;
  for (int d = 0; d < view.ndim(); ++d) entries += view.shape()[static_cast<size_t>(d)];
  if (entries > max_entries) return std::nullopt;

  // Largest digit per iter: the offset's, plus each dim's largest.
  std::vector<std::int64_t> top(iters, 0);
  for (size_t j = 0; j < iters; ++j) top[j] = digit(view.offset(), j);
  AdditiveMap map;
  map.dims.resize(static_cast<size_t>(view.ndim()));
  std::vector<std::int64_t> dim_top(iters);
  for (int d = 0; d < view.ndim(); ++d) {
    const std::span<const Digit> digits = view.digits(d);
    const std::int64_t extent = extent_of(digits);
    std::vector<PhysCoord>& table = map.dims[static_cast<size_t>(d)];
    table.resize(static_cast<size_t>(extent));
    std::fill(dim_top.begin(), dim_top.end(), 0);
    for (std::int64_t i = 0; i < extent; ++i) {
      const std::int64_t value = dim_value(digits, i);
      PhysCoord& coord = table[static_cast<size_t>(i)];
      for (size_t j = 0; j < iters; ++j) {
        const std::int64_t v = digit(value, j);
        dim_top[j] = std::max(dim_top[j], v);
        coord[shard[j].axis] += v * shard[j].stride;
      }
    }
    for (size_t j = 0; j < iters; ++j) top[j] += dim_top[j];
  }
  for (size_t j = 0; j < iters; ++j)
    if (top[j] >= shard[j].extent) return std::nullopt;  // some sum could carry into iter j - 1
  layout.apply_flat(view.offset(), map.origin);
  return map;
}

}  // namespace tmem
