// Lowering of tcgen05 harness kernels to sm_90 PTX with TMEM in global memory (see the header).
#include "kernels/emulation_kernels.h"

#include <algorithm>
#include <array>
#include <bit>
#include <map>
#include <optional>
#include <utility>

#include "kernels/transfer_kernels.h"
#include "tmem/image.h"

namespace tmem::kernels {
namespace {

using ptx::Function;
using ptx::Instruction;
using ptx::Op;
using ptx::Operand;
using ptx::Reg;
using ptx::RegClass;
using ptx::Type;

class Lowering {
 public:
  explicit Lowering(const ptx::Module& in) : in_(in), out_(Target::kSm90) {}

  Result<EmulationKernel> run() {
    for (const ptx::SharedVar& v : in_.shared_vars()) out_.add_shared(v.name, v.align, v.count);
    for (const Function& f : in_.functions())
      if (auto error = function(f)) return std::move(*error);
    if (auto ok = out_.verify(); !ok) return std::move(ok).error();
    return EmulationKernel{std::move(out_), std::move(checked_)};
  }

 private:
  // The per-lane registers of one (shape, pack) form, computed once in the prologue.
  // The lane part of an image does not depend on .num; each instruction checks that it has the
  // lane part its registers were computed for.
  struct LaneTerms {
    std::optional<Reg> row, col, access;  // empty: zero
    std::array<int, kLaneBits> rows{}, cols{};
    int access_bit = -1;
  };

