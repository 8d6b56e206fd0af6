// A user's kernel specialized by compile_kernel and run on a GPU (label emu): the sm_90 emulation
// on any GPU of compute capability 9.0 or later (the real tcgen05 kernel on 10.x/11.x). The data
// is checked against the views: TMEM cell by cell through an independent 32x32b dump, and the
// registers element by element. Then the addressing patterns of real kernels: absolute lanes
// (CuTe, Triton), warp-relative lanes (DeepGEMM, TileLang: a warning, emulated in the warp's own
// slab), a warp that addresses another warp's lanes (an error naming the instruction and the
// thread), and ld destinations read before the wait (CUTLASS's SM100 epilogue).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/spec_fixtures.h"
#include "emu_where.h"
#include "ptx_user_kernel.h"
#include "runtime/cuda/driver.h"
#include "tmem/check.h"
#include "tmem/specialize.h"

namespace tmem {
namespace {

// Layout D, one 128 x 64 tile: lane r, column c holds element (r, c); 32x32b.x32 twice.
const char* kTile = "tmem_datapath_layout(\"D\",128,64)";
const char* kRegs = "tensor((128,64), S[(128,64):(1@tid_in_wg,1)], f32)";
const char* kSplit = ".rearrange(\"(g r) (k c) -> g k r c\", g=4, k=2)";

TransferSpec tile_spec(bool store) {
  return TransferSpec::from_fields(
             std::string("tcgen05.") + (store ? "st" : "ld") + ".sync.aligned.32x32b.x32.b32",
             "warpgroup", std::string(kTile) + kSplit, std::string(kRegs) + kSplit)
      .value();
}

// Every warp writes its tile rows through acc_st and reads them back through acc_ld, passing
// `passed` as its warp (warp_argument): its own warp (absolute lanes), 0 from every warp
// (warp-relative lanes), or the next warp (another warp's lanes). The transfer `raw` dumps TMEM
// through the 32x32b identity of each warp's own slab. acc_ld does not wait: the kernel reads one
// destination register first, then waits (CUTLASS reads destinations between waits).
const char* kProbe = R"(#include <tmemjit/transfers.cuh>

extern "C" __global__ void __launch_bounds__(128)
    probe(const float* in, float* out, unsigned int* dump, float* early, int mode) {
  __shared__ unsigned int base_shared;
  const unsigned int warp = threadIdx.x / 32;
  if (warp == 0) tmemjit::alloc(&base_shared, 64);
  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
  const unsigned int base = base_shared;
  const unsigned int passed = mode == 0 ? warp : mode == 1 ? 0u : (warp + 1u) % 4u;
  float regs[acc_st_regs];
#pragma unroll
  for (int s = 0; s < acc_st_regs; ++s) {
    int index[2];
    acc_st_coord(threadIdx.x, s, index);
    regs[s] = in[index[0] * 64 + index[1]];
  }
  acc_st(base, regs, passed);
  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
  unsigned int cells[raw_regs];
  raw(base, cells);
#pragma unroll
  for (int s = 0; s < raw_regs; ++s) {
    int index[3];
    raw_coord(threadIdx.x, s, index);
    dump[(index[0] * 32 + index[1]) * 64 + index[2]] = cells[s];
  }
  float back[acc_ld_regs];
  acc_ld(base, back, passed);
  early[threadIdx.x] = back[5];  // before acc_ld_wait()
  acc_ld_wait();
#pragma unroll
  for (int s = 0; s < acc_ld_regs; ++s) {
    int index[2];
    acc_ld_coord(threadIdx.x, s, index);
    out[index[0] * 64 + index[1]] = back[s];
  }
  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
  if (warp == 0) tmemjit::dealloc(base, 64);
}
)";

struct ProbeRun {
  std::vector<float> in, out, early;
  std::vector<std::uint32_t> raw;
  Result<std::vector<std::string>> check = std::vector<std::string>{};
};

class CompileKernelEmu : public ::testing::Test {
 protected:
  void SetUp() override {
    where_ = where_to_run();
    if (!where_.skip.empty()) GTEST_SKIP() << where_.skip;
  }

  Result<Kernel> compile() {
    DeviceFunctionOptions st, ld, raw;
    st.name = "acc_st";
    st.warp_argument = true;
    ld = st;
    ld.name = "acc_ld";
    ld.wait = false;
    raw.name = "raw";
    const auto raw_op = Opcode::parse("tcgen05.ld.sync.aligned.32x32b.x64.b32").value();
    const std::vector<NamedTransfer> transfers = {
        {tile_spec(true), st},
        {tile_spec(false), ld},
        {tmemjit_test::identity_spec(raw_op).make(), raw}};
    KernelSource source;
    source.text = kProbe;
    source.entry = "probe";
    source.path = "probe.cu";
    CompileOptions options;
    options.target = where_.target;
    return compile_kernel(source, transfers, options);
  }

