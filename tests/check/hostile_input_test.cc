// Hostile input (issue 9, docs/reliability.md): inputs that would explode are refused with a
// kLimit or kParse error, and the fuzzers' findings stay fixed. The work each case takes is
// measured in docs/reliability.md (all well under a millisecond to a few milliseconds); here the
// answer is asserted. The undefined-behaviour regressions only fail under UBSan (build-asan).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "common/cli_util.h"
#include "tmem/check.h"
#include "tmem/layout.h"
#include "tmem/opcode.h"
#include "tmem/transfer.h"
#include "tmem/view.h"

namespace {

using tmem::ErrorCode;
using tmem::Layout;
using tmem::TransferSpec;
using tmem::View;

constexpr size_t kTenMegabytes = size_t{10} << 20;
constexpr size_t kMillion = 1000000;

// 1.0e12 elements: 31250000000 repeats of one 32x32b.x1 atom (32 rows, 1 column), a legal shape.
const std::string kTrillionTmem =
    "tensor((31250000000,32,1), S[(31250000000,32):(1@TCol,1@TLane)], b32)";
const std::string kTrillionRegs =
    "tensor((31250000000,32,1), S[(31250000000,32):(1,1@laneid)], b32)";
const std::string kLoadX1 = "tcgen05.ld.sync.aligned.32x32b.x1.b32";

std::string code_of(ErrorCode code) { return tmem::to_string(code); }

template <class T>
void expect_error(const tmem::Result<T>& result, ErrorCode code, const std::string& what) {
  ASSERT_FALSE(result.ok()) << what;
  EXPECT_EQ(code_of(result.error().code()), code_of(code))
      << what << ": " << result.error().message();
  // Hostile input must not come back as a hostile message either.
  EXPECT_LT(result.error().message().size(), 400u) << what;
}

// ---- a view of 10^12 elements ----

TEST(Limits, TrillionElementViewIsADescriptionOnly) {
  // Parsing costs O(rank): the view is valid text for 10^12 elements and nothing iterates them.
  auto view = View::parse(kTrillionTmem);
  ASSERT_TRUE(view.ok()) << view.error().message();
  EXPECT_EQ(view->size(), 1000000000000);
  auto coords = view->apply(std::vector<std::int64_t>{31249999999, 31, 0});
  ASSERT_TRUE(coords.ok());
  EXPECT_EQ((*coords)[0][tmem::Axis::kTCol], 31249999999);
  // Above kMaxElements (2^40) a view is refused outright.
  expect_error(View::parse("tensor((2097152,1048576), S[2097152,1048576])"), ErrorCode::kLimit,
               "2^41 elements");
}

TEST(Limits, CheckRefusesTrillionElementTransfer) {
  auto spec = TransferSpec::from_fields(kLoadX1, "warp:0", kTrillionTmem, kTrillionRegs);
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  auto plan = tmem::check(*spec);
  expect_error(plan, ErrorCode::kLimit, "check of 10^12 elements");
  EXPECT_NE(plan.error().message().find("31250000000 instructions"), std::string::npos)
      << plan.error().message();
}

// A few hundred bytes once made the element-by-element checker visit 67M elements (7 s) before it
// failed: 512 repeats of 32x32b.x128 at cta:32, register slots 127 apart so the last check fails.
// Register words per thread are capped at 255, the registers a thread has (issue 17; it was 512).
TEST(Limits, CheckWorkIsBoundedByTheRegisterFile) {
  const std::string op = "tcgen05.ld.sync.aligned.32x32b.x128.b32";
  const std::string tmem =
      "tensor((32,512,32,128), S[(8,4,512,32,128):(0@TLane,32@TLane,0@TCol,1@TLane,1@TCol)], b32)";
  const std::string regs =
      "tensor((32,512,32,128), S[(32,512,32,128):(1@warpid,127,1@laneid,1)], b32)";
  auto spec = TransferSpec::from_fields(op, "cta:32", tmem, regs);
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  auto plan = tmem::check(*spec);
  expect_error(plan, ErrorCode::kLimit, "65536 register words per thread");
  EXPECT_NE(plan.error().message().find(
                "65536 register words per thread; a thread has at most 255 registers"),
            std::string::npos)
      << plan.error().message();
  // 4 repeats of x128 (512 words, every column of the slab once) no longer fits a thread.
  auto full = TransferSpec::from_fields(
      op, "warpgroup",
      "tensor((4,4,32,128), S[(4,4,32,128):(32@TLane,128@TCol,1@TLane,1@TCol)], b32)",
      "tensor((4,4,32,128), S[(4,4,32,128):(32@tid_in_wg,128,1@tid_in_wg,1)], b32)");
  ASSERT_TRUE(full.ok()) << full.error().message();
  expect_error(tmem::check(*full), ErrorCode::kLimit, "512 register words per thread");
  // x128 + x64 + ... as 255 repeats of x1 at cta:32 is the largest transfer: 261,120 words.
  auto largest = TransferSpec::from_fields(
      "tcgen05.ld.sync.aligned.32x32b.x1.b32", "cta:32",
      "tensor((32,255,32,1), S[(8,4,255,32):(0@TCol,32@TLane,1@TCol,1@TLane)], b32)",
      "tensor((32,255,32,1), S[(32,255,32):(32@tx,1,1@tx)], b32)");
  ASSERT_TRUE(largest.ok()) << largest.error().message();
  auto largest_plan = tmem::check(*largest);
  ASSERT_TRUE(largest_plan.ok()) << largest_plan.error().message();
  EXPECT_EQ(largest_plan->regs_per_thread, 255);
  EXPECT_EQ(largest_plan->alloc_columns, 256);
}

TEST(Limits, CliRefusesTrillionElementTransfer) {
  auto result = tmemjit_test::run_cli("check", "--op", kLoadX1, "--scope", "warp:0", "--tmem",
                                      kTrillionTmem, "--regs", kTrillionRegs);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(result.err.rfind("error: limit: the transfer issues 31250000000 instructions", 0), 0u)
      << result.err;
  // `tmemjit layout` prints the summary, not 10^12 table rows.
  auto layout = tmemjit_test::run_cli("layout", kTrillionTmem);
  EXPECT_EQ(layout.exit_code, 0) << layout.err;
  EXPECT_NE(layout.out.find("1000000000000 elements"), std::string::npos) << layout.out;
}

// ---- a 10 MB spec ----

TEST(Limits, TenMegabyteSpecText) {
  const std::string body(kTenMegabytes, ' ');
  expect_error(TransferSpec::parse("op: " + std::string(kTenMegabytes, 'x')), ErrorCode::kLimit,
               "spec text");
  expect_error(TransferSpec::parse(body + "op: tcgen05"), ErrorCode::kLimit, "spec text of spaces");
  expect_error(TransferSpec::from_json("{\"op\": \"" + std::string(kTenMegabytes, 'x') + "\"}"),
               ErrorCode::kLimit, "spec JSON");
  expect_error(TransferSpec::from_json("[" + body + "]"), ErrorCode::kLimit, "spec JSON of spaces");
}

TEST(Limits, TenMegabyteFields) {
  const std::string big(kTenMegabytes, '1');
  expect_error(tmem::Opcode::parse("tcgen05.ld." + big), ErrorCode::kLimit, "opcode");
  expect_error(Layout::parse("S[" + big + "]"), ErrorCode::kLimit, "layout");
  expect_error(View::parse("wg_local_layout(" + big + ")"), ErrorCode::kLimit, "view");
  const std::string regs = "wg_local_layout(1)";
  expect_error(TransferSpec::from_fields(big, "warpgroup", regs, regs), ErrorCode::kLimit,
               "op field");
  expect_error(TransferSpec::from_fields(kLoadX1, "warp:" + big, regs, regs), ErrorCode::kParse,
               "scope field");
  expect_error(TransferSpec::from_fields(kLoadX1, "warpgroup", regs, regs + big), ErrorCode::kLimit,
               "regs field");
  expect_error(TransferSpec::from_fields("tcgen05.ld.sync.aligned.16x32bx2.x1.b32", "warpgroup",
                                         regs, regs, regs, big),
               ErrorCode::kParse, "imm field");
}

TEST(Limits, CliRefusesTenMegabyteSpecFile) {
  const std::string path = "/tmp/tmemjit_hostile_" + std::to_string(::getpid()) + ".json";
  {
    std::ofstream out(path);
    out << "{\"op\": \"" << std::string(kTenMegabytes, 'x') << "\"}";
  }
  auto result = tmemjit_test::run_cli("check", "--spec", path);
  std::remove(path.c_str());
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(result.err.rfind("error: ", 0), 0u) << result.err;
  EXPECT_NE(result.err.find("1 MiB"), std::string::npos) << result.err;
}

// A device (an endless one here) is refused before anything is read from it (issue 39 item 5).
TEST(Limits, CliRefusesADeviceAsSpecFile) {
  if (::access("/dev/zero", R_OK) != 0) GTEST_SKIP() << "no readable /dev/zero";
  auto result = tmemjit_test::run_cli("check", "--spec", "/dev/zero");
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("'/dev/zero' is not a regular file or a pipe"), std::string::npos)
      << result.err;
}

