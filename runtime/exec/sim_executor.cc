// The simulator as an Executor: builds the harness kernel for sm_100a (sm_103a for ld.red) and runs
// it on the CPU.
#include "kernels/transfer_kernels.h"
#include "runtime/exec/executor.h"
#include "runtime/sim/interpreter.h"

namespace tmem {
namespace {

class SimExecutor final : public Executor {
 public:
  Device device() const noexcept override { return Device::kSim; }
  std::string description() const override {
    return "sim (CPU simulator: one CTA or a CTA pair, TMEM of 128 lanes x 512 columns per CTA)";
  }

  Status run(const TransferSpec& /*spec*/, const Plan& plan, KernelKind kind,
             std::span<const std::uint32_t> first, std::span<std::uint32_t> second) override {
    return execute(plan, kind, 1, first, second);
  }
  Status run_pair(const TransferSpec& /*spec*/, const Plan& plan, KernelKind kind,
                  std::span<const std::uint32_t> first, std::span<std::uint32_t> second) override {
    return execute(plan, kind, 2, first, second);
  }

 private:
  static Status execute(const Plan& plan, KernelKind kind, int cta_group,
                        std::span<const std::uint32_t> first, std::span<std::uint32_t> second) {
    // Only the kernel is executed: the simulator never looks at the Plan, so a planning or code
    // generation bug shows up as wrong data or as a broken runtime rule.
    // sm_100a unless the opcode needs another target (ld.red: sm_103a, rule R14).
    const Target target =
        plan.op.supports(Target::kSm100a) ? Target::kSm100a : plan.op.targets()[0];
    Result<ptx::Module> module = kernels::build_kernel(plan, kind, target, cta_group);
    if (!module) return std::move(module).error();
    const kernels::LaunchShape shape = kernels::launch_shape(plan, kind, cta_group);
    const size_t io_words = static_cast<size_t>(shape.ctas) * static_cast<size_t>(shape.threads) *
                            static_cast<size_t>(shape.slots);
    const size_t raw_words = static_cast<size_t>(shape.ctas) * static_cast<size_t>(128) *
                             static_cast<size_t>(shape.raw_columns);
    const bool first_raw = kind == KernelKind::kLoad || kind == KernelKind::kFill;
    const bool second_raw = kind == KernelKind::kStore || kind == KernelKind::kFill;
    const char* first_name = first_raw ? "raw" : "in";
    const char* second_name = kind == KernelKind::kFill ? "raw2" : second_raw ? "raw" : "out";
    auto size_error = [&](const char* name, size_t got, size_t want) {
      return Error(ErrorCode::kUsage, std::string("sim: buffer '") + name + "' of the " +
                                          std::string(to_string(kind)) + " kernel has " +
                                          std::to_string(got) + " words, expected " +
                                          std::to_string(want));
    };
    if (first.size() != (first_raw ? raw_words : io_words))
      return size_error(first_name, first.size(), first_raw ? raw_words : io_words);
    if (second.size() != (second_raw ? raw_words : io_words))
      return size_error(second_name, second.size(), second_raw ? raw_words : io_words);
    sim::GlobalMemory memory;
    const std::uint64_t params[2] = {memory.map_read_only(first_name, first),
                                     memory.map(second_name, second)};
    sim::Config config;
    config.threads = shape.threads;
    config.ctas = shape.ctas;
    return sim::run_kernel(*module, kernels::kernel_name(kind), config, params, memory);
  }
};

}  // namespace

Result<std::unique_ptr<Executor>> make_sim_executor() {
  return std::unique_ptr<Executor>(std::make_unique<SimExecutor>());
}

}  // namespace tmem
