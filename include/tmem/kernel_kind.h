// Which harness kernel of a transfer to build, compile, cache, run or simulate (docs/design.md
// §Codegen).
#pragma once

#include <string_view>

#include "tmem/export.h"
#include "tmem/result.h"
#include "tmem/span.h"

TMEMJIT_API_BEGIN
namespace tmem {

// Every kind holds the whole tcgen05 lifecycle of docs/tcgen05-rules.md §Sync (alloc ... dealloc,
// relinquish).
//   roundtrip  In[thread][slot] -> registers -> st -> wait::st -> ld -> wait::ld ->
//   Out[thread][slot] store      In -> st (the plan) -> wait::st, then TMEM -> Raw[lane][column]
//   through 32x32b load       Raw -> TMEM through 32x32b, then ld (the plan) -> wait::ld -> Out
//   fill       Raw -> TMEM -> Raw2 through 32x32b only (checks the raw path itself)
// `store` and `load` check a plan against the independent 32x32b identity image.
enum class KernelKind { kRoundtrip, kStore, kLoad, kFill };

Span<const KernelKind> all_kernel_kinds() noexcept;
std::string_view to_string(KernelKind kind) noexcept;  // "roundtrip", "store", "load", "fill"
Result<KernelKind> parse_kernel_kind(std::string_view text);  // names the allowed set on failure

}  // namespace tmem
TMEMJIT_API_END
