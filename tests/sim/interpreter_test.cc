// The CPU simulator on hand-built PTX IR kernels: the data a correct kernel moves, and one kernel
// per runtime rule that breaks it and is rejected with the rule, the PTX line, the warp and the
// cell.
#include "runtime/sim/interpreter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>

namespace tmem::sim {
namespace {

using ptx::Cmp;
using ptx::Function;
using ptx::Instruction;
using ptx::Label;
using ptx::Operand;
using ptx::Reg;
using ptx::RegClass;
using ptx::Type;

Opcode op(const char* text) { return Opcode::parse(text).value(); }
const Opcode kSt1 = op("tcgen05.st.sync.aligned.32x32b.x1.b32");
const Opcode kLd1 = op("tcgen05.ld.sync.aligned.32x32b.x1.b32");

// The knobs of the canonical kernel of docs/tcgen05-rules.md §Sync, one switch per step a test may
// break:
//   warp 0 allocs -> fence/bar/fence -> ld.shared base -> per warp: In[tid] -> st at its slab ->
//   wait::st -> ld -> wait::ld -> Out[tid] -> fence/bar/fence -> warp 0 deallocs -> relinquish.
struct Variant {
  int threads = 128;
  std::int64_t ncols = 32;
  bool ncols_in_register = false;  // the verifier accepts any register; the simulator checks it
  bool first_fence_before = true, first_bar = true, first_fence_after = true;
  bool slab = true;                   // add the warp's lane slab to the address
  std::int64_t column = 0;            // added to the address
  bool column_per_warpgroup = false;  // add warp / 4: warps w and w+4 share a lane slab
  bool wait_st = true, wait_ld = true;
  bool use_before_wait = false;  // store the ld's destination before wait::ld
  bool store_out = true;         // Out[tid] = the ld's destination
  bool last_fence_before = true, last_bar = true, last_fence_after = true;
  int dealloc_warp = 0;  // -1: no dealloc
  std::int64_t dealloc_ncols = 32;
  bool dealloc_ncols_in_register = false;
  std::int64_t dealloc_offset = 0;
  bool relinquish = true;
};

// A kernel under construction: the canonical prologue, a hook for the test's own instructions.
struct Kernel {
  ptx::Module module{Target::kSm100a};
  Function* f = nullptr;
  std::string smem;
  Reg in, out, tid, warp, lane, not_warp0, base, taddr, row_in, row_out;

