// compile_transfer with CompileOptions::cta_group = 2 (the CTA pair, TCGEN05.md §6): its own cache
// entry, the pair's PTX in the Kernel, and a launch that is not a whole number of clusters refused
// before anything is loaded.
#include <gtest/gtest.h>

#include "common/spec_fixtures.h"
#include "runtime/jit/compile_transfer.h"
#include "tmem/cache.h"
#include "tmem/jit.h"

namespace tmem {
namespace {

TEST(CtaPairKey, ThePairHasItsOwnCacheKey) {
  const TransferSpec spec = tmemjit_test::seed_layout_b(true).make();
  CompileOptions single, pair;
  pair.cta_group = 2;
  EXPECT_NE(transfer_cache_key(spec, single, KernelKind::kRoundtrip).value(),
            transfer_cache_key(spec, pair, KernelKind::kRoundtrip).value());
  CompileOptions explicit_single;
  explicit_single.cta_group = 1;
  EXPECT_EQ(transfer_cache_key(spec, single, KernelKind::kRoundtrip).value(),
            transfer_cache_key(spec, explicit_single, KernelKind::kRoundtrip).value());
}

TEST(CtaPairKey, TransferPtxFollowsTheOptions) {
  const TransferSpec spec = tmemjit_test::seed_layout_b(true).make();
  CompileOptions pair;
  pair.cta_group = 2;
  auto ptx = transfer_ptx(spec, KernelKind::kLoad, pair);
  ASSERT_TRUE(ptx.ok()) << ptx.error().full_text();
  EXPECT_NE(ptx->find("tcgen05.alloc.cta_group::2"), std::string::npos);
  pair.target = Target::kSm90;  // the emulated pair keeps the cluster barrier
  auto emulated = transfer_ptx(spec, KernelKind::kLoad, pair);
  ASSERT_TRUE(emulated.ok()) << emulated.error().full_text();
  EXPECT_NE(emulated->find("barrier.cluster.wait.aligned;"), std::string::npos);
  EXPECT_EQ(emulated->find("\ttcgen05.alloc"), std::string::npos);  // only its comment
  pair.cta_group = 3;
  auto bad = transfer_ptx(spec, KernelKind::kLoad, pair);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), ErrorCode::kUsage);
}

TEST(CtaPairCompile, PairCompilesAndLaunchesOnlyWholeClusters) {
  // Memory only: nothing of this test lands in the user's disk cache.
  const CacheOptions saved = cache_options();
  CacheOptions memory_only = saved;
  memory_only.disk = false;
  set_cache_options(memory_only);
  const TransferSpec spec = tmemjit_test::seed_layout_b(true).make();
  CompileOptions pair;
  pair.cta_group = 2;
  pair.backend = Backend::kPtxas;
  auto kernel = compile_transfer(spec, pair, KernelKind::kRoundtrip);
  ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
  EXPECT_NE(kernel->ptx().find("tcgen05.dealloc.cta_group::2"), std::string::npos);
  LaunchConfig config;
  config.grid = {3, 1, 1};
  config.block = {128, 1, 1};
  config.cluster_ctas = 2;
  const Status launched = kernel->launch(config, nullptr);
  ASSERT_FALSE(launched.ok());
  EXPECT_EQ(launched.error().code(), ErrorCode::kUsage) << launched.error().full_text();
  set_cache_options(saved);
}

}  // namespace
}  // namespace tmem
