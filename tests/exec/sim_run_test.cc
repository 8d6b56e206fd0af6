// run_transfer on the simulator: the seed's examples, every legal opcode's warpgroup identity
// (round trip and both cross-checks), a deliberately broken plan caught as wrong data, and the
// report's contents.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/spec_fixtures.h"
#include "runtime/exec/executor.h"
#include "tmem/check.h"
#include "tmem/run.h"

namespace {

using tmemjit_test::SpecText;

tmem::RunOptions sim(std::uint64_t seed = 1) { return {tmem::Device::kSim, seed}; }

std::string describe(const tmem::RunReport& report) { return report.to_string(); }

// Passed every check with the given element count each (raw counts 128 x allocation columns).
void expect_pass(const tmem::TransferSpec& spec, std::int64_t elements) {
  auto report = tmem::run_transfer(spec, sim());
  ASSERT_TRUE(report.ok()) << report.error().full_text();
  ASSERT_TRUE(report->passed()) << describe(*report);
  ASSERT_EQ(report->checks.size(), 4u);
  EXPECT_EQ(report->checks[0].name, "raw");
  for (size_t k = 1; k < 4; ++k)
    EXPECT_EQ(report->checks[k].elements, elements) << report->checks[k].name;
  EXPECT_EQ(report->device, tmem::Device::kSim);
}

TEST(SimRun, SeedLayoutB) {
  for (bool store : {true, false}) expect_pass(tmemjit_test::seed_layout_b(store).make(), 64 * 128);
}

TEST(SimRun, SeedPack) {
  // 16-bit TMEM halves: 128 x 64 words, two halves each; only the low halves of cells are compared.
  for (bool store : {true, false}) expect_pass(tmemjit_test::seed_pack(store).make(), 128 * 64 * 2);
}

TEST(SimRun, SeedSplit) {
  for (bool store : {true, false}) expect_pass(tmemjit_test::seed_split(store).make(), 128 * 4);
}

TEST(SimRun, WarpScopeRunsOnlyTheChosenWarp) {
  // warp:5 owns lane slab 1 (lanes 32..63); the harness launches warps 0..5.
  expect_pass(
      tmem::TransferSpec::from_fields("tcgen05.ld.sync.aligned.32x32b.x4.b32", "warp:5",
                                      "tensor((32,4), S[(32,4):(1@TLane,1@TCol)] + 32@TLane, b32)",
                                      "tensor((32,4), S[(32,4):(1@laneid,1)], b32)")
          .value(),
      32 * 4);
}

TEST(SimRun, CtaScopeWithTwoWarpgroups) {
  // Eight warps: warps w and w+4 share slab w % 4 and sit 16 columns apart (16x64b.x2 is 4 wide).
  expect_pass(tmem::TransferSpec::from_fields(
                  "tcgen05.st.sync.aligned.16x64b.x2.b32", "cta:8",
                  "tensor((8,16,4), S[(2,4,16,4):(16@TCol,32@TLane,1@TLane,1@TCol)], b32)",
                  "tensor((8,2,8,2,2), S[(8,2,8,2,2):(32@tx,1@tx,4@tx,1,2@tx)], b32)"
                  ".rearrange(\"g rh rl ch cl -> g (rh rl) (ch cl)\")")
                  .value(),
              8 * 16 * 4);
}

TEST(SimRun, ReportSaysPassWithCounts) {
  auto report = tmem::run_transfer(tmemjit_test::seed_layout_b(true).make(), sim(7)).value();
  const std::string text = report.to_string();
  EXPECT_NE(text.find("device: sim (CPU simulator"), std::string::npos) << text;
  EXPECT_NE(text.find("seed: 7"), std::string::npos) << text;
  EXPECT_NE(text.find("PASS: 4 checks, 32768 elements on sim"), std::string::npos) << text;
  auto json = nlohmann::json::parse(report.to_json());
  EXPECT_EQ(json["pass"], true);
  EXPECT_EQ(json["device"], "sim");
  EXPECT_EQ(json["elements"], 32768);
  EXPECT_EQ(json["checks"].size(), 4u);
}

TEST(SimRun, AutoUsesTheBestDeviceAndSaysWhyOthersWerePassedOver) {
  auto report = tmem::run_transfer(tmemjit_test::seed_split(true).make(), {tmem::Device::kAuto, 3});
  ASSERT_TRUE(report.ok()) << report.error().full_text();
  EXPECT_TRUE(report->passed()) << describe(*report);
  // gpu is tried first, then emu, then the simulator: each device passed over has its line.
  const size_t expected = report->device == tmem::Device::kGpu   ? 0
                          : report->device == tmem::Device::kEmu ? 1
                                                                 : 2;
  ASSERT_EQ(report->passed_over.size(), expected) << describe(*report);
  if (expected >= 1) {
    EXPECT_EQ(report->passed_over[0].rfind("gpu: ", 0), 0u) << report->passed_over[0];
  }
  if (expected == 2) {
    EXPECT_EQ(report->passed_over[1].rfind("emu: ", 0), 0u) << report->passed_over[1];
  }
}

TEST(SimRun, ARequestedDeviceThatCannotRunIsADriverError) {
  // Without an sm_100-class GPU `gpu` cannot run; where one exists the run passes.
  auto report = tmem::run_transfer(tmemjit_test::seed_split(false).make(), {tmem::Device::kGpu, 1});
  if (report.ok()) {
    EXPECT_EQ(report->device, tmem::Device::kGpu);
    EXPECT_TRUE(report->passed()) << describe(*report);
    return;
  }
  EXPECT_EQ(report.error().code(), tmem::ErrorCode::kDriver) << report.error().full_text();
  EXPECT_EQ(report.error().message().rfind("device gpu: ", 0), 0u) << report.error().message();
}

TEST(SimRun, SameSeedSameReportOtherSeedsPassToo) {
  const auto spec = tmemjit_test::seed_pack(false).make();
  auto a = tmem::run_transfer(spec, sim(11)).value(), b = tmem::run_transfer(spec, sim(11)).value();
  EXPECT_EQ(a.to_json(), b.to_json());
  for (std::uint64_t seed : {0ull, 2ull, 0xFFFFFFFFFFFFFFFFull})
    EXPECT_TRUE(tmem::run_transfer(spec, sim(seed))->passed());
}

TEST(SimRun, AnInvalidSpecIsTheCheckersError) {
  SpecText text = tmemjit_test::seed_layout_b(true);
  text.op = "tcgen05.st.sync.aligned.32x32b.x32.b32";  // the views need x64
  auto report = tmem::run_transfer(text.make(), sim());
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().code(), tmem::ErrorCode::kRule) << report.error().full_text();
}

