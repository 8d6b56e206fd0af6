// One case of the differential test of `check` against the simulator, shared by the CTest
// (tests/exec/differential_test.cc) and the fuzz target (tests/fuzz/fuzz_differential.cc).
#pragma once

#include <cstdint>
#include <string>

#include "exec/spec_generator.h"
#include "runtime/check/by_dims.h"
#include "tmem/check.h"
#include "tmem/run.h"

namespace tmemjit_test {

struct DifferentialStats {
  int generated = 0;           // valid specs, checked and run as generated
  int mutations = 0;           // one-number mutations
  int unparsed = 0;            // mutations that are no spec (an opcode, scope or view error)
  int mutations_accepted = 0;  // accepted by check, then run on the simulator
  int mutations_rejected = 0;  // rejected by check (and by the reference)
  int load_only = 0;           // runs that left out roundtrip and store (a broadcast load)
};

// SplitMix64 of (seed, index): each case has its own stream, so one case replays alone.
inline std::uint64_t case_seed(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Runs case `index` of the stream `seed`: "" when the invariants hold, else what broke with the
// `tmemjit` command that shows it. Every third case is a generated spec as is; the others are one
// mutation of one.
inline std::string differential_case(std::uint64_t seed, std::uint64_t index,
                                     DifferentialStats& stats, int max_words = 24) {
  SpecGenerator generator(case_seed(seed, index));
  SpecText text = generator.valid(max_words);
  const bool mutated = index % 3 != 0;
  if (mutated) text = generator.mutate(text);
  const std::uint64_t run_seed = case_seed(seed, index) >> 40;
  const std::string replay = "\n(case " + std::to_string(index) + " of seed " +
                             std::to_string(seed) + ": TMEMJIT_DIFF_SEED=" + std::to_string(seed) +
                             " TMEMJIT_DIFF_CASE=" + std::to_string(index) + ")";
  auto fail = [&](const std::string& what, const std::string& verb) {
    return what + "\n  " +
           tmemjit_command(text, verb,
                           verb == "run" ? "--device sim --seed " + std::to_string(run_seed) : "") +
           replay;
  };
  (mutated ? stats.mutations : stats.generated)++;

  std::optional<std::string_view> tmem2, imm;
  if (text.tmem2) tmem2 = *text.tmem2;
  if (text.imm) imm = *text.imm;
  auto spec =
      tmem::TransferSpec::from_fields(text.op, text.scope, text.tmem, text.regs, tmem2, imm);
  if (!spec) {
    if (!mutated)
      return fail("the generated spec does not parse: " + spec.error().message(), "check");
    ++stats.unparsed;
    return "";
  }
  auto plan = tmem::check(*spec);
  auto reference = tmem::check_each_element(*spec);
  if (plan.ok() != reference.ok())
    return fail(std::string("check ") + (plan.ok() ? "accepts" : "rejects") +
                    " but the per-element reference " + (reference.ok() ? "accepts" : "rejects") +
                    ": " + (plan.ok() ? reference.error().message() : plan.error().message()),
                "check");
  if (!plan) {
    const tmem::Error& error = plan.error();
    if (!mutated) return fail("a legal spec is rejected: " + error.full_text(), "check");
    if (error.code() != tmem::ErrorCode::kRule && error.code() != tmem::ErrorCode::kLimit)
      return fail("check failed with code " + std::string(tmem::to_string(error.code())) + ": " +
                      error.message(),
                  "check");
    if (reference.error().code() != error.code() || reference.error().rule() != error.rule())
      return fail("check and the reference break different rules: " + error.message() + " | " +
                      reference.error().message(),
                  "check");
    auto unhinted = tmem::check_without_hints(*spec);
    if (unhinted.ok() || unhinted.error().message() != reference.error().message())
      return fail("check and the reference say different things:\n  " +
                      (unhinted.ok() ? std::string("ok") : unhinted.error().message()) + "\n  " +
                      reference.error().message(),
                  "check");
    if (error.code() == tmem::ErrorCode::kRule &&
        (error.rule() == tmem::Rule::kNone ||
         error.message().rfind(tmem::to_string(error.rule()), 0) != 0))
      return fail("a rule error that does not name its rule (" +
                      std::string(tmem::to_string(error.rule())) + "): " + error.message(),
                  "check");
    ++stats.mutations_rejected;
    return "";
  }
  if (!(*plan == *reference))
    return fail("check and the per-element reference plan differently:\n" + plan->to_string() +
                    "reference:\n" + reference->to_string(),
                "plan");
  auto report = tmem::run_transfer(*spec, *plan, {tmem::Device::kSim, run_seed});
  if (!report) return fail("run failed: " + report.error().full_text(), "run");
  if (!report->passed())
    return fail("check accepts, the simulator fails:\n" + report->to_string(), "run");
  if (!report->left_out.empty()) ++stats.load_only;
  if (mutated) ++stats.mutations_accepted;
  return "";
}

}  // namespace tmemjit_test
