// Prints the thread→value layouts of every SM100 TMEM atom CuTe defines (its Copy_Traits), one
// TMEM cell per 16-bit half of each register, for cute_image_test.cc to compare with
// tmem::image. A host program built against the installed nvidia-cutlass wheel's headers.
//
// Output, per atom: "atom <name> <registers per thread>", then for each lane and register
// "<lane> <reg> <row0> <bit0> <row1> <bit1>": the TMEM lane (relative to the access base) and
// column bit of register bits 0-15 and 16-31. Exits 1 when a half's 16 bits are not contiguous
// in one TMEM lane, which the two-cells-per-register comparison assumes.
#include <cstdio>
#include <cute/atom/copy_traits_sm100.hpp>
#include <cute/tensor.hpp>

#include "cute/cute_full_grid.h"

namespace {

using namespace cute;

constexpr int kDpBits = TMEM::DP_b::value;  // one TMEM lane in the bit addresses of ValID

// Copy_Traits map (thread, value bit) to a reference bit; ValID maps a reference bit to a TMEM
// bit address (lane * DP_b + column bit). Loads hold their registers on the Dst side, stores
// on the Src side (copy_unpack recasts that side to uint32 registers in value order).
template <class Op, bool kLoad>
bool print_atom(const char* name) {
  using Traits = Copy_Traits<Op>;
  using RegLayout =
      std::conditional_t<kLoad, typename Traits::DstLayout, typename Traits::SrcLayout>;
  const RegLayout regs{};
  const typename Traits::ValID val_id{};
  const int threads = size<0>(regs);
  const int bits = size<1>(regs);
  bool ok = threads == 32 && bits % 32 == 0;
  std::printf("atom %s %d\n", name, bits / 32);
  for (int lane = 0; lane < threads; ++lane) {
    for (int reg = 0; reg < bits / 32; ++reg) {
      int row[2], bit[2];
      for (int half = 0; half < 2; ++half) {
        for (int k = 0; k < 16; ++k) {
          const int address = val_id(regs(lane, 32 * reg + 16 * half + k));
          if (k == 0) {
            row[half] = address / kDpBits;
            bit[half] = address % kDpBits;
          } else if (address / kDpBits != row[half] || address % kDpBits != bit[half] + k) {
            std::fprintf(stderr, "%s: lane %d register %d bit %d is not contiguous\n", name, lane,
                         reg, 16 * half + k);
            ok = false;
          }
        }
      }
      std::printf("%d %d %d %d %d %d\n", lane, reg, row[0], bit[0], row[1], bit[1]);
    }
  }
  return ok;
}

}  // namespace

#define TMEMJIT_CUTE_IS_LOAD_ld true
#define TMEMJIT_CUTE_IS_LOAD_st false
#define TMEMJIT_CUTE_OP_ld SM100_TMEM_LOAD_
#define TMEMJIT_CUTE_OP_st SM100_TMEM_STORE_
#define TMEMJIT_CUTE_CAT(a, b) a##b
#define TMEMJIT_CUTE_XCAT(a, b) TMEMJIT_CUTE_CAT(a, b)
#define TMEMJIT_CUTE_STR(a) #a
#define TMEMJIT_CUTE_XSTR(a) TMEMJIT_CUTE_STR(a)
#define TMEMJIT_CUTE_PRINT(dir, shape, num, pack, cols, lanes)                    \
  ok &= print_atom<TMEMJIT_CUTE_XCAT(TMEMJIT_CUTE_OP_##dir, shape##num##x##pack), \
                   TMEMJIT_CUTE_IS_LOAD_##dir>(                                   \
      TMEMJIT_CUTE_XSTR(TMEMJIT_CUTE_XCAT(TMEMJIT_CUTE_OP_##dir, shape##num##x##pack)));

int main() {
  bool ok = true;
  TMEMJIT_CUTE_FULL_GRID_CASES(TMEMJIT_CUTE_PRINT)
  return ok ? 0 : 1;
}
