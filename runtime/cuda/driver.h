// The CUDA driver, opened lazily with dlopen: device queries, module load, launch, device memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tmem/dim3.h"
#include "tmem/result.h"
#include "tmem/target.h"

namespace tmem::driver {

// libcuda.so.1 is opened on the first call of any function here, never at library load, so a
// process without a driver can still check, compile and cache. Every failure is an Error with code
// kDriver: "no CUDA driver: libcuda.so.1 could not be loaded (<dlerror>)" when the library is
// missing, "<call> failed: <CUDA error name>: <description>" when a call fails.

// Opens the driver and runs cuInit(0) (once per process; the outcome is remembered).
Status ensure_driver();
Result<int> driver_version();  // e.g. 12080 for CUDA 12.8
Result<int> device_count();

struct DeviceInfo {
  int ordinal = 0;
  std::string name;            // "NVIDIA H200"
  int compute_capability = 0;  // major * 10 + minor: 90, 100, 103, 110
};
Result<DeviceInfo> device_info(int ordinal);

// "9.0" for 90.
std::string cc_to_string(int compute_capability);

// The device of the current context; when no context is current, makes the primary context of
// device 0 current first (as the CUDA runtime does), so loads and launches work out of the box.
Result<int> current_device();

// Checks that code for `target` loads on device `ordinal`, e.g. "cubin for sm_100a cannot load on
// device 0 (NVIDIA H200, compute capability 9.0); sm_100a needs exactly 10.0".
Status check_target(Target target, int ordinal);

// A module loaded with cuLibraryLoadData: context-independent, so one LoadedLibrary serves every
// device of the process (the driver loads it into each context on first use). Move-only; unloads
// in the destructor.
class LoadedLibrary {
 public:
  // Checks the current device (see current_device) against `target` first.
  static Result<LoadedLibrary> load(std::span<const char> image, Target target);

  LoadedLibrary(LoadedLibrary&& other) noexcept;
  LoadedLibrary& operator=(LoadedLibrary&& other) noexcept;
  LoadedLibrary(const LoadedLibrary&) = delete;
  LoadedLibrary& operator=(const LoadedLibrary&) = delete;
  ~LoadedLibrary();

  // The CUkernel of an entry point, as an opaque handle for launch().
  Result<void*> kernel(const std::string& entry) const;
  // The device address and size of a global variable (its mangled name) in the current
  // context (cuLibraryGetGlobal).
  Result<std::pair<uint64_t, size_t>> global(const std::string& name) const;
  Target target() const noexcept { return target_; }

 private:
  LoadedLibrary(void* library, Target target) noexcept : library_(library), target_(target) {}
  void* library_ = nullptr;  // CUlibrary
  Target target_;
};

// The CUfunction of a CUkernel (from LoadedLibrary::kernel) in the current context (see
// current_device), after checking that device against `target`: cuKernelGetFunction, which loads
// the library into that context on first use. What launch() launches, for launchers of others.
Result<void*> function(void* kernel, Target target);

// Launches a CUkernel (from LoadedLibrary::kernel) on the current context (see current_device),
// after checking that device against `target`. `stream` is a CUstream (null: the default stream);
// `args` follows cuLaunchKernel's kernelParams: one pointer per kernel parameter.
Status launch(void* kernel, Target target, Dim3 grid, Dim3 block, unsigned shared_bytes,
              void* stream, void** args);

// The same as a launch of clusters of `cluster_x` CTAs along x (cuLaunchKernelEx with
// CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION; sm_90 and later): how a cta_group::2 CTA pair runs.
// grid.x must be a multiple of cluster_x. kDriver where the driver lacks cuLaunchKernelEx.
Status launch_cluster(void* kernel, Target target, Dim3 grid, Dim3 block, unsigned cluster_x,
                      unsigned shared_bytes, void* stream, void** args);

// The size in bytes of each parameter of a CUkernel (from LoadedLibrary::kernel), in order:
// cuKernelGetParamInfo (CUDA 12.4) for index 0, 1, ... until the driver says the index is past
// the last. kDriver where the driver lacks it.
Result<std::vector<size_t>> kernel_parameter_sizes(void* kernel);

Status synchronize();  // cuCtxSynchronize on the current context
Status synchronize_stream(void* stream);

// Device memory on the current context. Move-only; freed in the destructor.
class DeviceBuffer {
 public:
  static Result<DeviceBuffer> alloc(size_t bytes);
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  Status upload(const void* host, size_t bytes);    // host -> device, at offset 0
  Status download(void* host, size_t bytes) const;  // device -> host, from offset 0
  Status fill(unsigned char value);                 // every byte

  uint64_t address() const noexcept { return address_; }  // CUdeviceptr
  // For kernel arguments: a pointer to the CUdeviceptr, as cuLaunchKernel's kernelParams expect.
  void* arg() noexcept { return &address_; }
  size_t size() const noexcept { return bytes_; }

 private:
  DeviceBuffer(uint64_t address, size_t bytes) noexcept : address_(address), bytes_(bytes) {}
  void release() noexcept;
  uint64_t address_ = 0;
  size_t bytes_ = 0;
};

// Device memory by address on the current context (cuMemcpyHtoD, cuMemcpyDtoH, cuMemsetD8).
Status copy_to_device(uint64_t address, const void* host, size_t bytes);
Status copy_from_device(void* host, uint64_t address, size_t bytes);
Status fill_device(uint64_t address, unsigned char value, size_t bytes);

// What the driver's JIT is given besides the PTX (cuLinkCreate options).
struct JitOptions {
  Target target = Target::kSm100a;  // CU_JIT_TARGET
  int optimization_level = 4;       // CU_JIT_OPTIMIZATION_LEVEL, 0..4; 4 (the default) = ptxas -O3
  bool line_info = false;           // CU_JIT_GENERATE_LINE_INFO
};
// The options as the JIT receives them, "CU_JIT_TARGET=sm_100a", ..., for error details and keys.
std::vector<std::string> jit_option_text(const JitOptions& options);

struct JitImage {
  std::vector<char> cubin;
  std::string info_log;  // the JIT's info log; empty when silent
};

// Compiles PTX to a cubin with the driver's JIT (cuLinkCreate / cuLinkAddData / cuLinkComplete).
// Needs a driver and a context (made current as in current_device): without them the error is
// kDriver as everywhere here. A failing JIT call -- a PTX error, or a driver that refuses the
// target -- is kToolchain "driver jit failed: <call>: <CUDA error>[: first log error]" whose
// details hold "backend: driver", the options, the JIT's error log and the PTX.
Result<JitImage> driver_jit_ptx(const std::string& ptx, const JitOptions& options);

// driver_jit_ptx with the default options for `target`, the cubin only.
Result<std::vector<char>> driver_link_ptx(const std::string& ptx, Target target);

}  // namespace tmem::driver
