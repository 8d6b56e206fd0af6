// The gpu executor: the real tcgen05 harness kernels on a GPU of compute capability 10.x/11.x.
#include <memory>

#include "kernels/transfer_kernels.h"
#include "runtime/exec/device_launch.h"
#include "runtime/exec/executor.h"

namespace tmem {
namespace {

// The tcgen05 target for a device: its arch-specific target (sm_100a on 10.0), else a family
// target that runs on it (sm_100f on a later 10.x).
Result<Target> target_for(const driver::DeviceInfo& info) {
  const int cc = info.compute_capability;
  for (bool family : {false, true})
    for (Target target : all_targets())
      if (is_family_target(target) == family && runs_on(target, cc)) return target;
  return Error(ErrorCode::kTarget,
               "needs compute capability 10.x, found " + driver::cc_to_string(cc),
               "device " + std::to_string(info.ordinal) + " (" + info.name +
                   ") has no tcgen05; tcgen05 targets: sm_100a and sm_100f (10.0), sm_103a and "
                   "sm_103f "
                   "(10.3), sm_110a and sm_110f (11.0); `tmemjit run --device emu` runs the "
                   "emulation on "
                   "any GPU of compute capability 9.0 or later")
      .set_device_fault(DeviceFault::kWrongComputeCapability);
}

class GpuExecutor final : public device_launch::DeviceExecutor {
 public:
  GpuExecutor(driver::DeviceInfo info, Target target) : info_(std::move(info)), target_(target) {}

  Device device() const noexcept override { return Device::kGpu; }
  std::string description() const override {
    return "gpu on " + device_launch::describe(info_) + ", " + std::string(to_string(target_));
  }

 private:
  // Compiled by compile_transfer (cached in memory and on disk as any user's transfer) and
  // launched by Kernel::launch, so `tmemjit run` takes the path users take
  // (device_launch::harness_kernel). A pair (cta_group 2) is a cluster of 2 CTAs with the
  // .cta_group::2 lifecycle (never run: no sm_100 GPU was available; the emu executor runs the
  // same kernel shape on Hopper).
  Status execute(const TransferSpec& spec, const Plan& plan, KernelKind kind, int cta_group,
                 std::span<const std::uint32_t> first, std::span<std::uint32_t> second) override {
    // The device of the current context now, which may differ from the one seen at creation.
    auto info = device_launch::current_device_info();
    if (!info) return std::move(info).error();
    auto target = target_for(*info);
    if (!target) return std::move(target).error();
    CompileOptions options;
    options.target = *target;
    options.cta_group = cta_group;
    auto harness = device_launch::harness_kernel(spec, plan, kind, options);
    if (!harness) return std::move(harness).error();
    return device_launch::run_harness(harness->kernel, kernels::launch_shape(plan, kind, cta_group),
                                      first, second);
  }

  driver::DeviceInfo info_;
  Target target_;
};

}  // namespace

Result<std::unique_ptr<Executor>> make_gpu_executor() {
  auto info = device_launch::current_device_info();
  if (!info) return std::move(info).error();
  auto target = target_for(*info);
  if (!target) return std::move(target).error();
  return std::unique_ptr<Executor>(std::make_unique<GpuExecutor>(std::move(*info), *target));
}

}  // namespace tmem
