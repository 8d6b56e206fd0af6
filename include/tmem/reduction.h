// tmem::Reduction: the .redOp{.abs}{.NaN}.type of tcgen05.ld.red and its value semantics.
//
// tcgen05.ld.red (PTX ISA 8.8, sm_103a/f and sm_110a/f; docs/tcgen05-rules.md §Syntax, §Targets,
// rule R14) loads like tcgen05.ld and also returns, per thread, the min or max over the values that
// thread loaded.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tmem/export.h"
#include "tmem/span.h"

TMEMJIT_API_BEGIN
namespace tmem {

enum class ReductionOp { kMin, kMax };
enum class ReductionType { kF32, kU32, kS32 };

std::string_view to_string(ReductionOp op) noexcept;      // "min", "max"
std::string_view to_string(ReductionType type) noexcept;  // "f32", "u32", "s32"

struct Reduction {
  ReductionOp op = ReductionOp::kMax;
  ReductionType type = ReductionType::kF32;
  bool abs = false;  // .abs: |x| before reducing (f32 only, rule R14)
  bool nan = false;  // .NaN: a NaN input makes the result the canonical NaN (f32 only, rule R14)

  // The qualifiers in canonical PTX order: "max.abs.NaN.f32", "min.s32".
  std::string to_string() const;
  friend bool operator==(const Reduction& a, const Reduction& b) {
    return a.op == b.op && a.type == b.type && a.abs == b.abs && a.nan == b.nan;
  }
  friend bool operator!=(const Reduction& a, const Reduction& b) { return !(a == b); }
};

// The canonical NaN that min/max.NaN return (PTX ISA §9.7.3 min/max): 0x7FFFFFFF.
inline constexpr std::uint32_t kCanonicalNan = 0x7FFFFFFFu;

// Combines two 32-bit words as the reduction does, with the semantics of the PTX instruction
// min/max{.NaN}.TYPE after abs.f32 where .abs is set (docs/tcgen05-rules.md §Targets: the ISA does
// not spell the ld.red semantics out; by analogy with PTX min/max and redux.sync):
//  * f32 without .NaN: if one operand is NaN the other is returned; both NaN give canonical NaN;
//  * f32 with .NaN: any NaN operand gives canonical NaN;
//  * -0.0 counts as smaller than +0.0; denormals are kept (no .ftz);
//  * .abs clears the sign bit of each input first (|NaN| stays NaN);
//  * u32 / s32 compare unsigned / signed.
std::uint32_t reduce_pair(const Reduction& reduction, std::uint32_t a, std::uint32_t b) noexcept;

// The reduction over `values` (one thread's loaded registers, in register order). A single value
// is returned after .abs (and NaN canonicalization with .NaN); empty input returns nullopt.
std::optional<std::uint32_t> reduce(const Reduction& reduction,
                                    Span<const std::uint32_t> values) noexcept;

}  // namespace tmem
TMEMJIT_API_END
