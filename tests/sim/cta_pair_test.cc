// The simulator on a CTA pair (cta_group::2, docs/tcgen05-rules.md §Lifecycle): a hand-built kernel
// with one switch per step of the pair's lifecycle, the data it moves in both CTAs, and one broken
// step per rule (R27, R29, R31) rejected with the rule.
#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <vector>

#include "runtime/sim/interpreter.h"
#include "tmem/rule.h"

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

constexpr int kThreads = 128;  // per CTA: four warps, one lane slab each

// How one hand-off between the lifecycle steps is synchronized.
enum class Sync {
  kCluster,  // fence::before, barrier.cluster.arrive/wait, fence::after: orders both CTAs
  kCta,      // fence::before, bar.sync, fence::after: orders one CTA only
};

// The pair's lifecycle: warp alloc_warp[c] of CTA c allocs with ::2 -> hand-off -> every warp
// stores In[row] at its slab, waits, loads, waits, writes Out[row] -> hand-off -> the allocating
// warp deallocs and relinquishes -> cluster barrier -> exit. row = CTA * 128 + tid.
struct PairVariant {
  std::array<int, 2> alloc_warp = {0, 0};  // -1: that CTA never allocates
  std::array<int, 2> ncols = {32, 32};
  bool second_alloc_by_warp1_of_cta0 = false;  // a second alloc::2, by another warp of CTA 0
  Sync after_alloc = Sync::kCluster;
  bool transfer = true;
  Sync before_dealloc = Sync::kCluster;
  std::array<bool, 2> dealloc = {true, true};
  bool final_cluster_barrier = true;  // keeps each CTA active until its peer has released
};

