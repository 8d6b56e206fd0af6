// The CUDA driver API reached through libcuda.so.1 opened at run time
// (runtime/cuda/shared_library.h), so nothing links against libcuda.
#include "runtime/cuda/driver.h"

#include <cuda.h>  // types and enums only: every function is called through a pointer below

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <optional>
#include <utility>

#include "runtime/cuda/shared_library.h"

namespace tmem::driver {
namespace {

// The ABI version asked of cuGetProcAddress: every call below exists with the signature in this
// header since CUDA 12.0, which is also the first driver with cuLibraryLoadData.
constexpr int kApiVersion = 12000;
constexpr int kMaxDevices = 128;

// One pointer per driver call; the types come from cuda.h's prototypes of the versioned symbols.
struct Api {
  decltype(&::cuGetErrorName) get_error_name = nullptr;
  decltype(&::cuGetErrorString) get_error_string = nullptr;
  decltype(&::cuInit) init = nullptr;
  decltype(&::cuDriverGetVersion) driver_get_version = nullptr;
  decltype(&::cuDeviceGetCount) device_get_count = nullptr;
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDeviceGetAttribute) device_get_attribute = nullptr;
  decltype(&::cuDeviceGetName) device_get_name = nullptr;
  decltype(&::cuCtxGetCurrent) ctx_get_current = nullptr;
  decltype(&::cuCtxSetCurrent) ctx_set_current = nullptr;
  decltype(&::cuCtxGetDevice) ctx_get_device = nullptr;
  decltype(&::cuCtxSynchronize) ctx_synchronize = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) primary_ctx_retain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease_v2) primary_ctx_release = nullptr;
  decltype(&::cuLibraryLoadData) library_load_data = nullptr;
  decltype(&::cuLibraryUnload) library_unload = nullptr;
  decltype(&::cuLibraryGetKernel) library_get_kernel = nullptr;
  decltype(&::cuKernelGetFunction) kernel_get_function = nullptr;
  decltype(&::cuLaunchKernel) launch_kernel = nullptr;
  decltype(&::cuStreamSynchronize) stream_synchronize = nullptr;
  decltype(&::cuMemAlloc_v2) mem_alloc = nullptr;
  decltype(&::cuMemFree_v2) mem_free = nullptr;
  decltype(&::cuMemcpyHtoD_v2) memcpy_htod = nullptr;
  decltype(&::cuMemcpyDtoH_v2) memcpy_dtoh = nullptr;
  decltype(&::cuMemsetD8_v2) memset_d8 = nullptr;
  decltype(&::cuLinkCreate_v2) link_create = nullptr;
  decltype(&::cuLinkAddData_v2) link_add_data = nullptr;
  decltype(&::cuLinkComplete) link_complete = nullptr;
  decltype(&::cuLinkDestroy) link_destroy = nullptr;
};

// Base name for cuGetProcAddress, versioned name for the symbol table (cuMemAlloc is cuMemAlloc_v2
// since CUDA 3.2: the unversioned export is the old 32-bit ABI and must never be called).
struct Symbol {
  const char* base;
  const char* versioned;
  void** slot;
};

template <class F>
void** slot(F& pointer) {
  return reinterpret_cast<void**>(&pointer);
}

struct Driver {
  SharedLibrary library;
  Api api;
  std::optional<Error> error;  // set when the driver cannot be used
  int version = 0;

  std::mutex primary_mutex;                        // guards primary
  std::array<CUcontext, kMaxDevices> primary{};    // retained once, kept for the process lifetime
  std::array<std::atomic<int>, kMaxDevices> cc{};  // compute capability per ordinal, 0: unknown
};

// "CUDA_ERROR_INVALID_PTX: a PTX JIT compilation failed" (the number when the driver has no name).
std::string result_text(const Api& api, CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.get_error_name == nullptr || api.get_error_name(result, &name) != CUDA_SUCCESS)
    name = nullptr;
  if (api.get_error_string == nullptr || api.get_error_string(result, &text) != CUDA_SUCCESS)
    text = nullptr;
  std::string message =
      name != nullptr ? name : "CUDA error " + std::to_string(static_cast<int>(result));
  if (text != nullptr) message += std::string(": ") + text;
  // The one fault a user fixes outside the program: code newer than the installed driver.
  if (result == CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
    message +=
        " (the NVIDIA driver is older than the CUDA toolkit that produced this code; "
        "update the driver)";
  return message;
}

Error call_error(const Api& api, const char* call, CUresult result) {
  return Error(ErrorCode::kDriver, std::string(call) + " failed: " + result_text(api, result));
}

