// The device suite (label `device`): the real tcgen05 harness kernels on a GPU of compute
// capability 10.x/11.x, checked against the views' prediction. Skips with the reason elsewhere:
// "no CUDA driver (libcuda.so.1) on this machine" or "needs compute capability 10.x, found 9.0".
#include <gtest/gtest.h>

#include "common/executor_checks.h"
#include "common/executor_skip.h"

namespace {

using tmem::KernelKind;
using tmemjit_test::ExecutorCase;

tmemjit_test::ExecutorOrReason& gpu() {
  static tmemjit_test::ExecutorOrReason made = tmemjit_test::make_for_suite(tmem::Device::kGpu);
  return made;
}

#define GPU_OR_SKIP()                                  \
  if (!gpu().skip.empty()) GTEST_SKIP() << gpu().skip; \
  ASSERT_TRUE(gpu().failure.empty()) << gpu().failure; \
  [[maybe_unused]] tmem::Executor& executor = *gpu().executor

class DeviceTransfer : public ::testing::TestWithParam<ExecutorCase> {};

TEST_P(DeviceTransfer, RoundtripStoreLoadMatchTheViews) {
  GPU_OR_SKIP();
  const tmem::TransferSpec spec = GetParam().text.make();
  const tmem::Plan plan = tmem::check(spec).value();
  std::uint32_t seed = 1;
  for (KernelKind kind : {KernelKind::kRoundtrip, KernelKind::kStore, KernelKind::kLoad})
    EXPECT_TRUE(tmemjit_test::run_and_check(executor, spec, plan, kind, seed++))
        << GetParam().name << " " << tmem::to_string(kind);
}

INSTANTIATE_TEST_SUITE_P(Device, DeviceTransfer,
                         ::testing::ValuesIn(tmemjit_test::executor_cases()),
                         tmemjit_test::case_name);

TEST(Device, DescribesTheDeviceAndTarget) {
  GPU_OR_SKIP();
  EXPECT_EQ(executor.device(), tmem::Device::kGpu);
  EXPECT_EQ(executor.description().rfind("gpu on ", 0), 0u) << executor.description();
  EXPECT_NE(executor.description().find(", sm_1"), std::string::npos) << executor.description();
}

TEST(Device, FillCopiesEveryCellThroughTheRawPath) {
  GPU_OR_SKIP();
  const auto spec = tmemjit_test::seed_layout_b(true).make();
  EXPECT_TRUE(
      tmemjit_test::run_and_check(executor, spec, tmem::check(spec).value(), KernelKind::kFill, 7));
}

TEST(Device, AutoPicksTheGpu) {
  GPU_OR_SKIP();
  std::string why_not;
  auto picked = tmem::make_executor(tmem::Device::kAuto, &why_not);
  ASSERT_TRUE(picked.ok()) << picked.error().full_text();
  EXPECT_EQ((*picked)->device(), tmem::Device::kGpu);
  EXPECT_EQ(why_not, "");
}

}  // namespace
