// What the emu and gpu executors share (runtime/exec/executor.h): the device they run on and one
// launch of a harness kernel with its buffers. Both compile through compile_transfer and launch
// through Kernel::launch, the path users take (docs/architecture.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/emulation_kernels.h"
#include "kernels/transfer_kernels.h"
#include "runtime/cuda/driver.h"
#include "runtime/exec/executor.h"
#include "tmem/compile.h"
#include "tmem/kernel.h"
#include "tmem/kernel_kind.h"
#include "tmem/plan.h"
#include "tmem/result.h"
#include "tmem/transfer.h"

namespace tmem::device_launch {

// The device of the current context (device 0's primary context when none is current). Fails
// with the driver's error, e.g. "no CUDA driver: libcuda.so.1 could not be loaded (...)", or
// kDriver "no CUDA device: the driver reports 0 devices".
Result<driver::DeviceInfo> current_device_info();

// "NVIDIA H200 (cc 9.0)".
std::string describe(const driver::DeviceInfo& info);

// A harness kernel to launch, and for the emulated one (Target::kSm90) what its status codes name
// (kernels::check_emulation_status).
struct HarnessKernel {
  Kernel kernel;
  std::vector<kernels::EmulatedInstruction> checked;
};

// The harness kernel `kind` of the checked transfer for options.target and options.cta_group:
// compile_transfer's (cached in memory and on disk, the path users take) when `plan` is the one
// check(spec) gives. A plan changed by hand (the tests that inject a fault to show the data checks
// and the emulation's guardrails catch it) has no spec of its own: it is built and compiled as it
// is, uncached, and launched through Kernel::launch all the same.
Result<HarnessKernel> harness_kernel(const TransferSpec& spec, const Plan& plan, KernelKind kind,
                                     const CompileOptions& options);

// What the emu and gpu executors share: run and run_pair check the buffers against the launch
// shape (check_buffers below), then execute with the CTA group, 1 or 2 (the pair's cluster).
class DeviceExecutor : public Executor {
 public:
  Status run(const TransferSpec& spec, const Plan& plan, KernelKind kind,
             std::span<const std::uint32_t> first, std::span<std::uint32_t> second) final;
  Status run_pair(const TransferSpec& spec, const Plan& plan, KernelKind kind,
                  std::span<const std::uint32_t> first, std::span<std::uint32_t> second) final;

 protected:
  // Runs harness kernel `kind` of the checked transfer once, buffers already checked.
  virtual Status execute(const TransferSpec& spec, const Plan& plan, KernelKind kind, int cta_group,
                         std::span<const std::uint32_t> first, std::span<std::uint32_t> second) = 0;
};

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
