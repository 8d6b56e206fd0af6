// Replicated operands (what a replica means on each side), the register file and work
// limits, the ranges of tid_in_wg / wid_in_wg, and Error::rule() (issue 17). Its reproducers
// each passed `check` before and failed `run`; here `check` decides them as docs/checking.md says
// (tests/exec/sim_run_test.cc runs the ones `check` accepts).
#include <gtest/gtest.h>

#include "runtime/check/by_dims.h"
#include "tmem/check.h"
#include "tmem/rule.h"
#include "tmem/select.h"

namespace {

tmem::Result<tmem::Plan> check(const std::string& op, const std::string& scope,
                               const std::string& tmem, const std::string& regs) {
  auto spec = tmem::TransferSpec::from_fields(op, scope, tmem, regs);
  if (!spec) return spec.error();
  return tmem::check(*spec);
}

// Expects `rule` from check and from the per-element reference, and `fragment` in the message.
void expect_rule(const tmem::Result<tmem::Plan>& plan, tmem::Rule rule,
                 const std::string& fragment = "") {
  ASSERT_FALSE(plan.ok()) << "accepted";
  EXPECT_EQ(plan.error().code(), tmem::ErrorCode::kRule) << plan.error().message();
  EXPECT_EQ(tmem::to_string(plan.error().rule()), tmem::to_string(rule)) << plan.error().message();
  if (!fragment.empty()) {
    EXPECT_NE(plan.error().message().find(fragment), std::string::npos) << plan.error().message();
  }
}

const std::string kSt2 = "tcgen05.st.sync.aligned.32x32b.x2.b32";
const std::string kLd2 = "tcgen05.ld.sync.aligned.32x32b.x2.b32";
const std::string kLd1 = "tcgen05.ld.sync.aligned.32x32b.x1.b32";
const std::string kTmem32x2 = "tensor((32,2), S[(32,2):(1@TLane,1@TCol)], f32)";
const std::string kRegs32x2 = "tensor((32,2), S[(32,2):(1@laneid,1)], f32)";

// ---- replicas: the source's copies must exist and must not alias --------------------------

TEST(Replicas, AStoreRegisterReplicaOnAnotherElementsSlotIsRejected) {
  // Issue 17 reproducer 1a: element (l, 0) sits in slots {0, 1}, element (l, 1) in {1, 2}: slot 1
  // would hold two values.
  auto plan =
      check(kSt2, "warp:0", kTmem32x2, "tensor((32,2), S[(32,2):(1@laneid,1)] + R[2:1], f32)");
  expect_rule(plan, tmem::Rule::kReplicas, "slot 1 of thread 0");
  EXPECT_NE(plan.error().message().find("a register holds one element"), std::string::npos)
      << plan.error().message();
}

TEST(Replicas, AStoreRegisterReplicaOfItsOwnCanBeAnywhereItExists) {
  // Copies in slots 8 and 9: no other element is there; the register budget covers them.
  auto plan =
      check(kSt2, "warp:0", kTmem32x2, "tensor((32,2), S[(32,2):(1@laneid,1)] + R[2:8], f32)");
  ASSERT_TRUE(plan.ok()) << plan.error().full_text();
  EXPECT_EQ(plan->regs_per_thread, 10);
  EXPECT_EQ(plan->repeats[0].slots, (std::vector<int>{0, 1}));
  // A copy in the lanes of another warp of the scope is a copy too (warps 0-3 at warpgroup).
  auto wide = check("tcgen05.st.sync.aligned.32x32b.x2.b32", "warpgroup",
                    "tensor((4,32,2), S[(4,32,2):(32@TLane,1@TLane,1@TCol)], f32)",
                    "tensor((4,32,2), S[(2,2,32,2):(64@tid_in_wg,32@tid_in_wg,1@tid_in_wg,1)] + "
                    "R[2:2], f32)");
  ASSERT_TRUE(wide.ok()) << wide.error().full_text();
  EXPECT_EQ(wide->regs_per_thread, 4);
}

TEST(Replicas, AStoreRegisterReplicaThatNoThreadHasIsRejected) {
  // laneid 32.. is no lane; slot 300 is past a thread's 255 registers; warp 1 does not take part
  // in a warp:0 transfer.
  expect_rule(check(kSt2, "warp:0", kTmem32x2,
                    "tensor((32,2), S[(32,2):(1@laneid,1)] + R[2:32@laneid], f32)"),
              tmem::Rule::kReplicas, "laneid counts 0..31");
  expect_rule(
      check(kSt2, "warp:0", kTmem32x2, "tensor((32,2), S[(32,2):(1@laneid,1)] + R[2:300], f32)"),
      tmem::Rule::kReplicas, "slot 300");
  expect_rule(
      check(kSt2, "warp:0", kTmem32x2, "tensor((32,2), S[(32,2):(1@tx,1)] + R[2:32@tx], f32)"),
      tmem::Rule::kReplicas, "warp 1, which does not take part");
}

TEST(Replicas, ALoadTmemReplicaOnAnotherElementsCellIsABroadcast) {
  // Issue 17 reproducer 1b: element (l, 0) at columns {0, 1}, element (l, 1) at {1, 2}. A load
  // reads column 1 for element (l, 1); the copy of (l, 0) there says the two are equal, which a
  // load may read (run gives them one value). The allocation covers the copy at column 2.
  auto plan = check(kLd2, "warp:0", "tensor((32,2), S[(32,2):(1@TLane,1@TCol)] + R[2:1@TCol], f32)",
                    kRegs32x2);
  ASSERT_TRUE(plan.ok()) << plan.error().full_text();
  EXPECT_EQ(plan->columns_used, 3);
  EXPECT_EQ(plan->alloc_columns, 32);
  EXPECT_EQ(plan->regs_per_thread, 2);
  // The copies count in the allocation.
  auto far = check(kLd2, "warp:0",
                   "tensor((32,2), S[(32,2):(1@TLane,1@TCol)] + R[2:100@TCol], f32)", kRegs32x2);
  ASSERT_TRUE(far.ok()) << far.error().full_text();
  EXPECT_EQ(far->columns_used, 102);
  EXPECT_EQ(far->alloc_columns, 128);
}

// Found by the differential fuzz target: the copies of 16-bit elements were located at twice
// their (group, repeat) offset, so a copy at column 64 was left out of a 64-column allocation.
TEST(Replicas, CopiesOfSixteenBitElementsCountInTheAllocation) {
  auto plan = check("tcgen05.ld.sync.aligned.16x64b.x1.pack::16b.b32", "warp:0",
                    "tensor((2,2,2,16,2), S[(2,2,2,16,2):(2@TCol,8@TCol,4@TCol,1@TLane,16@TLane)] "
                    "+ R[2:119@TCol], bf16).permute(4, 1, 3, 2, 0)",
                    "tensor((2,2,16,2), S[(2,2,2,8,1,2):(4@m,2@m,1@tx,4@tx,1@m,2@tx)], b32)");
  ASSERT_TRUE(plan.ok()) << plan.error().full_text();
  // The last copy is at 16-bit unit 14 + 119 = 133: cell 66.
  EXPECT_EQ(plan->columns_used, 67);
  EXPECT_EQ(plan->alloc_columns, 128);
}

TEST(Replicas, ALoadTmemReplicaOutsideTmemIsRejected) {
  // Issue 17 reproducer 1c: a copy at lane 128, which does not exist (it was blamed on "the
  // 32-column allocation" by run).
  expect_rule(
      check(kLd1, "warp:0", "tensor((32,1), S[(32,1):(1@TLane,1@TCol)] + R[2:128@TLane], f32)",
            "tensor((32,1), S[(32,1):(1@laneid,1)], f32)"),
      tmem::Rule::kReplicas, "lane 128, column 0, which TMEM does not have");
  expect_rule(
      check(kLd1, "warp:0", "tensor((32,1), S[(32,1):(1@TLane,1@TCol)] + R[2:512@TCol], f32)",
            "tensor((32,1), S[(32,1):(1@laneid,1)], f32)"),
      tmem::Rule::kReplicas, "column 512");
}

TEST(Replicas, DestinationReplicasAreRejectedOnBothSides) {
  expect_rule(
      check(kLd2, "warp:0", kTmem32x2, "tensor((32,2), S[(32,2):(1@laneid,1)] + R[2:8], f32)"),
      tmem::Rule::kReplicas, "destination");
  expect_rule(check(kSt2, "warp:0", "tensor((32,2), S[(32,2):(1@TLane,1@TCol)] + R[2:8@TCol], f32)",
                    kRegs32x2),
              tmem::Rule::kReplicas, "destination");
}

TEST(Replicas, TheReferenceCheckerAgrees) {
  for (const auto& [op, tmem, regs] : std::vector<std::array<std::string, 3>>{
           {kSt2, kTmem32x2, "tensor((32,2), S[(32,2):(1@laneid,1)] + R[2:1], f32)"},
           {kSt2, kTmem32x2, "tensor((32,2), S[(32,2):(1@laneid,1)] + R[2:8], f32)"},
           {kLd2, "tensor((32,2), S[(32,2):(1@TLane,1@TCol)] + R[2:1@TCol], f32)", kRegs32x2},
       }) {
    auto spec = tmem::TransferSpec::from_fields(op, "warp:0", tmem, regs).value();
    auto a = tmem::check(spec), b = tmem::check_each_element(spec);
    ASSERT_EQ(a.ok(), b.ok()) << regs;
    if (a.ok()) {
      EXPECT_EQ(*a, *b);
    } else {
      EXPECT_EQ(a.error().message(), b.error().message());
    }
  }
}

// ---- limits ---------------------------------------------------------------------------------

TEST(RegisterFile, ASlotPast254IsRejected) {
  // A thread has at most 255 registers: slot 254 is the last (it was 65535).
  const std::string tmem = "tensor((32,1), S[(32,1):(1@TLane,1@TCol)], f32)";
  auto last = check(kLd1, "warp:0", tmem, "tensor((32,1), S[(32,1):(1@laneid,1)] + 254, f32)");
  ASSERT_TRUE(last.ok()) << last.error().full_text();
  EXPECT_EQ(last->regs_per_thread, 255);
  for (const std::string slot : {"255", "65535"}) {
    auto plan =
        check(kLd1, "warp:0", tmem, "tensor((32,1), S[(32,1):(1@laneid,1)] + " + slot + ", f32)");
    expect_rule(plan, tmem::Rule::kSlot, "in slot " + slot + ", but a thread has at most 255");
    auto reference = tmem::check_each_element(
        tmem::TransferSpec::from_fields(
            kLd1, "warp:0", tmem, "tensor((32,1), S[(32,1):(1@laneid,1)] + " + slot + ", f32)")
            .value());
    ASSERT_FALSE(reference.ok());
    EXPECT_EQ(reference.error().rule(), tmem::Rule::kSlot);
  }
}

TEST(RegisterFile, MoreThan255RegisterWordsPerThreadIsALimit) {
  // 32x32b.x128 twice: 256 registers per thread, more than a thread has.
  auto plan = check("tcgen05.ld.sync.aligned.32x32b.x128.b32", "warp:0",
                    "tensor((2,32,128), S[(2,32,128):(128@TCol,1@TLane,1@TCol)], f32)",
                    "tensor((2,32,128), S[(2,32,128):(128,1@laneid,1)], f32)");
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().code(), tmem::ErrorCode::kLimit);
  EXPECT_EQ(plan.error().rule(), tmem::Rule::kNone);
  EXPECT_NE(plan.error().message().find("256 register words per thread; a thread has at most "
                                        "255 registers"),
            std::string::npos)
      << plan.error().message();
  // 255 repeats of 32x32b.x1: 255 registers, the most a transfer can use.
  auto most = check(kLd1, "warp:0", "tensor((255,32,1), S[(255,32):(1@TCol,1@TLane)], f32)",
                    "tensor((255,32,1), S[(255,32):(1,1@laneid)], f32)");
  ASSERT_TRUE(most.ok()) << most.error().full_text();
  EXPECT_EQ(most->regs_per_thread, 255);
}

