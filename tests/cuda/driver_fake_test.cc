// Tests of runtime/cuda/driver.cc against a fake libcuda.so.1 (tests/common/fake_cuda.cc): symbol
// loading, error texts, target checks, contexts on several devices, load, launch, memory, driver
// JIT.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/emulation_kernels.h"
#include "runtime/cuda/driver.h"
#include "runtime/jit/kernel_impl.h"
#include "tmem/kernel.h"

namespace tmem {
namespace {

// Mirrors FakeLaunch in fake_cuda.cc.
struct FakeLaunch {
  int device;
  unsigned grid[3];
  unsigned block[3];
  unsigned shared_bytes;
  void* stream;
  int first_arg;
  int kernel_loaded_on[3];
  unsigned cluster[3];
};

// The fake, opened by full path before the driver's dlopen("libcuda.so.1"): the dynamic loader
// then hands the driver this already-loaded object, whose soname is libcuda.so.1.
struct Fake {
  void* handle = nullptr;
  // The hooks are called through their exact types (UBSan -fsanitize=function).
  const void* (*last_launch_raw)() = nullptr;
  const FakeLaunch* last_launch() const {
    return static_cast<const FakeLaunch*>(last_launch_raw());
  }
  int (*legacy_calls)() = nullptr;
  int (*jit_target)() = nullptr;
  void* (*context)(int) = nullptr;
  void (*set_current)(void*) = nullptr;
  const void* (*global)(const char*, int) = nullptr;  // a global's bytes on a device
  int (*launch)(void*, int) = nullptr;  // cuLaunchKernel, as a launcher of the user's own
};

const Fake& fake() {
  static const Fake loaded = [] {
    Fake f;
    f.handle = ::dlopen(TMEMJIT_FAKE_CUDA_PATH, RTLD_NOW | RTLD_GLOBAL);
    if (f.handle == nullptr) return f;
    f.last_launch_raw =
        reinterpret_cast<const void* (*)()>(::dlsym(f.handle, "fake_cuda_last_launch"));
    f.legacy_calls = reinterpret_cast<int (*)()>(::dlsym(f.handle, "fake_cuda_legacy_calls"));
    f.jit_target = reinterpret_cast<int (*)()>(::dlsym(f.handle, "fake_cuda_jit_target"));
    f.context = reinterpret_cast<void* (*)(int)>(::dlsym(f.handle, "fake_cuda_context"));
    f.set_current = reinterpret_cast<void (*)(void*)>(::dlsym(f.handle, "fake_cuda_set_current"));
    f.global =
        reinterpret_cast<const void* (*)(const char*, int)>(::dlsym(f.handle, "fake_cuda_global"));
    f.launch = reinterpret_cast<int (*)(void*, int)>(::dlsym(f.handle, "fake_cuda_launch"));
    return f;
  }();
  return loaded;
}

class FakeDriver : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(fake().handle, nullptr) << ::dlerror();
    fake().set_current(nullptr);  // every test starts with no current context
  }
  void make_current(int ordinal) { fake().set_current(fake().context(ordinal)); }
};

std::shared_ptr<const Payload> fake_cubin(const std::string& kernels) {
  auto payload = std::make_shared<Payload>();
  const std::string image = "FAKECUBIN:" + kernels;
  payload->blob.assign(image.begin(), image.end());
  payload->blob.push_back('\0');
  return payload;
}

TEST_F(FakeDriver, DeviceQueries) {
  ASSERT_TRUE(driver::ensure_driver().ok()) << driver::ensure_driver().error().message();
  EXPECT_EQ(*driver::driver_version(), 12080);
  EXPECT_EQ(*driver::device_count(), 3);
  const driver::DeviceInfo h200 = *driver::device_info(0);
  EXPECT_EQ(h200.name, "Fake H200");
  EXPECT_EQ(h200.compute_capability, 90);
  EXPECT_EQ(driver::device_info(1)->compute_capability, 100);
  EXPECT_EQ(driver::device_info(2)->compute_capability, 103);
  const Result<driver::DeviceInfo> missing = driver::device_info(3);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message(), "device 3 does not exist; 3 CUDA device(s) present");
}

