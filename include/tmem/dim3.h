// tmem::Dim3: a grid or block extent without CUDA headers, shared by the launch calls of the cuda
// stage and the public Kernel (tmem/kernel.h).
#pragma once

#include "tmem/export.h"

TMEMJIT_API_BEGIN
namespace tmem {

// A dim3 without CUDA headers.
struct Dim3 {
  unsigned x = 1;
  unsigned y = 1;
  unsigned z = 1;
};

}  // namespace tmem
TMEMJIT_API_END
