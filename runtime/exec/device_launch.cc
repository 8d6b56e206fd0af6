// The device side shared by the emu and gpu executors: the current device, buffers, one launch.
#include "runtime/exec/device_launch.h"

#include <algorithm>

#include "kernels/transfer_kernels.h"
#include "runtime/jit/compile_transfer.h"
#include "runtime/ptx/ir.h"
#include "tmem/check.h"

namespace tmem::device_launch {
namespace {

std::string words(std::size_t n) { return std::to_string(n) + " u32 words"; }

}  // namespace

Result<driver::DeviceInfo> current_device_info() {
  if (Status ok = driver::ensure_driver(); !ok) return std::move(ok).error();
  auto count = driver::device_count();
  if (!count) return std::move(count).error();
  if (*count == 0)
    return Error(ErrorCode::kDriver, "no CUDA device: the driver reports 0 devices")
        .set_device_fault(DeviceFault::kNoDevice);
  auto ordinal = driver::current_device();
  if (!ordinal) return std::move(ordinal).error();
  return driver::device_info(*ordinal);
}

std::string describe(const driver::DeviceInfo& info) {
  return info.name + " (cc " + driver::cc_to_string(info.compute_capability) + ")";
}

Result<HarnessKernel> harness_kernel(const TransferSpec& spec, const Plan& plan, KernelKind kind,
                                     const CompileOptions& options) {
  Result<Plan> checked = check(spec);
  if (!checked.ok()) return std::move(checked).error();
  if (*checked == plan) {
    std::vector<kernels::EmulatedInstruction> checked_forms;
    Result<Kernel> kernel = compile_transfer_reported(spec, options, kind, nullptr, &checked_forms);
    if (!kernel.ok()) return std::move(kernel).error();
    return HarnessKernel{std::move(kernel).value(), std::move(checked_forms)};
  }
  Result<HarnessModule> harness = harness_module(plan, kind, options);
  if (!harness.ok()) return std::move(harness).error();
  Result<std::string> ptx = ptx::print(harness->module);
  if (!ptx.ok()) return std::move(ptx).error();
  Result<CompiledModule> compiled = compile_ptx(*ptx, options);
  if (!compiled.ok()) return std::move(compiled).error();
  Result<Kernel> kernel =
      Kernel::from_cubin(compiled->cubin, kernels::kernel_name(kind), options.target);
  if (!kernel.ok()) return std::move(kernel).error();
  return HarnessKernel{std::move(kernel).value(), std::move(harness->checked)};
}

Status DeviceExecutor::run(const TransferSpec& spec, const Plan& plan, KernelKind kind,
                           std::span<const std::uint32_t> first, std::span<std::uint32_t> second) {
  if (Status ok = check_buffers(plan, kind, first.size(), second.size(), 1); !ok) return ok;
  return execute(spec, plan, kind, 1, first, second);
}

Status DeviceExecutor::run_pair(const TransferSpec& spec, const Plan& plan, KernelKind kind,
                                std::span<const std::uint32_t> first,
                                std::span<std::uint32_t> second) {
  if (Status ok = check_buffers(plan, kind, first.size(), second.size(), 2); !ok) return ok;
  return execute(spec, plan, kind, 2, first, second);
}

Status check_buffers(const Plan& plan, KernelKind kind, std::size_t first, std::size_t second,
                     int cta_group) {
  const kernels::LaunchShape shape = kernels::launch_shape(plan, kind, cta_group);
  const auto ctas = static_cast<std::size_t>(shape.ctas);
  const std::size_t regs =
      ctas * static_cast<std::size_t>(shape.threads) * static_cast<std::size_t>(shape.slots);
  const std::size_t raw = ctas * std::size_t{128} * static_cast<std::size_t>(shape.raw_columns);
  const std::string per_cta = shape.ctas > 1 ? " per CTA, 2 CTAs" : "";
  const bool raw_first = kind == KernelKind::kLoad || kind == KernelKind::kFill;
  const bool raw_second = kind == KernelKind::kStore || kind == KernelKind::kFill;
  const std::size_t want_first = raw_first ? raw : regs, want_second = raw_second ? raw : regs;
  const std::string k(to_string(kind));
  if (first != want_first)
    return Error(ErrorCode::kUsage,
                 "the " + k + " kernel's first buffer (" + (raw_first ? "Raw" : "In") + ") holds " +
                     words(first) + "; it needs " + words(want_first) + " (" +
                     (raw_first ? "128 lanes x " + std::to_string(shape.raw_columns) + " columns"
                                : std::to_string(shape.threads) + " threads x " +
                                      std::to_string(shape.slots) + " slots") +
                     per_cta + ")");
  if (second != want_second)
    return Error(ErrorCode::kUsage,
                 "the " + k + " kernel's second buffer (" + (raw_second ? "Raw" : "Out") +
                     ") holds " + words(second) + "; it needs " + words(want_second) + " (" +
                     (raw_second ? "128 lanes x " + std::to_string(shape.raw_columns) + " columns"
                                 : std::to_string(shape.threads) + " threads x " +
                                       std::to_string(shape.slots) + " slots") +
                     per_cta + ")");
  return std::monostate{};
}

Status run_harness(const Kernel& kernel, const kernels::LaunchShape& shape,
                   std::span<const std::uint32_t> first, std::span<std::uint32_t> second,
                   driver::DeviceBuffer* extra) {
  const std::size_t first_bytes = first.size() * sizeof(std::uint32_t);
  const std::size_t second_bytes = second.size() * sizeof(std::uint32_t);
  auto a = driver::DeviceBuffer::alloc(std::max<std::size_t>(first_bytes, 4));
  if (!a) return std::move(a).error();
  auto b = driver::DeviceBuffer::alloc(std::max<std::size_t>(second_bytes, 4));
  if (!b) return std::move(b).error();
  if (first_bytes)
    if (Status ok = a->upload(first.data(), first_bytes); !ok) return ok;
  if (second_bytes)
    if (Status ok = b->upload(second.data(), second_bytes); !ok) return ok;
  void* args[3] = {a->arg(), b->arg(), extra ? extra->arg() : nullptr};
  LaunchConfig config;
  config.grid = Dim3{static_cast<unsigned>(shape.ctas), 1, 1};
  config.block = Dim3{static_cast<unsigned>(shape.threads), 1, 1};
  config.cluster_ctas = static_cast<unsigned>(shape.ctas);  // a pair is one cluster of 2
  if (Status ok = kernel.launch(config, args); !ok) return ok;
  if (Status ok = driver::synchronize(); !ok) return ok;
  if (second_bytes)
    if (Status ok = b->download(second.data(), second_bytes); !ok) return ok;
  return std::monostate{};
}

}  // namespace tmem::device_launch
