// tmem::check: decides whether a TransferSpec moves every element where its views say, and plans
// it.
#pragma once

#include "tmem/export.h"
#include "tmem/plan.h"
#include "tmem/result.h"
#include "tmem/transfer.h"

TMEMJIT_API_BEGIN
namespace tmem {

// Applies every rule of docs/transfer-semantics.md §Rules (docs/tcgen05-rules.md §Addresses,
// §Lifecycle, §Sync). On failure the Error (ErrorCode::kRule) names the rule, the first offending
// coordinate of the user's view, the expected and actual lane/column/thread/slot, prints the
// operand in the details and, where another legal opcode fits the same views, says which.
Result<Plan> check(const TransferSpec& spec);

}  // namespace tmem
TMEMJIT_API_END
