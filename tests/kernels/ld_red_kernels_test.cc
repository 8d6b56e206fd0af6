// tcgen05.ld.red in generated code: the harness kernels compiled for sm_103a (ptxas and nvJitLink)
// with LDTM.STAT in the SASS where the disassembler knows sm_103a, the refusal on sm_100a (rule
// R14), the emulation lowered to sm_90, and the device functions (.func and CUDA) with redval.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "common/spec_fixtures.h"
#include "kernels/device_function.h"
#include "kernels/emulation_kernels.h"
#include "kernels/transfer_kernels.h"
#include "runtime/compile/backends.h"
#include "runtime/compile/sass.h"
#include "tmem/check.h"
#include "tmem/specialize.h"

namespace {

using tmem::KernelKind;
using tmem::Target;

// Two instructions per warp of 32x32b.x8 at warpgroup scope: redvals in slots 16 and 17.
tmem::TransferSpec accumulator(const std::string& op) {
  return tmemjit_test::ld_red_accumulator(op).make();
}

const char* kMaxAbsNan = "tcgen05.ld.red.sync.aligned.32x32b.x8.max.abs.NaN.f32";

std::string kernel_ptx(const tmem::Plan& plan, KernelKind kind, Target target) {
  return tmem::ptx::print(tmem::kernels::build_kernel(plan, kind, target).value()).value();
}

int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(LdRedKernels, LoadKernelPtxNamesRedvalPerInstruction) {
  const tmem::Plan plan = tmem::check(accumulator(kMaxAbsNan)).value();
  const std::string ptx = kernel_ptx(plan, KernelKind::kLoad, Target::kSm103a);
  EXPECT_EQ(count(ptx, "tcgen05.ld.red.sync.aligned.32x32b.x8.max.abs.NaN.f32 {"), 2) << ptx;
  EXPECT_NE(ptx.find(".target sm_103a"), std::string::npos);
  EXPECT_NE(ptx.find(".version 8.8"), std::string::npos);
  // The round trip stores with the plain st of the shape and loads back with the ld.red.
  const std::string roundtrip = kernel_ptx(plan, KernelKind::kRoundtrip, Target::kSm103a);
  EXPECT_EQ(count(roundtrip, "tcgen05.st.sync.aligned.32x32b.x8.b32"), 2);
  EXPECT_EQ(count(roundtrip, "tcgen05.ld.red."), 2);
}

TEST(LdRedKernels, Sm100aIsRefusedNamingTheTargetsThatHaveIt) {
  const tmem::Plan plan = tmem::check(accumulator(kMaxAbsNan)).value();
  for (Target target : {Target::kSm100a, Target::kSm100f}) {
    auto module = tmem::kernels::build_kernel(plan, KernelKind::kLoad, target);
    ASSERT_FALSE(module.ok());
    EXPECT_EQ(module.error().code(), tmem::ErrorCode::kTarget);
    EXPECT_EQ(module.error().rule(), tmem::Rule::kLoadReduceForm);
  }
  for (Target target : {Target::kSm103a, Target::kSm103f, Target::kSm110a, Target::kSm110f})
    EXPECT_TRUE(tmem::kernels::build_kernel(plan, KernelKind::kLoad, target).ok())
        << tmem::to_string(target);
}

// Compiled by ptxas and nvJitLink for sm_103a; one LDTM (LDTM.STAT for ld.red) per instruction,
// two per 16x32bx2 instruction, where the disassembler reads sm_103a code.
// ld.red compiled for `target` by ptxas and nvJitLink, with one LDTM.STAT per SASS access where
// the disassembler reads the target. Returns why the SASS went unchecked (empty: checked).
std::string compile_ld_red_and_count_stat(Target target) {
  auto tool = tmem::sass::find_disassembler();
  const std::string name(tmem::to_string(target));
  std::string sass_note;
  int stat_checked = 0;
  tmemjit_test::SpecText split = tmemjit_test::seed_split(false);
  split.op = "tcgen05.ld.red.sync.aligned.16x32bx2.x4.min.s32";
  for (const tmem::TransferSpec& spec :
       {accumulator(kMaxAbsNan), accumulator("tcgen05.ld.red.sync.aligned.32x32b.x8.min.s32"),
        split.make()}) {
    const std::string op = spec.op().to_string();
    const tmem::Plan plan = tmem::check(spec).value();
    // 16x32bx2 is two SASS ops per instruction (t0_t15 at taddr, t16_t31 at taddr + imm).
    const int per_instruction = spec.op().is_split() ? 2 : 1;
    for (tmem::Backend backend : {tmem::Backend::kPtxas, tmem::Backend::kNvJitLink}) {
      tmem::CompileOptions options;
      options.target = target;
      options.backend = backend;
      auto module = tmem::compile_ptx(kernel_ptx(plan, KernelKind::kLoad, target), options);
      EXPECT_TRUE(module.ok()) << op << " for " << name << ": " << module.error().full_text();
      if (!module.ok() || !tool) continue;
      auto sass = tmem::sass::disassemble(*tool, module->cubin);
      if (!sass.ok()) {  // a disassembler that predates the target
        sass_note = sass.error().message();
        continue;
      }
      tmem::sass::Listing listing(*sass);
      int stat = 0;
      for (const std::string& m : listing.mnemonics())
        if (m.rfind("LDTM.STAT", 0) == 0) ++stat;
      // The load kernel's raw fill is an STTM; every LDTM is one of the plan's ld.red.
      EXPECT_EQ(stat, plan.instructions_per_warp() * per_instruction) << op << "\n" << *sass;
      EXPECT_EQ(listing.count("LDTM"), plan.instructions_per_warp() * per_instruction) << op;
      ++stat_checked;
    }
  }
  if (!tool)
    return "compiled for " + name + "; SASS not checked: no disassembler (" +
           tmem::sass::search_description() + ")";
  if (stat_checked == 0)
    return "compiled for " + name + "; the disassembler does not read it: " + sass_note;
  return "";
}

TEST(LdRedKernels, CompileForSm103aWithLdtmStatInTheSass) {
  const std::string unchecked = compile_ld_red_and_count_stat(Target::kSm103a);
  if (!unchecked.empty()) GTEST_SKIP() << unchecked;
}

// The other family with ld.red (R14): sm_110a, PTX 9.0.
TEST(LdRedKernels, CompileForSm110aWithLdtmStatInTheSass) {
  const std::string unchecked = compile_ld_red_and_count_stat(Target::kSm110a);
  if (!unchecked.empty()) GTEST_SKIP() << unchecked;
}

TEST(LdRedKernels, EmulationLowersTheReductionToMinMax) {
  const tmem::Plan plan = tmem::check(accumulator(kMaxAbsNan)).value();
  auto kernel = tmem::kernels::build_emulation_kernel(plan, KernelKind::kLoad);
  ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
  const std::string ptx = tmem::ptx::print(kernel->module).value();
  std::istringstream lines(ptx);
  for (std::string line; std::getline(lines, line);)  // tcgen05 only in comments
    if (line.find("tcgen05") != std::string::npos) {
      EXPECT_EQ(line.substr(line.find_first_not_of(" \t"), 2), "//") << line;
    }
  EXPECT_EQ(count(ptx, "max.NaN.f32"), 2 * 7) << ptx;  // 8 values: 7 max per instruction
  EXPECT_EQ(count(ptx, "abs.f32"), 2 * 8);
  tmem::CompileOptions options;
  options.target = Target::kSm90;
  options.backend = tmem::Backend::kPtxas;
  auto compiled = tmem::compile_ptx(ptx, options);
  ASSERT_TRUE(compiled.ok()) << compiled.error().full_text();
}

TEST(LdRedKernels, PtxDeviceFunctionReturnsRedvals) {
  tmem::DeviceFunctionOptions options;
  options.language = tmem::Language::kPtx;
  options.name = "acc_max";
  auto fn = tmem::device_function(accumulator(kMaxAbsNan), options, Target::kSm103a);
  ASSERT_TRUE(fn.ok()) << fn.error().full_text();
  EXPECT_EQ(fn->regs_per_thread, 18);  // 16 loaded + 2 reduction results
  EXPECT_EQ(count(fn->source, std::string(kMaxAbsNan) + " {"), 2) << fn->source;
  tmem::CompileOptions compile;
  compile.target = Target::kSm103a;
  compile.backend = tmem::Backend::kPtxas;
  compile.extra_options.push_back("-c");
  auto module = tmem::compile_ptx(fn->source, compile);
  ASSERT_TRUE(module.ok()) << module.error().full_text();
}

// The CUDA form: NAME_redval / NAME_redvals tell the user kernel where the results are; the real
// form compiles with NVRTC for sm_103a, the emulated one for sm_90.
TEST(LdRedKernels, CudaDeviceFunctionHasRedvalAccessors) {
  for (Target target : {Target::kSm103a, Target::kSm90}) {
    SCOPED_TRACE(std::string(tmem::to_string(target)));
    tmem::DeviceFunctionOptions options;
    options.name = "acc_max";
    auto fn = tmem::device_function(accumulator(kMaxAbsNan), options, target);
    ASSERT_TRUE(fn.ok()) << fn.error().full_text();
    EXPECT_NE(fn->source.find("constexpr int acc_max_redval = 16;"), std::string::npos)
        << fn->source;
    EXPECT_NE(fn->source.find("constexpr int acc_max_redvals = 2;"), std::string::npos);
    if (target == Target::kSm90)
      EXPECT_NE(fn->source.find("max.NaN.f32"), std::string::npos) << fn->source;
    else
      EXPECT_NE(fn->source.find("\"=r\"(regs[16])"), std::string::npos) << fn->source;
    const std::string source =
        fn->source +
        "extern \"C\" __global__ void k(unsigned int base, unsigned int* out) {\n"
        "  unsigned int regs[acc_max_regs];\n"
        "  acc_max(base, regs);\n"
        "  for (int k = 0; k < acc_max_redvals; ++k) out[k] = regs[acc_max_redval + k];\n}\n";
    tmem::CompileOptions compile;
    compile.target = target;
    compile.backend = tmem::Backend::kNvrtc;
    auto module = tmem::compile_cuda(source, "k", compile);
    ASSERT_TRUE(module.ok()) << module.error().full_text() << "\n" << source;
  }
}

// The CUDA form for a target without ld.red fails to compile with the R14 sentence in the log.
TEST(LdRedKernels, CudaDeviceFunctionForSm100aFailsWithTheR14Sentence) {
  tmem::DeviceFunctionOptions options;
  options.name = "acc_max";
  auto fn = tmem::device_function(accumulator(kMaxAbsNan), options, Target::kSm100a);
  ASSERT_TRUE(fn.ok()) << fn.error().full_text();
  tmem::CompileOptions compile;
  compile.target = Target::kSm100a;
  compile.backend = tmem::Backend::kNvrtc;
  auto module = tmem::compile_cuda(
      fn->source +
          "extern \"C\" __global__ void k(unsigned int base, unsigned int* out) {\n"
          "  unsigned int regs[acc_max_regs];\n  acc_max(base, regs);\n  out[0] = regs[0];\n}\n",
      "k", compile);
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.error().code(), tmem::ErrorCode::kToolchain);
  EXPECT_NE(module.error().detail("log").find("(rule R14)"), std::string::npos)
      << module.error().full_text();
}

// R14's version bullet: ld.red needs .version 8.8; every target that has it needs as much.
TEST(LdRedKernels, PtxVersionBelow88IsRefused) {
  const tmem::Plan plan = tmem::check(accumulator(kMaxAbsNan)).value();
  auto module = tmem::kernels::build_kernel(plan, KernelKind::kLoad, Target::kSm103a).value();
  EXPECT_TRUE(module.verify().ok());  // the default: .version 8.8
  module.set_version({8, 7});
  auto refused = module.verify();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), tmem::ErrorCode::kTarget);
}

}  // namespace
