#include <cuda_bf16.h>
#include "local.h"
#define HDR(x) <x.h>
#include HDR(tuple)
#include MARK
// a comment #include "no.h"
const char* s = R"(#include "raw.h")";
