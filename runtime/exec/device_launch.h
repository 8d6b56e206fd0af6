// What the emu and gpu executors share (runtime/exec/executor.h): the device they run on and one
// launch of a harness kernel with its buffers. Both compile through compile_transfer and launch
// through Kernel::launch, the path users take (docs/architecture.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "kernels/transfer_kernels.h"
#include "runtime/cuda/driver.h"
#include "tmem/kernel.h"
#include "tmem/kernel_kind.h"
#include "tmem/plan.h"
#include "tmem/result.h"

namespace tmem::device_launch {

// The device of the current context (device 0's primary context when none is current). Fails
// with the driver's error, e.g. "no CUDA driver: libcuda.so.1 could not be loaded (...)", or
// kDriver "no CUDA device: the driver reports 0 devices".
Result<driver::DeviceInfo> current_device_info();

// "NVIDIA H200 (cc 9.0)".
std::string describe(const driver::DeviceInfo& info);

// The executor contract's size check (runtime/exec/executor.h): `first` and `second` must match
// kernels::launch_shape(plan, kind, cta_group) (threads x slots for In/Out, 128 x raw_columns for
// Raw, per CTA); otherwise kUsage naming the buffer, the expected and the actual size.
Status check_buffers(const Plan& plan, KernelKind kind, std::size_t first, std::size_t second,
                     int cta_group = 1);

// One launch of a harness kernel: uploads `first` and `second` (so words the kernel does not
// write come back unchanged), launches `shape` (one CTA, or a cluster of 2 for a cta_group::2
// pair) with the parameters (first, second[, extra]) through Kernel::launch, waits for it and
// downloads `second`. Device failures are kDriver.
Status run_harness(const Kernel& kernel, const kernels::LaunchShape& shape,
                   std::span<const std::uint32_t> first, std::span<std::uint32_t> second,
                   driver::DeviceBuffer* extra = nullptr);

}  // namespace tmem::device_launch