ptx::Module build(const PairVariant& v) {
  ptx::Module module(Target::kSm100a);
  const std::string smem = module.add_shared("tmem_base_address", 4, 4);
  Function& f = module.add_function(Function::Kind::kEntry, "pair");
  f.set_max_threads(kThreads);
  auto param = [&](const std::string& name) {
    const std::string& p = f.add_param(Type::kU64, name);
    Reg raw = f.new_reg(RegClass::kB64), global = f.new_reg(RegClass::kB64);
    f.emit(Instruction::ld_param(Type::kU64, raw, p));
    f.emit(Instruction::cvta_to_global(global, raw));
    return global;
  };
  const Reg in = param("in"), out = param("out");
  const Reg tid = f.new_reg(RegClass::kB32), warp = f.new_reg(RegClass::kB32),
            cta = f.new_reg(RegClass::kB32);
  f.emit(Instruction::mov(Type::kU32, tid, Operand::special(ptx::SpecialReg::kTidX)));
  f.emit(Instruction::shr(Type::kU32, warp, tid, Operand::imm(5)));
  f.emit(Instruction::mov(Type::kU32, cta, Operand::special(ptx::SpecialReg::kClusterCtaRank)));
  // A per-CTA value: a0 + cta * (a1 - a0).
  auto per_cta = [&](std::array<int, 2> values) {
    Reg scaled = f.new_reg(RegClass::kB32), value = f.new_reg(RegClass::kB32);
    f.emit(Instruction::mul_lo(Type::kU32, scaled, cta, Operand::imm(values[1] - values[0])));
    f.emit(Instruction::add(Type::kU32, value, scaled, Operand::imm(values[0])));
    return value;
  };
  const Reg allocator = per_cta(v.alloc_warp), ncols = per_cta(v.ncols);
  const Reg not_allocator = f.new_reg(RegClass::kPred);
  f.emit(Instruction::setp(Cmp::kNe, Type::kU32, not_allocator, warp, allocator));
  auto handoff = [&](Sync sync) {
    f.emit(Instruction::tcgen05_fence_before());
    if (sync == Sync::kCluster) {
      f.emit(Instruction::cluster_arrive());
      f.emit(Instruction::cluster_wait());
    } else {
      f.emit(Instruction::bar_sync(0));
    }
    f.emit(Instruction::tcgen05_fence_after());
  };

  // Thread 0 clears the address word first, so that a CTA whose alloc is missing reads 0
  // rather than unwritten shared memory (the rule under test is the pair's, not that one).
  const Reg thread0 = f.new_reg(RegClass::kPred), zero = f.new_reg(RegClass::kB32);
  f.emit(Instruction::setp(Cmp::kEq, Type::kU32, thread0, tid, Operand::imm(0)));
  f.emit(Instruction::mov(Type::kU32, zero, Operand::imm(0)));
  f.emit(Instruction::st_shared(Operand::addr(smem), zero)).guarded(thread0);
  const Label after_alloc = f.new_label("after_alloc");
  f.emit(Instruction::bra(after_alloc, not_allocator));
  f.emit(Instruction::tcgen05_alloc(Operand::addr(smem), ncols, 2));
  f.place(after_alloc);
  if (v.second_alloc_by_warp1_of_cta0) {
    const Reg not_warp1 = f.new_reg(RegClass::kPred), second = f.new_reg(RegClass::kPred);
    const Label skip = f.new_label("skip_second");
    f.emit(Instruction::setp(Cmp::kNe, Type::kU32, not_warp1, warp, Operand::imm(1)));
    f.emit(Instruction::setp(Cmp::kNe, Type::kU32, second, cta, Operand::imm(0)));
    f.emit(Instruction::bit_or(Type::kPred, second, second, not_warp1));
    f.emit(Instruction::bra(skip, second));
    f.emit(Instruction::tcgen05_alloc(Operand::addr(smem, 4), Operand::imm(32), 2));
    f.place(skip);
  }
  handoff(v.after_alloc);
  const Reg base = f.new_reg(RegClass::kB32);
  f.emit(Instruction::ld_shared(base, Operand::addr(smem)));
  if (v.transfer) {
    const Reg first = f.new_reg(RegClass::kB32), row = f.new_reg(RegClass::kB32);
    f.emit(Instruction::mul_lo(Type::kU32, first, cta, Operand::imm(kThreads)));
    f.emit(Instruction::add(Type::kU32, row, first, tid));
    auto element = [&](Reg array) {
      Reg offset = f.new_reg(RegClass::kB64), address = f.new_reg(RegClass::kB64);
      f.emit(Instruction::mul_wide(Type::kU32, offset, row, Operand::imm(4)));
      f.emit(Instruction::add(Type::kU64, address, array, offset));
      return address;
    };
    const Reg slab = f.new_reg(RegClass::kB32), taddr = f.new_reg(RegClass::kB32);
    f.emit(Instruction::shl(Type::kB32, slab, warp, Operand::imm(21)));  // lane 32 * warp
    f.emit(Instruction::add(Type::kU32, taddr, base, slab));
    const Reg value = f.new_reg(RegClass::kB32), back = f.new_reg(RegClass::kB32);
    f.emit(Instruction::ld_global({value}, Operand::addr(element(in))));
    const Opcode st = Opcode::parse("tcgen05.st.sync.aligned.32x32b.x1.b32").value();
    const Opcode ld = Opcode::parse("tcgen05.ld.sync.aligned.32x32b.x1.b32").value();
    f.emit(Instruction::tcgen05_st(st, taddr, {value}));
    f.emit(Instruction::tcgen05_wait_st());
    f.emit(Instruction::tcgen05_ld(ld, {back}, taddr));
    f.emit(Instruction::tcgen05_wait_ld());
    f.emit(Instruction::st_global(Operand::addr(element(out)), {back}));
  }
  handoff(v.before_dealloc);
  const Label end = f.new_label("end");
  const Reg no_dealloc = f.new_reg(RegClass::kPred);
  const Reg dealloc_here = per_cta({v.dealloc[0] ? 1 : 0, v.dealloc[1] ? 1 : 0});
  f.emit(Instruction::setp(Cmp::kEq, Type::kU32, no_dealloc, dealloc_here, Operand::imm(0)));
  f.emit(Instruction::bit_or(Type::kPred, no_dealloc, no_dealloc, not_allocator));
  f.emit(Instruction::bra(end, no_dealloc));
  f.emit(Instruction::tcgen05_dealloc(base, ncols, 2));
  f.emit(Instruction::tcgen05_relinquish(2));
  f.place(end);
  if (v.final_cluster_barrier) {
    f.emit(Instruction::cluster_arrive());
    f.emit(Instruction::cluster_wait());
  }
  f.emit(Instruction::ret());
  return module;
}

