// R27 on PTX text: a kernel whose tcgen05 instructions, its own or those of the .funcs it calls,
// mix .cta_group::1 and ::2 is refused before any compiler sees it; one .cta_group is accepted.
#include "runtime/ptx/cta_group_check.h"

#include <gtest/gtest.h>

#include <string>

#include "tmem/compile.h"
#include "tmem/rule.h"

namespace {

const std::string kHeader = ".version 8.6\n.target sm_100a\n.address_size 64\n";

// A lifecycle helper with .cta_group::`group`, and a kernel that allocates with `kernel_group`
// (0: the kernel has no tcgen05 instruction of its own) and calls the helper.
std::string module(int helper_group, int kernel_group) {
  const std::string h = std::to_string(helper_group);
  std::string text = kHeader +
                     ".shared .align 4 .b32 slot[1];\n"
                     "// a comment that says .cta_group::1 and .cta_group::2 counts for nothing\n"
                     ".func helper_dealloc(.param .b32 base);\n"  // a prototype: no body
                     ".func helper_dealloc(.param .b32 base)\n{\n"
                     "\t.reg .b32 %r<1>;\n\tld.param.b32 %r0, [base];\n"
                     "\ttcgen05.dealloc.cta_group::" +
                     h + ".sync.aligned.b32 %r0, 32;\n\tret;\n}\n" +
                     ".visible .entry k()\n{\n\t.reg .b32 %r<1>;\n";
  if (kernel_group != 0)
    text += "\ttcgen05.alloc.cta_group::" + std::to_string(kernel_group) +
            ".sync.aligned.shared::cta.b32 [slot], 32;\n";
  text +=
      "\tld.shared.u32 %r0, [slot];\n\t{\n\t.param .b32 p;\n\tst.param.b32 [p], %r0;\n"
      "\tcall.uni helper_dealloc, (p);\n\t}\n\tret;\n}\n";
  return text;
}

TEST(PtxCtaGroups, OneGroupPerKernelIsAccepted) {
  for (int group : {1, 2}) {
    EXPECT_TRUE(tmem::ptx::check_cta_groups(module(group, group)).ok()) << group;
    EXPECT_TRUE(tmem::ptx::check_cta_groups(module(group, 0)).ok()) << group;
  }
}

TEST(PtxCtaGroups, KernelAndCalledFunctionMixingIsR27) {
  for (auto [helper, kernel] : {std::pair{2, 1}, std::pair{1, 2}}) {
    const tmem::Status status = tmem::ptx::check_cta_groups(module(helper, kernel));
    ASSERT_FALSE(status.ok()) << helper << " " << kernel;
    EXPECT_EQ(status.error().code(), tmem::ErrorCode::kRule);
    EXPECT_EQ(status.error().rule(), tmem::Rule::kOneCtaGroupPerKernel)
        << status.error().full_text();
  }
}

TEST(PtxCtaGroups, OneFunctionMixingIsR27) {
  const std::string text = kHeader +
                           ".shared .align 4 .b32 slot[1];\n.visible .entry k()\n{\n"
                           "\ttcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [slot], 32;\n"
                           "\ttcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n"
                           "\tret;\n}\n";
  const tmem::Status status = tmem::ptx::check_cta_groups(text);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().rule(), tmem::Rule::kOneCtaGroupPerKernel) << status.error().full_text();
}

TEST(PtxCtaGroups, TwoKernelsMayUseDifferentGroups) {
  const std::string text = kHeader +
                           ".shared .align 4 .b32 slot[1];\n.visible .entry one()\n{\n"
                           "\ttcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n"
                           "\tret;\n}\n.visible .entry pair()\n{\n"
                           "\ttcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;\n"
                           "\tret;\n}\n";
  EXPECT_TRUE(tmem::ptx::check_cta_groups(text).ok());
}

// Comments are not code: a group or a call written in one counts for nothing, and a comment
// spanning lines keeps the line numbers the error gives.
TEST(PtxCtaGroups, CommentsCountForNothingAndKeepTheLines) {
  const std::string body =
      ".shared .align 4 .b32 slot[1];\n"
      ".func helper()\n{\n"
      "\ttcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n\tret;\n}\n"
      ".visible .entry k()\n{\n"
      "\t// call helper;\n"
      "\t/* call.uni helper, ();\n\t   tcgen05.relinquish_alloc_permit.cta_group::1 */\n"
      "\ttcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;\n"
      "\tret;\n}\n";
  EXPECT_TRUE(tmem::ptx::check_cta_groups(kHeader + body).ok());
  std::string called = kHeader + body;
  called.replace(called.find("\t// call helper;"), 16, "\tcall helper;    ");
  const tmem::Status status = tmem::ptx::check_cta_groups(called);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message().find(".cta_group::1 (line 7, in helper) and .cta_group::2 "
                                          "(line 15, in k)"),
            std::string::npos)
      << status.error().message();
}

// A string is not a comment: a path holding "/*" hides nothing after it from the check.
TEST(PtxCtaGroups, ACommentMarkerInAStringHidesNothing) {
  std::string text = module(2, 1);
  text.insert(text.find(".shared"), ".file 1 \"/src/gen/*.cu\"\n");
  const tmem::Status status = tmem::ptx::check_cta_groups(text);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().rule(), tmem::Rule::kOneCtaGroupPerKernel) << status.error().full_text();
}

// compile_ptx refuses the mix itself, before any backend runs (so also where ptxas would accept
// the kernel because the mix spans two functions).
TEST(PtxCtaGroups, CompilePtxRefusesTheMix) {
  tmem::CompileOptions options;
  options.backend = tmem::Backend::kPtxas;
  auto compiled = tmem::compile_ptx(module(2, 1), options);
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.error().rule(), tmem::Rule::kOneCtaGroupPerKernel)
      << compiled.error().full_text();
}

}  // namespace