TEST(WorkCap, ElementsTimesReplicasIsCapped) {
  // Issue 17 reproducer 3: 276 bytes of spec, 2^19 elements x 2^16 replicas, once two minutes of
  // checking. It is refused before any per-element work.
  auto plan =
      check("tcgen05.ld.sync.aligned.32x32b.x128.b32", "cta:32",
            "tensor((32,4,32,128), S[(8,4,4,32,128):(0@TCol,32@TLane,0@TCol,1@TLane,0@TCol)] + "
            "R[(128,512):(1@TCol,1000@TCol)], f32)",
            "tensor((32,4,32,128), S[(32,4,32,128):(32@tx,128,1@tx,1)], f32)");
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().code(), tmem::ErrorCode::kLimit) << plan.error().message();
  // Within the register file (4 words per thread) the replicas alone are too many: 4096 elements
  // x 65536 replicas.
  auto replicas = check(kLd1, "cta:32",
                        "tensor((32,4,32,1), S[(8,4,4,32):(0@TCol,32@TLane,1@TCol,1@TLane)] + "
                        "R[(128,512):(1@TCol,1000@TCol)], f32)",
                        "tensor((32,4,32,1), S[(32,4,32):(32@tx,1,1@tx)], f32)");
  ASSERT_FALSE(replicas.ok());
  EXPECT_EQ(replicas.error().code(), tmem::ErrorCode::kLimit) << replicas.error().message();
  EXPECT_NE(replicas.error().message().find("268439552 element replicas"), std::string::npos)
      << replicas.error().message();
  // The same spec with a handful of copies is checked (they exist, at columns 4..7).
  auto few = check(kLd1, "cta:32",
                   "tensor((32,4,32,1), S[(8,4,4,32):(0@TCol,32@TLane,1@TCol,1@TLane)] + "
                   "R[2:4@TCol], f32)",
                   "tensor((32,4,32,1), S[(32,4,32):(32@tx,1,1@tx)], f32)");
  ASSERT_TRUE(few.ok()) << few.error().full_text();
  EXPECT_EQ(few->columns_used, 8);
}

