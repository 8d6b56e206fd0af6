// The standing differential test of `check` against the simulator (issue 17): random valid specs
// built from the native images (tests/exec/spec_generator.h) and one-number mutations of them.
//   * a generated spec follows every rule, so check accepts it (no legal transfer is rejected);
//   * check ok => the per-element reference plans the same, and `run --device sim` passes;
//   * check rejects => the per-element reference rejects with the same code, rule and message,
//     and a rule error names its rule (Error::rule(), the message's first word).
// Seeded and reproducible: TMEMJIT_DIFF_SEED and TMEMJIT_DIFF_CASES change the run; every failure
// prints the exact `tmemjit` command. scripts/fuzz.sh runs the same generator for longer
// (tests/fuzz/fuzz_differential.cc).
#include "exec/differential.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>

namespace {

std::uint64_t env_or(const char* name, std::uint64_t fallback) {
  const char* text = std::getenv(name);
  return text && *text ? std::strtoull(text, nullptr, 10) : fallback;
}

TEST(Differential, CheckAgreesWithTheSimulator) {
  const std::uint64_t seed = env_or("TMEMJIT_DIFF_SEED", 20261201);
  const std::uint64_t cases = env_or("TMEMJIT_DIFF_CASES", 4000);
  const auto start = std::chrono::steady_clock::now();
  tmemjit_test::DifferentialStats stats;
  for (std::uint64_t i = 0; i < cases; ++i) {
    const std::string failure = tmemjit_test::differential_case(seed, i, stats);
    ASSERT_TRUE(failure.empty()) << failure;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "differential: seed %llu, %llu cases in %.1f s: %d generated (all accepted), %d mutations "
      "(%d not a spec, %d accepted and run, %d rejected), %d runs left out the store checks\n",
      static_cast<unsigned long long>(seed), static_cast<unsigned long long>(cases), seconds,
      stats.generated, stats.mutations, stats.unparsed, stats.mutations_accepted,
      stats.mutations_rejected, stats.load_only);
  // The generator must reach both verdicts, or the test proves little.
  EXPECT_GT(stats.mutations_accepted, static_cast<int>(cases / 20));
  EXPECT_GT(stats.mutations_rejected, static_cast<int>(cases / 5));
}

// One case by its index, as a failure message names it: the test above with
// TMEMJIT_DIFF_CASE=<i> (and the same seed) runs case i alone.
TEST(Differential, OneCase) {
  const char* which = std::getenv("TMEMJIT_DIFF_CASE");
  if (!which || !*which) GTEST_SKIP() << "set TMEMJIT_DIFF_CASE=<index> to replay one case";
  tmemjit_test::DifferentialStats stats;
  const std::string failure = tmemjit_test::differential_case(
      env_or("TMEMJIT_DIFF_SEED", 20261201), std::strtoull(which, nullptr, 10), stats);
  EXPECT_TRUE(failure.empty()) << failure;
}

}  // namespace