struct PairRun {
  Status status;
  std::vector<std::uint32_t> in, out;
};

PairRun run(const PairVariant& v, int ctas = 2) {
  PairRun r{std::monostate{}, std::vector<std::uint32_t>(2 * kThreads),
            std::vector<std::uint32_t>(2 * kThreads, 0)};
  for (size_t k = 0; k < r.in.size(); ++k) r.in[k] = 0xC0DE0000u + static_cast<std::uint32_t>(k);
  GlobalMemory memory;
  const std::uint64_t params[2] = {memory.map_read_only("in", r.in), memory.map("out", r.out)};
  Config config;
  config.threads = kThreads;
  config.ctas = ctas;
  r.status = run_kernel(build(v), "pair", config, params, memory);
  return r;
}

// The run fails with `rule`; the message is printed for the reader, never matched.
void expect_rule(const PairVariant& v, Rule rule, int ctas = 2) {
  const PairRun r = run(v, ctas);
  ASSERT_FALSE(r.status.ok()) << "expected " << to_string(rule);
  EXPECT_EQ(r.status.error().rule(), rule) << r.status.error().full_text();
  EXPECT_EQ(r.status.error().code(), ErrorCode::kWrongData) << r.status.error().full_text();
}

TEST(SimPair, LifecycleMovesTheDataOfBothCtas) {
  const PairRun r = run(PairVariant{});
  ASSERT_TRUE(r.status.ok()) << r.status.error().full_text();
  EXPECT_EQ(r.out, r.in);  // CTA 1's rows too: each CTA used its own TMEM
}

TEST(SimPair, TheSameWarpOfEachCtaMayBeAnyWarp) {
  PairVariant v;
  v.alloc_warp = {2, 2};
  const PairRun r = run(v);
  ASSERT_TRUE(r.status.ok()) << r.status.error().full_text();
  EXPECT_EQ(r.out, r.in);
}

// R27: every tcgen05 instruction of a kernel uses one .cta_group; the verifier refuses a mix
// before the simulator (or ptxas) sees it.
TEST(SimPairRules, MixedCtaGroupsR27) {
  for (int relinquish_group : {2, 1}) {
    ptx::Module module(Target::kSm100a);
    const std::string smem = module.add_shared("tmem_base_address", 4, 1);
    Function& f = module.add_function(Function::Kind::kEntry, "mixed");
    f.emit(Instruction::tcgen05_alloc(Operand::addr(smem), Operand::imm(32), 2));
    f.emit(Instruction::tcgen05_relinquish(relinquish_group));
    f.emit(Instruction::ret());
    auto verified = module.verify();
    if (relinquish_group == 2) {
      EXPECT_TRUE(verified.ok()) << verified.error().full_text();
      continue;
    }
    ASSERT_FALSE(verified.ok());
    EXPECT_EQ(verified.error().rule(), Rule::kOneCtaGroupPerKernel) << verified.error().full_text();
    EXPECT_EQ(verified.error().code(), ErrorCode::kRule);
  }
}

// R29: cta_group::2 needs its peer CTA launched.
TEST(SimPairRules, PairWithoutAPeerCtaR29) {
  expect_rule(PairVariant{}, Rule::kOneWarpAllocates, 1);
}

TEST(SimPairRules, DifferentColumnCountsBetweenPeersR29) {
  PairVariant v;
  v.ncols = {32, 64};
  expect_rule(v, Rule::kOneWarpAllocates);
}

TEST(SimPairRules, DifferentWarpsOfThePeersR29) {
  PairVariant v;
  v.alloc_warp = {0, 1};
  expect_rule(v, Rule::kOneWarpAllocates);
}

TEST(SimPairRules, TwoWarpsOfOneCtaAllocateR29) {
  PairVariant v;
  v.second_alloc_by_warp1_of_cta0 = true;
  expect_rule(v, Rule::kOneWarpAllocates);
}

TEST(SimPairRules, AllocWithoutAPartnerR29) {
  PairVariant v;
  v.alloc_warp = {0, -1};
  v.transfer = false;
  v.dealloc = {false, false};
  expect_rule(v, Rule::kOneWarpAllocates);
}