  std::optional<Error> function(const Function& f) {
    if (f.kind() != Function::Kind::kEntry)
      return Error(ErrorCode::kInternal,
                   "emulation: only kernels (.entry) are lowered, not .func " + f.name());
    g_ = &out_.add_function(Function::Kind::kEntry, f.name());
    for (const ptx::Param& p : f.params()) g_->add_param(p.type, p.name);
    const std::string& param = g_->add_param(Type::kU64, kEmuParam);
    g_->set_max_threads(f.max_threads());
    for (RegClass cls : {RegClass::kB32, RegClass::kB64, RegClass::kPred})
      (void)g_->new_regs(cls, f.reg_count(cls));
    terms_.clear();
    alloc_columns_ = 0;

    // Prologue: the emulation buffer, this thread's lane, slab and status slot.
    g_->emit(
        Instruction::comment("TMEM emulated in global memory (libtmemjit emulation for sm_90)"));
    Reg raw = g_->new_reg(RegClass::kB64), buffer = g_->new_reg(RegClass::kB64);
    g_->emit(Instruction::ld_param(Type::kU64, raw, param));
    g_->emit(Instruction::cvta_to_global(buffer, raw));
    // A CTA pair (cta_group::2) emulates each CTA's TMEM in its own EmulationBuffer: CTA c's
    // starts kEmuBufferWords words after CTA c-1's.
    const bool pair = std::any_of(f.body().begin(), f.body().end(), [](const Instruction& i) {
      return i.op() == Op::kTcgen05Alloc && i.int_arg() == 2;
    });
    if (pair) {
      Reg cta = g_->new_reg(RegClass::kB32), block = g_->new_reg(RegClass::kB64),
          own = g_->new_reg(RegClass::kB64);
      g_->emit(Instruction::mov(Type::kU32, cta, Operand::special(ptx::SpecialReg::kCtaidX)));
      g_->emit(Instruction::mul_wide(Type::kU32, block, cta,
                                     Operand::imm(static_cast<std::int64_t>(kEmuBufferWords * 4))));
      g_->emit(Instruction::add(Type::kU64, own, buffer, block));
      buffer = own;
    }
    Reg tid = g_->new_reg(RegClass::kB32), warp = g_->new_reg(RegClass::kB32),
        rank = g_->new_reg(RegClass::kB32);
    lane_ = g_->new_reg(RegClass::kB32);
    slab_ = g_->new_reg(RegClass::kB32);
    g_->emit(Instruction::mov(Type::kU32, tid, Operand::special(ptx::SpecialReg::kTidX)));
    g_->emit(Instruction::bit_and(Type::kB32, lane_, tid, Operand::imm(31)));
    g_->emit(Instruction::shr(Type::kU32, warp, tid, Operand::imm(5)));
    g_->emit(Instruction::bit_and(Type::kB32, rank, warp, Operand::imm(3)));
    g_->emit(Instruction::shl(Type::kB32, slab_, rank,
                              Operand::imm(5)));  // first lane of the warp's slab
    Reg offset = g_->new_reg(RegClass::kB64);
    status_ = g_->new_reg(RegClass::kB64);
    tmem_ = g_->new_reg(RegClass::kB64);
    g_->emit(Instruction::mul_wide(Type::kU32, offset, tid, Operand::imm(8)));
    g_->emit(Instruction::add(Type::kU64, status_, buffer, offset));
    g_->emit(Instruction::add(Type::kU64, tmem_, buffer,
                              Operand::imm(static_cast<std::int64_t>(kEmuStatusWords * 4))));
    for (const Instruction& i : f.body()) {
      if (i.op() != Op::kTcgen05Ld && i.op() != Op::kTcgen05St) continue;
      const Opcode& op = *i.opcode();
      const auto key = std::make_pair(op.shape(), op.packed());
      if (terms_.count(key)) continue;
      auto split = split_image(op);
      if (!split) return std::move(split).error();
      terms_.emplace(key, lane_terms(*split));
    }

    for (size_t k = 0; k < f.body().size(); ++k) {
      const Instruction& i = f.body()[k];
      if (i.guard() && is_tcgen05(i.op()))
        return Error(ErrorCode::kInternal, "emulation: guarded tcgen05 instruction " +
                                               std::to_string(k) + " in " + f.name());
      switch (i.op()) {
        case Op::kTcgen05Alloc:
          alloc(i);
          break;
        case Op::kTcgen05Dealloc:
          dealloc(i, f, k);
          break;
        case Op::kTcgen05Relinquish:
          g_->emit(Instruction::comment("tcgen05.relinquish_alloc_permit: nothing to emulate"));
          break;
        case Op::kTcgen05WaitLd:
        case Op::kTcgen05WaitSt:
          g_->emit(Instruction::comment(i.op() == Op::kTcgen05WaitLd ? "tcgen05.wait::ld"
                                                                     : "tcgen05.wait::st"));
          g_->emit(Instruction::membar_cta());
          g_->emit(Instruction::bar_warp_sync());
          break;
        case Op::kTcgen05FenceBefore:
        case Op::kTcgen05FenceAfter:
          g_->emit(Instruction::comment(i.op() == Op::kTcgen05FenceBefore
                                            ? "tcgen05.fence::before_thread_sync"
                                            : "tcgen05.fence::after_thread_sync"));
          g_->emit(Instruction::membar_cta());
          break;
        case Op::kTcgen05Ld:
        case Op::kTcgen05St:
          if (auto error = access(i, f, k)) return error;
          break;
        default:
          g_->emit(i);
      }
    }
    return std::nullopt;
  }

  // sum over lane bits b of ((lane >> b) & 1) * weight[b], grouping runs of bits whose weights
  // double (a bit field times its lowest weight); empty when every weight is zero.
  std::optional<Reg> lane_sum(const std::array<int, kLaneBits>& weight) {
    std::optional<Reg> sum;
    for (int b = 0; b < kLaneBits;) {
      if (weight[static_cast<size_t>(b)] == 0) {
        ++b;
        continue;
      }
      int end = b + 1;
      while (end < kLaneBits &&
             weight[static_cast<size_t>(end)] == 2 * weight[static_cast<size_t>(end - 1)])
        ++end;
      const int w = weight[static_cast<size_t>(b)];
      Reg field = lane_, bits = g_->new_reg(RegClass::kB32);
      if (b != 0) {
        field = g_->new_reg(RegClass::kB32);
        g_->emit(Instruction::shr(Type::kU32, field, lane_, Operand::imm(b)));
      }
      g_->emit(Instruction::bit_and(Type::kB32, bits, field, Operand::imm((1 << (end - b)) - 1)));
      Reg term = bits;
      if (w != 1) {
        term = g_->new_reg(RegClass::kB32);
        if ((w & (w - 1)) == 0 && w > 0) {
          int shift = 0;
          while ((1 << shift) != w) ++shift;
          g_->emit(Instruction::shl(Type::kB32, term, bits, Operand::imm(shift)));
        } else {
          g_->emit(Instruction::mul_lo(Type::kU32, term, bits, Operand::imm(w)));
        }
      }
      if (sum) {
        Reg next = g_->new_reg(RegClass::kB32);
        g_->emit(Instruction::add(Type::kU32, next, *sum, term));
        sum = next;
      } else {
        sum = term;
      }
      b = end;
    }
    return sum;
  }