TEST_F(FakeDriver, TargetChecksNameTheDeviceAndTheRule) {
  EXPECT_EQ(driver::check_target(Target::kSm100a, 0).error().message(),
            "cubin for sm_100a cannot load on device 0 (Fake H200, compute capability 9.0); "
            "sm_100a needs exactly 10.0");
  EXPECT_EQ(driver::check_target(Target::kSm100a, 2).error().message(),
            "cubin for sm_100a cannot load on device 2 (Fake B300, compute capability 10.3); "
            "sm_100a needs exactly 10.0");
  EXPECT_EQ(driver::check_target(Target::kSm103f, 1).error().message(),
            "cubin for sm_103f cannot load on device 1 (Fake B200, compute capability 10.0); "
            "sm_103f needs 10.3 or a later 10.x");
  EXPECT_EQ(driver::check_target(Target::kSm100a, 0).error().code(), ErrorCode::kTarget);
  EXPECT_TRUE(driver::check_target(Target::kSm100a, 1).ok());
  EXPECT_TRUE(driver::check_target(Target::kSm100f, 2).ok());
  EXPECT_TRUE(driver::check_target(Target::kSm103a, 2).ok());
}

TEST_F(FakeDriver, NoCurrentContextUsesDeviceZerosPrimaryContext) {
  EXPECT_EQ(*driver::current_device(), 0);
  make_current(2);
  EXPECT_EQ(*driver::current_device(), 2);  // CUdevice handles map back to ordinals
}

TEST_F(FakeDriver, KernelLoadsAndLaunchesOnSeveralDevices) {
  const Kernel kernel = make_kernel("k", Target::kSm100f, fake_cubin("other,k"));
  make_current(0);
  Status wrong = kernel.load();
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().message(),
            "cubin for sm_100f cannot load on device 0 (Fake H200, compute capability 9.0); "
            "sm_100f needs 10.0 or a later 10.x");
  EXPECT_FALSE(kernel.loaded());

  make_current(1);
  ASSERT_TRUE(kernel.load().ok());
  EXPECT_TRUE(kernel.loaded());
  int value = 42;
  void* args[] = {&value};
  LaunchConfig config;
  config.grid = {2, 3, 4};
  config.block = {128, 1, 1};
  config.shared_bytes = 1024;
  config.stream = reinterpret_cast<void*>(0x1234);
  ASSERT_TRUE(kernel.launch(config, args).ok());
  const FakeLaunch* launch = fake().last_launch();
  EXPECT_EQ(launch->device, 1);
  EXPECT_EQ(launch->cluster[0], 0u) << "a plain launch, not a cluster launch";
  EXPECT_EQ(launch->grid[0], 2u);
  EXPECT_EQ(launch->grid[1], 3u);
  EXPECT_EQ(launch->grid[2], 4u);
  EXPECT_EQ(launch->block[0], 128u);
  EXPECT_EQ(launch->shared_bytes, 1024u);
  EXPECT_EQ(launch->stream, reinterpret_cast<void*>(0x1234));
  EXPECT_EQ(launch->first_arg, 42);

  // The same handle on another device of the family: the module goes into that context too.
  make_current(2);
  value = 7;
  ASSERT_TRUE(kernel.launch(config, args).ok());
  launch = fake().last_launch();
  EXPECT_EQ(launch->device, 2);
  EXPECT_EQ(launch->first_arg, 7);
  EXPECT_EQ(launch->kernel_loaded_on[1], 1);
  EXPECT_EQ(launch->kernel_loaded_on[2], 1);

  // A device that cannot run the target is refused at launch too.
  make_current(0);
  Status refused = kernel.launch(config, args);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kTarget);
}

// Kernel::launch with KernelArgs: the count and each size are checked against the driver's
// parameter info (the fake's kernels take an int and a pointer) before the launch.
TEST_F(FakeDriver, CheckedLaunchComparesArgumentsWithTheParameters) {
  const Kernel kernel = make_kernel("k", Target::kSm100f, fake_cubin("k"));
  make_current(1);
  auto sizes = kernel.parameter_sizes();
  ASSERT_TRUE(sizes.ok()) << sizes.error().full_text();
  EXPECT_EQ(*sizes, (std::vector<size_t>{4, 8}));
  LaunchConfig config;
  config.block = {32, 1, 1};
  int value = 11;
  const uint64_t address = 0x1000;
  const KernelArg matching[] = {{&value, 4}, {&address, 8}};
  ASSERT_TRUE(kernel.launch(config, std::span<const KernelArg>(matching)).ok());
  EXPECT_EQ(fake().last_launch()->first_arg, 11);

  value = 12;
  const double as_double = 12;
  const KernelArg wrong_size[] = {{&as_double, 8}, {&address, 8}};
  Status refused = kernel.launch(config, std::span<const KernelArg>(wrong_size));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kUsage);
  EXPECT_EQ(refused.error().message(),
            "launch of k: argument 0 is 8 bytes; the kernel's parameter 0 is 4 (a pointer or "
            "64-bit integer is 8, a float or int 4)");
  EXPECT_EQ(fake().last_launch()->first_arg, 11) << "refused before the driver launched";
  const KernelArg one[] = {{&value, 4}};
  refused = kernel.launch(config, std::span<const KernelArg>(one));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message(), "launch of k with 1 argument; the kernel takes 2");
  const KernelArg missing_data[] = {{nullptr, 4}, {&address, 8}};
  refused = kernel.launch(config, std::span<const KernelArg>(missing_data));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message(),
            "launch of k: argument 0 has no data (KernelArg::data is null)");
  EXPECT_FALSE(Kernel().launch(config, std::span<const KernelArg>(matching)).ok());
}

