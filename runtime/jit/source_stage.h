// Stage 1 of a compile_kernel miss (docs/architecture.md, "Kernel specialization"): the
// specialized source. The transfers are checked and prepared, the user's options checked, and what
// the front end compiles is generated: the <tmemjit/transfers.cuh> of a CUDA source (specialized,
// emulated or generic), the files a keep_dir compile is named after, and the ids of the emulated
// instructions the transfers bring.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "kernels/generic_transfer.h"
#include "kernels/specialized_source.h"
#include "runtime/jit/kernel_request.h"
#include "tmem/result.h"

namespace tmem {

struct SpecializedSource {
  const Request* request = nullptr;     // what was asked (outlives the stages)
  kernels::PreparedTransfers prepared;  // checked plans and their generated code
  bool generic = false;                 // the generic tier's (docs/specialization.md §Tiers)
  std::string transfers_header;         // a CUDA source's <tmemjit/transfers.cuh>
  std::string keep_stem;                // CompileOptions::keep_dir's file names
  // sm_90: the generated transfers' tcgen05 statements, status ids 1..n; the kernel's own
  // follow once the front end lowered them (docs/emulation.md §Blackwell kernels on Hopper).
  std::vector<std::string> instructions;
};

// `generic` empty: the specialized kernel; else the generic tier of those transfers.
Result<SpecializedSource> specialize_source(const Request& request,
                                            std::span<const kernels::GenericTransfer> generic);

}  // namespace tmem
