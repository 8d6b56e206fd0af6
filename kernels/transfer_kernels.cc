// Harness kernels built from a Plan: the lifecycle of docs/tcgen05-rules.md §Sync around the plan's
// st/ld.
#include "kernels/transfer_kernels.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "kernels/plan_code.h"

namespace tmem::kernels {
namespace {

using ptx::Function;
using ptx::Instruction;
using ptx::Label;
using ptx::Operand;
using ptx::Reg;
using ptx::RegClass;
using ptx::Type;

constexpr int kRawChunk = 32;  // columns per 32x32b.x32 instruction of the raw fill/dump

struct Builder {
  const Plan& plan;
  KernelKind kind;
  int cta_group;
  LaunchShape shape;
  ptx::Module module;
  Function* f = nullptr;
  std::string smem;
  Reg tid, warp, base, not_warp0, not_participant;
  Reg io_row, raw_row;  // this thread's row in In/Out and in Raw: tid, plus the CTA's block
  Label after_alloc, after_transfer, end;
  std::map<int, Reg> slot_regs;  // PTX register of each plan slot (one name in every lane)

  Builder(const Plan& p, KernelKind k, Target target, int group)
      : plan(p), kind(k), cta_group(group), shape(launch_shape(p, k, group)), module(target) {}

  Reg param_pointer(const std::string& name) {
    const std::string& param = f->add_param(Type::kU64, name);
    Reg raw = f->new_reg(RegClass::kB64), global = f->new_reg(RegClass::kB64);
    f->emit(Instruction::ld_param(Type::kU64, raw, param));
    f->emit(Instruction::cvta_to_global(global, raw));
    return global;
  }

  // Row `row` (a b32 register) of a [rows][row_words] u32 array at `array`.
  Reg row_address(Reg array, Reg row, int row_words) {
    Reg offset = f->new_reg(RegClass::kB64), address = f->new_reg(RegClass::kB64);
    f->emit(Instruction::mul_wide(Type::kU32, offset, row, Operand::imm(row_words * 4)));
    f->emit(Instruction::add(Type::kU64, address, array, offset));
    return address;
  }

  // In[thread][slot] <-> slot registers; v4/v2 where four/two aligned consecutive slots are used.
  void move_slots(Reg row, bool load) {
    std::vector<int> slots;
    for (const auto& [slot, reg] : slot_regs) slots.push_back(slot);
    for (size_t i = 0; i < slots.size();) {
      int width = 1;
      for (int w : {4, 2}) {
        if (slots[i] % w == 0 && shape.slots % w == 0 &&
            i + static_cast<size_t>(w) <= slots.size() &&
            slots[i + static_cast<size_t>(w) - 1] == slots[i] + w - 1) {
          width = w;
          break;
        }
      }
      std::vector<Reg> regs;
      for (int j = 0; j < width; ++j) regs.push_back(slot_regs.at(slots[i] + j));
      Operand address = Operand::addr(row, static_cast<std::int64_t>(slots[i]) * 4);
      f->emit(load ? Instruction::ld_global(regs, address) : Instruction::st_global(address, regs));
      i += static_cast<size_t>(width);
    }
  }

  // TMEM address of this warp's first cell (kernels/plan_code.h).
  Reg warp_address_base() { return emit_warp_address(*f, plan, base, warp); }

  void transfer(bool store, Reg warp_base) { emit_transfer(*f, plan, store, warp_base, slot_regs); }

