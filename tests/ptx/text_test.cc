// PTX as text (runtime/ptx/text.h): what the scans of a user's module read as code. Comments are
// blanked in place (offsets and lines stay the module's); strings are kept whole, comment markers
// in them included, and run to their closing quote across lines.
#include "runtime/ptx/text.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tmem::ptx {
namespace {

TEST(PtxText, BlanksCommentsInPlace) {
  EXPECT_EQ(without_comments("add; // note\nsub;"), "add;        \nsub;");
  EXPECT_EQ(without_comments("a /* x\ny */ b"), "a     \n     b");
  EXPECT_EQ(without_comments("a /*/ x */b"), "a         b") << "/*/ does not close";
  EXPECT_EQ(without_comments("a /* open\nb"), "a        \n ") << "unterminated: to the end";
  EXPECT_EQ(without_comments("a // x \\\nb"), "a       \nb") << "no line splices in PTX";
  EXPECT_EQ(without_comments("'// x'"), "'     ") << "no character literals in PTX";
  EXPECT_EQ(without_comments("a//"), "a  ");
  EXPECT_EQ(without_comments("a/"), "a/");
  EXPECT_EQ(without_comments(""), "");
}

TEST(PtxText, KeepsStringsWhole) {
  for (const char* kept :
       {".file 1 \"/src//k.cu\"", ".pragma \"a /* b */\";", ".file 1 \"a\\\"//b\"",
        ".file 1 \"open // no end\n/* still in it */\"", ".file 1 \"unterminated // x\n// y"}) {
    SCOPED_TRACE(kept);
    EXPECT_EQ(without_comments(kept), kept);
  }
  EXPECT_EQ(without_comments("\"a\\\\\" // b"), "\"a\\\\\"     ") << "an escaped backslash";
}

TEST(PtxText, ScansSkipComments) {
  const std::string ptx =
      ".version 8.6\n// .target sm_90\n.target sm_100a /* .target x */\n"
      "/* .entry hidden() */ .visible .entry k()\n{\n ret;\n}\n";
  EXPECT_EQ(entry_names(ptx), std::vector<std::string>{"k"});
  EXPECT_EQ(first_line_with(ptx, ".visible"), 4u);
  std::string retargeted = ptx;
  ASSERT_TRUE(retarget(retargeted, "sm_90a"));
  EXPECT_NE(retargeted.find(".target sm_90a /* .target x */"), std::string::npos) << retargeted;
}

}  // namespace
}  // namespace tmem::ptx
