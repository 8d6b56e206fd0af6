// kernels/emu/umma_decode.cuh against NVIDIA CuTe (CUTLASS 4.2, the nvidia-cutlass wheel): the
// shared-memory address of every operand element through the descriptor CuTe's make_umma_desc
// encodes, for each swizzle mode, major-ness and element size; the instruction descriptor against
// make_instr_desc; D's TMEM place against UMMA::tmem_frg; the element formats against CUTLASS's
// numeric types. Host only (CuTe's layout code compiles with the host compiler); label `cute`.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <type_traits>

// CuTe converts a shared-memory pointer to its 32-bit address with __cvta_generic_to_shared, a
// device intrinsic. On the host the tests use fake pointers whose value is the shared address.
inline std::size_t __cvta_generic_to_shared(const void* pointer) {
  return reinterpret_cast<std::size_t>(pointer);
}
#define CUTE_CVTA_GENERIC_TO_SHARED_ACTIVATED 1

#include <cutlass/float8.h>
#include <cutlass/float_subbyte.h>

#include <cute/atom/mma_traits_sm100.hpp>
#include <cute/tensor.hpp>

#include "kernels/emu/umma_decode.cuh"

namespace {

namespace um = tmemjit::umma;
using namespace cute;

constexpr std::uintptr_t kTileBase = 0x2000;  // 1024-byte aligned, as the swizzle patterns need

template <class T>
constexpr um::u32 element_type_of() {
  if constexpr (std::is_same_v<T, half_t>) return um::kF16;
  if constexpr (std::is_same_v<T, tfloat32_t>) return um::kTF32;
  return um::kU8;
}

// Every element of every MMA block of one smem tile: the address CuTe's layout gives, and the
// address the decoder computes from CuTe's descriptor for that block. Returns the count compared;
// reports the first mismatches.
template <UMMA::Major kMajor, class T, class Atom, class TileShape, class Order>
long compare_tile(const Atom& atom, const TileShape& shape, const Order& order,
                  const std::string& name) {
  auto layout = UMMA::tile_to_mma_shape(atom, shape, order);
  Tensor smem = make_tensor(make_smem_ptr(reinterpret_cast<T*>(kTileBase)), layout);
  Tensor descriptors = make_tensor<UMMA::smem_desc<kMajor>>(smem);  // (1, M blocks, K blocks)
  const bool mn_major = kMajor == UMMA::Major::MN;
  long compared = 0;
  int mismatches = 0;
  for (int mb = 0; mb < size<1>(smem); ++mb) {
    for (int kb = 0; kb < size<2>(smem); ++kb) {
      const UMMA::SmemDescriptor cute_desc = descriptors(0, mb, kb);
      const um::SmemDescriptor desc = um::decode_smem_descriptor(cute_desc.desc_);
      EXPECT_EQ(desc.version, 1u) << name;
      EXPECT_EQ(desc.swizzle, static_cast<um::u32>(cute_desc.layout_type_)) << name;
      for (int m = 0; m < size<0, 0>(smem); ++m) {
        for (int k = 0; k < size<0, 1>(smem); ++k) {
          const auto expected = reinterpret_cast<std::uintptr_t>(&smem(make_coord(m, k), mb, kb));
          const um::u32 offset =
              um::element_offset(desc, mn_major, element_type_of<T>(), static_cast<um::u32>(m),
                                 static_cast<um::u32>(k));
          ++compared;
          if (desc.start + offset != expected && ++mismatches <= 5)
            ADD_FAILURE() << name << ": block (" << mb << "," << kb << ") element (" << m << ","
                          << k << "): CuTe 0x" << std::hex << expected << ", decoder 0x"
                          << desc.start + offset << ", descriptor 0x" << cute_desc.desc_;
        }
      }
    }
  }
  return compared;
}

// The tile shapes: one MMA block is (MMA_M, MMA_K) with MMA_K = 32 bytes of K; several blocks
// along M and K so that advancing the descriptor inside and across swizzle atoms is covered.
template <UMMA::Major kMajor, class T, class Atom>
long compare_atom(const Atom& atom, const std::string& name) {
  constexpr int kMmaK = 32 / static_cast<int>(sizeof_bits_v<T> / 8);
  long total = 0;
  auto block_m64 = make_shape(make_shape(Int<64>{}, Int<kMmaK>{}), Int<2>{}, Int<8>{});
  auto block_m128 = make_shape(make_shape(Int<128>{}, Int<kMmaK>{}), Int<2>{}, Int<4>{});
  auto block_n256 = make_shape(make_shape(Int<256>{}, Int<kMmaK>{}), Int<1>{}, Int<4>{});
  total += compare_tile<kMajor, T>(atom, block_m64, GenColMajor{}, name + " 64x(col)");
  total += compare_tile<kMajor, T>(atom, block_m128, GenColMajor{}, name + " 128x(col)");
  total += compare_tile<kMajor, T>(atom, block_m128, GenRowMajor{}, name + " 128x(row)");
  total += compare_tile<kMajor, T>(atom, block_n256, GenColMajor{}, name + " 256x(col)");
  return total;
}

template <class T>
long compare_all_swizzles(const std::string& type) {
  long total = 0;
  total += compare_atom<UMMA::Major::K, T>(UMMA::Layout_K_INTER_Atom<T>{}, type + " K none");
  total += compare_atom<UMMA::Major::K, T>(UMMA::Layout_K_SW32_Atom<T>{}, type + " K sw32");
  total += compare_atom<UMMA::Major::K, T>(UMMA::Layout_K_SW64_Atom<T>{}, type + " K sw64");
  total += compare_atom<UMMA::Major::K, T>(UMMA::Layout_K_SW128_Atom<T>{}, type + " K sw128");
  total += compare_atom<UMMA::Major::MN, T>(UMMA::Layout_MN_INTER_Atom<T>{}, type + " MN none");
  total += compare_atom<UMMA::Major::MN, T>(UMMA::Layout_MN_SW32_Atom<T>{}, type + " MN sw32");
  total += compare_atom<UMMA::Major::MN, T>(UMMA::Layout_MN_SW64_Atom<T>{}, type + " MN sw64");
  total += compare_atom<UMMA::Major::MN, T>(UMMA::Layout_MN_SW128_Atom<T>{}, type + " MN sw128");
  return total;
}

TEST(UmmaDescriptorCute, SixteenBitElementAddressesMatchCute) {
  EXPECT_GT(compare_all_swizzles<half_t>("f16"), 0);
}

TEST(UmmaDescriptorCute, EightBitElementAddressesMatchCute) {
  EXPECT_GT(compare_all_swizzles<uint8_t>("u8"), 0);
}

TEST(UmmaDescriptorCute, ThirtyTwoBitElementAddressesMatchCute) {
  long total = compare_all_swizzles<tfloat32_t>("tf32");
  // The MN-major mode of .kind::tf32 (Table 54): 128B swizzle with 32-byte atoms.
  total += compare_atom<UMMA::Major::MN, tfloat32_t>(UMMA::Layout_MN_SW128_32B_Atom<tfloat32_t>{},
                                                     "tf32 MN sw128_32b");
  EXPECT_GT(total, 0);
}

TEST(UmmaDescriptorCute, HalfPrecisionInSw128_32bAtomsMatchesCute) {
  // The mode's layout arithmetic for 16-bit elements too (the MMA refuses it; tcgen05.cp does not
  // look at element types).
  const long total = compare_atom<UMMA::Major::MN, half_t>(UMMA::Layout_MN_SW128_32B_Atom<half_t>{},
                                                           "f16 MN sw128_32b");
  EXPECT_GT(total, 0);
}

// The fields as the ISA's Table 40 places them, independently of CuTe's bit-field struct.
TEST(UmmaDescriptor, DecodesEveryField) {
  const std::uint64_t d = (0x1234ull >> 4) | (0x0560ull >> 4 << 16) | (0x3FF0ull >> 4 << 32) |
                          (1ull << 46) | (5ull << 49) | (1ull << 52) | (4ull << 61);
  const um::SmemDescriptor s = um::decode_smem_descriptor(d);
  EXPECT_EQ(s.start, 0x1230u);
  EXPECT_EQ(s.lbo, 0x560u);
  EXPECT_EQ(s.sbo, 0x3FF0u);
  EXPECT_EQ(s.version, 1u);
  EXPECT_EQ(s.base_offset, 5u);
  EXPECT_EQ(s.lbo_mode, 1u);
  EXPECT_EQ(s.swizzle, static_cast<um::u32>(um::kSwizzle64B));
  for (um::u32 mode = 0; mode < 8; ++mode)
    EXPECT_EQ(um::swizzle_valid(mode),
              mode == 0 || mode == 1 || mode == 2 || mode == 4 || mode == 6);
}

// A nonzero base offset moves the swizzle pattern's start: a tile at 1024*j + 128*b with base
// offset b addresses like a 1024-aligned tile with base offset 0.
TEST(UmmaDescriptor, BaseOffsetShiftsThePatternStart) {
  for (um::u32 b = 0; b < 8; ++b) {
    um::SmemDescriptor aligned{0x4000, 16, 1024, 1, 0, 0, um::kSwizzle128B};
    um::SmemDescriptor shifted = aligned;
    shifted.start = 0x4000 + 128 * b;
    shifted.base_offset = b;
    for (um::u32 row = 0; row < 32; ++row)
      for (um::u32 unit = 0; unit < 8; ++unit)
        EXPECT_EQ(um::k_major_unit_address(shifted, row, unit) - shifted.start,
                  um::k_major_unit_address(aligned, row, unit) - aligned.start);
  }
}

// The branch-free map the emulation's loops use gives the same addresses.
TEST(UmmaDescriptor, UnitMapMatchesTheLayoutFunctions) {
  std::mt19937 random(11);
  for (um::u32 swizzle : {0u, 1u, 2u, 4u, 6u}) {
    for (int i = 0; i < 200; ++i) {
      const um::SmemDescriptor d{(static_cast<um::u32>(random()) % 1024u) * 16u,
                                 (static_cast<um::u32>(random()) % 256u) * 16u,
                                 (static_cast<um::u32>(random()) % 256u) * 16u,
                                 1,
                                 static_cast<um::u32>(random()) % 8u,
                                 0,
                                 swizzle};
      const um::UnitMap k_map = um::make_unit_map(d, false);
      const um::UnitMap mn_map = um::make_unit_map(d, true);
      for (um::u32 r = 0; r < 256; r += 7) {
        for (um::u32 q = 0; q < 32; ++q) {
          ASSERT_EQ(um::unit_address(k_map, r, q % 8), um::k_major_unit_address(d, r, q % 8));
          ASSERT_EQ(um::unit_address(mn_map, r, q), um::mn_major_unit_address(d, r, q));
        }
      }
    }
  }
}

// 6-bit and 4-bit elements of .kind::f8f6f4: 16 per 16-byte unit, LSB first (.b6x16_p32,
// .b4x16_p64), units placed as 8-bit elements.
TEST(UmmaDescriptor, SubByteElementsSixteenPerUnit) {
  const um::SmemDescriptor d{0x1000, 0, 1024, 1, 0, 0, um::kSwizzle128B};
  for (um::u32 type : {um::kE2M3, um::kE3M2, um::kE2M1}) {
    for (um::u32 row = 0; row < 16; ++row) {
      for (um::u32 k = 0; k < 32; ++k) {
        const um::ElementLocation sub = um::element_location(d, false, type, row, k);
        const um::ElementLocation byte = um::element_location(d, false, um::kE4M3, row, k);
        EXPECT_EQ(sub.unit_address, byte.unit_address);
        EXPECT_EQ(sub.bit, (k % 16) * um::element_bits(type));
      }
    }
  }
  EXPECT_EQ(um::unit_elements(um::kE2M1), 16u);
  EXPECT_EQ(um::unit_elements(um::kF16), 8u);
  EXPECT_EQ(um::unit_elements(um::kTF32), 4u);
}

// ---------------------------------------------------------------------------------------------
// Instruction descriptor: CuTe's make_instr_desc encodes, the decoder reads it back.

template <class A, class B, class C, int M, int N, UMMA::Major kAMajor, UMMA::Major kBMajor,
          UMMA::ScaleIn kANeg = UMMA::ScaleIn::One, UMMA::ScaleIn kBNeg = UMMA::ScaleIn::One,
          UMMA::Saturate kSat = UMMA::Saturate::False>
void expect_instr_desc(um::u32 kind, um::u32 a_type, um::u32 b_type, um::u32 d_format) {
  const auto cute_desc =
      UMMA::make_instr_desc<A, B, C, M, N, kAMajor, kBMajor, kANeg, kBNeg, kSat>();
  const um::InstrDescriptor i = um::decode_instr_descriptor(cute_desc.desc_);
  EXPECT_EQ(i.m, static_cast<um::u32>(M));
  EXPECT_EQ(i.n, static_cast<um::u32>(N));
  EXPECT_EQ(um::operand_type(kind, i.a_format), a_type);
  EXPECT_EQ(um::operand_type(kind, i.b_format), b_type);
  EXPECT_EQ(i.d_format, d_format);
  EXPECT_EQ(i.a_mn_major, kAMajor == UMMA::Major::MN ? 1u : 0u);
  EXPECT_EQ(i.b_mn_major, kBMajor == UMMA::Major::MN ? 1u : 0u);
  EXPECT_EQ(i.negate_a, kANeg == UMMA::ScaleIn::Neg ? 1u : 0u);
  EXPECT_EQ(i.negate_b, kBNeg == UMMA::ScaleIn::Neg ? 1u : 0u);
  EXPECT_EQ(i.saturate, kSat == UMMA::Saturate::True ? 1u : 0u);
  EXPECT_EQ(i.sparse, 0u);
  EXPECT_EQ(i.reserved, 0u);
}

TEST(UmmaInstrDescriptorCute, DecodesCuteEncodings) {
  expect_instr_desc<half_t, half_t, float, 128, 256, UMMA::Major::K, UMMA::Major::K>(
      um::kKindF16, um::kF16, um::kF16, um::kDF32);
  expect_instr_desc<bfloat16_t, bfloat16_t, float, 64, 8, UMMA::Major::MN, UMMA::Major::K,
                    UMMA::ScaleIn::Neg>(um::kKindF16, um::kBF16, um::kBF16, um::kDF32);
  expect_instr_desc<half_t, half_t, half_t, 256, 240, UMMA::Major::K, UMMA::Major::MN,
                    UMMA::ScaleIn::One, UMMA::ScaleIn::Neg>(um::kKindF16, um::kF16, um::kF16,
                                                            um::kDF16);
  expect_instr_desc<tfloat32_t, tfloat32_t, float, 128, 64, UMMA::Major::MN, UMMA::Major::MN>(
      um::kKindTf32, um::kTF32, um::kTF32, um::kDF32);
  expect_instr_desc<float_e4m3_t, float_e5m2_t, float, 128, 128, UMMA::Major::K, UMMA::Major::K>(
      um::kKindF8f6f4, um::kE4M3, um::kE5M2, um::kDF32);
  expect_instr_desc<cutlass::detail::float_e2m3_unpacksmem_t,
                    cutlass::detail::float_e3m2_unpacksmem_t, half_t, 64, 16, UMMA::Major::K,
                    UMMA::Major::K>(um::kKindF8f6f4, um::kE2M3, um::kE3M2, um::kDF16);
  expect_instr_desc<cutlass::detail::float_e2m1_unpacksmem_t, float_e4m3_t, float, 128, 8,
                    UMMA::Major::K, UMMA::Major::K>(um::kKindF8f6f4, um::kE2M1, um::kE4M3,
                                                    um::kDF32);
  expect_instr_desc<int8_t, uint8_t, int32_t, 128, 48, UMMA::Major::K, UMMA::Major::MN,
                    UMMA::ScaleIn::One, UMMA::ScaleIn::One, UMMA::Saturate::True>(
      um::kKindI8, um::kS8, um::kU8, um::kDS32);
}

TEST(UmmaInstrDescriptor, ChecksShapesAndTypesPerTable39) {
  const um::SmemDescriptor k_major{0x400, 16, 1024, 1, 0, 0, um::kSwizzle128B};
  auto idesc = [](um::u32 d, um::u32 a, um::u32 b, um::u32 m, um::u32 n) {
    return um::decode_instr_descriptor((d << 4) | (a << 7) | (b << 10) | ((n >> 3) << 17) |
                                       ((m >> 4) << 24));
  };
  EXPECT_EQ(um::check_mma(um::kKindF16, 1, idesc(1, 0, 0, 128, 256), false, k_major, k_major),
            um::kMmaFormOk);
  EXPECT_EQ(um::check_mma(um::kKindF16, 1, idesc(1, 0, 0, 256, 256), false, k_major, k_major),
            um::kMmaFormM);
  EXPECT_EQ(um::check_mma(um::kKindF16, 2, idesc(1, 0, 0, 256, 256), false, k_major, k_major),
            um::kMmaFormOk);
  EXPECT_EQ(um::check_mma(um::kKindF16, 2, idesc(1, 0, 0, 128, 24), false, k_major, k_major),
            um::kMmaFormN);
  EXPECT_EQ(um::check_mma(um::kKindF16, 1, idesc(0, 1, 1, 128, 64), false, k_major, k_major),
            um::kMmaFormDType);  // f16 D needs f16 inputs
  EXPECT_EQ(um::check_mma(um::kKindF16, 1, idesc(1, 0, 1, 128, 64), false, k_major, k_major),
            um::kMmaFormBType);
  EXPECT_EQ(um::check_mma(um::kKindI8, 1, idesc(2, 1, 0, 128, 40), false, k_major, k_major),
            um::kMmaFormN);  // i8 with ::1: steps of 16 above 32
  EXPECT_EQ(um::check_mma(um::kKindI8, 1, idesc(2, 1, 0, 128, 24), false, k_major, k_major),
            um::kMmaFormOk);
  EXPECT_EQ(um::check_mma(um::kKindTf32, 1, idesc(1, 2, 2, 64, 8), false, k_major, k_major),
            um::kMmaFormOk);
  const um::SmemDescriptor sw128_32b{0x400, 16, 1024, 1, 0, 0, um::kSwizzle128B32BAtom};
  EXPECT_EQ(um::check_mma(um::kKindTf32, 1, idesc(1, 2, 2, 64, 8), false, sw128_32b, k_major),
            um::kMmaFormSwizzle);  // K-major has no 32-byte-atom layout
  um::InstrDescriptor transposed = idesc(1, 2, 2, 64, 8);
  transposed.a_mn_major = 1;
  EXPECT_EQ(um::check_mma(um::kKindTf32, 1, transposed, false, sw128_32b, k_major), um::kMmaFormOk);
  EXPECT_EQ(um::check_mma(um::kKindTf32, 1, transposed, false, k_major, k_major),
            um::kMmaFormSwizzle);  // MN-major tf32 only with 32-byte atoms
  um::InstrDescriptor fp4_mn = idesc(1, 5, 5, 128, 64);
  fp4_mn.b_mn_major = 1;
  EXPECT_EQ(um::check_mma(um::kKindF8f6f4, 1, fp4_mn, false, k_major, k_major),
            um::kMmaFormTranspose);
  EXPECT_EQ(um::check_mma(um::kKindF8f6f4, 1, idesc(1, 5, 5, 128, 64), true, k_major, k_major),
            um::kMmaFormATmemType);
  EXPECT_EQ(um::check_mma(um::kKindF8f6f4, 1, idesc(1, 2, 0, 128, 64), false, k_major, k_major),
            um::kMmaFormAType);  // 2 is not an f8f6f4 format
}

// ---------------------------------------------------------------------------------------------
// D in TMEM: CuTe's accumulator fragments (logical TMEM addressing: lane << 16 | column).

template <int kSms, int kRowsPerCta, int kN>
void expect_d_placement(um::u32 m_total) {
  auto frag = UMMA::tmem_frg<float, uint32_t, kSms>::make(
      make_shape(make_shape(Int<kRowsPerCta>{}, Int<kN>{}), Int<1>{}, Int<1>{}));
  for (int m = 0; m < kRowsPerCta; ++m) {
    for (int n = 0; n < kN; ++n) {
      const auto address = static_cast<um::u32>(frag.layout()(make_coord(m, n), 0, 0));
      const um::TmemOffset t =
          um::d_offset(static_cast<um::u32>(m), static_cast<um::u32>(n), m_total, kN, kSms);
      ASSERT_EQ(t.lane, address >> 16) << "M " << m_total << " row " << m << " column " << n;
      ASSERT_EQ(t.column, address & 0xFFFFu) << "M " << m_total << " row " << m << " column " << n;
    }
  }
}

TEST(UmmaDataPathCute, DPlacementMatchesCuteFragments) {
  expect_d_placement<1, 64, 64>(64);     // Layout F
  expect_d_placement<1, 128, 256>(128);  // Layout D
  expect_d_placement<2, 64, 128>(128);   // Layout B (2x2), per CTA
  expect_d_placement<2, 128, 64>(256);   // Layout A, per CTA
}

// The lane alignment of the data-path layouts (0, or 0/16 for Layout F) and what D covers.
TEST(UmmaDataPath, LaneAlignmentAndExtents) {
  EXPECT_TRUE(um::d_lane_valid(0, 64, 1));
  EXPECT_TRUE(um::d_lane_valid(16, 64, 1));
  EXPECT_FALSE(um::d_lane_valid(16, 128, 1));
  EXPECT_FALSE(um::d_lane_valid(16, 128, 2));
  EXPECT_FALSE(um::d_lane_valid(32, 64, 1));
  EXPECT_EQ(um::d_column_extent(128, 256, 2), 128u);  // Layout B: N/2 columns, two lane halves
  EXPECT_EQ(um::d_column_extent(256, 256, 2), 256u);
  EXPECT_EQ(um::d_lane_extent(64, 1), 112u);  // lanes up to 96 + 15
  EXPECT_EQ(um::rows_per_cta(256, 2), 128u);
}

// A in TMEM: 32 bits of K per column, elements packed from the low bits.
TEST(UmmaDataPath, AInTmemPacking) {
  EXPECT_EQ(um::a_tmem_column(15, um::kF16), 7u);
  EXPECT_EQ(um::a_tmem_bit(15, um::kF16), 16u);
  EXPECT_EQ(um::a_tmem_column(31, um::kS8), 7u);
  EXPECT_EQ(um::a_tmem_bit(31, um::kS8), 24u);
  EXPECT_EQ(um::a_tmem_column(7, um::kTF32), 7u);
  EXPECT_EQ(um::a_tmem_bit(7, um::kTF32), 0u);
}

// ---------------------------------------------------------------------------------------------
// Element formats: every code against CUTLASS's conversions.

template <class T>
void expect_codes(um::u32 type, int bits) {
  for (int code = 0; code < (1 << bits); ++code) {
    T value{};
    value.storage = static_cast<decltype(value.storage)>(code);
    const float expected = static_cast<float>(value);
    const float got = um::element_to_float(type, static_cast<um::u32>(code));
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(got)) << "code " << code;
    } else {
      EXPECT_EQ(got, expected) << "type " << type << " code " << code;
    }
  }
}

