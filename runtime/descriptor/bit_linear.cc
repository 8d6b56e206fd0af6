// Maps linear over the input bits; see bit_linear.h.
#include "runtime/descriptor/bit_linear.h"

#include <bit>
#include <utility>

namespace tmem {
namespace {

constexpr int kMaxBits = 62;

void add(BitLinearMap::Vector& sum, const BitLinearMap::Vector& term) {
  for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += term[i];
}

}  // namespace

std::optional<BitLinearMap> BitLinearMap::make(Vector origin, std::vector<Vector> images) {
  if (images.size() > static_cast<std::size_t>(kMaxBits)) return std::nullopt;
  for (const Vector& image : images)
    if (image.size() != origin.size()) return std::nullopt;
  return BitLinearMap(std::move(origin), std::move(images));
}

std::optional<BitLinearMap> BitLinearMap::probe(int bits, const Function& f, Verify verify) {
  if (bits < 0 || bits > kMaxBits) return std::nullopt;
  Vector origin, at;
  if (!f(0, origin)) return std::nullopt;
  std::vector<Vector> images;
  for (int b = 0; b < bits; ++b) {
    if (!f(std::uint64_t{1} << b, at) || at.size() != origin.size()) return std::nullopt;
    for (std::size_t i = 0; i < at.size(); ++i) at[i] -= origin[i];
    images.push_back(at);
  }
  BitLinearMap map(std::move(origin), std::move(images));
  if (verify == Verify::kAll) {
    // Every input in Gray-code order, so the map's value changes by one image per step.
    Vector sum = map.origin_;
    std::uint64_t x = 0;
    for (std::uint64_t step = 1; step < std::uint64_t{1} << bits; ++step) {
      const int b = std::countr_zero(step);
      x ^= std::uint64_t{1} << b;
      const Vector& image = map.images_[static_cast<std::size_t>(b)];
      for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += (x >> b & 1) ? image[i] : -image[i];
      if (std::popcount(x) > 1 && (!f(x, at) || at != sum)) return std::nullopt;
    }
  } else {
    for (int k = 0; k < bits; ++k)
      for (int l = k + 1; l < bits; ++l) {
        const std::uint64_t x = (std::uint64_t{1} << k) | (std::uint64_t{1} << l);
        if (!f(x, at) || at != map.apply(x)) return std::nullopt;
      }
  }
  return map;
}

BitLinearMap::Vector BitLinearMap::apply(std::uint64_t x) const {
  Vector sum = origin_;
  for (int b = 0; b < bits(); ++b)
    if (x >> b & 1) add(sum, images_[static_cast<std::size_t>(b)]);
  return sum;
}

std::optional<BitLinearMap> BitLinearMap::compose(const BitLinearMap& inner) const {
  if (inner.width() != 1) return std::nullopt;
  // The bits inner sets: its origin's, then each image's, none shared and all below bits().
  std::uint64_t used = 0;
  auto claim = [&](std::int64_t value) {
    const auto v = static_cast<std::uint64_t>(value);
    if (value < 0 || v >> bits() != 0 || (used & v) != 0) return false;
    used |= v;
    return true;
  };
  if (!claim(inner.origin_[0])) return std::nullopt;
  std::vector<Vector> images;
  for (const Vector& image : inner.images_) {
    if (!claim(image[0])) return std::nullopt;
    Vector sum(width(), 0);
    for (int b = 0; b < bits(); ++b)
      if (static_cast<std::uint64_t>(image[0]) >> b & 1) add(sum, images_[static_cast<size_t>(b)]);
    images.push_back(std::move(sum));
  }
  return BitLinearMap(apply(static_cast<std::uint64_t>(inner.origin_[0])), std::move(images));
}

std::optional<BitLinearMap> BitLinearMap::inverse() const {
  if (width() != 1 || origin_[0] != 0) return std::nullopt;
  std::vector<Vector> images(images_.size());
  for (int b = 0; b < bits(); ++b) {
    const auto v = static_cast<std::uint64_t>(images_[static_cast<std::size_t>(b)][0]);
    if (!std::has_single_bit(v)) return std::nullopt;
    const auto p = static_cast<std::size_t>(std::countr_zero(v));
    if (p >= images.size() || !images[p].empty()) return std::nullopt;
    images[p] = {std::int64_t{1} << b};
  }
  return BitLinearMap({0}, std::move(images));
}

std::optional<BitLinearMap> BitLinearMap::product(std::int64_t copies, const Vector& stride) const {
  if (copies <= 0 || !std::has_single_bit(static_cast<std::uint64_t>(copies)) ||
      stride.size() != width())
    return std::nullopt;
  std::vector<Vector> images = images_;
  for (std::int64_t step = 1; step < copies; step *= 2) {
    Vector image = stride;
    for (std::int64_t& v : image) v *= step;
    images.push_back(std::move(image));
  }
  return make(origin_, std::move(images));
}

}  // namespace tmem