// ---- every legal opcode
// ---------------------------------------------------------------------------

struct OpcodeCase {
  std::string name;
  tmem::Opcode op;
  int lane_offset;
};

std::vector<OpcodeCase> all_opcodes() {
  std::vector<OpcodeCase> cases;
  for (tmem::Direction direction : {tmem::Direction::kStore, tmem::Direction::kLoad})
    for (tmem::Shape shape : tmem::all_shapes())
      for (int num = 1; num <= 128; num *= 2)
        for (bool pack : {false, true}) {
          auto op = tmem::Opcode::make(direction, shape, num, pack);
          if (!op) continue;
          std::string name = std::string(direction == tmem::Direction::kStore ? "St" : "Ld") + "_" +
                             std::string(tmem::to_string(shape)) + "_x" + std::to_string(num) +
                             (pack ? "_pack" : "");
          cases.push_back({name, *op, 0});
          // The upper half-slab of the 16-row shapes (lane offset 16; 16x32bx2 uses both halves).
          if (op->atom_rows() == 16 && !op->is_split()) cases.push_back({name + "_upper", *op, 16});
        }
  return cases;
}

class SimRunOpcode : public ::testing::TestWithParam<OpcodeCase> {};

TEST_P(SimRunOpcode, IdentityPassesRoundTripAndCrossChecks) {
  const OpcodeCase& c = GetParam();
  const tmem::TransferSpec spec = tmemjit_test::identity_spec(c.op, c.lane_offset).make();
  auto report = tmem::run_transfer(spec, sim());
  ASSERT_TRUE(report.ok()) << report.error().full_text();
  EXPECT_TRUE(report->passed()) << describe(*report);
  // Every element of the four warps is compared in each of roundtrip, store and load.
  const std::int64_t elements =
      4LL * c.op.atom_rows() * c.op.atom_cols() * c.op.accesses() * (c.op.packed() ? 2 : 1);
  ASSERT_EQ(report->checks.size(), 4u);
  for (size_t k = 1; k < 4; ++k)
    EXPECT_EQ(report->checks[k].elements, elements) << report->checks[k].name;
}

