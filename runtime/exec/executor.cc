// Device names and the choice of executor for Device::kAuto.
#include "runtime/exec/executor.h"

#include <string>

namespace tmem {

std::string_view to_string(Device device) noexcept {
  switch (device) {
    case Device::kAuto:
      return "auto";
    case Device::kGpu:
      return "gpu";
    case Device::kEmu:
      return "emu";
    case Device::kSim:
      return "sim";
  }
  return "auto";
}

Result<Device> parse_device(std::string_view text) {
  for (Device device : {Device::kAuto, Device::kGpu, Device::kEmu, Device::kSim})
    if (to_string(device) == text) return device;
  return Error(ErrorCode::kUsage,
               "unknown device '" + std::string(text) + "'; allowed: auto, gpu, emu, sim");
}

Status Executor::run_pair(const TransferSpec& /*spec*/, const Plan& /*plan*/, KernelKind /*kind*/,
                          std::span<const std::uint32_t> /*first*/,
                          std::span<std::uint32_t> /*second*/) {
  return Error(ErrorCode::kUsage, "device " + std::string(to_string(device())) +
                                      " does not launch a CTA pair (cta_group 2)");
}

Result<std::unique_ptr<Executor>> make_executor(Device device, std::string* why_not) {
  switch (device) {
    case Device::kGpu:
      return make_gpu_executor();
    case Device::kEmu:
      return make_emu_executor();
    case Device::kSim:
      return make_sim_executor();
    case Device::kAuto:
      break;
  }
  for (auto* factory : {&make_gpu_executor, &make_emu_executor}) {
    Result<std::unique_ptr<Executor>> executor = (*factory)();
    if (executor.ok()) return executor;
    if (why_not)
      *why_not += std::string(factory == &make_gpu_executor ? "gpu: " : "emu: ") +
                  executor.error().message() + "\n";
  }
  return make_sim_executor();
}

}  // namespace tmem
