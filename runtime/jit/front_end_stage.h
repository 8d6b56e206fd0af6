// Stage 2 of a compile_kernel miss (docs/architecture.md, "Kernel specialization"): the front
// end. A CUDA source is one NVRTC (or nvcc) compile of the source with its transfers inline, the
// parse of its headers kept in precompiled headers; a PTX source has the generated functions
// spliced in. For sm_90 the kernel's own tcgen05 statements are lowered here too. The entry is
// resolved and the call checks made.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "runtime/jit/source_stage.h"
#include "tmem/result.h"

namespace tmem {

struct FrontEnd {
  std::string ptx;          // the module (lowered for sm_90)
  std::vector<char> cubin;  // when the front end compiled to the cubin itself; else empty
  std::string entry;        // the kernel's lowered name
  std::string log;
  std::string headers;  // CompileReport::headers
  bool headers_reused = false;
  std::vector<std::string> warnings;
  double ms = 0;  // the CUDA front end's compile
  // A PTX source: where the generated functions sit, to map ptxas's lines back to the user's.
  size_t inserted_after = 0, inserted_lines = 0;
  // sm_90: every emulated statement, the transfers' then the kernel's own (status ids 1..n).
  std::vector<std::string> instructions;
};

Result<FrontEnd> run_front_end(const SpecializedSource& source);

}  // namespace tmem