  ProbeRun run(const Kernel& kernel, int mode, bool checked = false) {
    ProbeRun result;
    constexpr size_t kElements = 128 * 64;
    result.in.resize(kElements);
    for (size_t i = 0; i < kElements; ++i) result.in[i] = static_cast<float>(i) + 0.25f;
    auto in = driver::DeviceBuffer::alloc(kElements * 4).value();
    auto out = driver::DeviceBuffer::alloc(kElements * 4).value();
    auto raw = driver::DeviceBuffer::alloc(kElements * 4).value();
    auto early = driver::DeviceBuffer::alloc(128 * 4).value();
    EXPECT_TRUE(in.upload(result.in.data(), kElements * 4).ok());
    EXPECT_TRUE(out.fill(0).ok());
    EXPECT_TRUE(raw.fill(0).ok());
    void* args[] = {in.arg(), out.arg(), raw.arg(), early.arg(), &mode};
    LaunchConfig config;
    config.block = {128, 1, 1};
    const uint64_t addresses[] = {in.address(), out.address(), raw.address(), early.address()};
    const KernelArg typed[] = {{&addresses[0], 8},
                               {&addresses[1], 8},
                               {&addresses[2], 8},
                               {&addresses[3], 8},
                               {&mode, sizeof mode}};
    Status launched = checked ? kernel.launch(config, std::span<const KernelArg>(typed))
                              : kernel.launch(config, args);
    EXPECT_TRUE(launched.ok()) << launched.error().full_text();
    EXPECT_TRUE(driver::synchronize().ok());
    result.check = kernel.emulation_check();
    result.out.resize(kElements);
    result.raw.resize(kElements);
    result.early.resize(128);
    EXPECT_TRUE(out.download(result.out.data(), kElements * 4).ok());
    EXPECT_TRUE(raw.download(result.raw.data(), kElements * 4).ok());
    EXPECT_TRUE(early.download(result.early.data(), 128 * 4).ok());
    return result;
  }

  // TMEM lane r, column c holds element (r, c) of the tile; the registers brought every element
  // back to its place; the early read saw the loaded value.
  static void expect_data(const ProbeRun& run) {
    for (int r = 0; r < 128; ++r)
      for (int c = 0; c < 64; ++c) {
        const size_t i = static_cast<size_t>(r * 64 + c);
        std::uint32_t bits = 0;
        std::memcpy(&bits, &run.in[i], 4);
        ASSERT_EQ(run.raw[i], bits) << "TMEM lane " << r << ", column " << c;
        ASSERT_EQ(run.out[i], run.in[i]) << "element (" << r << ", " << c << ")";
      }
    // Slot 5 of thread t is element (t, 5) (Layout D, 32x32b: slot = column).
    for (int t = 0; t < 128; ++t)
      ASSERT_EQ(run.early[static_cast<size_t>(t)], run.in[static_cast<size_t>(t * 64 + 5)])
          << "the destination read before the wait, thread " << t;
  }

  Where where_;
};

TEST_F(CompileKernelEmu, AbsoluteLanesMoveEveryElementWhereTheViewsSay) {
  auto kernel = compile();
  ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
  const ProbeRun result = run(*kernel, /*mode=*/0);
  ASSERT_TRUE(result.check.ok()) << result.check.error().full_text();
  EXPECT_TRUE(result.check->empty()) << (*result.check)[0];
  expect_data(result);
}

TEST_F(CompileKernelEmu, CheckedLaunchRefusesMismatchedArgumentsAndRunsMatchingOnes) {
  auto kernel = compile();
  ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
  auto sizes = kernel->parameter_sizes();
  ASSERT_TRUE(sizes.ok()) << sizes.error().full_text();
  EXPECT_EQ(*sizes, (std::vector<size_t>{8, 8, 8, 8, 4}));

  const uint64_t address = 0;
  const int64_t wide_mode = 0;
  const KernelArg pointer{&address, 8};
  LaunchConfig config;
  config.block = {128, 1, 1};
  const KernelArg too_few[] = {pointer, pointer, pointer, pointer};
  Status refused = kernel->launch(config, std::span<const KernelArg>(too_few));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kUsage);
  EXPECT_EQ(refused.error().message(), "launch of probe with 4 arguments; the kernel takes 5");
  const KernelArg wide[] = {pointer, pointer, pointer, pointer, {&wide_mode, 8}};
  refused = kernel->launch(config, std::span<const KernelArg>(wide));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("argument 4 is 8 bytes; the kernel's parameter 4 is 4"),
            std::string::npos)
      << refused.error().message();

  const ProbeRun result = run(*kernel, /*mode=*/0, /*checked=*/true);
  ASSERT_TRUE(result.check.ok()) << result.check.error().full_text();
  EXPECT_TRUE(result.check->empty()) << (*result.check)[0];
  expect_data(result);
}

