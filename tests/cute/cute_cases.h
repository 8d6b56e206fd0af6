// The CuTe/libtmemjit SASS agreement cases as an X-macro, shared by the CuTe kernels (nvcc) and
// the test (g++): one entry per kernel, compiled once into one cubin at build time.
//
// TMEMJIT_CUTE_CASE(dir, shape, num, pack, cols, lanes): CuTe's atom
// SM100_TMEM_{LOAD,STORE}_<shape><num>x<pack> copying a TMEM tile of `lanes` (32 or 16) lanes at
// the top of each warp's 32-lane slab by `cols` 32-bit cells: cols / (cells per instruction) column
// blocks and lanes / (atom rows) row blocks per warp. dir is ld or st; pack is empty
// or _16b (then the tile holds 16-bit values in the low half of each cell).
//
// TMEMJIT_CUTE_SEED(name, dir): the seed's examples (tests/common/spec_fixtures.h), whose CuTe
// twins are written by hand in cute_kernels.cu.
#pragma once

// A representative subset for CI: every shape, ld and st, unpacked and packed, x1 to x128, one
// or more column blocks. The full grid (every atom CuTe defines) is cute_full_grid.h.
#define TMEMJIT_CUTE_CI_CASES(X)   \
  X(ld, 32dp32b, 1, , 1, 32)       \
  X(ld, 32dp32b, 8, , 16, 32)      \
  X(st, 32dp32b, 128, , 128, 32)   \
  X(ld, 32dp32b, 4, _16b, 16, 32)  \
  X(st, 32dp32b, 32, _16b, 64, 32) \
  X(ld, 16dp64b, 2, , 8, 32)       \
  X(st, 16dp64b, 1, , 2, 32)       \
  X(ld, 16dp64b, 16, , 32, 32)     \
  X(st, 16dp64b, 4, _16b, 32, 32)  \
  X(ld, 16dp128b, 1, , 8, 32)      \
  X(st, 16dp128b, 8, , 32, 32)     \
  X(ld, 16dp128b, 32, , 128, 32)   \
  X(ld, 16dp128b, 2, _16b, 16, 32) \
  X(st, 16dp256b, 1, , 8, 32)      \
  X(ld, 16dp256b, 4, , 64, 32)     \
  X(st, 16dp256b, 16, , 128, 32)   \
  X(ld, 16dp256b, 2, _16b, 32, 32) \
  X(st, 16dp32b, 4, , 8, 32)       \
  X(ld, 16dp32b, 1, , 4, 32)       \
  X(ld, 16dp32b, 64, , 128, 32)    \
  X(st, 16dp32b, 2, _16b, 16, 32)  \
  X(ld, 16dp32b, 8, _16b, 32, 32)  \
  X(ld, 16dp256b, 32, , 256, 16)

#define TMEMJIT_CUTE_SEEDS(X) \
  X(seed_layout_b, st)        \
  X(seed_layout_b, ld)        \
  X(seed_pack, st)            \
  X(seed_split, st)
