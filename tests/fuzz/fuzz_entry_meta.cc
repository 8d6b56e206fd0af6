// libFuzzer target: the cache entry's metadata reader (runtime/jit/entry_meta.h; issue 39 item 9).
// Any bytes give a KernelEntryMeta or a kIo error naming the damage, never a crash; what parses
// survives a round trip through to_json unchanged.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/jit/entry_meta.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const std::string_view kind : {"kernel", "transfer"}) {
    auto meta = tmem::KernelEntryMeta::parse(text, kind);
    if (!meta) {
      FUZZ_CHECK(meta.error().code() == tmem::ErrorCode::kIo, tmemjit_fuzz::describe(meta.error()));
      continue;
    }
    FUZZ_CHECK(meta->kind == kind, meta->kind);
    const std::string json = meta->to_json();
    auto again = tmem::KernelEntryMeta::parse(json, kind);
    FUZZ_CHECK(again.ok(), json);
    FUZZ_CHECK(again->to_json() == json, json);
  }
  return 0;
}