// LaunchConfig::cluster_ctas (a cta_group::2 pair): cuLaunchKernelEx with the cluster dimension.
TEST_F(FakeDriver, ClusterLaunchPassesTheClusterDimension) {
  const Kernel kernel = make_kernel("k", Target::kSm100f, fake_cubin("k"));
  make_current(1);
  int value = 5;
  void* args[] = {&value};
  LaunchConfig config;
  config.grid = {4, 1, 1};
  config.block = {128, 1, 1};
  config.cluster_ctas = 2;
  ASSERT_TRUE(kernel.launch(config, args).ok());
  const FakeLaunch* launch = fake().last_launch();
  EXPECT_EQ(launch->grid[0], 4u);
  EXPECT_EQ(launch->cluster[0], 2u);
  EXPECT_EQ(launch->cluster[1], 1u);
  EXPECT_EQ(launch->first_arg, 5);
  config.grid = {3, 1, 1};  // not a whole number of clusters: refused before the driver
  const Status refused = kernel.launch(config, args);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kUsage);
}

// Past 48 KB of dynamic shared memory the function's allowance is raised before the launch (issue
// 40 item 3: every production GEMM needs 100-227 KB); past the device's limit the error names the
// call and the size.
TEST_F(FakeDriver, ALaunchWithMoreThan48KbOfDynamicSharedMemoryRaisesTheLimit) {
  const Kernel kernel = make_kernel("k", Target::kSm100a, fake_cubin("k"));
  make_current(1);
  int value = 7;
  void* args[] = {&value};
  LaunchConfig config;
  config.grid = {1, 1, 1};
  config.block = {128, 1, 1};
  config.shared_bytes = 200 * 1024;
  const Status big = kernel.launch(config, args);
  ASSERT_TRUE(big.ok()) << big.error().full_text();
  EXPECT_EQ(fake().last_launch()->shared_bytes, 200u * 1024);
  config.cluster_ctas = 1;
  config.shared_bytes = 228 * 1024;
  const Status too_big = kernel.launch(config, args);
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.error().code(), ErrorCode::kDriver);
  EXPECT_NE(too_big.error().message().find("MAX_DYNAMIC_SHARED_SIZE_BYTES, 233472"),
            std::string::npos)
      << too_big.error().message();
}

