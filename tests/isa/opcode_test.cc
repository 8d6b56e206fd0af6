// Opcode model: every (dir, shape, num, pack) row of docs/tcgen05-rules.md §Shapes, §Syntax,
// §Registers, and every rejection rule R1-R9.
#include "tmem/opcode.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "tmem/rule.h"

namespace {

using tmem::Direction;
using tmem::Opcode;
using tmem::Shape;

// docs/tcgen05-rules.md §Registers, transcribed by hand: registers per thread for each shape and
// .num (0 = NA).
const std::map<std::string, std::map<int, int>> kRegsTable = {
    {"32x32b", {{1, 1}, {2, 2}, {4, 4}, {8, 8}, {16, 16}, {32, 32}, {64, 64}, {128, 128}}},
    {"16x64b", {{1, 1}, {2, 2}, {4, 4}, {8, 8}, {16, 16}, {32, 32}, {64, 64}, {128, 128}}},
    {"16x32bx2", {{1, 1}, {2, 2}, {4, 4}, {8, 8}, {16, 16}, {32, 32}, {64, 64}, {128, 128}}},
    {"16x128b", {{1, 2}, {2, 4}, {4, 8}, {8, 16}, {16, 32}, {32, 64}, {64, 128}, {128, 0}}},
    {"16x256b", {{1, 4}, {2, 8}, {4, 16}, {8, 32}, {16, 64}, {32, 128}, {64, 0}, {128, 0}}},
};
// docs/tcgen05-rules.md §Shapes: TMEM footprint per access, plain (lanes, 32-bit columns per .num).
const std::map<std::string, std::pair<int, int>> kFootprint = {{"32x32b", {32, 1}},
                                                               {"16x64b", {16, 2}},
                                                               {"16x128b", {16, 4}},
                                                               {"16x256b", {16, 8}},
                                                               {"16x32bx2", {16, 1}}};

std::string spell(const std::string& dir, const std::string& shape, int num, bool pack) {
  std::string text = "tcgen05." + dir + ".sync.aligned." + shape + ".x" + std::to_string(num);
  if (pack) text += dir == "ld" ? ".pack::16b" : ".unpack::16b";
  return text + ".b32";
}

TEST(Opcode, EveryRowOfTheTable) {
  int accepted = 0, rejected = 0;
  for (const auto& [shape, by_num] : kRegsTable) {
    for (const auto& [num, regs] : by_num) {
      for (const std::string dir : {"ld", "st"}) {
        for (bool pack : {false, true}) {
          std::string text = spell(dir, shape, num, pack);
          auto op = Opcode::parse(text);
          if (regs == 0) {
            ASSERT_FALSE(op.ok()) << text;
            EXPECT_EQ(op.error().code(), tmem::ErrorCode::kOpcode);
            ++rejected;
            continue;
          }
          ASSERT_TRUE(op.ok()) << text << ": " << op.error().message();
          ++accepted;
          EXPECT_EQ(op->to_string(), text);
          EXPECT_EQ(std::string(tmem::to_string(op->direction())), dir);
          EXPECT_EQ(std::string(tmem::to_string(op->shape())), shape);
          EXPECT_EQ(op->num(), num);
          EXPECT_EQ(op->packed(), pack);
          EXPECT_EQ(op->regs_per_thread(), regs) << text;
          auto [lanes, cols_per_num] = kFootprint.at(shape);
          EXPECT_EQ(op->atom_rows(), lanes);
          EXPECT_EQ(op->atom_cols(), cols_per_num * num);
          EXPECT_EQ(op->atom_tmem_cols(), cols_per_num * num * (pack ? 2 : 1)) << text;
          EXPECT_EQ(op->accesses(), shape == "16x32bx2" ? 2 : 1);
          // Register words of one access = lanes x columns = 32 lanes x registers per thread,
          // except 16x32bx2 where the two accesses share the 32 x N registers.
          EXPECT_EQ(op->atom_rows() * op->atom_cols() * op->accesses(), 32 * regs) << text;
          EXPECT_EQ(op->min_ptx_version(), (tmem::PtxVersion{8, 6}));
          EXPECT_EQ(op->targets().size(), 6u);
          auto made = Opcode::make(op->direction(), op->shape(), num, pack);
          ASSERT_TRUE(made.ok());
          EXPECT_EQ(*made, *op);
          EXPECT_EQ(made->hash(), op->hash());
        }
      }
    }
  }
  // 5 shapes x 8 nums x 2 dirs x 2 pack modes = 160 cases; 148 legal (docs/tcgen05-rules.md
  // §Registers).
  EXPECT_EQ(accepted, 148);
  EXPECT_EQ(rejected, 12);
}

TEST(Opcode, TargetVersions) {
  auto op = Opcode::parse("tcgen05.ld.sync.aligned.32x32b.x1.b32").value();
  EXPECT_EQ(op.min_ptx_version(tmem::Target::kSm100a), (tmem::PtxVersion{8, 6}));
  EXPECT_EQ(op.min_ptx_version(tmem::Target::kSm100f), (tmem::PtxVersion{8, 8}));
  EXPECT_EQ(op.min_ptx_version(tmem::Target::kSm103a), (tmem::PtxVersion{8, 8}));
  EXPECT_EQ(op.min_ptx_version(tmem::Target::kSm110f), (tmem::PtxVersion{9, 0}));
  EXPECT_TRUE(tmem::runs_on(tmem::Target::kSm100f, 103));
  EXPECT_FALSE(tmem::runs_on(tmem::Target::kSm100a, 103));
  EXPECT_FALSE(tmem::runs_on(tmem::Target::kSm103f, 100));
  EXPECT_FALSE(tmem::runs_on(tmem::Target::kSm100a, 90));
  EXPECT_FALSE(tmem::parse_target("sm_90a").ok());
  auto renamed = tmem::parse_target("sm_101a");
  ASSERT_FALSE(renamed.ok());
  EXPECT_NE(renamed.error().message().find("sm_110"), std::string::npos);
}

TEST(Opcode, EqualityAndHashDistinguishFields) {
  auto a = Opcode::parse("tcgen05.ld.sync.aligned.16x64b.x4.b32").value();
  auto b = Opcode::parse("tcgen05.st.sync.aligned.16x64b.x4.b32").value();
  auto c = Opcode::parse("tcgen05.ld.sync.aligned.16x64b.x4.pack::16b.b32").value();
  auto d = Opcode::parse("tcgen05.ld.sync.aligned.16x64b.x8.b32").value();
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, d);
  EXPECT_NE(a.hash(), b.hash());
  EXPECT_NE(a.hash(), c.hash());
  EXPECT_NE(a.hash(), d.hash());
}

