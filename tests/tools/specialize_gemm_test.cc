// tmemjit specialize on a CuTe kernel from the command line (issue 28): the warp-specialized SM100
// GEMM of tests/jit/kernels compiles for sm_100a and sm_100f with nothing beyond CuTe's -I and
// -default-device. Label cute: without CuTe's headers it skips with the reason.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/cli_util.h"

namespace {

using tmemjit_test::CliResult;
using tmemjit_test::run_cli_argv;
namespace fs = std::filesystem;

const std::string kKernels = std::string(TMEMJIT_SOURCE_DIR) + "/tests/jit/kernels";

std::string cute_dir() {
  std::string dir;
#ifdef TMEMJIT_CUTE_INCLUDE_DIR
  dir = TMEMJIT_CUTE_INCLUDE_DIR;
#endif
  if (const char* env = std::getenv("TMEMJIT_CUTE_INCLUDE"); env && *env) dir = env;
  if (dir.empty() || !fs::exists(dir + "/cute/tensor.hpp")) return {};
  return dir;
}

TEST(CliSpecializeGemm, CuteKernelForEachFamilyTargetWithCutesIncludeAndDefaultDevice) {
  const std::string cute = cute_dir();
  if (cute.empty())
    GTEST_SKIP() << "CuTe headers not found: pip install nvidia-cutlass==4.2.0.0 or set "
                    "TMEMJIT_CUTLASS_DIR and reconfigure (or TMEMJIT_CUTE_INCLUDE)";
  const fs::path cache =
      fs::temp_directory_path() / ("tmemjit_cli_specialize_gemm_" + std::to_string(::getpid()));
  for (const char* target : {"sm_100a", "sm_100f"}) {
    SCOPED_TRACE(target);
    // No --entry: the file's one kernel is found past its __cluster_dims__ attribute.
    const CliResult run =
        run_cli_argv({"specialize", kKernels + "/ws_gemm_sm100.cu", "--transfer",
                      "acc_load=" + kKernels + "/ws_gemm_layouts/x32.json", "--warp-arg",
                      "--column-arg", "--no-wait", "-I", cute, "-default-device", "--target",
                      target, "--json", "--cache-dir", cache.string()});
    ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
    const auto j = nlohmann::json::parse(run.out);
    EXPECT_EQ(j["ok"], true);
    EXPECT_EQ(j["entry"], "ws_gemm_bf16");
    EXPECT_EQ(j["target"], target);
    EXPECT_EQ(j["cache"], "miss");
    EXPECT_EQ(j["headers"], "deferred: made in the background for the next layout")
        << "CuTe, before the transfers, is precompiled for later layouts";
    EXPECT_GT(j["include_files"].get<int>(), 100);
    EXPECT_TRUE(j["warnings"].empty()) << j["warnings"];
    ASSERT_EQ(j["transfers"].size(), 1u);
    EXPECT_EQ(j["transfers"][0]["op"], "tcgen05.ld.sync.aligned.32x32b.x32.b32");
    EXPECT_EQ(j["transfers"][0]["regs_per_thread"], 64);
    EXPECT_EQ(j["code"]["local_bytes"], 0);
    const int ldtm = j["code"]["ldtm"].get<int>();
    if (ldtm >= 0) EXPECT_EQ(ldtm, 2) << "the plan's two 32x32b.x32 loads, once";
  }
  std::error_code ec;
  fs::remove_all(cache, ec);
}

}  // namespace
