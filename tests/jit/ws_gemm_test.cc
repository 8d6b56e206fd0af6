// compile_kernel on a production-shaped kernel (issue 28, docs/specialization.md "How a layout
// compiles"): tests/jit/kernels/ws_gemm_sm100.cu, a warp-specialized SM100 BF16 GEMM that includes
// CuTe, runs a TMA warp, an MMA warp and four epilogue warps in a cluster of 2, and reads its
// accumulator through the transfer acc_load. For sm_100a and sm_100f and three epilogue layouts,
// the SASS compile_kernel makes is NVRTC's SASS of the same source with device_function's text in
// place of the include, instruction for instruction; an edited header is a miss; a layout of
// another register count reuses the parse of CuTe. Label cute: without CuTe's headers these skip.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/cache_test_util.h"
#include "common/files.h"
#include "runtime/compile/sass.h"
#include "tmem/cache.h"
#include "tmem/check.h"
#include "tmem/compile.h"
#include "tmem/specialize.h"

namespace tmem {
namespace {
using testing::read_file;
using testing::write_file;

const std::string kKernelDir = std::string(TMEMJIT_SOURCE_DIR) + "/tests/jit/kernels";
const std::string kInclude = "#include <tmemjit/transfers.cuh>";

// CuTe's include directory (cmake/TmemjitCute.cmake, or $TMEMJIT_CUTE_INCLUDE); empty without it.
std::string cute_dir() {
  std::string dir;
#ifdef TMEMJIT_CUTE_INCLUDE_DIR
  dir = TMEMJIT_CUTE_INCLUDE_DIR;
#endif
  if (const char* env = std::getenv("TMEMJIT_CUTE_INCLUDE"); env && *env) dir = env;
  if (dir.empty() || !std::filesystem::exists(dir + "/cute/tensor.hpp")) return {};
  return dir;
}

#define SKIP_WITHOUT_CUTE()                                                             \
  if (cute_dir().empty())                                                               \
  GTEST_SKIP() << "CuTe headers not found: pip install nvidia-cutlass==4.2.0.0 or set " \
                  "TMEMJIT_CUTLASS_DIR and reconfigure (or TMEMJIT_CUTE_INCLUDE)"

// What a CuTe kernel's user passes: CuTe's -I and -default-device, nothing else (the library
// adds the toolkit's include and include/cccl).
std::vector<std::string> user_options() { return {"-I" + cute_dir(), "-default-device"}; }

// The same front end for a plain NVRTC compile: the user's options and the library's defaults in
// the order compile_kernel gives them (runtime/jit/kernel_context.cc).
std::vector<std::string> nvrtc_reference_options() {
  std::vector<std::string> options = user_options();
  options.push_back("--std=c++17");
  std::stringstream dirs(TMEMJIT_CUTE_CUDA_INCLUDES);
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty()) options.push_back("--include-path=" + dir);
  return options;
}

TransferSpec layout(const std::string& name) {
  return TransferSpec::from_json(read_file(kKernelDir + "/ws_gemm_layouts/" + name + ".json"))
      .value();
}

// acc_load as the kernel calls it: acc_load(tmem_base, regs, warp, column), then acc_load_wait().
std::vector<NamedTransfer> acc_load(const std::string& layout_name) {
  DeviceFunctionOptions options;
  options.name = "acc_load";
  options.wait = false;
  options.warp_argument = true;
  options.column_argument = true;
  return {{layout(layout_name), options}};
}

// The kernel's source; `tag`, a comment on the first line, gives each test a header prefix (and
// so a precompiled header) of its own: they live as long as the process.
KernelSource gemm_source(const std::string& tag) {
  KernelSource source;
  source.text = "// " + tag + "\n" + read_file(kKernelDir + "/ws_gemm_sm100.cu");
  source.entry = "ws_gemm_bf16";
  source.path = "ws_gemm_sm100.cu";
  return source;
}

// The source with device_function's CUDA text pasted in place of the include.
std::string inline_source(const std::string& text, const std::vector<NamedTransfer>& transfers,
                          Target target) {
  std::string functions;
  for (const NamedTransfer& t : transfers)
    functions += device_function(t.spec, t.options, target).value().source;
  std::string out = text;
  out.replace(out.find(kInclude), kInclude.size(), functions);
  return out;
}

std::optional<sass::Listing> listing_of(std::span<const char> cubin) {
  const auto tool = sass::find_disassembler();
  if (!tool) return std::nullopt;
  auto text = sass::disassemble(*tool, cubin);
  EXPECT_TRUE(text.ok()) << text.error().full_text();
  if (!text.ok()) return std::nullopt;
  return sass::Listing(*text);
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

class WsGemm : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    saved_ = cache_options();
    set_cache_dir(dir_.path().string());
    ASSERT_TRUE(clear_cache(false).ok());
  }
  void TearDown() override { set_cache_options(saved_); }
  testing::TempDir dir_;
  CacheOptions saved_;
};

