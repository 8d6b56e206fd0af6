// The key is the text NVRTC read (docs/cache.md "Headers"; issue 39 item 2): a header reached
// through a computed include named by -D is in the key; one the scan cannot follow (over 200 deep)
// makes the kernel uncached with a warning; a header edited while a compile runs never leaves that
// kernel in the cache. Real compiles (label cache).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "common/cache_test_util.h"
#include "common/files.h"
#include "jit/roundtrip_kernel.h"
#include "tmem/cache.h"
#include "tmem/specialize.h"

namespace tmem {
namespace {
namespace fs = std::filesystem;
using testing::kRoundtrip;
using testing::TempDir;
using testing::write_file;

NamedTransfer transfer(const std::string& name, std::string as) {
  DeviceFunctionOptions options;
  options.name = std::move(as);
  return {
      TransferSpec::from_json(testing::read_file(std::string(TMEMJIT_SOURCE_DIR) +
                                                 "/examples/epilogue/layouts/" + name + ".json"))
          .value(),
      options};
}
std::vector<NamedTransfer> transfers() {
  return {transfer("d_x32_st", "acc_st"), transfer("d_x32_ld", "acc_ld")};
}

// The roundtrip kernel scaled by SCALE, which `include_line` brings in.
KernelSource scaled_source(const std::string& include_line, const std::string& extra = "") {
  std::string text = include_line + "\n" + kRoundtrip;
  const std::string plain = "regs[s] = index[0] < 0 ? 0.0f : in[index[0] * 128 + index[1]];";
  text.replace(text.find(plain), plain.size(),
               "regs[s] = index[0] < 0 ? 0.0f : SCALE * in[index[0] * 128 + index[1]];" + extra);
  return {Language::kCuda, text, "roundtrip", "roundtrip.cu"};
}

bool has_warning(const CompileReport& report, const std::string& part) {
  for (const std::string& warning : report.warnings)
    if (warning.find(part) != std::string::npos) return true;
  return false;
}

class IncludeKey : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(cache_dir_.ok() && headers_.ok());
    saved_ = cache_options();
    set_cache_dir(cache_dir_.path().string());
    ASSERT_TRUE(clear_cache(false).ok());
    options_.target = Target::kSm100a;
    options_.nvrtc_options = {"-I" + headers_.path().string()};
  }
  void TearDown() override { set_cache_options(saved_); }
  CompileReport compile(const KernelSource& source) {
    CompileReport report;
    auto kernel = compile_kernel(source, transfers(), options_, &report);
    EXPECT_TRUE(kernel.ok()) << kernel.error().full_text();
    ptx_ = kernel.ok() ? std::string(kernel->ptx()) : std::string();
    return report;
  }
  TempDir cache_dir_, headers_;
  CacheOptions saved_;
  CompileOptions options_;
  std::string ptx_;
};

// N04: `#include HDR` with -DHDR="mark.h": the scan expands HDR with the command line's macros.
TEST_F(IncludeKey, AComputedIncludeNamedByDashDIsInTheKey) {
  write_file(headers_.path() / "mark.h", "#define SCALE 5.0f\n");
  options_.nvrtc_options.push_back("-DHDR=\"mark.h\"");
  const KernelSource source = scaled_source("#include HDR");
  const CompileReport first = compile(source);
  EXPECT_EQ(first.include_files, 1);
  EXPECT_TRUE(first.cache_enabled);
  EXPECT_NE(ptx_.find("0f40A00000"), std::string::npos) << "5.0f";
  write_file(headers_.path() / "mark.h", "#define SCALE 7.0f\n");
  const CompileReport edited = compile(source);
  EXPECT_EQ(edited.cache, CacheSource::kCompiled) << "an edited header is a miss";
  EXPECT_NE(ptx_.find("0f40E00000"), std::string::npos) << "7.0f, never the old kernel";
}

// N12: a chain of 210 headers; SCALE is defined at the bottom, past the scan's 200 levels.
TEST_F(IncludeKey, AnIncludeDeeperThanTheScanFollowsIsNeverCached) {
  constexpr int kDepth = 210;
  for (int i = 0; i < kDepth; ++i)
    write_file(headers_.path() / ("h" + std::to_string(i) + ".h"),
               "#include \"h" + std::to_string(i + 1) + ".h\"\n");
  write_file(headers_.path() / ("h" + std::to_string(kDepth) + ".h"), "#define SCALE 5.0f\n");
  const KernelSource source = scaled_source("#include <h0.h>");
  const CompileReport first = compile(source);
  EXPECT_FALSE(first.cache_enabled);
  EXPECT_TRUE(has_warning(first, "compiled each time and never cached")) << first.tier_reason;
  EXPECT_NE(ptx_.find("0f40A00000"), std::string::npos) << "5.0f";
  write_file(headers_.path() / ("h" + std::to_string(kDepth) + ".h"), "#define SCALE 7.0f\n");
  const CompileReport edited = compile(source);
  EXPECT_EQ(edited.cache, CacheSource::kCompiled);
  EXPECT_NE(ptx_.find("0f40E00000"), std::string::npos) << "7.0f, never the old kernel";
  // No tier can be cached either: lazy is eager and says why.
  options_.specialization = Specialization::kLazy;
  const CompileReport lazy = compile(source);
  EXPECT_EQ(lazy.tier, "specialized");
  EXPECT_NE(lazy.tier_reason.find("no tier can be cached"), std::string::npos) << lazy.tier_reason;
}

// N03: the header rewritten 0.3 s into a compile of over a second and put back at 0.6 s. The
// kernel that compile made is used once and not cached; the next call compiles again.
TEST_F(IncludeKey, AHeaderEditedDuringTheCompileLeavesNothingInTheCache) {
  const fs::path header = headers_.path() / "scale.h";
  write_file(header, "#define SCALE 5.0f\n");
  std::string chain;  // dependent sinf calls: a compile of over a second
  for (int i = 0; i < 64; ++i) chain += "\n    regs[s] = sinf(regs[s]) * in[((int)regs[s]) & 7];";
  const KernelSource source = scaled_source("#include <scale.h>", chain);
  std::thread editor([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    write_file(header, "#define SCALE 7.0f\n");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    write_file(header, "#define SCALE 5.0f\n");
  });
  const CompileReport during = compile(source);
  editor.join();
  EXPECT_TRUE(has_warning(during, "changed while it compiled"));
  EXPECT_FALSE(during.cache_enabled);
  const CompileReport after = compile(source);
  EXPECT_EQ(after.cache, CacheSource::kCompiled) << "nothing of the edited compile was kept";
  EXPECT_TRUE(after.cache_enabled);
  EXPECT_NE(ptx_.find("0f40A00000"), std::string::npos) << "5.0f";
}

}  // namespace
}  // namespace tmem
