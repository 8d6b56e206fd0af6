// Layout: construction checks, the map D(f) + R + O, canonicalization and canonical text.
#include "tmem/layout.h"

#include <algorithm>
#include <array>
#include <bit>
#include <ostream>

#include "runtime/descriptor/parser.h"
#include "runtime/support/hash.h"

namespace tmem {
namespace {

constexpr std::array<Axis, kNumAxes> kAllAxes = {Axis::kTLane, Axis::kTCol,    Axis::kM,
                                                 Axis::kTx,    Axis::kWarpid,  Axis::kLaneid,
                                                 Axis::kWgid,  Axis::kTidInWg, Axis::kWidInWg};

constexpr std::array<std::string_view, kNumAxes> kAxisNames = {
    "TLane", "TCol", "m", "tx", "warpid", "laneid", "wgid", "tid_in_wg", "wid_in_wg"};

Error limit(std::string message) { return Error(ErrorCode::kLimit, std::move(message)); }
Error invalid(std::string message) { return Error(ErrorCode::kLayout, std::move(message)); }

void append_iter_list(std::string& out, const std::vector<Iter>& iters) {
  auto stride = [](const Iter& iter) {
    std::string text = std::to_string(iter.stride);
    if (iter.axis != Axis::kM) text += "@" + std::string(to_string(iter.axis));
    return text;
  };
  if (iters.size() == 1) {
    out += std::to_string(iters[0].extent) + ":" + stride(iters[0]);
    return;
  }
  out += "(";
  for (size_t i = 0; i < iters.size(); ++i) out += (i ? "," : "") + std::to_string(iters[i].extent);
  out += "):(";
  for (size_t i = 0; i < iters.size(); ++i) out += (i ? "," : "") + stride(iters[i]);
  out += ")";
}

// Drops unit iters and fuses neighbours on one axis whose strides nest.
std::vector<Iter> fuse(const std::vector<Iter>& iters) {
  std::vector<Iter> out;
  for (const Iter& iter : iters) {
    if (iter.extent == 1) continue;
    // make() bounds (extent - 1) * stride, not extent * stride: an iter past it cannot nest.
    std::int64_t span = 0;
    if (!out.empty() && out.back().axis == iter.axis &&
        !__builtin_mul_overflow(iter.extent, iter.stride, &span) && out.back().stride == span) {
      out.back().extent *= iter.extent;
      out.back().stride = iter.stride;
      continue;
    }
    out.push_back(iter);
  }
  return out;
}

}  // namespace

std::string_view to_string(Axis axis) noexcept { return kAxisNames[static_cast<int>(axis)]; }

std::optional<Axis> parse_axis(std::string_view text) noexcept {
  for (Axis axis : kAllAxes)
    if (kAxisNames[static_cast<int>(axis)] == text) return axis;
  return std::nullopt;
}

Span<const Axis> all_axes() noexcept { return kAllAxes; }

std::string to_string(const PhysCoord& coord, AxisMask axes) {
  std::string out = "{";
  bool first = true;
  for (Axis axis : kAllAxes) {
    if (!(axes & axis_bit(axis))) continue;
    out += (first ? "" : ", ") + std::string(to_string(axis)) + ": " + std::to_string(coord[axis]);
    first = false;
  }
  return out + "}";
}

Result<Layout> Layout::make(std::vector<Iter> shard, std::vector<Iter> replica,
                            std::vector<Offset> offsets) {
  if (shard.empty()) return invalid("a layout needs at least one shard iter");
  if (shard.size() > static_cast<size_t>(kMaxIters) ||
      replica.size() > static_cast<size_t>(kMaxIters))
    return limit("a layout has more than " + std::to_string(kMaxIters) + " iters in one list");
  Layout layout;
  // Largest value each axis can reach: checked so that apply never overflows.
  std::array<std::int64_t, kNumAxes> reach{};
  auto add_reach = [&](Axis axis, std::int64_t value) {
    std::int64_t& slot = reach[static_cast<int>(axis)];
    return !__builtin_add_overflow(slot, value, &slot);
  };
  auto check_iters = [&](const std::vector<Iter>& iters, const char* list, std::int64_t cap,
                         std::int64_t& product) -> std::optional<Error> {
    product = 1;
    for (size_t i = 0; i < iters.size(); ++i) {
      const Iter& iter = iters[i];
      if (iter.extent < 1)
        return invalid(std::string(list) + " iter " + std::to_string(i) + " has extent " +
                       std::to_string(iter.extent) + " but extents must be at least 1");
      if (iter.stride < 0)
        return invalid(std::string(list) + " iter " + std::to_string(i) + " has negative stride " +
                       std::to_string(iter.stride));
      std::int64_t span = 0;
      if (__builtin_mul_overflow(product, iter.extent, &product) || product > cap ||
          __builtin_mul_overflow(iter.extent - 1, iter.stride, &span) ||
          !add_reach(iter.axis, span))
        return limit(std::string(list) + " of the layout is too large (more than " +
                     std::to_string(cap) + " elements or coordinates beyond int64)");
      layout.axes_ |= axis_bit(iter.axis);
    }
    return std::nullopt;
  };
  std::int64_t replicas = 1;
  if (auto error = check_iters(shard, "S[...]", kMaxElements, layout.size_)) return *error;
  if (auto error = check_iters(replica, "R[...]", kMaxReplicas, replicas)) return *error;
  std::stable_sort(offsets.begin(), offsets.end(),
                   [](const Offset& a, const Offset& b) { return a.axis < b.axis; });
  for (const Offset& offset : offsets) {
    if (offset.value < 0)
      return invalid("offset " + std::to_string(offset.value) + "@" +
                     std::string(tmem::to_string(offset.axis)) + " is negative");
    if (!add_reach(offset.axis, offset.value))
      return limit("the offsets of the layout overflow int64");
    if (!layout.offsets_.empty() && layout.offsets_.back().axis == offset.axis) {
      layout.offsets_.back().value += offset.value;
    } else {
      layout.offsets_.push_back(offset);
    }
    layout.axes_ |= axis_bit(offset.axis);
    layout.base_[offset.axis] += offset.value;
  }
  layout.shard_ = std::move(shard);
  layout.replica_ = std::move(replica);
  layout.suffix_.assign(layout.shard_.size(), 1);
  for (size_t i = layout.shard_.size() - 1; i > 0; --i)
    layout.suffix_[i - 1] = layout.suffix_[i] * layout.shard_[i].extent;
  layout.power_of_two_ = true;
  layout.suffix_shift_.assign(layout.shard_.size(), 0);
  for (size_t i = 0; i < layout.shard_.size(); ++i) {
    const std::int64_t extent = layout.shard_[i].extent, suffix = layout.suffix_[i];
    if (extent <= 0 || (extent & (extent - 1)) != 0 || (suffix & (suffix - 1)) != 0) {
      layout.power_of_two_ = false;
      break;
    }
    layout.suffix_shift_[i] = std::countr_zero(static_cast<std::uint64_t>(suffix));
  }
  layout.replica_offsets_.assign(1, PhysCoord{});
  layout.replica_offsets_.reserve(static_cast<size_t>(replicas));
  // Row-major over the replica iters, like the shard: the last iter varies fastest.
  for (const Iter& iter : layout.replica_) {
    std::vector<PhysCoord> next;
    next.reserve(layout.replica_offsets_.size() * static_cast<size_t>(iter.extent));
    for (const PhysCoord& prefix : layout.replica_offsets_) {
      for (std::int64_t digit = 0; digit < iter.extent; ++digit) {
        PhysCoord coord = prefix;
        coord[iter.axis] += digit * iter.stride;
        next.push_back(coord);
      }
    }
    layout.replica_offsets_ = std::move(next);
  }
  return layout;
}

Result<Layout> Layout::parse(std::string_view text) { return detail::parse_layout(text); }

Result<Layout> Layout::row_major(Span<const std::int64_t> shape) {
  std::vector<Iter> iters(shape.size());
  std::int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    iters[i] = Iter{shape[i], stride, Axis::kM};
    if (shape[i] < 1) return invalid("row-major layout with extent " + std::to_string(shape[i]));
    if (__builtin_mul_overflow(stride, shape[i], &stride) || stride > kMaxElements)
      return limit("row-major layout with more than 2^40 elements");
  }
  return make(std::move(iters));
}

