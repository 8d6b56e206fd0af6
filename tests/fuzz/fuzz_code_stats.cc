// libFuzzer target: tmem::code_stats on arbitrary bytes as a cubin (seeds: real cubins, from
// tests/fuzz/corpus/code_stats). Every input is answered with figures in range or a kUsage Error
// with a message, twice the same; ASan and UBSan check that nothing outside the input is read.
// LDTM/STTM are counted from the encoding (Disassembly::kEncoding, the default, which never starts
// a subprocess), so the opcode scan and the e_flags reading are fuzzed with the ELF reader; the
// disassembler is not run (a subprocess per input).
#include <cstddef>
#include <cstdint>
#include <span>

#include "tests/fuzz/fuzz_util.h"
#include "tmem/code_stats.h"

namespace {

// The entries of the seed cubins, and a name no cubin holds.
constexpr const char* kEntries[] = {"local_array", "tmem_roundtrip", "caller",
                                    "helper",      "live_values",    "no_such_kernel"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const char> cubin(reinterpret_cast<const char*>(data), size);
  for (const char* entry : kEntries) {
    auto stats = tmem::code_stats(cubin, entry);
    if (!stats) {
      FUZZ_CHECK(tmemjit_fuzz::is_user_error(stats.error(), {tmem::ErrorCode::kUsage}),
                 tmemjit_fuzz::describe(stats.error()));
      continue;
    }
    FUZZ_CHECK(stats->registers >= 0 && stats->local_bytes >= 0 && stats->instructions >= 0,
               tmem::to_string(*stats));
    // Counted (each a non-NOP instruction) or not, and then why: both or neither.
    const bool counted = stats->ldtm >= 0 && stats->sttm >= 0;
    FUZZ_CHECK(counted ? stats->ldtm + std::int64_t{stats->sttm} <= stats->instructions
                       : stats->ldtm == -1 && stats->sttm == -1,
               tmem::to_string(*stats));
    FUZZ_CHECK(!stats->disassembler.empty(), tmem::to_string(*stats));
    auto again = tmem::code_stats(cubin, entry);
    FUZZ_CHECK(again && *again == *stats, tmem::to_string(*stats));
    // Skipping the count changes nothing else.
    auto skipped = tmem::code_stats(cubin, entry, tmem::Disassembly::kSkip);
    FUZZ_CHECK(skipped && skipped->ldtm == -1 && skipped->sttm == -1 &&
                   skipped->disassembler == "not asked" && skipped->registers == stats->registers &&
                   skipped->local_bytes == stats->local_bytes &&
                   skipped->instructions == stats->instructions,
               tmem::to_string(*stats));
  }
  return 0;
}
