// Element types of the descriptor language: names, aliases and widths.
#include "tmem/dtype.h"

#include <array>

namespace tmem {
namespace {

constexpr std::array<DType, 7> kAll = {DType::kB32, DType::kF32, DType::kU32, DType::kS32,
                                       DType::kB16, DType::kF16, DType::kBF16};

struct Alias {
  std::string_view name;
  DType dtype;
};
constexpr Alias kAliases[] = {{"float32", DType::kF32},
                              {"float16", DType::kF16},
                              {"bfloat16", DType::kBF16},
                              {"uint32", DType::kU32},
                              {"int32", DType::kS32}};

}  // namespace

Span<const DType> all_dtypes() noexcept { return kAll; }

int bits(DType dtype) noexcept {
  switch (dtype) {
    case DType::kB16:
    case DType::kF16:
    case DType::kBF16:
      return 16;
    default:
      return 32;
  }
}

std::string_view to_string(DType dtype) noexcept {
  switch (dtype) {
    case DType::kB32:
      return "b32";
    case DType::kF32:
      return "f32";
    case DType::kU32:
      return "u32";
    case DType::kS32:
      return "s32";
    case DType::kB16:
      return "b16";
    case DType::kF16:
      return "f16";
    case DType::kBF16:
      return "bf16";
  }
  return "b32";
}

std::optional<DType> parse_dtype(std::string_view text) noexcept {
  for (DType dtype : kAll)
    if (to_string(dtype) == text) return dtype;
  for (const Alias& alias : kAliases)
    if (alias.name == text) return alias.dtype;
  return std::nullopt;
}

}  // namespace tmem
