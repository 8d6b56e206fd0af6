// The text lowering of users' sm_100 PTX to Hopper (kernels/user_emulation.h). UserEmulation
// (label unit): the scanner, each family's rewrite, the refusals.
// UserEmulationCompile (label compile): ptxas is the oracle of completeness: every lowered module,
// spliced with the device library compiled by NVRTC, assembles for the emulation's target; every
// feature the lowering refuses is one ptxas rejects for Hopper and accepts for its Blackwell
// target.
#include "kernels/user_emulation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/elf.h"
#include "kernels/device_function.h"
#include "kernels/emulation_kernels.h"
#include "kernels/emulation_library.h"
#include "runtime/compile/backends.h"
#include "runtime/support/subprocess.h"
#include "tmem/opcode.h"

namespace tmem::kernels {
namespace {

// ---- helpers ------------------------------------------------------------------------------------

std::string input(const std::string& name) {
  auto text =
      read_file(std::string(TMEMJIT_SOURCE_DIR) + "/tests/kernels/emulation_inputs/" + name);
  if (!text) throw text.error();
  return *text;
}

// A kernel named `name` whose body is `body`, with registers of every width declared.
std::string kernel(const std::string& name, const std::string& body) {
  return "\n.visible .entry " + name +
         "(.param .u64 out)\n{\n"
         "\t.reg .pred %p<4>;\n\t.reg .b8 %c<4>;\n\t.reg .b16 %rs<4>;\n\t.reg .b32 %r<300>;\n"
         "\t.reg .f32 %f<16>;\n\t.reg .b64 %rd<16>;\n\t.reg .b128 %rq<2>;\n" +
         body + "\n\tret;\n}\n";
}

std::string header(const std::string& target, const std::string& version) {
  return ".version " + version + "\n.target " + target + "\n.address_size 64\n";
}

// A module with one kernel (its body on line 14 on).
std::string module(const std::string& body, const std::string& target = "sm_100a",
                   const std::string& version = "8.8") {
  return header(target, version) + kernel("k", body);
}

UserLowering lower(const std::string& ptx) {
  auto lowered = lower_user_ptx(ptx, "k.ptx");
  if (!lowered) throw lowered.error();
  return std::move(lowered).value();
}

Error refusal(const std::string& ptx) {
  auto lowered = lower_user_ptx(ptx, "k.ptx");
  if (lowered) throw std::runtime_error("lowered, expected an error:\n" + ptx);
  return std::move(lowered).error();
}

// The .target the lowering writes (the emulation's: sm_90 or sm_90a), read from its output.
std::string emulation_target() {
  const std::string ptx = lower(module("")).ptx;
  const size_t at = ptx.find(".target ") + 8;
  return ptx.substr(at, ptx.find('\n', at) - at);
}

int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

int family(const UserLowering& l, const std::string& name) {
  for (const auto& [f, n] : l.families)
    if (f == name) return n;
  return 0;
}

// Line `n` (1-based) of `text`.
std::string line(const std::string& text, size_t n) {
  std::stringstream lines(text);
  std::string out;
  for (size_t i = 0; i < n && std::getline(lines, out);) ++i;
  return out;
}

// ---- the scanner and the header -----------------------------------------------------------------

TEST(UserEmulation, AModuleWithoutTcgen05PassesThroughRetargeted) {
  const std::string ptx = module("\tmov.u32 %r1, %tid.x;\n\tadd.s32 %r2, %r1, 1;");
  const UserLowering l = lower(ptx);
  EXPECT_FALSE(l.changed);
  EXPECT_TRUE(l.families.empty());
  EXPECT_TRUE(l.instructions.empty());
  EXPECT_TRUE(l.library_source.empty());
  std::string expected = ptx;
  expected.replace(expected.find("sm_100a"), 7, emulation_target());
  EXPECT_EQ(l.ptx, expected);
}

TEST(UserEmulation, EveryTargetBecomesTheEmulationTarget) {
  for (const char* target :
       {"sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f", "sm_101a", "sm_90a"}) {
    const UserLowering l = lower(module("\ttcgen05.fence::before_thread_sync;", target));
    EXPECT_NE(l.ptx.find(".target " + emulation_target() + "\n"), std::string::npos) << target;
    if (target != emulation_target()) {
      EXPECT_EQ(l.ptx.find(target), std::string::npos);
    }
  }
}

TEST(UserEmulation, AVersionAbove90IsLoweredTo90WithANote) {
  const UserLowering newer = lower(module("", "sm_100a", "9.4"));
  EXPECT_NE(newer.ptx.find(".version 9.0\n"), std::string::npos);
  ASSERT_EQ(newer.notes.size(), 2u);
  EXPECT_NE(newer.notes[0].find(".version 9.4 lowered to 9.0"), std::string::npos);
  EXPECT_EQ(newer.notes[1], "the .target sm_100a became " + emulation_target());
  for (const char* kept : {"8.6", "8.8", "9.0"})
    EXPECT_NE(lower(module("", "sm_100a", kept)).ptx.find(std::string(".version ") + kept + "\n"),
              std::string::npos);
}

// Comments, several statements on a line, a statement over several lines, labels, a '{' block:
// each lowered statement stays on its lines, so ptxas's line numbers are the user's.
TEST(UserEmulation, StatementsAreFoundAnywhereAndTheUsersLinesAreKept) {
  const std::string ptx = module(
      "\tmov.u32 %r1, 0; tcgen05.wait::ld.sync.aligned; /* two; on a line */ "
      "tcgen05.fence::before_thread_sync;\n"
      "\ttcgen05.ld.sync.aligned.32x32b.x2.b32\n"
      "\t\t{%r2,   // first; with a comment\n"
      "\t\t %r3},  /* second */\n"
      "\t\t[%r1];\n"
      "$L1: { .reg .pred q; setp.eq.u32 q, %r2, 0; @q tcgen05.wait::st.sync.aligned; }\n"
      "\t// tcgen05.mma.cta_group::1.kind::f16 in a comment is no statement;\n"
      "\tmov.u32 %r4, %r3;");
  const UserLowering l = lower(ptx);
  EXPECT_EQ(count(l.ptx, "\n"), count(ptx, "\n"));
  EXPECT_EQ(family(l, "tcgen05.wait"), 2);
  EXPECT_EQ(family(l, "tcgen05.fence"), 1);
  EXPECT_EQ(family(l, "tcgen05.ld"), 1);
  EXPECT_EQ(family(l, "tcgen05.mma"), 0);
  const size_t last = static_cast<size_t>(count(ptx, "\n")) - 2;  // "mov.u32 %r4, %r3;"
  EXPECT_EQ(line(l.ptx, last), line(ptx, last));
  EXPECT_NE(line(l.ptx, 15).find("tmemjit_emu_ld_32x32b_x2"), std::string::npos) << l.ptx;
  EXPECT_NE(line(l.ptx, 19).find("$L1:"), std::string::npos);
  EXPECT_EQ(l.ptx.find("tcgen05.ld.sync"), l.ptx.find("tcgen05.ld.sync.aligned.32x32b.x2.b32 */"))
      << "the original statement survives only in the replacement's comment";
}

TEST(UserEmulation, RegistersAreKnownInTheirScopeIncludingFunctionParameters) {
  const std::string ptx = header("sm_100a", "8.8") +
                          ".func (.reg .b32 r) f(.reg .b64 bar, .reg .b16 mask)\n{\n"
                          "\ttcgen05.commit.cta_group::2.mbarrier::arrive::one.multicast::cluster."
                          "b64 [bar], mask;\n\tmov.u32 r, 0;\n\tret;\n}\n";
  const UserLowering l = lower(ptx);
  EXPECT_NE(l.ptx.find("cvt.u32.u16 %tmemjit_u0, mask; st.param.b64 [tmemjit_p0], bar;"),
            std::string::npos)
      << l.ptx;
  // A block's declarations end with it: %x is a 64-bit register only inside the first block.
  const Error e = refusal(
      module("	{ .reg .b64 %x; tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 [%x]; }\n"
             "	tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 [%x];"));
  EXPECT_NE(e.message().find("line 15"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("register %x has no .reg declaration in scope"), std::string::npos);
}

// A replacement keeps what follows it on the line (a statement, a guard's label).
TEST(UserEmulation, AReplacementLeavesTheRestOfItsLineAlone) {
  for (const char* statement :
       {"setmaxnreg.inc.sync.aligned.u32 232;", "tcgen05.fence::after_thread_sync;",
        "add.rn.f32x2 %rd1, %rd2, %rd3;"}) {
    const UserLowering l = lower(module("\t" + std::string(statement) + " mov.u32 %r9, 7;\n" +
                                        "\t@%p1 " + statement + " $L_after: mov.u32 %r8, 6;"));
    EXPECT_NE(line(l.ptx, 14).find(" mov.u32 %r9, 7;"), std::string::npos) << l.ptx;
    EXPECT_EQ(line(l.ptx, 14).find("//"), std::string::npos) << l.ptx;
    EXPECT_NE(line(l.ptx, 15).find(" $tmemjit_skip_0: $L_after: mov.u32 %r8, 6;"),
              std::string::npos)
        << l.ptx;
    EXPECT_EQ(l.instructions.size(), 2u) << statement;
  }
}

TEST(UserEmulation, GuardedStatementsStayGuardedWithUniqueLabels) {
  const UserLowering l = lower(
      module("\t@%p1 tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r1];\n"
             "\t@!%p2 tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r2}, [%r1];\n"
             "\t@%p1 add.rn.f32x2 %rd1, %rd2, %rd3;"));
  EXPECT_NE(l.ptx.find("@!%p1 bra $tmemjit_skip_0; { "), std::string::npos) << l.ptx;
  EXPECT_NE(l.ptx.find("} $tmemjit_skip_0:"), std::string::npos);
  EXPECT_NE(l.ptx.find("@%p2 bra $tmemjit_skip_1; { "), std::string::npos);
  EXPECT_NE(l.ptx.find("@!%p1 bra $tmemjit_skip_2; { "), std::string::npos);
  EXPECT_EQ(count(l.ptx, "$tmemjit_skip_1:"), 1);
}

TEST(UserEmulation, EachLoweredStatementHasAnIdNamingItAndItsLine) {
  const UserLowering l = lower(module(
      "\ttcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 128;\n"
      "\ttcgen05.ld.sync.aligned.16x256b.x2.b32 {%r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9}, [%r1];\n"
      "\ttcgen05.dealloc.cta_group::1.sync.aligned.b32 %r1, 128;"));
  ASSERT_EQ(l.instructions.size(), 3u);
  EXPECT_EQ(l.instructions[0],
            "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 (PTX line 14)");
  EXPECT_EQ(l.instructions[1], "tcgen05.ld.sync.aligned.16x256b.x2.b32 (PTX line 15)");
  // The id reaches the library: the last argument of alloc, ld and dealloc.
  EXPECT_NE(l.ptx.find("st.param.b32 [tmemjit_p3], 1; call tmemjit_emu_alloc"), std::string::npos);
  EXPECT_NE(
      l.ptx.find("st.param.b32 [tmemjit_p1], 2; call (tmemjit_a2), tmemjit_emu_ld_16x256b_x2"),
      std::string::npos);
  EXPECT_NE(l.ptx.find("st.param.b32 [tmemjit_p3], 3; call tmemjit_emu_dealloc"),
            std::string::npos);
  EXPECT_TRUE(l.changed);
}

TEST(UserEmulation, IdsCanStartAfterThoseOfOtherGeneratedCode) {
  auto l = lower_user_ptx(module("\ttcgen05.dealloc.cta_group::1.sync.aligned.b32 %r1, 128;"),
                          "k.ptx", 100);
  ASSERT_TRUE(l.ok()) << l.error().message();
  EXPECT_NE(l->ptx.find("st.param.b32 [tmemjit_p3], 100; call tmemjit_emu_dealloc"),
            std::string::npos);
  EXPECT_EQ(lower_user_ptx(module(""), "k.ptx", 0).error().code(), ErrorCode::kLimit);
  EXPECT_EQ(lower_user_ptx(module("\ttcgen05.fence::before_thread_sync;"), "k.ptx", 1u << 24)
                .error()
                .code(),
            ErrorCode::kLimit);
}

TEST(UserEmulation, FamiliesAreCountedInTheirOrder) {
  const UserLowering l = lower(input("one_cta.ptx"));
  const std::vector<std::pair<std::string, int>> expected = {
      {"tcgen05.alloc", 2}, {"tcgen05.dealloc", 1}, {"tcgen05.relinquish_alloc_permit", 1},
      {"tcgen05.ld", 2},    {"tcgen05.st", 1},      {"tcgen05.wait", 3},
      {"tcgen05.fence", 5}, {"tcgen05.mma", 9},     {"tcgen05.commit", 2},
      {"tcgen05.cp", 6},    {"tcgen05.shift", 1},   {"mbarrier wait (helps the MMA queue)", 1}};
  EXPECT_EQ(l.families, expected);
  EXPECT_EQ(l.instructions.size(), 34u);
}

// The MMA queue (kernels/emu/tcgen05_emulation.cuh): a module that issues MMAs has each mbarrier
// wait help compute them; the wait itself, its guard and its label stay as they are.
TEST(UserEmulation, TheWaitsOfAModuleWithMmasHelpComputeThem) {
  const UserLowering l = lower(input("one_cta.ptx"));
  EXPECT_NE(l.ptx.find("WAIT: { call tmemjit_emu_help, (); } mbarrier.try_wait.parity.shared::cta"
                       ".b64 done, [%r45], 0;"),
            std::string::npos);
  const std::string waits =
      "\tmbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], 0;\n"
      "\t@%p2 mbarrier.test_wait.shared::cta.b64 %p3, [%r1], %rd1;\n";
  const std::string mma = "\ttcgen05.mma.cta_group::1.kind::f16 [%r2], %rd2, %rd3, %r3, %p1;\n";
  const UserLowering with_mma = lower(module(waits + mma));
  EXPECT_NE(with_mma.ptx.find("{ call tmemjit_emu_help, (); } mbarrier.try_wait"),
            std::string::npos);
  EXPECT_NE(with_mma.ptx.find("{ call tmemjit_emu_help, (); } @%p2 mbarrier.test_wait"),
            std::string::npos);
  // Without an MMA there is nothing to help with: the waits pass through.
  const UserLowering without = lower(module(waits));
  EXPECT_EQ(without.ptx.find("tmemjit_emu_help"), std::string::npos);
  EXPECT_FALSE(without.changed);
}

// The device library's status stride is the host's: the host zeroes and reads that many words per
// CTA, the library keeps its header and MMA queue inside them.
TEST(UserEmulation, TheLibrarysStatusWordsAreTheHosts) {
  auto text = read_file(std::string(TMEMJIT_SOURCE_DIR) + "/kernels/emu/tcgen05_emulation.cuh");
  ASSERT_TRUE(text.ok());
  const std::string key = "kStatusWords = 2048 + 16 + 544,";
  EXPECT_NE(text->find(key), std::string::npos) << "update this test with the library's layout";
  EXPECT_EQ(kEmuUserStatusWords, 2048u + 16u + 544u);
  EXPECT_EQ(kEmuStatusWords + kEmuHeaderWords, 2064u);  // the library's kQueueWord
  EXPECT_NE(text->find("kQueueWord = 2064,"), std::string::npos);
}

TEST(UserEmulation, EqualInputGivesEqualOutput) {
  for (const char* name : {"one_cta.ptx", "cta_pair.ptx", "packed_guarded.ptx"}) {
    const UserLowering a = lower(input(name)), b = lower(input(name));
    EXPECT_EQ(a.ptx, b.ptx) << name;
    EXPECT_EQ(a.library_source, b.library_source) << name;
  }
}

// ---- operands (ABI.md §Calling convention) ------------------------------------------------------

TEST(UserEmulation, OperandsAreConvertedAsTheAbiSays) {
  const UserLowering l = lower(module(
      // a 32-bit barrier address widened, a 16-bit cta mask to u32
      "\ttcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 "
      "[%r1], %rs1;\n"
      // a generic 64-bit address becomes the .shared::cta address
      "\ttcgen05.alloc.cta_group::2.sync.aligned.b32 [%rd1], 32;\n"
      // a negated predicate and A in TMEM: flags 2 | f16 | A in TMEM (64), +128 when D accumulates
      "\ttcgen05.mma.cta_group::2.kind::f16 [%r2+16], [%r3], %rd2, 0x08100490, !%p1;\n"
      // immHalfSplitoff is taken modulo 2^32, as ptxas encodes it
      "\ttcgen05.ld.sync.aligned.16x32bx2.x1.b32 {%r4}, [%r5], 4294967312;"));
  EXPECT_NE(l.ptx.find("cvt.u64.u32 %tmemjit_w0, %r1; cvt.u32.u16 %tmemjit_u0, %rs1; "
                       "st.param.b64 [tmemjit_p0], %tmemjit_w0; st.param.b32 [tmemjit_p1], 14;"),
            std::string::npos)
      << l.ptx;
  EXPECT_NE(
      l.ptx.find("cvta.to.shared.u64 %tmemjit_w0, %rd1; cvt.u32.u64 %tmemjit_u0, %tmemjit_w0;"),
      std::string::npos);
  EXPECT_NE(l.ptx.find("selp.u32 %tmemjit_u1, 66, 194, %p1;"), std::string::npos);
  EXPECT_NE(l.ptx.find("add.s32 %tmemjit_u0, %r2, 16;"), std::string::npos);
  EXPECT_NE(l.ptx.find("st.param.b32 [tmemjit_p1], 16; st.param.b32 [tmemjit_p2], 4;"),
            std::string::npos);
}

TEST(UserEmulation, DisableOutputLaneIsCheckedAtRunTime) {
  const UserLowering l = lower(module(
      "\ttcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, {%r3, %r3, %r4, %r4}, %p1;"));
  EXPECT_NE(l.ptx.find("or.b32 %tmemjit_u1, %r3, %r4; setp.ne.u32 %tmemjit_q0, %tmemjit_u1, 0;"),
            std::string::npos)
      << l.ptx;
  EXPECT_NE(l.ptx.find("@%tmemjit_q0 call tmemjit_emu_unsupported"), std::string::npos);
  EXPECT_NE(l.ptx.find("@!%tmemjit_q0 call tmemjit_emu_mma"), std::string::npos);
  EXPECT_NE(l.library_source.find("tmemjit::emu::record(13u, id, what);"), std::string::npos);
}

TEST(UserEmulation, TheLibraryHasOneFunctionPerTransferForm) {
  const UserLowering l = lower(module(
      "\ttcgen05.ld.sync.aligned.32x32b.x2.b32 {%r2, %r3}, [%r1];\n"
      "\ttcgen05.ld.aligned.sync.32x32b.x2.b32 {%r4, %r5}, [%r1];\n"  // ptxas's other order
      "\ttcgen05.st.sync.aligned.16x64b.x4.unpack::16b.b32 [%r1], {%r2, %r3, %r4, %r5};\n"
      "\ttcgen05.ld.sync.aligned.16x32bx2.x2.pack::16b.b32 {%r2, %r3}, [%r1], 4;\n"
      "\ttcgen05.ld.sync.32x32b.x2.b32 {%r2, %r3}, [%r1];"));  // ptxas takes it without .aligned
  EXPECT_EQ(count(l.library_source, "__noinline__"), 3) << l.library_source;
  EXPECT_EQ(count(l.ptx, "tmemjit_emu_ld_32x32b_x2,"), 3);
  ASSERT_EQ(l.notes.size(), 2u);
  EXPECT_NE(l.notes[1].find("line 18: tcgen05.ld.sync.32x32b.x2.b32 lacks .aligned"),
            std::string::npos)
      << l.notes[1];
  EXPECT_NE(l.library_source.find("tmemjit_emu_st_16x64b_x4_unpack_16b(unsigned int taddr, "
                                  "tmemjit_emu_u32x4 v, unsigned int id)"),
            std::string::npos);
  EXPECT_NE(l.library_source.find("tmemjit_emu_ld_16x32bx2_x2_pack_16b(unsigned int taddr, "
                                  "unsigned int imm, unsigned int id)"),
            std::string::npos);
  EXPECT_NE(l.library_source.find("tmemjit::emu::resolve(id, a_, 16u, 4u)"), std::string::npos)
      << "16x32bx2.x2 with pack: 16 lanes, 4 columns per access";
}

// ---- refusals -----------------------------------------------------------------------------------

struct Refused {
  const char* statement;
  const char* why;  // a part of the message
};

// Well-formed statements of Blackwell targets that the lowering refuses (UserEmulationCompile
// checks that ptxas accepts each for sm_100a and rejects it for sm_90a).
const std::vector<Refused>& refused_statements() {
  static const std::vector<Refused> kRefused = {
      {"tcgen05.mma.ws.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %p1;", "(.ws)"},
      {"tcgen05.mma.sp.cta_group::1.kind::f16 [%r1], %rd1, %rd2, [%r3], %r2, %p1;", "(.sp)"},
      {"tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale [%r1], %rd1, %rd2, %r2, [%r3], [%r4], "
       "%p1;",
       "block-scaled"},
      {"tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X [%r1], %rd1, %rd2, %r2, "
       "[%r3], [%r4], %p1;",
       "block-scaled"},
      {"tcgen05.mma.cta_group::1.kind::f16.collector::a::use [%r1], %rd1, %rd2, %r2, %p1;",
       "collector"},
      {"tcgen05.mma.cta_group::1.kind::f16.collector::a::lastuse [%r1], %rd1, %rd2, %r2, %p1;",
       "collector"},
      {"tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %p1, 3;", "scale-input-d 3"},
      {"tcgen05.mma.cta_group::1.kind::f16.ashift [%r1], [%r3], %rd2, %r2, %p1;", ".ashift"},
      {"tcgen05.cp.cta_group::1.128x256b.b8x16.b6x16_p32 [%r1], %rd1;", "decompression"},
      {"tcgen05.cp.cta_group::1.32x128b.warpx4.b8x16.b4x16_p64 [%r1], %rd1;", "decompression"},
      {"ld.global.v8.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, [%rd1];", "256-bit"},
      {"ld.global.v4.b64 {%rd1, %rd2, %rd3, %rd4}, [%rd5];", "256-bit"},
      {"st.global.v8.b32 [%rd1], {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8};", "256-bit"},
      {"st.bulk.weak.shared::cta [%r1], 128, 0;", "st.bulk"},
      {"add.rn.f32.f16 %f1, %rs1, %f2;", "add.f32.f16"},
      {"fma.rn.f32.bf16 %f1, %rs1, %rs2, %f2;", "fma.f32.bf16"},
      {"redux.sync.max.f32 %f1, %f2, 0xffffffff;", "redux.sync"},
      {"cvt.rz.satfinite.ue8m0x2.f32 %rs1, %f1, %f2;", "ue8m0"},
      {"cvt.rn.satfinite.e2m1x2.f32 %c1, %f1, %f2;", "fp4"},
      {"cvt.rn.satfinite.e3m2x2.f32 %rs1, %f1, %f2;", "fp6"},
      {"cvt.rs.satfinite.e4m3x4.f32 %r1, {%f1, %f2, %f3, %f4}, %r2;", "cvt.rs"},
      {"cp.async.bulk.tensor.2d.shared::cta.global.tile::gather4.mbarrier::complete_tx::bytes "
       "[%r1], [%rd1, {%r2, %r3, %r4, %r5, %r6}], [%r7];",
       "gather4"},
      {"cp.async.bulk.global.shared::cta.bulk_group.cp_mask [%rd1], [%r1], 128, %rs1;", ".cp_mask"},
  };
  return kRefused;
}

// Standalone (docs/emulation.md §Standalone modules): each .entry that uses tcgen05, itself or
// through a function it calls, calls tmemjit_emu_standalone_enter first; a .func does not, nor an
// entry that uses none (measured on an H100: Thrust's kernels beside CuTe's tutorial 01 trapped
// on the bound of N CTAs), nor a module without tcgen05.
TEST(UserEmulation, AStandaloneModulesKernelsClearTheirStateFirst) {
  const std::string text =
      ".version 8.8\n.target sm_100a\n.address_size 64\n"
      ".func helper()\n{\n\ttcgen05.fence::after_thread_sync;\n\tret;\n}\n"
      ".visible .entry first(.param .u64 p)\n.maxntid 128, 1, 1\n{\n\t.reg .b32 %r<4>;\n"
      "\ttcgen05.fence::before_thread_sync;\n\tret;\n}\n"
      ".visible .entry second()\n{\n\tcall.uni helper;\n\tret;\n}\n"
      ".visible .entry third()\n{\n\tret;\n}\n";
  auto l = lower_user_ptx(text, "k.ptx", 1, /*standalone=*/true);
  ASSERT_TRUE(l.ok()) << l.error().full_text();
  const std::string& p = l->ptx;
  const std::string call = "{ call tmemjit_emu_standalone_enter, (); }";
  const size_t first = p.find(call);
  ASSERT_NE(first, std::string::npos) << p;
  EXPECT_GT(first, p.find(".maxntid 128, 1, 1\n{")) << "inside the entry's body:\n" << p;
  EXPECT_LT(first, p.find(".reg .b32 %r<4>")) << "before its first statement:\n" << p;
  const size_t second = p.find(call, first + 1);
  EXPECT_GT(second, p.find(".entry second()")) << "the second entry, through helper:\n" << p;
  EXPECT_EQ(p.find(call, second + 1), std::string::npos)
      << "not the third, which uses no emulated state (as Thrust's kernels beside a tutorial's):\n"
      << p;
  EXPECT_LT(p.find("helper()\n{\n"), first) << "not the .func:\n" << p;
  EXPECT_EQ(std::count(p.begin(), p.end(), '\n'), std::count(text.begin(), text.end(), '\n'))
      << "the user's lines stay where they were";
  bool counted = false;
  for (const auto& [family, n] : l->families)
    counted |= family == "kernel entry (clears the standalone state)" && n == 2;
  EXPECT_TRUE(counted);
  // Nothing to clear without tcgen05: the module is only retargeted.
  auto none = lower_user_ptx(
      ".version 8.8\n.target sm_100a\n.address_size 64\n"
      ".visible .entry k()\n{\n\tret;\n}\n",
      "k.ptx", 1, true);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->ptx.find("standalone"), std::string::npos) << none->ptx;
  EXPECT_FALSE(none->changed);
}

// TMA .cta_group::2 .multicast::cluster (docs/emulation.md §TMA .cta_group::2): the box into this
// CTA alone on the shadow barrier (no mask, the cache hint kept), then the library's end copies it
// to the mask's other CTAs and completes each one's bytes on its pair's barrier.
TEST(UserEmulation, APairMulticastTmaLandsHereThenTheLibraryCopiesAndCompletesIt) {
  const std::string tma =
      "cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global"
      ".mbarrier::complete_tx::bytes";
  const UserLowering l = lower(module("	" + tma +
                                      ".multicast::cluster.L2::cache_hint [%r1], [%rd1, {%r2, "
                                      "%r3}], [%r7], %rs1, %rd2;"));
  ASSERT_EQ(l.families.size(), 1u);
  EXPECT_EQ(l.families[0].first, "cp.async.bulk.tensor");
  const std::string& p = l.ptx;
  const size_t begin = p.find("call (tmemjit_r0), tmemjit_emu_tma_multicast_begin, (");
  const size_t load = p.find(
      "cp.async.bulk.tensor.2d.shared::cluster.global"
      ".mbarrier::complete_tx::bytes.L2::cache_hint [%r1], [%rd1, {%r2, "
      "%r3}], [%tmemjit_u1], %rd2;");
  const size_t end = p.find("call tmemjit_emu_tma_multicast_end, (");
  ASSERT_NE(begin, std::string::npos) << p;
  ASSERT_NE(load, std::string::npos) << "one load, into this CTA, on the shadow:\n" << p;
  ASSERT_NE(end, std::string::npos) << p;
  EXPECT_LT(begin, load);
  EXPECT_LT(load, end);
  EXPECT_NE(p.find("cvt.u32.u16 %tmemjit_u0, %rs1;"), std::string::npos) << "the 16-bit mask";
  EXPECT_EQ(p.find(".multicast::cluster.L2"), p.rfind(".multicast::cluster.L2"))
      << "only the statement's comment keeps the multicast:\n"
      << p;
  // Without a mask operand it is no multicast load: refused, naming what is expected.
  const Error e =
      refusal(module("	" + tma + ".multicast::cluster [%r1], [%rd1, {%r2, %r3}], [%r7];"));
  EXPECT_NE(e.message().find("ctaMask"), std::string::npos) << e.message();
}

// TMA .cta_group::2 (docs/emulation.md §TMA .cta_group::2): the plain TMA when the barrier is
// this CTA's, else the same TMA into the shadow barrier between the library's begin and end.
TEST(UserEmulation, APairTmaGoesThroughTheShadowBarrierWhenItsBarrierIsThePeers) {
  const std::string tma =
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes";
  const UserLowering l =
      lower(module("	" + tma + ".cta_group::2 [%r1], [%rd1, {%r2, %r3}], [%r7];"));
  ASSERT_EQ(l.families.size(), 1u);
  EXPECT_EQ(l.families[0].first, "cp.async.bulk.tensor");
  EXPECT_NE(l.ptx.find("getctarank.shared::cluster.u32 %tmemjit_u0, %r7; "
                       "mov.u32 %tmemjit_u1, %cluster_ctarank; "
                       "setp.eq.u32 %tmemjit_q0, %tmemjit_u0, %tmemjit_u1; "
                       "@%tmemjit_q0 " +
                       tma + " [%r1], [%rd1, {%r2, %r3}], [%r7];"),
            std::string::npos)
      << l.ptx;
  EXPECT_NE(l.ptx.find("call (tmemjit_r0), tmemjit_emu_tma_peer_begin, (tmemjit_p0, tmemjit_p1)"),
            std::string::npos)
      << l.ptx;
  EXPECT_NE(l.ptx.find("@!%tmemjit_q0 " + tma + " [%r1], [%rd1, {%r2, %r3}], [%tmemjit_u2];"),
            std::string::npos)
      << l.ptx;
  EXPECT_NE(l.ptx.find("@!%tmemjit_q0 call tmemjit_emu_tma_peer_end"), std::string::npos) << l.ptx;
  EXPECT_EQ(l.ptx.find(".cta_group::2 ["), std::string::npos) << l.ptx;  // but in its comment

  // A kernel parameter as the map: its .param address, made generic.
  const std::string by_name =
      ".version 8.8\n.target sm_100a\n.address_size 64\n"
      ".visible .entry k(.param .align 64 .b8 tmap[128])\n{\n"
      "\t.reg .b32 %r<8>;\n\t" +
      tma + ".cta_group::2 [%r1], [tmap, {%r2, %r3}], [%r7];\n\tret;\n}\n";
  const UserLowering named = lower(by_name);
  EXPECT_NE(named.ptx.find("mov.u64 %tmemjit_w0, tmap; cvta.param.u64 %tmemjit_w1, %tmemjit_w0;"),
            std::string::npos)
      << named.ptx;
  // Anything else is refused with the reason.
  const Error e = refusal(
      ".version 8.8\n.target sm_100a\n.address_size 64\n"
      ".global .align 64 .b8 somewhere[128];\n"
      ".visible .entry k()\n{\n\t.reg .b32 %r<8>;\n\t" +
      tma + ".cta_group::2 [%r1], [somewhere, {%r2, %r3}], [%r7];\n\tret;\n}\n");
  EXPECT_NE(e.message().find("neither a register nor a parameter of the kernel"), std::string::npos)
      << e.message();
}

TEST(UserEmulation, RefusedFormsNameTheStatementItsLineAndWhy) {
  for (const Refused& r : refused_statements()) {
    const Error e = refusal(module("\tmov.u32 %r1, 0;\n\t" + std::string(r.statement)));
    EXPECT_EQ(e.code(), ErrorCode::kUsage) << r.statement;
    EXPECT_NE(e.message().find("k.ptx, line 15: '"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find(std::string(r.statement).substr(0, 20)), std::string::npos)
        << e.message();
    EXPECT_NE(e.message().find(r.why), std::string::npos) << e.message();
    EXPECT_EQ(e.detail("line"), "15");
  }
}

TEST(UserEmulation, AnUnknownSm100InstructionIsAnErrorNamingIt) {
  for (const char* statement :
       {"tcgen05.frobnicate.cta_group::1 [%r1];", "clusterlaunchcontrol.cancel_all.b128 [%r1];",
        "tcgen05.commit.cta_group::1.mbarrier::arrive::two.b64 [%rd1];",
        "tcgen05.ld.sync.aligned.32x32b.x3.b32 {%r1, %r2, %r3}, [%r4];", "neg.f32x2 %rd1, %rd2;"}) {
    const Error e = refusal(module("\n\n\t" + std::string(statement)));
    EXPECT_EQ(e.code(), ErrorCode::kUsage);
    EXPECT_NE(e.message().find("line 16"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find(std::string(statement).substr(0, 12)), std::string::npos)
        << e.message();
  }
}

TEST(UserEmulation, OperandsTheFormDoesNotTakeAreErrors) {
  for (const char* statement :
       {"tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1}, [%r4];",    // R5: 2 registers
        "tcgen05.ld.sync.aligned.16x32bx2.x1.b32 {%r1}, [%r4];",  // R9: the immediate
        "tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 [%undeclared];",
        "tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r1;",
        "add.rn.f32x2 %rd1, %r2, %rd3;"}) {  // a 32-bit register
    const Error e = refusal(module("\t" + std::string(statement)));
    EXPECT_EQ(e.code(), ErrorCode::kUsage) << statement;
    EXPECT_NE(e.message().find("line 14"), std::string::npos) << e.message();
  }
}

TEST(UserEmulation, TextThatIsNotPtxIsAParseErrorNamingTheLine) {
  const std::string head =
      ".version 8.8\n.target sm_100a\n.address_size 64\n.visible .entry k()\n{\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {head + "\tmov.u32 %r1, 0\n}\n",
       "line 6: statement 'mov.u32 %r1, 0' is not terminated by "
       "';' before '}'"},
      {head + "\tret;\n}\n}\n", "line 8: '}' without '{'"},
      {head + "\tret", "line 6: statement 'ret' is not terminated by ';'"},
      {head + "\t.pragma \"nounroll;\n\tret;\n}\n", "line 6: unterminated string"},
      {head + "\tret;\n", "the module ends inside a block"},
      {".version 8.8\n.address_size 64\n", "no .target"},
      {head + "\tret; /* never closed\n}\n", "line 6: unterminated /* comment"},
  };
  for (const auto& [ptx, why] : cases) {
    auto lowered = lower_user_ptx(ptx, "k.ptx");
    ASSERT_FALSE(lowered.ok()) << ptx;
    EXPECT_EQ(lowered.error().code(), ErrorCode::kParse) << lowered.error().message();
    EXPECT_NE(lowered.error().message().find(why), std::string::npos) << lowered.error().message();
  }
}

// ---- speed --------------------------------------------------------------------------------------

// A DeepGEMM-sized module (DeepGEMM's kernels have ~100 rejected statements in ~1 MB of PTX):
// 2,000 tcgen05 statements among 60,000 others, 3.5 MB.
std::string big_module() {
  std::string body;
  for (int i = 0; i < 500; ++i) {
    for (int j = 0; j < 30; ++j)
      body += "\tadd.s32 %r" + std::to_string(j) + ", %r" + std::to_string(j + 1) +
              ", 1;\n\tld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd" + std::to_string(j % 8) +
              "+16];\n";
    body +=
        "\t@%p1 tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %p2;\n"
        "\ttcgen05.ld.sync.aligned.32x32b.x16.b32 {%r10, %r11, %r12, %r13, %r14, %r15, %r16, "
        "%r17, %r18, %r19, %r20, %r21, %r22, %r23, %r24, %r25}, [%r3];\n"
        "\ttcgen05.wait::ld.sync.aligned;\n"
        "\t@%p1 tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r4];\n";
  }
  return module(body);
}

// A DeepGEMM-sized module: every statement lowered once, in order. Its time is measured in
// bench/emulation_bench.cc, not here (docs/benchmarks.md).
TEST(UserEmulation, TwoThousandStatementsAmongSixtyThousandLowerOnce) {
  const UserLowering l = lower(big_module());
  ASSERT_EQ(l.instructions.size(), 2000u);
}

// ---- compile: ptxas as the oracle ---------------------------------------------------------------

class UserEmulationCompile : public ::testing::Test {
 protected:
  void SetUp() override {
    auto version = run_process({ptxas_path(), "--version"});
    if (!version || version->exit_code != 0) GTEST_SKIP() << "ptxas is not runnable here";
    auto dir = ScratchDir::create("tmemjit_user_emulation");
    if (!dir) GTEST_SKIP() << dir.error().message();
    dir_.emplace(std::move(*dir));
  }