TEST_F(CompileKernelEmu, WarpRelativeLanesAreEmulatedInTheWarpsSlabWithAWarning) {
  auto kernel = compile();
  ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
  if (!kernel->emulated()) GTEST_SKIP() << "real tcgen05: the lane rule is the hardware's";
  const ProbeRun result = run(*kernel, /*mode=*/1);
  ASSERT_TRUE(result.check.ok()) << result.check.error().full_text();
  ASSERT_FALSE(result.check->empty());
  const std::string& warning = (*result.check)[0];
  EXPECT_NE(warning.find("tcgen05.st.sync.aligned.32x32b.x32.b32 of acc_st"), std::string::npos)
      << warning;
  EXPECT_NE(warning.find("thread 32 (warp 1)"), std::string::npos) << warning;
  EXPECT_NE(warning.find("warp-relative lane address"), std::string::npos) << warning;
  EXPECT_NE(warning.find("emulated as lane 32"), std::string::npos) << warning;
  expect_data(result);
}

TEST_F(CompileKernelEmu, AnotherWarpsLanesAreAnErrorNamingTheInstructionAndThread) {
  auto kernel = compile();
  ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
  if (!kernel->emulated()) GTEST_SKIP() << "real tcgen05: the hardware would fault";
  const ProbeRun result = run(*kernel, /*mode=*/2);
  ASSERT_FALSE(result.check.ok());
  const Error& error = result.check.error();
  EXPECT_EQ(error.code(), ErrorCode::kRule);
  EXPECT_NE(error.message().find("of acc_st (instruction 1 of 2) by thread 0 (warp 0) of CTA 0"),
            std::string::npos)
      << error.message();
  EXPECT_NE(error.message().find("rule R17"), std::string::npos) << error.message();
}

// A PTX kernel (tests/jit/ptx_user_kernel.h) gets the emulated .funcs on sm_90 and moves the seed's
// Layout B tile there and back: every element returns to its place.
TEST_F(CompileKernelEmu, PtxSourceRoundTripMovesEveryElement) {
  auto ptx = testing::ptx_roundtrip_kernel(64);
  ASSERT_TRUE(ptx.ok()) << ptx.error().full_text();
  DeviceFunctionOptions st, ld;
  st.name = "acc_st";
  ld.name = "acc_ld";
  const std::vector<NamedTransfer> transfers = {{tmemjit_test::seed_layout_b(true).make(), st},
                                                {tmemjit_test::seed_layout_b(false).make(), ld}};
  CompileOptions options;
  options.target = where_.target;
  auto kernel = compile_kernel(KernelSource{Language::kPtx, *ptx, "roundtrip", "roundtrip.ptx"},
                               transfers, options);
  ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
  constexpr size_t kElements = 128 * 128;  // the kernel's row pitch is 128; the tile is 64 x 128
  std::vector<float> in(kElements), out(kElements);
  for (size_t i = 0; i < kElements; ++i) in[i] = static_cast<float>(i) + 0.5f;
  auto in_buffer = driver::DeviceBuffer::alloc(kElements * 4).value();
  auto out_buffer = driver::DeviceBuffer::alloc(kElements * 4).value();
  ASSERT_TRUE(in_buffer.upload(in.data(), kElements * 4).ok());
  ASSERT_TRUE(out_buffer.fill(0).ok());
  void* args[] = {in_buffer.arg(), out_buffer.arg()};
  LaunchConfig config;
  config.block = {128, 1, 1};
  Status launched = kernel->launch(config, args);
  ASSERT_TRUE(launched.ok()) << launched.error().full_text();
  ASSERT_TRUE(driver::synchronize().ok());
  auto check = kernel->emulation_check();
  ASSERT_TRUE(check.ok()) << check.error().full_text();
  EXPECT_TRUE(check->empty()) << (*check)[0];
  ASSERT_TRUE(out_buffer.download(out.data(), kElements * 4).ok());
  for (size_t r = 0; r < 64; ++r)
    for (size_t c = 0; c < 128; ++c)
      ASSERT_EQ(out[r * 128 + c], in[r * 128 + c]) << "element (" << r << ", " << c << ")";
}

}  // namespace
}  // namespace tmem