// ---- tid_in_wg and wid_in_wg count inside one warpgroup -------------------------------------

TEST(ThreadAxes, TidInWgPast127IsNoThreadAtCtaScope) {
  // Issue 17 reproducer 3: tid_in_wg 128-255 used to read as warps 4-7.
  const std::string tmem = "tensor((8,32,4), S[(2,4,32,4):(4@TCol,32@TLane,1@TLane,1@TCol)], f32)";
  auto plan = check("tcgen05.ld.sync.aligned.32x32b.x4.b32", "cta:8", tmem,
                    "tensor((8,32,4), S[(8,32,4):(32@tid_in_wg,1@tid_in_wg,1)], f32)");
  expect_rule(plan, tmem::Rule::kOwnership, "tid_in_wg counts 0..127");
  auto wid = check("tcgen05.ld.sync.aligned.32x32b.x4.b32", "cta:8", tmem,
                   "tensor((8,32,4), S[(8,32,4):(1@wid_in_wg,1@laneid,1)], f32)");
  expect_rule(wid, tmem::Rule::kOwnership, "wid_in_wg counts 0..3");
  // The warpgroup is wgid (or tx / warpid): these pass.
  for (const std::string regs :
       {"tensor((8,32,4), S[(2,4,32,4):(1@wgid,32@tid_in_wg,1@tid_in_wg,1)], f32)",
        "tensor((8,32,4), S[(2,4,32,4):(1@wgid,1@wid_in_wg,1@laneid,1)], f32)",
        "tensor((8,32,4), S[(8,32,4):(32@tx,1@tx,1)], f32)"}) {
    auto ok = check("tcgen05.ld.sync.aligned.32x32b.x4.b32", "cta:8", tmem, regs);
    ASSERT_TRUE(ok.ok()) << regs << "\n" << ok.error().full_text();
    EXPECT_EQ(ok->warpgroup_column_stride, 4);
  }
}

