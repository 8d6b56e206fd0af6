// The identity of this libtmemjit build, which every cache key and every cache bundle carries.
#pragma once

#include <string>

namespace tmem {

// libtmemjit's GNU build ID as "build-id <hex>" (without one: "file <path> <size> <mtime>"), part
// of every compile_transfer key and of a bundle's identity, so that a rebuilt library (whose kernel
// builders may differ) never reuses an older one's entries. Computed once per process.
const std::string& library_build_id();

}  // namespace tmem