TEST(Opcode, AcceptsTheQualifierOrdersPtxasAccepts) {
  // ptxas 13.0 accepts .aligned.sync and the pack qualifier before .num (docs/tcgen05-rules.md
  // §Syntax); the canonical spelling is printed back.
  auto swapped = Opcode::parse("tcgen05.ld.aligned.sync.32x32b.x2.b32");
  ASSERT_TRUE(swapped.ok());
  EXPECT_EQ(swapped->to_string(), "tcgen05.ld.sync.aligned.32x32b.x2.b32");
  auto pack_first = Opcode::parse("tcgen05.ld.sync.aligned.16x128b.pack::16b.x2.b32");
  ASSERT_TRUE(pack_first.ok());
  EXPECT_EQ(pack_first->to_string(), "tcgen05.ld.sync.aligned.16x128b.x2.pack::16b.b32");
}

struct Rejection {
  const char* text;
  const char* rule;     // the rule the message must cite
  const char* mention;  // a token or fact the message must name
};

class OpcodeRejects : public testing::TestWithParam<Rejection> {};

TEST_P(OpcodeRejects, WithOneSentenceNamingTheToken) {
  const Rejection& c = GetParam();
  auto op = Opcode::parse(c.text);
  ASSERT_FALSE(op.ok()) << c.text << " was accepted";
  const std::string& message = op.error().message();
  EXPECT_EQ(op.error().code(), tmem::ErrorCode::kOpcode);
  EXPECT_NE(message.find(c.mention), std::string::npos) << message;
  if (*c.rule) {
    EXPECT_NE(message.find(c.rule), std::string::npos) << message;
  }
  EXPECT_EQ(message.find('\n'), std::string::npos) << "one sentence, one line: " << message;
  EXPECT_NE(message.back(), '.') << message;
}