// The whole SASS, instruction for instruction, is NVRTC's of the inline source: the TMA and MMA
// warps are untouched (one MMA-issue loop: 4 UTCHMMA for the 64-deep stage, two UTCBAR, no
// ENDCOLLECTIVE-guarded copy), the epilogue loads with the plan's LDTMs, nothing spills.
TEST_F(WsGemm, SassEqualsNvrtcOfTheInlineSourceForEveryLayoutAndTarget) {
  SKIP_WITHOUT_CUTE();
  const KernelSource source = gemm_source("sass");
  const auto tool = sass::find_disassembler();
  for (Target target : {Target::kSm100a, Target::kSm100f}) {
    for (const char* name : {"x32", "x64", "16x256b"}) {
      SCOPED_TRACE(std::string(to_string(target)) + " " + name);
      const std::vector<NamedTransfer> transfers = acc_load(name);
      CompileOptions options;
      options.target = target;
      options.nvrtc_options = user_options();
      CompileReport report;
      auto kernel = compile_kernel(source, transfers, options, &report);
      ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
      EXPECT_EQ(report.cache, CacheSource::kCompiled);
      EXPECT_TRUE(report.warnings.empty()) << report.warnings[0];
      EXPECT_EQ(report.code.local_bytes, 0) << "no local memory";
      const Plan plan = check(transfers[0].spec).value();
      // One chunk loop, not unrolled: the plan's loads once.
      EXPECT_EQ(report.code.ldtm, plan.instructions_per_warp()) << report.code.disassembler;

      CompileOptions reference;
      reference.target = target;
      reference.nvrtc_options = nvrtc_reference_options();
      auto nvrtc = compile_cuda(inline_source(source.text, transfers, target), "", reference);
      ASSERT_TRUE(nvrtc.ok()) << nvrtc.error().full_text();
      if (!tool) continue;  // skipped below, with the reason
      const auto ours = listing_of(kernel->cubin());
      const auto theirs = listing_of(nvrtc->cubin);
      ASSERT_TRUE(ours && theirs);
      const std::vector<std::string>& a = ours->mnemonics();
      const std::vector<std::string>& b = theirs->mnemonics();
      size_t first = 0;
      while (first < a.size() && first < b.size() && a[first] == b[first]) ++first;
      EXPECT_EQ(a.size(), b.size()) << "compile_kernel's SASS against NVRTC's";
      EXPECT_TRUE(first == a.size() && first == b.size())
          << "they differ first at instruction " << first << ": "
          << (first < a.size() ? a[first] : "(end)") << " against "
          << (first < b.size() ? b[first] : "(end)");
      for (const char* mnemonic : {"UTCHMMA", "UTCBAR", "ENDCOLLECTIVE", "LDTM", "UTMALDG"})
        EXPECT_EQ(ours->count(mnemonic), theirs->count(mnemonic)) << mnemonic;
      EXPECT_EQ(ours->count("UTCHMMA"), 4) << "64-deep stages of 16-deep MMAs, issued once";
      EXPECT_EQ(ours->count("UTCBAR"), 2) << "the stage's multicast commit, the accumulator's";
      EXPECT_EQ(ours->count("ENDCOLLECTIVE"), 0) << "no second, collective copy of the MMA loop";
      EXPECT_EQ(ours->count("UTMALDG"), 2) << "A, and B multicast";
      EXPECT_EQ(ours->count("LDTM"), plan.instructions_per_warp());
      EXPECT_FALSE(ours->uses_local_memory());
    }
  }
  if (!tool) GTEST_SKIP() << "compiled; SASS not compared: " << sass::search_description();
}