  LaneTerms lane_terms(const SplitImage& split) {
    std::array<int, kLaneBits> rows{}, cols{}, access{};
    for (int b = 0; b < kLaneBits; ++b) {
      rows[static_cast<size_t>(b)] = split.lane_bits[static_cast<size_t>(b)].row;
      cols[static_cast<size_t>(b)] = split.lane_bits[static_cast<size_t>(b)].col;
    }
    if (split.access_bit >= 0) access[static_cast<size_t>(split.access_bit)] = 1;
    LaneTerms terms;
    terms.rows = rows;
    terms.cols = cols;
    terms.access_bit = split.access_bit;
    terms.row = lane_sum(rows);
    terms.col = lane_sum(cols);
    terms.access = lane_sum(access);
    return terms;
  }

  // alloc -> the emulated allocator's answer: lane 0, column 0.
  void alloc(const Instruction& i) {
    const Operand& ncols = i.srcs()[0];
    alloc_columns_ =
        ncols.kind() == Operand::Kind::kImm ? static_cast<int>(ncols.imm_value()) : kEmuColumns;
    g_->emit(Instruction::comment("tcgen05.alloc of " + std::to_string(alloc_columns_) +
                                  " columns: the base address is lane 0, column 0"));
    Reg zero = g_->new_reg(RegClass::kB32);
    g_->emit(Instruction::mov(Type::kU32, zero, Operand::imm(0)));
    g_->emit(Instruction::st_shared(i.dsts()[0], zero));
  }

  // Records (code, address) in this thread's status slot when `bad` holds and the slot is still
  // empty: the first violation of each thread is the one reported.
  void record(Reg bad, Reg address) {
    Reg code = g_->new_reg(RegClass::kB32), old = g_->new_reg(RegClass::kB32);
    Reg empty = g_->new_reg(RegClass::kPred), write = g_->new_reg(RegClass::kPred);
    g_->emit(Instruction::mov(Type::kU32, code,
                              Operand::imm(static_cast<std::int64_t>(checked_.size()))));
    g_->emit(Instruction::mov(Type::kU32, old, Operand::imm(0)));
    g_->emit(Instruction::ld_global({old}, Operand::addr(status_)).guarded(bad));
    g_->emit(Instruction::setp(ptx::Cmp::kEq, Type::kU32, empty, old, Operand::imm(0)));
    g_->emit(Instruction::bit_and(Type::kPred, write, bad, empty));
    g_->emit(Instruction::st_global(Operand::addr(status_), {code, address}).guarded(write));
  }

  // dealloc -> the address must be the one alloc returned (rule R23).
  void dealloc(const Instruction& i, const Function& f, size_t k) {
    g_->emit(Instruction::comment("tcgen05.dealloc: checks the address alloc returned"));
    const Reg taddr = i.srcs()[0].reg();
    checked_.push_back(
        {"tcgen05.dealloc", f.name(), static_cast<int>(k), false, 0, 0, alloc_columns_});
    Reg bad = g_->new_reg(RegClass::kPred);
    g_->emit(Instruction::setp(ptx::Cmp::kNe, Type::kU32, bad, taddr, Operand::imm(0)));
    record(bad, taddr);
  }

