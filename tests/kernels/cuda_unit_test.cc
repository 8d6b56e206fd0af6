// The source NVRTC compiles for compile_kernel (kernels/specialized_source.h,
// docs/specialization.md "How a layout compiles"): the text before `#include
// <tmemjit/transfers.cuh>` becomes a header that NVRTC precompiles, the user's code in it included,
// with the user's file name and lines; an include inside a namespace or an #if keeps the inline
// stop.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

#include "kernels/specialized_source.h"

namespace tmem::kernels {
namespace {

TEST(CudaUnit, ThePrefixBecomesAHeaderBesideTheSourceWithItsNameAndLines) {
  const std::string source =
      "#include <cute/tensor.hpp>\n"
      "__device__ int helper() { return 1; }\n"
      "#include <tmemjit/transfers.cuh>\n"
      "extern \"C\" __global__ void k() {}\n";
  const CudaUnit unit = cuda_unit(source, "kernels/k.cu");
  EXPECT_TRUE(unit.header_stop);
  EXPECT_EQ(unit.prefix, "#include <cute/tensor.hpp>\n__device__ int helper() { return 1; }\n");
  EXPECT_EQ(unit.prefix_header_name, "kernels/k.cu.tmemjit-prefix.cuh")
      << "beside the source, so that its #include \"x\" searches the source's directory";
  EXPECT_EQ(unit.prefix_header, "#line 1 \"kernels/k.cu\"\n" + unit.prefix);
  EXPECT_EQ(unit.text,
            "#include \"kernels/k.cu.tmemjit-prefix.cuh\"\n;\n#line 3\n"
            "#include <tmemjit/transfers.cuh>\nextern \"C\" __global__ void k() {}\n");
}

TEST(CudaUnit, BracesInCommentsLiteralsAndDefinesDoNotKeepThePrefixOpen) {
  const std::string source =
      "#include <a.h>\n"
      "#define OPEN {\n"
      "#define CALL(x) f(x \\\n"
      "  ))\n"
      "// } a comment {\n"
      "/* ( */\n"
      "__device__ const char* text = \"{(\";\n"
      "__device__ char brace = '{';\n"
      "#include \"tmemjit/transfers.cuh\"\n";
  const CudaUnit unit = cuda_unit(source, "k.cu");
  EXPECT_EQ(unit.prefix_header_name, "k.cu.tmemjit-prefix.cuh");
  EXPECT_EQ(unit.text,
            "#include \"k.cu.tmemjit-prefix.cuh\"\n;\n#line 9\n"
            "#include \"tmemjit/transfers.cuh\"\n");
}

// Where the prefix cannot end a header, the stop is ";" before the include, as it always was:
// the headers before the first token are still precompiled.
TEST(CudaUnit, AnIncludeInsideANamespaceOrAConditionalKeepsTheInlineStop) {
  for (const char* prefix :
       {"#include <a.h>\nnamespace user {\n", "#include <a.h>\n#if defined(USE_TRANSFERS)\n",
        "#include <a.h>\n#ifdef X\n#else\n", "#include <a.h>\nextern \"C\" {\n"}) {
    SCOPED_TRACE(prefix);
    const std::string source = std::string(prefix) + "#include <tmemjit/transfers.cuh>\n}\n";
    const CudaUnit unit = cuda_unit(source, "k.cu");
    EXPECT_TRUE(unit.header_stop);
    EXPECT_TRUE(unit.prefix_header_name.empty());
    EXPECT_TRUE(unit.prefix_header.empty());
    const bool code = std::string_view(prefix).find("{") != std::string_view::npos;
    EXPECT_EQ(
        unit.inline_stop_reason,
        code ? "its #include <tmemjit/transfers.cuh> is inside a namespace, a block or an #if" : "")
        << "only code of the user's is lost; headers alone are precompiled either way";
    const std::string line = std::to_string(std::count(prefix, prefix + strlen(prefix), '\n') + 1);
    EXPECT_EQ(unit.text,
              std::string(prefix) + ";\n#line " + line + "\n#include <tmemjit/transfers.cuh>\n}\n");
  }
}

TEST(CudaUnit, APathThatAnIncludeCannotSpellKeepsTheInlineStop) {
  const std::string source = "#include <a.h>\n#include <tmemjit/transfers.cuh>\n";
  for (const char* path : {"dir\"/k.cu", "dir\\k.cu", "dir\n/k.cu", ""}) {
    SCOPED_TRACE(path);
    const CudaUnit unit = cuda_unit(source, path);
    EXPECT_TRUE(unit.prefix_header_name.empty());
    EXPECT_EQ(unit.text, "#include <a.h>\n;\n#line 2\n#include <tmemjit/transfers.cuh>\n");
    EXPECT_EQ(unit.inline_stop_reason, "") << "no code of the user's before the include";
    const CudaUnit with_code = cuda_unit("int x;\n" + source, path);
    EXPECT_EQ(with_code.inline_stop_reason, "its file name cannot be written in an #include");
  }
}

TEST(CudaUnit, ASourceThatNeverIncludesTheHeaderIsLeftAsItIs) {
  const std::string source = "// #include <tmemjit/transfers.cuh>\n#include \"mine.cuh\"\n";
  const CudaUnit unit = cuda_unit(source, "k.cu");
  EXPECT_FALSE(unit.header_stop);
  EXPECT_EQ(unit.text, source);
  EXPECT_TRUE(unit.prefix_header_name.empty());
}

// What the scans of the source read as code (issue 42 item 7): comments and literals are not,
// except the literals of a directive line (an #include's "name" stays for the directive scan).
TEST(CudaUnit, MentionsAnIdentifierOnlyInCode) {
  EXPECT_TRUE(mentions_identifier("int x = load(name);\n", "name"));
  EXPECT_FALSE(mentions_identifier("int x = load(names, a_name, name2);\n", "name"));
  for (const char* hidden :
       {"// name\n", "/* name */\n", "/* a\nname */\n", "f(\"name\");\n", "f(\"a \\\" name\");\n",
        "f('n', \"\\\\\", \"name\");\n", "f(L\"name\", u8\"name\");\n", "x = \"open name\n",
        "/* unterminated name", "\"unterminated name"}) {
    SCOPED_TRACE(hidden);
    EXPECT_FALSE(mentions_identifier(hidden, "name"));
  }
  for (const char* seen :
       {"f('\"', name);\n", "x = \"open\nname();\n", "/* a */ name\n", "#include \"name\"\n",
        "  #define S \"name\"\n", "/**/ # x 'name'\n", "f(\"\\\\\"); name\n"}) {
    SCOPED_TRACE(seen);
    EXPECT_TRUE(mentions_identifier(seen, "name"));
  }
}

TEST(CudaUnit, FindsTheHeaderAndCountsIncludesOutsideComments) {
  const std::string source =
      "/* #include <tmemjit/transfers.cuh> */\n"
      "const char* s = \"#include <tmemjit/transfers.cuh>\";\n"
      "  /* lead */ #  include <tmemjit/transfers.cuh> // here\n"
      "// #include <a.h>\n"
      "/*\n#include <b.h>\n*/\n"
      "#include <c.h> /* \n#include <d.h> */\n"
      "#include \"e.h\"\n";
  const CudaUnit unit = cuda_unit(source, "k.cu");
  EXPECT_TRUE(unit.header_stop);
  EXPECT_EQ(unit.prefix,
            "/* #include <tmemjit/transfers.cuh> */\n"
            "const char* s = \"#include <tmemjit/transfers.cuh>\";\n");
  EXPECT_EQ(unit.includes_after, 2) << "c.h and e.h";
  EXPECT_EQ(cuda_unit("#include <x.h>\n// #include <y.h>\n", "k.cu").includes_after, 1);
}

// As the compiler reads it: a raw string's lines and a // comment's spliced line are not code.
TEST(CudaUnit, ARawStringOrASplicedCommentHoldsNoInclude) {
  const std::string source =
      "const char* text = R\"(\n#include <tmemjit/transfers.cuh>\n)\";\n"
      "// a comment \\\n#include <tmemjit/transfers.cuh>\n"
      "#include <tmemjit/transfers.cuh>\n";
  const CudaUnit unit = cuda_unit(source, "k.cu");
  EXPECT_TRUE(unit.header_stop);
  EXPECT_EQ(unit.prefix, source.substr(0, source.rfind("#include")));
  EXPECT_FALSE(mentions_identifier("const char* s = R\"x(\nname\n)x\";\n", "name"));
}

}  // namespace
}  // namespace tmem::kernels
