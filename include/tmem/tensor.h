// tmem::Tensor: a logical shape, a dtype and the layout that places it; TIRx's layout factories.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tmem/dtype.h"
#include "tmem/export.h"
#include "tmem/layout.h"
#include "tmem/result.h"
#include "tmem/span.h"

TMEMJIT_API_BEGIN
namespace tmem {

class Tensor {
 public:
  // Requires: 1 <= shape.size() <= kMaxIters, every extent >= 1, product(shape) ==
  // layout.size() (kLayout otherwise), product <= kMaxElements (kLimit otherwise).
  static Result<Tensor> make(std::vector<std::int64_t> shape, Layout layout,
                             DType dtype = DType::kF32);

  Span<const std::int64_t> shape() const noexcept { return shape_; }
  DType dtype() const noexcept { return dtype_; }
  const Layout& layout() const noexcept { return layout_; }
  std::int64_t size() const noexcept { return layout_.size(); }

  // "tensor((64,128), S[(64,2,64):(1@TLane,64@TLane,1@TCol)], f32)"; re-parses with View::parse.
  std::string to_string() const;
  std::uint64_t hash() const noexcept;
  friend bool operator==(const Tensor& a, const Tensor& b) {
    return a.shape_ == b.shape_ && a.dtype_ == b.dtype_ && a.layout_ == b.layout_;
  }
  friend bool operator!=(const Tensor& a, const Tensor& b) { return !(a == b); }

 private:
  Tensor(std::vector<std::int64_t> shape, Layout layout, DType dtype)
      : shape_(std::move(shape)), layout_(std::move(layout)), dtype_(dtype) {}

  std::vector<std::int64_t> shape_;
  Layout layout_;
  DType dtype_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& tensor);

// "(64,128)"; one-dimensional shapes print as "(64,)".
std::string shape_to_string(Span<const std::int64_t> shape);

// TIRx's tmem_datapath_layout (docs/descriptor-language.md §Factories, PTX ISA "Data Path Layout
// Organization"): logical (r, c) of a (rows, cols) tile in TMEM, for letters A-G.
//   A, D: rows 128, S[(128,cols):(1@TLane,1@TCol)]
//   B, E: rows 64,  S[(64,2,cols/2):(1@TLane,64@TLane,1@TCol)]   (cols even)
//   F, C: rows 64,  S[(4,16,cols):(32@TLane,1@TLane,1@TCol)] (+ 16@TLane when sub_slab = 1)
//   G:    rows 32,  S[(32,4,cols/4):(1@TLane,32@TLane,1@TCol)]   (cols a multiple of 4)
// Errors (kLayout): unknown letter; rows other than the letter's; cols < 1; sub_slab not 0 or 1,
// or non-zero for A, D, B, E, G; odd cols for B, E; cols not a multiple of 4 for G.
Result<Tensor> tmem_datapath_layout(std::string_view letter, std::int64_t rows, std::int64_t cols,
                                    std::int64_t sub_slab = 0, DType dtype = DType::kF32);

// TIRx's wg_local_layout: a (rows, cols) tile whose row r lives in thread r of the warpgroup and
// whose column c is register slot c: S[(rows,cols):(1@tid_in_wg,1)]. rows defaults to 128 and
// must be in [1, 128]; cols >= 1.
Result<Tensor> wg_local_layout(std::int64_t cols, std::optional<std::int64_t> rows = std::nullopt,
                               DType dtype = DType::kF32);

}  // namespace tmem
TMEMJIT_API_END