void Layout::apply_flat(std::int64_t flat, PhysCoord& out) const noexcept {
  out = base_;
  if (power_of_two_ && flat >= 0) {
    for (size_t i = 0; i < shard_.size(); ++i) {
      const Iter& iter = shard_[i];
      out[iter.axis] += ((flat >> suffix_shift_[i]) & (iter.extent - 1)) * iter.stride;
    }
    return;
  }
  for (size_t i = 0; i < shard_.size(); ++i) {
    const Iter& iter = shard_[i];
    out[iter.axis] += (flat / suffix_[i]) % iter.extent * iter.stride;
  }
}

Result<std::vector<PhysCoord>> Layout::apply(std::int64_t flat) const {
  if (flat < 0 || flat >= size_)
    return invalid("index " + std::to_string(flat) + " is outside the layout's " +
                   std::to_string(size_) + " elements");
  PhysCoord base;
  apply_flat(flat, base);
  std::vector<PhysCoord> out(replica_offsets_.begin(), replica_offsets_.end());
  for (PhysCoord& coord : out) coord += base;
  return out;
}

Layout Layout::canonicalize() const {
  std::vector<Iter> shard = fuse(shard_);
  if (shard.empty()) shard.push_back(Iter{1, 0, Axis::kM});
  // R is a set of sums: order does not matter, so sort (largest stride first) and fuse.
  std::vector<Iter> replica;
  for (const Iter& iter : replica_)
    if (iter.extent != 1) replica.push_back(iter);
  std::sort(replica.begin(), replica.end(), [](const Iter& a, const Iter& b) {
    if (a.axis != b.axis) return a.axis < b.axis;
    if (a.stride != b.stride) return a.stride > b.stride;
    return a.extent > b.extent;
  });
  replica = fuse(replica);
  std::vector<Offset> offsets;
  for (const Offset& offset : offsets_)
    if (offset.value != 0) offsets.push_back(offset);
  // Same map with fewer iters: cannot fail the checks make() already passed.
  return make(std::move(shard), std::move(replica), std::move(offsets)).value();
}

