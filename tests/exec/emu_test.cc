// The emu suite (label `emu`): harness kernels lowered to sm_90 with TMEM in global memory, run on
// a GPU of compute capability >= 9.0 (the H200), checked against the views' prediction. Skips
// with the reason where there is no driver or no such GPU.
#include <gtest/gtest.h>

#include "common/executor_checks.h"
#include "common/executor_skip.h"
#include "tmem/cache.h"
#include "tmem/jit.h"

namespace {

using tmem::KernelKind;
using tmemjit_test::ExecutorCase;

tmemjit_test::ExecutorOrReason& emu() {
  static tmemjit_test::ExecutorOrReason made = tmemjit_test::make_for_suite(tmem::Device::kEmu);
  return made;
}

#define EMU_OR_SKIP()                                  \
  if (!emu().skip.empty()) GTEST_SKIP() << emu().skip; \
  ASSERT_TRUE(emu().failure.empty()) << emu().failure; \
  [[maybe_unused]] tmem::Executor& executor = *emu().executor

class EmuTransfer : public ::testing::TestWithParam<ExecutorCase> {};

TEST_P(EmuTransfer, RoundtripStoreLoadMatchTheViews) {
  EMU_OR_SKIP();
  const tmem::TransferSpec spec = GetParam().text.make();
  const tmem::Plan plan = tmem::check(spec).value();
  std::uint32_t seed = 1;
  for (KernelKind kind : {KernelKind::kRoundtrip, KernelKind::kStore, KernelKind::kLoad})
    EXPECT_TRUE(tmemjit_test::run_and_check(executor, spec, plan, kind, seed++, /*poisoned=*/true))
        << GetParam().name << " " << tmem::to_string(kind);
}

INSTANTIATE_TEST_SUITE_P(Emu, EmuTransfer, ::testing::ValuesIn(tmemjit_test::executor_cases()),
                         tmemjit_test::case_name);

class Emu : public ::testing::Test {
 protected:
  static tmem::TransferSpec spec_of(const tmemjit_test::SpecText& text) { return text.make(); }
};

TEST_F(Emu, DescribesTheDevice) {
  EMU_OR_SKIP();
  EXPECT_EQ(executor.device(), tmem::Device::kEmu);
  EXPECT_EQ(executor.description().rfind("emu on ", 0), 0u) << executor.description();
  EXPECT_NE(executor.description().find("(cc "), std::string::npos) << executor.description();
}

// tcgen05.ld.red emulated on the GPU (PTX min/max{.NaN}, abs.f32): the reduction results equal
// tmem::reduce, the simulator's semantics, for every reduction kind; the split shape included.
TEST_F(Emu, LdRedReductionsMatchTheSimulator) {
  EMU_OR_SKIP();
  std::vector<tmemjit_test::SpecText> specs;
  for (const char* tail :
       {"max.abs.NaN.f32", "min.f32", "max.NaN.f32", "min.abs.f32", "max.s32", "min.u32"})
    specs.push_back(tmemjit_test::ld_red_accumulator(
        std::string("tcgen05.ld.red.sync.aligned.32x32b.x8.") + tail));
  tmemjit_test::SpecText split = tmemjit_test::seed_split(false);
  split.op = "tcgen05.ld.red.sync.aligned.16x32bx2.x4.min.NaN.f32";
  specs.push_back(split);
  std::uint32_t seed = 31;
  for (const auto& text : specs) {
    const auto spec = spec_of(text);
    const auto plan = tmem::check(spec).value();
    for (KernelKind kind : {KernelKind::kRoundtrip, KernelKind::kLoad})
      EXPECT_TRUE(tmemjit_test::run_and_check(executor, spec, plan, kind, seed++, true))
          << text.op << " " << tmem::to_string(kind);
  }
}

TEST_F(Emu, FillCopiesEveryCellThroughTheRawPath) {
  EMU_OR_SKIP();
  const auto spec = spec_of(tmemjit_test::seed_layout_b(true));
  const auto plan = tmem::check(spec).value();
  EXPECT_TRUE(tmemjit_test::run_and_check(executor, spec, plan, KernelKind::kFill, 7));
}

// The executor compiles through compile_transfer: its second run is a memory hit of the module
// cache users share, and the kernel it ran is the one compile_transfer hands a user.
TEST_F(Emu, SecondRunOfAKernelIsACacheHit) {
  EMU_OR_SKIP();
  const auto spec = spec_of(tmemjit_test::seed_split(true));
  const auto plan = tmem::check(spec).value();
  ASSERT_TRUE(tmemjit_test::run_and_check(executor, spec, plan, KernelKind::kRoundtrip, 11));
  const tmem::CacheStats before = tmem::cache_stats();
  ASSERT_TRUE(tmemjit_test::run_and_check(executor, spec, plan, KernelKind::kRoundtrip, 12));
  const tmem::CacheStats after = tmem::cache_stats();
  EXPECT_EQ(after.hits, before.hits + 1);
  EXPECT_EQ(after.misses, before.misses);
  tmem::CompileOptions options;
  options.target = tmem::Target::kSm90;
  tmem::CompileReport report;
  auto kernel = tmem::compile_transfer(spec, options, KernelKind::kRoundtrip, &report);
  ASSERT_TRUE(kernel.ok()) << kernel.error().message();
  EXPECT_EQ(report.cache, tmem::CacheSource::kMemory);
  EXPECT_TRUE(kernel->loaded()) << "the executor's launch loaded this very handle";
}

TEST_F(Emu, WrongBufferSizeIsAUsageError) {
  EMU_OR_SKIP();
  const auto spec = spec_of(tmemjit_test::seed_layout_b(true));
  const auto plan = tmem::check(spec).value();
  std::vector<std::uint32_t> in(10), out(10);
  auto ran = executor.run(spec, plan, KernelKind::kRoundtrip, in, out);
  ASSERT_FALSE(ran.ok());
  EXPECT_EQ(ran.error().code(), tmem::ErrorCode::kUsage);
  EXPECT_NE(ran.error().message().find("needs 8192 u32 words (128 threads x 64 slots)"),
            std::string::npos)
      << ran.error().message();
}

// A plan whose first instruction sits one column to the right: inside the allocation, so the
// emulated hardware accepts it, and the data lands where the views say it must not.
TEST_F(Emu, ColumnOffByOneIsCaughtAsWrongData) {
  EMU_OR_SKIP();
  const auto op = tmem::Opcode::parse("tcgen05.st.sync.aligned.32x32b.x1.b32").value();
  const auto spec = spec_of(tmemjit_test::identity_spec(op));
  tmem::Plan plan = tmem::check(spec).value();
  ASSERT_EQ(plan.alloc_columns, 32);
  plan.repeats[0].column += 1;
  EXPECT_TRUE(tmemjit_test::run_and_check(executor, spec, tmem::check(spec).value(),
                                          KernelKind::kStore, 3));
  const auto broken = tmemjit_test::run_and_check(executor, spec, plan, KernelKind::kStore, 3);
  EXPECT_FALSE(broken);
  EXPECT_NE(std::string(broken.message()).find("store Raw thread 0 slot 0 <-> lane 0 cell 0"),
            std::string::npos)
      << broken.message();
}

// The emulation enforces the warp's lane slab (R17) and the allocated columns (R19) as the
// hardware's guardrails do, and reports the instruction, thread and address.
TEST_F(Emu, LaneOutsideTheWarpsSlabIsARuleError) {
  EMU_OR_SKIP();
  const auto op = tmem::Opcode::parse("tcgen05.st.sync.aligned.32x32b.x1.b32").value();
  const auto spec = spec_of(tmemjit_test::identity_spec(op));
  tmem::Plan plan = tmem::check(spec).value();
  plan.repeats[0].lane_offset = 16;
  std::vector<std::uint32_t> in(128 * static_cast<size_t>(plan.regs_per_thread)), out(in.size());
  auto ran = executor.run(spec, plan, KernelKind::kRoundtrip, in, out);
  ASSERT_FALSE(ran.ok());
  EXPECT_EQ(ran.error().code(), tmem::ErrorCode::kRule);
  // Thread 0's first violation is the st (the ld after it breaks the rule too).
  EXPECT_EQ(ran.error().message().rfind(
                "emulated tcgen05.st.sync.aligned.32x32b.x1.b32 (instruction ", 0),
            0u)
      << ran.error().message();
  EXPECT_NE(ran.error().message().find(
                " of tmem_roundtrip) by thread 0 (warp 0) at TMEM address lane 16, column 0: "
                "rule R17: lanes 16-47 are outside warp 0's lane slab 0-31"),
            std::string::npos)
      << ran.error().message();
}

TEST_F(Emu, ColumnsOutsideTheAllocationAreARuleError) {
  EMU_OR_SKIP();
  const auto op = tmem::Opcode::parse("tcgen05.ld.sync.aligned.32x32b.x4.b32").value();
  const auto spec = spec_of(tmemjit_test::identity_spec(op));
  tmem::Plan plan = tmem::check(spec).value();
  ASSERT_EQ(plan.alloc_columns, 32);
  plan.repeats[0].column = 30;
  std::vector<std::uint32_t> raw(128 * 32), out(128 * static_cast<size_t>(plan.regs_per_thread));
  auto ran = executor.run(spec, plan, KernelKind::kLoad, raw, out);
  ASSERT_FALSE(ran.ok());
  EXPECT_EQ(ran.error().code(), tmem::ErrorCode::kRule);
  EXPECT_NE(ran.error().message().find(
                "by thread 0 (warp 0) at TMEM address lane 0, column 30: rule R19: columns "
                "30-33 are outside the 32 allocated columns"),
            std::string::npos)
      << ran.error().message();
}

// Where the GPU has no tcgen05, auto picks the emulation and says why it passed over gpu.
TEST_F(Emu, AutoPicksTheEmulationWhereTheGpuHasNoTcgen05) {
  EMU_OR_SKIP();
  auto gpu = tmem::make_gpu_executor();
  if (gpu.ok())
    GTEST_SKIP() << "this GPU runs tcgen05 (" << (*gpu)->description() << "); auto picks gpu";
  std::string why_not;
  auto picked = tmem::make_executor(tmem::Device::kAuto, &why_not);
  ASSERT_TRUE(picked.ok()) << picked.error().full_text();
  EXPECT_EQ((*picked)->device(), tmem::Device::kEmu);
  EXPECT_EQ(why_not, "gpu: " + gpu.error().message() + "\n");
}

}  // namespace
