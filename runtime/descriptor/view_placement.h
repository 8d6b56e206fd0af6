// Where every element of a transfer lives according to its two views alone: the register view
// gives (thread, slot), the TMEM view gives (lane, column). `tmemjit run` predicts the data of its
// cross-checks from this, never from the Plan, so a planning bug cannot hide in both.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tmem/result.h"
#include "tmem/transfer.h"

namespace tmem::detail {

// Bits [shift, shift + Placement::piece_bits) of register `slot` of CTA thread `thread`.
struct RegisterBits {
  std::int64_t thread = -1;  // -1: the register view's thread axes disagree
  std::int64_t slot = 0;
  int shift = 0;
};

// Bits [shift, shift + Placement::piece_bits) of TMEM cell (lane, column), relative to the
// allocation's base address.
struct TmemBits {
  std::int64_t lane = 0;
  std::int64_t column = 0;
  int shift = 0;
};

// The pieces of a transfer: 32-bit words, or 16-bit halves when either operand has a 16-bit
// dtype. Piece p is element (group, repeat, atom) of both operands (docs/transfer-semantics.md
// §Operands: both shapes are (*group, *repeat, *atom), the register atom of 16x32bx2 adds the
// access axis that picks tmem or tmem2). Each piece lists every replica on each side.
class Placement {
 public:
  int piece_bits() const noexcept { return piece_bits_; }
  std::int64_t pieces() const noexcept { return static_cast<std::int64_t>(reg_begin_.size()) - 1; }
  std::span<const RegisterBits> registers(std::int64_t piece) const {
    return {regs_.data() + reg_begin_[static_cast<size_t>(piece)],
            static_cast<size_t>(reg_begin_[static_cast<size_t>(piece) + 1] -
                                reg_begin_[static_cast<size_t>(piece)])};
  }
  std::span<const TmemBits> tmem(std::int64_t piece) const {
    return {tmem_.data() + tmem_begin_[static_cast<size_t>(piece)],
            static_cast<size_t>(tmem_begin_[static_cast<size_t>(piece) + 1] -
                                tmem_begin_[static_cast<size_t>(piece)])};
  }
  // The piece's coordinate in the register view; a 16-bit half of a 32-bit register element adds
  // a trailing 0 or 1.
  std::vector<std::int64_t> coordinate(std::int64_t piece) const;

 private:
  friend Result<Placement> place_elements(const TransferSpec& spec);
  int piece_bits_ = 32;
  int pieces_per_reg_element_ = 1;
  std::vector<std::int64_t> regs_shape_;
  std::vector<RegisterBits> regs_;
  std::vector<std::int64_t> reg_begin_{0};
  std::vector<TmemBits> tmem_;
  std::vector<std::int64_t> tmem_begin_{0};
};

// Requires nothing of the spec beyond TransferSpec::make; operands whose sizes do not pair
// element by element are kRule.
Result<Placement> place_elements(const TransferSpec& spec);

// "(1, 5, 3)".
std::string coordinate_text(const std::vector<std::int64_t>& coordinate);

}  // namespace tmem::detail
