// The embeddable .func form of a Plan: parameters in, the plan's st or ld, the wait, results out.
#include "kernels/device_function.h"

#include <map>
#include <optional>

#include "kernels/plan_code.h"

namespace tmem::kernels {

using ptx::Function;
using ptx::Instruction;
using ptx::Operand;
using ptx::Reg;
using ptx::RegClass;
using ptx::Type;

std::string device_function_name() { return "tmem_transfer"; }

Result<ptx::Module> build_device_function(const Plan& plan, Target target) {
  if (plan.repeats.empty() || plan.regs_per_thread < 1)
    return Error(ErrorCode::kInternal, "build_device_function: the plan has no instructions");
  const bool store = !plan.op.is_load();
  const int slots = plan.regs_per_thread;
  ptx::Module module(target);
  Function& f = module.add_function(Function::Kind::kFunc, device_function_name());
  const std::string regs_out =
      store ? std::string()
            : f.add_return_param(ptx::Param{Type::kB32, "regs", 4 * slots, /*align=*/4});
  const std::string base_param = f.add_param(Type::kB32, "tmem_base");
  std::map<int, std::string> slot_params;
  if (store)
    for (int s = 0; s < slots; ++s)
      slot_params[s] = f.add_param(Type::kB32, "slot" + std::to_string(s));

  const Reg base = f.new_reg(RegClass::kB32), tid = f.new_reg(RegClass::kB32),
            warp = f.new_reg(RegClass::kB32);
  f.emit(Instruction::ld_param(Type::kB32, base, base_param));
  f.emit(Instruction::mov(Type::kU32, tid, Operand::special(ptx::SpecialReg::kTidX)));
  f.emit(Instruction::shr(Type::kU32, warp, tid, Operand::imm(5)));  // %warpid is not stable
  const Reg warp_base = emit_warp_address(f, plan, base, warp);

  std::map<int, Reg> slot_regs;  // only the slots the plan moves
  for (const RepeatStep& step : plan.repeats)
    for (int slot : step.slots) slot_regs.emplace(slot, Reg{});
  for (auto& [slot, reg] : slot_regs) {
    reg = f.new_reg(RegClass::kB32);
    if (store) f.emit(Instruction::ld_param(Type::kB32, reg, slot_params.at(slot)));
  }
  emit_transfer(f, plan, store, warp_base, slot_regs);
  if (!store) {
    std::optional<Reg> zero;
    for (int s = 0; s < slots; ++s) {
      auto it = slot_regs.find(s);
      if (it == slot_regs.end() && !zero) {
        zero = f.new_reg(RegClass::kB32);
        f.emit(Instruction::mov(Type::kB32, *zero, Operand::imm(0)));
      }
      f.emit(Instruction::st_param(Type::kB32, regs_out, it != slot_regs.end() ? it->second : *zero,
                                   4L * s));
    }
  }
  f.emit(Instruction::ret());
  if (auto ok = module.verify(); !ok) return ok.error();
  return module;
}

}  // namespace tmem::kernels
