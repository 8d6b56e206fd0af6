// libFuzzer target: tmem/text.h on arbitrary bytes (issue 30, items 4, 9, 12). valid_utf8 gives
// text it leaves unchanged (valid), quote_excerpt a bounded valid quote, and any text that
// check_json_depth accepts parses and dumps with bounded recursion.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "tests/fuzz/fuzz_util.h"
#include "tmem/text.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string valid = tmem::valid_utf8(text);
  FUZZ_CHECK(tmem::valid_utf8(valid) == valid, valid);
  FUZZ_CHECK(valid.size() >= text.size() && valid.size() <= 4 * text.size(), valid);
  const std::string quoted = tmem::quote_excerpt(text, 16);
  FUZZ_CHECK(tmem::valid_utf8(quoted) == quoted, quoted);
  FUZZ_CHECK(quoted.size() <= 4 * 16 + 32, quoted);
  const tmem::Status depth = tmem::check_json_depth(text, "input");
  if (!depth) {
    FUZZ_CHECK(tmemjit_fuzz::is_user_error(depth.error(), {tmem::ErrorCode::kParse}),
               tmemjit_fuzz::describe(depth.error()));
    return 0;
  }
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_discarded())
    (void)json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return 0;
}
