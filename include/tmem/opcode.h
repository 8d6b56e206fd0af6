// tmem::Opcode: one tcgen05.ld / tcgen05.st form, its operand counts and atom extents.
//
// The table in opcode.cc is the single source of truth for every form (docs/tcgen05-rules.md
// §Shapes, §Syntax, §Registers, PTX ISA §9.7.16.8.3-4, Tables 49/50); the parser, the image, the
// checker and the PTX printer derive from it.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

#include "tmem/export.h"
#include "tmem/reduction.h"
#include "tmem/result.h"
#include "tmem/span.h"
#include "tmem/target.h"

TMEMJIT_API_BEGIN
namespace tmem {

enum class Direction { kLoad, kStore };
enum class Shape { k32x32b, k16x64b, k16x128b, k16x256b, k16x32bx2 };

std::string_view to_string(Direction direction) noexcept;  // "ld", "st"
std::string_view to_string(Shape shape) noexcept;          // "32x32b", ...

// Every shape, in the order of the PTX ISA table.
Span<const Shape> all_shapes() noexcept;
// Rows of TMEM one access touches: 32 for 32x32b, 16 otherwise (PTX ISA §9.7.16.2.3).
int shape_rows(Shape shape) noexcept;
// Registers per thread per unit of .num: 1 (32x32b, 16x64b, 16x32bx2), 2 (16x128b), 4 (16x256b).
int shape_regs_per_num(Shape shape) noexcept;
// 32-bit columns per unit of .num in one access, without pack: 1, 2, 4, 8, 1.
int shape_cols_per_num(Shape shape) noexcept;

// Maximum registers per thread of one tcgen05.ld/st (Tables 49/50, rule R4).
inline constexpr int kMaxRegsPerThread = 128;

class Opcode {
 public:
  // Parses the PTX spelling, e.g. "tcgen05.ld.sync.aligned.16x256b.x4.b32" or
  // "tcgen05.ld.red.sync.aligned.32x32b.x8.max.abs.f32". Every violation of rules R1-R9 and R14 is
  // an Error naming the offending token and the allowed set (Error::rule() names the rule).
  static Result<Opcode> parse(std::string_view text);
  // Builds a form from its fields; the same rules as parse().
  static Result<Opcode> make(Direction direction, Shape shape, int num, bool pack);
  // Builds tcgen05.ld.red: a load that also reduces each thread's loaded values (rule R14: 32x32b
  // or 16x32bx2, .num >= x2, .abs/.NaN on f32 only).
  static Result<Opcode> make_load_reduce(Shape shape, int num, Reduction reduction);

  Direction direction() const noexcept { return direction_; }
  Shape shape() const noexcept { return shape_; }
  int num() const noexcept { return num_; }  // the N of .xN
  // .pack::16b on ld, .unpack::16b on st: the TMEM image holds 16-bit halves (docs/tcgen05-rules.md
  // §Packing).
  bool packed() const noexcept { return packed_; }
  bool is_load() const noexcept { return direction_ == Direction::kLoad; }
  bool is_split() const noexcept { return shape_ == Shape::k16x32bx2; }  // needs immHalfSplitoff
  // tcgen05.ld.red: the load also writes `redval`, one 32-bit register per thread holding the
  // min/max over the values this thread loaded (docs/tcgen05-rules.md §Targets). Its registers and
  // image are the plain load's.
  const std::optional<Reduction>& reduction() const noexcept { return reduction_; }
  bool reduces() const noexcept { return reduction_.has_value(); }
  // The same form without .red (the plain tcgen05.ld of the same shape, .num and pack).
  Opcode without_reduction() const noexcept { return Opcode(direction_, shape_, num_, packed_); }

  // Registers per thread of one instruction; pack does not change it (docs/tcgen05-rules.md
  // §Registers).
  int regs_per_thread() const noexcept { return shape_regs_per_num(shape_) * num_; }
  // Register-image atom (rows, cols) of one access: the logical coordinates of register words.
  int atom_rows() const noexcept { return shape_rows(shape_); }
  int atom_cols() const noexcept { return shape_cols_per_num(shape_) * num_; }
  // TMEM columns (32-bit cells) one access touches: atom_cols(), doubled by pack.
  int atom_tmem_cols() const noexcept { return atom_cols() * (packed_ ? 2 : 1); }
  // Accesses per instruction: 2 for 16x32bx2 (at taddr and taddr + imm), else 1.
  int accesses() const noexcept { return is_split() ? 2 : 1; }
  // TMEM cells touched by one instruction in all its accesses, per warp.
  int tmem_cells() const noexcept { return atom_rows() * atom_tmem_cols() * accesses(); }

  // Checks the operands of one instruction against the form: the register vector length (R5),
  // the presence of immHalfSplitoff (R9: required by 16x32bx2, forbidden otherwise) and of redval
  // (R14: required by ld.red, forbidden otherwise).
  std::optional<Error> check_operands(int vector_length, bool has_immediate,
                                      bool has_redval = false) const;

  // Lowest PTX ISA version of the instruction itself: 8.6, 8.8 for ld.red; a target may need more.
  PtxVersion min_ptx_version() const noexcept {
    return reduces() ? PtxVersion{8, 8} : PtxVersion{8, 6};
  }
  // Lowest .version to use for `target`: the larger of the instruction's and the target's.
  PtxVersion min_ptx_version(Target target) const noexcept;
  // Targets that accept this form: every tcgen05 target for ld/st; sm_103a/f and sm_110a/f for
  // ld.red (rule R14; not sm_100a/f).
  Span<const Target> targets() const noexcept;
  bool supports(Target target) const noexcept;
  // The rule R14 error for using this form on `target` (which does not support it); names the
  // targets that do.
  Error unsupported_target_error(Target target) const;

  // Canonical PTX spelling: tcgen05.{ld|st}.sync.aligned.SHAPE.xN[.pack::16b|.unpack::16b].b32,
  // or tcgen05.ld.red.sync.aligned.SHAPE.xN.{min|max}[.abs][.NaN].{f32|u32|s32}
  std::string to_string() const;

  friend bool operator==(const Opcode& a, const Opcode& b) {
    return a.direction_ == b.direction_ && a.shape_ == b.shape_ && a.num_ == b.num_ &&
           a.packed_ == b.packed_ && a.reduction_ == b.reduction_;
  }
  friend bool operator!=(const Opcode& a, const Opcode& b) { return !(a == b); }
  std::uint64_t hash() const noexcept;

 private:
  Opcode(Direction direction, Shape shape, int num, bool packed,
         std::optional<Reduction> reduction = std::nullopt)
      : direction_(direction), shape_(shape), num_(num), packed_(packed), reduction_(reduction) {}

  Direction direction_;
  Shape shape_;
  int num_;
  bool packed_;
  std::optional<Reduction> reduction_;
};

std::ostream& operator<<(std::ostream& os, const Opcode& opcode);

}  // namespace tmem
TMEMJIT_API_END
