// tmemjit ptx --kernel cuda|func with the device function's options, and tmemjit specialize
// (docs/design.md §Specialization): its JSON, the cache tiers across processes, and its errors and
// exit codes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/cli_util.h"
#include "common/ptx_fixtures.h"
#include "common/spec_fixtures.h"

namespace {

using tmemjit_test::CliResult;
using tmemjit_test::run_cli_argv;
namespace fs = std::filesystem;

const std::string kExample = std::string(TMEMJIT_SOURCE_DIR) + "/examples/epilogue";

CliResult run_seed_ptx(std::vector<std::string> extra, bool store = false) {
  const auto spec = tmemjit_test::seed_layout_b(store);
  std::vector<std::string> argv = {"ptx",    "--op",    spec.op,  "--scope", spec.scope,
                                   "--tmem", spec.tmem, "--regs", spec.regs};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return run_cli_argv(argv);
}

class ScratchDir {
 public:
  ScratchDir() {
    path_ = fs::temp_directory_path() / ("tmemjit_cli_specialize_" + std::to_string(::getpid()) +
                                         "_" + std::to_string(counter_++));
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name, const std::string& text = {}) const {
    const std::string at = (path_ / name).string();
    if (!text.empty()) std::ofstream(at) << text;
    return at;
  }
  std::string path() const { return path_.string(); }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

TEST(CliPtx, DeviceFunctionOptions) {
  const CliResult cuda = run_seed_ptx(
      {"--kernel", "cuda", "--name", "acc", "--no-wait", "--warp-arg", "--column-arg"});
  ASSERT_EQ(cuda.exit_code, 0) << cuda.err;
  EXPECT_NE(cuda.out.find("__device__ __forceinline__ void acc(unsigned int tmem_base, unsigned "
                          "int (&regs)[64], unsigned int warp, unsigned int column)"),
            std::string::npos)
      << cuda.out;
  EXPECT_NE(cuda.out.find("void acc_wait()"), std::string::npos);
  EXPECT_NE(cuda.out.find("void acc_coord("), std::string::npos);
  EXPECT_NE(cuda.out.find("constexpr int acc_regs = 64;"), std::string::npos);
  EXPECT_EQ(cuda.out.find("__global__"), std::string::npos);
  EXPECT_EQ(cuda.out.find("extern \"C\""), std::string::npos);

  const CliResult func = run_seed_ptx({"--kernel", "func", "--name", "acc", "--column-arg"});
  ASSERT_EQ(func.exit_code, 0) << func.err;
  EXPECT_NE(func.out.find(") acc(\n\t.param .b32 tmem_base,\n\t.param .b32 column\n)"),
            std::string::npos)
      << func.out;
  EXPECT_NE(func.out.find(".visible .func acc_wait()"), std::string::npos);

  const CliResult emulated = run_seed_ptx({"--kernel", "cuda", "--target", "sm_90"});
  ASSERT_EQ(emulated.exit_code, 0) << emulated.err;
  EXPECT_NE(emulated.out.find("tmemjit::emu::resolve("), std::string::npos);
  EXPECT_EQ(emulated.out.find("tcgen05."), emulated.out.find("tcgen05.ld.sync.aligned.32x32b.x64"))
      << "no tcgen05 instruction, only comments naming it";

  const CliResult misuse = run_seed_ptx({"--kernel", "roundtrip", "--no-wait"});
  EXPECT_EQ(misuse.exit_code, 2);
  EXPECT_NE(misuse.err.find("--no-wait shapes a device function"), std::string::npos) << misuse.err;
  const CliResult bad_name = run_seed_ptx({"--kernel", "cuda", "--name", "9lives"});
  EXPECT_EQ(bad_name.exit_code, 2);
  EXPECT_NE(bad_name.err.find("error: transfer name '9lives' starts with a digit"),
            std::string::npos)
      << bad_name.err;
  // A spec file given where the SPEC options go: the error says where it belongs.
  const std::string layout = kExample + "/layouts/d_x32_ld.json";
  const CliResult file = run_cli_argv({"ptx", layout, "--kernel", "func"});
  EXPECT_EQ(file.exit_code, 2);
  EXPECT_NE(file.err.find("a spec file goes in --spec " + layout), std::string::npos) << file.err;
  EXPECT_EQ(run_cli_argv({"ptx", "--spec", layout, "--kernel", "func"}).exit_code, 0);
}

std::vector<std::string> epilogue_args(const std::string& load, const std::string& store) {
  return {"specialize", kExample + "/epilogue.cu",
          "--transfer", "acc_load=" + kExample + "/layouts/" + load + ".json",
          "--transfer", "acc_store=" + kExample + "/layouts/" + store + ".json",
          "--no-wait",  "--column-arg",
          "--json"};
}

CliResult specialize(std::vector<std::string> argv, const std::vector<std::string>& extra) {
  argv.insert(argv.end(), extra.begin(), extra.end());
  return run_cli_argv(argv);
}

// The fields of docs/design.md §Specialization, then a second process finds the first's entry on
// disk.
TEST(CliSpecialize, JsonFieldsAndASecondProcessHitsTheDisk) {
  ScratchDir dir;
  const std::string cubin = dir.file("epilogue.cubin");
  const CliResult first =
      specialize(epilogue_args("d_x32_ld", "d_x32_st"), {"--cache-dir", dir.path(), "-o", cubin});
  ASSERT_EQ(first.exit_code, 0) << first.err << first.out;
  const auto j = nlohmann::json::parse(first.out);
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["entry"], "epilogue");
  EXPECT_EQ(j["cache"], "miss");
  EXPECT_EQ(j["front_end"], "miss");
  EXPECT_GT(j["compile_ms"].get<double>(), 0);
  EXPECT_GT(j["cubin_bytes"].get<size_t>(), 0u);
  EXPECT_EQ(fs::file_size(cubin), j["cubin_bytes"].get<size_t>());
  ASSERT_EQ(j["transfers"].size(), 2u);
  EXPECT_EQ(j["transfers"][0]["name"], "acc_load");
  EXPECT_EQ(j["transfers"][0]["regs_per_thread"], 64);
  EXPECT_EQ(j["transfers"][0]["instructions_per_warp"], 2);
  EXPECT_EQ(j["target"], "sm_100a");

