// The tcgen05 targets and their PTX ISA versions (docs/tcgen05-rules.md §Targets, observed with
// ptxas 13.0).
#include "tmem/target.h"

#include <array>

namespace tmem {
namespace {

struct TargetRow {
  Target target;
  std::string_view name;
  PtxVersion min_version;
  int compute_capability;
  bool family;
};

// sm_100a needs .version 8.6; family targets and sm_103a arrived in PTX 8.8; sm_110a/f in 9.0.
// sm_90 (PTX ISA 7.8) is the emulation target, kept out of kAllTargets.
constexpr std::array<TargetRow, 7> kTargets = {{
    {Target::kSm100a, "sm_100a", {8, 6}, 100, false},
    {Target::kSm100f, "sm_100f", {8, 8}, 100, true},
    {Target::kSm103a, "sm_103a", {8, 8}, 103, false},
    {Target::kSm103f, "sm_103f", {8, 8}, 103, true},
    {Target::kSm110a, "sm_110a", {9, 0}, 110, false},
    {Target::kSm110f, "sm_110f", {9, 0}, 110, true},
    {Target::kSm90, "sm_90", {7, 8}, 90, false},
}};

constexpr std::array<Target, 6> kAllTargets = {Target::kSm100a, Target::kSm100f, Target::kSm103a,
                                               Target::kSm103f, Target::kSm110a, Target::kSm110f};

const TargetRow& row(Target target) { return kTargets[static_cast<size_t>(target)]; }

}  // namespace

std::string PtxVersion::to_string() const {
  return std::to_string(major) + "." + std::to_string(minor);
}

Span<const Target> all_targets() noexcept { return kAllTargets; }

std::string_view to_string(Target target) noexcept { return row(target).name; }

Result<Target> parse_target(std::string_view text) {
  for (Target target : kAllTargets)
    if (row(target).name == text) return target;
  // The emulation target: every reader of a target (CLI, Python, C++) takes the same names.
  if (text == row(Target::kSm90).name) return Target::kSm90;
  std::string message = "unknown target '" + std::string(text) + "'";
  if (text == "sm_101a" || text == "sm_101f") message += " (PTX ISA 9.0 renamed sm_101 to sm_110)";
  if (text == "sm_90a") message += " (the emulation target is sm_90)";
  message +=
      "; targets: sm_100a, sm_100f, sm_103a, sm_103f, sm_110a, sm_110f (tcgen05), sm_90 "
      "(emulation)";
  return Error(ErrorCode::kTarget, message).set_rule(Rule::kTargetAndVersion);
}

PtxVersion min_ptx_version(Target target) noexcept { return row(target).min_version; }
int compute_capability(Target target) noexcept { return row(target).compute_capability; }
bool is_family_target(Target target) noexcept { return row(target).family; }

bool runs_on(Target target, int cc) noexcept {
  const TargetRow& entry = row(target);
  if (target == Target::kSm90) return cc >= entry.compute_capability;
  if (!entry.family) return cc == entry.compute_capability;
  // A family target runs on later members of the same major family (sm_100f on 10.0 and 10.3).
  return cc / 10 == entry.compute_capability / 10 && cc >= entry.compute_capability;
}

}  // namespace tmem
