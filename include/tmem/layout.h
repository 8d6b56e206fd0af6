// tmem::Layout: TIRx's TileLayout (shard iters, replica iters, offsets over named axes),
// docs/descriptor-language.md §Semantics.
//
// A layout maps a flat logical index f to the set { D(f) + r + O : r in R }: D splits f over the
// shard extents (the last iter is the lowest digit), multiplies each digit by its stride and sums
// per axis; R is the set of sums of the replica iters; O the per-axis offsets.
#pragma once

#include <array>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tmem/export.h"
#include "tmem/result.h"
#include "tmem/span.h"

TMEMJIT_API_BEGIN
namespace tmem {

// The named axes of TIRx. TLane/TCol are TMEM coordinates, m a register slot of one thread,
// the rest thread coordinates. Values of TCol and m count elements of the tensor's dtype.
enum class Axis : std::uint8_t {
  kTLane,
  kTCol,
  kM,
  kTx,
  kWarpid,
  kLaneid,
  kWgid,
  kTidInWg,
  kWidInWg
};
inline constexpr int kNumAxes = 9;

// "TLane", "TCol", "m", "tx", "warpid", "laneid", "wgid", "tid_in_wg", "wid_in_wg".
std::string_view to_string(Axis axis) noexcept;
std::optional<Axis> parse_axis(std::string_view text) noexcept;
// Every axis, in enum order (the order of the table above and of PhysCoord::value).
Span<const Axis> all_axes() noexcept;

// A set of axes, bit i = Axis(i).
using AxisMask = std::uint32_t;
constexpr AxisMask axis_bit(Axis axis) noexcept { return AxisMask{1} << static_cast<int>(axis); }

// Limits that keep hostile input cheap (docs/reliability.md: errors, never crashes).
inline constexpr std::int64_t kMaxElements = std::int64_t{1} << 40;  // per layout, tensor or view
inline constexpr int kMaxIters = 64;                                 // per S[...] / R[...] / rank
inline constexpr std::int64_t kMaxReplicas = 65536;                  // product of replica extents

// One iter `extent : stride @ axis`.
struct Iter {
  std::int64_t extent = 1;
  std::int64_t stride = 0;
  Axis axis = Axis::kM;
  friend bool operator==(const Iter& a, const Iter& b) {
    return a.extent == b.extent && a.stride == b.stride && a.axis == b.axis;
  }
  friend bool operator!=(const Iter& a, const Iter& b) { return !(a == b); }
};

// One offset `value @ axis`.
struct Offset {
  Axis axis = Axis::kM;
  std::int64_t value = 0;
  friend bool operator==(const Offset& a, const Offset& b) {
    return a.axis == b.axis && a.value == b.value;
  }
  friend bool operator!=(const Offset& a, const Offset& b) { return !(a == b); }
};

// A physical coordinate: one value per axis (axes a layout does not use stay 0). Raw layout units:
// TCol and m count dtype elements (16-bit halves for 16-bit dtypes, see tmem/dtype.h).
struct PhysCoord {
  std::array<std::int64_t, kNumAxes> value{};
  std::int64_t& operator[](Axis axis) noexcept { return value[static_cast<int>(axis)]; }
  std::int64_t operator[](Axis axis) const noexcept { return value[static_cast<int>(axis)]; }
  PhysCoord& operator+=(const PhysCoord& other) noexcept {
    for (int i = 0; i < kNumAxes; ++i) value[i] += other.value[i];
    return *this;
  }
  friend bool operator==(const PhysCoord& a, const PhysCoord& b) { return a.value == b.value; }
  friend bool operator!=(const PhysCoord& a, const PhysCoord& b) { return !(a == b); }
};

// "{TLane: 5, TCol: 3}" over the axes in `axes`.
std::string to_string(const PhysCoord& coord, AxisMask axes);

class Layout {
 public:
  // Requires: 1 <= shard.size() <= kMaxIters, replica.size() <= kMaxIters, every extent >= 1,
  // strides and offsets >= 0. Offsets on one axis are summed. Sizes above kMaxElements, replica
  // counts above kMaxReplicas and coordinates that overflow int64 are ErrorCode::kLimit.
  static Result<Layout> make(std::vector<Iter> shard, std::vector<Iter> replica = {},
                             std::vector<Offset> offsets = {});
  // Parses the layout grammar of docs/descriptor-language.md §Grammar, e.g.
  // "S[(64,2,64):(1@TLane,64@TLane,1@TCol)]".
  static Result<Layout> parse(std::string_view text);
  // Row-major over `shape` on axis m: S[8,4] == row_major({8,4}).
  static Result<Layout> row_major(Span<const std::int64_t> shape);