void open_driver(Driver& driver) {
  // One candidate: the driver comes with the NVIDIA kernel module, never with the toolkit.
  Result<SharedLibrary> opened = open_shared_library("libcuda.so.1", {"libcuda.so.1"});
  if (!opened.ok()) {
    // "libcuda.so.1 could not be loaded (<dlerror>)", a driver error rather than a toolchain one.
    driver.error = Error(ErrorCode::kDriver, "no CUDA driver: " + opened.error().message(),
                         "loading and launching kernels needs the NVIDIA driver; checking, "
                         "compiling and caching work without it");
    driver.error->set_device_fault(DeviceFault::kNoDriver);
    return;
  }
  driver.library = std::move(opened).value();
  Api& api = driver.api;
  const Symbol symbols[] = {
      {"cuGetErrorName", "cuGetErrorName", slot(api.get_error_name)},
      {"cuGetErrorString", "cuGetErrorString", slot(api.get_error_string)},
      {"cuInit", "cuInit", slot(api.init)},
      {"cuDriverGetVersion", "cuDriverGetVersion", slot(api.driver_get_version)},
      {"cuDeviceGetCount", "cuDeviceGetCount", slot(api.device_get_count)},
      {"cuDeviceGet", "cuDeviceGet", slot(api.device_get)},
      {"cuDeviceGetAttribute", "cuDeviceGetAttribute", slot(api.device_get_attribute)},
      {"cuDeviceGetName", "cuDeviceGetName", slot(api.device_get_name)},
      {"cuCtxGetCurrent", "cuCtxGetCurrent", slot(api.ctx_get_current)},
      {"cuCtxSetCurrent", "cuCtxSetCurrent", slot(api.ctx_set_current)},
      {"cuCtxGetDevice", "cuCtxGetDevice", slot(api.ctx_get_device)},
      {"cuCtxSynchronize", "cuCtxSynchronize", slot(api.ctx_synchronize)},
      {"cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRetain", slot(api.primary_ctx_retain)},
      {"cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxRelease_v2", slot(api.primary_ctx_release)},
      {"cuLibraryLoadData", "cuLibraryLoadData", slot(api.library_load_data)},
      {"cuLibraryUnload", "cuLibraryUnload", slot(api.library_unload)},
      {"cuLibraryGetKernel", "cuLibraryGetKernel", slot(api.library_get_kernel)},
      {"cuKernelGetFunction", "cuKernelGetFunction", slot(api.kernel_get_function)},
      {"cuLaunchKernel", "cuLaunchKernel", slot(api.launch_kernel)},
      {"cuStreamSynchronize", "cuStreamSynchronize", slot(api.stream_synchronize)},
      {"cuMemAlloc", "cuMemAlloc_v2", slot(api.mem_alloc)},
      {"cuMemFree", "cuMemFree_v2", slot(api.mem_free)},
      {"cuMemcpyHtoD", "cuMemcpyHtoD_v2", slot(api.memcpy_htod)},
      {"cuMemcpyDtoH", "cuMemcpyDtoH_v2", slot(api.memcpy_dtoh)},
      {"cuMemsetD8", "cuMemsetD8_v2", slot(api.memset_d8)},
      {"cuLinkCreate", "cuLinkCreate_v2", slot(api.link_create)},
      {"cuLinkAddData", "cuLinkAddData_v2", slot(api.link_add_data)},
      {"cuLinkComplete", "cuLinkComplete", slot(api.link_complete)},
      {"cuLinkDestroy", "cuLinkDestroy", slot(api.link_destroy)},
  };
  // cuGetProcAddress picks the symbol version matching kApiVersion (and, unlike the symbol table,
  // would see per-thread-stream variants if we asked); the versioned name is the fallback.
  using GetProcAddress =
      CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
  auto get_proc =
      reinterpret_cast<GetProcAddress>(find_optional_symbol(driver.library, "cuGetProcAddress_v2"));
  for (const Symbol& symbol : symbols) {
    *symbol.slot = nullptr;
    if (get_proc != nullptr) {
      CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
      if (get_proc(symbol.base, symbol.slot, kApiVersion, CU_GET_PROC_ADDRESS_DEFAULT, &found) !=
              CUDA_SUCCESS ||
          found != CU_GET_PROC_ADDRESS_SUCCESS)
        *symbol.slot = nullptr;
    }
    if (*symbol.slot == nullptr)
      *symbol.slot = find_optional_symbol(driver.library, symbol.versioned);
    if (*symbol.slot == nullptr) {
      driver.error = Error(ErrorCode::kDriver,
                           std::string("CUDA driver too old: libcuda.so.1 has no ") +
                               symbol.versioned + " (tmemjit needs a CUDA 12.0 or newer driver)");
      return;
    }
  }
  if (CUresult result = api.init(0); result != CUDA_SUCCESS) {
    driver.error = call_error(api, "cuInit", result);
    if (result == CUDA_ERROR_NO_DEVICE) driver.error->set_device_fault(DeviceFault::kNoDevice);
    return;
  }
  if (CUresult result = api.driver_get_version(&driver.version); result != CUDA_SUCCESS)
    driver.error = call_error(api, "cuDriverGetVersion", result);
}