  explicit Kernel(int threads) {
    smem = module.add_shared("tmem_base_address", 4, 4);
    f = &module.add_function(Function::Kind::kEntry, "k");
    f->set_max_threads(threads);
    in = param("in");
    out = param("out");
    tid = f->new_reg(RegClass::kB32);
    warp = f->new_reg(RegClass::kB32);
    lane = f->new_reg(RegClass::kB32);
    not_warp0 = f->new_reg(RegClass::kPred);
    f->emit(Instruction::mov(Type::kU32, tid, Operand::special(ptx::SpecialReg::kTidX)));
    f->emit(Instruction::shr(Type::kU32, warp, tid, Operand::imm(5)));
    f->emit(Instruction::bit_and(Type::kB32, lane, tid, Operand::imm(31)));
    f->emit(Instruction::setp(Cmp::kNe, Type::kU32, not_warp0, warp, Operand::imm(0)));
    row_in = row(in);
    row_out = row(out);
  }
  Reg param(const std::string& name) {
    const std::string& p = f->add_param(Type::kU64, name);
    Reg raw = f->new_reg(RegClass::kB64), global = f->new_reg(RegClass::kB64);
    f->emit(Instruction::ld_param(Type::kU64, raw, p));
    f->emit(Instruction::cvta_to_global(global, raw));
    return global;
  }
  Reg row(Reg array) {  // &array[tid]
    Reg offset = f->new_reg(RegClass::kB64), address = f->new_reg(RegClass::kB64);
    f->emit(Instruction::mul_wide(Type::kU32, offset, tid, Operand::imm(4)));
    f->emit(Instruction::add(Type::kU64, address, array, offset));
    return address;
  }
  // Runs `body` in warp `w` only (a uniform branch around it).
  void in_warp(int w, const std::function<void()>& body) {
    Reg skip = f->new_reg(RegClass::kPred);
    Label after = f->new_label("after_warp");
    f->emit(Instruction::setp(Cmp::kNe, Type::kU32, skip, warp, Operand::imm(w)));
    f->emit(Instruction::bra(after, skip, false, true));
    body();
    f->place(after);
  }
  void alloc(Operand ncols, std::int64_t smem_offset = 0) {
    f->emit(Instruction::tcgen05_alloc(Operand::addr(smem, smem_offset), std::move(ncols)));
  }
  void handoff(bool before = true, bool bar = true, bool after = true) {
    if (before) f->emit(Instruction::tcgen05_fence_before());
    if (bar) f->emit(Instruction::bar_sync(0));
    if (after) f->emit(Instruction::tcgen05_fence_after());
  }
  void load_base() {
    base = f->new_reg(RegClass::kB32);
    f->emit(Instruction::ld_shared(base, Operand::addr(smem)));
  }
  // base + (32 * (warp % 4)) << 16 + column
  Reg slab_address(bool slab, std::int64_t column) {
    Reg a = base;
    if (slab) {
      Reg rank = f->new_reg(RegClass::kB32), lanes = f->new_reg(RegClass::kB32),
          sum = f->new_reg(RegClass::kB32);
      f->emit(Instruction::bit_and(Type::kB32, rank, warp, Operand::imm(3)));
      f->emit(Instruction::shl(Type::kB32, lanes, rank, Operand::imm(21)));
      f->emit(Instruction::add(Type::kU32, sum, a, lanes));
      a = sum;
    }
    if (column) {
      Reg sum = f->new_reg(RegClass::kB32);
      f->emit(Instruction::add(Type::kU32, sum, a, Operand::imm(column)));
      a = sum;
    }
    return a;
  }
};

// The canonical kernel with the knobs of `v`; `extra` adds instructions right after the transfer.
ptx::Module canonical(const Variant& v, const std::function<void(Kernel&)>& extra = {}) {
  Kernel k(v.threads);
  ptx::Function& f = *k.f;
  k.in_warp(0, [&] {
    if (v.ncols_in_register) {
      Reg n = f.new_reg(RegClass::kB32);
      f.emit(Instruction::mov(Type::kU32, n, Operand::imm(v.ncols)));
      k.alloc(n);
    } else {
      k.alloc(Operand::imm(v.ncols));
    }
  });
  k.handoff(v.first_fence_before, v.first_bar, v.first_fence_after);
  k.load_base();
  k.taddr = k.slab_address(v.slab, v.column);
  if (v.column_per_warpgroup) {
    Reg group = f.new_reg(RegClass::kB32), sum = f.new_reg(RegClass::kB32);
    f.emit(Instruction::shr(Type::kU32, group, k.warp, Operand::imm(2)));
    f.emit(Instruction::add(Type::kU32, sum, k.taddr, group));
    k.taddr = sum;
  }
  Reg value = f.new_reg(RegClass::kB32), back = f.new_reg(RegClass::kB32);
  f.emit(Instruction::ld_global({value}, Operand::addr(k.row_in)));
  f.emit(Instruction::tcgen05_st(kSt1, k.taddr, {value}));
  if (v.wait_st) f.emit(Instruction::tcgen05_wait_st());
  f.emit(Instruction::tcgen05_ld(kLd1, {back}, k.taddr));
  if (v.use_before_wait) f.emit(Instruction::st_global(Operand::addr(k.row_out), {back}));
  if (v.wait_ld) f.emit(Instruction::tcgen05_wait_ld());
  if (v.store_out) f.emit(Instruction::st_global(Operand::addr(k.row_out), {back}));
  if (extra) extra(k);
  k.handoff(v.last_fence_before, v.last_bar, v.last_fence_after);
  if (v.dealloc_warp >= 0)
    k.in_warp(v.dealloc_warp, [&] {
      Reg address = k.base;
      if (v.dealloc_offset) {
        address = f.new_reg(RegClass::kB32);
        f.emit(Instruction::add(Type::kU32, address, k.base, Operand::imm(v.dealloc_offset)));
      }
      if (v.dealloc_ncols_in_register) {
        Reg n = f.new_reg(RegClass::kB32);
        f.emit(Instruction::mov(Type::kU32, n, Operand::imm(v.dealloc_ncols)));
        f.emit(Instruction::tcgen05_dealloc(address, n));
      } else {
        f.emit(Instruction::tcgen05_dealloc(address, Operand::imm(v.dealloc_ncols)));
      }
      if (v.relinquish) f.emit(Instruction::tcgen05_relinquish());
    });
  f.emit(Instruction::ret());
  return std::move(k.module);
}

struct RunResult {
  Status status;
  std::vector<std::uint32_t> out;
};

RunResult run(const ptx::Module& module, int threads = 128, std::uint64_t budget = 0) {
  std::vector<std::uint32_t> in(static_cast<size_t>(threads)),
      out(static_cast<size_t>(threads), 0xFFFFFFFFu);
  for (int t = 0; t < threads; ++t)
    in[static_cast<size_t>(t)] = 0x1000u * static_cast<std::uint32_t>(t) + 7u;
  GlobalMemory memory;
  const std::uint64_t params[2] = {memory.map_read_only("in", in), memory.map("out", out)};
  Config config;
  config.threads = threads;
  if (budget) config.instruction_budget = budget;
  Status status = run_kernel(module, "k", config, params, memory);
  return {std::move(status), std::move(out)};
}

// The run fails with kWrongData whose message holds every needle, and names a PTX line.
void expect_violation(const ptx::Module& module, std::initializer_list<const char*> needles,
                      int threads = 128) {
  RunResult result = run(module, threads);
  ASSERT_FALSE(result.status.ok()) << "the simulator accepted a kernel that breaks a rule";
  const Error& e = result.status.error();
  EXPECT_EQ(e.code(), ErrorCode::kWrongData) << e.full_text();
  EXPECT_EQ(e.message().rfind("sim: ", 0), 0u) << e.message();
  for (const char* needle : needles)
    EXPECT_NE(e.message().find(needle), std::string::npos) << needle << "\n" << e.full_text();
  EXPECT_NE(e.details().find("kernel k"), std::string::npos) << e.details();
}

std::vector<std::uint32_t> expected_out(int threads) {
  std::vector<std::uint32_t> out(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t)
    out[static_cast<size_t>(t)] = 0x1000u * static_cast<std::uint32_t>(t) + 7u;
  return out;
}

TEST(Sim, CanonicalKernelMovesTheData) {
  RunResult result = run(canonical({}));
  ASSERT_TRUE(result.status.ok()) << result.status.error().full_text();
  EXPECT_EQ(result.out, expected_out(128));
}

TEST(Sim, LowestPlacementMovesTheDataToo) {
  std::vector<std::uint32_t> in = expected_out(128), out(128, 0);
  GlobalMemory memory;
  const std::uint64_t params[2] = {memory.map_read_only("in", in), memory.map("out", out)};
  Config config;
  config.placement = Placement::kLowest;
  Status status = run_kernel(canonical({}), "k", config, params, memory);
  ASSERT_TRUE(status.ok()) << status.error().full_text();
  EXPECT_EQ(out, in);
}

TEST(Sim, TwoWarpgroupsShareTheSlabsAtDifferentColumns) {
  // Warps w and w+4 share lane slab w % 4 (docs/tcgen05-rules.md §Addresses); warp w+4 uses the
  // next column.
  Variant v;
  v.threads = 256;
  v.column_per_warpgroup = true;
  RunResult result = run(canonical(v), 256);
  ASSERT_TRUE(result.status.ok()) << result.status.error().full_text();
  EXPECT_EQ(result.out, expected_out(256));
}

TEST(SimRules, WarpsOfOneSlabWriteOneCellWithoutAHandOffR31) {
  Variant v;
  v.threads = 256;  // warps 0 and 4 both write lane 0..31, column 480
  expect_violation(canonical(v),
                   {"R31", "warp 4 lane 0 register 0 overwrites TMEM lane 0, column 480",
                    "which the tcgen05.st at line", "by warp 0 wrote"},
                   256);
}

TEST(Sim, PackAndUnpackUseTheLowHalvesOfAdjacentCells) {
  Kernel k(128);
  ptx::Function& f = *k.f;
  k.in_warp(0, [&] { k.alloc(Operand::imm(32)); });
  k.handoff();
  k.load_base();
  Reg a = k.slab_address(true, 0);
  Reg value = f.new_reg(RegClass::kB32), packed = f.new_reg(RegClass::kB32);
  std::vector<Reg> plain = f.new_regs(RegClass::kB32, 2);
  f.emit(Instruction::ld_global({value}, Operand::addr(k.row_in)));
  f.emit(
      Instruction::tcgen05_st(op("tcgen05.st.sync.aligned.32x32b.x1.unpack::16b.b32"), a, {value}));
  f.emit(Instruction::tcgen05_wait_st());
  f.emit(
      Instruction::tcgen05_ld(op("tcgen05.ld.sync.aligned.32x32b.x1.pack::16b.b32"), {packed}, a));
  f.emit(Instruction::tcgen05_ld(op("tcgen05.ld.sync.aligned.32x32b.x2.b32"), plain, a));
  f.emit(Instruction::tcgen05_wait_ld());
  // out[tid] = packed; the low halves of the two plain cells must be the value's halves.
  Reg lo = f.new_reg(RegClass::kB32), hi = f.new_reg(RegClass::kB32),
      shifted = f.new_reg(RegClass::kB32), both = f.new_reg(RegClass::kB32),
      same = f.new_reg(RegClass::kPred);
  f.emit(Instruction::bit_and(Type::kB32, lo, plain[0], Operand::imm(0xFFFF)));
  f.emit(Instruction::bit_and(Type::kB32, hi, plain[1], Operand::imm(0xFFFF)));
  f.emit(Instruction::shl(Type::kB32, shifted, hi, Operand::imm(16)));
  f.emit(Instruction::bit_or(Type::kB32, both, lo, shifted));
  f.emit(Instruction::setp(Cmp::kEq, Type::kU32, same, both, packed));
  Label skip = f.new_label("differ");
  f.emit(Instruction::bra(skip, same, /*negate=*/true));
  f.emit(Instruction::st_global(Operand::addr(k.row_out), {packed}));
  f.place(skip);
  k.handoff();
  k.in_warp(0, [&] {
    f.emit(Instruction::tcgen05_dealloc(k.base, Operand::imm(32)));
    f.emit(Instruction::tcgen05_relinquish());
  });
  f.emit(Instruction::ret());
  RunResult result = run(k.module);
  ASSERT_TRUE(result.status.ok()) << result.status.error().full_text();
  EXPECT_EQ(result.out, expected_out(128));
}

// ---- one kernel per runtime rule ----------------------------------------------------------------

TEST(SimRules, LaneSlabR17) {
  Variant v;
  v.slab = false;  // every warp addresses lanes 0..31
  expect_violation(canonical(v),
                   {"R17", "warp 1", "may only access lanes 32..63", "TMEM lane 0, column 480",
                    "(tcgen05.st.sync.aligned.32x32b.x1.b32)"});
}

TEST(SimRules, UnallocatedColumnR19) {
  Variant v;
  v.column = -32;  // the allocation holds columns 480..511
  expect_violation(canonical(v), {"R19", "warp 0", "TMEM lane 0, column 448", "not allocated"});
}

TEST(SimRules, OutsideTmemR16) {
  Variant v;
  v.column = 600;
  expect_violation(canonical(v), {"R16", "outside the 128 lanes x 512 columns"});
}

TEST(SimRules, AllocSizeR22) {
  Variant v;
  v.ncols = 48;
  v.ncols_in_register = true;
  expect_violation(canonical(v), {"R22", "warp 0 allocates 48 columns", "(tcgen05.alloc"});
}

TEST(SimRules, DeallocSizeR22) {
  Variant v;
  v.dealloc_ncols = 96;  // the IR verifier refuses an immediate 96; a register is a runtime value
  v.dealloc_ncols_in_register = true;
  expect_violation(canonical(v), {"R22", "warp 0 deallocates 96 columns", "(tcgen05.dealloc"});
}

TEST(SimRules, DeallocOfAnotherSizeR23) {
  Variant v;
  v.dealloc_ncols = 64;
  expect_violation(canonical(v), {"R23", "deallocates 64 columns of the 32-column allocation"});
}

TEST(SimRules, DeallocOfAnAddressAllocDidNotReturnR23) {
  Variant v;
  v.dealloc_offset = 1;
  expect_violation(canonical(v), {"R23", "not the start of a live allocation"});
}

TEST(SimRules, DeallocByAnotherWarpR29) {
  Variant v;
  v.dealloc_warp = 1;
  expect_violation(canonical(v), {"R29", "warp 1 deallocates columns that warp 0 allocated"});
}

TEST(SimRules, NothingLeftAllocatedR26) {
  Variant v;
  v.dealloc_warp = -1;
  expect_violation(canonical(v),
                   {"R26", "exits with TMEM columns 480..511 still allocated by warp 0"});
}

// Warp 0 allocates 32 columns, then `second` more (into the second shared word).
ptx::Module two_allocs(std::int64_t second, bool relinquish_between) {
  return canonical({}, [&](Kernel& k) {
    k.in_warp(0, [&] {
      if (relinquish_between) k.f->emit(Instruction::tcgen05_relinquish());
      k.alloc(Operand::imm(second), 4);
    });
  });
}

TEST(SimRules, AllocSizesMustNotIncreaseR24) {
  expect_violation(two_allocs(64, false),
                   {"R24", "allocates 64 columns after an allocation of 32"});
}

TEST(SimRules, AllocAfterRelinquishR25) {
  expect_violation(two_allocs(32, true), {"R25", "gave up its allocation permit at line"});
}

TEST(SimRules, AllocThatCanNeverBeSatisfiedR30) {
  Variant v;
  v.ncols = 512;
  v.dealloc_ncols = 512;
  ptx::Module m =
      canonical(v, [&](Kernel& k) { k.in_warp(0, [&] { k.alloc(Operand::imm(512), 4); }); });
  expect_violation(m, {"R30", "live allocations hold 512 of 512", "blocks forever"});
}

TEST(SimRules, LoadBeforeWaitStR31) {
  Variant v;
  v.wait_st = false;
  expect_violation(canonical(v),
                   {"R31", "(tcgen05.ld.sync.aligned.32x32b.x1.b32)",
                    "reads TMEM lane 0, column 480", "has not executed tcgen05.wait::st"});
}

// Reading a load's destination before tcgen05.wait::ld is allowed: the ISA honours the true
// register dependency (docs/tcgen05-rules.md §Sync), and the value read is the loaded one.
TEST(SimRules, RegistersReadBeforeWaitLdHoldTheLoadedValues) {
  Variant v;
  v.use_before_wait = true;
  v.store_out = false;
  RunResult result = run(canonical(v));
  ASSERT_TRUE(result.status.ok()) << result.status.error().full_text();
  EXPECT_EQ(result.out, expected_out(128));
}

TEST(SimRules, DeallocBeforeWaitLdR31) {
  Variant v;
  v.wait_ld = false;
  v.store_out = false;  // the destination is never used: only the dealloc can notice
  expect_violation(canonical(v), {"R31", "warp 0 deallocates TMEM lane 0, column 480",
                                  "tcgen05.ld at line", "has not executed tcgen05.wait::ld"});
}

TEST(SimRules, DeallocWithoutTheHandOffR31) {
  for (int missing = 0; missing < 3; ++missing) {
    Variant v;
    v.last_fence_before = missing != 0;
    v.last_bar = missing != 1;
    v.last_fence_after = missing != 2;
    SCOPED_TRACE("missing step " + std::to_string(missing));
    // Warp 0 frees lanes that warps 1-3 accessed; each step of fence::before -> bar -> fence::after
    // is needed.
    if (missing == 1) {
      // Without the barrier warp 0 frees the columns before warps 1-3 run (the simulator runs a
      // warp until it blocks); their accesses then find nothing allocated.
      expect_violation(canonical(v), {"R19", "warp 1", "not allocated"});
      continue;
    }
    const char* why = missing == 0 ? "warp 1 has not executed tcgen05.fence::before_thread_sync"
                                   : "warp 0 has not executed tcgen05.fence::after_thread_sync";
    expect_violation(canonical(v), {"R31", "warp 0 deallocates TMEM lane 32, column 480", why});
  }
}

TEST(SimRules, AllocationUsedBeforeItsHandOffR31) {
  Variant v;
  v.first_fence_before = false;
  expect_violation(canonical(v), {"R31", "warp 1", "of the allocation made at line",
                                  "before it is handed over", "fence::before_thread_sync"});
}

TEST(SimRules, SharedAddressReadWithoutBarrier) {
  Variant v;
  v.first_bar = false;
  expect_violation(canonical(v), {"data race", "(ld.shared.u32)", "which warp 0 wrote"});
}

TEST(SimRules, CrossWarpHandOffOfTmemDataR31) {
  // Warp 4 writes lanes 0..31 at column 482 and waits; a bare barrier (no fences) follows; warp 0
  // then reads those cells.
  Variant v;
  v.threads = 256;
  v.column_per_warpgroup = true;
  ptx::Module m = canonical(v, [](Kernel& k) {
    Reg a = k.f->new_reg(RegClass::kB32), value = k.f->new_reg(RegClass::kB32),
        back = k.f->new_reg(RegClass::kB32);
    Reg rank = k.f->new_reg(RegClass::kB32), lanes = k.f->new_reg(RegClass::kB32),
        slab = k.f->new_reg(RegClass::kB32);
    k.f->emit(Instruction::bit_and(Type::kB32, rank, k.warp, Operand::imm(3)));
    k.f->emit(Instruction::shl(Type::kB32, lanes, rank, Operand::imm(21)));
    k.f->emit(Instruction::add(Type::kU32, slab, k.base, lanes));
    k.f->emit(Instruction::add(Type::kU32, a, slab, Operand::imm(2)));
    k.in_warp(4, [&] {
      k.f->emit(Instruction::mov(Type::kU32, value, Operand::imm(5)));
      k.f->emit(Instruction::tcgen05_st(kSt1, a, {value}));
      k.f->emit(Instruction::tcgen05_wait_st());
    });
    k.f->emit(Instruction::bar_sync(0));
    k.in_warp(0, [&] {
      k.f->emit(Instruction::tcgen05_ld(kLd1, {back}, a));
      k.f->emit(Instruction::tcgen05_wait_ld());
    });
  });
  expect_violation(m,
                   {"R31", "warp 0 lane 0 register 0 reads TMEM lane 0, column 482",
                    "by warp 4 wrote", "warp 4 has not executed tcgen05.fence::before_thread_sync"},
                   256);
}

TEST(SimRules, NonUniformAddressR21) {
  Kernel k(32);
  ptx::Function& f = *k.f;
  k.alloc(Operand::imm(32));
  k.load_base();
  Reg a = f.new_reg(RegClass::kB32), value = f.new_reg(RegClass::kB32);
  f.emit(Instruction::add(Type::kU32, a, k.base, k.lane));  // a different column per lane
  f.emit(Instruction::mov(Type::kU32, value, Operand::imm(1)));
  f.emit(Instruction::tcgen05_st(kSt1, a, {value}));
  f.emit(Instruction::ret());
  expect_violation(k.module, {"R21", "the TMEM address is 0x1e1 in lane 1 but 0x1e0 in lane 0"},
                   32);
}

TEST(SimRules, DivergentCollective) {
  Kernel k(32);
  ptx::Function& f = *k.f;
  Reg low = f.new_reg(RegClass::kPred);
  Label skip = f.new_label("skip");
  f.emit(Instruction::setp(Cmp::kLt, Type::kU32, low, k.lane, Operand::imm(16)));
  f.emit(Instruction::bra(skip, low));
  f.emit(Instruction::tcgen05_wait_st());
  f.place(skip);
  f.emit(Instruction::tcgen05_fence_before());
  f.emit(Instruction::ret());
  expect_violation(
      k.module,
      {"divergence", "lanes 16-31 of warp 0 reach this instruction while lanes 0-15 are at line"},
      32);
}

TEST(SimRules, BraUniWithADivergentGuard) {
  Kernel k(32);
  ptx::Function& f = *k.f;
  Reg low = f.new_reg(RegClass::kPred);
  Label skip = f.new_label("skip");
  f.emit(Instruction::setp(Cmp::kLt, Type::kU32, low, k.lane, Operand::imm(3)));
  f.emit(Instruction::bra(skip, low, false, true));
  f.place(skip);
  f.emit(Instruction::ret());
  expect_violation(k.module, {"divergence", "true in lanes 0-2 and false in lanes 3-31", "bra.uni"},
                   32);
}

TEST(SimRules, OverlappingSplitStoreR20) {
  Kernel k(32);
  ptx::Function& f = *k.f;
  k.alloc(Operand::imm(32));
  k.load_base();
  std::vector<Reg> v = f.new_regs(RegClass::kB32, 2);
  for (Reg r : v) f.emit(Instruction::mov(Type::kU32, r, Operand::imm(1)));
  f.emit(
      Instruction::tcgen05_st(op("tcgen05.st.sync.aligned.16x32bx2.x2.b32"), k.base, v, /*imm=*/1));
  f.emit(Instruction::ret());
  expect_violation(k.module, {"R20", "which this instruction already wrote"}, 32);
}

TEST(SimRules, RepeatedLoadDestinationR13) {
  Kernel k(32);
  ptx::Function& f = *k.f;
  k.alloc(Operand::imm(32));
  k.load_base();
  Reg r = f.new_reg(RegClass::kB32);
  f.emit(Instruction::tcgen05_ld(op("tcgen05.ld.sync.aligned.32x32b.x2.b32"), {r, r}, k.base));
  f.emit(Instruction::ret());
  expect_violation(k.module, {"R13", "appears twice"}, 32);
}

TEST(SimRules, LoadDestinationIsTheAddressRegisterR13) {
  Kernel k(32);
  ptx::Function& f = *k.f;
  k.alloc(Operand::imm(32));
  k.load_base();
  f.emit(Instruction::tcgen05_ld(kLd1, {k.base}, k.base));
  f.emit(Instruction::ret());
  expect_violation(k.module, {"R13", "destination %r", " is also the TMEM address register"}, 32);
}

TEST(SimRules, StoreOverALoadInFlightR31) {
  Kernel k(32);
  ptx::Function& f = *k.f;
  k.alloc(Operand::imm(32));
  k.load_base();
  Reg value = f.new_reg(RegClass::kB32), back = f.new_reg(RegClass::kB32);
  f.emit(Instruction::mov(Type::kU32, value, Operand::imm(1)));
  f.emit(Instruction::tcgen05_st(kSt1, k.base, {value}));
  f.emit(Instruction::tcgen05_wait_st());
  f.emit(Instruction::tcgen05_ld(kLd1, {back}, k.base));
  f.emit(Instruction::tcgen05_st(kSt1, k.base, {value}));  // no wait::ld in between
  f.emit(Instruction::ret());
  expect_violation(k.module,
                   {"R31",
                    "warp 0 lane 0 register 0 overwrites TMEM lane 0, column 480, which the "
                    "tcgen05.ld at line",
                    "by warp 0 reads: warp 0 has not executed tcgen05.wait::ld since"},
                   32);
}

TEST(SimRules, SharedWordNothingWrote) {
  Kernel k(32);
  ptx::Function& f = *k.f;
  const std::string other = k.module.add_shared("never_written", 4, 1);
  Reg value = f.new_reg(RegClass::kB32);
  f.emit(Instruction::ld_shared(value, Operand::addr(other)));
  f.emit(Instruction::ret());
  expect_violation(k.module,
                   {"shared memory", "reads shared address 0x10, which nothing has written"}, 32);
}

TEST(SimRules, SharedAddressOutsideSharedMemory) {
  Kernel k(32);
  ptx::Function& f = *k.f;
  Reg value = f.new_reg(RegClass::kB32);
  f.emit(Instruction::ld_shared(value, Operand::addr(k.smem, 64)));
  f.emit(Instruction::ret());
  expect_violation(k.module,
                   {"shared memory",
                    "shared address 0x40 is outside the 16 bytes of shared memory "
                    "or not 4-byte aligned"},
                   32);
}

// shr.s is arithmetic and clamps its amount to the width; shl and shr.u of the width or more give
// 0 (PTX ISA shl, shr); min.s32 compares signed.
TEST(Sim, ShiftsAndMinFollowPtx) {
  Kernel k(32);
  ptx::Function& f = *k.f;
  std::vector<Reg> r = f.new_regs(RegClass::kB32, 7);
  f.emit(Instruction::mov(Type::kS32, r[0], Operand::imm(-1024)));
  f.emit(Instruction::shr(Type::kS32, r[1], r[0], Operand::imm(4)));   // -64
  f.emit(Instruction::shr(Type::kS32, r[2], r[1], Operand::imm(40)));  // -1: clamped to 31
  f.emit(Instruction::shr(Type::kU32, r[3], r[2], k.lane));            // 0xFFFFFFFF >> lane
  f.emit(Instruction::shl(Type::kB32, r[4], r[3], Operand::imm(32)));  // 0
  f.emit(Instruction::add(Type::kU32, r[5], r[3], r[4]));
  f.emit(Instruction::min(Type::kS32, r[6], r[5], Operand::imm(1 << 30)));  // lane 0: -1
  f.emit(Instruction::st_global(Operand::addr(k.row_out), {r[6]}));
  f.emit(Instruction::ret());
  RunResult result = run(k.module, 32);
  ASSERT_TRUE(result.status.ok()) << result.status.error().full_text();
  for (std::uint32_t lane = 0; lane < 32; ++lane)
    EXPECT_EQ(result.out[lane],
              std::min<std::int32_t>(static_cast<std::int32_t>(~0u >> lane), 1 << 30))
        << lane;
}

TEST(SimRules, BarrierAfterAWarpExitedDeadlocks) {
  Kernel k(64);
  ptx::Function& f = *k.f;
  k.in_warp(1, [&] { f.emit(Instruction::ret()); });
  f.emit(Instruction::bar_sync(0));
  f.emit(Instruction::ret());
  expect_violation(k.module, {"deadlock", "warp 1 has exited"}, 64);
}

TEST(SimRules, EndlessLoopHitsTheBudget) {
  Kernel k(32);
  ptx::Function& f = *k.f;
  Label loop = f.new_label("loop");
  f.place(loop);
  f.emit(Instruction::bra(loop));
  RunResult result = run(k.module, 32, /*budget=*/100000);
  ASSERT_FALSE(result.status.ok());
  EXPECT_NE(result.status.error().message().find("did not finish within 100000 instructions"),
            std::string::npos)
      << result.status.error().message();
}

TEST(SimRules, GlobalAccessOutsideTheBuffer) {
  Kernel k(32);
  ptx::Function& f = *k.f;
  Reg value = f.new_reg(RegClass::kB32);
  f.emit(Instruction::ld_global({value}, Operand::addr(k.row_in, 128)));  // in has 32 words
  f.emit(Instruction::ret());
  expect_violation(k.module, {"global memory", "of buffer 'in', which has 128 bytes"}, 32);
}

TEST(SimRules, WriteToTheInputBuffer) {
  Kernel k(32);
  ptx::Function& f = *k.f;
  f.emit(Instruction::st_global(Operand::addr(k.row_in), {k.tid}));
  f.emit(Instruction::ret());
  expect_violation(k.module, {"buffer 'in', which the kernel may only read"}, 32);
}

TEST(SimRules, RegisterReadBeforeAnyWrite) {
  Kernel k(32);
  ptx::Function& f = *k.f;
  Reg never = f.new_reg(RegClass::kB32);
  f.emit(Instruction::st_global(Operand::addr(k.row_out), {never}));
  f.emit(Instruction::ret());
  expect_violation(k.module, {"reads %r", "which no instruction has written"}, 32);
}

TEST(Sim, RawPtxIsNotExecuted) {
  Kernel k(32);
  k.f->emit(Instruction::unchecked_raw("trap"));
  RunResult result = run(k.module, 32);
  ASSERT_FALSE(result.status.ok());
  EXPECT_EQ(result.status.error().code(), ErrorCode::kInternal);
}

TEST(Sim, BadConfigurationIsUsage) {
  Kernel k(32);
  k.f->emit(Instruction::ret());
  GlobalMemory memory;
  Config config;
  config.threads = 48;
  const std::uint64_t params[2] = {0, 0};
  Status status = run_kernel(k.module, "k", config, params, memory);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code(), ErrorCode::kUsage);
  config.threads = 32;
  status = run_kernel(k.module, "k", config, std::span<const std::uint64_t>(params, 1), memory);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code(), ErrorCode::kUsage);
  status = run_kernel(k.module, "nope", config, params, memory);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code(), ErrorCode::kUsage);
}

}  // namespace
}  // namespace tmem::sim