TEST(UmmaElementsCute, SmallFloatsMatchCutlass) {
  expect_codes<cutlass::float_e4m3_t>(um::kE4M3, 8);
  expect_codes<cutlass::float_e5m2_t>(um::kE5M2, 8);
  expect_codes<cutlass::float_e2m3_t>(um::kE2M3, 6);
  expect_codes<cutlass::float_e3m2_t>(um::kE3M2, 6);
  expect_codes<cutlass::float_e2m1_t>(um::kE2M1, 4);
}

TEST(UmmaElements, HalfAndBfloat16AreExact) {
  for (um::u32 code = 0; code < 0x10000u; ++code) {
    const _Float16 h = std::bit_cast<_Float16>(static_cast<std::uint16_t>(code));
    const float expected = static_cast<float>(h);
    const float got = um::f16_to_float(code);
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(got));
    } else {
      ASSERT_EQ(got, expected) << code;
    }
    ASSERT_EQ(um::bits_from_float(um::bf16_to_float(code)), code << 16);
  }
  EXPECT_EQ(um::tf32_to_float(0x3F801FFFu), 1.0f);  // the 13 low bits are ignored
  EXPECT_EQ(um::element_to_int(um::kS8, 0xFFu), -1);
  EXPECT_EQ(um::element_to_int(um::kU8, 0xFFu), 255);
}

TEST(UmmaElements, FloatToHalfRoundsToNearestEven) {
  std::mt19937 random(7);
  auto check = [](float f) {
    const _Float16 expected = static_cast<_Float16>(f);
    const um::u32 got = um::float_to_f16(f);
    if (std::isnan(f)) {
      EXPECT_EQ(got & 0x7C00u, 0x7C00u);
      EXPECT_NE(got & 0x3FFu, 0u);
    } else {
      ASSERT_EQ(got, std::bit_cast<std::uint16_t>(expected)) << f;
    }
  };
  // Every f16 value, the midpoints between neighbours and their neighbours.
  for (um::u32 code = 0; code < 0x7C00u; ++code) {
    for (float sign : {1.0f, -1.0f}) {
      const float here = sign * um::f16_to_float(code);
      const float next = sign * um::f16_to_float(code + 1);
      const float mid = (here + next) / 2;
      check(here);
      check(mid);
      check(std::nextafter(mid, 0.0f));
      check(std::nextafter(mid, 2 * mid));
    }
  }
  for (int i = 0; i < 200000; ++i) check(um::float_from_bits(static_cast<um::u32>(random())));
}

}  // namespace
