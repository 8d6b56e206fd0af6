// compile_kernel with the nvcc front end (CompileOptions::front_end = kNvcc, docs/specialization.md
// "nvcc as the front end"): the kernel's machine code is, byte for byte, what the toolkit's nvcc
// makes of the source with the transfers pasted in; a separate cache entry from NVRTC's; no
// precompiled headers; a name expression is refused; nvcc's own errors reach the user.
#include "runtime/compile/nvcc_front_end.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "common/cache_test_util.h"
#include "common/files.h"
#include "common/nvrtc_direct.h"
#include "runtime/support/subprocess.h"
#include "tmem/cache.h"
#include "tmem/jit.h"
#include "tmem/specialize.h"

namespace tmem {
namespace {

using testing::TempDir;

std::string source_file(const std::string& path) {
  return tmem::read_file(std::string(TMEMJIT_SOURCE_DIR) + "/" + path).value();
}

NamedTransfer epilogue_transfer(const std::string& layout, const std::string& name) {
  DeviceFunctionOptions options;
  options.name = name;
  options.wait = false;
  options.column_argument = true;
  return {
      TransferSpec::from_json(source_file("examples/epilogue/layouts/" + layout + ".json")).value(),
      options};
}

class NvccFrontEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    auto version = run_process({nvcc_path(), "--version"});
    if (!version.ok() || version->exit_code != 0)
      GTEST_SKIP() << "nvcc is not runnable here (" << nvcc_path() << ")";
    ASSERT_TRUE(dir_.ok());
    saved_ = cache_options();
    set_cache_dir(dir_.path().string());
    ASSERT_TRUE(clear_cache(false).ok());
  }
  void TearDown() override { set_cache_options(saved_); }

  // nvcc itself on `text`, as a user would run it: the target and the standard, nothing else.
  std::vector<char> nvcc_cubin(const std::string& text, Target target) {
    auto scratch = ScratchDir::create("tmemjit-nvcc-reference");
    EXPECT_TRUE(scratch.ok());
    const std::string input = scratch->file("epilogue.cu"), output = scratch->file("e.cubin");
    EXPECT_TRUE(write_file(input, text).ok());
    auto run = run_process({nvcc_path(), "-arch=" + std::string(to_string(target)), "-cubin",
                            "--std=c++17", "-o", output, input});
    EXPECT_TRUE(run.ok() && run->exit_code == 0) << (run.ok() ? run->output : "");
    auto bytes = read_file(output);
    return bytes.ok() ? std::vector<char>(bytes->begin(), bytes->end()) : std::vector<char>();
  }

  TempDir dir_;
  CacheOptions saved_;
};

TEST_F(NvccFrontEnd, TheKernelsTextIsNvccsOfTheInlineSourceByteForByte) {
  const std::string epilogue = source_file("examples/epilogue/epilogue.cu");
  const std::string include = "#include <tmemjit/transfers.cuh>";
  for (const Target target : {Target::kSm100a, Target::kSm100f}) {
    SCOPED_TRACE(std::string(to_string(target)));
    const std::vector<NamedTransfer> transfers = {epilogue_transfer("f_16x256b_ld", "acc_load"),
                                                  epilogue_transfer("f_16x256b_st", "acc_store")};
    CompileOptions options;
    options.target = target;
    options.front_end = FrontEndCompiler::kNvcc;
    CompileReport report;
    auto kernel = compile_kernel({Language::kCuda, epilogue, "epilogue", "epilogue.cu"}, transfers,
                                 options, &report);
    ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
    EXPECT_EQ(report.backend, Backend::kPtxas) << "nvcc compiles through the toolkit's ptxas";
    EXPECT_EQ(report.headers, "off: the nvcc front end has no in-process precompiled headers");
    EXPECT_NE(kernel->ptx().find(".entry epilogue"), std::string_view::npos)
        << "the PTX nvcc made is kept";
    std::string inline_text = epilogue, functions;
    for (const NamedTransfer& t : transfers)
      functions += device_function(t.spec, t.options).value().source;
    inline_text.replace(inline_text.find(include), include.size(), functions);
    const std::vector<char> reference = nvcc_cubin(inline_text, target);
    const std::string ours = testing::text_bytes(kernel->cubin(), "epilogue");
    const std::string theirs = testing::text_bytes(reference, "epilogue");
    ASSERT_GT(theirs.size(), 0u);
    EXPECT_EQ(ours.size(), theirs.size());
    EXPECT_TRUE(ours == theirs) << "the .text bytes differ";
  }
}

