// SASS agreement: for each case of cute_cases.h, CuTe's kernel (make_tmem_copy, partition, copy;
// compiled by nvcc for sm_100a at build time) and libtmemjit's kernel for the same transfer
// issue the same LDTM/STTM instructions: mnemonic with shape and count, order, and TMEM address
// offsets from one base.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/spec_fixtures.h"
#include "cute/cute_cases.h"
#include "cute/cute_forms.h"
#include "cute/sass_trace.h"
#include "runtime/compile/sass.h"
#include "tmem/cache.h"
#include "tmem/jit.h"
#include "tmem/transfer.h"
#ifdef TMEMJIT_CUTE_FULL_GRID
#include "cute/cute_full_grid.h"
#endif

namespace {

using tmemjit_cute::TmemInstruction;

struct Case {
  std::string kernel;  // the CuTe kernel's name in cute_kernels.cu
  std::string dir;     // ld, st
  std::string seed;    // seed_layout_b, seed_pack, seed_split; empty for a tile case
  std::string shape, pack;
  int num = 0, cols = 0, lanes = 0;
};

// gtest prints a parameter in failure messages and test listings.
void PrintTo(const Case& c, std::ostream* out) { *out << c.kernel; }

#define TMEMJIT_CUTE_TILE_CASE(dir, shape, num, pack, cols, lanes)    \
  Case{"cute_" #dir "_" #shape #num "x" #pack "_c" #cols "_l" #lanes, \
       #dir,                                                          \
       "",                                                            \
       #shape,                                                        \
       #pack,                                                         \
       num,                                                           \
       cols,                                                          \
       lanes},
#define TMEMJIT_CUTE_SEED_CASE(name, dir) Case{"cute_" #name "_" #dir, #dir, #name},

std::vector<Case> tile_cases() {
#ifdef TMEMJIT_CUTE_FULL_GRID
  return {TMEMJIT_CUTE_FULL_GRID_CASES(TMEMJIT_CUTE_TILE_CASE)};
#else
  return {TMEMJIT_CUTE_CI_CASES(TMEMJIT_CUTE_TILE_CASE)};
#endif
}
std::vector<Case> seed_cases() { return {TMEMJIT_CUTE_SEEDS(TMEMJIT_CUTE_SEED_CASE)}; }

// The seed's 16x32bx2 example with CuTe's immediate: the second access right after the first
// one's four columns instead of (16<<16)+8 (CuTe's atoms cannot shift lanes).
tmemjit_test::SpecText seed_split_cute_imm(bool store) {
  tmemjit_test::SpecText spec = tmemjit_test::seed_split(store, 4);
  spec.tmem2 = spec.tmem.substr(0, spec.tmem.rfind('[')) + "[:, :16, 4:8]";
  return spec;
}

tmemjit_test::SpecText spec_of(const Case& c) {
  const bool store = c.dir == "st";
  if (c.seed == "seed_layout_b") return tmemjit_test::seed_layout_b(store);
  if (c.seed == "seed_pack") return tmemjit_test::seed_pack(store);
  if (c.seed == "seed_split") return seed_split_cute_imm(store);
  const tmem::Opcode op =
      tmem::Opcode::parse(tmemjit_cute::opcode_text(c.dir, c.shape, c.num, c.pack)).value();
  return tmemjit_cute::tile_spec(op, c.cols, c.lanes);
}

// The CuTe cubin's functions, disassembled once per process.
struct CuteSass {
  std::optional<std::string> error;
  std::map<std::string, std::string> functions;
};

[[maybe_unused]] std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

const CuteSass& cute_sass() {
  static const CuteSass sass = []() -> CuteSass {
#ifdef TMEMJIT_CUTE_CUBIN
    std::optional<tmem::sass::Disassembler> tool = tmem::sass::find_disassembler();
    if (!tool) return {tmem::sass::search_description(), {}};
    const std::string cubin = read_all(TMEMJIT_CUTE_CUBIN);
    if (cubin.empty()) return {std::string("cannot read ") + TMEMJIT_CUTE_CUBIN, {}};
    tmem::Result<std::string> text = tmem::sass::disassemble(*tool, cubin);
    if (!text.ok()) return {text.error().message(), {}};
    return {std::nullopt, tmemjit_cute::split_functions(*text)};
#else
    return {"no CuTe cubin was built", {}};
#endif
  }();
  return sass;
}

// libtmemjit's harness kernel for the spec: the store kernel for st, the load kernel for ld
// (their 32x32b fill and dump instructions are of the other base mnemonic).
tmem::Result<std::string> libtmemjit_sass(const tmemjit_test::SpecText& text, bool store) {
  tmem::Result<tmem::TransferSpec> spec = tmem::TransferSpec::from_fields(
      text.op, text.scope, text.tmem, text.regs,
      text.tmem2 ? std::optional<std::string_view>(*text.tmem2) : std::nullopt,
      text.imm ? std::optional<std::string_view>(*text.imm) : std::nullopt);
  if (!spec.ok()) return std::move(spec).error();
  tmem::CacheOptions off = tmem::cache_options();
  off.enabled = false;  // nothing of a test run lands in the user's cache
  tmem::set_cache_options(off);
  tmem::Result<tmem::Kernel> kernel =
      tmem::compile_transfer(*spec, {}, store ? tmem::KernelKind::kStore : tmem::KernelKind::kLoad);
  if (!kernel.ok()) return std::move(kernel).error();
  std::optional<tmem::sass::Disassembler> tool = tmem::sass::find_disassembler();
  if (!tool) return tmem::Error(tmem::ErrorCode::kToolchain, tmem::sass::search_description());
  tmem::Result<std::string> sass = tmem::sass::disassemble(*tool, kernel->cubin());
  if (!sass.ok()) return std::move(sass).error();
  const std::map<std::string, std::string> functions = tmemjit_cute::split_functions(*sass);
  if (functions.size() != 1)
    return tmem::Error(tmem::ErrorCode::kInternal, "expected one function in the kernel, found " +
                                                       std::to_string(functions.size()));
  return functions.begin()->second;
}

std::string listing(const std::vector<TmemInstruction>& code) {
  std::string out;
  for (const TmemInstruction& in : code) {
    std::ostringstream offset;
    offset << std::hex << in.offset;
    out +=
        "    " + in.mnemonic + " @ " + in.root + " + 0x" + offset.str() + "    (" + in.text + ")\n";
  }
  return out;
}

// Both lists address TMEM from one base each, and agree in order, mnemonic and offset.
void expect_same(const std::vector<TmemInstruction>& cute, const std::vector<TmemInstruction>& ours,
                 const std::string& what) {
  const std::string both = what + "\n  CuTe:\n" + listing(cute) + "  libtmemjit:\n" + listing(ours);
  ASSERT_FALSE(cute.empty()) << "CuTe's kernel has no TMEM instruction: " << both;
  for (const auto* code : {&cute, &ours})
    for (const TmemInstruction& in : *code)
      ASSERT_EQ(in.root, code->front().root) << "addresses from more than one base: " << both;
  ASSERT_EQ(cute.size(), ours.size()) << both;
  for (size_t i = 0; i < cute.size(); ++i) {
    EXPECT_EQ(cute[i].mnemonic, ours[i].mnemonic) << "instruction " << i << ": " << both;
    EXPECT_EQ(cute[i].offset, ours[i].offset) << "instruction " << i << ": " << both;
  }
}

class CuteSassAgreement : public testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (std::optional<std::string> reason = tmemjit_cute::cute_missing()) GTEST_SKIP() << *reason;
    ASSERT_FALSE(cute_sass().error) << *cute_sass().error;
  }
};