  // The device library as compile_kernel and emulate_ptx build it (kernels/emulation_library.h):
  // the sm_90 lifecycle, the hand-written families, the generated functions; NVRTC, relocatable.
  std::string library_ptx(const UserLowering& l) {
    const EmulationLibrarySource library = emulation_library_source(l.library_source);
    CompileOptions options;
    options.target = Target::kSm90;
    auto ptx =
        compile_cuda_front_end(library.text, "tmemjit_emulation.cu", library.headers,
                               {"--std=c++17"}, {}, options, FrontEndOutput::kRelocatablePtx);
    if (!ptx) throw ptx.error();
    return std::string(ptx->output.begin(), ptx->output.end());
  }

  // ptxas's verdict on `ptx` for `arch`: empty when it assembles, else its log.
  std::string ptxas(const std::string& ptx, const std::string& arch) {
    const std::string file = dir_->file("k_" + std::to_string(files_++) + ".ptx");
    if (auto written = write_file(file, ptx); !written) throw written.error();
    auto run = run_process({ptxas_path(), "-arch=" + arch, file, "-o", dir_->file("k.cubin")});
    if (!run) throw run.error();
    return run->exit_code == 0 ? std::string()
                               : run->output + "(exit " + std::to_string(run->exit_code) + ")";
  }

