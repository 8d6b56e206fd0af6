// Tests of the lazily opened CUDA driver: with no driver every call fails with the clear
// "no CUDA driver" error and nothing crashes; with one, device queries and target checks work.
#include "runtime/cuda/driver.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "runtime/jit/kernel_impl.h"
#include "tmem/kernel.h"

namespace tmem {
namespace {

bool driver_present() {
  static const bool present = [] {
    void* handle = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) ::dlclose(handle);
    return handle != nullptr;
  }();
  return present;
}

// What the dynamic loader says when libcuda.so.1 does not load (empty when it does).
std::string driver_load_error() {
  void* handle = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle != nullptr) {
    ::dlclose(handle);
    return {};
  }
  const char* why = ::dlerror();
  return why != nullptr ? why : "";
}

void expect_no_driver(const Error& error) {
  EXPECT_EQ(error.code(), ErrorCode::kDriver);
  EXPECT_EQ(error.message().rfind("no CUDA driver: libcuda.so.1 could not be loaded (", 0), 0u)
      << error.message();
  EXPECT_EQ(error.message().back(), ')');
}

Kernel some_kernel() {
  auto payload = std::make_shared<Payload>();
  payload->blob = {'n', 'o', 't', ' ', 'a', ' ', 'c', 'u', 'b', 'i', 'n'};
  payload->text = ".version 8.6\n.target sm_100a\n";
  return make_kernel("tmem_roundtrip", Target::kSm100a, payload);
}

TEST(DriverWithoutDriver, EveryCallFailsClearly) {
  if (driver_present()) GTEST_SKIP() << "a CUDA driver is installed; see DriverWithDriver";
  for (int repeat = 0; repeat < 2; ++repeat) {  // the outcome of the first dlopen is remembered
    Status ensured = driver::ensure_driver();
    ASSERT_FALSE(ensured.ok());
    expect_no_driver(ensured.error());
    EXPECT_EQ(ensured.error().details(),
              "loading and launching kernels needs the NVIDIA driver; checking, compiling and "
              "caching work without it");
    EXPECT_EQ(ensured.error().device_fault(), DeviceFault::kNoDriver);
    EXPECT_EQ(ensured.error().message(),
              "no CUDA driver: libcuda.so.1 could not be loaded (" + driver_load_error() + ")");
    Result<int> count = driver::device_count();
    ASSERT_FALSE(count.ok());
    expect_no_driver(count.error());
  }
  expect_no_driver(driver::driver_version().error());
  expect_no_driver(driver::device_info(0).error());
  expect_no_driver(driver::current_device().error());
  expect_no_driver(driver::check_target(Target::kSm100a, 0).error());
  const std::vector<char> image(64, 0);
  expect_no_driver(driver::LoadedLibrary::load(image, Target::kSm100a).error());
  expect_no_driver(driver::DeviceBuffer::alloc(1024).error());
  expect_no_driver(driver::driver_link_ptx(".version 8.6", Target::kSm100a).error());
  expect_no_driver(driver::launch(nullptr, Target::kSm100a, {}, {}, 0, nullptr, nullptr).error());
  expect_no_driver(driver::synchronize().error());
}

TEST(DriverWithoutDriver, KernelHandleWorksCompileOnly) {
  if (driver_present()) GTEST_SKIP() << "a CUDA driver is installed; see DriverWithDriver";
  const Kernel kernel = some_kernel();
  ASSERT_TRUE(kernel.valid());
  EXPECT_EQ(kernel.name(), "tmem_roundtrip");
  EXPECT_EQ(kernel.target(), Target::kSm100a);
  EXPECT_EQ(kernel.cubin().size(), 11u);
  EXPECT_EQ(kernel.ptx().substr(0, 12), ".version 8.6");
  EXPECT_FALSE(kernel.loaded());
  Status loaded = kernel.load();
  ASSERT_FALSE(loaded.ok());
  expect_no_driver(loaded.error());
  LaunchConfig config;
  config.grid = {1, 1, 1};
  config.block = {128, 1, 1};
  Status launched = kernel.launch(config, nullptr);
  ASSERT_FALSE(launched.ok());
  expect_no_driver(launched.error());
  EXPECT_FALSE(kernel.loaded());
  // Launching with one's own launcher: prepare() loads, so it needs the driver; binding() of a
  // kernel that is not emulated is data of the handle (a specialized kernel: nothing to write).
  Result<PreparedKernel> prepared = kernel.prepare();
  ASSERT_FALSE(prepared.ok());
  expect_no_driver(prepared.error());
  Result<KernelBinding> binding = kernel.binding();
  ASSERT_TRUE(binding.ok()) << binding.error().full_text();
  EXPECT_EQ(binding->tier, "specialized");
  EXPECT_EQ(binding->entry, "tmem_roundtrip");
  EXPECT_EQ(binding->cubin.size(), 11u);
  EXPECT_TRUE(binding->globals.empty());
  // An emulated kernel's binding(grid) allocates its emulated TMEM: that needs the driver too.
  auto emulated = std::make_shared<Kernel::Impl>("e", Target::kSm90,
                                                 std::make_shared<Payload>(Payload{{'x'}, "", ""}),
                                                 Kernel::Impl::Emulated{});
  expect_no_driver(Kernel(emulated).binding(Dim3{1, 1, 1}).error());
  expect_no_driver(Kernel(emulated).prepare(Dim3{1, 1, 1}).error());
}