  // tcgen05.ld/st -> one global access per TMEM cell of the native image.
  std::optional<Error> access(const Instruction& i, const Function& f, size_t k) {
    const Opcode& op = *i.opcode();
    const bool load = i.op() == Op::kTcgen05Ld;
    if (alloc_columns_ == 0)
      return Error(ErrorCode::kInternal,
                   "emulation: " + op.to_string() + " before any tcgen05.alloc in " + f.name());
    auto split = split_image(op);
    if (!split) return std::move(split).error();
    const LaneTerms& terms = terms_.at({op.shape(), op.packed()});
    for (int b = 0; b < kLaneBits; ++b)
      if (split->lane_bits[static_cast<size_t>(b)].row != terms.rows[static_cast<size_t>(b)] ||
          split->lane_bits[static_cast<size_t>(b)].col != terms.cols[static_cast<size_t>(b)] ||
          split->access_bit != terms.access_bit)
        return Error(ErrorCode::kInternal, "emulation: the lane part of " + op.to_string() +
                                               "'s image differs from other forms of its shape");
    const std::vector<Operand>& regs = load ? i.dsts() : i.srcs();
    const Reg taddr = (load ? i.srcs() : i.dsts())[0].reg();
    const int rows = op.atom_rows(), width = op.atom_tmem_cols();
    checked_.push_back(
        {op.to_string(), f.name(), static_cast<int>(k), true, rows, width, alloc_columns_});
    std::string note = op.to_string();
    if (i.split_imm()) note += ", immHalfSplitoff " + std::to_string(*i.split_imm());
    g_->emit(Instruction::comment(note));

    // The address of this thread's access: taddr, or taddr + imm for the second 16x32bx2 access
    // (a TMEM address delta, added modulo 2^32 as the hardware does).
    Reg address = taddr;
    if (i.split_imm() && terms.access) {
      const auto imm32 = static_cast<std::uint32_t>(static_cast<std::uint64_t>(*i.split_imm()));
      Reg delta = g_->new_reg(RegClass::kB32);
      address = g_->new_reg(RegClass::kB32);
      g_->emit(Instruction::mul_lo(Type::kU32, delta, *terms.access, Operand::imm(imm32)));
      g_->emit(Instruction::add(Type::kU32, address, taddr, delta));
    }
    Reg lane = g_->new_reg(RegClass::kB32), column = g_->new_reg(RegClass::kB32);
    g_->emit(Instruction::shr(Type::kU32, lane, address, Operand::imm(16)));
    g_->emit(Instruction::bit_and(Type::kB32, column, address, Operand::imm(0xFFFF)));

    // Rules R17/R19: lanes [lane, lane + rows) inside the warp's slab, columns [column, column +
    // width) inside the allocation. A violating access is skipped and recorded.
    Reg slab_last = g_->new_reg(RegClass::kB32);
    g_->emit(Instruction::add(Type::kU32, slab_last, slab_, Operand::imm(32 - rows)));
    Reg below = g_->new_reg(RegClass::kPred), above = g_->new_reg(RegClass::kPred),
        wide = g_->new_reg(RegClass::kPred);
    Reg lanes_bad = g_->new_reg(RegClass::kPred), bad = g_->new_reg(RegClass::kPred);
    g_->emit(Instruction::setp(ptx::Cmp::kLt, Type::kU32, below, lane, slab_));
    g_->emit(Instruction::setp(ptx::Cmp::kGt, Type::kU32, above, lane, slab_last));
    if (alloc_columns_ >= width)
      g_->emit(Instruction::setp(ptx::Cmp::kGt, Type::kU32, wide, column,
                                 Operand::imm(alloc_columns_ - width)));
    else
      g_->emit(Instruction::setp(ptx::Cmp::kGe, Type::kU32, wide, column, Operand::imm(0)));
    g_->emit(Instruction::bit_or(Type::kPred, lanes_bad, below, above));
    g_->emit(Instruction::bit_or(Type::kPred, bad, lanes_bad, wide));
    record(bad, address);

    // This lane's first cell: row lane + row(l), column column + col(l).
    Reg row = lane, col = column;
    if (terms.row) {
      row = g_->new_reg(RegClass::kB32);
      g_->emit(Instruction::add(Type::kU32, row, lane, *terms.row));
    }
    if (terms.col) {
      col = g_->new_reg(RegClass::kB32);
      g_->emit(Instruction::add(Type::kU32, col, column, *terms.col));
    }
    Reg row_words = g_->new_reg(RegClass::kB32), word = g_->new_reg(RegClass::kB32);
    Reg bytes = g_->new_reg(RegClass::kB64), cell = g_->new_reg(RegClass::kB64);
    g_->emit(
        Instruction::shl(Type::kB32, row_words, row, Operand::imm(9)));  // 512 columns per lane
    g_->emit(Instruction::add(Type::kU32, word, row_words, col));
    g_->emit(Instruction::mul_wide(Type::kU32, bytes, word, Operand::imm(4)));
    g_->emit(Instruction::add(Type::kU64, cell, tmem_, bytes));

    Reg low, high;  // the two 16-bit halves of a packed register
    if (split->cells_per_reg == 2) {
      low = g_->new_reg(RegClass::kB32);
      high = g_->new_reg(RegClass::kB32);
    }
    // ld.red's dsts end with redval; the vector is the first regs_per_thread().
    const size_t nregs = static_cast<size_t>(op.regs_per_thread());
    for (size_t r = 0; r < nregs; ++r) {
      const Reg value = regs[r].reg();
      const auto& cells = split->cells[r];
      auto at = [&](int k2) {
        const TmemCell& c = cells[static_cast<size_t>(k2)];
        return Operand::addr(cell, 4L * (static_cast<std::int64_t>(c.row) * kEmuColumns + c.col));
      };
      // A skipped load leaves 0 in its registers: defined, and never mistaken for data.
      if (load) g_->emit(Instruction::mov(Type::kU32, value, Operand::imm(0)).guarded(bad));
      if (split->cells_per_reg == 1) {
        if (load)
          g_->emit(Instruction::ld_global({value}, at(0)).guarded(bad, true));
        else
          g_->emit(Instruction::st_global(at(0), {value}).guarded(bad, true));
        continue;
      }
      // pack::16b / unpack::16b: register half h <-> the low 16 bits of cell h (cells[h].half ==
      // h).
      if (load) {
        g_->emit(Instruction::ld_global({low}, at(0)).guarded(bad, true));
        g_->emit(Instruction::ld_global({high}, at(1)).guarded(bad, true));
        g_->emit(
            Instruction::bit_and(Type::kB32, low, low, Operand::imm(0xFFFF)).guarded(bad, true));
        g_->emit(Instruction::shl(Type::kB32, high, high, Operand::imm(16)).guarded(bad, true));
        g_->emit(Instruction::bit_or(Type::kB32, value, low, high).guarded(bad, true));
      } else {
        // The upper 16 bits of an unpacked cell are unspecified (docs/tcgen05-rules.md §Packing);
        // written as 0.
        g_->emit(
            Instruction::bit_and(Type::kB32, low, value, Operand::imm(0xFFFF)).guarded(bad, true));
        g_->emit(Instruction::shr(Type::kU32, high, value, Operand::imm(16)).guarded(bad, true));
        g_->emit(Instruction::st_global(at(0), {low}).guarded(bad, true));
        g_->emit(Instruction::st_global(at(1), {high}).guarded(bad, true));
      }
    }
    if (load && op.reduces()) reduce(*op.reduction(), regs, nregs);
    return std::nullopt;
  }