// A FIFO nobody writes blocked the command for ever (issue 39 N11): it reads as empty at once.
TEST(Limits, CliSpecFileThatIsAFifoWithoutWriterDoesNotBlock) {
  const std::string path =
      ::testing::TempDir() + "/tmemjit_spec_fifo_" + std::to_string(::getpid());
  std::remove(path.c_str());
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << std::strerror(errno);
  auto result = tmemjit_test::run_cli("check", "--spec", path);
  std::remove(path.c_str());
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(result.err.rfind("error: ", 0), 0u) << result.err;
}

TEST(Limits, CliSpecFileThatIsADirectoryIsAUsageError) {
  auto result = tmemjit_test::run_cli("check", "--spec", "/tmp");
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("spec file '/tmp' is not a regular file or a pipe"), std::string::npos)
      << result.err;
}

// ---- 10^6 nested parentheses (the parsers never recurse on nesting) ----

// 10^6 '(' alone fit the 1 MiB text limit and reach the parser, which stops at the first one it
// cannot take; closed again (2 MB) they are refused by the text limit before parsing.
TEST(Limits, MillionNestedParentheses) {
  const std::string open(kMillion, '('), close(kMillion, ')');
  const std::string regs = "wg_local_layout(1)";
  struct Case {
    std::string prefix, suffix;
  };
  for (const auto& [prefix, suffix] : std::vector<Case>{
           {"S[", "1]"},
           {"S[(2,2):", "1,1)]"},
           {"TileLayout", "S[1])"},
       }) {
    expect_error(Layout::parse(prefix + open + suffix), ErrorCode::kParse, "layout " + prefix);
    expect_error(Layout::parse(prefix + open + close + suffix), ErrorCode::kLimit,
                 "layout " + prefix);
  }
  for (const auto& [prefix, suffix] : std::vector<Case>{
           {"tensor(", "64, S[64:1])"},
           {"tensor((64,), S[", "64:1])"},
           {"wg_local_layout(1).rearrange(\"", "a -> a\")"},
           {"wg_local_layout(1).view", "128)"},
           {"wg_local_layout(1)[", "0]"},
       }) {
    expect_error(View::parse(prefix + open + suffix), ErrorCode::kParse, "view " + prefix);
    expect_error(View::parse(prefix + open + close + suffix), ErrorCode::kLimit, "view " + prefix);
  }
  expect_error(View::parse(regs + std::string(kMillion, '[')), ErrorCode::kParse, "index brackets");
  expect_error(TransferSpec::parse("op: " + kLoadX1 + "\nscope: warp:0\ntmem: " + open +
                                   "\nregs: " + regs + "\n"),
               ErrorCode::kParse, "spec text");
  // nlohmann's parser keeps its own stack: deep JSON is an error, never a stack overflow.
  expect_error(TransferSpec::from_json(std::string(kMillion, '[')), ErrorCode::kParse,
               "10^6 unclosed JSON arrays");
  expect_error(
      TransferSpec::from_json(std::string(kMillion / 2, '[') + std::string(kMillion / 2, ']')),
      ErrorCode::kParse, "5*10^5 nested JSON arrays");
  expect_error(TransferSpec::from_json(std::string(kMillion, '[') + std::string(kMillion, ']')),
               ErrorCode::kLimit, "10^6 nested JSON arrays");
}

