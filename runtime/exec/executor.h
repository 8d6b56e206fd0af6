// Executors: what runs a harness kernel of a checked transfer on some device (docs/design.md
// §Pipeline: the CPU simulator, GPU emulation on non-Blackwell GPUs, real tcgen05 on sm_100-class
// GPUs). `tmemjit run` and the sim/emu/device suites drive all three through this one interface, so
// the same data checks apply to each.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "tmem/device.h"
#include "tmem/kernel_kind.h"
#include "tmem/plan.h"
#include "tmem/result.h"
#include "tmem/transfer.h"

namespace tmem {

// Device, to_string(Device) and parse_device are public: tmem/device.h.

class Executor {
 public:
  virtual ~Executor() = default;
  virtual Device device() const noexcept = 0;
  // For reports, e.g. "sim (CPU simulator)", "emu on NVIDIA H200 (cc 9.0)".
  virtual std::string description() const = 0;
  // Runs harness kernel `kind` of the checked transfer once and waits for it. `first` and `second`
  // are the kernel's two u32 buffers in parameter order (kernels::launch_shape): `first` is only
  // read, `second` is written. Sizes are threads x slots words for In/Out and 128 x raw_columns
  // words for Raw; a size mismatch is kUsage. A rule broken while running (simulator) is kWrongData
  // or kRule naming the instruction, warp and cell; a device failure is kDriver.
  virtual Status run(const TransferSpec& spec, const Plan& plan, KernelKind kind,
                     std::span<const std::uint32_t> first, std::span<std::uint32_t> second) = 0;
  // The same kernel with the lifecycle of a CTA pair (cta_group::2, docs/tcgen05-rules.md
  // §Lifecycle), launched as a cluster of 2 CTAs: each buffer holds CTA 0's block, then CTA 1's
  // (kernels::launch_shape(plan, kind, 2)). A device that cannot launch a cluster says kUsage.
  virtual Status run_pair(const TransferSpec& spec, const Plan& plan, KernelKind kind,
                          std::span<const std::uint32_t> first, std::span<std::uint32_t> second);
};

// One factory per device. make_executor(kAuto) tries gpu, then emu, then sim, and on success the
// executor's description says which it picked; `why_not` (optional) collects one line per device
// that was passed over and why ("gpu: needs compute capability 10.x, found 9.0").
Result<std::unique_ptr<Executor>> make_sim_executor();
Result<std::unique_ptr<Executor>> make_emu_executor();
Result<std::unique_ptr<Executor>> make_gpu_executor();
Result<std::unique_ptr<Executor>> make_executor(Device device, std::string* why_not = nullptr);

}  // namespace tmem