INSTANTIATE_TEST_SUITE_P(AllLegal, SimRunOpcode, ::testing::ValuesIn(all_opcodes()),
                         [](const ::testing::TestParamInfo<OpcodeCase>& param) {
                           return param.param.name;
                         });

TEST(SimRun, EveryLegalOpcodeIsCovered) {
  // 2 directions x (32x32b 8 + 16x64b 8 + 16x128b 7 + 16x256b 6 + 16x32bx2 8) x 2 pack modes.
  int plain = 0;
  for (const OpcodeCase& c : all_opcodes()) plain += c.lane_offset == 0;
  EXPECT_EQ(plain, 2 * (8 + 8 + 7 + 6 + 8) * 2);
}

// ---- a broken plan
// ----------------------------------------------------------------------------------

// Layout D (128 x 16*repeats) at warpgroup scope in x16 repeats: plan columns 0, 16, 32, ...
tmem::TransferSpec x16_repeats(int repeats) {
  const std::string split =
      ".rearrange(\"(g r) (k c) -> g k r c\", g=4, k=" + std::to_string(repeats) + ")";
  const std::string cols = std::to_string(16 * repeats);
  return tmem::TransferSpec::from_fields("tcgen05.st.sync.aligned.32x32b.x16.b32", "warpgroup",
                                         "tmem_datapath_layout(\"D\",128," + cols + ")" + split,
                                         "wg_local_layout(" + cols + ")" + split)
      .value();
}

TEST(SimRun, APlanWithOneColumnOffByOneIsWrongData) {
  // Three repeats use columns 0..47 of a 64-column allocation; repeat 2 moves to 33..48.
  const tmem::TransferSpec spec = x16_repeats(3);
  tmem::Plan plan = tmem::check(spec).value();
  ASSERT_EQ(plan.repeats.size(), 3u);
  ASSERT_EQ(plan.repeats[2].column, 32);
  ASSERT_EQ(plan.alloc_columns, 64);
  ASSERT_TRUE(tmem::run_transfer(spec, plan, sim())->passed());
  tmem::Plan broken = plan;
  broken.repeats[2].column += 1;
  auto report = tmem::run_transfer(spec, broken, sim());
  ASSERT_TRUE(report.ok()) << report.error().full_text();
  EXPECT_FALSE(report->passed());
  ASSERT_EQ(report->checks.size(), 4u);
  EXPECT_TRUE(report->checks[0].passed) << "the raw path does not use the plan's columns";
  // st and ld move together, so the round trip cannot see the shift; the cross-checks do.
  EXPECT_TRUE(report->checks[1].passed) << describe(*report);
  for (size_t k = 2; k < 4; ++k) {
    const tmem::CheckResult& c = report->checks[k];
    EXPECT_FALSE(c.passed) << c.name;
    EXPECT_TRUE(c.error.empty()) << c.name << ": " << c.error;
    ASSERT_TRUE(c.mismatch.has_value()) << c.name;
  }
  // The first wrong element: register element (0, 2, 0, 0) = thread 0 slot 32, which the views
  // put at lane 0 column 32, a column the broken plan never writes.
  const tmem::Mismatch& m = *report->checks[2].mismatch;
  EXPECT_EQ(m.check, "store");
  EXPECT_EQ(m.element, (std::vector<std::int64_t>{0, 2, 0, 0}));
  EXPECT_EQ(m.thread, 0);
  EXPECT_EQ(m.slot, 32);
  EXPECT_EQ(m.lane, 0);
  EXPECT_EQ(m.column, 32);
  EXPECT_NE(m.expected, m.got);
  const std::string text = report->to_string();
  EXPECT_NE(text.find("FAIL: store: element (0, 2, 0, 0): thread 0 slot 32 -> TMEM lane 0 column "
                      "32: expected 0x"),
            std::string::npos)
      << text;
  const tmem::Mismatch& l = *report->checks[3].mismatch;
  EXPECT_EQ(l.to_string().rfind(
                "load: element (0, 2, 0, 0): TMEM lane 0 column 32 -> thread 0 slot 32", 0),
            0u)
      << l.to_string();
}