TEST_P(CuteSassAgreement, SameTmemInstructions) {
  const Case& c = GetParam();
  const auto function = cute_sass().functions.find(c.kernel);
  ASSERT_NE(function, cute_sass().functions.end()) << c.kernel << " is not in the CuTe cubin";
  const std::string base = c.dir == "st" ? "STTM" : "LDTM";
  const tmemjit_test::SpecText spec = spec_of(c);
  tmem::Result<std::string> ours = libtmemjit_sass(spec, c.dir == "st");
  ASSERT_TRUE(ours.ok()) << ours.error().message() << "\n"
                         << ours.error().details() << "\nspec: --op " << spec.op << " --tmem '"
                         << spec.tmem << "' --regs '" << spec.regs << "'"
                         << (spec.tmem2 ? " --tmem2 '" + *spec.tmem2 + "'" : "")
                         << (spec.imm ? " --imm " + *spec.imm : "");
  const std::vector<TmemInstruction> cute = tmemjit_cute::trace_tmem(function->second, base);
  const std::vector<TmemInstruction> mine = tmemjit_cute::trace_tmem(*ours, base);
  // What was compared, in the XML/JSON report (--gtest_output=json:FILE).
  RecordProperty("cute", listing(cute));
  RecordProperty("libtmemjit", listing(mine));
  expect_same(cute, mine, c.kernel + " vs --op " + spec.op + " --tmem '" + spec.tmem + "'");
}

std::string case_name(const testing::TestParamInfo<Case>& info) {
  return info.param.kernel.substr(5);  // without "cute_"
}

