// Kept files named after the caller's stem (compile_kernel: the entry and a layout tag): the stem
// made safe for a file name, bounded, and followed by the hash so that no compile overwrites
// another's files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>

#include "common/ptx_fixtures.h"
#include "runtime/compile/backends.h"
#include "runtime/compile/sass.h"
#include "runtime/ptx/ir.h"

namespace tmem {
namespace {

constexpr const char* kHash = "0123456789abcdef";

TEST(KeepStem, PlainNamesStayAndOthersBecomeUnderscores) {
  EXPECT_EQ(keep_file_stem("softmax-32x32b.x8", kHash), std::string("softmax-32x32b.x8_") + kHash);
  EXPECT_EQ(keep_file_stem("_Z6kernelPf-16x256b", kHash),
            std::string("_Z6kernelPf-16x256b_") + kHash);
  EXPECT_EQ(keep_file_stem("a/b c*<d>", kHash), std::string("a_b_c__d__") + kHash);
  EXPECT_EQ(keep_file_stem("../up", kHash), std::string("_._up_") + kHash);
  EXPECT_EQ(keep_file_stem(".hidden", kHash), std::string("_hidden_") + kHash);
  EXPECT_EQ(keep_file_stem("-rf", kHash), std::string("_rf_") + kHash);
  EXPECT_EQ(keep_file_stem("\xc3\xa9t\xc3\xa9", kHash), std::string("__t___") + kHash);
  EXPECT_EQ(keep_file_stem("", kHash), std::string("tmemjit_") + kHash);
}

TEST(KeepStem, LengthIsBounded) {
  const std::string stem = keep_file_stem(std::string(1000, 'k'), kHash);
  EXPECT_EQ(stem, std::string(kKeepStemChars, 'k') + "_" + kHash);
  EXPECT_LT(stem.size() + std::string(".cubin").size(), 255u);  // NAME_MAX
}

std::set<std::string> names_in(const std::filesystem::path& dir) {
  std::set<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    out.insert(entry.path().filename().string());
  return out;
}

TEST(KeepStem, CompilePtxNamesKeptFilesAfterTheStem) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tmemjit-keep-stem-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  CompileOptions options;
  options.keep_dir = dir.string();
  const std::string ptx = ptx::print(testing::seed_roundtrip_kernel()).value();
  ASSERT_TRUE(compile_ptx(ptx, options, "tmem_roundtrip-32x32b.x64").ok());
  std::set<std::string> names = names_in(dir);
  const std::string prefix = "tmem_roundtrip-32x32b.x64_";
  ASSERT_EQ(names.begin()->rfind(prefix, 0), 0u) << *names.begin();
  const std::string base = names.begin()->substr(0, prefix.size() + 16);  // and the hash
  std::set<std::string> expected = {base + ".ptx", base + ".cubin", base + ".log"};
  if (sass::find_disassembler()) expected.insert(base + ".sass");
  EXPECT_EQ(names, expected);

  // Another input under the same stem keeps its own files; the plain call keeps tmemjit_<hash>.
  const std::string other = ptx::print(testing::seed_roundtrip_kernel(Target::kSm100f)).value();
  ASSERT_TRUE(compile_ptx(other, options, "tmem_roundtrip-32x32b.x64").ok());
  EXPECT_EQ(names_in(dir).size(), 2 * expected.size());
  ASSERT_TRUE(compile_ptx(ptx, options).ok());
  int plain = 0;
  for (const std::string& name : names_in(dir)) plain += name.rfind("tmemjit_", 0) == 0;
  EXPECT_EQ(plain, static_cast<int>(expected.size()));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tmem