// ---- integers that overflow 64 bits ----

TEST(Limits, IntegersBeyondSixtyFourBits) {
  const std::string huge = "99999999999999999999";  // > 2^64
  const std::string past = "9223372036854775808";   // INT64_MAX + 1
  for (const std::string& text : {
           "S[" + huge + ":1]",
           "S[4:" + huge + "]",
           "S[(4,4):(1," + past + "@TCol)]",
           "S[4:1] + " + huge + "@TLane",
           "S[4:1] + R[" + past + ":1]",
       }) {
    auto layout = Layout::parse(text);
    expect_error(layout, ErrorCode::kParse, text);
    EXPECT_NE(layout.error().message().find("does not fit in a signed 64-bit integer"),
              std::string::npos)
        << layout.error().message();
  }
  for (const std::string& text : {
           "tensor((" + huge + ",), S[4:1])",
           "wg_local_layout(4)[" + huge + "]",
           "wg_local_layout(4)[:, 1:" + past + "]",
           "wg_local_layout(4).view(" + huge + ")",
           "wg_local_layout(4).permute(" + huge + ", 0)",
           "wg_local_layout(4).rearrange(\"(a b) c -> a b c\", a=" + huge + ")",
           "tmem_datapath_layout(\"A\", 128, " + huge + ")",
           "wg_local_layout(4, rows=-" + huge + ")",
       }) {
    expect_error(View::parse(text), ErrorCode::kParse, text);
  }
  // In range one by one, out of range together: products and sums are kLimit.
  expect_error(Layout::parse("S[(4294967296,4294967296)]"), ErrorCode::kLimit, "extent product");
  expect_error(Layout::parse("S[2:4611686018427387904] + 4611686018427387904"), ErrorCode::kLimit,
               "stride plus offset");
  expect_error(Layout::parse("S[(2,2):(4611686018427387904,4611686018427387904)]"),
               ErrorCode::kLimit, "stride sum");
  expect_error(Layout::parse("S[4:1] + R[(65536,2):(1,1)]"), ErrorCode::kLimit, "replica count");

  const std::string regs = "wg_local_layout(1)";
  const std::string split = "tcgen05.ld.sync.aligned.16x32bx2.x1.b32";
  expect_error(TransferSpec::from_fields(split, "warpgroup", regs, regs, regs, huge),
               ErrorCode::kParse, "--imm text");
  expect_error(TransferSpec::from_fields(split, "warpgroup", regs, regs, regs, "-" + past + "0"),
               ErrorCode::kParse, "--imm negative text");
  expect_error(TransferSpec::from_fields(split, "warpgroup", regs, regs, regs, "4294967296"),
               ErrorCode::kRule, "--imm beyond 32 bits");
  expect_error(TransferSpec::from_fields(kLoadX1, "warp:" + huge, regs, regs), ErrorCode::kParse,
               "scope warp");
  expect_error(TransferSpec::from_fields(kLoadX1, "cta:" + huge, regs, regs), ErrorCode::kParse,
               "scope cta");
  expect_error(tmem::Opcode::parse("tcgen05.ld.sync.aligned.32x32b.x" + huge + ".b32"),
               ErrorCode::kOpcode, "opcode .xN");
}