TEST(Kernel, EmptyHandleIsAUsageError) {
  const Kernel empty;
  EXPECT_FALSE(empty.valid());
  EXPECT_EQ(empty.name(), "");
  EXPECT_TRUE(empty.cubin().empty());
  EXPECT_FALSE(empty.loaded());
  EXPECT_EQ(empty.load().error().code(), ErrorCode::kUsage);
  EXPECT_EQ(empty.launch({}, nullptr).error().code(), ErrorCode::kUsage);
}

TEST(Driver, ComputeCapabilityText) {
  EXPECT_EQ(driver::cc_to_string(90), "9.0");
  EXPECT_EQ(driver::cc_to_string(100), "10.0");
  EXPECT_EQ(driver::cc_to_string(103), "10.3");
}

TEST(DriverWithDriver, DeviceQueriesAndTargetChecks) {
  if (!driver_present()) GTEST_SKIP() << "no CUDA driver (libcuda.so.1) on this machine";
  Result<int> count = driver::device_count();
  ASSERT_TRUE(count.ok()) << count.error().message();
  if (*count == 0) GTEST_SKIP() << "the CUDA driver reports no device";
  Result<int> version = driver::driver_version();
  ASSERT_TRUE(version.ok());
  EXPECT_GE(*version, 12000);
  for (int ordinal = 0; ordinal < *count; ++ordinal) {
    Result<driver::DeviceInfo> info = driver::device_info(ordinal);
    ASSERT_TRUE(info.ok()) << info.error().message();
    EXPECT_EQ(info->ordinal, ordinal);
    EXPECT_FALSE(info->name.empty());
    EXPECT_GE(info->compute_capability, 50);
    for (Target target : all_targets()) {
      Status fits = driver::check_target(target, ordinal);
      EXPECT_EQ(fits.ok(), runs_on(target, info->compute_capability));
      if (!fits.ok()) {
        const std::string name(to_string(target));
        EXPECT_EQ(fits.error().code(), ErrorCode::kTarget);
        EXPECT_EQ(fits.error().message().rfind(
                      "cubin for " + name + " cannot load on device " + std::to_string(ordinal) +
                          " (" + info->name + ", compute capability " +
                          driver::cc_to_string(info->compute_capability) + "); " + name + " needs ",
                      0),
                  0u)
            << fits.error().message();
      }
    }
  }
  EXPECT_EQ(driver::device_info(*count).error().code(), ErrorCode::kUsage);
  Result<int> current = driver::current_device();
  ASSERT_TRUE(current.ok()) << current.error().message();

  // Device memory round trip.
  Result<driver::DeviceBuffer> buffer = driver::DeviceBuffer::alloc(256);
  ASSERT_TRUE(buffer.ok()) << buffer.error().message();
  std::vector<unsigned char> host(256), back(256, 0);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<unsigned char>(i);
  ASSERT_TRUE(buffer->upload(host.data(), host.size()).ok());
  ASSERT_TRUE(buffer->download(back.data(), back.size()).ok());
  EXPECT_EQ(host, back);
  ASSERT_TRUE(buffer->fill(0x7f).ok());
  ASSERT_TRUE(buffer->download(back.data(), back.size()).ok());
  EXPECT_EQ(back, std::vector<unsigned char>(256, 0x7f));
  EXPECT_EQ(buffer->upload(host.data(), 257).error().code(), ErrorCode::kUsage);
}

TEST(DriverWithDriver, WrongDeviceFailsBeforeLoading) {
  if (!driver_present()) GTEST_SKIP() << "no CUDA driver (libcuda.so.1) on this machine";
  Result<int> device = driver::current_device();
  if (!device.ok()) GTEST_SKIP() << device.error().message();
  Result<driver::DeviceInfo> info = driver::device_info(*device);
  ASSERT_TRUE(info.ok());
  // Pick a target this device cannot run (every device fails sm_110a or sm_100a).
  const Target wrong =
      runs_on(Target::kSm100a, info->compute_capability) ? Target::kSm110a : Target::kSm100a;
  const Kernel kernel = make_kernel("k", wrong, std::make_shared<Payload>(Payload{{'x'}, "", ""}));
  Status loaded = kernel.load();
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().code(), ErrorCode::kTarget);
  EXPECT_NE(loaded.error().message().find("needs exactly"), std::string::npos)
      << loaded.error().message();
}

}  // namespace
}  // namespace tmem