  // tcgen05.ld.red: redval = min/max{.NaN} over the loaded registers in register order, after
  // abs.f32 with .abs: the PTX instructions whose semantics tmem::reduce_pair models (the
  // simulator and tests/isa/reduction_test.cc check those against a reference).
  void reduce(const Reduction& reduction, const std::vector<Operand>& regs, size_t nregs) {
    const Type type = reduction.type == ReductionType::kF32   ? Type::kF32
                      : reduction.type == ReductionType::kS32 ? Type::kS32
                                                              : Type::kU32;
    const Reg redval = regs[nregs].reg();
    g_->emit(Instruction::comment("." + reduction.to_string() + " into " + redval.name()));
    auto operand = [&](size_t r) {
      Reg value = regs[r].reg();
      if (!reduction.abs) return value;
      Reg magnitude = g_->new_reg(RegClass::kB32);
      g_->emit(Instruction::abs_f32(magnitude, value));
      return magnitude;
    };
    Reg acc = operand(0);
    for (size_t r = 1; r < nregs; ++r) {
      Reg next = r + 1 == nregs ? redval : g_->new_reg(RegClass::kB32);
      g_->emit(reduction.op == ReductionOp::kMin
                   ? Instruction::min(type, next, acc, operand(r), reduction.nan)
                   : Instruction::max(type, next, acc, operand(r), reduction.nan));
      acc = next;
    }
  }