INSTANTIATE_TEST_SUITE_P(
    Rules, OpcodeRejects,
    testing::Values(
        // R1: operation
        Rejection{"tcgen05.cp.sync.aligned.32x32b.x1.b32", "R1", ".cp"},
        Rejection{"tcgen05.st.red.sync.aligned.32x32b.x2.min.f32", "R14", "tcgen05.ld.red"},
        Rejection{"tcgen05", "", "expected ld or st"},
        Rejection{"tcgen04.ld.sync.aligned.32x32b.x1.b32", "", "tcgen04"},
        // R2: shape
        Rejection{"tcgen05.ld.sync.aligned.32x128b.x1.b32", "R2", "tcgen05.cp"},
        Rejection{"tcgen05.ld.sync.aligned.16x512b.x1.b32", "R2", ".16x512b"},
        Rejection{"tcgen05.ld.sync.aligned.x1.b32", "R2", "missing shape"},
        // R3: num
        Rejection{"tcgen05.ld.sync.aligned.32x32b.x3.b32", "R3", ".x3"},
        Rejection{"tcgen05.ld.sync.aligned.32x32b.x256.b32", "R3", ".x256"},
        Rejection{"tcgen05.st.sync.aligned.32x32b.x0.b32", "R3", ".x0"},
        Rejection{"tcgen05.ld.sync.aligned.32x32b.b32", "R3", "missing repetition"},
        // R4: the 128-register limit
        Rejection{"tcgen05.ld.sync.aligned.16x256b.x64.b32", "R4", "128"},
        Rejection{"tcgen05.st.sync.aligned.16x256b.x128.b32", "R4", "512 registers"},
        Rejection{"tcgen05.ld.sync.aligned.16x128b.x128.pack::16b.b32", "R4", "256 registers"},
        // R6: pack
        Rejection{"tcgen05.ld.sync.aligned.32x32b.x1.unpack::16b.b32", "R6", ".unpack::16b"},
        Rejection{"tcgen05.st.sync.aligned.32x32b.x1.pack::16b.b32", "R6", ".pack::16b"},
        Rejection{"tcgen05.ld.sync.aligned.32x32b.x1.pack::32b.b32", "R6", "pack::32b"},
        Rejection{"tcgen05.ld.sync.aligned.32x32b.x1.pack::16b.pack::16b.b32", "", "twice"},
        // R7: type
        Rejection{"tcgen05.ld.sync.aligned.32x32b.x1.b16", "R7", ".b16"},
        Rejection{"tcgen05.ld.sync.aligned.32x32b.x1.f32", "R7", ".f32"},
        Rejection{"tcgen05.st.sync.aligned.32x32b.x1.b64", "R7", ".b64"},
        Rejection{"tcgen05.ld.sync.aligned.32x32b.x1", "R7", "missing type"},
        // R8: sync / aligned
        Rejection{"tcgen05.ld.aligned.32x32b.x1.b32", "R8", ".sync"},
        Rejection{"tcgen05.ld.sync.32x32b.x1.b32", "R8", ".aligned"},
        // syntax
        Rejection{"tcgen05.ld.sync.aligned.32x32b.x1.b32.", "", "empty qualifier"},
        Rejection{"tcgen05.ld.sync.aligned.b32.32x32b.x1", "", "out of order"},
        Rejection{"tcgen05.ld.sync.aligned.32x32b.x1.foo.b32", "", ".foo"},
        Rejection{"", "", "tcgen05"}));