// The kernel copied beside a header of its own that sets the pipeline depth: editing the header is
// a miss with a new key and a new entry, and the edit reaches the code.
TEST_F(WsGemm, EditingAnIncludedHeaderIsAMissAndANewEntry) {
  SKIP_WITHOUT_CUTE();
  testing::TempDir copy;
  ASSERT_TRUE(copy.ok());
  const std::filesystem::path header = copy.path() / "ws_gemm_config.h";
  write_file(header, "#define WS_GEMM_STAGES 4\n");
  KernelSource source = gemm_source("edited header");
  const std::string cute = "#include <cute/tensor.hpp>";
  ASSERT_NE(source.text.find(cute), std::string::npos);
  source.text.replace(source.text.find(cute), cute.size(),
                      cute + "\n#include \"ws_gemm_config.h\"");
  const std::string stages = "constexpr int kStages = 4;";
  ASSERT_NE(source.text.find(stages), std::string::npos);
  source.text.replace(source.text.find(stages), stages.size(),
                      "constexpr int kStages = WS_GEMM_STAGES;");
  write_file(copy.path() / "ws_gemm_sm100.cu", source.text);
  source.path = (copy.path() / "ws_gemm_sm100.cu").string();
  CompileOptions options;
  options.nvrtc_options = user_options();
  options.nvrtc_options.push_back("-I" + copy.path().string());
  const std::vector<NamedTransfer> transfers = acc_load("x32");

  CompileReport first, again, edited, edited_again;
  auto a = compile_kernel(source, transfers, options, &first);
  ASSERT_TRUE(a.ok()) << a.error().full_text();
  EXPECT_EQ(first.cache, CacheSource::kCompiled);
  EXPECT_GT(first.include_files, 100) << "CuTe's headers and the local one are in the key";
  ASSERT_TRUE(compile_kernel(source, transfers, options, &again).ok());
  EXPECT_EQ(again.cache, CacheSource::kMemory);
  EXPECT_EQ(again.key, first.key);
  const std::string ptx_before(a->ptx());

  const uint64_t entries = cache_stats().entries;
  const uint64_t writes = cache_stats().disk_writes;
  write_file(header, "#define WS_GEMM_STAGES 3\n");
  auto b = compile_kernel(source, transfers, options, &edited);
  ASSERT_TRUE(b.ok()) << b.error().full_text();
  EXPECT_EQ(edited.cache, CacheSource::kCompiled) << "an edited header is a miss";
  EXPECT_NE(edited.key, first.key);
  EXPECT_EQ(edited.headers, "deferred: made in the background for the next layout")
      << "a new parse, never the old precompiled header";
  EXPECT_EQ(cache_stats().entries, entries + 1) << "a new entry beside the old one";
  EXPECT_EQ(cache_stats().disk_writes, writes + 1);
  EXPECT_NE(std::string(b->ptx()), ptx_before) << "three stages, not four";
  ASSERT_TRUE(compile_kernel(source, transfers, options, &edited_again).ok());
  EXPECT_EQ(edited_again.cache, CacheSource::kMemory);
  EXPECT_EQ(edited_again.key, edited.key);
}

// A layout of another register count (32x32b.x64: 128 registers against 64) reuses the parse of
// CuTe: NVRTC's precompiled header stops before the transfers, so N_regs is never in it.
TEST_F(WsGemm, ANewRegisterCountReusesTheParsedHeaders) {
  SKIP_WITHOUT_CUTE();
  const KernelSource source = gemm_source("new register count");
  CompileOptions options;
  options.nvrtc_options = user_options();
  CompileReport first, second;
  auto start = std::chrono::steady_clock::now();
  auto a = compile_kernel(source, acc_load("x32"), options, &first);
  const double first_ms = ms_since(start);
  ASSERT_TRUE(a.ok()) << a.error().full_text();
  EXPECT_EQ(first.headers, "deferred: made in the background for the next layout");
  EXPECT_EQ(first.front_end_cache, CacheSource::kCompiled);
  wait_background_compiles();  // CuTe's parse, made while the first layout compiled
  start = std::chrono::steady_clock::now();
  auto b = compile_kernel(source, acc_load("x64"), options, &second);
  const double second_ms = ms_since(start);
  ASSERT_TRUE(b.ok()) << b.error().full_text();
  ASSERT_EQ(second.transfers.size(), 1u);
  EXPECT_NE(second.transfers[0].regs_per_thread, first.transfers[0].regs_per_thread);
  EXPECT_EQ(second.cache, CacheSource::kCompiled);
  EXPECT_EQ(second.front_end_cache, CacheSource::kMemory);
  EXPECT_EQ(second.headers, "reused");
  EXPECT_EQ(second.code.ldtm, check(acc_load("x64")[0].spec)->instructions_per_warp());
  // Timing is reported, not asserted (bench/kernel_bench.cc measures it).
  RecordProperty("first_ms", std::to_string(first_ms));
  RecordProperty("new_register_count_ms", std::to_string(second_ms));
  std::printf(
      "first layout %.0f ms (NVRTC %.0f, PTX compile %.0f), new register count %.0f ms (NVRTC "
      "%.0f, PTX compile %.0f): %.1fx\n",
      first_ms, first.front_end_ms, first.ptx_compile_ms, second_ms, second.front_end_ms,
      second.ptx_compile_ms, first_ms / second_ms);
}

}  // namespace
}  // namespace tmem
