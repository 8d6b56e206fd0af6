// CuTe's side of the SASS agreement (cute_sass_test.cc): one kernel per case of cute_cases.h (or
// cute_full_grid.h), each a make_tmem_copy / partition / copy as a CuTe user writes it. Built
// once into one cubin with nvcc -arch=sm_100a (tests/cute/CMakeLists.txt); CUTLASS's headers come
// from the installed nvidia-cutlass wheel and are never copied here.
#include <cute/atom/copy_traits_sm100.hpp>
#include <cute/tensor.hpp>

#include "cute/cute_cases.h"
#ifdef TMEMJIT_CUTE_FULL_GRID
#include "cute/cute_full_grid.h"
#endif

// Without sm_100a (or sm_100f) CuTe compiles every TMEM atom into a printf and a trap: no LDTM and
// no error, so the comparison would fail for the wrong reason.
#if defined(__CUDA_ARCH__) && !defined(CUTE_ARCH_TCGEN05_TMEM_ENABLED)
#error "cute_kernels.cu needs -arch=sm_100a or sm_100f: CuTe's TMEM atoms are disabled otherwise"
#endif
// A device assert in CuTe's copy_unpack adds branches between the LDTMs.
#ifndef NDEBUG
#error "cute_kernels.cu needs NDEBUG"
#endif

namespace {

using namespace cute;

// `lanes` lanes at the top of each warp's slab by `cols` cells: 32-bit elements, or 16-bit ones
// in the low half of each cell (stride 2 in 16-bit units) for the _16b atoms.
template <class T, int kLanes, int kCols>
__device__ auto tile(uint32_t tmem_base) {
  constexpr int kCellStride = sizeof(T) == 2 ? 2 : 1;
  return make_tensor(make_tmem_ptr<T>(tmem_base),
                     make_layout(make_shape(make_shape(Int<kLanes>{}, _4{}), Int<kCols>{}),
                                 make_stride(make_stride(TMEM::DP<T>{}, Int<32>{} * TMEM::DP<T>{}),
                                             Int<kCellStride>{})));
}

// The loaded values are stored: ptxas deletes an LDTM whose registers are never used.
template <class Op, class Tmem>
__device__ void load(Tmem tmem, uint32_t* out) {
  auto tiled = make_tmem_copy(Op{}, tmem);
  auto thread = tiled.get_slice(threadIdx.x);
  Tensor src = thread.partition_S(tmem);
  Tensor dst = make_tensor<typename Tmem::value_type>(shape(thread.partition_D(tmem)));
  copy(tiled, src, dst);
  Tensor words = recast<uint32_t>(dst);
  for (int i = 0; i < size(words); ++i) out[threadIdx.x * size(words) + i] = words(i);
}

template <class Op, class Tmem>
__device__ void store(Tmem tmem, const uint32_t* in) {
  auto tiled = make_tmem_copy(Op{}, tmem);
  auto thread = tiled.get_slice(threadIdx.x);
  Tensor dst = thread.partition_D(tmem);
  Tensor src = make_tensor<typename Tmem::value_type>(shape(thread.partition_S(tmem)));
  Tensor words = recast<uint32_t>(src);
  for (int i = 0; i < size(words); ++i) words(i) = in[threadIdx.x * size(words) + i];
  copy(tiled, src, dst);
}

}  // namespace

#define TMEMJIT_CUTE_OP_ld SM100_TMEM_LOAD_
#define TMEMJIT_CUTE_OP_st SM100_TMEM_STORE_
#define TMEMJIT_CUTE_CAT(a, b) a##b
#define TMEMJIT_CUTE_XCAT(a, b) TMEMJIT_CUTE_CAT(a, b)
#define TMEMJIT_CUTE_BODY_ld load
#define TMEMJIT_CUTE_BODY_st store
#define TMEMJIT_CUTE_ELEMENT_ uint32_t
#define TMEMJIT_CUTE_ELEMENT__16b half_t

// Kernel cute_<dir>_<shape><num>x<pack>_c<cols>_l<lanes>; the test derives the same name.
#define TMEMJIT_CUTE_KERNEL(dir, shape, num, pack, cols, lanes)                                   \
  extern "C" __global__ void __launch_bounds__(128)                                               \
      cute_##dir##_##shape##num##x##pack##_c##cols##_l##lanes(uint32_t tmem_base, uint32_t* io) { \
    TMEMJIT_CUTE_BODY_##dir<TMEMJIT_CUTE_XCAT(TMEMJIT_CUTE_OP_##dir, shape##num##x##pack)>(       \
        tile<TMEMJIT_CUTE_ELEMENT_##pack, lanes, cols>(tmem_base), io);                           \
  }

#ifdef TMEMJIT_CUTE_FULL_GRID
TMEMJIT_CUTE_FULL_GRID_CASES(TMEMJIT_CUTE_KERNEL)
#else
TMEMJIT_CUTE_CI_CASES(TMEMJIT_CUTE_KERNEL)
#endif

// The seed's examples (tests/common/spec_fixtures.h) written with CuTe.

// Layout B: tmem_datapath_layout("B",64,128), lane r + 64*(c / 64), column c % 64, as a CuTe
// layout; each warp's 32 lanes take 64 columns with one 32x32b.x64.
__device__ auto seed_layout_b_tile(uint32_t tmem_base) {
  using namespace cute;
  return make_tensor(make_tmem_ptr<uint32_t>(tmem_base),
                     make_layout(make_shape(_64{}, make_shape(_64{}, _2{})),
                                 make_stride(TMEM::DP<uint32_t>{},
                                             make_stride(_1{}, Int<64>{} * TMEM::DP<uint32_t>{}))));
}
extern "C" __global__ void __launch_bounds__(128)
    cute_seed_layout_b_st(uint32_t tmem_base, uint32_t* io) {
  store<cute::SM100_TMEM_STORE_32dp32b64x>(seed_layout_b_tile(tmem_base), io);
}
extern "C" __global__ void __launch_bounds__(128)
    cute_seed_layout_b_ld(uint32_t tmem_base, uint32_t* io) {
  load<cute::SM100_TMEM_LOAD_32dp32b64x>(seed_layout_b_tile(tmem_base), io);
}
// Pack: 64 32-bit registers per thread unpacked into the low halves of 128 cells.
extern "C" __global__ void __launch_bounds__(128)
    cute_seed_pack_st(uint32_t tmem_base, uint32_t* io) {
  store<cute::SM100_TMEM_STORE_32dp32b64x_16b>(tile<cute::half_t, 32, 128>(tmem_base), io);
}
// Split: 16x32bx2.x4 on lanes 0-15 of each slab. CuTe's atom fixes the immediate at 4 columns,
// so the first access takes columns 0-3 and the second 4-7; the seed's (16<<16)+8 has no twin.
extern "C" __global__ void __launch_bounds__(128)
    cute_seed_split_st(uint32_t tmem_base, uint32_t* io) {
  store<cute::SM100_TMEM_STORE_16dp32b4x>(tile<uint32_t, 16, 8>(tmem_base), io);
}