TEST_F(NvccFrontEnd, IsItsOwnCacheEntryAndNvccsErrorsReachTheUser) {
  const std::string epilogue = source_file("examples/epilogue/epilogue.cu");
  const std::vector<NamedTransfer> transfers = {epilogue_transfer("d_x32_ld", "acc_load"),
                                                epilogue_transfer("d_x32_st", "acc_store")};
  const KernelSource source{Language::kCuda, epilogue, "epilogue", "epilogue.cu"};
  CompileOptions nvrtc, nvcc;
  nvcc.front_end = FrontEndCompiler::kNvcc;
  CompileReport first, second, again;
  ASSERT_TRUE(compile_kernel(source, transfers, nvrtc, &first).ok());
  ASSERT_TRUE(compile_kernel(source, transfers, nvcc, &second).ok());
  ASSERT_TRUE(compile_kernel(source, transfers, nvcc, &again).ok());
  EXPECT_EQ(first.cache, CacheSource::kCompiled);
  EXPECT_EQ(second.cache, CacheSource::kCompiled) << "NVRTC's kernel is not nvcc's";
  EXPECT_EQ(again.cache, CacheSource::kMemory);

  CompileOptions bad = nvcc;
  bad.nvrtc_options = {"--no-such-nvcc-option"};
  auto refused = compile_kernel(source, transfers, bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().full_text().find("--no-such-nvcc-option"), std::string::npos)
      << refused.error().full_text();

  auto expression =
      compile_kernel({Language::kCuda, epilogue, "epilogue<1>", "epilogue.cu"}, transfers, nvcc);
  ASSERT_FALSE(expression.ok());
  EXPECT_EQ(expression.error().code(), ErrorCode::kUsage);
  EXPECT_NE(expression.error().message().find("only NVRTC lowers"), std::string::npos)
      << expression.error().message();
}

// The files of `directory`, by name, sorted.
std::vector<std::string> listing(const std::filesystem::path& directory) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(directory))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// A source named by its absolute path: its prefix header (named "<path>.tmemjit-prefix.cuh")
// used to be written beside it, into the user's directory. It stays in the scratch directory,
// and the prefix's `#include "neighbour.h"` still finds the user's neighbour.
TEST_F(NvccFrontEnd, WritesNothingBesideAnAbsoluteSourceAndStillFindsItsNeighbours) {
  TempDir user;
  ASSERT_TRUE(user.ok());
  const std::string path = (user.path() / "kernel.cu").string();
  const std::string text = "#include \"neighbour.h\"\n" +
                           source_file("examples/epilogue/epilogue.cu") +
                           "static_assert(TMEMJIT_TEST_NEIGHBOUR == 7, \"the neighbour\");\n";
  ASSERT_TRUE(write_file(path, text).ok());
  ASSERT_TRUE(
      write_file((user.path() / "neighbour.h").string(), "#define TMEMJIT_TEST_NEIGHBOUR 7\n")
          .ok());
  const std::vector<NamedTransfer> transfers = {epilogue_transfer("d_x32_ld", "acc_load"),
                                                epilogue_transfer("d_x32_st", "acc_store")};
  CompileOptions options;
  options.front_end = FrontEndCompiler::kNvcc;
  auto kernel = compile_kernel({Language::kCuda, text, "epilogue", path}, transfers, options);
  EXPECT_TRUE(kernel.ok()) << kernel.error().full_text();
  EXPECT_EQ(listing(user.path()), (std::vector<std::string>{"kernel.cu", "neighbour.h"}))
      << "the compile wrote into the source's directory";
}

// A header whose name climbs out of the include directory with ".." is written inside it, and
// the source's #include of it is rewritten to match.
TEST_F(NvccFrontEnd, AHeaderNamedWithDotDotStaysInTheScratchDirectory) {
  TempDir user;
  ASSERT_TRUE(user.ok());
  std::string name;
  for (int i = 0; i < 64; ++i) name += "../";  // past the root, wherever the scratch lies
  name += user.path().relative_path().string() + "/escaped.cuh";
  const std::string source = "#include \"" + name +
                             "\"\n"
                             "extern \"C\" __global__ void k(int* out) { *out = ESCAPED; }\n";
  CompileOptions options;
  options.target = Target::kSm100a;
  auto compiled = compile_cuda_with_nvcc(source, "k.cu", {{name, "#define ESCAPED 3\n"}}, {},
                                         options, FrontEndOutput::kPtx);
  EXPECT_TRUE(compiled.ok()) << compiled.error().full_text();
  EXPECT_TRUE(listing(user.path()).empty()) << "the header was written outside the scratch";
}

TEST(FrontEndCompiler, NamesParseAndPrint) {
  EXPECT_EQ(parse_front_end("nvcc").value(), FrontEndCompiler::kNvcc);
  EXPECT_EQ(parse_front_end("nvrtc").value(), FrontEndCompiler::kNvrtc);
  EXPECT_NE(parse_front_end("clang").error().message().find("allowed: nvrtc, nvcc"),
            std::string::npos);
  CompileOptions options;
  options.front_end = FrontEndCompiler::kNvcc;
  EXPECT_NE(to_string(options).find("front_end=nvcc"), std::string::npos);
  EXPECT_NE(options, CompileOptions{});
}

}  // namespace
}  // namespace tmem