  // Raw[lane][column] <-> TMEM through 32x32b.x32, by warps 0-3 (one lane slab each).
  void raw_pass(Reg raw, bool fill) {
    Label skip = f->new_label(fill ? "skip_fill" : "skip_dump");
    Reg not_raw_warp = f->new_reg(RegClass::kPred);
    f->emit(Instruction::setp(ptx::Cmp::kGe, Type::kU32, not_raw_warp, warp, Operand::imm(4)));
    // Plain bra before the dump's loads, bra.uni before the fill's stores: the smaller SASS with
    // ptxas 13.0 (bench/codegen_report: 128 B less per store kernel; .uni is 128 B smaller for
    // fill).
    f->emit(Instruction::bra(skip, not_raw_warp, false, /*uniform=*/fill));
    Reg lane_row = row_address(raw, raw_row,
                               shape.raw_columns);  // tid < 128 = TMEM lane of this thread
    Reg slab = f->new_reg(RegClass::kB32), lanes = f->new_reg(RegClass::kB32);
    f->emit(Instruction::shl(Type::kB32, slab, warp, Operand::imm(21)));
    f->emit(Instruction::add(Type::kU32, lanes, base, slab));
    const Opcode op =
        Opcode::make(fill ? Direction::kStore : Direction::kLoad, Shape::k32x32b, kRawChunk, false)
            .value();
    std::vector<Reg> regs = f->new_regs(RegClass::kB32, kRawChunk);
    for (int column = 0; column < shape.raw_columns; column += kRawChunk) {
      Reg taddr = lanes;
      if (column != 0) {
        taddr = f->new_reg(RegClass::kB32);
        f->emit(Instruction::add(Type::kU32, taddr, lanes, Operand::imm(column)));
      }
      if (fill) {
        for (int j = 0; j < kRawChunk; j += 4)
          f->emit(Instruction::ld_global({regs[j], regs[j + 1], regs[j + 2], regs[j + 3]},
                                         Operand::addr(lane_row, 4L * (column + j))));
        f->emit(Instruction::tcgen05_st(op, taddr, regs));
      } else {
        f->emit(Instruction::tcgen05_ld(op, regs, taddr));
        f->emit(Instruction::tcgen05_wait_ld());
        for (int j = 0; j < kRawChunk; j += 4)
          f->emit(Instruction::st_global(Operand::addr(lane_row, 4L * (column + j)),
                                         {regs[j], regs[j + 1], regs[j + 2], regs[j + 3]}));
      }
    }
    if (fill) f->emit(Instruction::tcgen05_wait_st());
    f->place(skip);
  }

  // wait -> fence::before -> bar.sync -> fence::after: the cross-warp hand-off of
  // docs/tcgen05-rules.md §Sync.
  void cta_handoff() {
    f->emit(Instruction::tcgen05_fence_before());
    f->emit(Instruction::bar_sync(0));
    f->emit(Instruction::tcgen05_fence_after());
  }

  // The same across the CTA pair: bar.sync orders one CTA only, the cluster barrier both.
  void pair_handoff() {
    f->emit(Instruction::tcgen05_fence_before());
    f->emit(Instruction::cluster_arrive());
    f->emit(Instruction::cluster_wait());
    f->emit(Instruction::tcgen05_fence_after());
  }

  void lifecycle_handoff() { cta_group == 2 ? pair_handoff() : cta_handoff(); }

  // row = %ctaid.x * rows + tid: each CTA of the pair has its own block of a buffer.
  Reg cta_row(Reg cta, int rows) {
    Reg first = f->new_reg(RegClass::kB32), row = f->new_reg(RegClass::kB32);
    f->emit(Instruction::mul_lo(Type::kU32, first, cta, Operand::imm(rows)));
    f->emit(Instruction::add(Type::kU32, row, first, tid));
    return row;
  }

