// libFuzzer target: the spec readers TransferSpec::from_json and TransferSpec::parse (the
// "key: value" text) on the same arbitrary bytes. A value round-trips through to_json / to_string
// with an equal fingerprint; anything else is a user Error (never kInternal).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/fuzz/fuzz_util.h"
#include "tmem/transfer.h"

namespace {

void check_spec(const tmem::Result<tmem::TransferSpec>& spec) {
  if (!spec) {
    FUZZ_CHECK(tmemjit_fuzz::is_user_error(
                   spec.error(),
                   {tmem::ErrorCode::kParse, tmem::ErrorCode::kOpcode, tmem::ErrorCode::kLayout,
                    tmem::ErrorCode::kRule, tmem::ErrorCode::kLimit}),
               tmemjit_fuzz::describe(spec.error()));
    return;
  }
  const std::string text = spec->to_string();
  auto from_text = tmem::TransferSpec::parse(text);
  FUZZ_CHECK(from_text && *from_text == *spec, text);
  auto from_json = tmem::TransferSpec::from_json(spec->to_json());
  FUZZ_CHECK(from_json && *from_json == *spec, spec->to_json());
  FUZZ_CHECK(from_text->fingerprint() == spec->fingerprint(), text);
  FUZZ_CHECK(from_json->hash() == spec->hash(), text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check_spec(tmem::TransferSpec::from_json(text));
  check_spec(tmem::TransferSpec::parse(text));
  return 0;
}
