// The per-warp TMEM addressing and the st/ld sequence of a Plan, in PTX IR.
#include "kernels/plan_code.h"

namespace tmem::kernels {

using ptx::Instruction;
using ptx::Operand;
using ptx::Reg;
using ptx::RegClass;
using ptx::Type;

Reg emit_warp_address(ptx::Function& f, const Plan& plan, Reg base, Reg warp) {
  Reg rank = f.new_reg(RegClass::kB32), lanes = f.new_reg(RegClass::kB32),
      address = f.new_reg(RegClass::kB32);
  f.emit(Instruction::bit_and(Type::kB32, rank, warp, Operand::imm(3)));
  f.emit(Instruction::shl(Type::kB32, lanes, rank, Operand::imm(21)));  // (32 * rank) << 16
  f.emit(Instruction::add(Type::kU32, address, base, lanes));
  if (plan.scope.kind() == Scope::Kind::kWarp) return address;
  // Group index = warp id at warpgroup and cta scope (docs/transfer-semantics.md §Operands).
  if (plan.group_column_stride) {
    Reg step = f.new_reg(RegClass::kB32), next = f.new_reg(RegClass::kB32);
    f.emit(Instruction::mul_lo(Type::kU32, step, rank, Operand::imm(plan.group_column_stride)));
    f.emit(Instruction::add(Type::kU32, next, address, step));
    address = next;
  }
  if (plan.warpgroup_column_stride) {
    Reg group = f.new_reg(RegClass::kB32), step = f.new_reg(RegClass::kB32),
        next = f.new_reg(RegClass::kB32);
    f.emit(Instruction::shr(Type::kU32, group, warp, Operand::imm(2)));
    f.emit(
        Instruction::mul_lo(Type::kU32, step, group, Operand::imm(plan.warpgroup_column_stride)));
    f.emit(Instruction::add(Type::kU32, next, address, step));
    address = next;
  }
  return address;
}

void emit_transfer(ptx::Function& f, const Plan& plan, bool store, Reg warp_base,
                   const std::map<int, Reg>& slot_regs, bool wait) {
  // The plan's opcode names one direction; a round trip uses its shape both ways (and its ld.red
  // for the load half, so the round trip checks the reduction too).
  const Opcode op = !store && plan.op.reduces()
                        ? plan.op
                        : Opcode::make(store ? Direction::kStore : Direction::kLoad,
                                       plan.op.shape(), plan.op.num(), plan.op.packed())
                              .value();
  for (const RepeatStep& step : plan.repeats) {
    const std::int64_t delta = (static_cast<std::int64_t>(step.lane_offset) << 16) + step.column;
    Reg taddr = warp_base;
    if (delta != 0) {
      taddr = f.new_reg(RegClass::kB32);
      f.emit(Instruction::add(Type::kU32, taddr, warp_base, Operand::imm(delta)));
    }
    std::vector<Reg> regs;
    for (int slot : step.slots) regs.push_back(slot_regs.at(slot));
    if (store)
      f.emit(Instruction::tcgen05_st(op, taddr, regs, plan.imm));
    else if (op.reduces())
      f.emit(
          Instruction::tcgen05_ld_red(op, regs, slot_regs.at(step.redval_slot), taddr, plan.imm));
    else
      f.emit(Instruction::tcgen05_ld(op, regs, taddr, plan.imm));
  }
  if (wait) f.emit(store ? Instruction::tcgen05_wait_st() : Instruction::tcgen05_wait_ld());
}

}  // namespace tmem::kernels