  Result<ptx::Module> build() {
    smem = module.add_shared("tmem_base_address");
    f = &module.add_function(Function::Kind::kEntry, kernel_name(kind));
    f->set_max_threads(shape.threads);
    Reg first = kind == KernelKind::kLoad || kind == KernelKind::kFill ? param_pointer("raw")
                                                                       : param_pointer("in");
    Reg second = kind == KernelKind::kRoundtrip || kind == KernelKind::kLoad ? param_pointer("out")
                 : kind == KernelKind::kStore                                ? param_pointer("raw")
                                              : param_pointer("raw2");
    tid = f->new_reg(RegClass::kB32);
    warp = f->new_reg(RegClass::kB32);
    not_warp0 = f->new_reg(RegClass::kPred);
    f->emit(Instruction::mov(Type::kU32, tid, Operand::special(ptx::SpecialReg::kTidX)));
    f->emit(Instruction::shr(Type::kU32, warp, tid, Operand::imm(5)));  // %warpid is not stable
    f->emit(Instruction::setp(ptx::Cmp::kNe, Type::kU32, not_warp0, warp, Operand::imm(0)));
    io_row = raw_row = tid;
    if (cta_group == 2) {
      Reg cta = f->new_reg(RegClass::kB32);
      f->emit(Instruction::mov(Type::kU32, cta, Operand::special(ptx::SpecialReg::kCtaidX)));
      io_row = cta_row(cta, shape.threads);
      raw_row = cta_row(cta, 128);
    }

    // Warp 0 allocates (cta_group::1: one warp of the CTA; ::2: warp 0 of each CTA of the pair,
    // docs/tcgen05-rules.md §Lifecycle). A plain bra (uniform all the same): after bra.uni,
    // ptxas 13.0 wraps the allocation in an ELECT loop, 128 to 2300 bytes more SASS per kernel
    // (bench/codegen_report, docs/benchmarks.md).
    after_alloc = f->new_label("after_alloc");
    f->emit(Instruction::bra(after_alloc, not_warp0));
    f->emit(Instruction::tcgen05_alloc(Operand::addr(smem), Operand::imm(plan.alloc_columns),
                                       cta_group));
    f->place(after_alloc);
    lifecycle_handoff();  // R31: both peers' allocs come before either uses the columns
    base = f->new_reg(RegClass::kB32);
    f->emit(Instruction::ld_shared(base, Operand::addr(smem)));

    if (kind == KernelKind::kLoad || kind == KernelKind::kFill) {
      raw_pass(first, /*fill=*/true);
      cta_handoff();
    }
    if (kind != KernelKind::kFill) {
      for (const RepeatStep& step : plan.repeats) {
        for (int slot : step.slots)
          if (!slot_regs.count(slot)) slot_regs.emplace(slot, Reg{});
        if (step.redval_slot >= 0) slot_regs.emplace(step.redval_slot, Reg{});  // ld.red
      }
      for (auto& [slot, reg] : slot_regs) reg = f->new_reg(RegClass::kB32);
      // Only the scope's warps transfer; the others go straight to the closing barrier. Where
      // every warp the launch shape (.maxntid) admits participates, the branch is dead but ptxas
      // keeps it (it does not bound %tid.x by .maxntid): 16 SASS instructions for the seed.
      const int launched_warps = shape.threads / 32;
      const bool all_participate = plan.scope.kind() == Scope::Kind::kWarp
                                       ? launched_warps == 1 && plan.scope.warp_id() == 0
                                       : launched_warps <= plan.warps();
      if (!all_participate) {
        after_transfer = f->new_label("after_transfer");
        not_participant = f->new_reg(RegClass::kPred);
        if (plan.scope.kind() == Scope::Kind::kWarp)
          f->emit(Instruction::setp(ptx::Cmp::kNe, Type::kU32, not_participant, warp,
                                    Operand::imm(plan.scope.warp_id())));
        else
          f->emit(Instruction::setp(ptx::Cmp::kGe, Type::kU32, not_participant, warp,
                                    Operand::imm(plan.warps())));
        f->emit(Instruction::bra(after_transfer, not_participant, false, true));
      }
      Reg warp_base = warp_address_base();
      if (kind != KernelKind::kLoad) {
        move_slots(row_address(first, io_row, shape.slots), /*load=*/true);
        transfer(/*store=*/true, warp_base);
      }
      if (kind != KernelKind::kStore) {
        transfer(/*store=*/false, warp_base);
        move_slots(row_address(second, io_row, shape.slots), /*load=*/false);
      }
      if (!all_participate) f->place(after_transfer);
    }
    if (kind == KernelKind::kStore || kind == KernelKind::kFill) {
      cta_handoff();
      raw_pass(second, /*fill=*/false);
    }

    // Every warp's accesses are waited for; fence, barrier, then the allocating warp frees. With a
    // pair the barrier is the cluster's: neither CTA frees while its peer still accesses (R31).
    lifecycle_handoff();
    end = f->new_label("end");
    f->emit(Instruction::bra(end, not_warp0, false, true));
    f->emit(Instruction::tcgen05_dealloc(base, Operand::imm(plan.alloc_columns), cta_group));
    f->emit(Instruction::tcgen05_relinquish(cta_group));
    f->place(end);
    // A cta_group::2 dealloc needs its peer CTA still active (R29): neither exits before both
    // have released.
    if (cta_group == 2) {
      f->emit(Instruction::cluster_arrive());
      f->emit(Instruction::cluster_wait());
    }
    f->emit(Instruction::ret());
    if (auto ok = module.verify(); !ok) return ok.error();
    return std::move(module);
  }
};

}  // namespace

}  // namespace tmem::kernels

namespace tmem {

Span<const KernelKind> all_kernel_kinds() noexcept {
  static constexpr KernelKind kKinds[] = {KernelKind::kRoundtrip, KernelKind::kStore,
                                          KernelKind::kLoad, KernelKind::kFill};
  return kKinds;
}

std::string_view to_string(KernelKind kind) noexcept {
  switch (kind) {
    case KernelKind::kRoundtrip:
      return "roundtrip";
    case KernelKind::kStore:
      return "store";
    case KernelKind::kLoad:
      return "load";
    case KernelKind::kFill:
      return "fill";
  }
  return "roundtrip";
}

Result<KernelKind> parse_kernel_kind(std::string_view text) {
  for (KernelKind kind : all_kernel_kinds())
    if (to_string(kind) == text) return kind;
  return Error(ErrorCode::kUsage,
               "unknown kernel '" + std::string(text) + "'; allowed: roundtrip, store, load, fill");
}

}  // namespace tmem

