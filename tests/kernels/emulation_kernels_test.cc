// Emulation kernels (kernels/emulation_kernels.h): the harness kernels lowered to sm_90 PTX compile
// with ptxas and the default backend for every legal form, keep the real kernel's parameters and
// structure, contain no tcgen05 instruction, and report rule violations precisely.
#include "kernels/emulation_kernels.h"

#include <gtest/gtest.h>

#include <sstream>

#include "common/spec_fixtures.h"
#include "kernels/transfer_kernels.h"
#include "runtime/compile/backends.h"
#include "tmem/check.h"

namespace {

using tmem::KernelKind;
using tmem::Target;
using tmemjit_test::SpecText;

constexpr KernelKind kKinds[] = {KernelKind::kRoundtrip, KernelKind::kStore, KernelKind::kLoad,
                                 KernelKind::kFill};

tmem::Plan plan_of(const SpecText& text) { return tmem::check(text.make()).value(); }

std::string emu_ptx(const tmem::Plan& plan, KernelKind kind) {
  auto kernel = tmem::kernels::build_emulation_kernel(plan, kind);
  if (!kernel) throw kernel.error();
  return tmem::ptx::print(kernel->module).value();
}

std::string real_ptx(const tmem::Plan& plan, KernelKind kind) {
  return tmem::ptx::print(tmem::kernels::build_kernel(plan, kind).value()).value();
}

::testing::AssertionResult compiles_for_sm90(const std::string& ptx, tmem::Backend backend) {
  tmem::CompileOptions options;
  options.target = Target::kSm90;
  options.backend = backend;
  auto compiled = tmem::compile_ptx(ptx, options);
  if (!compiled) return ::testing::AssertionFailure() << compiled.error().full_text();
  if (compiled->cubin.empty()) return ::testing::AssertionFailure() << "empty cubin";
  return ::testing::AssertionSuccess();
}

int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// Lines that are instructions (not comments) mentioning tcgen05.
int tcgen05_instructions(const std::string& ptx) {
  std::stringstream lines(ptx);
  std::string line;
  int n = 0;
  while (std::getline(lines, line))
    if (line.rfind("\t//", 0) != 0 && line.rfind("//", 0) != 0 &&
        line.find("tcgen05") != std::string::npos)
      ++n;
  return n;
}

std::vector<SpecText> seeds() {
  return {tmemjit_test::seed_layout_b(true), tmemjit_test::seed_pack(true),
          tmemjit_test::seed_split(false)};
}

TEST(EmulationKernels, SeedExamplesCompileForSm90InEveryKind) {
  for (const SpecText& text : seeds()) {
    const tmem::Plan plan = plan_of(text);
    for (KernelKind kind : kKinds) {
      const std::string ptx = emu_ptx(plan, kind);
      EXPECT_NE(ptx.find(".version 7.8\n.target sm_90\n"), std::string::npos) << text.op;
      EXPECT_EQ(tcgen05_instructions(ptx), 0) << text.op << "\n" << ptx;
      EXPECT_TRUE(compiles_for_sm90(ptx, tmem::Backend::kPtxas))
          << text.op << " " << tmem::to_string(kind);
      EXPECT_TRUE(compiles_for_sm90(ptx, tmem::CompileOptions{}.backend))
          << text.op << " " << tmem::to_string(kind);
    }
  }
}

TEST(EmulationKernels, EveryIdentityFormCompilesForSm90) {
  int forms = 0;
  for (tmem::Shape shape : tmem::all_shapes())
    for (int num = 1; num <= 128; num *= 2)
      for (bool pack : {false, true}) {
        auto op = tmem::Opcode::make(tmem::Direction::kStore, shape, num, pack);
        if (!op) continue;
        ++forms;
        const tmem::Plan plan = plan_of(tmemjit_test::identity_spec(*op));
        const std::string roundtrip = emu_ptx(plan, KernelKind::kRoundtrip);
        EXPECT_EQ(tcgen05_instructions(roundtrip), 0) << *op;
        EXPECT_TRUE(compiles_for_sm90(roundtrip, tmem::Backend::kPtxas)) << *op;
        for (KernelKind kind : {KernelKind::kStore, KernelKind::kLoad})
          EXPECT_TRUE(compiles_for_sm90(emu_ptx(plan, kind), tmem::CompileOptions{}.backend))
              << *op << " " << tmem::to_string(kind);
      }
  EXPECT_EQ(forms, 74);
}

TEST(EmulationKernels, KeepTheParametersAndAddTheEmulatedTmem) {
  const tmem::Plan plan = plan_of(tmemjit_test::seed_layout_b(true));
  for (KernelKind kind : kKinds) {
    const auto real = tmem::kernels::build_kernel(plan, kind).value();
    const auto emu = tmem::kernels::build_emulation_kernel(plan, kind).value();
    ASSERT_EQ(emu.module.functions().size(), 1u);
    const auto& r = real.functions().front();
    const auto& e = emu.module.functions().front();
    EXPECT_EQ(e.name(), r.name());
    EXPECT_EQ(e.max_threads(), r.max_threads());
    ASSERT_EQ(e.params().size(), r.params().size() + 1);
    for (size_t k = 0; k < r.params().size(); ++k) EXPECT_EQ(e.params()[k], r.params()[k]);
    EXPECT_EQ(e.params().back(), (tmem::ptx::Param{tmem::ptx::Type::kU64, "tmem_emu"}));
    EXPECT_EQ(emu.module.shared_vars(), real.shared_vars());
    EXPECT_EQ(emu.module.target(), Target::kSm90);
  }
}

TEST(EmulationKernels, KeepTheLifecycleStructure) {
  const tmem::Plan plan = plan_of(tmemjit_test::seed_layout_b(true));
  for (KernelKind kind : kKinds) {
    const std::string real = real_ptx(plan, kind), emu = emu_ptx(plan, kind);
    const int waits = count(real, "tcgen05.wait::"), fences = count(real, "tcgen05.fence::");
    EXPECT_EQ(count(emu, "bar.sync 0;"), count(real, "bar.sync 0;")) << tmem::to_string(kind);
    EXPECT_EQ(count(emu, "bar.warp.sync -1;"), waits) << tmem::to_string(kind);
    EXPECT_EQ(count(emu, "membar.cta;"), waits + fences) << tmem::to_string(kind);
    EXPECT_EQ(count(emu, "bra.uni"), count(real, "bra.uni")) << tmem::to_string(kind);
    // Warp 0 still allocates: the emulated alloc sits inside the branch warps 1.. skip.
    const size_t skip = emu.find("bra $L_0_after_alloc;"),
                 store = emu.find("[tmem_base_address], %r"), label = emu.find("$L_0_after_alloc:");
    ASSERT_NE(skip, std::string::npos);
    EXPECT_LT(skip, store);
    EXPECT_LT(store, label);
  }
}

TEST(EmulationKernels, EqualPlansGiveByteIdenticalPtx) {
  for (const SpecText& text : seeds())
    for (KernelKind kind : kKinds)
      EXPECT_EQ(emu_ptx(plan_of(text), kind), emu_ptx(plan_of(text), kind));
}

TEST(EmulationKernels, Sm90RefusesEveryTcgen05Instruction) {
  const tmem::Plan plan = plan_of(tmemjit_test::seed_layout_b(true));
  auto direct = tmem::kernels::build_kernel(plan, KernelKind::kRoundtrip, Target::kSm90);
  ASSERT_FALSE(direct.ok());
  EXPECT_EQ(direct.error().code(), tmem::ErrorCode::kTarget);
  EXPECT_EQ(direct.error().message(),
            "tcgen05.alloc cannot run on target sm_90; tcgen05 runs on: sm_100a, sm_100f, sm_103a, "
            "sm_103f, sm_110a, "
            "sm_110f");
  tmem::ptx::Module module(Target::kSm90);
  auto& f = module.add_function(tmem::ptx::Function::Kind::kEntry, "k");
  const auto regs = f.new_regs(tmem::ptx::RegClass::kB32, 2);
  f.emit(tmem::ptx::Instruction::tcgen05_st(
      tmem::Opcode::parse("tcgen05.st.sync.aligned.32x32b.x1.b32").value(), regs[0], {regs[1]}));
  auto printed = tmem::ptx::print(module);
  ASSERT_FALSE(printed.ok());
  EXPECT_EQ(printed.error().code(), tmem::ErrorCode::kTarget);
  EXPECT_EQ(printed.error().message().rfind(
                "tcgen05.st.sync.aligned.32x32b.x1.b32 cannot run on target sm_90", 0),
            0u)
      << printed.error().message();
}

TEST(EmulationKernels, Sm90IsOnlyTheEmulationTarget) {
  for (Target target : tmem::all_targets()) EXPECT_NE(target, Target::kSm90);
  EXPECT_EQ(tmem::to_string(Target::kSm90), "sm_90");
  EXPECT_EQ(tmem::min_ptx_version(Target::kSm90), (tmem::PtxVersion{7, 8}));
  // parse_target takes every name the CLI and Python take, the emulation's included.
  auto parsed = tmem::parse_target("sm_90");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(*parsed, Target::kSm90);
  EXPECT_EQ(tmem::parse_target(tmem::to_string(*parsed)).value(), Target::kSm90);
  auto hopper_arch = tmem::parse_target("sm_90a");
  ASSERT_FALSE(hopper_arch.ok());
  EXPECT_EQ(hopper_arch.error().code(), tmem::ErrorCode::kTarget);
  EXPECT_NE(hopper_arch.error().message().find("the emulation target is sm_90"), std::string::npos)
      << hopper_arch.error().message();
  EXPECT_FALSE(tmem::runs_on(Target::kSm90, 86));
  EXPECT_TRUE(tmem::runs_on(Target::kSm90, 90));
  EXPECT_TRUE(tmem::runs_on(Target::kSm90, 100));
  EXPECT_TRUE(tmem::runs_on(Target::kSm90, 120));
}

tmem::kernels::EmulationKernel fake_kernel() {
  tmem::kernels::EmulationKernel kernel;
  kernel.checked.push_back(
      {"tcgen05.st.sync.aligned.16x64b.x2.b32", "tmem_store", 30, true, 16, 4, 64});
  kernel.checked.push_back({"tcgen05.dealloc", "tmem_store", 60, false, 0, 0, 64});
  return kernel;
}

TEST(EmulationStatus, NoViolationIsSuccess) {
  std::vector<std::uint32_t> status(2 * 128, 0);
  EXPECT_TRUE(tmem::kernels::check_emulation_status(fake_kernel().checked, status).ok());
}

TEST(EmulationStatus, TheFirstThreadsViolationNamesTheRule) {
  std::vector<std::uint32_t> status(2 * 128, 0);
  status[2 * 70] = 1;  // thread 70, warp 2 (slab 64-95): lanes 88-103 cross the slab
  status[2 * 70 + 1] = (88u << 16) | 8u;
  status[2 * 90] = 2;
  auto lanes = tmem::kernels::check_emulation_status(fake_kernel().checked, status);
  ASSERT_FALSE(lanes.ok());
  EXPECT_EQ(lanes.error().code(), tmem::ErrorCode::kRule);
  EXPECT_EQ(
      lanes.error().message(),
      "emulated tcgen05.st.sync.aligned.16x64b.x2.b32 (instruction 30 of tmem_store) by thread 70 "
      "(warp 2) at TMEM "
      "address lane 88, column 8: rule R17: lanes 88-103 are outside warp 2's lane slab 64-95");
  status[2 * 70 + 1] = (80u << 16) | 62u;
  EXPECT_EQ(
      tmem::kernels::check_emulation_status(fake_kernel().checked, status).error().message(),
      "emulated tcgen05.st.sync.aligned.16x64b.x2.b32 (instruction 30 of tmem_store) by thread 70 "
      "(warp 2) at TMEM "
      "address lane 80, column 62: rule R19: columns 62-65 are outside the 64 allocated columns");
  status[2 * 70] = 0;
  status[2 * 90 + 1] = 5;
  EXPECT_EQ(tmem::kernels::check_emulation_status(fake_kernel().checked, status).error().message(),
            "emulated tcgen05.dealloc (instruction 60 of tmem_store) by thread 90 (warp 2) at TMEM "
            "address lane 0, column "
            "5: rule R23: dealloc of an address that alloc did not return (it returned lane 0, "
            "column 0)");
  status[2 * 90] = 3;
  EXPECT_EQ(tmem::kernels::check_emulation_status(fake_kernel().checked, status).error().code(),
            tmem::ErrorCode::kInternal);
}

}  // namespace
