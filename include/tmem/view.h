// tmem::View: a re-indexing of a Tensor's logical index space (rearrange, view, permute, index)
// that never moves data, and its map to physical coordinates (docs/descriptor-language.md §Views).
//
// Representation: each view dim is a list of digits (extent, stride) into the base tensor's flat
// row-major index, plus one flat offset. A view coordinate i maps to the base index
// offset + sum over dims d of sum over digits (digit value * stride), where i[d] is split over the
// dim's digits (the last digit lowest). Operations that this cannot express exactly are errors.
#pragma once

#include <climits>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tmem/dtype.h"
#include "tmem/export.h"
#include "tmem/layout.h"
#include "tmem/result.h"
#include "tmem/span.h"
#include "tmem/tensor.h"

TMEMJIT_API_BEGIN
namespace tmem {

class View;
namespace detail {
class DescriptorParser;
Result<View> parse_view(std::string_view text);
}  // namespace detail

// One digit of a view dim: `extent` values, each step `stride` base-flat-index units.
struct Digit {
  std::int64_t extent = 1;
  std::int64_t stride = 0;
  friend bool operator==(const Digit& a, const Digit& b) {
    return a.extent == b.extent && a.stride == b.stride;
  }
  friend bool operator!=(const Digit& a, const Digit& b) { return !(a == b); }
};

// One entry of an index expression: an integer (drops the dim) or a half-open range (keeps it).
struct Slice {
  static constexpr std::int64_t kToEnd = INT64_MAX;  // `end` of "a:": up to the dim's extent
  static Slice at(std::int64_t index) {
    return {index, index < kToEnd ? index + 1 : kToEnd, false};  // no overflow at INT64_MAX
  }
  static Slice range(std::int64_t begin, std::int64_t end = kToEnd) { return {begin, end, true}; }
  static Slice all() { return {0, kToEnd, true}; }
  std::int64_t begin = 0;
  std::int64_t end = kToEnd;
  bool keep = true;  // false: an integer index, which drops the dim
};

class View {
 public:
  // The identity view of `base`: the same shape, every element in place.
  explicit View(Tensor base);
  // Parses the view grammar of docs/descriptor-language.md §Grammar, e.g.
  // tmem_datapath_layout("B",64,128).rearrange("(wh r) (wl c) -> (wl wh) r c", wh=2, r=32, wl=2)
  static Result<View> parse(std::string_view text);

  // einops: "(a b) c -> c (b a)" splits, merges and permutes; `sizes` gives extents by name; each
  // group may leave one name's size unknown (inferred). A name appears once per side, both sides
  // name the same axes; "1" or "()" is a unit dim.
  Result<View> rearrange(std::string_view pattern,
                         const std::vector<std::pair<std::string, std::int64_t>>& sizes = {}) const;
  // Reshape in row-major order; one extent may be -1 (inferred).
  Result<View> view(Span<const std::int64_t> shape) const;
  // New dim i is old dim order[i].
  Result<View> permute(Span<const std::int64_t> order) const;
  // Python indexing: up to ndim() slices; missing trailing slices keep their dims whole.
  Result<View> index(Span<const Slice> slices) const;

  const Tensor& base() const noexcept { return base_; }
  DType dtype() const noexcept { return base_.dtype(); }
  Span<const std::int64_t> shape() const noexcept { return shape_; }
  int ndim() const noexcept { return static_cast<int>(shape_.size()); }
  std::int64_t size() const noexcept { return size_; }
  // The axes the base layout uses (PhysCoord entries outside it are 0).
  AxisMask axes() const noexcept { return base_.layout().axes(); }

  // The base tensor's flat index of the element at row-major index `flat` of this view.
  // Requires: 0 <= flat < size(). No allocation.
  std::int64_t base_index(std::int64_t flat) const noexcept;
  // D(x) + O of that element, replicas excluded. Requires: 0 <= flat < size(). No allocation.
  void apply_flat(std::int64_t flat, PhysCoord& out) const noexcept {
    base_.layout().apply_flat(base_index(flat), out);
  }
  // The replica deltas of the base layout (at least one, the first all zero).
  Span<const PhysCoord> replica_offsets() const noexcept {
    return base_.layout().replica_offsets();
  }
  // The full set of physical coordinates of the element at view coordinate `coord`, one per
  // replica; kLayout when the rank or a coordinate is out of range. Raw layout units: for 16-bit
  // dtypes TCol and m count 16-bit halves (unit u is half u % 2 of 32-bit word u / 2).
  Result<std::vector<PhysCoord>> apply(Span<const std::int64_t> coord) const;

  // The digits of dim d (unit digits dropped, contiguous digits fused) and the base offset.
  Span<const Digit> digits(int dim) const { return dims_[static_cast<size_t>(dim)]; }
  std::int64_t offset() const noexcept { return offset_; }

  // The view as built, with normalized spacing; View::parse(to_string()) == *this.
  std::string to_string() const { return text_; }
  std::uint64_t hash() const noexcept;
  // Equal base tensors, shapes, offsets and per-dim digits: the same elements in the same order,
  // however the view was built.
  friend bool operator==(const View& a, const View& b) {
    return a.base_ == b.base_ && a.shape_ == b.shape_ && a.offset_ == b.offset_ &&
           a.dims_ == b.dims_;
  }
  friend bool operator!=(const View& a, const View& b) { return !(a == b); }

 private:
  friend class detail::DescriptorParser;
  View(Tensor base, std::string text);
  // rearrange() with errors in the pattern reported at source column `column` + offset (0: API).
  Result<View> rearrange_at(std::string_view pattern,
                            const std::vector<std::pair<std::string, std::int64_t>>& sizes,
                            int column) const;
  View with(std::vector<std::vector<Digit>> dims, std::int64_t offset,
            const std::string& suffix) const;

  Tensor base_;
  std::vector<std::int64_t> shape_;
  std::vector<std::vector<Digit>> dims_;  // canonical: no unit digits, contiguous digits fused
  std::int64_t offset_ = 0;
  std::int64_t size_ = 1;
  std::vector<Digit> flat_digits_;         // every dim's digits in order, for base_index()
  std::vector<std::int64_t> flat_suffix_;  // product of the extents after flat digit i
  bool flat_power_of_two_ = false;         // every extent and suffix a power of two: shifts
  std::vector<int> flat_shift_;            // log2 flat_suffix_[i] when flat_power_of_two_
  std::string text_;
};

std::ostream& operator<<(std::ostream& os, const View& view);

}  // namespace tmem
TMEMJIT_API_END