// ---- fuzzer findings (docs/reliability.md) ----

// fuzz_spec: a JSON imm above INT64_MAX was read with get<int64_t>() and wrapped to a negative
// immediate (18446744073709551615 became -1, a valid-looking 32-bit delta).
TEST(FuzzFindings, JsonImmediateAboveInt64MaxIsAnError) {
  const std::string fields =
      R"json("op": "tcgen05.ld.sync.aligned.16x32bx2.x1.b32", "scope": "warpgroup",
      "tmem": "wg_local_layout(1)", "regs": "wg_local_layout(1)", "tmem2": "wg_local_layout(1)")json";
  for (const std::string imm : {"18446744073709551615", "9223372036854775808", "1e30", "-1.5"}) {
    auto spec = TransferSpec::from_json("{" + fields + ", \"imm\": " + imm + "}");
    expect_error(spec, ErrorCode::kParse, "imm " + imm);
  }
  auto in_range = TransferSpec::from_json("{" + fields + ", \"imm\": 4294967295}");
  ASSERT_TRUE(in_range.ok()) << in_range.error().message();
  EXPECT_EQ(in_range->imm().value(), 4294967295);
}

// fuzz_layout: canonicalize() multiplied extent * stride of an iter whose (extent - 1) * stride
// make() had bounded, overflowing int64 (UB) for S[(2,2):(1,2^62)].
TEST(FuzzFindings, CanonicalizeNearInt64Max) {
  auto layout = Layout::parse("S[(2,2):(1,4611686018427387904)]");
  ASSERT_TRUE(layout.ok()) << layout.error().message();
  EXPECT_TRUE(layout->equivalent(*layout));
  EXPECT_EQ(layout->canonicalize(), *layout);
  auto nested = Layout::parse("S[(2,2):(4611686018427387904,2305843009213693952)]");
  ASSERT_TRUE(nested.ok()) << nested.error().message();
  EXPECT_EQ(nested->canonicalize().to_string(), "S[4:2305843009213693952]");
}

// fuzz_view: an integer index of INT64_MAX built Slice::at(INT64_MAX), whose end index + 1
// overflowed (UB) before the range check could reject it.
TEST(FuzzFindings, IndexAtInt64Max) {
  auto view = View::parse("wg_local_layout(4)[9223372036854775807]");
  expect_error(view, ErrorCode::kLayout, "index INT64_MAX");
  EXPECT_EQ(tmem::Slice::at(INT64_MAX).begin, INT64_MAX);
}

}  // namespace
