// Element placement from the views: the register view's thread axes and m, the TMEM view's
// TLane and TCol, paired element by element (docs/descriptor-language.md §Semantics,
// docs/transfer-semantics.md §Rules).
#include "runtime/descriptor/view_placement.h"

#include "runtime/descriptor/owner.h"

namespace tmem::detail {
namespace {

// CTA thread of a register element: the owner by the same reading as tmem::check
// (runtime/descriptor/owner.h); at warp scope a layout without warp axes means the scope's warp.
// -1 when the axes disagree, name no thread, or say nothing about the lane.
std::int64_t thread_of(const PhysCoord& at, AxisMask axes, const Scope& scope) {
  Owner owner = owner_of(at, axes);
  if (owner.warp == -1 && scope.kind() == Scope::Kind::kWarp) owner.warp = scope.warp_id();
  if (owner.lane < 0 || owner.warp < 0) return -1;
  return kLanesPerWarp * owner.warp + owner.lane;
}

}  // namespace

std::string coordinate_text(const std::vector<std::int64_t>& coordinate) {
  std::string text = "(";
  for (size_t i = 0; i < coordinate.size(); ++i)
    text += (i ? ", " : "") + std::to_string(coordinate[i]);
  return text + (coordinate.size() == 1 ? ",)" : ")");
}

std::vector<std::int64_t> Placement::coordinate(std::int64_t piece) const {
  std::int64_t element = piece / pieces_per_reg_element_;
  std::vector<std::int64_t> coord(regs_shape_.size());
  for (size_t d = regs_shape_.size(); d-- > 0;) {
    coord[d] = element % regs_shape_[d];
    element /= regs_shape_[d];
  }
  if (pieces_per_reg_element_ == 2) coord.push_back(piece % 2);
  return coord;
}

Result<Placement> place_elements(const TransferSpec& spec) {
  const Opcode& op = spec.op();
  const View& regs = spec.regs();
  const int accesses = spec.tmem2() ? 2 : 1;
  const std::int64_t words =
      static_cast<std::int64_t>(op.atom_rows()) * op.atom_cols();  // register words per access
  const int reg_halves = bits(regs.dtype()) == 16 ? 2 : 1;
  const int tmem_halves = bits(spec.tmem().dtype()) == 16 ? 2 : 1;
  const int per_word = reg_halves == 2 || tmem_halves == 2 ? 2 : 1;  // pieces per 32-bit word

  auto mismatch = [&](const std::string& what) {
    return Error(ErrorCode::kRule, "the operands do not pair element by element: " + what,
                 "tmem operand: " + spec.tmem().to_string() + "\nregs operand: " + regs.to_string())
        .set_rule(Rule::kShape);
  };
  const std::int64_t tmem_size = spec.tmem().size();
  if (tmem_size % (words * tmem_halves) != 0)
    return mismatch("the TMEM operand has " + std::to_string(tmem_size) +
                    " elements, not a multiple of the " + std::to_string(words * tmem_halves) +
                    " of one " + op.to_string() + " access");
  const std::int64_t outer = tmem_size / (words * tmem_halves);  // groups x repeats
  if (spec.tmem2() && spec.tmem2()->size() != tmem_size)
    return mismatch("the second TMEM region has " + std::to_string(spec.tmem2()->size()) +
                    " elements, the first " + std::to_string(tmem_size));
  if (regs.size() != outer * accesses * words * reg_halves)
    return mismatch("the register operand has " + std::to_string(regs.size()) +
                    " elements, expected " + std::to_string(outer * accesses * words * reg_halves));

  Placement placement;
  placement.piece_bits_ = per_word == 2 ? 16 : 32;
  placement.pieces_per_reg_element_ = reg_halves == 2 ? 1 : per_word;
  placement.regs_shape_.assign(regs.shape().begin(), regs.shape().end());
  const std::int64_t pieces = outer * accesses * words * per_word;
  placement.reg_begin_.reserve(static_cast<size_t>(pieces) + 1);
  placement.tmem_begin_.reserve(static_cast<size_t>(pieces) + 1);
  const int reg_units = units_per_word(regs.dtype());
  const AxisMask reg_axes = regs.axes();

  PhysCoord at, replica;
  for (std::int64_t o = 0; o < outer; ++o)
    for (int a = 0; a < accesses; ++a) {
      const View& tmem = a == 0 ? spec.tmem() : *spec.tmem2();
      const int tmem_units = units_per_word(tmem.dtype());
      for (std::int64_t w = 0; w < words; ++w)
        for (int p = 0; p < per_word; ++p) {
          // Register side.
          const std::int64_t word_index = (o * accesses + a) * words + w;
          const std::int64_t reg_element = reg_halves == 2 ? word_index * 2 + p : word_index;
          regs.apply_flat(reg_element, at);
          for (const PhysCoord& delta : regs.replica_offsets()) {
            replica = at;
            replica += delta;
            const std::int64_t m = replica[Axis::kM];
            RegisterBits bits;
            bits.thread = thread_of(replica, reg_axes, spec.scope());
            bits.slot = m / reg_units;
            bits.shift = reg_halves == 2 ? 16 * static_cast<int>(m % 2) : 16 * p;
            placement.regs_.push_back(bits);
          }
          placement.reg_begin_.push_back(static_cast<std::int64_t>(placement.regs_.size()));
          // TMEM side.
          const std::int64_t tmem_element =
              tmem_halves == 2 ? (o * words + w) * 2 + p : o * words + w;
          tmem.apply_flat(tmem_element, at);
          for (const PhysCoord& delta : tmem.replica_offsets()) {
            replica = at;
            replica += delta;
            const std::int64_t unit = replica[Axis::kTCol];
            TmemBits bits;
            bits.lane = replica[Axis::kTLane];
            bits.column = unit / tmem_units;
            bits.shift = tmem_halves == 2 ? 16 * static_cast<int>(unit % 2) : 16 * p;
            placement.tmem_.push_back(bits);
          }
          placement.tmem_begin_.push_back(static_cast<std::int64_t>(placement.tmem_.size()));
        }
    }
  return placement;
}

}  // namespace tmem::detail
