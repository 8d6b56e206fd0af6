// The emu executor: harness kernels lowered to sm_90 PTX with TMEM in global memory
// (kernels/emulation_kernels.h), run on any GPU of compute capability 9.0 or later.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "kernels/emulation_kernels.h"
#include "kernels/transfer_kernels.h"
#include "runtime/exec/device_launch.h"
#include "runtime/exec/executor.h"

namespace tmem {
namespace {

constexpr int kMinComputeCapability = 90;
// Real TMEM holds garbage after alloc; emulated TMEM starts as this byte, so a check that reads a
// cell no instruction wrote sees 0xA5A5A5A5 rather than a lucky zero.
constexpr unsigned char kPoison = 0xA5;
constexpr std::uint32_t kPoisonWord = 0xA5A5A5A5u;

Status needs_emulation_device(const driver::DeviceInfo& info) {
  if (info.compute_capability >= kMinComputeCapability) return std::monostate{};
  return Error(ErrorCode::kTarget,
               "needs compute capability 9.0 or later, found " +
                   driver::cc_to_string(info.compute_capability),
               "device " + std::to_string(info.ordinal) + " (" + info.name +
                   "); the emulation is compiled for sm_90")
      .set_device_fault(DeviceFault::kWrongComputeCapability);
}

class EmuExecutor final : public device_launch::DeviceExecutor {
 public:
  explicit EmuExecutor(driver::DeviceInfo info) : info_(std::move(info)) {}

  Device device() const noexcept override { return Device::kEmu; }
  std::string description() const override { return "emu on " + device_launch::describe(info_); }

 private:
  // Compiled by compile_transfer for Target::kSm90 (the emulated harness kernel, cached as any
  // user's transfer; on a device past 9.x the driver compiles its PTX) and launched by
  // Kernel::launch, so `tmemjit run` takes the path users take (device_launch::harness_kernel).
  // A pair (cta_group 2) launches as one cluster of 2 CTAs (sm_90 has clusters and
  // barrier.cluster); each CTA emulates its own TMEM in its own EmulationBuffer.
  Status execute(const TransferSpec& spec, const Plan& plan, KernelKind kind, int cta_group,
                 std::span<const std::uint32_t> first, std::span<std::uint32_t> second) override {
    // The device of the current context now, which may differ from the one seen at creation.
    auto info = device_launch::current_device_info();
    if (!info) return std::move(info).error();
    if (Status ok = needs_emulation_device(*info); !ok) return ok;
    CompileOptions options;
    options.target = Target::kSm90;
    options.cta_group = cta_group;
    auto harness = device_launch::harness_kernel(spec, plan, kind, options);
    if (!harness) return std::move(harness).error();

    // One EmulationBuffer per CTA: poisoned TMEM, cleared status slots.
    const kernels::LaunchShape shape = kernels::launch_shape(plan, kind, cta_group);
    const size_t ctas = static_cast<size_t>(shape.ctas);
    auto buffer =
        driver::DeviceBuffer::alloc(ctas * kernels::kEmuBufferWords * sizeof(std::uint32_t));
    if (!buffer) return std::move(buffer).error();
    if (Status ok = buffer->fill(kPoison); !ok) return ok;
    std::vector<std::uint32_t> image;
    if (ctas > 1) {  // the upload starts at offset 0: CTA 1's status slots need the whole image
      image.assign(ctas * kernels::kEmuBufferWords, kPoisonWord);
      for (size_t c = 0; c < ctas; ++c)
        std::fill_n(image.begin() + static_cast<long>(c * kernels::kEmuBufferWords),
                    kernels::kEmuStatusWords, 0u);
    } else {
      image.assign(kernels::kEmuStatusWords, 0);
    }
    if (Status ok = buffer->upload(image.data(), image.size() * sizeof(std::uint32_t)); !ok)
      return ok;

    if (Status ok = device_launch::run_harness(harness->kernel, shape, first, second, &*buffer);
        !ok)
      return ok;
    // The status slots of CTA c start at word c * kEmuBufferWords; one CTA needs only its own.
    std::vector<std::uint32_t> all(ctas > 1 ? ctas * kernels::kEmuBufferWords
                                            : 2 * static_cast<size_t>(shape.threads));
    if (Status ok = buffer->download(all.data(), all.size() * sizeof(std::uint32_t)); !ok)
      return ok;
    for (size_t c = 0; c < ctas; ++c) {
      const std::span<const std::uint32_t> status(all.data() + c * kernels::kEmuBufferWords,
                                                  2 * static_cast<size_t>(shape.threads));
      Status checked = kernels::check_emulation_status(harness->checked, status);
      if (!checked.ok() && ctas > 1) {
        Error error = std::move(checked).error();
        return Error(error.code(), "CTA " + std::to_string(c) + " of the pair: " + error.message(),
                     error.details())
            .set_rule(error.rule());
      }
      if (!checked.ok()) return checked;
    }
    return std::monostate{};
  }

 private:
  driver::DeviceInfo info_;
};

}  // namespace

Result<std::unique_ptr<Executor>> make_emu_executor() {
  auto info = device_launch::current_device_info();
  if (!info) return std::move(info).error();
  if (Status ok = needs_emulation_device(*info); !ok) return std::move(ok).error();
  return std::unique_ptr<Executor>(std::make_unique<EmuExecutor>(std::move(*info)));
}

}  // namespace tmem
