// The opcode model against the real compiler: a generated grid of near-miss forms must be
// rejected by both the model and ptxas; forms they treat differently are listed in
// docs/ptxas-agreement.md and pinned here so a toolkit change is noticed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/compile/backends.h"
#include "runtime/ptx/ir.h"
#include "tmem/opcode.h"

namespace {

using tmem::ptx::Instruction;
using tmem::ptx::Operand;
using tmem::ptx::RegClass;

struct Form {
  std::string opcode;   // the PTX spelling, possibly malformed
  int vector = 1;       // registers in the vector operand
  bool imm = false;     // whether an immHalfSplitoff operand follows
  bool load = true;     // operand order of ld (vector first) or st (address first)
  bool redval = false;  // ld.red: a redval register between the vector and the address
  tmem::Target target = tmem::Target::kSm100a;
};

// A 32-thread kernel: alloc 512 columns, the form under test, wait, dealloc, relinquish.
std::string kernel_with(const Form& form) {
  tmem::ptx::Module module(form.target);
  const std::string& smem = module.add_shared("base");
  auto& f = module.add_function(tmem::ptx::Function::Kind::kEntry, "near_miss");
  auto regs = f.new_regs(RegClass::kB32, std::max(form.vector, 1));
  auto taddr = f.new_reg(RegClass::kB32);
  auto redval = f.new_reg(RegClass::kB32);
  for (auto reg : regs) f.emit(Instruction::mov(tmem::ptx::Type::kB32, reg, Operand::imm(1)));
  f.emit(Instruction::tcgen05_alloc(Operand::addr(smem), Operand::imm(512)));
  f.emit(Instruction::tcgen05_fence_before());
  f.emit(Instruction::bar_sync(0));
  f.emit(Instruction::tcgen05_fence_after());
  f.emit(Instruction::ld_shared(taddr, Operand::addr(smem)));
  std::string vector = "{";
  for (int i = 0; i < form.vector; ++i)
    vector += (i ? ", " : "") + regs[static_cast<size_t>(i)].name();
  vector += "}";
  if (form.redval) vector += ", " + redval.name();
  const std::string address = "[" + taddr.name() + "]";
  const std::string imm = form.imm ? ", 16" : "";
  f.emit(Instruction::unchecked_raw(
      form.opcode + " " +
      (form.load ? vector + ", " + address + imm : address + imm + ", " + vector)));
  f.emit(form.load ? Instruction::tcgen05_wait_ld() : Instruction::tcgen05_wait_st());
  if (form.load)  // keep the loaded registers alive
    f.emit(Instruction::st_shared(Operand::addr(smem), regs[0]));
  if (form.redval) f.emit(Instruction::st_shared(Operand::addr(smem), redval));
  f.emit(Instruction::tcgen05_fence_before());
  f.emit(Instruction::bar_sync(0));
  f.emit(Instruction::tcgen05_fence_after());
  f.emit(Instruction::tcgen05_dealloc(taddr, Operand::imm(512)));
  f.emit(Instruction::tcgen05_relinquish());
  f.emit(Instruction::ret());
  return tmem::ptx::print(module).value();
}

bool ptxas_accepts(const Form& form) {
  tmem::CompileOptions options;
  options.backend = tmem::Backend::kPtxas;
  options.target = form.target;
  auto result = tmem::compile_ptx(kernel_with(form), options);
  // A verdict is ptxas's own refusal (kToolchain with its log), not a failure to run it.
  if (!result.ok() &&
      !(result.error().code() == tmem::ErrorCode::kToolchain &&
        result.error().detail("backend") == "ptxas" && result.error().has_detail("log")))
    ADD_FAILURE() << "not a compile verdict: " << result.error().full_text();
  return result.ok();
}

bool model_accepts(const Form& form) {
  auto op = tmem::Opcode::parse(form.opcode);
  if (!op) return false;
  return !op->check_operands(form.vector, form.imm, form.redval).has_value() &&
         op->supports(form.target);
}

std::string spell(const std::string& dir, const std::string& shape, const std::string& num,
                  const std::string& pack = "", const std::string& type = "b32") {
  return "tcgen05." + dir + ".sync.aligned." + shape + "." + num + pack + "." + type;
}

// Near misses generated from the legal table: each breaks exactly one rule.
std::vector<Form> near_misses() {
  std::vector<Form> forms;
  const struct {
    const char* shape;
    int regs_per_num;
  } shapes[] = {{"32x32b", 1}, {"16x64b", 1}, {"16x128b", 2}, {"16x256b", 4}, {"16x32bx2", 1}};
  for (const auto& s : shapes) {
    const bool split = std::string(s.shape) == "16x32bx2";
    for (bool load : {true, false}) {
      const std::string dir = load ? "ld" : "st";
      // R3: a count that is not a power of two, and one past x128.
      forms.push_back({spell(dir, s.shape, "x3"), 3 * s.regs_per_num, split, load});
      forms.push_back({spell(dir, s.shape, "x256"), 128, split, load});
      // R4: past the 128-register limit, with the full-size vector.
      for (int num = 64; num <= 128; num *= 2)
        if (s.regs_per_num * num > 128)
          forms.push_back({spell(dir, s.shape, "x" + std::to_string(num)), 128, split, load});
      // R5: vector one short, one long, and "pack halves the registers".
      forms.push_back({spell(dir, s.shape, "x4"), 4 * s.regs_per_num - 1, split, load});
      forms.push_back({spell(dir, s.shape, "x4"), 4 * s.regs_per_num + 1, split, load});
      forms.push_back({spell(dir, s.shape, "x4", load ? ".pack::16b" : ".unpack::16b"),
                       2 * s.regs_per_num, split, load});
      // R6: the other direction's pack qualifier.
      forms.push_back({spell(dir, s.shape, "x2", load ? ".unpack::16b" : ".pack::16b"),
                       2 * s.regs_per_num, split, load});
      // R7: a type other than .b32.
      forms.push_back({spell(dir, s.shape, "x2", "", "b16"), 2 * s.regs_per_num, split, load});
      forms.push_back({spell(dir, s.shape, "x2", "", "f32"), 2 * s.regs_per_num, split, load});
      // R8: .sync missing.
      forms.push_back(
          {"tcgen05." + dir + ".aligned." + s.shape + ".x2.b32", 2 * s.regs_per_num, split, load});
      // R9: the immediate missing on 16x32bx2, present elsewhere.
      forms.push_back({spell(dir, s.shape, "x2"), 2 * s.regs_per_num, !split, load});
    }
  }
  // R2: tcgen05.cp shapes and a missing shape.
  forms.push_back({"tcgen05.ld.sync.aligned.32x128b.x1.b32", 4, false, true});
  forms.push_back({"tcgen05.ld.sync.aligned.x1.b32", 1, false, true});
  // R1: not a transfer.
  forms.push_back({"tcgen05.mv.sync.aligned.32x32b.x1.b32", 1, false, true});
  return forms;
}

TEST(OpcodeAgreement, NearMissesAreRejectedByTheModelAndByPtxas) {
  const auto forms = near_misses();
  ASSERT_GT(forms.size(), 100u);
  for (const Form& form : forms) {
    SCOPED_TRACE(form.opcode + " with " + std::to_string(form.vector) + " registers" +
                 (form.imm ? " and an immediate" : ""));
    EXPECT_FALSE(model_accepts(form));
    EXPECT_FALSE(ptxas_accepts(form));
  }
}

TEST(OpcodeAgreement, LegalSpellingsAreAcceptedByBoth) {
  const std::vector<Form> forms = {
      {"tcgen05.ld.sync.aligned.32x32b.x2.b32", 2, false, true},
      {"tcgen05.st.sync.aligned.16x256b.x32.unpack::16b.b32", 128, false, false},
      {"tcgen05.ld.sync.aligned.16x32bx2.x128.pack::16b.b32", 128, true, true},
      // ptxas also accepts these orders (docs/tcgen05-rules.md §Syntax); the model accepts and
      // canonicalizes them.
      {"tcgen05.ld.aligned.sync.32x32b.x2.b32", 2, false, true},
      {"tcgen05.ld.sync.aligned.16x128b.pack::16b.x2.b32", 4, false, true},
  };
  for (const Form& form : forms) {
    SCOPED_TRACE(form.opcode);
    EXPECT_TRUE(model_accepts(form));
    EXPECT_TRUE(ptxas_accepts(form));
  }
}

TEST(OpcodeAgreement, DocumentedDisagreementsStillHold) {
  // docs/ptxas-agreement.md: ptxas 13.0 accepts a missing .aligned; the PTX ISA requires it, and
  // the model follows the ISA (rule R8). If ptxas starts rejecting it, the two agree again and
  // the document should say so.
  const Form no_aligned{"tcgen05.ld.sync.32x32b.x2.b32", 2, false, true};
  EXPECT_FALSE(model_accepts(no_aligned));
  EXPECT_TRUE(ptxas_accepts(no_aligned))
      << "ptxas now rejects a missing .aligned: update docs/ptxas-agreement.md";
}

// tcgen05.ld.red (rule R14) on sm_103a: its legal forms, and near misses that each break one
// bullet of R14 (or R3/R5/R9 as ld does), including the targets that lack it.
std::string red_spell(const std::string& shape, int num, const std::string& tail) {
  return "tcgen05.ld.red.sync.aligned." + shape + ".x" + std::to_string(num) + "." + tail;
}

Form red_form(const std::string& shape, int num, const std::string& tail,
              tmem::Target target = tmem::Target::kSm103a) {
  return {red_spell(shape, num, tail), num, shape == "16x32bx2", true, true, target};
}

std::vector<Form> red_legal_forms() {
  std::vector<Form> forms;
  for (const std::string shape : {"32x32b", "16x32bx2"})
    for (int num : {2, 8, 128})
      for (const std::string tail :
           {"max.f32", "min.abs.f32", "max.NaN.f32", "min.abs.NaN.f32", "max.u32", "min.s32"})
        forms.push_back(red_form(shape, num, tail));
  forms.push_back(red_form("32x32b", 4, "u32.max"));  // the ISA example's order
  forms.push_back(red_form("32x32b", 4, "max.f32", tmem::Target::kSm103f));
  forms.push_back(red_form("32x32b", 4, "max.f32", tmem::Target::kSm110a));
  forms.push_back(red_form("16x32bx2", 4, "min.s32", tmem::Target::kSm110f));
  return forms;
}

std::vector<Form> red_near_misses() {
  std::vector<Form> forms;
  for (const std::string shape : {"16x64b", "16x128b", "16x256b"})  // R14: shape
    forms.push_back(red_form(shape, 2, "max.f32"));
  forms.push_back(red_form("32x32b", 1, "max.f32"));            // R14: .num >= x2
  forms.push_back(red_form("16x32bx2", 1, "min.u32"));          // R14: .num >= x2
  forms.push_back(red_form("32x32b", 2, "add.u32"));            // R14: redOp
  forms.push_back(red_form("32x32b", 2, "max.b32"));            // R14: type
  forms.push_back(red_form("32x32b", 2, "max.f16"));            // R14: type
  forms.push_back(red_form("32x32b", 2, "max.abs.u32"));        // R14: .abs with an integer
  forms.push_back(red_form("32x32b", 2, "min.NaN.s32"));        // R14: .NaN with an integer
  forms.push_back(red_form("32x32b", 2, "pack::16b.max.f32"));  // R14: pack
  Form no_redval = red_form("32x32b", 2, "max.f32");            // R14: redval missing
  no_redval.redval = false;
  forms.push_back(no_redval);
  for (auto target : {tmem::Target::kSm100a, tmem::Target::kSm100f})  // R14: target
    forms.push_back(red_form("32x32b", 2, "max.f32", target));
  Form short_vector = red_form("32x32b", 4, "max.f32");  // R5
  short_vector.vector = 3;
  forms.push_back(short_vector);
  Form no_imm = red_form("16x32bx2", 4, "max.f32");  // R9
  no_imm.imm = false;
  forms.push_back(no_imm);
  forms.push_back(red_form("32x32b", 3, "max.f32"));  // R3
  return forms;
}

TEST(OpcodeAgreement, LdRedLegalFormsAreAcceptedByBoth) {
  for (const Form& form : red_legal_forms()) {
    SCOPED_TRACE(form.opcode + " on " + std::string(tmem::to_string(form.target)));
    EXPECT_TRUE(model_accepts(form));
    EXPECT_TRUE(ptxas_accepts(form));
  }
}

TEST(OpcodeAgreement, LdRedNearMissesAreRejectedByBoth) {
  for (const Form& form : red_near_misses()) {
    SCOPED_TRACE(form.opcode + " with " + std::to_string(form.vector) + " registers" +
                 (form.redval ? ", redval" : "") + (form.imm ? ", an immediate" : "") + " on " +
                 std::string(tmem::to_string(form.target)));
    EXPECT_FALSE(model_accepts(form));
    EXPECT_FALSE(ptxas_accepts(form));
  }
}

}  // namespace
