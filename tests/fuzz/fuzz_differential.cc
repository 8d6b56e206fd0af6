// libFuzzer target: the differential test of `check` against the simulator
// (tests/exec/differential.h), for longer than CTest runs it. The input picks the case: 8 bytes of
// generator seed, 8 bytes of case index (little-endian, zero-filled when short) and an optional
// byte that bounds the register words per thread (8..71). Any broken invariant aborts with the
// `tmemjit` command that reproduces it, so libFuzzer keeps the input.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "exec/differential.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::uint64_t seed = 0, index = 0;
  std::memcpy(&seed, data, std::min<std::size_t>(size, 8));
  if (size > 8) std::memcpy(&index, data + 8, std::min<std::size_t>(size - 8, 8));
  const int max_words = size > 16 ? 8 + data[16] % 64 : 24;
  tmemjit_test::DifferentialStats stats;
  const std::string failure = tmemjit_test::differential_case(seed, index, stats, max_words);
  FUZZ_CHECK(failure.empty(), failure);
  return 0;
}
