// libFuzzer target: tmem::View::parse (the descriptor parser: tensor, tmem_datapath_layout,
// wg_local_layout, rearrange, view, permute, indexing) on arbitrary text. A value round-trips
// through to_string and maps its first and last coordinates inside the base tensor; anything else
// is a parse, layout or limit Error.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tests/fuzz/fuzz_util.h"
#include "tmem/view.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto view = tmem::View::parse(text);
  if (!view) {
    FUZZ_CHECK(tmemjit_fuzz::is_user_error(
                   view.error(),
                   {tmem::ErrorCode::kParse, tmem::ErrorCode::kLayout, tmem::ErrorCode::kLimit}),
               tmemjit_fuzz::describe(view.error()));
    return 0;
  }
  const std::string canonical = view->to_string();
  auto again = tmem::View::parse(canonical);
  FUZZ_CHECK(again && *again == *view && again->hash() == view->hash(), canonical);
  std::int64_t size_from_shape = 1;
  for (std::int64_t extent : view->shape()) {
    FUZZ_CHECK(extent >= 1, canonical);
    size_from_shape *= extent;
  }
  FUZZ_CHECK(size_from_shape == view->size() && view->size() <= view->base().size(), canonical);
  // The first and the last element: the base index is inside the base tensor, and apply() agrees.
  std::vector<std::int64_t> first(view->shape().size(), 0), last;
  for (std::int64_t extent : view->shape()) last.push_back(extent - 1);
  for (const auto& coord : {first, last}) {
    auto coords = view->apply(coord);
    FUZZ_CHECK(coords && !coords->empty(), canonical);
  }
  for (std::int64_t flat : {std::int64_t{0}, view->size() - 1}) {
    const std::int64_t base = view->base_index(flat);
    FUZZ_CHECK(base >= 0 && base < view->base().size(), canonical);
  }
  FUZZ_CHECK(!view->apply(std::vector<std::int64_t>(last.size(), -1)).ok(), canonical);
  return 0;
}