  const ptx::Module& in_;
  ptx::Module out_;
  std::vector<EmulatedInstruction> checked_;
  Function* g_ = nullptr;
  Reg lane_, slab_, status_, tmem_;
  std::map<std::pair<Shape, bool>, LaneTerms> terms_;
  int alloc_columns_ = 0;
};

using Vector = BitLinearMap::Vector;

// Cell k of register r of `lane` as (access, row, col, half); false past its cells.
bool cell_of(const Opcode& op, int lane, int r, int k, Vector& value) {
  std::array<TmemCell, 2> at{};
  if (tmem_cells(op, lane, r, at) <= k) return false;
  const TmemCell& c = at[static_cast<size_t>(k)];
  value.assign({c.access, c.row, c.col, c.half});
  return true;
}

}  // namespace

Result<SplitImage> split_image(const Opcode& op) {
  // The lowering relies on this decomposition, which holds as every native image is linear over
  // the bits of lane, cell and register on every input (native_image_map): pairs of bits suffice.
  const std::optional<BitLinearMap> image = native_image_map(op, BitLinearMap::Verify::kPairs);
  auto not_additive = [&] {
    return Error(ErrorCode::kInternal, "emulation: the native image of " + op.to_string() +
                                           " is not additive over the lane bits");
  };
  if (!image) return not_additive();
  SplitImage split;
  const int regs = op.regs_per_thread();
  split.cells.resize(static_cast<size_t>(regs));
  for (int r = 0; r < regs; ++r)
    split.cells_per_reg = tmem_cells(op, 0, r, split.cells[static_cast<size_t>(r)]);
  // A lane bit moves the cell in the access (row, col), or is the one bit that picks access 1.
  for (int b = 0; b < kLaneBits; ++b) {
    const Vector& bit = image->image(b);
    const bool access = bit[0] != 0;
    if (bit[3] != 0 || (access && (bit != Vector{1, 0, 0, 0} || split.access_bit >= 0)))
      return not_additive();
    if (access)
      split.access_bit = b;
    else
      split.lane_bits[static_cast<size_t>(b)] = {static_cast<int>(bit[1]),
                                                 static_cast<int>(bit[2])};
  }
  return split;
}

std::optional<BitLinearMap> native_image_map(const Opcode& op, BitLinearMap::Verify verify) {
  const int regs = op.regs_per_thread();
  if (!std::has_single_bit(static_cast<unsigned>(regs))) return std::nullopt;
  const int cell_bits = op.packed() ? 1 : 0;
  const int bits = kLaneBits + cell_bits + std::countr_zero(static_cast<unsigned>(regs));
  return BitLinearMap::probe(
      bits,
      [&](std::uint64_t x, Vector& value) {
        const auto lane = static_cast<int>(x % 32), cell = static_cast<int>(x >> 5 & cell_bits);
        return cell_of(op, lane, static_cast<int>(x >> (kLaneBits + cell_bits)), cell, value);
      },
      verify);
}

Result<EmulationKernel> lower_to_emulation(const ptx::Module& module) {
  return Lowering(module).run();
}

Result<EmulationKernel> build_emulation_kernel(const Plan& plan, KernelKind kind, int cta_group) {
  // The real kernel for a target that has the opcode (ld.red: sm_103a, rule R14), then lowered.
  const Target target =
      plan.op.supports(Target::kSm100a) ? Target::kSm100a : plan.op.targets().front();
  auto real = build_kernel(plan, kind, target, cta_group);
  if (!real) return std::move(real).error();
  return lower_to_emulation(*real);
}

Status check_emulation_status(std::span<const EmulatedInstruction> checked,
                              std::span<const std::uint32_t> status) {
  for (size_t thread = 0; 2 * thread + 1 < status.size(); ++thread) {
    const std::uint32_t code = status[2 * thread], address = status[2 * thread + 1];
    if (code == 0) continue;
    const int warp = static_cast<int>(thread / 32);
    const std::string who =
        "thread " + std::to_string(thread) + " (warp " + std::to_string(warp) + ")";
    const int lane = static_cast<int>(address >> 16), column = static_cast<int>(address & 0xFFFF);
    const std::string where =
        "TMEM address lane " + std::to_string(lane) + ", column " + std::to_string(column);
    if (code > checked.size())
      return Error(ErrorCode::kInternal, "emulation: " + who + " reported unknown instruction " +
                                             std::to_string(code) + " at " + where);
    const EmulatedInstruction& op = checked[code - 1];
    const std::string head = "emulated " + op.text + " (instruction " +
                             std::to_string(op.body_index) + " of " + op.function + ") by " + who +
                             " at " + where + ": ";
    if (!op.access)
      return Error(ErrorCode::kRule, head +
                                         "rule R23: dealloc of an address that alloc did not "
                                         "return (it returned lane 0, column 0)");
    const int slab = 32 * (warp % 4);
    if (lane < slab || lane + op.rows > slab + 32)
      return Error(ErrorCode::kRule, head + "rule R17: lanes " + std::to_string(lane) + "-" +
                                         std::to_string(lane + op.rows - 1) + " are outside warp " +
                                         std::to_string(warp) + "'s lane slab " +
                                         std::to_string(slab) + "-" + std::to_string(slab + 31));
    return Error(ErrorCode::kRule, head + "rule R19: columns " + std::to_string(column) + "-" +
                                       std::to_string(column + op.columns - 1) +
                                       " are outside the " + std::to_string(op.alloc_columns) +
                                       " allocated columns");
  }
  return std::monostate{};
}

namespace {

// The device library's events (kernels/emu/tcgen05_emulation.cuh): `value` is its word 1.
Error library_event(EmuEvent event, const std::string& what, const std::string& who,
                    std::uint32_t value) {
  const std::string head = "emulated " + what + " by " + who + ": ";
  const std::string count = std::to_string(value) + " columns";
  const std::string at = "TMEM address lane " + std::to_string(value >> 16) + ", column " +
                         std::to_string(value & 0xFFFF);
  switch (event) {
    case EmuEvent::kAllocColumns:
      return Error(ErrorCode::kRule,
                   head + "rule R22: " + count + " is not a power of 2 from 32 to 512");
    case EmuEvent::kAllocBlocked:
      return Error(ErrorCode::kRule, head + "rule R30: " + count +
                                         " are not free; on hardware the alloc blocks until "
                                         "they are, and this CTA holds them (a deadlock)");
    case EmuEvent::kAllocRelinquished:
      return Error(ErrorCode::kRule, head + "rule R25: an alloc of " + count +
                                         " after this CTA's relinquish_alloc_permit");
    case EmuEvent::kMmaForm:
      return Error(ErrorCode::kRule, head + "a form the ISA does not define (descriptor field " +
                                         std::to_string(value) +
                                         ", kernels/emu/umma_decode.cuh MmaFormError); skipped");
    case EmuEvent::kTmemLanes:
      return Error(ErrorCode::kRule,
                   head + "at " + at + ": a lane the data-path layout does not allow; skipped");
    case EmuEvent::kNotEmulated:
      return Error(ErrorCode::kUsage, head + "a form not emulated yet (flags " +
                                          std::to_string(value) +
                                          "; docs/emulation.md lists them); skipped");
    case EmuEvent::kCtaPair:
      return Error(ErrorCode::kRule, head + "rule R27: cta_group::" + std::to_string(value) +
                                         " without its peer CTA in the cluster, or both "
                                         "cta_groups in one CTA");
    case EmuEvent::kTmaPeer:  // value: 0 or 1 (a stop, below), else the box's byte count
      return Error(
          ErrorCode::kUsage,
          head + (value == 0 ? std::string("the tensor map's box could not be read (an im2col "
                                           "or interleaved map?), so the peer CTA's barrier "
                                           "cannot be told its bytes; the kernel was stopped")
                  : value == 1
                      ? std::string("a .multicast::cluster load whose ctaMask leaves out the "
                                    "issuing CTA, which the emulation cannot do (it lands the "
                                    "box there first, docs/emulation.md §TMA .cta_group::2); "
                                    "the kernel was stopped")
                      : "the " + std::to_string(value) +
                            " bytes read from the tensor map's box did not all arrive on the "
                            "shadow barrier; the peer's barrier was told them anyway"));
    case EmuEvent::kStrictPending:
      return Error(ErrorCode::kRule,
                   head + "at " + at +
                       ": strict mode: these columns belong to an MMA until a tcgen05.commit "
                       "completes it and its mbarrier is waited on (PTX ISA 9.7.16.12.1); on "
                       "hardware this access races with the MMA");
    case EmuEvent::kOperandNotEmulated:
      return Error(ErrorCode::kUsage, head +
                                          "a non-zero disable-output-lane mask, which the "
                                          "emulation does not apply; the MMA was skipped");
    default:
      return Error(ErrorCode::kInternal, "emulation: " + who + " reported unknown event " +
                                             std::to_string(static_cast<std::uint32_t>(event)));
  }
}

}  // namespace

Status decode_user_emulation_status(std::span<const std::uint32_t> status, unsigned cta,
                                    std::span<const std::string> instructions,
                                    std::vector<std::string>& warnings) {
  std::optional<Error> violation;
  for (size_t thread = 0; 2 * thread + 1 < status.size() && thread < kEmuMaxThreads; ++thread) {
    const std::uint32_t word = status[2 * thread], address = status[2 * thread + 1];
    if (word == 0) continue;
    const auto event = static_cast<EmuEvent>(word >> 24);
    const std::uint32_t id = word & 0xFFFFFFu;
    const int warp = static_cast<int>(thread / 32);
    const int lane = static_cast<int>(address >> 16), column = static_cast<int>(address & 0xFFFF);
    const std::string what =
        id >= 1 && id <= instructions.size()
            ? instructions[id - 1]
            : (event == EmuEvent::kDealloc ? std::string("tmemjit::dealloc")
                                           : "instruction " + std::to_string(id));
    const std::string who = "thread " + std::to_string(thread) + " (warp " + std::to_string(warp) +
                            ") of CTA " + std::to_string(cta);
    const std::string where =
        "TMEM address lane " + std::to_string(lane) + ", column " + std::to_string(column);
    const int slab = 32 * (warp % 4);
    switch (event) {
      case EmuEvent::kWarpRelative: {
        const std::string line = "emulated " + what + " by " + who + " at " + where +
                                 ": a warp-relative lane address (lane " + std::to_string(lane) +
                                 " from warp " + std::to_string(warp) + ", whose lane slab is " +
                                 std::to_string(slab) + "-" + std::to_string(slab + 31) +
                                 "); the ISA asks for lanes in the warp's slab; emulated as lane " +
                                 std::to_string(slab + lane) +
                                 ", as DeepGEMM and TileLang kernels expect";
        bool seen = false;
        for (const std::string& w : warnings) seen |= w.rfind("emulated " + what + " by ", 0) == 0;
        if (!seen) warnings.push_back(line);
        break;
      }
      case EmuEvent::kSlab:
        if (!violation)
          violation =
              Error(ErrorCode::kRule, "emulated " + what + " by " + who + " at " + where +
                                          ": rule R17: the access's lanes are outside warp " +
                                          std::to_string(warp) + "'s lane slab " +
                                          std::to_string(slab) + "-" + std::to_string(slab + 31));
        break;
      case EmuEvent::kColumns: {
        const std::uint32_t allocated =
            status.size() > kEmuStatusWords ? status[kEmuStatusWords] : 0;
        if (!violation)
          violation = Error(ErrorCode::kRule,
                            "emulated " + what + " by " + who + " at " + where +
                                ": rule R19: the access's columns are outside the " +
                                (allocated ? std::to_string(allocated) + " allocated columns"
                                           : std::string("allocation (no tmemjit::alloc ran)")));
        break;
      }
      case EmuEvent::kDealloc:
        if (!violation)
          violation =
              Error(ErrorCode::kRule, "emulated tmemjit::dealloc by " + who + " of " + where +
                                          ": rule R23: dealloc of an address that alloc "
                                          "did not return (it returned lane 0, column 0)");
        break;
      case EmuEvent::kAllocGrows: {
        const std::string line = "emulated " + what + " by " + who +
                                 ": rule R24: an allocation of " + std::to_string(address) +
                                 " columns, more than the CTA's previous one; emulated as asked";
        if (std::find(warnings.begin(), warnings.end(), line) == warnings.end())
          warnings.push_back(line);
        break;
      }
      default:
        if (!violation) violation = library_event(event, what, who, address);
    }
  }
  if (violation) return std::move(*violation);
  return std::monostate{};
}

}  // namespace tmem::kernels