TEST(ThreadAxes, TheReferenceAndThePerDimProofAgree) {
  // The per-dim prover must not prove what the reference refuses (the group shift takes
  // tid_in_wg past 127).
  auto spec = tmem::TransferSpec::from_fields(
                  "tcgen05.ld.sync.aligned.32x32b.x4.b32", "cta:8",
                  "tensor((8,32,4), S[(2,4,32,4):(4@TCol,32@TLane,1@TLane,1@TCol)], f32)",
                  "tensor((8,32,4), S[(8,32,4):(32@tid_in_wg,1@tid_in_wg,1)], f32)")
                  .value();
  EXPECT_FALSE(tmem::plan_by_dims(spec, std::vector<std::int64_t>{}, false, false).has_value());
  auto reference = tmem::check_each_element(spec);
  ASSERT_FALSE(reference.ok());
  EXPECT_EQ(reference.error().rule(), tmem::Rule::kOwnership);
}

// ---- Error::rule() --------------------------------------------------------------------------

TEST(RuleNames, RoundTripAndTcgen05Ids) {
  for (int i = 0; i <= static_cast<int>(tmem::Rule::kWaitBeforeReuse); ++i) {
    const auto rule = static_cast<tmem::Rule>(i);
    auto parsed = tmem::parse_rule(tmem::to_string(rule));
    ASSERT_TRUE(parsed.has_value()) << tmem::to_string(rule);
    EXPECT_EQ(*parsed, rule);
  }
  EXPECT_STREQ(tmem::to_string(tmem::Rule::kPlacement), "placement");
  EXPECT_STREQ(tmem::to_string(tmem::Rule::kNone), "none");
  EXPECT_EQ(tmem::tcgen05_rule(17), tmem::Rule::kLanesInWarpChunk);
  EXPECT_STREQ(tmem::to_string(tmem::tcgen05_rule(31)), "R31");
  EXPECT_EQ(tmem::tcgen05_rule(0), tmem::Rule::kNone);
  EXPECT_EQ(tmem::tcgen05_rule(32), tmem::Rule::kNone);
  EXPECT_FALSE(tmem::parse_rule("R32").has_value());
}

