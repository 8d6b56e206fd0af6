// libFuzzer target: tmem::check on specs built from fuzzed fields. Two input forms:
//  * spec text ("op: ...\nscope: ...\ntmem: ...\nregs: ..."), as the seed corpus holds: mutations
//    of real specs reach the deep rules;
//  * a leading 0x00 byte, then raw fields decoded with FuzzedDataProvider: an opcode from the
//    table, a scope, and operand layouts whose iters get fuzzed axes and strides over the exact
//    (group, *repeat, *atom) shapes the opcode wants.
// check() must give a Plan or a rule/limit Error; a Plan proven per view dim must equal the one the
// per-element reference checker gives. Work per input is bounded: operands above kMaxElements
// elements are skipped (check costs about one pass over each operand per alternative tried).
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/check/by_dims.h"
#include "tests/fuzz/fuzz_util.h"
#include "tmem/check.h"
#include "tmem/layout.h"
#include "tmem/tensor.h"
#include "tmem/transfer.h"

namespace {

constexpr std::int64_t kMaxElements = std::int64_t{1} << 15;

constexpr tmem::Axis kTmemAxes[] = {tmem::Axis::kTLane, tmem::Axis::kTCol};
constexpr tmem::Axis kRegisterAxes[] = {tmem::Axis::kM,       tmem::Axis::kTidInWg,
                                        tmem::Axis::kLaneid,  tmem::Axis::kWarpid,
                                        tmem::Axis::kWidInWg, tmem::Axis::kTx};

std::int64_t fuzzed_stride(FuzzedDataProvider& in) {
  // Mostly powers of two and small values, the strides real layouts use.
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
    case 0:
      return 0;
    case 1:
      return std::int64_t{1} << in.ConsumeIntegralInRange<int>(0, 9);
    case 2:
      return in.ConsumeIntegralInRange<std::int64_t>(0, 130);
    default:
      return in.ConsumeIntegral<std::int64_t>() & 0x7fffffffffff;
  }
}

// A view of the given shape: row-major iters over the shape, power-of-two dims split into
// fuzzed chunks, each iter on a fuzzed axis with a fuzzed stride; maybe an offset and a replica.
std::optional<tmem::View> fuzzed_view(FuzzedDataProvider& in,
                                      const std::vector<std::int64_t>& shape,
                                      std::span<const tmem::Axis> axes, tmem::DType dtype) {
  std::vector<tmem::Iter> iters;
  for (std::int64_t extent : shape) {
    std::int64_t rest = extent;
    while (rest > 1 && (rest & (rest - 1)) == 0 && in.ConsumeBool()) {
      const std::int64_t chunk = std::int64_t{1} << in.ConsumeIntegralInRange<int>(1, 7);
      if (chunk >= rest) break;
      iters.push_back({chunk, 0, tmem::Axis::kM});
      rest /= chunk;
    }
    iters.push_back({rest, 0, tmem::Axis::kM});
  }
  for (tmem::Iter& iter : iters) {
    iter.axis = axes[in.ConsumeIntegralInRange<size_t>(0, axes.size() - 1)];
    iter.stride = fuzzed_stride(in);
  }
  std::vector<tmem::Offset> offsets;
  if (in.ConsumeBool())
    offsets.push_back({axes[in.ConsumeIntegralInRange<size_t>(0, axes.size() - 1)],
                       in.ConsumeIntegralInRange<std::int64_t>(0, 80)});
  std::vector<tmem::Iter> replica;
  if (in.ConsumeIntegralInRange<int>(0, 7) == 0)
    replica.push_back({in.ConsumeIntegralInRange<std::int64_t>(1, 4), fuzzed_stride(in),
                       axes[in.ConsumeIntegralInRange<size_t>(0, axes.size() - 1)]});
  auto layout = tmem::Layout::make(std::move(iters), std::move(replica), std::move(offsets));
  if (!layout) return std::nullopt;
  auto tensor = tmem::Tensor::make(shape, std::move(*layout), dtype);
  if (!tensor) return std::nullopt;
  return tmem::View(std::move(*tensor));
}

