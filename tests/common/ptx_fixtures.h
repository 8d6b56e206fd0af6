// Hand-built PTX kernels for the compile tests and benchmarks (not the Plan-driven kernels):
// one kernel per opcode, and the seed-like 128-thread round trip used for the size investigation.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/ptx/ir.h"
#include "tmem/opcode.h"
#include "tmem/target.h"

namespace tmem::testing {

// Columns to allocate for one instruction of `opcode` (both halves of 16x32bx2, laid side by side):
// the next power of two, at least 32 (rule R22).
inline int alloc_columns_for(const Opcode& opcode) {
  const int used = opcode.atom_tmem_cols() * opcode.accesses();
  int ncols = 32;
  while (ncols < used) ncols *= 2;
  return ncols;
}

// The immHalfSplitoff that places the second half of a 16x32bx2 access right after the first.
inline std::optional<std::int64_t> contiguous_split_imm(const Opcode& opcode) {
  if (!opcode.is_split()) return std::nullopt;
  return opcode.atom_tmem_cols();
}

namespace detail {

struct Prologue {
  ptx::Reg tid, warp, base, taddr, not_warp0;
  ptx::Label after_alloc, end;
};

// Warp 0 allocates `ncols`; every warp gets taddr = base + lane offset of its warpgroup chunk.
inline Prologue alloc_prologue(ptx::Function& f, const std::string& smem, int ncols) {
  using ptx::Instruction;
  using ptx::Operand;
  using ptx::RegClass;
  using ptx::Type;
  Prologue p;
  p.after_alloc = f.new_label("after_alloc");
  p.end = f.new_label("end");
  p.tid = f.new_reg(RegClass::kB32);
  p.warp = f.new_reg(RegClass::kB32);
  p.not_warp0 = f.new_reg(RegClass::kPred);
  f.emit(Instruction::mov(Type::kU32, p.tid, Operand::special(ptx::SpecialReg::kTidX)));
  f.emit(Instruction::shr(Type::kU32, p.warp, p.tid, Operand::imm(5)));  // %warpid is unstable
  f.emit(Instruction::setp(ptx::Cmp::kNe, Type::kU32, p.not_warp0, p.warp, Operand::imm(0)));
  f.emit(Instruction::bra(p.after_alloc, p.not_warp0));
  f.emit(Instruction::tcgen05_alloc(Operand::addr(smem), Operand::imm(ncols)));
  f.place(p.after_alloc);
  f.emit(Instruction::tcgen05_fence_before());
  f.emit(Instruction::bar_sync(0));
  f.emit(Instruction::tcgen05_fence_after());
  p.base = f.new_reg(RegClass::kB32);
  f.emit(Instruction::ld_shared(p.base, Operand::addr(smem)));
  const ptx::Reg chunk = f.new_reg(RegClass::kB32);
  const ptx::Reg lane_offset = f.new_reg(RegClass::kB32);
  p.taddr = f.new_reg(RegClass::kB32);
  f.emit(Instruction::bit_and(Type::kB32, chunk, p.warp, Operand::imm(3)));
  f.emit(Instruction::shl(Type::kB32, lane_offset, chunk, Operand::imm(21)));  // 32 lanes << 16
  f.emit(Instruction::add(Type::kU32, p.taddr, p.base, lane_offset));
  return p;
}

// Fence + barrier so that every warp's accesses complete, then warp 0 frees the columns.
inline void dealloc_epilogue(ptx::Function& f, const Prologue& p, int ncols) {
  using ptx::Instruction;
  f.emit(Instruction::tcgen05_fence_before());
  f.emit(Instruction::bar_sync(0));
  f.emit(Instruction::tcgen05_fence_after());
  f.emit(Instruction::bra(p.end, p.not_warp0));
  f.emit(Instruction::tcgen05_dealloc(p.base, ptx::Operand::imm(ncols)));
  f.emit(Instruction::tcgen05_relinquish());
  f.place(p.end);
  f.emit(Instruction::ret());
}

// st.global of `regs` at `addr`, 4 (or fewer) per instruction.
inline void store_regs(ptx::Function& f, ptx::Reg addr, const std::vector<ptx::Reg>& regs) {
  for (size_t k = 0; k < regs.size(); k += 4) {
    const size_t n = std::min<size_t>(4, regs.size() - k);  // 1, 2 or 4: nregs is a power of 2
    std::vector<ptx::Reg> part(regs.begin() + static_cast<long>(k),
                               regs.begin() + static_cast<long>(k + n));
    f.emit(ptx::Instruction::st_global(ptx::Operand::addr(addr, static_cast<long>(k) * 4), part));
  }
}

}  // namespace detail

// Adds to `m` a kernel `name` of `threads` threads (a multiple of 32, at most 128) that runs one
// `opcode`: alloc → fence/bar → st (values tid + k) → wait::st, or ld → wait::ld → st.global of the
// results to out[tid][k] → fence/bar → dealloc → relinquish. The kernels of one module share the
// module-scope shared variable "tmem_base" (each block gets its own copy).
inline void add_single_opcode_kernel(ptx::Module& m, const Opcode& opcode, const std::string& name,
                                     int threads = 32) {
  using ptx::Instruction;
  using ptx::Operand;
  using ptx::RegClass;
  using ptx::Type;
  const std::string smem = "tmem_base";
  const auto& vars = m.shared_vars();
  if (std::none_of(vars.begin(), vars.end(),
                   [&](const ptx::SharedVar& v) { return v.name == smem; }))
    m.add_shared(smem);
  ptx::Function& f = m.add_function(ptx::Function::Kind::kEntry, name);
  const std::string out = f.add_param(Type::kU64, name + "_out");
  f.set_max_threads(threads);
  const int ncols = alloc_columns_for(opcode);
  const int nregs = opcode.regs_per_thread();

  const ptx::Reg out_param = f.new_reg(RegClass::kB64);
  const ptx::Reg out_global = f.new_reg(RegClass::kB64);
  f.emit(Instruction::ld_param(Type::kU64, out_param, out));
  f.emit(Instruction::cvta_to_global(out_global, out_param));
  const detail::Prologue p = detail::alloc_prologue(f, smem, ncols);

  std::vector<ptx::Reg> regs = f.new_regs(RegClass::kB32, nregs);
  if (opcode.is_load()) {
    f.emit(Instruction::tcgen05_ld(opcode, regs, p.taddr, contiguous_split_imm(opcode)));
    f.emit(Instruction::tcgen05_wait_ld());
    const ptx::Reg offset = f.new_reg(RegClass::kB64);
    const ptx::Reg addr = f.new_reg(RegClass::kB64);
    f.emit(Instruction::mul_wide(Type::kU32, offset, p.tid, Operand::imm(nregs * 4)));
    f.emit(Instruction::add(Type::kU64, addr, out_global, offset));
    detail::store_regs(f, addr, regs);
  } else {
    for (int k = 0; k < nregs; ++k)
      f.emit(Instruction::add(Type::kU32, regs[static_cast<size_t>(k)], p.tid, Operand::imm(k)));
    f.emit(Instruction::tcgen05_st(opcode, p.taddr, regs, contiguous_split_imm(opcode)));
    f.emit(Instruction::tcgen05_wait_st());
  }
  detail::dealloc_epilogue(f, p, ncols);
}

// A module holding only the single-opcode kernel "tmem_single_op".
inline ptx::Module single_opcode_kernel(const Opcode& opcode, Target target = Target::kSm100a,
                                        int threads = 32) {
  ptx::Module m(target);
  add_single_opcode_kernel(m, opcode, "tmem_single_op", threads);
  return m;
}

// A PTX identifier for an opcode's kernel: "ld_16x32bx2_x4_pack".
inline std::string kernel_name_for(const Opcode& opcode) {
  std::string shape(to_string(opcode.shape()));
  return std::string(to_string(opcode.direction())) + "_" + shape + "_x" +
         std::to_string(opcode.num()) + (opcode.packed() ? "_pack" : "");
}

// The seed-like round trip: 128 threads, alloc 64 columns, each thread loads 64 words from
// in[tid][0..64), tcgen05.st 32x32b.x64 → wait::st → tcgen05.ld 32x32b.x64 → wait::ld, stores them
// to out[tid][0..64), then dealloc and relinquish. Used for the nvJitLink/ptxas size comparison.
inline ptx::Module seed_roundtrip_kernel(Target target = Target::kSm100a) {
  using ptx::Instruction;
  using ptx::Operand;
  using ptx::RegClass;
  using ptx::Type;
  const Opcode st = Opcode::parse("tcgen05.st.sync.aligned.32x32b.x64.b32").value();
  const Opcode ld = Opcode::parse("tcgen05.ld.sync.aligned.32x32b.x64.b32").value();
  ptx::Module m(target);
  const std::string& smem = m.add_shared("tmem_base");
  ptx::Function& f = m.add_function(ptx::Function::Kind::kEntry, "tmem_roundtrip");
  const std::string in = f.add_param(Type::kU64, "in");
  const std::string out = f.add_param(Type::kU64, "out");
  f.set_max_threads(128);
  const ptx::Reg in_param = f.new_reg(RegClass::kB64);
  const ptx::Reg out_param = f.new_reg(RegClass::kB64);
  const ptx::Reg in_global = f.new_reg(RegClass::kB64);
  const ptx::Reg out_global = f.new_reg(RegClass::kB64);
  f.emit(Instruction::ld_param(Type::kU64, in_param, in));
  f.emit(Instruction::ld_param(Type::kU64, out_param, out));
  f.emit(Instruction::cvta_to_global(in_global, in_param));
  f.emit(Instruction::cvta_to_global(out_global, out_param));
  const detail::Prologue p = detail::alloc_prologue(f, smem, 64);

  const ptx::Reg offset = f.new_reg(RegClass::kB64);
  const ptx::Reg src = f.new_reg(RegClass::kB64);
  const ptx::Reg dst = f.new_reg(RegClass::kB64);
  f.emit(Instruction::mul_wide(Type::kU32, offset, p.tid, Operand::imm(64 * 4)));
  f.emit(Instruction::add(Type::kU64, src, in_global, offset));
  f.emit(Instruction::add(Type::kU64, dst, out_global, offset));
  const std::vector<ptx::Reg> values = f.new_regs(RegClass::kB32, 64);
  for (size_t k = 0; k < values.size(); k += 4)
    f.emit(Instruction::ld_global({values[k], values[k + 1], values[k + 2], values[k + 3]},
                                  Operand::addr(src, static_cast<long>(k) * 4)));
  f.emit(Instruction::tcgen05_st(st, p.taddr, values));
  f.emit(Instruction::tcgen05_wait_st());
  const std::vector<ptx::Reg> loaded = f.new_regs(RegClass::kB32, 64);
  f.emit(Instruction::tcgen05_ld(ld, loaded, p.taddr));
  f.emit(Instruction::tcgen05_wait_ld());
  detail::store_regs(f, dst, loaded);
  detail::dealloc_epilogue(f, p, 64);
  return m;
}

// A hand-written PTX kernel of a user's (entry `user`, one .u64 parameter) that calls the
// generated .funcs without declaring them: the lifecycle and acc_ld (a 64-register load).
// `extra_line` goes in as line 12.
inline std::string user_ptx_kernel(const std::string& extra_line = "") {
  return ".version 8.6\n"
         ".target sm_100a\n"
         ".address_size 64\n"
         "\n"
         ".shared .align 4 .b32 base_shared;\n"
         "\n"
         ".visible .entry user(.param .u64 out)\n"
         "{\n"
         "\t.reg .b32 %r<8>;\n"
         "\t.reg .b64 %rd<4>;\n"
         "\t.reg .pred %p<2>;\n" +
         extra_line +
         "\tmov.u32 %r0, %tid.x;\n"
         "\tshr.u32 %r1, %r0, 5;\n"
         "\tsetp.ne.u32 %p0, %r1, 0;\n"
         "\tmov.u32 %r2, base_shared;\n"
         "\t@%p0 bra $skip_alloc;\n"
         "\t{\n\t.param .b32 a0;\n\t.param .b32 a1;\n\tst.param.b32 [a0], %r2;\n"
         "\tst.param.b32 [a1], 128;\n\tcall.uni tmemjit_alloc, (a0, a1);\n\t}\n"
         "$skip_alloc:\n"
         "\tcall.uni tmemjit_fence_before_sync;\n"
         "\tbar.sync 0;\n"
         "\tcall.uni tmemjit_fence_after_sync;\n"
         "\tld.shared.u32 %r3, [base_shared];\n"
         "\t{\n\t.param .b32 b0;\n\t.param .align 4 .b8 rv[256];\n\tst.param.b32 [b0], %r3;\n"
         "\tcall.uni (rv), acc_ld, (b0);\n\tld.param.b32 %r4, [rv];\n\t}\n"
         "\tld.param.u64 %rd0, [out];\n"
         "\tcvta.to.global.u64 %rd1, %rd0;\n"
         "\tmul.wide.u32 %rd2, %r0, 4;\n"
         "\tadd.u64 %rd3, %rd1, %rd2;\n"
         "\tst.global.b32 [%rd3], %r4;\n"
         "\tcall.uni tmemjit_fence_before_sync;\n"
         "\tbar.sync 0;\n"
         "\tcall.uni tmemjit_fence_after_sync;\n"
         "\t@%p0 bra $end;\n"
         "\t{\n\t.param .b32 c0;\n\t.param .b32 c1;\n\tst.param.b32 [c0], %r3;\n"
         "\tst.param.b32 [c1], 128;\n\tcall.uni tmemjit_dealloc, (c0, c1);\n\t}\n"
         "$end:\n"
         "\tret;\n"
         "}\n";
}

}  // namespace tmem::testing
