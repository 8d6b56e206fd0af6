// The emulation kernels (kernels/emulation_kernels.h) executed by the CPU simulator: the lowered
// sm_90 kernels of the seed's examples and of every opcode's warpgroup identity move the data the
// views predict, so the emulation's semantics are checked on machines without a GPU too. The GPU
// runs of the same kernels are the emu suite (emu_test.cc).
#include <gtest/gtest.h>

#include <algorithm>

#include "common/executor_checks.h"
#include "kernels/emulation_kernels.h"
#include "runtime/sim/interpreter.h"

namespace {

using tmem::KernelKind;

// An Executor that runs the emulation kernel in the simulator, with the buffer the emu executor
// uses on a GPU: status slots zeroed, TMEM poisoned with 0xA5 bytes.
class EmulationOnSimulator final : public tmem::Executor {
 public:
  tmem::Device device() const noexcept override { return tmem::Device::kEmu; }
  std::string description() const override { return "emulation kernel on the CPU simulator"; }
  tmem::Status run(const tmem::TransferSpec&, const tmem::Plan& plan, KernelKind kind,
                   std::span<const std::uint32_t> first, std::span<std::uint32_t> second) override {
    auto kernel = tmem::kernels::build_emulation_kernel(plan, kind);
    if (!kernel) return std::move(kernel).error();
    std::vector<std::uint32_t> buffer(tmem::kernels::kEmuBufferWords, 0xA5A5A5A5u);
    std::fill_n(buffer.begin(), tmem::kernels::kEmuStatusWords, 0u);
    tmem::sim::GlobalMemory memory;
    const std::uint64_t params[3] = {memory.map_read_only("first", first),
                                     memory.map("second", second),
                                     memory.map(tmem::kernels::kEmuParam, buffer)};
    tmem::sim::Config config;
    config.threads = tmem::kernels::launch_shape(plan, kind).threads;
    config.instruction_budget = std::uint64_t{1} << 28;
    if (auto ran = tmem::sim::run_kernel(kernel->module, "", config, params, memory); !ran.ok())
      return ran;
    return tmem::kernels::check_emulation_status(
        kernel->checked,
        std::span<const std::uint32_t>(buffer).first(tmem::kernels::kEmuStatusWords));
  }
  // The CTA pair as the emu executor runs it: a cluster of 2 CTAs, one EmulationBuffer each.
  tmem::Status run_pair(const tmem::TransferSpec&, const tmem::Plan& plan, KernelKind kind,
                        std::span<const std::uint32_t> first,
                        std::span<std::uint32_t> second) override {
    auto kernel = tmem::kernels::build_emulation_kernel(plan, kind, 2);
    if (!kernel) return std::move(kernel).error();
    std::vector<std::uint32_t> buffer(2 * tmem::kernels::kEmuBufferWords, 0xA5A5A5A5u);
    for (size_t c = 0; c < 2; ++c)
      std::fill_n(buffer.begin() + static_cast<long>(c * tmem::kernels::kEmuBufferWords),
                  tmem::kernels::kEmuStatusWords, 0u);
    tmem::sim::GlobalMemory memory;
    const std::uint64_t params[3] = {memory.map_read_only("first", first),
                                     memory.map("second", second),
                                     memory.map(tmem::kernels::kEmuParam, buffer)};
    tmem::sim::Config config;
    config.threads = tmem::kernels::launch_shape(plan, kind, 2).threads;
    config.ctas = 2;
    config.instruction_budget = std::uint64_t{1} << 28;
    if (auto ran = tmem::sim::run_kernel(kernel->module, "", config, params, memory); !ran.ok())
      return ran;
    for (size_t c = 0; c < 2; ++c)
      if (auto ok = tmem::kernels::check_emulation_status(
              kernel->checked,
              std::span<const std::uint32_t>(buffer).subspan(c * tmem::kernels::kEmuBufferWords,
                                                             tmem::kernels::kEmuStatusWords));
          !ok.ok())
        return ok;
    return std::monostate{};
  }
};

// The simulator must execute the three instructions only the emulation uses; until it does, the
// suite says so instead of passing.
std::string simulator_gap(const tmem::Error& error) {
  if (error.code() != tmem::ErrorCode::kInternal) return {};
  for (const char* op : {"membar.cta", "bar.warp.sync", "//"})
    if (error.detail("instruction") == op)
      return "the CPU simulator does not execute the emulation's comments, membar.cta and "
             "bar.warp.sync yet (" +
             error.message() + ")";
  return {};
}

class EmulationOnSim : public ::testing::TestWithParam<tmemjit_test::ExecutorCase> {};

TEST_P(EmulationOnSim, EveryKindMatchesTheViews) {
  EmulationOnSimulator executor;
  const tmem::TransferSpec spec = GetParam().text.make();
  const tmem::Plan plan = tmem::check(spec).value();
  {
    const auto shape = tmem::kernels::launch_shape(plan, KernelKind::kRoundtrip);
    std::vector<std::uint32_t> in(static_cast<size_t>(shape.threads) *
                                  static_cast<size_t>(shape.slots));
    std::vector<std::uint32_t> out(in.size());
    auto probe = executor.run(spec, plan, KernelKind::kRoundtrip, in, out);
    if (!probe.ok())
      if (const std::string gap = simulator_gap(probe.error()); !gap.empty()) GTEST_SKIP() << gap;
  }
  std::uint32_t seed = 1;
  for (KernelKind kind :
       {KernelKind::kRoundtrip, KernelKind::kStore, KernelKind::kLoad, KernelKind::kFill})
    EXPECT_TRUE(tmemjit_test::run_and_check(executor, spec, plan, kind, seed++, /*poisoned=*/true))
        << GetParam().name << " " << tmem::to_string(kind);
}

// The emulated CTA pair (what the EmuPair suite launches on a Hopper GPU): each CTA moves its own
// block of In -> TMEM -> Out (roundtrip) and Raw -> TMEM -> Raw2 (fill) through its own emulated
// TMEM, ordered by the cluster barrier.
TEST(EmulationPairOnSim, EachCtaMovesItsOwnBlock) {
  EmulationOnSimulator executor;
  for (const tmemjit_test::SpecText& text :
       {tmemjit_test::seed_layout_b(true), tmemjit_test::seed_split(true)}) {
    const tmem::TransferSpec spec = text.make();
    const tmem::Plan plan = tmem::check(spec).value();
    for (KernelKind kind : {KernelKind::kRoundtrip, KernelKind::kFill}) {
      const auto shape = tmem::kernels::launch_shape(plan, kind, 2);
      const size_t per_cta = kind == KernelKind::kFill
                                 ? 128 * static_cast<size_t>(shape.raw_columns)
                                 : static_cast<size_t>(shape.threads * shape.slots);
      std::vector<std::uint32_t> in(2 * per_cta), out(in.size(), 0);
      for (size_t k = 0; k < in.size(); ++k)
        in[k] = 0x0E300000u ^ static_cast<std::uint32_t>(k * 40503u);
      auto ran = executor.run_pair(spec, plan, kind, in, out);
      ASSERT_TRUE(ran.ok()) << text.op << " " << tmem::to_string(kind) << ": "
                            << ran.error().full_text();
      if (kind == KernelKind::kFill) {
        EXPECT_EQ(out, in) << text.op;
        continue;
      }
      // Roundtrip: the slots the register view covers come back (all of them for layout B), the
      // same slots in both CTAs' blocks.
      size_t covered = 0;
      for (size_t k = 0; k < per_cta; ++k) {
        covered += out[k] == in[k];
        EXPECT_EQ(out[k] == in[k], out[per_cta + k] == in[per_cta + k]) << text.op << " slot " << k;
      }
      EXPECT_GT(covered, 0u) << text.op;
      if (text.op == tmemjit_test::seed_layout_b(true).op) {
        EXPECT_EQ(out, in);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sim, EmulationOnSim, ::testing::ValuesIn(tmemjit_test::executor_cases()),
                         tmemjit_test::case_name);

// tcgen05.ld.red lowered to sm_90 (ld.global, then abs.f32 / min / max{.NaN}) and executed by the
// simulator: the reduction results equal tmem::reduce of the loaded words (run_and_check), so the
// emulation's PTX computes what the simulator's ld.red does. The emu suite runs the same on a GPU.
TEST(EmulationOnSimLdRed, ReductionsMatchTheSimulatorsSemantics) {
  EmulationOnSimulator executor;
  for (const char* op : {"tcgen05.ld.red.sync.aligned.32x32b.x8.max.abs.NaN.f32",
                         "tcgen05.ld.red.sync.aligned.32x32b.x8.min.f32",
                         "tcgen05.ld.red.sync.aligned.32x32b.x8.max.s32",
                         "tcgen05.ld.red.sync.aligned.32x32b.x8.min.u32"}) {
    SCOPED_TRACE(op);
    const tmem::TransferSpec spec = tmemjit_test::ld_red_accumulator(op).make();
    const tmem::Plan plan = tmem::check(spec).value();
    std::uint32_t seed = 21;
    for (KernelKind kind : {KernelKind::kRoundtrip, KernelKind::kLoad})
      EXPECT_TRUE(tmemjit_test::run_and_check(executor, spec, plan, kind, seed++, true))
          << tmem::to_string(kind);
  }
}

}  // namespace