  // Lowers `ptx`, which must be valid for `arch`, splices the library and assembles for the
  // emulation's target.
  void lowers_and_assembles(const std::string& ptx, const std::string& arch,
                            const std::string& what) {
    ASSERT_EQ(ptxas(ptx, arch), "") << what << ": the input is not valid " << arch << " PTX";
    const UserLowering l = lower(ptx);
    EXPECT_TRUE(l.changed) << what;
    EXPECT_EQ(ptx.find("tcgen05.") == std::string::npos,
              l.ptx.find("tmemjit_emu_") == std::string::npos);
    auto spliced = splice_emulation_library(l.ptx, library_ptx(l));
    ASSERT_TRUE(spliced.ok()) << spliced.error().message();
    const std::string log = ptxas(*spliced, emulation_target());
    EXPECT_EQ(log, "") << what << "\n" << l.library_source;
  }

  std::optional<ScratchDir> dir_;
  int files_ = 0;
};

TEST_F(UserEmulationCompile, TheTestKernelsAssembleForTheEmulationTarget) {
  for (const char* name : {"one_cta.ptx", "cta_pair.ptx", "packed_guarded.ptx"})
    lowers_and_assembles(input(name), "sm_100a", name);
}

// The 2-CTA GEMM of the end-to-end test (python/tests/test_emulate.py): TMA .cta_group::2 into the
// leader's barrier, the pair's MMA and multicast commits, each CTA's own tcgen05.ld.
TEST_F(UserEmulationCompile, ThePairGemmAssemblesForTheEmulationTarget) {
  auto source =
      read_file(std::string(TMEMJIT_SOURCE_DIR) + "/tests/jit/kernels/ws_gemm_2cta_sm100.cu");
  ASSERT_TRUE(source.ok()) << source.error().message();
  CompileOptions options;
  options.target = Target::kSm100a;
  auto ptx = compile_cuda_front_end(*source, "ws_gemm_2cta_sm100.cu", {}, {"--std=c++17"}, {},
                                    options, FrontEndOutput::kPtx);
  ASSERT_TRUE(ptx.ok()) << ptx.error().message();
  const std::string text(ptx->output.begin(), ptx->output.end());
  ASSERT_NE(text.find(".cta_group::2 ["), std::string::npos) << "the TMA .cta_group::2 is there";
  lowers_and_assembles(text, "sm_100a", "ws_gemm_2cta_sm100.cu");
  // The TMA's shadow barrier takes a whole 1 KB of static shared memory, so that the dynamic
  // buffer after it starts 1024-aligned as on hardware (docs/emulation.md, "Launching a lowered
  // kernel from your own host"): 8 bytes put CuTe's swizzled TMA destinations at 0x410.
  auto cubin = read_file(dir_->file("k.cubin"));
  ASSERT_TRUE(cubin.ok()) << cubin.error().message();
  auto sections = elf::read_sections(std::span<const char>(cubin->data(), cubin->size()));
  ASSERT_TRUE(sections.ok()) << sections.error().message();
  uint64_t static_shared = 0;
  for (const elf::Section& section : *sections)
    if (section.name.starts_with(".nv.shared.")) static_shared += section.size;
  EXPECT_GE(static_shared, 1024u);
}

// Every tcgen05.ld/st form of the opcode table (docs/tcgen05-rules.md §Shapes: 5 shapes, every
// .num, pack/unpack), one kernel each (ptxas takes minutes over one kernel with all of them).
TEST_F(UserEmulationCompile, EveryTransferFormAssembles) {
  std::string ptx = header("sm_100a", "8.8");
  int forms = 0;
  for (Shape shape : all_shapes())
    for (int num = 1; num <= 128; num *= 2)
      for (bool pack : {false, true})
        for (Direction direction : {Direction::kLoad, Direction::kStore}) {
          auto op = Opcode::make(direction, shape, num, pack);
          if (!op) continue;
          std::string vector = "{";
          for (int r = 0; r < op->regs_per_thread(); ++r)
            vector += (r ? ", %r" : "%r") + std::to_string(r);
          vector += "}";
          const std::string imm = op->is_split() ? ", " + std::to_string(op->atom_tmem_cols()) : "";
          ptx += kernel(
              "k" + std::to_string(forms++),
              "\t" + op->to_string() + " " +
                  (op->is_load() ? vector + ", [%r200]" + imm : "[%r200]" + imm + ", " + vector) +
                  ";");
        }
  EXPECT_EQ(forms, 148) << "the opcode table's forms (docs/tcgen05-rules.md §Registers)";
  lowers_and_assembles(ptx, "sm_100a", "every tcgen05.ld/st form");
}

// tcgen05.ld.red (sm_103a): min/max, .abs, .NaN, f32/u32/s32, both shapes.
TEST_F(UserEmulationCompile, EveryLoadReduceFormAssembles) {
  std::string body;
  for (Shape shape : {Shape::k32x32b, Shape::k16x32bx2})
    for (ReductionOp op_kind : {ReductionOp::kMin, ReductionOp::kMax})
      for (const Reduction& reduction :
           {Reduction{op_kind, ReductionType::kF32, false, false},
            Reduction{op_kind, ReductionType::kF32, true, true},
            Reduction{op_kind, ReductionType::kU32}, Reduction{op_kind, ReductionType::kS32}}) {
        auto op = Opcode::make_load_reduce(shape, 8, reduction);
        ASSERT_TRUE(op.ok()) << op.error().message();
        body += "\t" + op->to_string() + " {%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}, %r8, [%r200]" +
                (op->is_split() ? ", 8" : "") + ";\n";
      }
  lowers_and_assembles(module(body, "sm_103a"), "sm_103a", "tcgen05.ld.red");
}

// A module older than the library: NVRTC 13.0 writes .version 9.0, the module keeps its 8.6.
TEST_F(UserEmulationCompile, AnOlderModuleTakesTheLibrary) {
  lowers_and_assembles(module("\ttcgen05.ld.sync.aligned.32x32b.x1.b32 {%r1}, [%r2];\n"
                              "\ttcgen05.wait::ld.sync.aligned;",
                              "sm_100a", "8.6"),
                       "sm_100a", ".version 8.6");
}

// What the lowering refuses is a real Blackwell statement that Hopper cannot assemble (sm_90a,
// and so sm_90): the deny list does not refuse what ptxas would take.
TEST_F(UserEmulationCompile, WhatIsRefusedIsWhatPtxasRejectsForHopper) {
  for (const Refused& r : refused_statements()) {
    const std::string statement = "\t" + std::string(r.statement);
    EXPECT_EQ(ptxas(module(statement, "sm_100a"), "sm_100a"), "") << r.statement;
    EXPECT_NE(ptxas(module(statement, "sm_90a"), "sm_90a"), "") << r.statement << " assembles";
  }
}

}  // namespace
}  // namespace tmem::kernels