namespace tmem::kernels {

std::string kernel_name(KernelKind kind) { return "tmem_" + std::string(to_string(kind)); }

LaunchShape launch_shape(const Plan& plan, KernelKind kind, int cta_group) {
  LaunchShape shape;
  shape.ctas = cta_group == 2 ? 2 : 1;
  int warps = plan.scope.launch_warps();
  // The raw 32x32b passes need one warp per lane slab.
  if (kind != KernelKind::kRoundtrip) warps = std::max(warps, 4);
  shape.threads = 32 * warps;
  shape.slots = plan.regs_per_thread;
  shape.raw_columns = plan.alloc_columns;
  return shape;
}

Result<ptx::Module> build_kernel(const Plan& plan, KernelKind kind, Target target, int cta_group) {
  if (plan.repeats.empty())
    return Error(ErrorCode::kInternal, "build_kernel: the plan has no instructions");
  if (cta_group != 1 && cta_group != 2)
    return Error(ErrorCode::kUsage, "cta_group " + std::to_string(cta_group) +
                                        "; allowed: 1 (one CTA), 2 (a CTA pair)")
        .set_rule(Rule::kOneCtaGroupPerKernel);
  return Builder(plan, kind, target, cta_group).build();
}

std::string cuda_device_function(const Plan& plan) {
  std::ostringstream os;
  const bool store = !plan.op.is_load();
  os << "// " << plan.op.to_string() << " at scope " << plan.scope.to_string()
     << ", generated by libtmemjit.\n"
     << "// regs[s] is register slot s of the plan; tmem_base is the address tcgen05.alloc "
        "returned.\n"
     << "__device__ __forceinline__ void tmem_transfer(unsigned int tmem_base, unsigned int "
        "(&regs)["
     << std::max(plan.regs_per_thread, 1) << "]) {\n"
     << "  const unsigned int warp = threadIdx.x / 32;\n"
     << "  const unsigned int warp_base = tmem_base + (((warp % 4) * 32) << 16)";
  if (plan.scope.kind() != Scope::Kind::kWarp) {
    if (plan.group_column_stride) os << " + (warp % 4) * " << plan.group_column_stride << "u";
    if (plan.warpgroup_column_stride)
      os << " + (warp / 4) * " << plan.warpgroup_column_stride << "u";
  }
  os << ";\n";
  for (const RepeatStep& step : plan.repeats) {
    const std::int64_t delta = (static_cast<std::int64_t>(step.lane_offset) << 16) + step.column;
    const int n = static_cast<int>(step.slots.size());
    os << "  asm volatile(\"" << plan.op.to_string() << " ";
    auto vector = [&] {
      std::string text = "{";
      for (int i = 0; i < n; ++i) text += (i ? ", %" : "%") + std::to_string(store ? i + 1 : i);
      return text + "}";
    };
    const std::string imm = plan.imm ? ", " + std::to_string(*plan.imm) : "";
    // ld.red: the reduction result is one more output, between the vector and the address.
    const bool red = step.redval_slot >= 0;
    const std::string address = store ? "[%0]" : "[%" + std::to_string(n + (red ? 1 : 0)) + "]";
    if (store)
      os << address << imm << ", " << vector();
    else
      os << vector() << (red ? ", %" + std::to_string(n) : "") << ", " << address << imm;
    os << ";\"\n               : ";
    if (!store) {
      for (int i = 0; i < n; ++i)
        os << (i ? ", " : "") << "\"=r\"(regs[" << step.slots[static_cast<size_t>(i)] << "])";
      if (red) os << ", \"=r\"(regs[" << step.redval_slot << "])";
    }
    os << "\n               : \"r\"(warp_base + " << delta << "u)";
    if (store)
      for (int i = 0; i < n; ++i)
        os << ", \"r\"(regs[" << step.slots[static_cast<size_t>(i)] << "])";
    os << "\n               : \"memory\");\n";
  }
  os << "  asm volatile(\""
     << (store ? "tcgen05.wait::st.sync.aligned;" : "tcgen05.wait::ld.sync.aligned;")
     << "\" ::: \"memory\");\n}\n";
  return os.str();
}

}  // namespace tmem::kernels
