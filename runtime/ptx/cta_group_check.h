// tmem::ptx::check_cta_groups: refuses PTX text (a user's module, or one with the lifecycle
// helpers spliced in) whose kernel mixes .cta_group::1 and .cta_group::2 (docs/tcgen05-rules.md
// §Lifecycle, R27).
#pragma once

#include <string_view>

#include "tmem/result.h"

namespace tmem::ptx {

// Every tcgen05 instruction of a kernel uses one .cta_group (PTX ISA §9.7.16.7.1). ptxas checks
// it per function ("uses single CTA(.cta_group::1) and CTA pair granularity(.cta_group::2)"); this
// check counts the .funcs each .entry calls too, so a kernel with ::1 that calls a ::2 helper is
// refused as well. kRule with Rule::kOneCtaGroupPerKernel naming the kernel and both instructions
// (function and line); ok for text it cannot read as functions (the compiler reports those).
Status check_cta_groups(std::string_view ptx_text);

}  // namespace tmem::ptx