// The driver, opened on first use; never closed (other libraries may hold its handles).
Driver& the_driver() {
  static Driver* driver = [] {
    auto* opened = new Driver();
    open_driver(*opened);
    return opened;
  }();
  return *driver;
}

// The usable driver, or its Error.
Result<Driver*> usable() {
  Driver& driver = the_driver();
  if (driver.error) return *driver.error;
  return &driver;
}

// An Error when `result` is not CUDA_SUCCESS.
std::optional<Error> failed(const Driver& driver, const char* call, CUresult result) {
  if (result == CUDA_SUCCESS) return std::nullopt;
  return call_error(driver.api, call, result);
}

Result<int> compute_capability_of(Driver& driver, int ordinal) {
  if (ordinal >= 0 && ordinal < kMaxDevices) {
    if (int known = driver.cc[static_cast<size_t>(ordinal)].load(std::memory_order_relaxed))
      return known;
  }
  CUdevice device{};
  if (auto error = failed(driver, "cuDeviceGet", driver.api.device_get(&device, ordinal)))
    return *error;
  int major = 0;
  int minor = 0;
  if (auto error = failed(driver, "cuDeviceGetAttribute",
                          driver.api.device_get_attribute(
                              &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device)))
    return *error;
  if (auto error = failed(driver, "cuDeviceGetAttribute",
                          driver.api.device_get_attribute(
                              &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device)))
    return *error;
  const int cc = major * 10 + minor;
  if (ordinal >= 0 && ordinal < kMaxDevices)
    driver.cc[static_cast<size_t>(ordinal)].store(cc, std::memory_order_relaxed);
  return cc;
}

std::string needs_text(Target target) {
  const int cc = compute_capability(target);
  if (target == Target::kSm90) return cc_to_string(cc) + " or later";
  if (!is_family_target(target)) return "exactly " + cc_to_string(cc);
  return cc_to_string(cc) + " or a later " + std::to_string(cc / 10) + ".x";
}

Status check_cc(Driver& driver, Target target, int ordinal) {
  Result<int> cc = compute_capability_of(driver, ordinal);
  if (!cc.ok()) return std::move(cc).error();
  if (runs_on(target, *cc)) return std::monostate{};
  Result<DeviceInfo> info = device_info(ordinal);
  const std::string name = info.ok() ? info->name : "unknown device";
  const std::string target_name(to_string(target));
  return Error(ErrorCode::kTarget, "cubin for " + target_name + " cannot load on device " +
                                       std::to_string(ordinal) + " (" + name +
                                       ", compute capability " + cc_to_string(*cc) + "); " +
                                       target_name + " needs " + needs_text(target))
      .set_device_fault(DeviceFault::kWrongComputeCapability);
}

Result<CUjit_target> jit_target(Target target) {
  switch (target) {
    case Target::kSm100a:
      return CU_TARGET_COMPUTE_100A;
    case Target::kSm100f:
      return CU_TARGET_COMPUTE_100F;
    case Target::kSm103a:
      return CU_TARGET_COMPUTE_103A;
    case Target::kSm103f:
      return CU_TARGET_COMPUTE_103F;
    case Target::kSm110a:
      return CU_TARGET_COMPUTE_110A;
    case Target::kSm110f:
      return CU_TARGET_COMPUTE_110F;
    case Target::kSm90:
      return CU_TARGET_COMPUTE_90;
  }
  return Error(ErrorCode::kInternal, "no driver jit target for " + std::string(to_string(target)));
}

}  // namespace

std::string cc_to_string(int compute_capability) {
  return std::to_string(compute_capability / 10) + "." + std::to_string(compute_capability % 10);
}

Status ensure_driver() {
  Result<Driver*> driver = usable();
  if (!driver.ok()) return std::move(driver).error();
  return std::monostate{};
}

