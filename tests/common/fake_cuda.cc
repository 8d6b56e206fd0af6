// A fake libcuda.so.1 for driver_fake_test: three devices, contexts, libraries, memory in host RAM.
// It implements only what runtime/cuda/driver.cc calls, and records launches for the test to
// inspect.
#include <cuda.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace {

struct FakeDevice {
  const char* name;
  int major;
  int minor;
};
constexpr FakeDevice kDevices[] = {{"Fake H200", 9, 0}, {"Fake B200", 10, 0}, {"Fake B300", 10, 3}};
constexpr int kDeviceCount = 3;
// CUdevice handles deliberately differ from ordinals, as the driver API allows.
constexpr int kHandleBase = 100;

struct FakeContext {
  int ordinal;
};
FakeContext g_contexts[kDeviceCount] = {{0}, {1}, {2}};
thread_local CUcontext t_current = nullptr;
bool g_initialized = false;

struct FakeLibrary {
  std::vector<std::string> kernels;
  std::map<std::string, size_t> globals;  // "@NAME:BYTES" in the image: a global of that size
};
// Each device's copy of a global, by name (as each context loads its own module): what
// Kernel::prepare and launch write, read back by the tests through fake_cuda_global.
std::map<std::pair<std::string, int>, std::vector<unsigned char>> g_globals;
struct FakeKernel {
  std::string name;
  bool loaded_on[kDeviceCount] = {};
  int max_dynamic_shared = 48 * 1024;  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
};
// Owned here, so the handles live until exit and LeakSanitizer sees no lost kernel.
std::map<std::string, std::unique_ptr<FakeKernel>> g_kernels;

struct FakeLink {
  int jit_target = -1;
  char* error_log = nullptr;
  size_t error_log_bytes = 0;
  std::string ptx;
  std::string image;
};

int g_legacy_calls = 0;
int g_jit_target = -1;

CUresult need_init() { return g_initialized ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED; }
int current_ordinal() {
  return t_current != nullptr ? reinterpret_cast<FakeContext*>(t_current)->ordinal : -1;
}

}  // namespace

// What the test reads back through dlsym.
struct FakeLaunch {
  int device;
  unsigned grid[3];
  unsigned block[3];
  unsigned shared_bytes;
  void* stream;
  int first_arg;
  int kernel_loaded_on[kDeviceCount];
  unsigned cluster[3];  // cuLaunchKernelEx's cluster dimension; {0, 0, 0} for cuLaunchKernel
};
FakeLaunch g_last_launch{};