std::string Layout::to_string() const {
  std::string out = "S[";
  append_iter_list(out, shard_);
  out += "]";
  if (!replica_.empty()) {
    out += " + R[";
    append_iter_list(out, replica_);
    out += "]";
  }
  for (const Offset& offset : offsets_) {
    out += " + " + std::to_string(offset.value);
    if (offset.axis != Axis::kM) out += "@" + std::string(tmem::to_string(offset.axis));
  }
  return out;
}

std::uint64_t Layout::hash() const noexcept {
  WordHasher hasher(0x4c61796f7574ull);  // "Layout"
  auto mix = [&hasher](std::uint64_t word) { hasher.add(word); };
  auto mix_iters = [&](const std::vector<Iter>& iters) {
    mix(iters.size());
    for (const Iter& iter : iters) {
      mix(static_cast<std::uint64_t>(iter.extent));
      mix(static_cast<std::uint64_t>(iter.stride));
      mix(static_cast<std::uint64_t>(iter.axis));
    }
  };
  mix_iters(shard_);
  mix_iters(replica_);
  mix(offsets_.size());
  for (const Offset& offset : offsets_) {
    mix(static_cast<std::uint64_t>(offset.axis));
    mix(static_cast<std::uint64_t>(offset.value));
  }
  return hasher.finish();
}

std::ostream& operator<<(std::ostream& os, const Layout& layout) {
  return os << layout.to_string();
}
std::ostream& operator<<(std::ostream& os, Axis axis) { return os << to_string(axis); }

}  // namespace tmem