// Each message of the parser word for word, one input per branch of the grammar, so that a change
// to how the qualifiers are read cannot change what users see.
TEST(Opcode, ParseErrorsWordForWord) {
  struct Case {
    const char* text;
    const char* rule;  // tmem::to_string(Error::rule())
    const char* message;
  };
  const Case kCases[] = {
      {"tcgen06.ld.sync.aligned.32x32b.x1.b32", "none",
       "invalid opcode 'tcgen06.ld.sync.aligned.32x32b.x1.b32': expected it to start with "
       "'tcgen05.', got 'tcgen06'"},
      {"tcgen05.", "none",
       "invalid opcode 'tcgen05.': missing the operation after 'tcgen05.'; expected ld or st"},
      {"tcgen05.cp.sync.aligned.32x32b.x1.b32", "R1",
       "invalid opcode 'tcgen05.cp.sync.aligned.32x32b.x1.b32': operation '.cp' is not a TMEM "
       "transfer; expected ld or st (rule R1)"},
      {"tcgen05.st.red.sync.aligned.32x32b.x2.min.f32", "R14",
       "invalid opcode 'tcgen05.st.red.sync.aligned.32x32b.x2.min.f32': tcgen05.st has no '.red'; "
       "the load with reduction is tcgen05.ld.red (rule R14)"},
      {"tcgen05.ld.sync..aligned.32x32b.x1.b32", "none",
       "invalid opcode 'tcgen05.ld.sync..aligned.32x32b.x1.b32': empty qualifier (two dots in a "
       "row or a final dot)"},
      {"tcgen05.ld.sync.aligned.32x32b.x2.min.b32", "R14",
       "invalid opcode 'tcgen05.ld.sync.aligned.32x32b.x2.min.b32': qualifier '.min' belongs to "
       "tcgen05.ld.red (load with reduction); the form is "
       "tcgen05.ld.red.sync.aligned.SHAPE.xN.{min|max}[.abs][.NaN].TYPE (rule R14)"},
      {"tcgen05.ld.sync.aligned.32x32b.x1.xor.b32", "R14",
       "invalid opcode 'tcgen05.ld.sync.aligned.32x32b.x1.xor.b32': qualifier '.xor' belongs to "
       "tcgen05.ld.red (load with reduction); the form is "
       "tcgen05.ld.red.sync.aligned.SHAPE.xN.{min|max}[.abs][.NaN].TYPE (rule R14)"},
      {"tcgen05.ld.red.sync.aligned.32x32b.x2.add.f32", "R14",
       "invalid opcode 'tcgen05.ld.red.sync.aligned.32x32b.x2.add.f32': reduction '.add' is not "
       "allowed; tcgen05.ld.red takes '.min' or '.max' (rule R14)"},
      {"tcgen05.ld.red.sync.aligned.32x32b.x2.max.max.f32", "none",
       "invalid opcode 'tcgen05.ld.red.sync.aligned.32x32b.x2.max.max.f32': qualifier '.max' "
       "appears twice"},
      {"tcgen05.ld.red.sync.aligned.32x32b.x2.max.bf16", "R14",
       "invalid opcode 'tcgen05.ld.red.sync.aligned.32x32b.x2.max.bf16': type '.bf16' is not "
       "allowed; tcgen05.ld.red takes '.f32', '.u32' or '.s32' (rule R14)"},
      {"tcgen05.ld.red.sync.aligned.32x32b.x2.pack::16b.max.f32", "R14",
       "invalid opcode 'tcgen05.ld.red.sync.aligned.32x32b.x2.pack::16b.max.f32': '.pack::16b' is "
       "not allowed on tcgen05.ld.red; it loads 32-bit values without packing (rule R14)"},
      {"tcgen05.ld.sync.sync.aligned.32x32b.x1.b32", "none",
       "invalid opcode 'tcgen05.ld.sync.sync.aligned.32x32b.x1.b32': qualifier '.sync' appears "
       "twice"},
      {"tcgen05.st.sync.aligned.32x32b.x1.pack::16b.b32", "R6",
       "invalid opcode 'tcgen05.st.sync.aligned.32x32b.x1.pack::16b.b32': '.pack::16b' is not "
       "allowed on tcgen05.st; st takes '.unpack::16b' or nothing (rule R6)"},
      {"tcgen05.ld.sync.aligned.32x32b.x1.unpack::16b.b32", "R6",
       "invalid opcode 'tcgen05.ld.sync.aligned.32x32b.x1.unpack::16b.b32': '.unpack::16b' is not "
       "allowed on tcgen05.ld; ld takes '.pack::16b' or nothing (rule R6)"},
      {"tcgen05.st.sync.aligned.32x32b.x1.unpack::32b.b32", "R6",
       "invalid opcode 'tcgen05.st.sync.aligned.32x32b.x1.unpack::32b.b32': unknown packing "
       "'.unpack::32b'; allowed: '.unpack::16b' (rule R6)"},
      {"tcgen05.ld.sync.aligned.32x32b.x1.b8", "R7",
       "invalid opcode 'tcgen05.ld.sync.aligned.32x32b.x1.b8': type '.b8' is not allowed; "
       "tcgen05.ld/st take only '.b32' (rule R7)"},
      {"tcgen05.ld.sync.aligned.32x32b.x1.x2.b32", "none",
       "invalid opcode 'tcgen05.ld.sync.aligned.32x32b.x1.x2.b32': qualifier '.x2' appears twice"},
      {"tcgen05.ld.sync.aligned.32x32b.x6.b32", "R3",
       "invalid opcode 'tcgen05.ld.sync.aligned.32x32b.x6.b32': '.x6' is not a repetition count; "
       "allowed: .x1, .x2, .x4, .x8, .x16, .x32, .x64, .x128 (rule R3)"},
      {"tcgen05.ld.sync.aligned.32x32b.16x64b.x1.b32", "none",
       "invalid opcode 'tcgen05.ld.sync.aligned.32x32b.16x64b.x1.b32': qualifier '.16x64b' appears "
       "twice"},
      {"tcgen05.ld.sync.aligned.128x256b.x1.b32", "R2",
       "invalid opcode 'tcgen05.ld.sync.aligned.128x256b.x1.b32': shape '.128x256b' belongs to "
       "tcgen05.cp, not ld/st; allowed: .32x32b, .16x64b, .16x128b, .16x256b, .16x32bx2 (rule R2)"},
      {"tcgen05.ld.sync.aligned.33x32b.x1.b32", "R2",
       "invalid opcode 'tcgen05.ld.sync.aligned.33x32b.x1.b32': unknown shape '.33x32b'; allowed: "
       ".32x32b, .16x64b, .16x128b, .16x256b, .16x32bx2 (rule R2)"},
      {"tcgen05.st.sync.aligned.32x32b.x1.u64.b32", "none",
       "invalid opcode 'tcgen05.st.sync.aligned.32x32b.x1.u64.b32': unknown qualifier '.u64'; the "
       "form is tcgen05.st.sync.aligned.SHAPE.xN[.unpack::16b].b32"},
      {"tcgen05.ld.aligned.32x32b.x1.b32", "R8",
       "invalid opcode 'tcgen05.ld.aligned.32x32b.x1.b32': missing '.sync' (rule R8)"},
      {"tcgen05.ld.sync.32x32b.x1.b32", "R8",
       "invalid opcode 'tcgen05.ld.sync.32x32b.x1.b32': missing '.aligned'; the PTX ISA requires "
       "it on tcgen05.ld/st even though ptxas 13.0 accepts its absence (rule R8)"},
      {"tcgen05.ld.sync.aligned.x1.b32", "R2",
       "invalid opcode 'tcgen05.ld.sync.aligned.x1.b32': missing shape; allowed: .32x32b, .16x64b, "
       ".16x128b, .16x256b, .16x32bx2 (rule R2)"},
      {"tcgen05.ld.sync.aligned.32x32b.b32", "R3",
       "invalid opcode 'tcgen05.ld.sync.aligned.32x32b.b32': missing repetition count '.xN'; "
       "allowed: .x1, .x2, .x4, .x8, .x16, .x32, .x64, .x128 (rule R3)"},
      {"tcgen05.ld.red.sync.aligned.32x32b.x2.f32", "R14",
       "invalid opcode 'tcgen05.ld.red.sync.aligned.32x32b.x2.f32': missing the reduction '.min' "
       "or '.max' (rule R14)"},
      {"tcgen05.ld.red.sync.aligned.32x32b.x2.min", "R14",
       "invalid opcode 'tcgen05.ld.red.sync.aligned.32x32b.x2.min': missing type '.f32', '.u32' or "
       "'.s32' (rule R14)"},
      {"tcgen05.ld.red.sync.aligned.16x64b.x2.min.f32", "R14",
       "invalid opcode 'tcgen05.ld.red.sync.aligned.16x64b.x2.min.f32': shape '.16x64b' is not "
       "allowed on tcgen05.ld.red; allowed: .32x32b, .16x32bx2 (rule R14)"},
      {"tcgen05.ld.red.sync.aligned.32x32b.x1.min.f32", "R14",
       "invalid opcode 'tcgen05.ld.red.sync.aligned.32x32b.x1.min.f32': '.x1' is not allowed on "
       "tcgen05.ld.red; allowed: .x2 to .x128 (rule R14)"},
      {"tcgen05.ld.red.sync.aligned.32x32b.x2.min.abs.u32", "R14",
       "invalid opcode 'tcgen05.ld.red.sync.aligned.32x32b.x2.min.abs.u32': '.abs' is not allowed "
       "with type '.u32'; '.abs' and '.NaN' take '.f32' only (rule R14)"},
      {"tcgen05.ld.red.sync.aligned.32x32b.min.x2.f32", "none",
       "invalid opcode 'tcgen05.ld.red.sync.aligned.32x32b.min.x2.f32': qualifiers out of order; "
       "the form is "
       "tcgen05.ld.red.sync.aligned.{32x32b|16x32bx2}.xN.{min|max}[.abs][.NaN].{f32|u32|s32}"},
      {"tcgen05.ld.sync.aligned.32x32b.x1", "R7",
       "invalid opcode 'tcgen05.ld.sync.aligned.32x32b.x1': missing type '.b32' (rule R7)"},
      {"tcgen05.ld.sync.aligned.16x256b.x64.b32", "R4",
       "invalid opcode 'tcgen05.ld.sync.aligned.16x256b.x64.b32': '.x64' with shape '.16x256b' "
       "needs 256 registers per thread, above the limit of 128 registers per tcgen05.ld (allowed "
       "for .16x256b: .x1 to .x32) (rule R4)"},
      {"tcgen05.st.sync.aligned.32x32b.b32.x1", "none",
       "invalid opcode 'tcgen05.st.sync.aligned.32x32b.b32.x1': qualifiers out of order; the form "
       "is tcgen05.st.sync.aligned.SHAPE.xN[.unpack::16b].b32"},
  };
  for (const Case& c : kCases) {
    auto op = Opcode::parse(c.text);
    ASSERT_FALSE(op.ok()) << c.text << " was accepted";
    EXPECT_EQ(op.error().code(), tmem::ErrorCode::kOpcode) << c.text;
    EXPECT_STREQ(tmem::to_string(op.error().rule()), c.rule) << c.text;
    EXPECT_EQ(op.error().message(), c.message);
  }
  auto too_long = Opcode::parse(std::string(257, 'x'));
  ASSERT_FALSE(too_long.ok());
  EXPECT_EQ(too_long.error().code(), tmem::ErrorCode::kLimit);
  EXPECT_EQ(too_long.error().message(),
            "opcode text of 257 bytes is longer than 256; a tcgen05.ld/st opcode has at most 53");
}

