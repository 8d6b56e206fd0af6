// libFuzzer target: tmem::Opcode::parse on arbitrary text. A value round-trips through its
// canonical spelling and Opcode::make; anything else is an opcode, parse or limit Error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/fuzz/fuzz_util.h"
#include "tmem/opcode.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto op = tmem::Opcode::parse(text);
  if (!op) {
    FUZZ_CHECK(
        tmemjit_fuzz::is_user_error(op.error(), {tmem::ErrorCode::kOpcode, tmem::ErrorCode::kParse,
                                                 tmem::ErrorCode::kLimit}),
        tmemjit_fuzz::describe(op.error()));
    return 0;
  }
  const std::string canonical = op->to_string();
  auto again = tmem::Opcode::parse(canonical);
  FUZZ_CHECK(again && *again == *op && again->hash() == op->hash(), canonical);
  auto made = tmem::Opcode::make(op->direction(), op->shape(), op->num(), op->packed());
  FUZZ_CHECK(made && *made == *op, canonical);
  FUZZ_CHECK(op->regs_per_thread() >= 1 && op->regs_per_thread() <= tmem::kMaxRegsPerThread,
             canonical);
  return 0;
}