// Launching with a launcher of one's own (docs/specialization.md, "Launching with your own
// launcher"): prepare() writes into the module what launch() writes, the generic tier's layout
// descriptor, and hands over a CUfunction the user's cuLaunchKernel runs; binding() gives the
// same bytes without a driver call, for a module the user loads; launch() on another device
// writes them there too. A descriptor the module lacks (a transfer never called) is skipped.
TEST_F(FakeDriver, PrepareWritesWhatLaunchWritesAndBindingSaysWhatThatIs) {
  Kernel::Impl::Generic generic;
  generic.descriptors = {{"tmemjit_desc_prep", {0x11223344u, 0xAABBCCDDu}},
                         {"tmemjit_desc_dropped", {7u}}};
  auto impl = std::make_shared<Kernel::Impl>("k", Target::kSm100f,
                                             fake_cubin("k,@tmemjit_desc_prep:8"), generic);
  const Kernel kernel(impl);
  const std::vector<char> bytes = {'\x44', '\x33', '\x22', '\x11', '\xDD', '\xCC', '\xBB', '\xAA'};
  Result<KernelBinding> binding = kernel.binding();
  ASSERT_TRUE(binding.ok()) << binding.error().full_text();
  EXPECT_FALSE(kernel.loaded()) << "binding() loads nothing";
  EXPECT_EQ(binding->tier, "generic");
  EXPECT_EQ(binding->entry, "k");
  EXPECT_EQ(binding->cubin.data(), kernel.cubin().data());
  ASSERT_EQ(binding->globals.size(), 2u);
  EXPECT_EQ(binding->globals[0].symbol, "tmemjit_desc_prep");
  EXPECT_EQ(binding->globals[0].bytes, bytes);
  EXPECT_EQ(binding->globals[1].symbol, "tmemjit_desc_dropped");

  make_current(1);
  Result<PreparedKernel> prepared = kernel.prepare();
  ASSERT_TRUE(prepared.ok()) << prepared.error().full_text();
  EXPECT_EQ(prepared->tier, "generic");
  EXPECT_NE(prepared->function, nullptr);
  EXPECT_NE(prepared->kernel, nullptr);
  const void* written = fake().global("tmemjit_desc_prep", 1);
  ASSERT_NE(written, nullptr);
  EXPECT_EQ(
      std::vector<char>(static_cast<const char*>(written), static_cast<const char*>(written) + 8),
      bytes);
  EXPECT_EQ(fake().launch(prepared->function, 31), 0);  // CUDA_SUCCESS
  EXPECT_EQ(fake().last_launch()->device, 1);
  EXPECT_EQ(fake().last_launch()->first_arg, 31);

  make_current(2);
  EXPECT_EQ(fake().global("tmemjit_desc_prep", 2), nullptr);
  int value = 3;
  void* args[] = {&value};
  LaunchConfig config;
  config.block = {128, 1, 1};
  ASSERT_TRUE(kernel.launch(config, args).ok());
  written = fake().global("tmemjit_desc_prep", 2);
  ASSERT_NE(written, nullptr);
  EXPECT_EQ(
      std::vector<char>(static_cast<const char*>(written), static_cast<const char*>(written) + 8),
      bytes);

  // A specialized kernel has nothing to write; an empty handle is a usage error.
  const Kernel plain = make_kernel("k", Target::kSm100f, fake_cubin("k"));
  ASSERT_TRUE(plain.binding().ok());
  EXPECT_TRUE(plain.binding()->globals.empty());
  EXPECT_EQ(plain.binding()->tier, "specialized");
  ASSERT_TRUE(plain.prepare().ok());
  EXPECT_EQ(Kernel().prepare().error().code(), ErrorCode::kUsage);
  EXPECT_EQ(Kernel().binding().error().code(), ErrorCode::kUsage);
}

// An emulated kernel binds emulated TMEM per CTA: prepare and binding need the grid, and then
// tmemjit::emu_state holds the buffers' addresses, the same in the module prepare() wrote and in
// the bytes binding() hands a module of the user's own.
TEST_F(FakeDriver, AnEmulatedKernelIsPreparedForAGrid) {
  const std::string state_symbol = kernels::kEmuStateSymbol;
  auto impl =
      std::make_shared<Kernel::Impl>("e", Target::kSm90, fake_cubin("e,@" + state_symbol + ":24"),
                                     Kernel::Impl::Emulated{{}, /*strict=*/true});
  const Kernel kernel(impl);
  make_current(0);  // the fake H200
  for (const Error& error : {kernel.prepare().error(), kernel.binding().error()}) {
    EXPECT_EQ(error.code(), ErrorCode::kUsage);
    EXPECT_NE(error.message().find(" of e: an emulated kernel (target sm_90) binds emulated TMEM "
                                   "for each CTA of the launch; pass the launch's grid"),
              std::string::npos)
        << error.message();
  }
  Result<PreparedKernel> prepared = kernel.prepare(Dim3{2, 1, 1});
  ASSERT_TRUE(prepared.ok()) << prepared.error().full_text();
  const void* written = fake().global(state_symbol.c_str(), 0);
  ASSERT_NE(written, nullptr);
  // tmem, status, flags: strict mode is bit 0 of the third word.
  const std::vector<char> state(static_cast<const char*>(written),
                                static_cast<const char*>(written) + 24);
  EXPECT_NE(std::vector<char>(state.begin(), state.begin() + 16), std::vector<char>(16, 0));
  std::uint64_t flags = 0;
  std::memcpy(&flags, state.data() + 16, sizeof flags);
  EXPECT_EQ(flags, 1u);
  Result<KernelBinding> binding = kernel.binding(Dim3{2, 1, 1});
  ASSERT_TRUE(binding.ok()) << binding.error().full_text();
  ASSERT_EQ(binding->globals.size(), 1u);
  EXPECT_EQ(binding->globals[0].symbol, state_symbol);
  EXPECT_EQ(binding->globals[0].bytes, state) << "the same buffers, the grid fits them";
  Result<std::vector<std::string>> check = kernel.emulation_check();
  ASSERT_TRUE(check.ok()) << check.error().full_text();
  EXPECT_TRUE(check->empty());
}