TEST(Opcode, OperandRulesR5AndR9) {
  auto split = Opcode::parse("tcgen05.ld.sync.aligned.16x32bx2.x4.b32").value();
  EXPECT_FALSE(split.check_operands(4, true).has_value());
  auto missing = split.check_operands(4, false);
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->rule(), tmem::Rule::kSplitOffsetOnlyFor16x32bx2) << missing->message();
  auto plain = Opcode::parse("tcgen05.st.sync.aligned.16x256b.x2.unpack::16b.b32").value();
  EXPECT_FALSE(plain.check_operands(8, false).has_value());
  auto extra_imm = plain.check_operands(8, true);
  ASSERT_TRUE(extra_imm.has_value());
  EXPECT_EQ(extra_imm->rule(), tmem::Rule::kSplitOffsetOnlyFor16x32bx2) << extra_imm->message();
  // Pack does not halve the count (docs/tcgen05-rules.md §Registers).
  auto halved = plain.check_operands(4, false);
  ASSERT_TRUE(halved.has_value());
  EXPECT_EQ(halved->rule(), tmem::Rule::kVectorLengthIsNregs) << halved->message();
  EXPECT_NE(halved->message().find("8 registers"), std::string::npos);
}

TEST(Opcode, MakeRejectsIllegalFields) {
  EXPECT_FALSE(Opcode::make(Direction::kLoad, Shape::k16x256b, 64, false).ok());
  EXPECT_FALSE(Opcode::make(Direction::kLoad, Shape::k32x32b, 3, false).ok());
  EXPECT_FALSE(Opcode::make(Direction::kStore, Shape::k32x32b, 256, false).ok());
  EXPECT_TRUE(Opcode::make(Direction::kStore, Shape::k16x256b, 32, true).ok());
}

// The comparisons are written out (C++17 headers, no defaulted <=>): major first, then minor.
TEST(PtxVersion, OrdersByMajorThenMinor) {
  const tmem::PtxVersion v86{8, 6}, v88{8, 8}, v90{9, 0};
  EXPECT_TRUE(v86 < v88 && v88 < v90 && v86 < v90);
  EXPECT_TRUE(v90 > v88 && v88 >= v86 && v88 >= v88 && v86 <= v86 && v86 <= v90);
  EXPECT_FALSE(v90 < v88 || v88 > v90 || v88 < v88 || v90 <= v88 || v86 >= v88);
  EXPECT_TRUE(v88 == (tmem::PtxVersion{8, 8}) && v88 != v86 && v90 != (tmem::PtxVersion{9, 1}));
  EXPECT_EQ(std::max(v88, v90), v90);
}

}  // namespace