Result<int> driver_version() {
  Result<Driver*> driver = usable();
  if (!driver.ok()) return std::move(driver).error();
  return (*driver)->version;
}

Result<int> device_count() {
  Result<Driver*> driver = usable();
  if (!driver.ok()) return std::move(driver).error();
  int count = 0;
  if (auto error = failed(**driver, "cuDeviceGetCount", (*driver)->api.device_get_count(&count)))
    return *error;
  return count;
}

Result<DeviceInfo> device_info(int ordinal) {
  Result<Driver*> opened = usable();
  if (!opened.ok()) return std::move(opened).error();
  Driver& driver = **opened;
  Result<int> count = device_count();
  if (!count.ok()) return std::move(count).error();
  if (ordinal < 0 || ordinal >= *count)
    return Error(ErrorCode::kUsage, "device " + std::to_string(ordinal) + " does not exist; " +
                                        std::to_string(*count) + " CUDA device(s) present");
  CUdevice device{};
  if (auto error = failed(driver, "cuDeviceGet", driver.api.device_get(&device, ordinal)))
    return *error;
  char name[256] = {};
  if (auto error =
          failed(driver, "cuDeviceGetName", driver.api.device_get_name(name, sizeof name, device)))
    return *error;
  Result<int> cc = compute_capability_of(driver, ordinal);
  if (!cc.ok()) return std::move(cc).error();
  return DeviceInfo{ordinal, name, *cc};
}

Result<int> current_device() {
  Result<Driver*> opened = usable();
  if (!opened.ok()) return std::move(opened).error();
  Driver& driver = **opened;
  CUcontext context = nullptr;
  if (auto error = failed(driver, "cuCtxGetCurrent", driver.api.ctx_get_current(&context)))
    return *error;
  if (context == nullptr) {
    // Like the CUDA runtime: with no current context, use device 0's primary context.
    std::lock_guard lock(driver.primary_mutex);
    if (driver.primary[0] == nullptr) {
      CUdevice device{};
      if (auto error = failed(driver, "cuDeviceGet", driver.api.device_get(&device, 0)))
        return *error;
      if (auto error = failed(driver, "cuDevicePrimaryCtxRetain",
                              driver.api.primary_ctx_retain(&driver.primary[0], device)))
        return *error;
    }
    if (auto error =
            failed(driver, "cuCtxSetCurrent", driver.api.ctx_set_current(driver.primary[0])))
      return *error;
  }
  CUdevice device{};
  if (auto error = failed(driver, "cuCtxGetDevice", driver.api.ctx_get_device(&device)))
    return *error;
  // CUdevice is a handle; map it back to its ordinal.
  int count = 0;
  if (auto error = failed(driver, "cuDeviceGetCount", driver.api.device_get_count(&count)))
    return *error;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice candidate{};
    if (driver.api.device_get(&candidate, ordinal) == CUDA_SUCCESS && candidate == device)
      return ordinal;
  }
  return Error(ErrorCode::kDriver, "the current context's device is not among the " +
                                       std::to_string(count) + " devices cuDeviceGet reports");
}

Status check_target(Target target, int ordinal) {
  Result<Driver*> opened = usable();
  if (!opened.ok()) return std::move(opened).error();
  return check_cc(**opened, target, ordinal);
}

// --- LoadedLibrary ---------------------------------------------------------------------------

Result<LoadedLibrary> LoadedLibrary::load(std::span<const char> image, Target target) {
  Result<Driver*> opened = usable();
  if (!opened.ok()) return std::move(opened).error();
  Driver& driver = **opened;
  Result<int> device = current_device();
  if (!device.ok()) return std::move(device).error();
  if (Status fits = check_cc(driver, target, *device); !fits.ok()) return std::move(fits).error();
  if (image.empty()) return Error(ErrorCode::kUsage, "cannot load an empty module image");
  CUlibrary library = nullptr;
  if (auto error = failed(driver, "cuLibraryLoadData",
                          driver.api.library_load_data(&library, image.data(), nullptr, nullptr, 0,
                                                       nullptr, nullptr, 0)))
    return *error;
  return LoadedLibrary(library, target);
}

LoadedLibrary::LoadedLibrary(LoadedLibrary&& other) noexcept
    : library_(std::exchange(other.library_, nullptr)), target_(other.target_) {}

LoadedLibrary& LoadedLibrary::operator=(LoadedLibrary&& other) noexcept {
  if (this != &other) {
    LoadedLibrary old(std::move(*this));
    library_ = std::exchange(other.library_, nullptr);
    target_ = other.target_;
  }
  return *this;
}

