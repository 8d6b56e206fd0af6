// Tensor: shape/layout agreement, canonical text and the TIRx layout factories.
#include "tmem/tensor.h"

#include <ostream>

#include "runtime/support/hash.h"

namespace tmem {
namespace {

Error invalid(std::string message) { return Error(ErrorCode::kLayout, std::move(message)); }

}  // namespace

std::string shape_to_string(Span<const std::int64_t> shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? "," : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

Result<Tensor> Tensor::make(std::vector<std::int64_t> shape, Layout layout, DType dtype) {
  if (shape.empty()) return invalid("a tensor shape needs at least one extent");
  if (shape.size() > static_cast<size_t>(kMaxIters))
    return Error(ErrorCode::kLimit,
                 "a tensor shape has more than " + std::to_string(kMaxIters) + " extents");
  std::int64_t size = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 1)
      return invalid("tensor shape " + shape_to_string(shape) + " has extent " +
                     std::to_string(shape[i]) + " in dim " + std::to_string(i) +
                     " but extents must be at least 1");
    if (__builtin_mul_overflow(size, shape[i], &size) || size > kMaxElements)
      return Error(ErrorCode::kLimit,
                   "tensor shape " + shape_to_string(shape) + " has more than 2^40 elements");
  }
  if (size != layout.size())
    return invalid("tensor shape " + shape_to_string(shape) + " has " + std::to_string(size) +
                   " elements but layout " + layout.to_string() + " has " +
                   std::to_string(layout.size()));
  return Tensor(std::move(shape), std::move(layout), dtype);
}

std::string Tensor::to_string() const {
  return "tensor(" + shape_to_string(shape_) + ", " + layout_.to_string() + ", " +
         std::string(tmem::to_string(dtype_)) + ")";
}

std::uint64_t Tensor::hash() const noexcept {
  WordHasher hasher(0x54656e736f72ull);  // "Tensor"
  auto mix = [&hasher](std::uint64_t word) { hasher.add(word); };
  mix(layout_.hash());
  mix(shape_.size());
  for (std::int64_t extent : shape_) mix(static_cast<std::uint64_t>(extent));
  mix(static_cast<std::uint64_t>(dtype_));
  return hasher.finish();
}

std::ostream& operator<<(std::ostream& os, const Tensor& tensor) {
  return os << tensor.to_string();
}

Result<Tensor> tmem_datapath_layout(std::string_view letter, std::int64_t rows, std::int64_t cols,
                                    std::int64_t sub_slab, DType dtype) {
  const std::string name = "tmem_datapath_layout(\"" + std::string(letter) + "\")";
  if (letter.size() != 1 || letter[0] < 'A' || letter[0] > 'G')
    return invalid("unknown datapath layout letter \"" + std::string(letter) +
                   "\" (allowed: A, B, C, D, E, F, G)");
  const char id = letter[0];
  const std::int64_t want_rows = (id == 'A' || id == 'D') ? 128 : id == 'G' ? 32 : 64;
  if (rows != want_rows)
    return invalid(name + " needs rows " + std::to_string(want_rows) + ", not " +
                   std::to_string(rows));
  if (cols < 1) return invalid(name + " needs cols >= 1, not " + std::to_string(cols));
  if (sub_slab != 0 && sub_slab != 1)
    return invalid(name + " needs sub_slab 0 or 1, not " + std::to_string(sub_slab));
  if (sub_slab != 0 && id != 'C' && id != 'F') {
    const char* why = (id == 'A' || id == 'D') ? "it spans both 16-lane sub-slabs"
                      : id == 'G'              ? "it spans all 32 lanes of a slab"
                                               : "it folds column halves across 64-lane halves";
    return invalid(name + " takes no sub_slab because " + why);
  }
  std::vector<Iter> iters;
  std::vector<Offset> offsets;
  switch (id) {
    case 'A':
    case 'D':
      iters = {{128, 1, Axis::kTLane}, {cols, 1, Axis::kTCol}};
      break;
    case 'B':
    case 'E':
      if (cols % 2 != 0) return invalid(name + " needs even cols, not " + std::to_string(cols));
      iters = {{64, 1, Axis::kTLane}, {2, 64, Axis::kTLane}, {cols / 2, 1, Axis::kTCol}};
      break;
    case 'C':
    case 'F':
      iters = {{4, 32, Axis::kTLane}, {16, 1, Axis::kTLane}, {cols, 1, Axis::kTCol}};
      if (sub_slab == 1) offsets.push_back({Axis::kTLane, 16});
      break;
    default:  // 'G'
      if (cols % 4 != 0)
        return invalid(name + " needs cols a multiple of 4, not " + std::to_string(cols));
      iters = {{32, 1, Axis::kTLane}, {4, 32, Axis::kTLane}, {cols / 4, 1, Axis::kTCol}};
      break;
  }
  auto layout = Layout::make(std::move(iters), {}, std::move(offsets));
  if (!layout) return std::move(layout).error();
  return Tensor::make({rows, cols}, std::move(*layout), dtype);
}

Result<Tensor> wg_local_layout(std::int64_t cols, std::optional<std::int64_t> rows, DType dtype) {
  const std::int64_t r = rows.value_or(128);
  if (r < 1 || r > 128)
    return invalid("wg_local_layout needs rows in [1, 128] (threads of a warpgroup), not " +
                   std::to_string(r));
  if (cols < 1) return invalid("wg_local_layout needs cols >= 1, not " + std::to_string(cols));
  auto layout = Layout::make({{r, 1, Axis::kTidInWg}, {cols, 1, Axis::kM}});
  if (!layout) return std::move(layout).error();
  return Tensor::make({r, cols}, std::move(*layout), dtype);
}

}  // namespace tmem