TEST_F(FakeDriver, LoadErrorsCarryTheCallAndTheCudaError) {
  make_current(1);
  auto bad = std::make_shared<Payload>();
  bad->blob = {'E', 'L', 'F', '\0'};
  Status invalid = make_kernel("k", Target::kSm100a, bad).load();
  ASSERT_FALSE(invalid.ok());
  EXPECT_EQ(invalid.error().code(), ErrorCode::kDriver);
  EXPECT_EQ(invalid.error().message(),
            "cuLibraryLoadData failed: CUDA_ERROR_INVALID_IMAGE: device kernel image is invalid");
  Status missing = make_kernel("nope", Target::kSm100a, fake_cubin("k")).load();
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message(),
            "cuLibraryGetKernel failed: CUDA_ERROR_NOT_FOUND: named symbol not found (entry "
            "'nope')");
}

// Issue 9: a driver too old for the code says so and what to do, as a kDriver error.
TEST_F(FakeDriver, ADriverTooOldForTheCodeSaysSo) {
  make_current(1);
  auto newer = std::make_shared<Payload>();
  const std::string text = "FAKENEWER";
  newer->blob.assign(text.begin(), text.end());
  newer->blob.push_back('\0');
  Status load = make_kernel("k", Target::kSm100a, newer).load();
  ASSERT_FALSE(load.ok());
  EXPECT_EQ(load.error().code(), ErrorCode::kDriver);
  EXPECT_EQ(load.error().message(),
            "cuLibraryLoadData failed: CUDA_ERROR_UNSUPPORTED_PTX_VERSION: fake error (the NVIDIA "
            "driver is older "
            "than the CUDA toolkit that produced this code; update the driver)");
}

TEST_F(FakeDriver, DeviceBufferRoundTripUsesVersionedSymbols) {
  make_current(1);
  Result<driver::DeviceBuffer> buffer = driver::DeviceBuffer::alloc(64);
  ASSERT_TRUE(buffer.ok()) << buffer.error().message();
  std::vector<char> host(64), back(64);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<char>(i * 3);
  ASSERT_TRUE(buffer->upload(host.data(), host.size()).ok());
  ASSERT_TRUE(buffer->download(back.data(), back.size()).ok());
  EXPECT_EQ(host, back);
  ASSERT_TRUE(buffer->fill(9).ok());
  ASSERT_TRUE(buffer->download(back.data(), back.size()).ok());
  EXPECT_EQ(back, std::vector<char>(64, 9));
  driver::DeviceBuffer moved = std::move(*buffer);
  EXPECT_EQ(moved.size(), 64u);
  EXPECT_EQ(buffer->address(), 0u);
  EXPECT_EQ(fake().legacy_calls(), 0);  // never the 32-bit cuMemAlloc
  ASSERT_TRUE(driver::synchronize().ok());
}

TEST_F(FakeDriver, DriverJitPassesTheTargetAndReportsTheLog) {
  make_current(1);
  Result<std::vector<char>> image = driver::driver_link_ptx(".entry k {}", Target::kSm103a);
  ASSERT_TRUE(image.ok()) << image.error().message();
  EXPECT_EQ(std::string(image->data()), "FAKECUBIN:k");
  EXPECT_EQ(fake().jit_target(), 0x10000 + 103);  // CU_TARGET_COMPUTE_103A
  Result<std::vector<char>> failed = driver::driver_link_ptx("syntax error here", Target::kSm100a);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code(), ErrorCode::kToolchain);
  EXPECT_EQ(failed.error().message(),
            "driver jit failed: cuLinkAddData: CUDA_ERROR_INVALID_PTX: a PTX JIT compilation "
            "failed: ptxas fatal: fake syntax error");
  EXPECT_NE(failed.error().details().find("backend: driver\noptions: CU_JIT_TARGET=sm_100a "
                                          "CU_JIT_OPTIMIZATION_LEVEL=4\nlog:\n"),
            std::string::npos)
      << failed.error().details();
  EXPECT_NE(failed.error().details().find("ptxas fatal: fake syntax error"), std::string::npos);
  EXPECT_NE(failed.error().details().find("syntax error here"), std::string::npos);
}

}  // namespace
}  // namespace tmem