// ---- the host's reading of what the device library records ------------------------------------

namespace tmem::kernels {
namespace {

Status decode(EmuEvent event, std::uint32_t value, std::vector<std::string>& warnings) {
  std::vector<std::uint32_t> status(kEmuUserStatusWords, 0);
  status[2 * 37] = (static_cast<std::uint32_t>(event) << 24) | 2u;  // thread 37, id 2
  status[2 * 37 + 1] = value;
  const std::vector<std::string> instructions = {"tcgen05.alloc (PTX line 9)",
                                                 "tcgen05.mma (PTX line 12)"};
  return decode_user_emulation_status(status, 3, instructions, warnings);
}

TEST(UserEmulation, EveryLibraryEventIsAnErrorNamingTheStatementTheThreadAndTheRule) {
  const struct {
    EmuEvent event;
    std::uint32_t value;
    ErrorCode code;
    const char* words;
  } cases[] = {
      {EmuEvent::kAllocColumns, 48, ErrorCode::kRule, "rule R22: 48 columns"},
      {EmuEvent::kAllocBlocked, 512, ErrorCode::kRule, "rule R30: 512 columns are not free"},
      {EmuEvent::kAllocRelinquished, 64, ErrorCode::kRule, "rule R25"},
      {EmuEvent::kMmaForm, 3, ErrorCode::kRule, "descriptor field 3"},
      {EmuEvent::kTmemLanes, (16u << 16) | 8u, ErrorCode::kRule, "lane 16, column 8"},
      {EmuEvent::kNotEmulated, 24, ErrorCode::kUsage, "not emulated yet"},
      {EmuEvent::kCtaPair, 2, ErrorCode::kRule, "rule R27: cta_group::2"},
      {EmuEvent::kOperandNotEmulated, 1, ErrorCode::kUsage, "disable-output-lane"},
      {EmuEvent::kTmaPeer, 0, ErrorCode::kUsage, "box could not be read"},
      {EmuEvent::kTmaPeer, 1, ErrorCode::kUsage, "leaves out the issuing CTA"},
      {EmuEvent::kTmaPeer, 24576, ErrorCode::kUsage, "24576 bytes"},
      {EmuEvent::kStrictPending, (32u << 16) | 16u, ErrorCode::kRule,
       "lane 32, column 16: strict mode"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> warnings;
    Status decoded = decode(c.event, c.value, warnings);
    ASSERT_FALSE(decoded.ok()) << static_cast<int>(c.event);
    const Error& error = decoded.error();
    EXPECT_EQ(error.code(), c.code) << error.message();
    EXPECT_NE(error.message().find(c.words), std::string::npos) << error.message();
    EXPECT_NE(error.message().find("tcgen05.mma (PTX line 12) by thread 37 (warp 1) of CTA 3"),
              std::string::npos)
        << error.message();
  }
  // A larger second allocation is made, as the hardware does, and warned about once.
  std::vector<std::string> warnings;
  EXPECT_TRUE(decode(EmuEvent::kAllocGrows, 256, warnings).ok());
  EXPECT_TRUE(decode(EmuEvent::kAllocGrows, 256, warnings).ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("rule R24: an allocation of 256 columns"), std::string::npos);
}

}  // namespace
}  // namespace tmem::kernels
