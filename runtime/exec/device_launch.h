// What the emu and gpu executors share (runtime/exec/executor.h): the device they run on, an
// in-process cache of loaded harness modules, and one launch of a harness kernel with its buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "runtime/cuda/driver.h"
#include "tmem/cache.h"
#include "tmem/compile.h"
#include "tmem/kernel_kind.h"
#include "tmem/plan.h"
#include "tmem/result.h"
#include "tmem/target.h"

namespace tmem::device_launch {

// The device of the current context (device 0's primary context when none is current). Fails
// with the driver's error, e.g. "no CUDA driver: libcuda.so.1 could not be loaded (...)", or
// kDriver "no CUDA device: the driver reports 0 devices".
Result<driver::DeviceInfo> current_device_info();

// "NVIDIA H200 (cc 9.0)".
std::string describe(const driver::DeviceInfo& info);

// How PTX becomes code the driver loads.
enum class Build {
  kCompile,    // compile_ptx(ptx, options) to a cubin for options.target
  kDriverJit,  // the PTX itself: the driver JIT-compiles it for the device it runs on
};

// The CUkernel `entry` of `ptx`, built and loaded once per process: later calls with the same
// PTX, target, build and options return the loaded kernel (a hit). Concurrent calls for one key
// build once; failures are not remembered.
Result<void*> cached_kernel(const std::string& ptx, const std::string& entry, Build build,
                            const CompileOptions& options);

// Counters of cached_kernel since the process started.
struct CacheStats {
  std::size_t hits = 0;
  std::size_t misses = 0;  // builds started (a failed build counts too)
};
CacheStats cache_stats();

// The executor contract's size check (runtime/exec/executor.h): `first` and `second` must match
// kernels::launch_shape(plan, kind, cta_group) (threads x slots for In/Out, 128 x raw_columns for
// Raw, per CTA); otherwise kUsage naming the buffer, the expected and the actual size.
Status check_buffers(const Plan& plan, KernelKind kind, std::size_t first, std::size_t second,
                     int cta_group = 1);

// One launch of a harness kernel: uploads `first` and `second` (so words the kernel does not
// write come back unchanged), launches one CTA of `threads` threads with the parameters (first,
// second[, extra]), waits for it and downloads `second`. Device failures are kDriver.
// With ctas = 2 it launches one cluster of 2 CTAs (a cta_group::2 pair).
Status run_harness(void* kernel, Target target, int threads, std::span<const std::uint32_t> first,
                   std::span<std::uint32_t> second, driver::DeviceBuffer* extra = nullptr,
                   int ctas = 1);

}  // namespace tmem::device_launch
