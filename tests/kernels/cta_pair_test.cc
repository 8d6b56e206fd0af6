// The CTA pair (cta_group::2, docs/tcgen05-rules.md §Lifecycle): the harness kernels' lifecycle and
// its order, ptxas for sm_100a with the paired alloc in the SASS, the lifecycle helpers' pair
// forms, and R27 for transfers of one kernel that disagree.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/spec_fixtures.h"
#include "kernels/device_function.h"
#include "kernels/transfer_kernels.h"
#include "runtime/compile/sass.h"
#include "tmem/check.h"
#include "tmem/compile.h"
#include "tmem/specialize.h"

namespace {

using tmem::kernels::KernelKind;

constexpr KernelKind kKinds[] = {KernelKind::kRoundtrip, KernelKind::kStore, KernelKind::kLoad,
                                 KernelKind::kFill};

tmem::Plan seed_plan() { return tmem::check(tmemjit_test::seed_layout_b(true).make()).value(); }

std::string kernel_ptx(const tmem::Plan& plan, KernelKind kind, int cta_group) {
  return tmem::ptx::print(
             tmem::kernels::build_kernel(plan, kind, tmem::Target::kSm100a, cta_group).value())
      .value();
}

// Each step's text appears after the previous one.
void expect_in_order(const std::string& text, const std::vector<std::string>& steps) {
  size_t last = 0;
  for (const std::string& step : steps) {
    const size_t at = text.find(step, last);
    ASSERT_NE(at, std::string::npos) << "'" << step << "' missing or out of order in\n" << text;
    last = at + step.size();
  }
}

TEST(KernelsPair, LifecycleOrdersBothPeersWithClusterBarriers) {
  const std::string ptx = kernel_ptx(seed_plan(), KernelKind::kRoundtrip, 2);
  const std::string handoff =
      "tcgen05.fence::before_thread_sync;\n\tbarrier.cluster.arrive.aligned;\n"
      "\tbarrier.cluster.wait.aligned;\n\ttcgen05.fence::after_thread_sync;";
  expect_in_order(ptx,
                  {"mov.u32 %r2, %ctaid.x;",
                   "tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 "
                   "[tmem_base_address], 64;",
                   handoff,  // both allocs before any use (R31)
                   "tcgen05.st.sync.aligned.32x32b.x64.b32", "tcgen05.wait::st.sync.aligned;",
                   "tcgen05.ld.sync.aligned.32x32b.x64.b32", "tcgen05.wait::ld.sync.aligned;",
                   handoff,  // every use of both CTAs before either dealloc (R31)
                   "tcgen05.dealloc.cta_group::2.sync.aligned.b32",
                   "tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;",
                   "barrier.cluster.arrive.aligned;\n\tbarrier.cluster.wait.aligned;\n\tret;"});
  EXPECT_EQ(ptx.find("cta_group::1"), std::string::npos) << "one .cta_group per kernel (R27)";
}

TEST(KernelsPair, EachCtaHasItsOwnBlockOfTheBuffers) {
  const tmem::kernels::LaunchShape single =
      tmem::kernels::launch_shape(seed_plan(), KernelKind::kStore);
  const tmem::kernels::LaunchShape pair =
      tmem::kernels::launch_shape(seed_plan(), KernelKind::kStore, 2);
  EXPECT_EQ(single.ctas, 1);
  EXPECT_EQ(pair.ctas, 2);
  EXPECT_EQ(pair.threads, single.threads);
  // Rows: CTA * threads + tid for In, CTA * 128 + tid for Raw.
  const std::string ptx = kernel_ptx(seed_plan(), KernelKind::kStore, 2);
  EXPECT_NE(ptx.find("mul.lo.u32 %r3, %r2, " + std::to_string(pair.threads) + ";"),
            std::string::npos)
      << ptx;
  EXPECT_NE(ptx.find("mul.lo.u32 %r5, %r2, 128;"), std::string::npos) << ptx;
}

TEST(KernelsPair, CtaGroup1KeepsTheSingleCtaKernel) {
  for (KernelKind kind : kKinds) {
    const std::string one = kernel_ptx(seed_plan(), kind, 1);
    EXPECT_EQ(one,
              tmem::ptx::print(tmem::kernels::build_kernel(seed_plan(), kind).value()).value());
    EXPECT_EQ(one.find("barrier.cluster"), std::string::npos);
    EXPECT_EQ(one.find("cta_group::2"), std::string::npos);
  }
}

TEST(KernelsPair, OtherCtaGroupsAreUsage) {
  for (int group : {0, 3, -1}) {
    auto built = tmem::kernels::build_kernel(seed_plan(), KernelKind::kRoundtrip,
                                             tmem::Target::kSm100a, group);
    ASSERT_FALSE(built.ok()) << group;
    EXPECT_EQ(built.error().code(), tmem::ErrorCode::kUsage);
  }
}

// Every pair kernel through ptxas for sm_100a; where a disassembler exists, the SASS holds the
// paired allocation (UTCATOMSWS.2CTA, ptxas 13.0) and one cluster barrier arrive per hand-off,
// and the single-CTA kernel an unpaired one.
TEST(KernelsPairCompile, PtxasForSm100aWithThePairedAllocInSass) {
  const auto tool = tmem::sass::find_disassembler();
  tmem::CompileOptions options;
  options.backend = tmem::Backend::kPtxas;
  for (KernelKind kind : kKinds) {
    for (int group : {1, 2}) {
      auto module = tmem::compile_ptx(kernel_ptx(seed_plan(), kind, group), options);
      ASSERT_TRUE(module.ok()) << to_string(kind) << " cta_group " << group << ": "
                               << module.error().full_text();
      if (!tool) continue;
      const tmem::sass::Listing listing(tmem::sass::disassemble(*tool, module->cubin).value());
      int paired = 0, allocs = 0, cluster_arrives = 0;
      for (const std::string& m : listing.mnemonics()) {
        if (m.rfind("UTCATOMSWS.", 0) == 0 && m.find("FIND_AND_SET") != std::string::npos) {
          ++allocs;
          if (m.find(".2CTA") != std::string::npos) ++paired;
        }
        if (m.rfind("UCGABAR_ARV", 0) == 0) ++cluster_arrives;
      }
      EXPECT_GT(allocs, 0) << to_string(kind) << " cta_group " << group;
      EXPECT_EQ(paired, group == 2 ? allocs : 0) << to_string(kind) << " cta_group " << group;
      EXPECT_EQ(cluster_arrives, group == 2 ? 3 : 0) << to_string(kind) << " cta_group " << group;
    }
  }
  if (!tool)
    GTEST_SKIP() << "compiled every pair kernel; SASS not checked: "
                 << tmem::sass::search_description();
}

tmem::DeviceFunctionOptions pair_options(tmem::Language language) {
  tmem::DeviceFunctionOptions options;
  options.language = language;
  options.cta_group = 2;
  return options;
}

TEST(DeviceFunctionPair, CudaHelpersAllocAsAPairAndSyncTheCluster) {
  const auto spec = tmemjit_test::seed_layout_b(true).make();
  auto fn = tmem::device_function(spec, pair_options(tmem::Language::kCuda));
  ASSERT_TRUE(fn.ok()) << fn.error().full_text();
  for (const char* text : {"tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32",
                           "tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;",
                           "tcgen05.dealloc.cta_group::2.sync.aligned.b32", "void cluster_sync()",
                           "barrier.cluster.arrive.aligned;", "barrier.cluster.wait.aligned;"})
    EXPECT_NE(fn->source.find(text), std::string::npos) << text << "\n" << fn->source;
  EXPECT_EQ(fn->source.find("cta_group::1"), std::string::npos) << fn->source;
  // cta_group 1 (the default) keeps the single-CTA helpers and no cluster_sync.
  auto single = tmem::device_function(spec, {});
  ASSERT_TRUE(single.ok());
  EXPECT_EQ(single->source.find("cluster_sync"), std::string::npos);
  EXPECT_NE(single->source.find("tcgen05.alloc.cta_group::1"), std::string::npos);
}

TEST(DeviceFunctionPair, EmulatedHelpersKeepTheClusterBarrier) {
  auto fn = tmem::device_function(tmemjit_test::seed_layout_b(true).make(),
                                  pair_options(tmem::Language::kCuda), tmem::Target::kSm90);
  ASSERT_TRUE(fn.ok()) << fn.error().full_text();
  EXPECT_NE(fn->source.find("void cluster_sync()"), std::string::npos) << fn->source;
  EXPECT_EQ(fn->source.find("asm volatile(\"tcgen05"), std::string::npos)
      << "sm_90 runs no tcgen05 instruction";
}

TEST(DeviceFunctionPair, PtxHelpersCompileForSm100aThroughPtxas) {
  auto fn = tmem::device_function(tmemjit_test::seed_layout_b(true).make(),
                                  pair_options(tmem::Language::kPtx));
  ASSERT_TRUE(fn.ok()) << fn.error().full_text();
  for (const char* text : {".func tmemjit_cluster_sync()", "tcgen05.alloc.cta_group::2",
                           "tcgen05.dealloc.cta_group::2", "barrier.cluster.wait.aligned;"})
    EXPECT_NE(fn->source.find(text), std::string::npos) << text << "\n" << fn->source;
  tmem::CompileOptions options;
  options.backend = tmem::Backend::kPtxas;
  options.extra_options = {"-c"};  // relocatable: nothing calls the .funcs here
  auto module = tmem::compile_ptx(fn->source, options);
  ASSERT_TRUE(module.ok()) << module.error().full_text();
}

TEST(DeviceFunctionPair, OtherCtaGroupsAreUsage) {
  auto options = pair_options(tmem::Language::kCuda);
  options.cta_group = 4;
  auto fn = tmem::device_function(tmemjit_test::seed_layout_b(true).make(), options);
  ASSERT_FALSE(fn.ok());
  EXPECT_EQ(fn.error().code(), tmem::ErrorCode::kUsage);
}

// R27: one kernel has one lifecycle, so its transfers share one cta_group; compile_kernel says so
// before NVRTC or ptxas runs.
TEST(DeviceFunctionPair, TransfersOfOneKernelMustAgreeR27) {
  const auto spec = tmemjit_test::seed_layout_b(true).make();
  for (int second : {2, 1}) {
    tmem::NamedTransfer a{spec, pair_options(tmem::Language::kPtx)};
    a.options.name = "acc_a";
    tmem::NamedTransfer b{spec, pair_options(tmem::Language::kPtx)};
    b.options.name = "acc_b";
    b.options.cta_group = second;
    const tmem::NamedTransfer transfers[] = {a, b};
    std::vector<tmem::kernels::TransferCode> codes;
    for (const auto& t : transfers)
      codes.push_back(tmem::kernels::prepare_transfer(t.spec, t.options).value());
    auto group = tmem::kernels::lifecycle_cta_group(codes);
    if (second == 2) {
      ASSERT_TRUE(group.ok()) << group.error().full_text();
      EXPECT_EQ(*group, 2);
      continue;
    }
    ASSERT_FALSE(group.ok());
    EXPECT_EQ(group.error().rule(), tmem::Rule::kOneCtaGroupPerKernel) << group.error().full_text();
    tmem::KernelSource source;
    source.language = tmem::Language::kPtx;
    source.text = ".version 8.6\n.target sm_100a\n.address_size 64\n.visible .entry k() { ret; }\n";
    source.entry = "k";
    tmem::CompileOptions options;
    options.backend = tmem::Backend::kPtxas;
    auto kernel = tmem::compile_kernel(source, transfers, options);
    ASSERT_FALSE(kernel.ok());
    EXPECT_EQ(kernel.error().rule(), tmem::Rule::kOneCtaGroupPerKernel)
        << kernel.error().full_text();
  }
}

}  // namespace
