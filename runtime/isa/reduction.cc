// The value semantics of tcgen05.ld.red's .redOp{.abs}{.NaN}.type (docs/tcgen05-rules.md §Targets,
// rule R14).
#include "tmem/reduction.h"

namespace tmem {
namespace {

constexpr std::uint32_t kSignBit = 0x80000000u;

bool is_nan(std::uint32_t bits) { return (bits & 0x7FFFFFFFu) > 0x7F800000u; }

// Total order of non-NaN f32 bit patterns with -0.0 below +0.0: a sign-magnitude to two's
// complement key, so that no floating-point unit (and no flush-to-zero mode) is involved.
std::int64_t f32_key(std::uint32_t bits) {
  const std::int64_t magnitude = bits & 0x7FFFFFFFu;
  return (bits & kSignBit) ? -magnitude - 1 : magnitude;
}

}  // namespace

std::string_view to_string(ReductionOp op) noexcept {
  return op == ReductionOp::kMin ? "min" : "max";
}

std::string_view to_string(ReductionType type) noexcept {
  switch (type) {
    case ReductionType::kF32:
      return "f32";
    case ReductionType::kU32:
      return "u32";
    case ReductionType::kS32:
      return "s32";
  }
  return "f32";
}

std::string Reduction::to_string() const {
  std::string text(tmem::to_string(op));
  if (abs) text += ".abs";
  if (nan) text += ".NaN";
  text += ".";
  text += tmem::to_string(type);
  return text;
}

std::uint32_t reduce_pair(const Reduction& reduction, std::uint32_t a, std::uint32_t b) noexcept {
  const bool take_min = reduction.op == ReductionOp::kMin;
  switch (reduction.type) {
    case ReductionType::kU32:
      return (take_min ? b < a : b > a) ? b : a;
    case ReductionType::kS32: {
      const auto sa = static_cast<std::int32_t>(a), sb = static_cast<std::int32_t>(b);
      return (take_min ? sb < sa : sb > sa) ? b : a;
    }
    case ReductionType::kF32:
      break;
  }
  if (reduction.abs) {
    a &= ~kSignBit;
    b &= ~kSignBit;
  }
  const bool nan_a = is_nan(a), nan_b = is_nan(b);
  if (nan_a || nan_b) {
    // PTX min/max: .NaN propagates a canonical NaN; without it the numeric operand wins.
    if (reduction.nan || (nan_a && nan_b)) return kCanonicalNan;
    return nan_a ? b : a;
  }
  const std::int64_t ka = f32_key(a), kb = f32_key(b);
  return (take_min ? kb < ka : kb > ka) ? b : a;
}

std::optional<std::uint32_t> reduce(const Reduction& reduction,
                                    Span<const std::uint32_t> values) noexcept {
  if (values.empty()) return std::nullopt;
  // A single value goes through the pair rule with itself, so .abs and NaN handling apply.
  std::uint32_t result = reduce_pair(reduction, values[0], values[0]);
  for (size_t i = 1; i < values.size(); ++i) result = reduce_pair(reduction, result, values[i]);
  return result;
}

}  // namespace tmem
