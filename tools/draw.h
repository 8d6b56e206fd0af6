// Pictures of a checked transfer: the TMEM image (lanes x columns, each cell colored by the warp
// that owns it and labelled thread/slot) beside the register image (threads x slots, labelled with
// the TMEM lane/column), as SVG or terminal text (like CuTe's print_layout).
#pragma once

#include <string>

#include "tmem/plan.h"

namespace tmemjit_cli {

std::string draw_svg(const tmem::Plan& plan);
// Text for small tiles; `max_columns` bounds the TMEM columns printed (the rest is elided with a
// note) so a terminal stays readable.
std::string draw_ascii(const tmem::Plan& plan, int max_columns = 32);

}  // namespace tmemjit_cli
