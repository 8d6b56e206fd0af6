// libFuzzer target: tmem::Layout::parse on arbitrary text. A value round-trips through to_string,
// canonicalizes idempotently to an equivalent layout and maps its first and last index; anything
// else is a parse, layout or limit Error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/fuzz/fuzz_util.h"
#include "tmem/layout.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto layout = tmem::Layout::parse(text);
  if (!layout) {
    FUZZ_CHECK(tmemjit_fuzz::is_user_error(
                   layout.error(),
                   {tmem::ErrorCode::kParse, tmem::ErrorCode::kLayout, tmem::ErrorCode::kLimit}),
               tmemjit_fuzz::describe(layout.error()));
    return 0;
  }
  const std::string canonical = layout->to_string();
  auto again = tmem::Layout::parse(canonical);
  FUZZ_CHECK(again && *again == *layout && again->hash() == layout->hash(), canonical);
  const tmem::Layout simple = layout->canonicalize();
  FUZZ_CHECK(simple.canonicalize() == simple && layout->equivalent(simple), canonical);
  FUZZ_CHECK(simple.size() == layout->size(), canonical);
  for (std::int64_t flat : {std::int64_t{0}, layout->size() - 1}) {
    auto coords = layout->apply(flat);
    auto simple_coords = simple.apply(flat);
    FUZZ_CHECK(coords && simple_coords && coords->size() == layout->replica_offsets().size(),
               canonical);
    FUZZ_CHECK((*coords)[0] == (*simple_coords)[0], canonical);
  }
  FUZZ_CHECK(!layout->apply(layout->size()).ok() && !layout->apply(-1).ok(), canonical);
  return 0;
}