LoadedLibrary::~LoadedLibrary() {
  if (library_ != nullptr && !the_driver().error)
    the_driver().api.library_unload(static_cast<CUlibrary>(library_));
}

Result<void*> LoadedLibrary::kernel(const std::string& entry) const {
  Result<Driver*> opened = usable();
  if (!opened.ok()) return std::move(opened).error();
  if (library_ == nullptr) return Error(ErrorCode::kUsage, "kernel lookup in an unloaded library");
  CUkernel kernel = nullptr;
  const CUresult result =
      (*opened)->api.library_get_kernel(&kernel, static_cast<CUlibrary>(library_), entry.c_str());
  if (result != CUDA_SUCCESS) {
    Error error = call_error((*opened)->api, "cuLibraryGetKernel", result);
    return Error(ErrorCode::kDriver, error.message() + " (entry '" + entry + "')");
  }
  return static_cast<void*>(kernel);
}

namespace {

// The CUfunction of a CUkernel for the current context, once the current device can run
// `target`: this loads the library into the context on first use, which is how one
// LoadedLibrary serves several GPUs.
Result<CUfunction> function_for_current_context(Driver& driver, void* kernel, Target target) {
  Result<int> device = current_device();
  if (!device.ok()) return std::move(device).error();
  if (Status fits = check_cc(driver, target, *device); !fits.ok()) return std::move(fits).error();
  CUfunction function = nullptr;
  if (auto error = failed(driver, "cuKernelGetFunction",
                          driver.api.kernel_get_function(&function, static_cast<CUkernel>(kernel))))
    return *error;
  return function;
}

}  // namespace

Result<void*> function(void* kernel, Target target) {
  Result<Driver*> opened = usable();
  if (!opened.ok()) return std::move(opened).error();
  Result<CUfunction> found = function_for_current_context(**opened, kernel, target);
  if (!found.ok()) return std::move(found).error();
  return static_cast<void*>(*found);
}

// A launch asks for `shared_bytes` of dynamic shared memory; past 48 KB the driver refuses it
// unless the function's CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES allows it (CUDA Driver API,
// cuFuncSetAttribute), and every production GEMM needs 100-227 KB (issue 40 item 3).
Status allow_dynamic_shared(Driver& driver, CUfunction function, unsigned shared_bytes) {
  constexpr unsigned kDefaultLimit = 48 * 1024;
  if (shared_bytes <= kDefaultLimit) return std::monostate{};
  using SetAttribute = CUresult (*)(CUfunction, CUfunction_attribute, int);
  const auto set_attribute =
      reinterpret_cast<SetAttribute>(find_optional_symbol(driver.library, "cuFuncSetAttribute"));
  if (set_attribute == nullptr)
    return Error(ErrorCode::kDriver, "libcuda.so.1 has no cuFuncSetAttribute: a launch with " +
                                         std::to_string(shared_bytes) +
                                         " bytes of dynamic shared memory (over 48 KB) needs it");
  const std::string call =
      "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, " + std::to_string(shared_bytes) + ")";
  if (auto error = failed(driver, call.c_str(),
                          set_attribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                        static_cast<int>(shared_bytes))))
    return *error;
  return std::monostate{};
}

Status launch(void* kernel, Target target, Dim3 grid, Dim3 block, unsigned shared_bytes,
              void* stream, void** args) {
  Result<Driver*> opened = usable();
  if (!opened.ok()) return std::move(opened).error();
  Driver& driver = **opened;
  Result<CUfunction> function = function_for_current_context(driver, kernel, target);
  if (!function.ok()) return std::move(function).error();
  if (Status allowed = allow_dynamic_shared(driver, *function, shared_bytes); !allowed.ok())
    return allowed;
  if (auto error = failed(
          driver, "cuLaunchKernel",
          driver.api.launch_kernel(*function, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                   shared_bytes, static_cast<CUstream>(stream), args, nullptr)))
    return *error;
  return std::monostate{};
}

