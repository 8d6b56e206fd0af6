// tcgen05.ld.red in the opcode table: every legal form (docs/tcgen05-rules.md §Syntax, §Targets),
// each bullet of rule R14 with a positive and a negative case, its targets and PTX versions.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "runtime/ptx/ir.h"
#include "tmem/image.h"
#include "tmem/opcode.h"

namespace {

using tmem::Opcode;
using tmem::Reduction;
using tmem::ReductionOp;
using tmem::ReductionType;
using tmem::Rule;
using tmem::Shape;
using tmem::Target;

std::string red(const std::string& shape, int num, const std::string& tail) {
  return "tcgen05.ld.red.sync.aligned." + shape + ".x" + std::to_string(num) + "." + tail;
}

// Every legal (shape, num, op, abs, NaN, type), by hand from docs/tcgen05-rules.md §Targets.
TEST(LdRed, EveryLegalFormParsesAndPrintsBack) {
  int forms = 0;
  for (const std::string shape : {"32x32b", "16x32bx2"})
    for (int num = 2; num <= 128; num *= 2)
      for (const std::string op : {"min", "max"})
        for (const std::string type : {"f32", "u32", "s32"})
          for (int flags = 0; flags < (type == "f32" ? 4 : 1); ++flags) {
            std::string tail = op;
            if (flags & 1) tail += ".abs";
            if (flags & 2) tail += ".NaN";
            tail += "." + type;
            const std::string text = red(shape, num, tail);
            auto parsed = Opcode::parse(text);
            ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.error().message();
            ++forms;
            EXPECT_EQ(parsed->to_string(), text);
            EXPECT_TRUE(parsed->reduces());
            EXPECT_TRUE(parsed->is_load());
            EXPECT_FALSE(parsed->packed());
            // As many registers as the plain load (docs/tcgen05-rules.md §Registers).
            EXPECT_EQ(parsed->regs_per_thread(), num);
            EXPECT_EQ(parsed->reduction()->abs, (flags & 1) != 0);
            EXPECT_EQ(parsed->reduction()->nan, (flags & 2) != 0);
            EXPECT_EQ(std::string(tmem::to_string(parsed->reduction()->type)), type);
            auto made = Opcode::make_load_reduce(parsed->shape(), num, *parsed->reduction());
            ASSERT_TRUE(made.ok()) << made.error().message();
            EXPECT_EQ(*made, *parsed);
            EXPECT_EQ(made->hash(), parsed->hash());
          }
  // 2 shapes x 7 nums x 2 ops x (4 f32 + u32 + s32)
  EXPECT_EQ(forms, 2 * 7 * 2 * 6);
}

TEST(LdRed, TheImageIsThePlainLoads) {
  const Opcode reduce = Opcode::parse(red("16x32bx2", 8, "max.f32")).value();
  const Opcode plain = reduce.without_reduction();
  EXPECT_EQ(plain.to_string(), "tcgen05.ld.sync.aligned.16x32bx2.x8.b32");
  EXPECT_NE(plain, reduce);
  EXPECT_NE(plain.hash(), reduce.hash());
  for (int lane = 0; lane < 32; ++lane)
    for (int reg = 0; reg < 8; ++reg)
      EXPECT_EQ(tmem::image(reduce, lane, reg), tmem::image(plain, lane, reg));
}

TEST(LdRed, QualifierOrdersPtxasAcceptsAreCanonicalized) {
  // ptxas 13.0 accepts each of these (docs/tcgen05-rules.md §Targets: the ISA's example spells
  // .u32.max).
  for (const char* text : {"tcgen05.ld.red.sync.aligned.32x32b.x8.u32.max",
                           "tcgen05.ld.red.sync.aligned.32x32b.x8.max.NaN.abs.f32",
                           "tcgen05.ld.red.aligned.sync.32x32b.x8.abs.max.f32"}) {
    auto op = Opcode::parse(text);
    ASSERT_TRUE(op.ok()) << text << ": " << op.error().message();
    EXPECT_EQ(Opcode::parse(op->to_string()).value(), *op);
  }
  EXPECT_EQ(Opcode::parse("tcgen05.ld.red.sync.aligned.32x32b.x8.u32.max")->to_string(),
            "tcgen05.ld.red.sync.aligned.32x32b.x8.max.u32");
}

// Each bullet of R14: the negative case (rule R14) beside a positive one that differs only there.
struct R14Case {
  const char* bullet;
  const char* legal;
  const char* illegal;
};

class LdRedR14 : public testing::TestWithParam<R14Case> {};

TEST_P(LdRedR14, LegalFormPassesAndTheNearMissBreaksR14) {
  const R14Case& c = GetParam();
  EXPECT_TRUE(Opcode::parse(c.legal).ok()) << c.bullet << ": " << c.legal;
  auto bad = Opcode::parse(c.illegal);
  ASSERT_FALSE(bad.ok()) << c.bullet << ": " << c.illegal << " was accepted";
  EXPECT_EQ(bad.error().code(), tmem::ErrorCode::kOpcode);
  EXPECT_EQ(bad.error().rule(), Rule::kLoadReduceForm) << bad.error().message();
  EXPECT_EQ(bad.error().message().find('\n'), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Bullets, LdRedR14,
    testing::Values(R14Case{"shape", "tcgen05.ld.red.sync.aligned.16x32bx2.x2.max.f32",
                            "tcgen05.ld.red.sync.aligned.16x64b.x2.max.f32"},
                    R14Case{"shape 16x256b", "tcgen05.ld.red.sync.aligned.32x32b.x4.min.s32",
                            "tcgen05.ld.red.sync.aligned.16x256b.x4.min.s32"},
                    R14Case{"num >= 2", "tcgen05.ld.red.sync.aligned.32x32b.x2.max.u32",
                            "tcgen05.ld.red.sync.aligned.32x32b.x1.max.u32"},
                    R14Case{"redOp", "tcgen05.ld.red.sync.aligned.32x32b.x2.min.u32",
                            "tcgen05.ld.red.sync.aligned.32x32b.x2.add.u32"},
                    R14Case{"redOp missing", "tcgen05.ld.red.sync.aligned.32x32b.x2.min.u32",
                            "tcgen05.ld.red.sync.aligned.32x32b.x2.u32"},
                    R14Case{"type", "tcgen05.ld.red.sync.aligned.32x32b.x2.max.s32",
                            "tcgen05.ld.red.sync.aligned.32x32b.x2.max.b32"},
                    R14Case{"type f16", "tcgen05.ld.red.sync.aligned.32x32b.x2.max.f32",
                            "tcgen05.ld.red.sync.aligned.32x32b.x2.max.f16"},
                    R14Case{"type missing", "tcgen05.ld.red.sync.aligned.32x32b.x2.max.f32",
                            "tcgen05.ld.red.sync.aligned.32x32b.x2.max"},
                    R14Case{".abs integer", "tcgen05.ld.red.sync.aligned.32x32b.x2.max.abs.f32",
                            "tcgen05.ld.red.sync.aligned.32x32b.x2.max.abs.u32"},
                    R14Case{".NaN integer", "tcgen05.ld.red.sync.aligned.32x32b.x2.min.NaN.f32",
                            "tcgen05.ld.red.sync.aligned.32x32b.x2.min.NaN.s32"},
                    R14Case{"pack", "tcgen05.ld.red.sync.aligned.32x32b.x4.max.f32",
                            "tcgen05.ld.red.sync.aligned.32x32b.x4.pack::16b.max.f32"},
                    R14Case{"st.red", "tcgen05.ld.red.sync.aligned.32x32b.x4.max.f32",
                            "tcgen05.st.red.sync.aligned.32x32b.x4.max.f32"},
                    R14Case{"red qualifier on a plain ld", "tcgen05.ld.sync.aligned.32x32b.x4.b32",
                            "tcgen05.ld.sync.aligned.32x32b.x4.max.b32"}));

TEST(LdRed, MakeLoadReduceAppliesR14) {
  Reduction abs_u32{ReductionOp::kMax, ReductionType::kU32, /*abs=*/true, /*nan=*/false};
  Reduction f32{ReductionOp::kMax, ReductionType::kF32, true, true};
  EXPECT_TRUE(Opcode::make_load_reduce(Shape::k32x32b, 4, f32).ok());
  for (auto made : {Opcode::make_load_reduce(Shape::k32x32b, 4, abs_u32),
                    Opcode::make_load_reduce(Shape::k16x128b, 4, f32),
                    Opcode::make_load_reduce(Shape::k32x32b, 1, f32)}) {
    ASSERT_FALSE(made.ok());
    EXPECT_EQ(made.error().rule(), Rule::kLoadReduceForm);
  }
  // R3 before R14: a count that is no repetition count at all.
  auto three = Opcode::make_load_reduce(Shape::k32x32b, 3, f32);
  ASSERT_FALSE(three.ok());
  EXPECT_EQ(three.error().rule(), Rule::kNumPowerOfTwo);
}

TEST(LdRed, RedvalOperandIsRequiredExactlyOnLdRed) {
  const Opcode reduce = Opcode::parse(red("32x32b", 4, "min.s32")).value();
  const Opcode plain = reduce.without_reduction();
  EXPECT_FALSE(reduce.check_operands(4, false, /*has_redval=*/true).has_value());
  auto missing = reduce.check_operands(4, false, /*has_redval=*/false);
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->rule(), Rule::kLoadReduceForm);
  EXPECT_FALSE(plain.check_operands(4, false).has_value());
  auto extra = plain.check_operands(4, false, /*has_redval=*/true);
  ASSERT_TRUE(extra.has_value());
  EXPECT_EQ(extra->rule(), Rule::kLoadReduceForm);
  // R5 and R9 apply to ld.red as to ld.
  EXPECT_EQ(reduce.check_operands(3, false, true)->rule(), Rule::kVectorLengthIsNregs);
  EXPECT_EQ(reduce.check_operands(4, true, true)->rule(), Rule::kSplitOffsetOnlyFor16x32bx2);
}

// R14's last bullet: sm_103a/f and sm_110a/f only, .version 8.8 (9.0 for sm_110).
TEST(LdRed, TargetsAndVersions) {
  const Opcode reduce = Opcode::parse(red("32x32b", 2, "max.f32")).value();
  const std::set<Target> want = {Target::kSm103a, Target::kSm103f, Target::kSm110a,
                                 Target::kSm110f};
  std::set<Target> got(reduce.targets().begin(), reduce.targets().end());
  EXPECT_EQ(got, want);
  EXPECT_EQ(reduce.min_ptx_version(), (tmem::PtxVersion{8, 8}));
  EXPECT_EQ(reduce.min_ptx_version(Target::kSm103a), (tmem::PtxVersion{8, 8}));
  EXPECT_EQ(reduce.min_ptx_version(Target::kSm110f), (tmem::PtxVersion{9, 0}));
  for (Target t : tmem::all_targets()) EXPECT_EQ(reduce.supports(t), want.count(t) == 1);
  EXPECT_TRUE(reduce.without_reduction().supports(Target::kSm100a));
  const tmem::Error error = reduce.unsupported_target_error(Target::kSm100a);
  EXPECT_EQ(error.code(), tmem::ErrorCode::kTarget);
  EXPECT_EQ(error.rule(), Rule::kLoadReduceForm);
  for (const char* name : {"sm_103a", "sm_103f", "sm_110a", "sm_110f", "sm_100a"})
    EXPECT_NE(error.message().find(name), std::string::npos) << error.message();
}

// The PTX IR prints ld.red with redval and refuses it where R14 says so.
TEST(LdRed, PtxIrPrintsRedvalAndChecksTargetAndRegisterWidth) {
  using tmem::ptx::Function;
  using tmem::ptx::Instruction;
  using tmem::ptx::RegClass;
  const Opcode reduce = Opcode::parse(red("32x32b", 2, "max.abs.NaN.f32")).value();
  auto build = [&](Target target, RegClass redval_class) {
    tmem::ptx::Module module(target);
    Function& f = module.add_function(Function::Kind::kEntry, "k");
    auto regs = f.new_regs(RegClass::kB32, 2);
    auto redval = f.new_reg(redval_class);
    auto taddr = f.new_reg(RegClass::kB32);
    f.emit(Instruction::mov(tmem::ptx::Type::kB32, taddr, tmem::ptx::Operand::imm(0)));
    f.emit(Instruction::tcgen05_ld_red(reduce, regs, redval, taddr));
    f.emit(Instruction::tcgen05_wait_ld());
    f.emit(Instruction::ret());
    return module;
  };
  auto good = build(Target::kSm103a, RegClass::kB32);
  ASSERT_TRUE(good.verify().ok()) << good.verify().error().message();
  const std::string text = tmem::ptx::print(good).value();
  EXPECT_NE(text.find("tcgen05.ld.red.sync.aligned.32x32b.x2.max.abs.NaN.f32 {%r0, %r1}, %r2, "
                      "[%r3];"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(".version 8.8"), std::string::npos) << text;
  auto on_sm100 = build(Target::kSm100a, RegClass::kB32).verify();
  ASSERT_FALSE(on_sm100.ok());
  EXPECT_EQ(on_sm100.error().rule(), Rule::kLoadReduceForm);
  // redval must be a 32-bit register (R14).
  EXPECT_FALSE(build(Target::kSm103a, RegClass::kB64).verify().ok());
}

}  // namespace