  const CliResult second =
      specialize(epilogue_args("d_x32_ld", "d_x32_st"), {"--cache-dir", dir.path()});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const auto k = nlohmann::json::parse(second.out);
  EXPECT_EQ(k["cache"], "disk");
  EXPECT_EQ(k["key"], j["key"]);
  EXPECT_EQ(k["compile_ms"], 0);

  // Another layout: this process compiles it. The epilogue includes nothing before the
  // transfers, so there are no headers to precompile, and the report says so.
  const CliResult other =
      specialize(epilogue_args("f_16x256b_ld", "f_16x256b_st"), {"--cache-dir", dir.path()});
  ASSERT_EQ(other.exit_code, 0) << other.err;
  const auto f = nlohmann::json::parse(other.out);
  EXPECT_EQ(f["cache"], "miss");
  EXPECT_EQ(f["front_end"], "miss");
  EXPECT_EQ(f["headers"], "none: no header before the transfers");
  EXPECT_GT(f["front_end_ms"].get<double>(), 0);
  EXPECT_EQ(f["link_ms"], 0.0);  // deprecated, kept one release (CHANGELOG.md)
  EXPECT_EQ(f["code"]["local_bytes"], 0);
  EXPECT_GT(f["code"]["instructions"].get<int>(), 0);
}

// The tiers from the command line (docs/specialization.md §Tiers): warmup builds the generic
// tier, a second process's lazy specialize of a new layout answers with it, a bad policy is a
// usage error naming the allowed set.
TEST(CliSpecialize, WarmupThenLazyAnswersANewLayoutWithTheGenericTier) {
  ScratchDir dir;
  std::vector<std::string> warmup = epilogue_args("d_x32_ld", "d_x32_st");
  warmup[0] = "warmup";
  const CliResult warm = specialize(warmup, {"--cache-dir", dir.path()});
  ASSERT_EQ(warm.exit_code, 0) << warm.err << warm.out;
  EXPECT_EQ(nlohmann::json::parse(warm.out)["tier"], "generic");
  const CliResult lazy = specialize(epilogue_args("f_16x256b_ld", "f_16x256b_st"),
                                    {"--cache-dir", dir.path(), "--specialization", "lazy"});
  ASSERT_EQ(lazy.exit_code, 0) << lazy.err << lazy.out;
  const auto j = nlohmann::json::parse(lazy.out);
  EXPECT_EQ(j["tier"], "generic");
  EXPECT_EQ(j["cache"], "disk");
  EXPECT_EQ(j["tier_reason"], "");
  // The command waited for the specialized kernel it started (issue 39 N07): it is on disk.
  const CliResult eager =
      specialize(epilogue_args("f_16x256b_ld", "f_16x256b_st"), {"--cache-dir", dir.path()});
  ASSERT_EQ(eager.exit_code, 0) << eager.err << eager.out;
  EXPECT_EQ(nlohmann::json::parse(eager.out)["cache"], "disk");
  const CliResult bad = specialize(epilogue_args("d_x32_ld", "d_x32_st"),
                                   {"--no-cache", "--specialization", "sometimes"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("eager, lazy, generic"), std::string::npos) << bad.out << bad.err;
}

// A generic tier's cubin carries no layout (its descriptors are written at launch): -o refuses it
// rather than write a file that is the same for every layout of the signature (issue 39 N22).
TEST(CliSpecialize, OutputOfAGenericTierIsRefused) {
  ScratchDir dir;
  const std::string cubin = dir.path() + "/generic.cubin";
  const CliResult generic =
      specialize(epilogue_args("d_x32_ld", "d_x32_st"),
                 {"--cache-dir", dir.path(), "--specialization", "generic", "-o", cubin});
  EXPECT_EQ(generic.exit_code, 2) << generic.err << generic.out;
  EXPECT_NE(generic.out.find("tmemjit_desc_"), std::string::npos) << generic.out;
  EXPECT_FALSE(std::filesystem::exists(cubin));
  // Lazy answered by that generic tier: -o waits for the layout's own kernel and writes it.
  const CliResult lazy =
      specialize(epilogue_args("f_16x256b_ld", "f_16x256b_st"),
                 {"--cache-dir", dir.path(), "--specialization", "lazy", "-o", cubin});
  ASSERT_EQ(lazy.exit_code, 0) << lazy.err << lazy.out;
  EXPECT_EQ(nlohmann::json::parse(lazy.out)["tier"], "specialized");
  EXPECT_TRUE(std::filesystem::exists(cubin));
}

// Lazy with no generic tier cached compiles the specialized kernel and promises the generic tier
// for the next layout (tier_reason): the command builds it before it exits (issue 39 N07), so a
// warmup in the next process finds it on disk.
TEST(CliSpecialize, LazyBuildsThePromisedGenericTierBeforeExiting) {
  ScratchDir dir;
  const CliResult lazy = specialize(epilogue_args("d_x32_ld", "d_x32_st"),
                                    {"--cache-dir", dir.path(), "--specialization", "lazy"});
  ASSERT_EQ(lazy.exit_code, 0) << lazy.err << lazy.out;
  const auto j = nlohmann::json::parse(lazy.out);
  EXPECT_EQ(j["tier"], "specialized");
  EXPECT_NE(j["tier_reason"].get<std::string>().find("builds in the background"), std::string::npos)
      << j["tier_reason"];
  std::vector<std::string> warmup = epilogue_args("f_16x256b_ld", "f_16x256b_st");
  warmup[0] = "warmup";
  const CliResult warm = specialize(warmup, {"--cache-dir", dir.path()});
  ASSERT_EQ(warm.exit_code, 0) << warm.err << warm.out;
  EXPECT_EQ(nlohmann::json::parse(warm.out)["cache"], "disk");
}

// Every tcgen05 target, family targets included, specializes from the command line; -Xnvrtc and
// -Xptxas reach their compilers (repeatable), -std and -default-device go to NVRTC directly, and a
// wrong option is a usage error (exit 2) naming it, before any compile.
TEST(CliSpecialize, EveryTargetAndTheCompilersOptions) {
  ScratchDir dir;
  for (const char* target : {"sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f"}) {
    const CliResult run =
        specialize(epilogue_args("d_x32_ld", "d_x32_st"), {"--no-cache", "--target", target});
    ASSERT_EQ(run.exit_code, 0) << target << ": " << run.err << run.out;
    EXPECT_EQ(nlohmann::json::parse(run.out)["target"], target);
  }
  const CliResult options =
      specialize(epilogue_args("d_x32_ld", "d_x32_st"),
                 {"--no-cache", "-std=c++20", "-default-device", "-Xnvrtc", "--device-int128",
                  "-Xnvrtc", "--diag-suppress=177", "-Xptxas", "-maxrregcount=128",
                  "-Xptxas=--allow-expensive-optimizations=true"});
  ASSERT_EQ(options.exit_code, 0) << options.err << options.out;
  const CliResult wrong =
      specialize(epilogue_args("d_x32_ld", "d_x32_st"), {"--no-cache", "-Xptxas", "--bogus"});
  EXPECT_EQ(wrong.exit_code, 2) << wrong.err << wrong.out;
  EXPECT_NE(wrong.out.find("--bogus"), std::string::npos) << wrong.out;
  const CliResult compile =
      run_cli_argv({"compile", "--spec", kExample + "/layouts/d_x32_ld.json", "--no-cache",
                    "--target", "sm_100f", "-Xptxas", "-maxrregcount=128", "--json"});
  EXPECT_EQ(compile.exit_code, 0) << compile.err << compile.out;
}

// --front-end nvcc (docs/specialization.md "nvcc as the front end"), for a real target and for
// the emulation, whose front end makes the PTX that is lowered.
TEST(CliSpecialize, TheNvccFrontEnd) {
  for (const char* target : {"sm_100a", "sm_90"}) {
    const CliResult run = specialize(epilogue_args("d_x32_ld", "d_x32_st"),
                                     {"--no-cache", "--front-end", "nvcc", "--target", target});
    ASSERT_EQ(run.exit_code, 0) << target << ": " << run.err << run.out;
    const auto j = nlohmann::json::parse(run.out);
    EXPECT_EQ(j["headers"], "off: the nvcc front end has no in-process precompiled headers");
    EXPECT_EQ(j["target"], target);
  }
  const CliResult wrong =
      specialize(epilogue_args("d_x32_ld", "d_x32_st"), {"--no-cache", "--front-end", "clang"});
  EXPECT_EQ(wrong.exit_code, 2) << wrong.err << wrong.out;
  EXPECT_NE((wrong.out + wrong.err).find("allowed: nvrtc, nvcc"), std::string::npos)
      << wrong.err << wrong.out;
}

TEST(CliSpecialize, EmulationTargetAndNoCache) {
  const CliResult r =
      specialize(epilogue_args("d_x32_ld", "d_x32_st"), {"--target", "sm_90", "--no-cache"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["target"], "sm_90");
  EXPECT_EQ(j["emulated"], true);
  EXPECT_EQ(j["cache"], "miss");
}

// A PTX file specializes for the real target and for the emulation alike.
TEST(CliSpecialize, PtxFileForTheRealAndTheEmulatedTarget) {
  ScratchDir dir;
  const std::string ptx = dir.file("user.ptx", tmem::testing::user_ptx_kernel());
  const std::string spec =
      dir.file("acc_ld.json", tmemjit_test::seed_layout_b(false).make().to_json());
  for (const char* target : {"sm_100a", "sm_90"}) {
    const CliResult r = run_cli_argv({"specialize", ptx, "--transfer", "acc_ld=" + spec, "--target",
                                      target, "--no-cache", "--json"});
    ASSERT_EQ(r.exit_code, 0) << target << ": " << r.err << r.out;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["entry"], "user");
    EXPECT_EQ(j["language"], "ptx");
    EXPECT_EQ(j["emulated"], std::string(target) == "sm_90") << target;
  }
}

TEST(CliSpecialize, ErrorsAndExitCodes) {
  ScratchDir dir;
  // A compile error names the user's file and line; exit 3.
  const std::string broken =
      dir.file("broken.cu",
               "#include <tmemjit/transfers.cuh>\n__global__ void k(float* x) {\n"
               "  float r[acc_regs];\n  acc(0u, r) oops;\n}\n");
  const std::string spec = kExample + "/layouts/d_x32_ld.json";
  CliResult r = run_cli_argv({"specialize", broken, "--transfer", "acc=" + spec});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("broken.cu(4): error"), std::string::npos) << r.err;
  // The log quotes the line; the user's file is named, not printed back.
  EXPECT_NE(r.err.find("cuda source: " + broken + " (not repeated)"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("#include <tmemjit/transfers.cuh>"), std::string::npos) << r.err;

  // An unknown entry lists the entries; a bad name, a repeated one, a missing file: usage.
  const std::string two =
      dir.file("two.cu",
               "#include <tmemjit/transfers.cuh>\n"
               "__global__ void first(float* x) { float r[acc_regs]; acc(0u, r); *x = r[0]; }\n"
               "__global__ void second(float* x) { *x = 1.0f; }\n");
  r = run_cli_argv({"specialize", two, "--transfer", "acc=" + spec});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("defines several kernels (first, second); name one with --entry"),
            std::string::npos)
      << r.err;
  r = run_cli_argv({"specialize", two, "--transfer", "acc=" + spec, "--entry", "third", "--json"});
  EXPECT_EQ(r.exit_code, 2);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ok"], false);
  EXPECT_NE(j["error"]["message"].get<std::string>().find(
                "no kernel 'third' in " + two + "; the __global__ functions found: first "),
            std::string::npos)
      << r.out;
  r = run_cli_argv({"specialize", two, "--entry", "first", "--transfer", "acc-1=" + spec});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("transfer name 'acc-1'"), std::string::npos) << r.err;
  r = run_cli_argv({"specialize", two, "--entry", "first", "--transfer", "acc=" + spec,
                    "--transfer", "acc=" + spec});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("two transfers are named 'acc'"), std::string::npos) << r.err;
  r = run_cli_argv({"specialize", two, "--transfer", "acc=/nonexistent.json"});
  EXPECT_EQ(r.exit_code, 2);
  r = run_cli_argv({"specialize", dir.file("kernel.txt", "x"), "--transfer", "acc=" + spec});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cannot tell the language"), std::string::npos) << r.err;
  r = run_cli_argv(
      {"specialize", two, "--entry", "first", "--transfer", "acc=" + spec, "--target", "sm_80"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  // An option where a value belongs is not taken as the value (it was a directory named --json).
  r = run_cli_argv(
      {"specialize", two, "--entry", "first", "--transfer", "acc=" + spec, "--keep", "--json"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("option '--keep' needs a value, got the option '--json'"), std::string::npos)
      << r.err;
  // A transfer the source never calls is a warning, not an error.
  const std::string uncalled = dir.file("uncalled.cu",
                                        "#include <tmemjit/transfers.cuh>\n"
                                        "__global__ void only(float* x) { *x = 1.0f; }\n");
  r = run_cli_argv({"specialize", uncalled, "--transfer", "acc=" + spec, "--no-cache", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["warnings"][0],
            "transfer 'acc' is never called by " + uncalled + " or a header it includes");
  EXPECT_NE(r.err.find("tmemjit: warning: transfer 'acc' is never called"), std::string::npos);
}

}  // namespace