  Span<const Iter> shard() const noexcept { return shard_; }
  Span<const Iter> replica() const noexcept { return replica_; }
  // Sorted by axis, one entry per axis that was given an offset (zero offsets are kept).
  Span<const Offset> offsets() const noexcept { return offsets_; }

  // Number of logical elements: the product of the shard extents.
  std::int64_t size() const noexcept { return size_; }
  // Number of physical copies of each element: the product of the replica extents.
  std::int64_t replica_count() const noexcept {
    return static_cast<std::int64_t>(replica_offsets_.size());
  }
  // The axes that appear in an iter or an offset.
  AxisMask axes() const noexcept { return axes_; }

  // D(f) + O, replicas excluded. Requires: 0 <= flat < size(). No allocation.
  void apply_flat(std::int64_t flat, PhysCoord& out) const noexcept;
  // Every r in R (the first one is all zero); add each to apply_flat() for the full set.
  Span<const PhysCoord> replica_offsets() const noexcept { return replica_offsets_; }
  // The full set { D(f) + r + O }, one entry per replica; kLayout when flat is out of range.
  Result<std::vector<PhysCoord>> apply(std::int64_t flat) const;

  // Drops unit iters, fuses adjacent shard iters on one axis whose strides nest
  // (e1:s1, e2:s2 with s1 == e2*s2 -> e1*e2:s2), sorts and fuses replica iters, drops zero
  // offsets. Postcondition: the same map; canonicalize() is idempotent. Used for equality of
  // meaning (equivalent()), never for validation.
  Layout canonicalize() const;
  // canonicalize() == other.canonicalize(): a sufficient test that both map every index alike.
  bool equivalent(const Layout& other) const { return canonicalize() == other.canonicalize(); }

  // Canonical text: "S[(64,2,64):(1@TLane,64@TLane,1@TCol)] + R[2:4@warpid] + 5@warpid"; axis m
  // prints without '@'. Layout::parse(to_string()) == *this.
  std::string to_string() const;
  // Stable across runs and platforms (FNV-1a over the fields).
  std::uint64_t hash() const noexcept;
  // Structural: the same iters in the same order, the same replicas and offsets.
  friend bool operator==(const Layout& a, const Layout& b) {
    return a.shard_ == b.shard_ && a.replica_ == b.replica_ && a.offsets_ == b.offsets_;
  }
  friend bool operator!=(const Layout& a, const Layout& b) { return !(a == b); }

 private:
  Layout() = default;

  std::vector<Iter> shard_;
  std::vector<Iter> replica_;
  std::vector<Offset> offsets_;
  std::int64_t size_ = 1;
  AxisMask axes_ = 0;
  std::vector<std::int64_t> suffix_;  // product of the extents after shard iter i
  // When every extent and suffix is a power of two (most layouts), apply_flat shifts and masks
  // instead of dividing: NAME_coord's map evaluates every element of a register view.
  bool power_of_two_ = false;
  std::vector<int> suffix_shift_;  // log2 suffix_[i] when power_of_two_
  PhysCoord base_;                 // O as a coordinate
  std::vector<PhysCoord> replica_offsets_;
};

std::ostream& operator<<(std::ostream& os, const Layout& layout);
std::ostream& operator<<(std::ostream& os, Axis axis);

}  // namespace tmem
TMEMJIT_API_END