INSTANTIATE_TEST_SUITE_P(Seed, CuteSassAgreement, testing::ValuesIn(seed_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Tile, CuteSassAgreement, testing::ValuesIn(tile_cases()), case_name);

// The seed's own 16x32bx2 example, imm = (16<<16)+8, has no CuTe twin: it issues CuTe's
// instructions with the second access (t16_t31) moved by the difference of the immediates.
TEST(CuteSeedSplit, LiteralImmediateMovesOnlyTheSecondAccess) {
  if (std::optional<std::string> reason = tmemjit_cute::cute_missing()) GTEST_SKIP() << *reason;
  ASSERT_FALSE(cute_sass().error) << *cute_sass().error;
  const auto function = cute_sass().functions.find("cute_seed_split_st");
  ASSERT_NE(function, cute_sass().functions.end());
  tmem::Result<std::string> ours = libtmemjit_sass(tmemjit_test::seed_split(true), true);
  ASSERT_TRUE(ours.ok()) << ours.error().message();
  std::vector<TmemInstruction> cute = tmemjit_cute::trace_tmem(function->second, "STTM");
  for (TmemInstruction& in : cute)
    if (in.mnemonic.find("_t16_t31") != std::string::npos) in.offset += ((16 << 16) + 8) - 4;
  expect_same(cute, tmemjit_cute::trace_tmem(*ours, "STTM"), "seed split, imm (16<<16)+8");
}

}  // namespace

namespace {

// The tracer on a hand-written listing: moves, constant additions, a guard predicate.
TEST(CuteSassTrace, FollowsMovesAndConstantAdditions) {
  const std::string sass =
      "//--------------------- .text.k --------------------------\n"
      "        /*0010*/                   S2R R0, SR_TID.X ;\n"
      "        /*0020*/                   IADD3 R2, PT, PT, R0, 0x100000, RZ ;\n"
      "        /*0030*/                   R2UR UR4, R0.reuse ;\n"
      "        /*0040*/                   R2UR UR5, R2 ;\n"
      "        /*0050*/                   UIADD3 UR6, UPT, UPT, UR4, 0x8, URZ ;\n"
      "        /*0060*/                   LDTM.x8 R12, tmem[UR4] ;\n"
      "        /*0070*/                   LDTM.x8 R20, tmem[UR5+0x4] ;\n"
      "        /*0080*/              @P0  LDTM.x8 R28, tmem[UR6] ;\n"
      "        /*0090*/                   STTM.x8 tmem[UR6], R28 ;\n";
  const auto functions = tmemjit_cute::split_functions(sass);
  ASSERT_EQ(functions.count("k"), 1u);
  const std::vector<TmemInstruction> loads = tmemjit_cute::trace_tmem(functions.at("k"), "LDTM");
  ASSERT_EQ(loads.size(), 3u);
  for (const TmemInstruction& in : loads) {
    EXPECT_EQ(in.mnemonic, "LDTM.x8");
    EXPECT_EQ(in.root, "R0@0");
  }
  EXPECT_EQ(loads[0].offset, 0);
  EXPECT_EQ(loads[1].offset, 0x100004);
  EXPECT_EQ(loads[2].offset, 0x8);
  EXPECT_EQ(tmemjit_cute::trace_tmem(functions.at("k"), "STTM").size(), 1u);
}

// A negative: libtmemjit's spec with the repeat axes in the other order (column blocks fastest)
// issues the same instructions in another order, and the comparison sees it.
TEST(CuteSassTrace, SeesAnotherInstructionOrder) {
  if (std::optional<std::string> reason = tmemjit_cute::cute_missing()) GTEST_SKIP() << *reason;
  ASSERT_FALSE(cute_sass().error) << *cute_sass().error;
  const auto function = cute_sass().functions.find("cute_ld_16dp64b2x_c8_l32");
  ASSERT_NE(function, cute_sass().functions.end());
  tmemjit_test::SpecText spec = tmemjit_cute::tile_spec(
      tmem::Opcode::parse("tcgen05.ld.sync.aligned.16x64b.x2.b32").value(), 8, 32);
  // (g, kc, kh, ...) -> (g, kh, kc, ...) on both operands.
  for (std::string* text : {&spec.tmem, &spec.regs}) {
    const size_t kc = text->find("(4,2,2,");
    ASSERT_NE(kc, std::string::npos) << *text;
    const size_t strides = text->find(":(", kc);
    const size_t first = text->find(',', strides) + 1, second = text->find(',', first) + 1,
                 third = text->find(',', second);
    const std::string a = text->substr(first, second - 1 - first);
    const std::string b = text->substr(second, third - second);
    text->replace(first, third - first, b + "," + a);
  }
  tmem::Result<std::string> ours = libtmemjit_sass(spec, false);
  ASSERT_TRUE(ours.ok()) << ours.error().message() << "\n" << spec.tmem << "\n" << spec.regs;
  const std::vector<TmemInstruction> cute = tmemjit_cute::trace_tmem(function->second, "LDTM");
  const std::vector<TmemInstruction> mine = tmemjit_cute::trace_tmem(*ours, "LDTM");
  ASSERT_EQ(cute.size(), mine.size());
  bool same_order = true;
  for (size_t i = 0; i < cute.size(); ++i) same_order &= cute[i].offset == mine[i].offset;
  EXPECT_FALSE(same_order) << "CuTe:\n" << listing(cute) << "libtmemjit:\n" << listing(mine);
}

}  // namespace
