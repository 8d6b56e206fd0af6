// libFuzzer target: the header stop of compile_kernel's CUDA route (kernels/specialized_source.h
// cuda_unit; issue 39 item 9): the split of a source at its #include <tmemjit/transfers.cuh> into
// the part a precompiled header may hold and the rest. Any source, path and precompile list give
// a unit, never a crash, and no precompiled part ever holds the transfers' include: the layout
// must never enter a precompiled header, or one layout's transfers would serve another.
//
// Input: the path up to the first NUL, then the precompile names up to the second (one per
// line), then the source.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/specialized_source.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto take = [&input]() {
    const size_t end = input.find('\0');
    const std::string_view field = input.substr(0, end);
    input = end == std::string_view::npos ? std::string_view() : input.substr(end + 1);
    return std::string(field);
  };
  const std::string path = take();
  std::vector<std::string> precompile;
  const std::string names = take();
  for (size_t at = 0; at < names.size();) {
    const size_t end = std::min(names.find('\n', at), names.size());
    if (end > at) precompile.push_back(names.substr(at, end - at));
    at = end + 1;
  }
  const std::string source(input);
  const tmem::kernels::CudaUnit unit = tmem::kernels::cuda_unit(source, path, precompile);
  const std::string header(tmem::kernels::kTransfersHeader);
  if (!unit.header_stop) {
    FUZZ_CHECK(unit.prefix.empty(), unit.prefix);
    // The whole source is compiled after the stop, or as it is when nothing is precompiled.
    FUZZ_CHECK(unit.text.ends_with(source), unit.text);
    if (!unit.prefix_header_name.empty())
      FUZZ_CHECK(unit.prefix_header == tmem::kernels::include_lines(precompile),
                 unit.prefix_header);
    return 0;
  }
  // The prefix is the source up to the line of the transfers' include, which starts the rest.
  FUZZ_CHECK(source.starts_with(unit.prefix), unit.prefix);
  const std::string_view rest = std::string_view(source).substr(unit.prefix.size());
  const std::string_view first_line = rest.substr(0, rest.find('\n'));
  FUZZ_CHECK(first_line.find(header) != std::string_view::npos, std::string(first_line));
  // The rest follows the stop with its line number, so diagnostics name the user's lines.
  size_t line = 1;
  for (const char c : unit.prefix) line += c == '\n' ? 1 : 0;
  FUZZ_CHECK(unit.text.ends_with("#line " + std::to_string(line) + "\n" + std::string(rest)),
             unit.text);
  // What a precompiled header holds is the named headers and the prefix: never the include.
  if (!unit.prefix_header_name.empty()) {
    // The prefix itself, or (where it cannot stand alone) only the named headers.
    FUZZ_CHECK(unit.prefix_header.ends_with(unit.prefix) ||
                   unit.prefix_header == tmem::kernels::include_lines(precompile),
               unit.prefix_header);
    FUZZ_CHECK(unit.text.starts_with("#include \"" + unit.prefix_header_name + "\"\n;\n"),
               unit.text);
  }
  return 0;
}