TEST(SimRun, AShiftOntoTheNextRepeatBreaksTheOrderingRule) {
  // Repeat 1 moves onto column 32, which repeat 2 writes too, with no wait::st in between: the
  // two stores race (ld and st are not ordered with each other, docs/tcgen05-rules.md §Sync).
  const tmem::TransferSpec spec = x16_repeats(4);
  tmem::Plan broken = tmem::check(spec).value();
  broken.repeats[1].column += 1;
  auto report = tmem::run_transfer(spec, broken, sim()).value();
  EXPECT_FALSE(report.passed());
  for (size_t k : {1u, 2u}) {
    EXPECT_EQ(report.checks[k].rule, tmem::Rule::kWaitBeforeReuse) << report.checks[k].error;
    EXPECT_NE(report.checks[k].error.find("has not executed tcgen05.wait::st since"),
              std::string::npos)
        << report.checks[k].error;
  }
  ASSERT_TRUE(report.checks[3].mismatch.has_value())
      << describe(report);  // ld does not race: wrong data
}

TEST(SimRun, APlanThatLeavesTheAllocationBreaksARuntimeRule) {
  const tmem::TransferSpec spec = x16_repeats(3);
  tmem::Plan broken = tmem::check(spec).value();
  broken.repeats[0].column -=
      1;  // one column left of the allocation (the simulator allocates 448..511)
  auto report = tmem::run_transfer(spec, broken, sim());
  ASSERT_TRUE(report.ok()) << report.error().full_text();
  EXPECT_FALSE(report->passed());
  const tmem::CheckResult& roundtrip = report->checks[1];
  EXPECT_FALSE(roundtrip.passed);
  EXPECT_EQ(roundtrip.rule, tmem::Rule::kColumnsAllocated) << roundtrip.error;
  EXPECT_NE(roundtrip.error.find("TMEM lane 0, column 447, which is not allocated"),
            std::string::npos)
      << roundtrip.error;
  EXPECT_NE(report->to_string().find("FAIL: roundtrip: sim: line "), std::string::npos)
      << report->to_string();
}

TEST(SimRun, ASwappedSlotIsWrongData) {
  const tmem::TransferSpec spec = tmemjit_test::seed_layout_b(false).make();
  tmem::Plan broken = tmem::check(spec).value();
  std::swap(broken.repeats[0].slots[3], broken.repeats[0].slots[4]);
  auto report = tmem::run_transfer(spec, broken, sim()).value();
  EXPECT_FALSE(report.passed());
  // The round trip cannot see a consistent permutation of registers; the cross-checks do.
  EXPECT_TRUE(report.checks[1].passed);
  EXPECT_FALSE(report.checks[2].passed);
  EXPECT_FALSE(report.checks[3].passed);
}

