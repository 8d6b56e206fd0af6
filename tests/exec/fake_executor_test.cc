// The emu and gpu executors against the fake libcuda.so.1 (tests/common/fake_cuda.cc: device 0
// a 9.0 "Fake H200", device 1 a 10.0 "Fake B200", device 2 a 10.3 "Fake B300"): which device each
// accepts, the target it picks, the reasons it gives, and precise errors on the way to a launch.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/spec_fixtures.h"
#include "runtime/exec/executor.h"
#include "tmem/check.h"

namespace {

struct Fake {
  void* handle = nullptr;
  void* (*context)(int) = nullptr;
  void (*set_current)(void*) = nullptr;
};

// Opened by full path before the driver's dlopen("libcuda.so.1"), as in driver_fake_test.
const Fake& fake() {
  static const Fake loaded = [] {
    Fake f;
    f.handle = ::dlopen(TMEMJIT_FAKE_CUDA_PATH, RTLD_NOW | RTLD_GLOBAL);
    if (f.handle == nullptr) return f;
    f.context = reinterpret_cast<void* (*)(int)>(::dlsym(f.handle, "fake_cuda_context"));
    f.set_current = reinterpret_cast<void (*)(void*)>(::dlsym(f.handle, "fake_cuda_set_current"));
    return f;
  }();
  return loaded;
}

class FakeExecutors : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(fake().handle, nullptr) << ::dlerror();
    fake().set_current(nullptr);  // device 0's primary context
  }
  void make_current(int ordinal) { fake().set_current(fake().context(ordinal)); }
};

TEST_F(FakeExecutors, HopperRunsTheEmulationNotTheGpuKernels) {
  auto gpu = tmem::make_gpu_executor();
  ASSERT_FALSE(gpu.ok());
  EXPECT_EQ(gpu.error().code(), tmem::ErrorCode::kTarget);
  EXPECT_EQ(gpu.error().message(), "needs compute capability 10.x, found 9.0");
  EXPECT_NE(gpu.error().details().find("device 0 (Fake H200) has no tcgen05"), std::string::npos)
      << gpu.error().details();
  auto emu = tmem::make_emu_executor();
  ASSERT_TRUE(emu.ok()) << emu.error().full_text();
  EXPECT_EQ((*emu)->device(), tmem::Device::kEmu);
  EXPECT_EQ((*emu)->description(), "emu on Fake H200 (cc 9.0)");
  std::string why_not;
  auto picked = tmem::make_executor(tmem::Device::kAuto, &why_not);
  ASSERT_TRUE(picked.ok()) << picked.error().full_text();
  EXPECT_EQ((*picked)->device(), tmem::Device::kEmu);
  EXPECT_EQ(why_not, "gpu: needs compute capability 10.x, found 9.0\n");
}

TEST_F(FakeExecutors, BlackwellPicksItsArchTarget) {
  make_current(1);
  auto b200 = tmem::make_gpu_executor();
  ASSERT_TRUE(b200.ok()) << b200.error().full_text();
  EXPECT_EQ((*b200)->description(), "gpu on Fake B200 (cc 10.0), sm_100a");
  make_current(2);
  auto b300 = tmem::make_gpu_executor();
  ASSERT_TRUE(b300.ok()) << b300.error().full_text();
  EXPECT_EQ((*b300)->description(), "gpu on Fake B300 (cc 10.3), sm_103a");
  std::string why_not;
  auto picked = tmem::make_executor(tmem::Device::kAuto, &why_not);
  ASSERT_TRUE(picked.ok());
  EXPECT_EQ((*picked)->device(), tmem::Device::kGpu);
  EXPECT_EQ(why_not, "");
  // The emulation runs on later GPUs too (the driver compiles its PTX for them).
  auto emu = tmem::make_emu_executor();
  ASSERT_TRUE(emu.ok()) << emu.error().full_text();
  EXPECT_EQ((*emu)->description(), "emu on Fake B300 (cc 10.3)");
}

TEST_F(FakeExecutors, RunChecksBuffersThenFailsPreciselyAtTheFakeLoad) {
  const auto spec = tmemjit_test::seed_layout_b(true).make();
  const auto plan = tmem::check(spec).value();
  for (int ordinal : {0, 1}) {
    make_current(ordinal);
    auto executor = ordinal == 0 ? tmem::make_emu_executor() : tmem::make_gpu_executor();
    ASSERT_TRUE(executor.ok()) << executor.error().full_text();
    std::vector<std::uint32_t> in(128 * 64), raw(128 * 64), short_raw(10);
    auto wrong = (*executor)->run(spec, plan, tmem::KernelKind::kStore, in, short_raw);
    ASSERT_FALSE(wrong.ok());
    EXPECT_EQ(wrong.error().code(), tmem::ErrorCode::kUsage);
    EXPECT_EQ(wrong.error().message(),
              "the store kernel's second buffer (Raw) holds 10 u32 words; it needs 8192 u32 words "
              "(128 lanes x 64 "
              "columns)");
    // The kernel compiles (sm_90 emulation on device 0, sm_100a on device 1); the fake driver
    // refuses every real cubin, and that failure is reported each time, not cached.
    for (int attempt = 0; attempt < 2; ++attempt) {
      auto refused = (*executor)->run(spec, plan, tmem::KernelKind::kStore, in, raw);
      ASSERT_FALSE(refused.ok());
      EXPECT_EQ(refused.error().code(), tmem::ErrorCode::kDriver) << refused.error().full_text();
      EXPECT_EQ(
          refused.error().message(),
          "cuLibraryLoadData failed: CUDA_ERROR_INVALID_IMAGE: device kernel image is invalid");
    }
  }
}

// The pair (cta_group 2) on both executors: buffers of two CTAs, then the same precise failure
// at the fake load (the pair kernel compiles for sm_90 and sm_100a).
TEST_F(FakeExecutors, RunPairChecksTwoCtasOfBuffersThenFailsAtTheFakeLoad) {
  const auto spec = tmemjit_test::seed_layout_b(true).make();
  const auto plan = tmem::check(spec).value();
  for (int ordinal : {0, 1}) {
    make_current(ordinal);
    auto executor = ordinal == 0 ? tmem::make_emu_executor() : tmem::make_gpu_executor();
    ASSERT_TRUE(executor.ok()) << executor.error().full_text();
    std::vector<std::uint32_t> in(2 * 128 * 64), raw(2 * 128 * 64), one_cta_raw(128 * 64);
    auto wrong = (*executor)->run_pair(spec, plan, tmem::KernelKind::kStore, in, one_cta_raw);
    ASSERT_FALSE(wrong.ok());
    EXPECT_EQ(wrong.error().code(), tmem::ErrorCode::kUsage) << wrong.error().full_text();
    auto refused = (*executor)->run_pair(spec, plan, tmem::KernelKind::kStore, in, raw);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code(), tmem::ErrorCode::kDriver) << refused.error().full_text();
  }
}

}  // namespace
