// compile_transfer with CompileOptions::cta_group = 2 (the CTA pair, docs/tcgen05-rules.md
// §Lifecycle): its own cache entry, the pair's PTX in the Kernel, and a launch that is not a whole
// number of clusters refused before anything is loaded.
#include <gtest/gtest.h>

#include <vector>

#include "common/spec_fixtures.h"
#include "runtime/compile/sass.h"
#include "runtime/cuda/driver.h"
#include "runtime/jit/compile_transfer.h"
#include "tmem/cache.h"
#include "tmem/jit.h"
#include "tmem/specialize.h"

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

// A user's kernel written for a CTA pair (docs/specialization.md): warp 0 of each CTA allocates
// with the pair's helpers, cluster_sync() orders the peers around the use and the release.
const char* kPairSource = R"(#include <tmemjit/transfers.cuh>

extern "C" __global__ void __launch_bounds__(128) pair_roundtrip(const float* in, float* out) {
  __shared__ unsigned int base_shared;
  if (threadIdx.x / 32 == 0) tmemjit::alloc(&base_shared, 128);
  tmemjit::fence_before_sync();
  tmemjit::cluster_sync();
  tmemjit::fence_after_sync();
  const unsigned int base = base_shared;
  const int block = blockIdx.x * 128 * 128;
  float regs[acc_st_regs];
  for (int s = 0; s < acc_st_regs; ++s) {
    int index[2];
    acc_st_coord(threadIdx.x, s, index);
    regs[s] = index[0] < 0 ? 0.0f : in[block + index[0] * 128 + index[1]];
  }
  acc_st(base, regs);
  float back[acc_ld_regs];
  acc_ld(base, back);
  for (int s = 0; s < acc_ld_regs; ++s) {
    int index[2];
    acc_ld_coord(threadIdx.x, s, index);
    if (index[0] >= 0) out[block + index[0] * 128 + index[1]] = back[s];
  }
  tmemjit::fence_before_sync();
  tmemjit::cluster_sync();
  tmemjit::fence_after_sync();
  if (threadIdx.x / 32 == 0) tmemjit::dealloc(base, 128);
  tmemjit::cluster_sync();
}
)";

// The seed's Layout B store and load as acc_st and acc_ld, both cta_group::2.
std::vector<NamedTransfer> pair_transfers() {
  std::vector<NamedTransfer> transfers;
  for (bool store : {true, false}) {
    NamedTransfer t{tmemjit_test::seed_layout_b(store).make(), {}};
    t.options.name = store ? "acc_st" : "acc_ld";
    t.options.cta_group = 2;
    transfers.push_back(t);
  }
  return transfers;
}

TEST(CtaPairCompile, UserKernelWithThePairHelpersCompilesForSm100aAndSm90) {
  const CacheOptions saved = cache_options();
  CacheOptions memory_only = saved;
  memory_only.disk = false;
  set_cache_options(memory_only);
  const KernelSource source{Language::kCuda, kPairSource, "pair_roundtrip", ""};
  const std::vector<NamedTransfer> transfers = pair_transfers();
  // sm_100a last: where no disassembler is found, the test skips after both compiles.
  for (Target target : {Target::kSm90, Target::kSm100a}) {
    CompileOptions options;
    options.target = target;
    auto kernel = compile_kernel(source, transfers, options);
    ASSERT_TRUE(kernel.ok()) << to_string(target) << ": " << kernel.error().full_text();
    if (target != Target::kSm100a) continue;
    const auto tool = sass::find_disassembler();
    if (!tool) {
      set_cache_options(saved);
      GTEST_SKIP() << "compiled for sm_100a and sm_90; SASS not checked: "
                   << sass::search_description();
    }
    const sass::Listing listing(sass::disassemble(*tool, kernel->cubin()).value());
    int paired = 0;
    for (const std::string& m : listing.mnemonics())
      paired += m.rfind("UTCATOMSWS.2CTA", 0) == 0 && m.find("FIND_AND_SET") != std::string::npos;
    EXPECT_GT(paired, 0) << "the pair's alloc in the SASS";
    EXPECT_EQ(listing.count("UCGABAR_ARV"), 3);
  }
  set_cache_options(saved);
}

// The same user kernel launched as one cluster of 2 CTAs (label emu): the sm_90 emulation on a
// Hopper GPU, the real pair on 10.x/11.x. Each CTA round-trips its own 64 x 128 tile. Skips with
// the reason where there is no such GPU.
TEST(CtaPairEmu, UserKernelRoundTripsBothTilesInAClusterOfTwo) {
  if (Status ok = driver::ensure_driver(); !ok.ok()) GTEST_SKIP() << ok.error().message();
  auto count = driver::device_count();
  if (!count.ok() || *count == 0)
    GTEST_SKIP() << (count.ok() ? "no CUDA device" : count.error().message());
  auto info = driver::device_info(0);
  ASSERT_TRUE(info.ok()) << info.error().full_text();
  if (info->compute_capability < 90)
    GTEST_SKIP() << "clusters need compute capability 9.0 or later, found "
                 << driver::cc_to_string(info->compute_capability);
  Target target = Target::kSm90;
  if (info->compute_capability >= 100) {
    auto real = parse_target("sm_" + std::to_string(info->compute_capability) + "a");
    if (real.ok()) target = *real;
  }
  const KernelSource source{Language::kCuda, kPairSource, "pair_roundtrip", ""};
  const std::vector<NamedTransfer> transfers = pair_transfers();
  CompileOptions options;
  options.target = target;
  auto kernel = compile_kernel(source, transfers, options);
  ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();

  constexpr size_t kBlock = 128 * 128;  // the kernel's per-CTA stride; the tile is 64 x 128
  std::vector<float> in(2 * kBlock), out(2 * kBlock, -1.0f);
  for (size_t k = 0; k < in.size(); ++k) in[k] = static_cast<float>(k) + 0.5f;
  auto in_buffer = driver::DeviceBuffer::alloc(in.size() * 4).value();
  auto out_buffer = driver::DeviceBuffer::alloc(out.size() * 4).value();
  ASSERT_TRUE(in_buffer.upload(in.data(), in.size() * 4).ok());
  ASSERT_TRUE(out_buffer.upload(out.data(), out.size() * 4).ok());
  void* args[] = {in_buffer.arg(), out_buffer.arg()};
  LaunchConfig config;
  config.grid = {2, 1, 1};
  config.block = {128, 1, 1};
  config.cluster_ctas = 2;
  const Status launched = kernel->launch(config, args);
  ASSERT_TRUE(launched.ok()) << launched.error().full_text();
  ASSERT_TRUE(driver::synchronize().ok());
  if (kernel->emulated()) {
    auto check = kernel->emulation_check();
    ASSERT_TRUE(check.ok()) << check.error().full_text();
  }
  ASSERT_TRUE(out_buffer.download(out.data(), out.size() * 4).ok());
  for (size_t cta = 0; cta < 2; ++cta)
    for (size_t k = 0; k < 64 * 128; ++k)
      ASSERT_EQ(out[cta * kBlock + k], in[cta * kBlock + k]) << "CTA " << cta << " element " << k;
}

}  // namespace
}  // namespace tmem
