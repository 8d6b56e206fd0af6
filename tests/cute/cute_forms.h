// What the CuTe agreement tests share: why CuTe is unavailable (a skip reason), CuTe atom names as
// libtmemjit opcodes, and the libtmemjit spec of a CuTe tile (docs/cute-agreement.md).
#pragma once

#include <optional>
#include <string>

#include "common/spec_fixtures.h"
#include "tmem/opcode.h"

namespace tmemjit_cute {

// Why the CuTe inputs were not built (no CUTLASS headers at configure time), or nullopt.
inline std::optional<std::string> cute_missing() {
#ifdef TMEMJIT_CUTE_MISSING
  return std::string(TMEMJIT_CUTE_MISSING);
#else
  return std::nullopt;
#endif
}

// The opcode of CuTe's atom `dir` (ld, st), `shape` (32dp32b, 16dp64b, 16dp128b, 16dp256b,
// 16dp32b), num and pack (empty or _16b): 16dp32b is 16x32bx2, _16b is pack::16b for loads and
// unpack::16b for stores.
std::string opcode_text(const std::string& dir, const std::string& shape, int num,
                        const std::string& pack);

// The same from an atom's name, "SM100_TMEM_LOAD_16dp256b8x_16b"; empty when it is none.
std::string opcode_text_of_atom(const std::string& atom);

// The warpgroup spec of the transfer CuTe's make_tmem_copy issues for a tile of `lanes` lanes
// (32, or 16 at the top of each warp's slab) by `cols` 32-bit cells: per warp, column blocks of
// one instruction's cells, then row blocks of 16 lanes, with row blocks fastest (CuTe's order).
// The register view is the opcode's native image per instruction (slots need not match CuTe's:
// only the instructions are compared). 16x32bx2: the second access follows the first one's
// columns, immediate = its cells (CuTe's atoms fix the immediate so).
tmemjit_test::SpecText tile_spec(const tmem::Opcode& op, int cols, int lanes);

}  // namespace tmemjit_cute
