// The PTX form of a transfer (kernels/device_function.h): the .funcs NAME, NAME_wait and
// NAME_coord and the lifecycle .funcs built as PTX IR, and module text ready for splicing.
#include <algorithm>
#include <map>
#include <optional>
#include <sstream>

#include "kernels/device_function.h"
#include "kernels/plan_code.h"

namespace tmem::kernels {
namespace {

using ptx::Function;
using ptx::Instruction;
using ptx::Operand;
using ptx::Reg;
using ptx::RegClass;
using ptx::Type;

// sum over runs of ((value >> first) & mask) * weight, or nothing when every weight is zero.
std::optional<Reg> ptx_terms(Function& f, Reg value, const std::vector<std::int64_t>& weights) {
  std::optional<Reg> sum;
  for (const BitRun& run : bit_runs(weights)) {
    Reg field = value;
    if (run.first) {
      field = f.new_reg(RegClass::kB32);
      f.emit(Instruction::shr(Type::kU32, field, value, Operand::imm(run.first)));
    }
    Reg bits = f.new_reg(RegClass::kB32);
    f.emit(Instruction::bit_and(Type::kB32, bits, field, Operand::imm((1 << run.count) - 1)));
    Reg term = bits;
    if (run.weight != 1) {
      term = f.new_reg(RegClass::kB32);
      f.emit(Instruction::mul_lo(Type::kS32, term, bits, Operand::imm(run.weight)));
    }
    if (sum) {
      Reg next = f.new_reg(RegClass::kB32);
      f.emit(Instruction::add(Type::kS32, next, *sum, term));
      sum = next;
    } else {
      sum = term;
    }
  }
  return sum;
}

// constant + thread terms + slot terms.
Reg ptx_coord_value(Function& f, const CoordTerms& terms, Reg thread, Reg slot) {
  Reg value = f.new_reg(RegClass::kB32);
  f.emit(Instruction::mov(Type::kS32, value, Operand::imm(terms.constant)));
  for (auto [var, weights] :
       {std::pair{thread, &terms.thread_bits}, std::pair{slot, &terms.slot_bits}}) {
    if (auto sum = ptx_terms(f, var, *weights)) {
      Reg next = f.new_reg(RegClass::kB32);
      f.emit(Instruction::add(Type::kS32, next, value, *sum));
      value = next;
    }
  }
  return value;
}

// The .func NAME_coord: (.param .align 4 .b8 index[4 * RANK]) (thread, slot).
void add_coord_function(ptx::Module& module, const CoordMap& map, const std::string& symbol) {
  Function& f = module.add_function(Function::Kind::kFunc, symbol);
  const std::string out =
      f.add_return_param(ptx::Param{Type::kB32, "index", 4 * std::max(map.rank, 1), 4});
  const std::string thread_param = f.add_param(Type::kB32, "thread");
  const std::string slot_param = f.add_param(Type::kB32, "slot");
  Reg thread = f.new_reg(RegClass::kB32), slot = f.new_reg(RegClass::kB32);
  f.emit(Instruction::ld_param(Type::kB32, thread, thread_param));
  f.emit(Instruction::ld_param(Type::kB32, slot, slot_param));
  // valid = thread < threads and slot in one of the used ranges (unsigned: negative slots fail).
  Reg valid = f.new_reg(RegClass::kPred);
  f.emit(Instruction::setp(ptx::Cmp::kLt, Type::kU32, valid, thread, Operand::imm(map.threads)));
  std::optional<Reg> in_range;
  for (const auto& [begin, end] : map.used_slots) {
    Reg low = f.new_reg(RegClass::kPred), high = f.new_reg(RegClass::kPred),
        both = f.new_reg(RegClass::kPred);
    f.emit(Instruction::setp(ptx::Cmp::kGe, Type::kU32, low, slot, Operand::imm(begin)));
    f.emit(Instruction::setp(ptx::Cmp::kLt, Type::kU32, high, slot, Operand::imm(end)));
    f.emit(Instruction::bit_and(Type::kPred, both, low, high));
    if (in_range) {
      Reg next = f.new_reg(RegClass::kPred);
      f.emit(Instruction::bit_or(Type::kPred, next, *in_range, both));
      in_range = next;
    } else {
      in_range = both;
    }
  }
  Reg ok = f.new_reg(RegClass::kPred);
  if (in_range)
    f.emit(Instruction::bit_and(Type::kPred, ok, valid, *in_range));
  else
    f.emit(Instruction::setp(ptx::Cmp::kNe, Type::kU32, ok, thread, thread));  // never
  std::vector<Reg> values;
  for (int d = 0; d < map.rank; ++d) {
    Reg value = f.new_reg(RegClass::kB32);
    f.emit(Instruction::mov(Type::kS32, value, Operand::imm(-1)));
    values.push_back(value);
  }
  if (map.expressible) {
    if (map.additive) {
      for (int d = 0; d < map.rank; ++d) {
        Reg v = ptx_coord_value(f, map.dims[static_cast<size_t>(d)], thread, slot);
        f.emit(Instruction::mov(Type::kB32, values[static_cast<size_t>(d)], v).guarded(ok));
      }
    } else {
      for (const auto& [s, terms] : map.per_slot) {
        Reg here = f.new_reg(RegClass::kPred), take = f.new_reg(RegClass::kPred);
        f.emit(Instruction::setp(ptx::Cmp::kEq, Type::kU32, here, slot, Operand::imm(s)));
        f.emit(Instruction::bit_and(Type::kPred, take, here, ok));
        for (int d = 0; d < map.rank; ++d) {
          Reg v = ptx_coord_value(f, terms[static_cast<size_t>(d)], thread, slot);
          f.emit(Instruction::mov(Type::kB32, values[static_cast<size_t>(d)], v).guarded(take));
        }
      }
    }
  }
  for (int d = 0; d < map.rank; ++d)
    f.emit(Instruction::st_param(Type::kB32, out, values[static_cast<size_t>(d)], 4L * d));
  f.emit(Instruction::ret());
}

void add_wait_function(ptx::Module& module, bool store, const std::string& symbol) {
  Function& f = module.add_function(Function::Kind::kFunc, symbol);
  f.emit(store ? Instruction::tcgen05_wait_st() : Instruction::tcgen05_wait_ld());
  f.emit(Instruction::ret());
}

// The .func of the transfer itself (see build_device_function).
void add_transfer_function(ptx::Module& module, const Plan& plan,
                           const DeviceFunctionOptions& options, const std::string& symbol) {
  const bool store = !plan.op.is_load();
  const int slots = plan.regs_per_thread;
  Function& f = module.add_function(Function::Kind::kFunc, symbol);
  const std::string regs_out =
      store ? std::string()
            : f.add_return_param(ptx::Param{Type::kB32, "regs", 4 * slots, /*align=*/4});
  const std::string base_param = f.add_param(Type::kB32, "tmem_base");
  std::map<int, std::string> slot_params;
  if (store)
    for (int s = 0; s < slots; ++s)
      slot_params[s] = f.add_param(Type::kB32, "slot" + std::to_string(s));
  const std::string warp_param =
      options.warp_argument ? f.add_param(Type::kB32, "warp") : std::string();
  const std::string column_param =
      options.column_argument ? f.add_param(Type::kB32, "column") : std::string();

  Reg base = f.new_reg(RegClass::kB32), warp;
  f.emit(Instruction::ld_param(Type::kB32, base, base_param));
  if (options.warp_argument) {
    warp = f.new_reg(RegClass::kB32);
    f.emit(Instruction::ld_param(Type::kB32, warp, warp_param));
  } else {
    Reg tid = f.new_reg(RegClass::kB32);
    warp = f.new_reg(RegClass::kB32);
    f.emit(Instruction::mov(Type::kU32, tid, Operand::special(ptx::SpecialReg::kTidX)));
    f.emit(Instruction::shr(Type::kU32, warp, tid, Operand::imm(5)));  // %warpid is not stable
  }
  if (options.column_argument) {
    Reg column = f.new_reg(RegClass::kB32), shifted = f.new_reg(RegClass::kB32);
    f.emit(Instruction::ld_param(Type::kB32, column, column_param));
    f.emit(Instruction::add(Type::kU32, shifted, base, column));
    base = shifted;
  }
  const Reg warp_base = emit_warp_address(f, plan, base, warp);

  std::map<int, Reg> slot_regs;  // only the slots the plan moves (and ld.red's results)
  for (const RepeatStep& step : plan.repeats) {
    for (int slot : step.slots) slot_regs.emplace(slot, Reg{});
    if (step.redval_slot >= 0) slot_regs.emplace(step.redval_slot, Reg{});
  }
  for (auto& [slot, reg] : slot_regs) {
    reg = f.new_reg(RegClass::kB32);
    if (store) f.emit(Instruction::ld_param(Type::kB32, reg, slot_params.at(slot)));
  }
  emit_transfer(f, plan, store, warp_base, slot_regs, options.wait);
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
}

}  // namespace

Result<ptx::Module> build_device_function(const Plan& plan, Target target,
                                          const DeviceFunctionOptions& options) {
  if (plan.repeats.empty() || plan.regs_per_thread < 1)
    return Error(ErrorCode::kInternal, "build_device_function: the plan has no instructions");
  ptx::Module module(target);
  add_transfer_function(module, plan, options, options.name);
  if (auto ok = module.verify(); !ok) return ok.error();
  return module;
}

Status add_transfer_functions(ptx::Module& module, const TransferCode& code,
                              const std::string& transfer_symbol, const std::string& wait_symbol,
                              const std::string& coord_symbol) {
  if (code.plan.repeats.empty() || code.plan.regs_per_thread < 1)
    return Error(ErrorCode::kInternal, "add_transfer_functions: the plan has no instructions");
  add_transfer_function(module, code.plan, code.options, transfer_symbol);
  if (!wait_symbol.empty()) add_wait_function(module, !code.plan.op.is_load(), wait_symbol);
  add_coord_function(module, code.coord, coord_symbol);
  return std::monostate{};
}

void add_lifecycle_functions(ptx::Module& module, int cta_group) {
  {
    Function& f = module.add_function(Function::Kind::kFunc, "tmemjit_alloc");
    const std::string smem = f.add_param(Type::kB32, "smem_address");
    const std::string columns = f.add_param(Type::kB32, "columns");
    Reg address = f.new_reg(RegClass::kB32), count = f.new_reg(RegClass::kB32);
    f.emit(Instruction::ld_param(Type::kB32, address, smem));
    f.emit(Instruction::ld_param(Type::kB32, count, columns));
    f.emit(Instruction::tcgen05_alloc(Operand::addr(address), count, cta_group));
    f.emit(Instruction::tcgen05_relinquish(cta_group));
    f.emit(Instruction::ret());
  }
  {
    Function& f = module.add_function(Function::Kind::kFunc, "tmemjit_dealloc");
    const std::string base = f.add_param(Type::kB32, "tmem_base");
    const std::string columns = f.add_param(Type::kB32, "columns");
    Reg taddr = f.new_reg(RegClass::kB32), count = f.new_reg(RegClass::kB32);
    f.emit(Instruction::ld_param(Type::kB32, taddr, base));
    f.emit(Instruction::ld_param(Type::kB32, count, columns));
    f.emit(Instruction::tcgen05_dealloc(taddr, count, cta_group));
    f.emit(Instruction::ret());
  }
  for (bool before : {true, false}) {
    Function& f = module.add_function(
        Function::Kind::kFunc, before ? "tmemjit_fence_before_sync" : "tmemjit_fence_after_sync");
    f.emit(before ? Instruction::tcgen05_fence_before() : Instruction::tcgen05_fence_after());
    f.emit(Instruction::ret());
  }
  if (cta_group == 2) {  // the CTA pair's barrier (cuda_cluster_sync says why)
    Function& f = module.add_function(Function::Kind::kFunc, "tmemjit_cluster_sync");
    f.emit(Instruction::cluster_arrive());
    f.emit(Instruction::cluster_wait());
    f.emit(Instruction::ret());
  }
}

std::string ptx_without_header(const std::string& ptx) {
  std::istringstream lines(ptx);
  std::string line, out;
  while (std::getline(lines, line)) {
    if (line.rfind(".version", 0) == 0 || line.rfind(".target", 0) == 0 ||
        line.rfind(".address_size", 0) == 0 || line.rfind("// generated by libtmemjit", 0) == 0)
      continue;
    out += line + "\n";
  }
  return out;
}

}  // namespace tmem::kernels