Result<std::vector<size_t>> kernel_parameter_sizes(void* kernel) {
  Result<Driver*> opened = usable();
  if (!opened.ok()) return std::move(opened).error();
  Driver& driver = **opened;
  // Looked up per call, like cuLaunchKernelEx: only checked launches need it.
  using GetParamInfo = CUresult (*)(CUkernel, size_t, size_t*, size_t*);
  const auto get_param_info =
      reinterpret_cast<GetParamInfo>(find_optional_symbol(driver.library, "cuKernelGetParamInfo"));
  if (get_param_info == nullptr)
    return Error(ErrorCode::kDriver,
                 "CUDA driver too old: libcuda.so.1 has no cuKernelGetParamInfo (checking a "
                 "launch's arguments needs a CUDA 12.4 or newer driver)");
  std::vector<size_t> sizes;
  // A kernel's parameters fit in 32764 bytes (CUDA 12.1), so at most that many of them.
  for (size_t index = 0; index <= 32764; ++index) {
    size_t offset = 0, size = 0;
    const CUresult result = get_param_info(static_cast<CUkernel>(kernel), index, &offset, &size);
    if (result == CUDA_ERROR_INVALID_VALUE) return sizes;  // past the last parameter
    if (result != CUDA_SUCCESS) return call_error(driver.api, "cuKernelGetParamInfo", result);
    sizes.push_back(size);
  }
  return sizes;
}

Status launch_cluster(void* kernel, Target target, Dim3 grid, Dim3 block, unsigned cluster_x,
                      unsigned shared_bytes, void* stream, void** args) {
  Result<Driver*> opened = usable();
  if (!opened.ok()) return std::move(opened).error();
  Driver& driver = **opened;
  // cuLaunchKernelEx (CUDA 12.0) is looked up here, not with the required symbols: only cluster
  // launches need it, and a driver without it still runs everything else. Looked up per call
  // (cluster launches are rare), so a driver loaded again is never called through a stale pointer.
  using LaunchEx = CUresult (*)(const CUlaunchConfig*, CUfunction, void**, void**);
  const LaunchEx launch_ex =
      reinterpret_cast<LaunchEx>(find_optional_symbol(driver.library, "cuLaunchKernelEx"));
  if (launch_ex == nullptr)
    return Error(ErrorCode::kDriver,
                 "CUDA driver too old: libcuda.so.1 has no cuLaunchKernelEx (a cluster launch "
                 "needs a CUDA 12.0 or newer driver)");
  Result<CUfunction> function = function_for_current_context(driver, kernel, target);
  if (!function.ok()) return std::move(function).error();
  if (Status allowed = allow_dynamic_shared(driver, *function, shared_bytes); !allowed.ok())
    return allowed;
  CUlaunchAttribute cluster{};
  cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  cluster.value.clusterDim.x = cluster_x;
  cluster.value.clusterDim.y = 1;
  cluster.value.clusterDim.z = 1;
  CUlaunchConfig config{};
  config.gridDimX = grid.x;
  config.gridDimY = grid.y;
  config.gridDimZ = grid.z;
  config.blockDimX = block.x;
  config.blockDimY = block.y;
  config.blockDimZ = block.z;
  config.sharedMemBytes = shared_bytes;
  config.hStream = static_cast<CUstream>(stream);
  config.attrs = &cluster;
  config.numAttrs = 1;
  if (auto error = failed(driver, "cuLaunchKernelEx", launch_ex(&config, *function, args, nullptr)))
    return *error;
  return std::monostate{};
}

Status synchronize() {
  Result<Driver*> opened = usable();
  if (!opened.ok()) return std::move(opened).error();
  if (auto error = failed(**opened, "cuCtxSynchronize", (*opened)->api.ctx_synchronize()))
    return *error;
  return std::monostate{};
}

Status synchronize_stream(void* stream) {
  Result<Driver*> opened = usable();
  if (!opened.ok()) return std::move(opened).error();
  if (auto error = failed(**opened, "cuStreamSynchronize",
                          (*opened)->api.stream_synchronize(static_cast<CUstream>(stream))))
    return *error;
  return std::monostate{};
}

// --- DeviceBuffer ----------------------------------------------------------------------------

