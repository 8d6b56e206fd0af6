// Exit as a defined point (docs/reliability.md "Exit"; issue 39 N01, N21): processes that end
// while a compile runs, a lazy kernel's background compile or a thread of the host's own, exit 0
// with their output intact, and the compile they waited for lands in the cache. Label cache.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "common/cache_test_util.h"
#include "common/files.h"
#include "jit/roundtrip_kernel.h"
#include "runtime/support/exit_point.h"
#include "runtime/support/subprocess.h"
#include "tmem/cache.h"
#include "tmem/specialize.h"

namespace tmem {
namespace {
namespace fs = std::filesystem;
using testing::kRoundtrip;
using testing::TempDir;

std::string layout_path(const std::string& name) {
  return std::string(TMEMJIT_SOURCE_DIR) + "/examples/epilogue/layouts/" + name + ".json";
}

// Two layouts of one signature (64 registers per thread each): one generic tier serves both.
struct Layout {
  const char* store;
  const char* load;
};
constexpr Layout kLayouts[] = {{"d_x32_st", "d_x32_ld"}, {"f_16x256b_st", "f_16x256b_ld"}};

// How many processes each test starts: TMEMJIT_EXIT_RUNS (the 50 on the H200 runs), else 8.
int runs() {
  const char* text = std::getenv("TMEMJIT_EXIT_RUNS");
  const int n = text != nullptr ? std::atoi(text) : 0;
  return n > 0 ? n : 8;
}

class ExitDuringCompile : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(work_.ok());
    source_ = (work_.path() / "roundtrip.cu").string();
    testing::write_file(source_, kRoundtrip);
  }

  Result<ProcessOutput> child(const std::string& mode, const fs::path& cache,
                              const Layout& layout) const {
    return run_process({TMEMJIT_EXIT_CHILD_PATH, mode, cache.string(), source_,
                        layout_path(layout.store), layout_path(layout.load)});
  }
  // Where the child's exit left its cache: an eager compile of its layout there is a disk hit
  // when the compile the child exited during finished and was stored.
  std::string landed(const fs::path& cache, const Layout& layout) const {
    auto out = child("eager", cache, layout);
    EXPECT_TRUE(out.ok() && out->exit_code == 0) << (out.ok() ? out->output : "");
    return out.ok() ? out->output : "";
  }

  TempDir work_;
  std::string source_;
};

TEST_F(ExitDuringCompile, LazyProcessesExitCleanlyAndTheSpecializedKernelLands) {
  // One generic tier for the signature, copied into each child's cache: every child's lazy call
  // returns the generic tier at once and exits while its specialized kernel compiles.
  const fs::path warm = work_.path() / "warm";
  fs::create_directories(warm);
  auto warmed = child("warmup", warm, kLayouts[0]);
  ASSERT_TRUE(warmed.ok() && warmed->exit_code == 0) << (warmed.ok() ? warmed->output : "");
  for (int i = 0; i < runs(); ++i) {
    SCOPED_TRACE("run " + std::to_string(i));
    const Layout& layout = kLayouts[i % 2];
    const fs::path cache = work_.path() / ("run" + std::to_string(i));
    fs::copy(warm, cache, fs::copy_options::recursive);
    auto out = child("lazy", cache, layout);
    ASSERT_TRUE(out.ok()) << out.error().full_text();
    EXPECT_EQ(out->exit_code, 0) << out->output;
    EXPECT_EQ(out->output, "tier=generic now=generic running=1\n");  // exited mid-compile
    EXPECT_EQ(landed(cache, layout), "disk\n");
    fs::remove_all(cache);
  }
}

// The roundtrip kernel with kSlowChain dependent sinf calls before its store: about a second of
// compile on a quiet 2-core machine. With 20 (0.3 s) a fast host finished the compile before the
// child's exit at 300 ms (CI, 2026-12-08).
constexpr int kSlowChain = 80;
std::string slow_to_compile() {
  std::string text = kRoundtrip;
  std::string chain;
  for (int i = 0; i < kSlowChain; ++i)
    chain += "  regs[0] = sinf(regs[0]) * in[((int)regs[0]) & 7];\n";
  text.insert(text.find("  acc_st(base, regs);"), chain);
  return text;
}

TEST_F(ExitDuringCompile, AHostWorkerInsideACompileIsWaitedFor) {
  testing::write_file(source_, slow_to_compile());
  for (int i = 0; i < runs(); ++i) {
    SCOPED_TRACE("run " + std::to_string(i));
    const Layout& layout = kLayouts[i % 2];
    const fs::path cache = work_.path() / ("run" + std::to_string(i));
    fs::create_directories(cache);
    auto out = child("thread", cache, layout);
    ASSERT_TRUE(out.ok()) << out.error().full_text();
    EXPECT_EQ(out->exit_code, 0) << out->output;
    EXPECT_EQ(out->output, "returning done=0\n");  // exited mid-compile
    EXPECT_EQ(landed(cache, layout), "disk\n");
    fs::remove_all(cache);
  }
}

// In process: what the exit handler does, without exiting. A compile started after it ran is
// refused with a message that says why; the background compiler drops what is queued.
TEST(ExitPointDeathTest, ACompileAfterExitBeganIsRefused) {
  EXPECT_EXIT(
      {
        ExitPoint::instance().run();
        auto kernel = compile_kernel({Language::kCuda, kRoundtrip, "roundtrip", "roundtrip.cu"}, {},
                                     CompileOptions{});
        const bool refused = !kernel.ok() && kernel.error().message().find(
                                                 "the process is exiting") != std::string::npos;
        std::_Exit(refused ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace tmem
