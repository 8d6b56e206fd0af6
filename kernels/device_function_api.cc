// The public face of kernels/device_function.h (docs/design.md §Specialization): device_function,
// the language names.
#include "kernels/device_function.h"
#include "runtime/ptx/ir.h"
#include "tmem/check.h"
#include "tmem/device_function.h"

namespace tmem {

std::string_view to_string(Language language) noexcept {
  return language == Language::kPtx ? "ptx" : "cuda";
}

Result<Language> parse_language(std::string_view text) {
  if (text == "cuda") return Language::kCuda;
  if (text == "ptx") return Language::kPtx;
  return Error(ErrorCode::kUsage,
               "unknown language '" + std::string(text) + "'; allowed: cuda, ptx");
}

Result<DeviceFunction> device_function(const TransferSpec& spec,
                                       const DeviceFunctionOptions& options, Target target) {
  auto code = kernels::prepare_transfer(spec, options);
  if (!code.ok()) return std::move(code).error();
  if (auto group = kernels::lifecycle_cta_group(std::span(&*code, 1)); !group.ok())
    return std::move(group).error();
  const Plan& plan = code->plan;
  DeviceFunction fn;
  fn.name = options.name;
  fn.language = options.language;
  fn.direction = plan.op.direction();
  fn.regs_per_thread = plan.regs_per_thread;
  fn.instructions_per_warp = plan.instructions_per_warp();
  fn.alloc_columns = plan.alloc_columns;
  fn.coord_rank = code->coord.rank;
  fn.target = target;
  const std::string regs = std::to_string(plan.regs_per_thread);
  std::string extra;
  if (options.warp_argument) extra += ", uint32_t warp";
  if (options.column_argument) extra += ", uint32_t column";
  if (options.language == Language::kCuda) {
    fn.source = kernels::cuda_lifecycle(target, false, options.cta_group) + "\n" +
                kernels::cuda_transfer(*code, target);
    fn.signature = "__device__ void " + options.name + "(uint32_t tmem_base, uint32_t (&regs)[" +
                   regs + "]" + extra + ")";
    return fn;
  }
  if (target == Target::kSm90)
    return Error(ErrorCode::kUsage,
                 "the PTX form of a device function is not emulated for sm_90; use the CUDA form "
                 "(language cuda), whose emulated functions compile for sm_90");
  ptx::Module module(target);
  if (Status ok = kernels::add_transfer_functions(*&module, *code, options.name,
                                                  options.name + "_wait", options.name + "_coord");
      !ok.ok())
    return std::move(ok).error();
  kernels::add_lifecycle_functions(module, options.cta_group);
  auto text = ptx::print(module);
  if (!text.ok()) return std::move(text).error();
  fn.source = "// " + options.name + ": " + plan.op.to_string() + " at scope " +
              plan.scope.to_string() + "; " + options.name + "_regs = " + regs + " (" +
              std::to_string(plan.instructions_per_warp()) + " instructions per warp, " +
              std::to_string(plan.alloc_columns) + " columns to allocate)\n" + *text;
  const std::string params = std::string(".param .b32 tmem_base") +
                             (options.warp_argument ? ", .param .b32 warp" : "") +
                             (options.column_argument ? ", .param .b32 column" : "");
  if (plan.op.is_load()) {
    fn.signature = ".visible .func (.param .align 4 .b8 regs[" +
                   std::to_string(4 * plan.regs_per_thread) + "]) " + options.name + "(" + params +
                   ")";
  } else {
    std::string slots;
    for (int s = 0; s < plan.regs_per_thread; ++s)
      slots += ", .param .b32 slot" + std::to_string(s);
    fn.signature = ".visible .func " + options.name + "(.param .b32 tmem_base" + slots +
                   (options.warp_argument ? ", .param .b32 warp" : "") +
                   (options.column_argument ? ", .param .b32 column" : "") + ")";
  }
  return fn;
}

Result<SpecFile> parse_spec_file(std::string_view json, const DeviceFunctionOptions& defaults) {
  auto file = TransferSpec::from_json_with_options(json);
  if (!file.ok()) return std::move(file).error();
  auto& [spec, given] = *file;
  DeviceFunctionOptions options = defaults;
  if (given.name) options.name = *given.name;
  if (given.wait) options.wait = *given.wait;
  if (given.warp_argument) options.warp_argument = *given.warp_argument;
  if (given.column_argument) options.column_argument = *given.column_argument;
  if (given.cta_group) options.cta_group = *given.cta_group;
  return SpecFile{std::move(spec), std::move(options), std::move(given.keys)};
}

}  // namespace tmem