Result<DeviceBuffer> DeviceBuffer::alloc(size_t bytes) {
  Result<Driver*> opened = usable();
  if (!opened.ok()) return std::move(opened).error();
  Result<int> device = current_device();  // makes a context current when none is
  if (!device.ok()) return std::move(device).error();
  CUdeviceptr address = 0;
  if (auto error = failed(**opened, "cuMemAlloc", (*opened)->api.mem_alloc(&address, bytes)))
    return Error(ErrorCode::kDriver, error->message() + " (" + std::to_string(bytes) + " bytes)");
  return DeviceBuffer(static_cast<uint64_t>(address), bytes);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : address_(std::exchange(other.address_, 0)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    address_ = std::exchange(other.address_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { release(); }

void DeviceBuffer::release() noexcept {
  if (address_ != 0 && !the_driver().error)
    the_driver().api.mem_free(static_cast<CUdeviceptr>(address_));
  address_ = 0;
  bytes_ = 0;
}

Status DeviceBuffer::upload(const void* host, size_t bytes) {
  Result<Driver*> opened = usable();
  if (!opened.ok()) return std::move(opened).error();
  if (bytes > bytes_)
    return Error(ErrorCode::kUsage, "upload of " + std::to_string(bytes) + " bytes into a " +
                                        std::to_string(bytes_) + "-byte device buffer");
  if (auto error =
          failed(**opened, "cuMemcpyHtoD",
                 (*opened)->api.memcpy_htod(static_cast<CUdeviceptr>(address_), host, bytes)))
    return *error;
  return std::monostate{};
}

Status DeviceBuffer::download(void* host, size_t bytes) const {
  Result<Driver*> opened = usable();
  if (!opened.ok()) return std::move(opened).error();
  if (bytes > bytes_)
    return Error(ErrorCode::kUsage, "download of " + std::to_string(bytes) + " bytes from a " +
                                        std::to_string(bytes_) + "-byte device buffer");
  if (auto error =
          failed(**opened, "cuMemcpyDtoH",
                 (*opened)->api.memcpy_dtoh(host, static_cast<CUdeviceptr>(address_), bytes)))
    return *error;
  return std::monostate{};
}

Status DeviceBuffer::fill(unsigned char value) {
  Result<Driver*> opened = usable();
  if (!opened.ok()) return std::move(opened).error();
  if (auto error =
          failed(**opened, "cuMemsetD8",
                 (*opened)->api.memset_d8(static_cast<CUdeviceptr>(address_), value, bytes_)))
    return *error;
  return std::monostate{};
}

// --- device memory by address (the emulation of users' kernels) ------------------------------

Status copy_to_device(uint64_t address, const void* host, size_t bytes) {
  Result<Driver*> opened = usable();
  if (!opened.ok()) return std::move(opened).error();
  if (auto error =
          failed(**opened, "cuMemcpyHtoD",
                 (*opened)->api.memcpy_htod(static_cast<CUdeviceptr>(address), host, bytes)))
    return *error;
  return std::monostate{};
}

Status copy_from_device(void* host, uint64_t address, size_t bytes) {
  Result<Driver*> opened = usable();
  if (!opened.ok()) return std::move(opened).error();
  if (auto error =
          failed(**opened, "cuMemcpyDtoH",
                 (*opened)->api.memcpy_dtoh(host, static_cast<CUdeviceptr>(address), bytes)))
    return *error;
  return std::monostate{};
}

Status fill_device(uint64_t address, unsigned char value, size_t bytes) {
  Result<Driver*> opened = usable();
  if (!opened.ok()) return std::move(opened).error();
  if (auto error =
          failed(**opened, "cuMemsetD8",
                 (*opened)->api.memset_d8(static_cast<CUdeviceptr>(address), value, bytes)))
    return *error;
  return std::monostate{};
}

Result<std::pair<uint64_t, size_t>> LoadedLibrary::global(const std::string& name) const {
  Result<Driver*> opened = usable();
  if (!opened.ok()) return std::move(opened).error();
  if (library_ == nullptr) return Error(ErrorCode::kUsage, "global lookup in an unloaded library");
  // Resolved on first use, not with the calls every process needs: only emulated user kernels
  // ask for a global.
  using GetGlobal = CUresult (*)(CUdeviceptr*, size_t*, CUlibrary, const char*);
  static const GetGlobal get_global = [] {
    void* symbol = find_optional_symbol(the_driver().library, "cuLibraryGetGlobal");
    return reinterpret_cast<GetGlobal>(symbol);
  }();
  if (get_global == nullptr)
    return Error(ErrorCode::kDriver, "CUDA driver too old: libcuda.so.1 has no cuLibraryGetGlobal");
  CUdeviceptr address = 0;
  size_t bytes = 0;
  const CUresult result =
      get_global(&address, &bytes, static_cast<CUlibrary>(library_), name.c_str());
  if (result != CUDA_SUCCESS) {
    Error error = call_error((*opened)->api, "cuLibraryGetGlobal", result);
    return Error(ErrorCode::kDriver, error.message() + " (global '" + name + "')");
  }
  return std::pair<uint64_t, size_t>{static_cast<uint64_t>(address), bytes};
}

// --- driver JIT ------------------------------------------------------------------------------

std::vector<std::string> jit_option_text(const JitOptions& options) {
  std::vector<std::string> text = {
      "CU_JIT_TARGET=" + std::string(to_string(options.target)),
      "CU_JIT_OPTIMIZATION_LEVEL=" + std::to_string(options.optimization_level)};
  if (options.line_info) text.push_back("CU_JIT_GENERATE_LINE_INFO=1");
  return text;
}

Result<JitImage> driver_jit_ptx(const std::string& ptx, const JitOptions& jit_options) {
  Result<Driver*> opened = usable();
  if (!opened.ok()) return std::move(opened).error();
  Driver& driver = **opened;
  Result<int> device = current_device();  // cuLink* needs a current context
  if (!device.ok()) return std::move(device).error();
  Result<CUjit_target> jit = jit_target(jit_options.target);
  if (!jit.ok()) return std::move(jit).error();
  if (jit_options.optimization_level < 0 || jit_options.optimization_level > 4)
    return Error(ErrorCode::kUsage, "CU_JIT_OPTIMIZATION_LEVEL must be 0..4, got " +
                                        std::to_string(jit_options.optimization_level));

  constexpr size_t kLogBytes = 16384;
  std::string error_log(kLogBytes, '\0');
  std::string info_log(kLogBytes, '\0');
  auto as_value = [](uintptr_t v) { return reinterpret_cast<void*>(v); };
  CUjit_option options[] = {CU_JIT_TARGET,
                            CU_JIT_OPTIMIZATION_LEVEL,
                            CU_JIT_GENERATE_LINE_INFO,
                            CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_INFO_LOG_BUFFER,
                            CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {as_value(static_cast<uintptr_t>(*jit)),
                    as_value(static_cast<uintptr_t>(jit_options.optimization_level)),
                    as_value(jit_options.line_info ? 1 : 0),
                    error_log.data(),
                    as_value(kLogBytes),
                    info_log.data(),
                    as_value(kLogBytes)};
  constexpr unsigned kOptionCount = sizeof options / sizeof options[0];

  // A JIT failure (the driver refusing the target included) is a toolchain error laid out as the
  // other backends' (runtime/compile/backends.h): stage, first log error, backend, options, log,
  // PTX.
  CUlinkState link = nullptr;
  auto fail = [&](const char* call, CUresult result) {
    const std::string log = error_log.c_str();
    if (link != nullptr) driver.api.link_destroy(link);
    std::string message =
        "driver jit failed: " + std::string(call) + ": " + result_text(driver.api, result);
    std::string line;
    for (std::size_t at = 0; at < log.size();) {
      const std::size_t end = std::min(log.find('\n', at), log.size());
      line = log.substr(at, end - at);
      if (line.find("error") != std::string::npos || line.find("fatal") != std::string::npos) {
        message += ": " + line;
        break;
      }
      at = end + 1;
    }
    std::string options_text;
    for (const std::string& o : jit_option_text(jit_options))
      options_text += (options_text.empty() ? "" : " ") + o;
    return Error(ErrorCode::kToolchain, std::move(message),
                 "backend: driver\noptions: " + options_text + "\nlog:\n" +
                     (log.empty() ? std::string("(empty)") : log) + "\nptx:\n" + ptx);
  };
  if (CUresult result = driver.api.link_create(kOptionCount, options, values, &link);
      result != CUDA_SUCCESS) {
    link = nullptr;
    return fail("cuLinkCreate", result);
  }
  // cuLinkAddData reads the PTX as a NUL-terminated string; c_str() provides the terminator.
  if (CUresult result =
          driver.api.link_add_data(link, CU_JIT_INPUT_PTX, const_cast<char*>(ptx.c_str()),
                                   ptx.size() + 1, "tmemjit.ptx", 0, nullptr, nullptr);
      result != CUDA_SUCCESS)
    return fail("cuLinkAddData", result);
  void* cubin = nullptr;
  size_t cubin_bytes = 0;
  if (CUresult result = driver.api.link_complete(link, &cubin, &cubin_bytes);
      result != CUDA_SUCCESS)
    return fail("cuLinkComplete", result);
  // The image belongs to the link state: copy it out before destroying the state.
  JitImage image;
  image.cubin.assign(static_cast<const char*>(cubin),
                     static_cast<const char*>(cubin) + cubin_bytes);
  image.info_log = info_log.c_str();
  driver.api.link_destroy(link);
  return image;
}

Result<std::vector<char>> driver_link_ptx(const std::string& ptx, Target target) {
  JitOptions options;
  options.target = target;
  Result<JitImage> image = driver_jit_ptx(ptx, options);
  if (!image.ok()) return std::move(image).error();
  return std::move(image->cubin);
}

}  // namespace tmem::driver