// ---- broadcast loads and replicas (issue 17) -----------------------------------------------

// `check` accepts it, and run passes with the checks that apply: raw and load, not the two that
// would store to a cell once for each element on it.
void expect_load_checks_only(const SpecText& text) {
  const tmem::TransferSpec spec = text.make();
  auto plan = tmem::check(spec);
  ASSERT_TRUE(plan.ok()) << plan.error().full_text();
  auto report = tmem::run_transfer(spec, sim());
  ASSERT_TRUE(report.ok()) << report.error().full_text();
  EXPECT_TRUE(report->passed()) << describe(*report);
  ASSERT_EQ(report->checks.size(), 2u) << describe(*report);
  EXPECT_EQ(report->checks[0].name, "raw");
  EXPECT_EQ(report->checks[1].name, "load");
  ASSERT_EQ(report->left_out.size(), 2u);
  EXPECT_EQ(report->left_out[0].name, "roundtrip");
  EXPECT_EQ(report->left_out[1].name, "store");
  EXPECT_NE(report->left_out[1].reason.find(" holds elements "), std::string::npos)
      << report->left_out[1].reason;
  const std::string printed = describe(*report);
  EXPECT_NE(printed.find("  store     left out: TMEM lane "), std::string::npos) << printed;
  auto json = nlohmann::json::parse(report->to_json());
  EXPECT_EQ(json["left_out"].size(), 2u);
}

TEST(SimRunBroadcast, TwoWarpsReadOneCell) {
  // Warps w and w+4 read the same slab and columns (a zero column stride per warpgroup).
  expect_load_checks_only({"tcgen05.ld.sync.aligned.32x32b.x4.b32", "cta:8",
                           "tensor((8,32,4), S[(2,4,32,4):(0@TCol,32@TLane,1@TLane,1@TCol)], f32)",
                           "tensor((8,32,4), S[(8,32,4):(1@warpid,1@laneid,1)], f32)"});
}

TEST(SimRunBroadcast, TwoRepeatsReadOneCell) {
  expect_load_checks_only({"tcgen05.ld.sync.aligned.32x32b.x1.b32", "warp:0",
                           "tensor((2,32,1), S[(2,32,1):(0@TCol,1@TLane,1@TCol)], f32)",
                           "tensor((2,32,1), S[(2,32,1):(1,1@laneid,1)], f32)"});
}

TEST(SimRunBroadcast, SplitLoadWithImmediateZeroReadsOneBlockTwice) {
  // docs/tcgen05-rules.md §Split: imm = 0 is a legal load (both halves read the same cells); its
  // store would overlap (R20), so only the load runs.
  auto op = tmem::Opcode::parse("tcgen05.ld.sync.aligned.16x32bx2.x4.b32").value();
  SpecText text = tmemjit_test::identity_spec(op);
  text.tmem2 = text.tmem;
  text.imm = "0";
  expect_load_checks_only(text);
}

TEST(SimRunBroadcast, ATmemReplicaOnAnotherElementsCellReadsOneValue) {
  expect_load_checks_only({"tcgen05.ld.sync.aligned.32x32b.x2.b32", "warp:0",
                           "tensor((32,2), S[(32,2):(1@TLane,1@TCol)] + R[2:1@TCol], f32)",
                           "tensor((32,2), S[(32,2):(1@laneid,1)], f32)"});
}

