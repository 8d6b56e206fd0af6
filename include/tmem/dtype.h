// tmem::DType: the element types a TMEM transfer descriptor can name (docs/descriptor-language.md
// §Units).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "tmem/export.h"
#include "tmem/span.h"

TMEMJIT_API_BEGIN
namespace tmem {

enum class DType : std::uint8_t { kB32, kF32, kU32, kS32, kB16, kF16, kBF16 };

// Every dtype, in the order of the grammar: b32 f32 u32 s32 b16 f16 bf16.
Span<const DType> all_dtypes() noexcept;

// Bits per element: 32 or 16.
int bits(DType dtype) noexcept;

// Layout units per 32-bit TMEM cell or register: 1 for 32-bit dtypes, 2 for 16-bit ones. The TCol
// and m values of a layout count elements of the dtype; for 16-bit dtypes unit u is the low
// (u even) or high (u odd) half of 32-bit cell u / 2 (docs/descriptor-language.md §Units).
inline int units_per_word(DType dtype) noexcept { return 32 / bits(dtype); }

// Canonical spelling: "b32", "f32", "u32", "s32", "b16", "f16", "bf16".
std::string_view to_string(DType dtype) noexcept;

// Accepts the canonical spellings and the aliases float32, float16, bfloat16, uint32, int32.
std::optional<DType> parse_dtype(std::string_view text) noexcept;

}  // namespace tmem
TMEMJIT_API_END
