// libFuzzer target: the include scanner's lexer and computed-include expansion
// (runtime/compile/include_closure.h; issue 39 item 9) on arbitrary source text and -D macros: a
// closure or an error naming a file, never a crash or a hang, and what is listed is sorted. No
// directory is searched: only absolute names reach files.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/compile/include_closure.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  // Up to the first NUL: the source; after it, one -D value per line.
  const size_t nul = bytes.find('\0');
  tmem::ClosureQuery query;
  query.source = bytes.substr(0, nul);
  query.source_path = "/nonexistent-tmemjit-fuzz/kernel.cu";
  if (nul != std::string_view::npos) {
    std::string_view rest = bytes.substr(nul + 1);
    while (!rest.empty()) {
      const size_t end = rest.find('\n');
      query.defines.emplace_back(rest.substr(0, end));
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    }
  }
  auto closure = tmem::scan_include_closure(query);
  if (!closure) return 0;
  FUZZ_CHECK(std::is_sorted(closure->files.begin(), closure->files.end()), "files");
  FUZZ_CHECK(std::is_sorted(closure->missing.begin(), closure->missing.end()), "missing");
  FUZZ_CHECK(std::is_sorted(closure->unresolved.begin(), closure->unresolved.end()), "unresolved");
  return 0;
}