TEST(SimRunReplicas, CopiesTheInstructionDoesNotTouchPassEveryCheck) {
  // A store's register source with copies in slots 8-9, a load's TMEM source with copies at
  // columns 100-101: every replica is placed, the plan covers them, all four checks run.
  for (const SpecText& text : {
           SpecText{"tcgen05.st.sync.aligned.32x32b.x2.b32", "warp:0",
                    "tensor((32,2), S[(32,2):(1@TLane,1@TCol)], f32)",
                    "tensor((32,2), S[(32,2):(1@laneid,1)] + R[2:8], f32)"},
           SpecText{"tcgen05.ld.sync.aligned.32x32b.x2.b32", "warp:0",
                    "tensor((32,2), S[(32,2):(1@TLane,1@TCol)] + R[2:100@TCol], f32)",
                    "tensor((32,2), S[(32,2):(1@laneid,1)], f32)"},
           // 16-bit copies on high halves, past column 64 (a finding of fuzz_differential).
           SpecText{"tcgen05.ld.sync.aligned.16x64b.x1.pack::16b.b32", "warp:0",
                    "tensor((2,2,2,16,2), S[(2,2,2,16,2):(2@TCol,8@TCol,4@TCol,1@TLane,16@TLane)] "
                    "+ R[2:119@TCol], bf16).permute(4, 1, 3, 2, 0)",
                    "tensor((2,2,16,2), S[(2,2,2,8,1,2):(4@m,2@m,1@tx,4@tx,1@m,2@tx)], b32)"},
       }) {
    auto report = tmem::run_transfer(text.make(), sim());
    ASSERT_TRUE(report.ok()) << report.error().full_text();
    EXPECT_TRUE(report->passed()) << text.regs << "\n" << describe(*report);
    EXPECT_EQ(report->checks.size(), 4u);
    EXPECT_TRUE(report->left_out.empty());
  }
}

TEST(SimRunReplicas, ReplicasThatCheckRefusesNeverReachTheSimulator) {
  // Issue 17 reproducers 1a and 1c: a register copy on another element's slot, a TMEM copy at
  // lane 128. run_transfer returns check's error (exit 1), not wrong data (exit 4).
  for (const SpecText& text : {
           SpecText{"tcgen05.st.sync.aligned.32x32b.x2.b32", "warp:0",
                    "tensor((32,2), S[(32,2):(1@TLane,1@TCol)], f32)",
                    "tensor((32,2), S[(32,2):(1@laneid,1)] + R[2:1], f32)"},
           SpecText{"tcgen05.ld.sync.aligned.32x32b.x1.b32", "warp:0",
                    "tensor((32,1), S[(32,1):(1@TLane,1@TCol)] + R[2:128@TLane], f32)",
                    "tensor((32,1), S[(32,1):(1@laneid,1)], f32)"},
       }) {
    auto report = tmem::run_transfer(text.make(), sim());
    ASSERT_FALSE(report.ok());
    EXPECT_EQ(report.error().code(), tmem::ErrorCode::kRule);
    EXPECT_EQ(report.error().rule(), tmem::Rule::kReplicas) << report.error().message();
  }
}

// ---- the executor interface
// -------------------------------------------------------------------------

TEST(SimExecutor, RefusesBuffersOfTheWrongSize) {
  auto executor = tmem::make_sim_executor().value();
  EXPECT_EQ(executor->device(), tmem::Device::kSim);
  const tmem::TransferSpec spec = tmemjit_test::seed_layout_b(true).make();
  const tmem::Plan plan = tmem::check(spec).value();
  std::vector<std::uint32_t> in(128 * 64), out(128 * 63);
  tmem::Status status = executor->run(spec, plan, tmem::KernelKind::kRoundtrip, in, out);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code(), tmem::ErrorCode::kUsage);
  EXPECT_NE(status.error().message().find(
                "buffer 'out' of the roundtrip kernel has 8064 words, expected 8192"),
            std::string::npos)
      << status.error().message();
}

TEST(SimExecutor, SimIsAlwaysAvailable) {
  std::string why_not;
  auto executor = tmem::make_executor(tmem::Device::kSim, &why_not);
  ASSERT_TRUE(executor.ok());
  EXPECT_EQ((*executor)->device(), tmem::Device::kSim);
  EXPECT_TRUE(why_not.empty());
}

}  // namespace