extern "C" {

__attribute__((visibility("default"))) const void* fake_cuda_last_launch() {
  return &g_last_launch;
}
__attribute__((visibility("default"))) int fake_cuda_legacy_calls() { return g_legacy_calls; }
// The bytes of global `name` on device `ordinal`, or null where no module asked for it there.
__attribute__((visibility("default"))) const void* fake_cuda_global(const char* name, int ordinal) {
  auto found = g_globals.find({name, ordinal});
  return found == g_globals.end() ? nullptr : found->second.data();
}
__attribute__((visibility("default"))) int fake_cuda_jit_target() { return g_jit_target; }
// The context hooks take and return void*, the exact type the tests dlsym them as: a call through
// another function type is undefined behaviour (UBSan -fsanitize=function flags it).
__attribute__((visibility("default"))) void* fake_cuda_context(int ordinal) {
  return &g_contexts[ordinal];
}
__attribute__((visibility("default"))) void fake_cuda_set_current(void* context) {
  t_current = static_cast<CUcontext>(context);
}

CUresult cuGetErrorName(CUresult error, const char** name) {
  switch (error) {
    case CUDA_SUCCESS:
      *name = "CUDA_SUCCESS";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_VALUE:
      *name = "CUDA_ERROR_INVALID_VALUE";
      return CUDA_SUCCESS;
    case CUDA_ERROR_NOT_INITIALIZED:
      *name = "CUDA_ERROR_NOT_INITIALIZED";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_IMAGE:
      *name = "CUDA_ERROR_INVALID_IMAGE";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_CONTEXT:
      *name = "CUDA_ERROR_INVALID_CONTEXT";
      return CUDA_SUCCESS;
    case CUDA_ERROR_NOT_FOUND:
      *name = "CUDA_ERROR_NOT_FOUND";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_PTX:
      *name = "CUDA_ERROR_INVALID_PTX";
      return CUDA_SUCCESS;
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
      *name = "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult cuGetErrorString(CUresult error, const char** text) {
  switch (error) {
    case CUDA_ERROR_INVALID_IMAGE:
      *text = "device kernel image is invalid";
      return CUDA_SUCCESS;
    case CUDA_ERROR_NOT_FOUND:
      *text = "named symbol not found";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_PTX:
      *text = "a PTX JIT compilation failed";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_CONTEXT:
      *text = "invalid device context";
      return CUDA_SUCCESS;
    default:
      *text = "fake error";
      return CUDA_SUCCESS;
  }
}

CUresult cuInit(unsigned int flags) {
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  g_initialized = true;
  return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int* version) {
  *version = 12080;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int* count) {
  if (CUresult r = need_init()) return r;
  *count = kDeviceCount;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (CUresult r = need_init()) return r;
  if (ordinal < 0 || ordinal >= kDeviceCount) return CUDA_ERROR_INVALID_DEVICE;
  *device = kHandleBase + ordinal;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice device) {
  const int ordinal = device - kHandleBase;
  if (ordinal < 0 || ordinal >= kDeviceCount) return CUDA_ERROR_INVALID_DEVICE;
  if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
    *value = kDevices[ordinal].major;
  else if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
    *value = kDevices[ordinal].minor;
  else
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char* name, int length, CUdevice device) {
  const int ordinal = device - kHandleBase;
  if (ordinal < 0 || ordinal >= kDeviceCount) return CUDA_ERROR_INVALID_DEVICE;
  std::strncpy(name, kDevices[ordinal].name, static_cast<size_t>(length));
  return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext* context) {
  *context = t_current;
  return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext context) {
  t_current = context;
  return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice* device) {
  if (t_current == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  *device = kHandleBase + current_ordinal();
  return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize() {
  return t_current != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}
CUresult cuStreamSynchronize(CUstream) { return cuCtxSynchronize(); }

CUresult cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice device) {
  const int ordinal = device - kHandleBase;
  if (ordinal < 0 || ordinal >= kDeviceCount) return CUDA_ERROR_INVALID_DEVICE;
  *context = reinterpret_cast<CUcontext>(&g_contexts[ordinal]);
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice) { return CUDA_SUCCESS; }

// A fake image is the NUL-terminated text "FAKECUBIN:name1,name2"; a name "@NAME:BYTES" is a
// global variable of that many bytes instead of a kernel.
CUresult cuLibraryLoadData(CUlibrary* library, const void* code, CUjit_option*, void**, unsigned,
                           CUlibraryOption*, void**, unsigned) {
  if (CUresult r = need_init()) return r;
  const char* text = static_cast<const char*>(code);
  // "FAKENEWER": code from a toolkit newer than this driver.
  if (std::strncmp(text, "FAKENEWER", 9) == 0) return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
  if (std::strncmp(text, "FAKECUBIN:", 10) != 0) return CUDA_ERROR_INVALID_IMAGE;
  auto* fake = new FakeLibrary;
  std::string names = text + 10;
  size_t start = 0;
  while (start <= names.size()) {
    size_t comma = names.find(',', start);
    if (comma == std::string::npos) comma = names.size();
    const std::string name = names.substr(start, comma - start);
    const size_t colon = name.rfind(':');
    if (name.rfind('@', 0) == 0 && colon != std::string::npos)
      fake->globals[name.substr(1, colon - 1)] = std::stoul(name.substr(colon + 1));
    else
      fake->kernels.push_back(name);
    start = comma + 1;
  }
  *library = reinterpret_cast<CUlibrary>(fake);
  return CUDA_SUCCESS;
}

CUresult cuLibraryUnload(CUlibrary library) {
  delete reinterpret_cast<FakeLibrary*>(library);
  return CUDA_SUCCESS;
}

CUresult cuLibraryGetKernel(CUkernel* kernel, CUlibrary library, const char* name) {
  auto* fake = reinterpret_cast<FakeLibrary*>(library);
  for (const std::string& candidate : fake->kernels) {
    if (candidate == name) {
      std::unique_ptr<FakeKernel>& entry = g_kernels[candidate];
      if (entry == nullptr) entry.reset(new FakeKernel{candidate});
      *kernel = reinterpret_cast<CUkernel>(entry.get());
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_NOT_FOUND;
}

CUresult cuLibraryGetGlobal(CUdeviceptr* address, size_t* bytes, CUlibrary library,
                            const char* name) {
  if (t_current == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  auto* fake = reinterpret_cast<FakeLibrary*>(library);
  auto found = fake->globals.find(name);
  if (found == fake->globals.end()) return CUDA_ERROR_NOT_FOUND;
  std::vector<unsigned char>& value = g_globals[{name, current_ordinal()}];
  value.resize(found->second);
  *address = reinterpret_cast<CUdeviceptr>(value.data());
  *bytes = value.size();
  return CUDA_SUCCESS;
}

CUresult cuKernelGetFunction(CUfunction* function, CUkernel kernel) {
  if (t_current == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  auto* fake = reinterpret_cast<FakeKernel*>(kernel);
  fake->loaded_on[current_ordinal()] = true;
  *function = reinterpret_cast<CUfunction>(fake);
  return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction function, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shared, CUstream stream, void** params,
                        void** extra) {
  if (t_current == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  if (extra != nullptr) return CUDA_ERROR_INVALID_VALUE;
  auto* fake = reinterpret_cast<FakeKernel*>(function);
  // As the driver: dynamic shared memory past the function's allowance is refused.
  if (shared > static_cast<unsigned>(fake->max_dynamic_shared)) return CUDA_ERROR_INVALID_VALUE;
  g_last_launch = FakeLaunch{current_ordinal(),
                             {gx, gy, gz},
                             {bx, by, bz},
                             shared,
                             stream,
                             params != nullptr ? *static_cast<int*>(params[0]) : -1,
                             {}};
  for (int d = 0; d < kDeviceCount; ++d) g_last_launch.kernel_loaded_on[d] = fake->loaded_on[d];
  return CUDA_SUCCESS;
}

// A launcher of the user's own: cuLaunchKernel of `function` (a CUfunction from
// Kernel::prepare) on 1 CTA of 128 threads with one int argument, as cuda.bindings or a PyTorch
// extension would call it. Returns the CUresult.
__attribute__((visibility("default"))) int fake_cuda_launch(void* function, int value) {
  void* args[] = {&value};
  return cuLaunchKernel(static_cast<CUfunction>(function), 1, 1, 1, 128, 1, 1, 0, nullptr, args,
                        nullptr);
}

CUresult cuFuncSetAttribute(CUfunction function, CUfunction_attribute attribute, int value) {
  if (function == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (attribute != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) return CUDA_ERROR_NOT_SUPPORTED;
  if (value < 0 || value > 227 * 1024) return CUDA_ERROR_INVALID_VALUE;  // an H100's opt-in limit
  reinterpret_cast<FakeKernel*>(function)->max_dynamic_shared = value;
  return CUDA_SUCCESS;
}

// Every fake kernel takes (int value, const void* pointer): 4 and 8 bytes at offsets 0 and 8.
CUresult cuKernelGetParamInfo(CUkernel kernel, size_t index, size_t* offset, size_t* size) {
  if (kernel == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (index > 1) return CUDA_ERROR_INVALID_VALUE;
  *offset = index == 0 ? 0 : 8;
  *size = index == 0 ? 4 : 8;
  return CUDA_SUCCESS;
}

// A cluster launch (CUDA 12.0): the launch above plus the cluster dimension attribute.
CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction function, void** params,
                          void** extra) {
  unsigned cluster[3] = {1, 1, 1};
  for (unsigned i = 0; i < config->numAttrs; ++i)
    if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
      cluster[0] = config->attrs[i].value.clusterDim.x;
      cluster[1] = config->attrs[i].value.clusterDim.y;
      cluster[2] = config->attrs[i].value.clusterDim.z;
    }
  if (config->gridDimX % cluster[0] != 0) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  const CUresult result = cuLaunchKernel(
      function, config->gridDimX, config->gridDimY, config->gridDimZ, config->blockDimX,
      config->blockDimY, config->blockDimZ, config->sharedMemBytes, config->hStream, params, extra);
  for (int k = 0; k < 3; ++k) g_last_launch.cluster[k] = cluster[k];
  return result;
}

CUresult cuMemAlloc_v2(CUdeviceptr* pointer, size_t bytes) {
  if (t_current == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  *pointer = reinterpret_cast<CUdeviceptr>(std::malloc(bytes));
  return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr pointer) {
  std::free(reinterpret_cast<void*>(pointer));
  return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr destination, const void* source, size_t bytes) {
  std::memcpy(reinterpret_cast<void*>(destination), source, bytes);
  return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoH_v2(void* destination, CUdeviceptr source, size_t bytes) {
  std::memcpy(destination, reinterpret_cast<const void*>(source), bytes);
  return CUDA_SUCCESS;
}

CUresult cuMemsetD8_v2(CUdeviceptr destination, unsigned char value, size_t bytes) {
  std::memset(reinterpret_cast<void*>(destination), value, bytes);
  return CUDA_SUCCESS;
}

CUresult cuLinkCreate_v2(unsigned count, CUjit_option* options, void** values, CUlinkState* state) {
  if (t_current == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  auto* link = new FakeLink;
  for (unsigned i = 0; i < count; ++i) {
    if (options[i] == CU_JIT_TARGET)
      link->jit_target = static_cast<int>(reinterpret_cast<uintptr_t>(values[i]));
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER) link->error_log = static_cast<char*>(values[i]);
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
      link->error_log_bytes = reinterpret_cast<uintptr_t>(values[i]);
  }
  g_jit_target = link->jit_target;
  *state = reinterpret_cast<CUlinkState>(link);
  return CUDA_SUCCESS;
}

CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void* data, size_t size,
                          const char*, unsigned, CUjit_option*, void**) {
  auto* link = reinterpret_cast<FakeLink*>(state);
  if (type != CU_JIT_INPUT_PTX) return CUDA_ERROR_INVALID_VALUE;
  const char* text = static_cast<const char*>(data);
  if (size == 0 || text[size - 1] != '\0')
    return CUDA_ERROR_INVALID_VALUE;  // must be NUL-terminated
  link->ptx = text;
  if (link->ptx.find("syntax error") != std::string::npos) {
    if (link->error_log != nullptr)
      std::snprintf(link->error_log, link->error_log_bytes, "ptxas fatal: fake syntax error");
    return CUDA_ERROR_INVALID_PTX;
  }
  return CUDA_SUCCESS;
}

CUresult cuLinkComplete(CUlinkState state, void** image, size_t* bytes) {
  auto* link = reinterpret_cast<FakeLink*>(state);
  link->image = "FAKECUBIN:k";
  link->image.push_back('\0');
  *image = link->image.data();
  *bytes = link->image.size();
  return CUDA_SUCCESS;
}

CUresult cuLinkDestroy(CUlinkState state) {
  delete reinterpret_cast<FakeLink*>(state);
  return CUDA_SUCCESS;
}

// The legacy 32-bit cuMemAlloc: calling it is the bug the _v2 names avoid.
#undef cuMemAlloc
__attribute__((visibility("default"))) CUresult cuMemAlloc(unsigned* pointer, unsigned bytes) {
  (void)pointer;
  (void)bytes;
  ++g_legacy_calls;
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuGetProcAddress_v2(const char* symbol, void** function, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* status) {
  struct Entry {
    const char* base;
    void* function;
  };
  static const Entry kTable[] = {
      {"cuGetErrorName", reinterpret_cast<void*>(&cuGetErrorName)},
      {"cuGetErrorString", reinterpret_cast<void*>(&cuGetErrorString)},
      {"cuInit", reinterpret_cast<void*>(&cuInit)},
      {"cuDriverGetVersion", reinterpret_cast<void*>(&cuDriverGetVersion)},
      {"cuDeviceGetCount", reinterpret_cast<void*>(&cuDeviceGetCount)},
      {"cuDeviceGet", reinterpret_cast<void*>(&cuDeviceGet)},
      {"cuDeviceGetAttribute", reinterpret_cast<void*>(&cuDeviceGetAttribute)},
      {"cuDeviceGetName", reinterpret_cast<void*>(&cuDeviceGetName)},
      {"cuCtxGetCurrent", reinterpret_cast<void*>(&cuCtxGetCurrent)},
      {"cuCtxSetCurrent", reinterpret_cast<void*>(&cuCtxSetCurrent)},
      {"cuCtxGetDevice", reinterpret_cast<void*>(&cuCtxGetDevice)},
      {"cuCtxSynchronize", reinterpret_cast<void*>(&cuCtxSynchronize)},
      {"cuStreamSynchronize", reinterpret_cast<void*>(&cuStreamSynchronize)},
      {"cuDevicePrimaryCtxRetain", reinterpret_cast<void*>(&cuDevicePrimaryCtxRetain)},
      {"cuDevicePrimaryCtxRelease", reinterpret_cast<void*>(&cuDevicePrimaryCtxRelease_v2)},
      {"cuLibraryLoadData", reinterpret_cast<void*>(&cuLibraryLoadData)},
      {"cuLibraryUnload", reinterpret_cast<void*>(&cuLibraryUnload)},
      {"cuLibraryGetKernel", reinterpret_cast<void*>(&cuLibraryGetKernel)},
      {"cuKernelGetFunction", reinterpret_cast<void*>(&cuKernelGetFunction)},
      {"cuLaunchKernel", reinterpret_cast<void*>(&cuLaunchKernel)},
      {"cuMemAlloc", reinterpret_cast<void*>(&cuMemAlloc_v2)},
      {"cuMemFree", reinterpret_cast<void*>(&cuMemFree_v2)},
      {"cuMemcpyHtoD", reinterpret_cast<void*>(&cuMemcpyHtoD_v2)},
      {"cuMemcpyDtoH", reinterpret_cast<void*>(&cuMemcpyDtoH_v2)},
      {"cuMemsetD8", reinterpret_cast<void*>(&cuMemsetD8_v2)},
      {"cuLinkCreate", reinterpret_cast<void*>(&cuLinkCreate_v2)},
      {"cuLinkAddData", reinterpret_cast<void*>(&cuLinkAddData_v2)},
      {"cuLinkComplete", reinterpret_cast<void*>(&cuLinkComplete)},
      {"cuLinkDestroy", reinterpret_cast<void*>(&cuLinkDestroy)},
  };
  if (version < 12000 || flags != CU_GET_PROC_ADDRESS_DEFAULT) return CUDA_ERROR_INVALID_VALUE;
  for (const Entry& entry : kTable) {
    if (std::strcmp(entry.base, symbol) == 0) {
      *function = entry.function;
      if (status != nullptr) *status = CU_GET_PROC_ADDRESS_SUCCESS;
      return CUDA_SUCCESS;
    }
  }
  *function = nullptr;
  if (status != nullptr) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return CUDA_ERROR_NOT_FOUND;
}

}  // extern "C"