std::optional<tmem::TransferSpec> fuzzed_spec(FuzzedDataProvider& in) {
  const auto shapes = tmem::all_shapes();
  auto op = tmem::Opcode::make(in.ConsumeBool() ? tmem::Direction::kLoad : tmem::Direction::kStore,
                               shapes[in.ConsumeIntegralInRange<size_t>(0, shapes.size() - 1)],
                               1 << in.ConsumeIntegralInRange<int>(0, 7), in.ConsumeBool());
  if (!op) return std::nullopt;
  std::optional<tmem::Scope> scope;
  switch (in.ConsumeIntegralInRange<int>(0, 2)) {
    case 0:
      scope = tmem::Scope::warp(in.ConsumeIntegralInRange<int>(0, 7)).value();
      break;
    case 1:
      scope = tmem::Scope::warpgroup();
      break;
    default:
      scope = tmem::Scope::cta(4 * in.ConsumeIntegralInRange<int>(1, 2)).value();
      break;
  }
  std::vector<std::int64_t> prefix;
  if (scope->group_rank()) prefix.push_back(scope->groups());
  for (int d = in.ConsumeIntegralInRange<int>(0, 2); d > 0; --d)
    prefix.push_back(in.ConsumeIntegralInRange<std::int64_t>(1, 4));
  const bool halves = op->packed() || in.ConsumeIntegralInRange<int>(0, 7) == 0;
  const tmem::DType tmem_dtype = halves ? tmem::DType::kF16 : tmem::DType::kB32;
  const tmem::DType regs_dtype = op->packed() ? tmem::DType::kB32 : tmem_dtype;
  std::vector<std::int64_t> tmem_shape = prefix, regs_shape = prefix;
  tmem_shape.insert(tmem_shape.end(), {op->atom_rows(), op->atom_cols()});
  if (op->is_split()) regs_shape.push_back(2);
  regs_shape.insert(regs_shape.end(), {op->atom_rows(), op->atom_cols()});
  if (halves) tmem_shape.push_back(2);
  if (halves && !op->packed()) regs_shape.push_back(2);
  auto tmem = fuzzed_view(in, tmem_shape, kTmemAxes, tmem_dtype);
  auto regs = fuzzed_view(in, regs_shape, kRegisterAxes, regs_dtype);
  if (!tmem || !regs) return std::nullopt;
  std::optional<tmem::View> tmem2;
  std::optional<std::int64_t> imm;
  if (op->is_split()) {
    tmem2 = fuzzed_view(in, tmem_shape, kTmemAxes, tmem_dtype);
    if (!tmem2) return std::nullopt;
    imm = in.ConsumeBool() ? (std::int64_t{16} << 16) + op->atom_tmem_cols()
                           : in.ConsumeIntegral<std::int32_t>();
  }
  auto spec = tmem::TransferSpec::make(*op, *scope, std::move(*tmem), std::move(*regs),
                                       std::move(tmem2), imm);
  if (!spec) return std::nullopt;
  return std::move(*spec);
}

bool bounded(const tmem::TransferSpec& spec) {
  return spec.tmem().size() <= kMaxElements && spec.regs().size() <= kMaxElements &&
         (!spec.tmem2() || spec.tmem2()->size() <= kMaxElements);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::optional<tmem::TransferSpec> spec;
  if (size > 0 && data[0] == 0) {
    FuzzedDataProvider in(data + 1, size - 1);
    spec = fuzzed_spec(in);
  } else {
    auto parsed =
        tmem::TransferSpec::parse(std::string_view(reinterpret_cast<const char*>(data), size));
    if (parsed) spec = std::move(*parsed);
  }
  if (!spec || !bounded(*spec)) return 0;
  auto plan = tmem::check(*spec);
  if (!plan) {
    FUZZ_CHECK(tmemjit_fuzz::is_user_error(plan.error(),
                                           {tmem::ErrorCode::kRule, tmem::ErrorCode::kLimit}),
               tmemjit_fuzz::describe(plan.error()) + "\n" + spec->to_string());
    return 0;
  }
  // check() tries the per-dim proof first; whatever it proves, the reference must agree with.
  auto reference = tmem::check_each_element(*spec);
  FUZZ_CHECK(reference.ok(), spec->to_string() + "\nreference: " +
                                 (reference ? std::string() : reference.error().message()));
  FUZZ_CHECK(*reference == *plan, spec->to_string() + "\nplan:\n" + plan->to_string() +
                                      "\nreference:\n" + reference->to_string());
  FUZZ_CHECK(plan->alloc_columns >= 32 && plan->alloc_columns <= 512 &&
                 plan->columns_used <= plan->alloc_columns,
             spec->to_string());
  return 0;
}