TEST(SimPairRules, DeallocAfterThePeerExitedR29) {
  PairVariant v;
  v.final_cluster_barrier = false;
  expect_rule(v, Rule::kOneWarpAllocates);
}

// R31: a CTA-local barrier does not order the peer's alloc before this CTA's use.
TEST(SimPairRules, UseBeforeThePeerAllocOrderedR31) {
  PairVariant v;
  v.after_alloc = Sync::kCta;
  expect_rule(v, Rule::kWaitBeforeReuse);
}

TEST(SimPairRules, UseWhileThePeerNeverAllocatedR31) {
  PairVariant v;
  v.alloc_warp = {-1, 0};  // CTA 1's warps run on first after the barrier; CTA 0 never allocates
  expect_rule(v, Rule::kWaitBeforeReuse);
}

TEST(SimPairRules, DeallocBeforeThePeerAllocatedR31) {
  PairVariant v;
  v.alloc_warp = {0, -1};
  v.transfer = false;
  expect_rule(v, Rule::kWaitBeforeReuse);
}

// R31: one peer deallocates while the other's accesses are not ordered before it.
TEST(SimPairRules, DeallocWhileThePeerIsStillUsingR31) {
  PairVariant v;
  v.before_dealloc = Sync::kCta;
  expect_rule(v, Rule::kWaitBeforeReuse);
}

TEST(SimPairRules, NothingLeftAllocatedR26) {
  PairVariant v;
  v.dealloc = {true, false};
  expect_rule(v, Rule::kDeallocBeforeExit);
}

TEST(SimPair, ClusterBarrierAfterAWarpExitedIsADeadlockNotAHang) {
  ptx::Module module(Target::kSm100a);
  Function& f = module.add_function(Function::Kind::kEntry, "exits");
  f.set_max_threads(64);
  f.add_param(Type::kU64, "unused");
  const Reg tid = f.new_reg(RegClass::kB32), not_warp0 = f.new_reg(RegClass::kPred);
  const Label body = f.new_label("body");
  f.emit(Instruction::mov(Type::kU32, tid, Operand::special(ptx::SpecialReg::kTidX)));
  f.emit(Instruction::setp(Cmp::kLt, Type::kU32, not_warp0, tid, Operand::imm(32)));
  f.emit(Instruction::bra(body, not_warp0));
  f.emit(Instruction::ret());  // warp 1 of each CTA exits
  f.place(body);
  f.emit(Instruction::cluster_arrive());
  f.emit(Instruction::cluster_wait());
  f.emit(Instruction::ret());
  GlobalMemory memory;
  Config config;
  config.threads = 64;
  config.ctas = 2;
  const std::uint64_t params[1] = {0};
  const Status status = run_kernel(module, "exits", config, params, memory);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code(), ErrorCode::kWrongData) << status.error().full_text();
  EXPECT_EQ(status.error().rule(), Rule::kNone) << status.error().full_text();
}

TEST(Sim, TwoCtasOfCtaGroup1RunIndependently) {
  // The classic kernel shape with ::1 in each CTA of a cluster of two: no pair rule applies.
  ptx::Module module(Target::kSm100a);
  const std::string smem = module.add_shared("tmem_base_address", 4, 1);
  Function& f = module.add_function(Function::Kind::kEntry, "single");
  f.set_max_threads(32);
  f.add_param(Type::kU64, "unused");
  const Reg base = f.new_reg(RegClass::kB32);
  f.emit(Instruction::tcgen05_alloc(Operand::addr(smem), Operand::imm(32)));
  f.emit(Instruction::ld_shared(base, Operand::addr(smem)));
  f.emit(Instruction::tcgen05_dealloc(base, Operand::imm(32)));
  f.emit(Instruction::ret());
  GlobalMemory memory;
  Config config;
  config.threads = 32;
  config.ctas = 2;
  const std::uint64_t params[1] = {0};
  const Status status = run_kernel(module, "single", config, params, memory);
  EXPECT_TRUE(status.ok()) << status.error().full_text();
}

TEST(Sim, ClusterOfThreeIsUsage) {
  GlobalMemory memory;
  Config config;
  config.ctas = 3;
  const Status status = run_kernel(build(PairVariant{}), "pair", config, {}, memory);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code(), ErrorCode::kUsage);
}

}  // namespace
}  // namespace tmem::sim
