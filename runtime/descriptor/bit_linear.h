// BitLinearMap: a map from n-bit inputs to vectors of integers that is linear over the input bits,
// f(x) = origin + sum over the set bits b of x of images[b] (docs/architecture.md, "Bit-linear
// maps"). The native images of tcgen05.ld/st (docs/tcgen05-rules.md §Images) and the register
// views of power-of-two layouts are such maps; the library probes a function on single bits,
// checks it, and then works on the basis: a lane's cell, a view's closed form, whether an .xN is
// copies of its granule (docs/specialization.md §Tiers). A layout that is not bit-linear has no
// BitLinearMap, and view_placement stays the exact evaluation for every layout.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

namespace tmem {

class BitLinearMap {
 public:
  using Vector = std::vector<std::int64_t>;
  // What probe() checks beyond 0 and the single bits: every pair of bits (a carry between two
  // bits shows there), or every input.
  enum class Verify { kPairs, kAll };
  // The function probed: writes its value at input x to `value` (resized by the function) and
  // returns true, or returns false where it has none (the probe fails). The vector is reused
  // from call to call, so probing every input allocates nothing.
  using Function = std::function<bool(std::uint64_t x, Vector& value)>;

  // The map of `f` over `bits` input bits (at most 62): f(0) and f(1 << b) give the origin and
  // the images, then `verify` checks f against them. nullopt when f has no value at an input it
  // asks, gives vectors of different widths, or differs from the map anywhere it checks.
  static std::optional<BitLinearMap> probe(int bits, const Function& f, Verify verify);
  // The map with these parts; nullopt unless every image has the origin's width and there are at
  // most 62 images.
  static std::optional<BitLinearMap> make(Vector origin, std::vector<Vector> images);

  int bits() const noexcept { return static_cast<int>(images_.size()); }
  std::size_t width() const noexcept { return origin_.size(); }
  const Vector& origin() const noexcept { return origin_; }
  const Vector& image(int bit) const { return images_.at(static_cast<std::size_t>(bit)); }
  const std::vector<Vector>& images() const noexcept { return images_; }
  // f(x); bits of x at or above bits() are ignored.
  Vector apply(std::uint64_t x) const;

  // x -> this(inner(x)). `inner` must have width 1 and carry nothing: its origin and images use
  // pairwise disjoint bits below bits(). nullopt otherwise.
  std::optional<BitLinearMap> compose(const BitLinearMap& inner) const;
  // The inverse of a permutation of bits: width 1, origin 0, and the images 1 << p for every
  // p < bits() once. nullopt for any other map.
  std::optional<BitLinearMap> inverse() const;
  // `copies` (a power of two) of this map side by side: the input gains log2(copies) high bits
  // numbering the copy, copy c adding c * stride. nullopt when copies is not a power of two, the
  // stride has another width, or the input would pass 62 bits.
  std::optional<BitLinearMap> product(std::int64_t copies, const Vector& stride) const;

  friend bool operator==(const BitLinearMap& a, const BitLinearMap& b) {
    return a.origin_ == b.origin_ && a.images_ == b.images_;
  }
  friend bool operator!=(const BitLinearMap& a, const BitLinearMap& b) { return !(a == b); }

 private:
  BitLinearMap(Vector origin, std::vector<Vector> images)
      : origin_(std::move(origin)), images_(std::move(images)) {}

  Vector origin_;
  std::vector<Vector> images_;  // images_[b]: what input bit b adds
};

}  // namespace tmem
