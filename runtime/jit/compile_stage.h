// Stage 3 of a compile_kernel miss (docs/architecture.md, "Kernel specialization"): the compiled
// kernel. The front end's PTX goes through the PTX compile unless the front end made the cubin
// itself; the result is the cache's payload with its typed metadata (entry_meta.h).
#pragma once

#include "runtime/cache/payload.h"
#include "runtime/jit/entry_meta.h"
#include "runtime/jit/front_end_stage.h"
#include "runtime/jit/source_stage.h"
#include "tmem/result.h"

namespace tmem {

struct CompiledKernel {
  Payload payload;  // cubin, PTX, and meta.to_json()
  KernelEntryMeta meta;
  bool headers_reused = false;
  double front_end_ms = 0;
  double ptx_compile_ms = 0;
};

Result<CompiledKernel> compile_front_end(const SpecializedSource& source, FrontEnd front);

}  // namespace tmem
