// A C++17 host (DeepGEMM's PyTorch extension builds with -std=c++17) against the installed library,
// which is C++20: the public headers compile as C++17, and each call below links to a symbol the
// library built as C++20, so the two standards mangle the API alike (tmem::Span, not std::span).
#include <tmem/compile.h>
#include <tmem/layout.h>
#include <tmem/specialize.h>

#include <array>
#include <cstdint>
#include <iostream>
#include <vector>

static_assert(__cplusplus == 201703L, "this consumer checks a C++17 host: build it as C++17");

int main() {
  auto layout = tmem::Layout::parse("S[(64,2,64):(1@TLane,64@TLane,1@TCol)]");
  if (!layout) {
    std::cerr << layout.error().full_text() << "\n";
    return 1;
  }
  std::cout << "layout: " << *layout << "\n";
  // A returned tmem::Span, iterated as a range.
  std::int64_t elements = 1;
  for (const tmem::Iter& iter : layout->shard()) elements *= iter.extent;
  std::cout << "elements: " << elements << "\n";

  // tmem::Span<const std::int64_t> from a braced list, a std::vector and a std::array.
  const std::vector<std::int64_t> shape = {8, 4};
  const std::array<std::int64_t, 2> same_shape = {8, 4};
  auto from_list = tmem::Layout::row_major({8, 4});
  auto from_vector = tmem::Layout::row_major(shape);
  auto from_array = tmem::Layout::row_major(same_shape);
  if (!from_list || !from_vector || !from_array || *from_list != *from_vector ||
      !(*from_vector == *from_array))
    return 1;
  std::cout << "row_major: " << *from_list << "\n";

  // CompileOptions without designated initializers (C++17 has none).
  tmem::CompileOptions options;
  options.target = tmem::Target::kSm90;
  options.opt_level = 2;
  tmem::CompileOptions defaults;
  if (options == defaults) return 1;
  std::cout << "options: " << tmem::to_string(options) << "\n";

  // The written-out comparisons of PtxVersion.
  const tmem::PtxVersion sm110 = tmem::min_ptx_version(tmem::Target::kSm110a);
  if (!(sm110 > tmem::PtxVersion{8, 8}) || !(tmem::PtxVersion{8, 6} <= sm110)) return 1;
  std::cout << "targets:";
  for (tmem::Target target : tmem::all_targets()) std::cout << " " << tmem::to_string(target);
  std::cout << "\n";

  // compile_kernel takes its transfers as a Span: an empty source is refused before any compile.
  auto spec = tmem::TransferSpec::from_fields(
      "tcgen05.ld.sync.aligned.32x32b.x64.b32", "warpgroup",
      "tensor((4,32,64), S[(4,32,64):(32@TLane,1@TLane,1@TCol)], b32)",
      "tensor((4,32,64), S[(4,32,64):(32@tid_in_wg,1@tid_in_wg,1)], b32)");
  if (!spec) return 1;
  tmem::DeviceFunctionOptions function_options;
  function_options.name = "load_acc";
  const std::vector<tmem::NamedTransfer> transfers = {{*spec, function_options}};
  auto kernel = tmem::compile_kernel(tmem::KernelSource{}, transfers, options);
  if (kernel || kernel.error().code() != tmem::ErrorCode::kUsage) return 1;
  std::cout << "compile_kernel: " << tmem::to_string(kernel.error().code()) << "\n";
  // Kernel::from_cubin takes the image as a Span<const char>.
  auto loaded = tmem::Kernel::from_cubin(std::vector<char>{}, "kernel", tmem::Target::kSm100a);
  if (loaded || loaded.error().code() != tmem::ErrorCode::kUsage) return 1;
  std::cout << "from_cubin: " << loaded.error().message() << "\n";
  std::cout << "PASS\n";
  return 0;
}