TEST(RuleNames, OpcodeTargetAndSpecErrorsNameTheirRule) {
  EXPECT_EQ(tmem::Opcode::parse("tcgen05.ld.sync.aligned.32x32b.x3.b32").error().rule(),
            tmem::Rule::kNumPowerOfTwo);
  EXPECT_EQ(tmem::Opcode::parse("tcgen05.ld.sync.aligned.32x128b.x1.b32").error().rule(),
            tmem::Rule::kKnownShape);
  EXPECT_EQ(tmem::Opcode::parse("tcgen05.ld.sync.aligned.16x256b.x64.b32").error().rule(),
            tmem::Rule::kAtMost128Registers);
  EXPECT_EQ(tmem::Opcode::parse("tcgen05.st.sync.aligned.32x32b.x1.pack::16b.b32").error().rule(),
            tmem::Rule::kPackModeOfDirection);
  EXPECT_EQ(tmem::Opcode::parse("tcgen05.ld.sync.32x32b.x1.b32").error().rule(),
            tmem::Rule::kSyncAligned);
  // ld.red is supported (issue 21); .b32 is not one of its types (R14).
  EXPECT_EQ(tmem::Opcode::parse("tcgen05.ld.red.sync.aligned.32x32b.x2.b32").error().rule(),
            tmem::Rule::kLoadReduceForm);
  EXPECT_EQ(tmem::Opcode::parse("tcgen05.mv.sync.aligned.32x32b.x2.b32").error().rule(),
            tmem::Rule::kLdOrSt);
  EXPECT_EQ(tmem::Opcode::parse("tcgen05.ld.sync.aligned.32x32b.x1.f32").error().rule(),
            tmem::Rule::kTypeB32);
  EXPECT_EQ(tmem::Opcode::parse("tcgen05.ld.sync.aligned").error().rule(), tmem::Rule::kKnownShape);
  EXPECT_EQ(tmem::parse_target("sm_90a").error().rule(), tmem::Rule::kTargetAndVersion);
  auto op = tmem::Opcode::parse("tcgen05.ld.sync.aligned.32x32b.x2.b32").value();
  EXPECT_EQ(op.check_operands(3, false)->rule(), tmem::Rule::kVectorLengthIsNregs);
  EXPECT_EQ(op.check_operands(2, true)->rule(), tmem::Rule::kSplitOffsetOnlyFor16x32bx2);
  // A parse error is no rule.
  EXPECT_EQ(tmem::Opcode::parse("tcgen06").error().rule(), tmem::Rule::kNone);
}

TEST(RuleNames, CheckErrorsStartWithTheirRule) {
  // Every kRule error of check names its rule, and the message starts with it.
  for (const auto& [tmem, regs] : std::vector<std::pair<std::string, std::string>>{
           {kTmem32x2, "tensor((32,2), S[(32,2):(1@laneid,1)] + R[2:1], f32)"},
           {"tensor((32,2), S[(32,2):(1@TLane,2@TCol)], f32)", kRegs32x2},
           {"tensor((32,2), S[(32,2):(1@TLane,1@TCol)] + 1@TLane, f32)", kRegs32x2},
           {kTmem32x2, "tensor((32,2), S[(32,2):(2@laneid,1)], f32)"},
           {kTmem32x2, "tensor((32,2), S[(32,2):(1@laneid,1@TCol)], f32)"},
       }) {
    auto plan = check(kSt2, "warp:0", tmem, regs);
    ASSERT_FALSE(plan.ok()) << regs;
    ASSERT_NE(plan.error().rule(), tmem::Rule::kNone) << plan.error().message();
    EXPECT_EQ(plan.error().message().rfind(tmem::to_string(plan.error().rule()), 0), 0u)
        << plan.error().message();
  }
}

TEST(RuleNames, SelectNamesARuleWhenNoFormFits) {
  // Warps 1 and 2 hold each other's rows: no form puts them in their lane slabs.
  auto tmem_view = tmem::View::parse("tensor((128,32), S[(128,32):(1@TLane,1@TCol)], f32)").value();
  auto swapped =
      tmem::View::parse(
          "tensor((128,32), S[(2,2,32,32):(32@tid_in_wg,64@tid_in_wg,1@tid_in_wg,1)], f32)")
          .value();
  auto none = tmem::select(tmem::Direction::kLoad, tmem::Scope::warpgroup(), tmem_view, swapped);
  ASSERT_FALSE(none.ok());
  if (none.error().code() == tmem::ErrorCode::kRule) {
    EXPECT_NE(none.error().rule(), tmem::Rule::kNone) << none.error().message();
  }
}

}  // namespace
