// Pure decoding for the tcgen05 emulation (kernels/emu/tcgen05_emulation.cuh): the shared-memory
// matrix descriptor, the instruction descriptor of the non-block-scaled kinds, the byte address of
// an operand element in shared memory, D's place in TMEM, and the element formats.
//
// Host and device: compiled by NVRTC (sm_90a), by nvcc, and by the host compiler for the CPU tests
// (tests/kernels/umma_decode_test.cc checks the addresses against CuTe's make_umma_desc). No CUDA
// header and no standard header: NVRTC has neither by default.
//
// Sections cited are those of PTX ISA 9.1 (9.3 renumbers 9.7.16.x as 9.7.17.x).
#ifndef TMEMJIT_UMMA_DECODE_CUH
#define TMEMJIT_UMMA_DECODE_CUH

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define TMEMJIT_HD __host__ __device__ __forceinline__
#else
#define TMEMJIT_HD inline
#endif

namespace tmemjit {
namespace umma {

using u32 = unsigned int;
using u64 = unsigned long long;
static_assert(sizeof(u32) == 4 && sizeof(u64) == 8, "u32/u64 must be 32/64 bits");

// ---------------------------------------------------------------------------------------------
// Shared memory descriptor (9.7.16.4.1, Table 40).

// Bits 61-63. 3, 5 and 7 are invalid.
enum Swizzle : u32 {
  kSwizzleNone = 0,
  kSwizzle128B32BAtom = 1,  // 128-byte swizzle with 32-byte atomicity (MN-major only, Table 55)
  kSwizzle128B = 2,
  kSwizzle64B = 4,
  kSwizzle32B = 6,
};

struct SmemDescriptor {
  u32 start;        // byte address in the CTA's shared memory (bits 0-13, in 16-byte units)
  u32 lbo;          // leading dimension byte offset (bits 16-29, in 16-byte units), in bytes
  u32 sbo;          // stride dimension byte offset (bits 32-45, in 16-byte units), in bytes
  u32 version;      // bits 46-48: the fixed constant 0b001
  u32 base_offset;  // bits 49-51: the swizzle pattern's phase (Table 41)
  u32 lbo_mode;     // bit 52: 0 relative byte offset, 1 absolute byte address (sm_103a)
  u32 swizzle;      // bits 61-63 (Swizzle)
};

TMEMJIT_HD u32 bit_field(u64 value, u32 first, u32 count) {
  return static_cast<u32>((value >> first) & ((1ull << count) - 1ull));
}

// matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4: addresses and offsets are in 16-byte units.
TMEMJIT_HD SmemDescriptor decode_smem_descriptor(u64 d) {
  SmemDescriptor s;
  s.start = bit_field(d, 0, 14) << 4;
  s.lbo = bit_field(d, 16, 14) << 4;
  s.sbo = bit_field(d, 32, 14) << 4;
  s.version = bit_field(d, 46, 3);
  s.base_offset = bit_field(d, 49, 3);
  s.lbo_mode = bit_field(d, 52, 1);
  s.swizzle = bit_field(d, 61, 3);
  return s;
}

TMEMJIT_HD bool swizzle_valid(u32 swizzle) {
  return swizzle == kSwizzleNone || swizzle == kSwizzle128B32BAtom || swizzle == kSwizzle128B ||
         swizzle == kSwizzle64B || swizzle == kSwizzle32B;
}

// 16-byte units in one row of the swizzle atom (Table 55, "128b element" shapes): 1 (none),
// 2 (32B), 4 (64B), 8 (128B, also with 32-byte atomicity).
TMEMJIT_HD u32 swizzle_row_units(u32 swizzle) {
  switch (swizzle) {
    case kSwizzle32B:
      return 2u;
    case kSwizzle64B:
      return 4u;
    case kSwizzle128B:
    case kSwizzle128B32BAtom:
      return 8u;
    default:
      return 1u;
  }
}

// The swizzle is a function of the absolute shared-memory address (Table 41: the pattern repeats
// from a 1024/512/256-byte boundary): CuTe's Swizzle<B,4,3> (XOR address bits [4,4+B) with bits
// [7,7+B)) for 32B/64B/128B, Swizzle<2,5,2> (bits [5,7) with [7,9)) for 128B with 32-byte atoms.
// The base offset says where the pattern starts when that is not on the boundary: "base offset =
// (pattern start addr >> 0x7) & 0x7". The ISA gives no formula for using it; the row of the pattern
// is taken as ((address >> 7) - base offset) modulo the pattern's rows (the pattern start being
// 128-byte aligned), which is the identity for base offset 0, all that CUTLASS and DeepGEMM use.
TMEMJIT_HD u32 apply_swizzle(u32 address, u32 swizzle, u32 base_offset) {
  const u32 row = (address >> 7) - base_offset;
  switch (swizzle) {
    case kSwizzle32B:
      return address ^ ((row & 1u) << 4);
    case kSwizzle64B:
      return address ^ ((row & 3u) << 4);
    case kSwizzle128B:
      return address ^ ((row & 7u) << 4);
    case kSwizzle128B32BAtom:
      return address ^ ((row & 3u) << 5);
    default:
      return address;
  }
}

// The canonical layouts (9.7.16.3.3), in 16-byte units ("128-bit elements"), without the swizzle.
// K-major: row r of the M (or N) extent, unit u along K:
//   none      ((8,m),(T,2k)):((1T,SBO),(1,LBO))   r%8 * 16 + r/8 * SBO + u * LBO
//   swizzled  ((8,m),(T,2k)):((S*T,SBO),(1,T))    r%8 * 16*S + r/8 * SBO + u * 16
// (K-major swizzled: "LBO not used, assumed 1", 9.7.16.3.1.1.) One MMA reads two units (32
// bytes of K) of each row; tcgen05.cp reads one or two.
TMEMJIT_HD u32 k_major_unit_offset(const SmemDescriptor& d, u32 row, u32 unit) {
  if (d.swizzle == kSwizzleNone) return (row % 8u) * 16u + (row / 8u) * d.sbo + unit * d.lbo;
  return (row % 8u) * 16u * swizzle_row_units(d.swizzle) + (row / 8u) * d.sbo + unit * 16u;
}

// MN-major: unit v along M (or N) (elements [v*T, v*T+T)), k along K:
//   none      ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))   v * SBO + k%8 * 16 + k/8 * LBO
//   swizzled  ((T,S,m),(8,k)):((1,T,LBO),(S*T,SBO))  v%S * 16 + v/S * LBO + k%8 * 16S + k/8 * SBO
//   128B, 32B atoms: the atom is 8 units of MN by 4 of K (Table 55); CuTe's canonical form
//              (mma_traits_sm100.hpp) ((8,n),(4,k)):((1,LBO),(8,SBO)) in units; the ISA's table of
//              canonical layouts does not list this mode.
TMEMJIT_HD u32 mn_major_unit_offset(const SmemDescriptor& d, u32 unit_mn, u32 k) {
  if (d.swizzle == kSwizzleNone) return unit_mn * d.sbo + (k % 8u) * 16u + (k / 8u) * d.lbo;
  if (d.swizzle == kSwizzle128B32BAtom)
    return (unit_mn % 8u) * 16u + (unit_mn / 8u) * d.lbo + (k % 4u) * 128u + (k / 4u) * d.sbo;
  const u32 s = swizzle_row_units(d.swizzle);
  return (unit_mn % s) * 16u + (unit_mn / s) * d.lbo + (k % 8u) * 16u * s + (k / 8u) * d.sbo;
}

// The shared-memory byte address (shared::cta window) of one 16-byte unit.
TMEMJIT_HD u32 k_major_unit_address(const SmemDescriptor& d, u32 row, u32 unit) {
  return apply_swizzle(d.start + k_major_unit_offset(d, row, unit), d.swizzle, d.base_offset);
}
TMEMJIT_HD u32 mn_major_unit_address(const SmemDescriptor& d, u32 unit_mn, u32 k) {
  return apply_swizzle(d.start + mn_major_unit_offset(d, unit_mn, k), d.swizzle, d.base_offset);
}

// The same unit addresses without a branch, for the emulation's inner loops: every layout above
// is offset = (r & row_mask) * row_inner + (r >> row_shift) * row_outer
//          + (q & q_mask) * q_inner + (q >> q_shift) * q_outer
// with (r, q) = (row, unit) for K-major and (unit along MN, k) for MN-major, then the swizzle
// address ^ ((((address >> 7) - base offset) & swizzle_mask) << swizzle_shift).
struct UnitMap {
  u32 start;
  u32 row_mask, row_shift, row_inner, row_outer;
  u32 q_mask, q_shift, q_inner, q_outer;
  u32 base_offset, swizzle_mask, swizzle_shift;
};

TMEMJIT_HD u32 log2_of(u32 power_of_two) {
  u32 n = 0;
  while ((1u << n) < power_of_two) ++n;
  return n;
}

TMEMJIT_HD UnitMap make_unit_map(const SmemDescriptor& d, bool mn_major) {
  UnitMap m;
  m.start = d.start;
  m.base_offset = d.base_offset;
  const u32 s = swizzle_row_units(d.swizzle);
  m.swizzle_mask = d.swizzle == kSwizzleNone   ? 0u
                   : d.swizzle == kSwizzle32B  ? 1u
                   : d.swizzle == kSwizzle128B ? 7u
                                               : 3u;
  m.swizzle_shift = d.swizzle == kSwizzle128B32BAtom ? 5u : 4u;
  if (!mn_major) {  // r = row: groups of 8 rows; q = unit (0 or 1 per MMA)
    m.row_mask = 7u;
    m.row_shift = 3u;
    m.row_inner = 16u * s;
    m.row_outer = d.sbo;
    m.q_mask = 0xFFFFu;
    m.q_shift = 16u;
    m.q_inner = d.swizzle == kSwizzleNone ? d.lbo : 16u;
    m.q_outer = 0u;
  } else if (d.swizzle == kSwizzleNone) {  // r = unit: one per group; q = k: groups of 8
    m.row_mask = 0u;
    m.row_shift = 0u;
    m.row_inner = 0u;
    m.row_outer = d.sbo;
    m.q_mask = 7u;
    m.q_shift = 3u;
    m.q_inner = 16u;
    m.q_outer = d.lbo;
  } else {  // r = unit: groups of S (8 for 32-byte atoms); q = k: groups of 8 (4)
    const bool atom32 = d.swizzle == kSwizzle128B32BAtom;
    m.row_mask = s - 1u;
    m.row_shift = log2_of(s);
    m.row_inner = 16u;
    m.row_outer = d.lbo;
    m.q_mask = atom32 ? 3u : 7u;
    m.q_shift = atom32 ? 2u : 3u;
    m.q_inner = atom32 ? 128u : 16u * s;
    m.q_outer = d.sbo;
  }
  return m;
}

TMEMJIT_HD u32 unit_address(const UnitMap& m, u32 r, u32 q) {
  const u32 address = m.start + (r & m.row_mask) * m.row_inner + (r >> m.row_shift) * m.row_outer +
                      (q & m.q_mask) * m.q_inner + (q >> m.q_shift) * m.q_outer;
  return address ^ ((((address >> 7) - m.base_offset) & m.swizzle_mask) << m.swizzle_shift);
}

// ---------------------------------------------------------------------------------------------
// Element formats.

enum ElementType : u32 {
  kF16,
  kBF16,
  kTF32,
  kE4M3,
  kE5M2,
  kE2M3,
  kE3M2,
  kE2M1,
  kU8,
  kS8,
  kInvalidType,
};

// Bits of the value.
TMEMJIT_HD u32 element_bits(u32 type) {
  switch (type) {
    case kF16:
    case kBF16:
      return 16u;
    case kTF32:
      return 32u;
    case kE2M3:
    case kE3M2:
      return 6u;
    case kE2M1:
      return 4u;
    default:
      return 8u;
  }
}

// Bits per element in the layout arithmetic: every type of .kind::f8f6f4 counts as 8, as 16
// elements of any of them fill one 16-byte unit: 6-bit and 4-bit elements are "contiguously packed
// along with padding" (9.7.16.10.4.4), the .b6x16_p32 / .b4x16_p64 formats of the tensor copy
// (5.5.1.1): 16 elements, LSB first, in the unit's first 12 / 8 bytes.
TMEMJIT_HD u32 layout_bits(u32 type) {
  const u32 bits = element_bits(type);
  return bits < 8u ? 8u : bits;
}

// Elements per 16-byte unit: T of the canonical layouts.
TMEMJIT_HD u32 unit_elements(u32 type) { return 128u / layout_bits(type); }

// Where an element of A (row = m) or B (row = n) lives: the unit's byte address and the bit
// offset of the element in the unit (the element may straddle bytes: 6-bit types).
struct ElementLocation {
  u32 unit_address;
  u32 bit;
};

TMEMJIT_HD ElementLocation element_location(const SmemDescriptor& d, bool mn_major, u32 type,
                                            u32 row, u32 k) {
  const u32 t = unit_elements(type);
  ElementLocation where;
  if (mn_major) {
    where.unit_address = mn_major_unit_address(d, row / t, k);
    where.bit = (row % t) * element_bits(type);
  } else {
    where.unit_address = k_major_unit_address(d, row, k / t);
    where.bit = (k % t) * element_bits(type);
  }
  return where;
}

// The byte offset of an element of 8, 16 or 32 bits from the descriptor's start address.
TMEMJIT_HD u32 element_offset(const SmemDescriptor& d, bool mn_major, u32 type, u32 row, u32 k) {
  const ElementLocation where = element_location(d, mn_major, type, row, k);
  return where.unit_address + where.bit / 8u - d.start;
}

TMEMJIT_HD float float_from_bits(u32 bits) {
  union {
    u32 u;
    float f;
  } v;
  v.u = bits;
  return v.f;
}
TMEMJIT_HD u32 bits_from_float(float f) {
  union {
    float f;
    u32 u;
  } v;
  v.f = f;
  return v.u;
}

// 2^e for e in [-126, 127].
TMEMJIT_HD float pow2(int e) { return float_from_bits(static_cast<u32>(e + 127) << 23); }

// A finite value of a binary format with `exp_bits` exponent bits, `man_bits` mantissa bits and
// bias `bias`, subnormals included (every such value of the formats here is exact in f32).
TMEMJIT_HD float minifloat_to_float(u32 bits, u32 exp_bits, u32 man_bits, int bias) {
  const u32 sign = (bits >> (exp_bits + man_bits)) & 1u;
  const u32 exp = (bits >> man_bits) & ((1u << exp_bits) - 1u);
  const u32 man = bits & ((1u << man_bits) - 1u);
  float value;
  if (exp == 0u) {
    value = static_cast<float>(man) * pow2(1 - bias - static_cast<int>(man_bits));
  } else {
    value = float_from_bits((static_cast<u32>(static_cast<int>(exp) - bias + 127) << 23) |
                            (man << (23u - man_bits)));
  }
  return sign ? -value : value;
}

TMEMJIT_HD float f16_to_float(u32 h) {
  if (((h >> 10) & 0x1Fu) == 0x1Fu)  // inf, NaN
    return float_from_bits(((h & 0x8000u) << 16) | 0x7F800000u | ((h & 0x3FFu) << 13));
  return minifloat_to_float(h & 0xFFFFu, 5u, 10u, 15);
}
TMEMJIT_HD float bf16_to_float(u32 b) { return float_from_bits((b & 0xFFFFu) << 16); }
// TF32 in shared memory is a 32-bit word of which the MMA uses sign, exponent and the upper ten
// mantissa bits; the lower 13 bits are ignored (truncation, as Hopper's wgmma/mma .tf32 do; the
// tcgen05 section does not restate it).
TMEMJIT_HD float tf32_to_float(u32 w) { return float_from_bits(w & 0xFFFFE000u); }
// E4M3: bias 7, no infinities, S.1111.111 is NaN.
TMEMJIT_HD float e4m3_to_float(u32 b) {
  if ((b & 0x7Fu) == 0x7Fu) return float_from_bits(0x7FC00000u | ((b & 0x80u) << 24));
  return minifloat_to_float(b & 0xFFu, 4u, 3u, 7);
}
// E5M2: IEEE-style (bias 15, infinities and NaNs).
TMEMJIT_HD float e5m2_to_float(u32 b) { return f16_to_float((b & 0xFFu) << 8); }
// The 6-bit and 4-bit formats have no infinity and no NaN: E2M3 bias 1, E3M2 bias 3, E2M1 bias 1.
TMEMJIT_HD float e2m3_to_float(u32 b) { return minifloat_to_float(b & 0x3Fu, 2u, 3u, 1); }
TMEMJIT_HD float e3m2_to_float(u32 b) { return minifloat_to_float(b & 0x3Fu, 3u, 2u, 3); }
TMEMJIT_HD float e2m1_to_float(u32 b) { return minifloat_to_float(b & 0xFu, 2u, 1u, 1); }

// The value of a floating-point element from its bits (low element_bits(type) bits).
TMEMJIT_HD float element_to_float(u32 type, u32 bits) {
  switch (type) {
    case kF16:
      return f16_to_float(bits);
    case kBF16:
      return bf16_to_float(bits);
    case kTF32:
      return tf32_to_float(bits);
    case kE4M3:
      return e4m3_to_float(bits);
    case kE5M2:
      return e5m2_to_float(bits);
    case kE2M3:
      return e2m3_to_float(bits);
    case kE3M2:
      return e3m2_to_float(bits);
    case kE2M1:
      return e2m1_to_float(bits);
    default:
      return 0.0f;
  }
}

// The value of an integer element (.kind::i8).
TMEMJIT_HD int element_to_int(u32 type, u32 bits) {
  return type == kS8 ? static_cast<int>(static_cast<signed char>(bits & 0xFFu))
                     : static_cast<int>(bits & 0xFFu);
}

// f32 -> f16, round to nearest even (cvt.rn.f16.f32): the f16 D of .kind::f16 / .kind::f8f6f4.
TMEMJIT_HD u32 float_to_f16(float f) {
  const u32 x = bits_from_float(f);
  const u32 sign = (x >> 16) & 0x8000u;
  const u32 exp = (x >> 23) & 0xFFu;
  u32 man = x & 0x7FFFFFu;
  if (exp == 0xFFu) return sign | 0x7C00u | (man != 0u ? 0x200u | (man >> 13) : 0u);
  const int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return sign | 0x7C00u;
  if (e <= 0) {
    if (e < -10) return sign;
    man |= 0x800000u;
    const u32 shift = static_cast<u32>(14 - e);
    u32 half = man >> shift;
    const u32 rest = man & ((1u << shift) - 1u);
    const u32 halfway = 1u << (shift - 1u);
    if (rest > halfway || (rest == halfway && (half & 1u) != 0u)) ++half;
    return sign | half;
  }
  u32 half = (static_cast<u32>(e) << 10) | (man >> 13);
  const u32 rest = man & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u) != 0u)) ++half;  // may carry into inf
  return sign | half;
}

// ---------------------------------------------------------------------------------------------
// Instruction descriptor (9.7.16.4.2, Table 42: .kind::tf32, f16, f8f6f4, i8).

// The ABI's kind field (docs: kernels/emu/tcgen05_emulation.cuh, flags bits 2-5).
enum Kind : u32 {
  kKindF16 = 0,
  kKindTf32 = 1,
  kKindF8f6f4 = 2,
  kKindI8 = 3,
};

enum DType : u32 {
  kDF16 = 0,
  kDF32 = 1,
  kDS32 = 2,
};

struct InstrDescriptor {
  u32 sparse_selector;  // bits 0-1
  u32 sparse;           // bit 2
  u32 saturate;         // bit 3 (.kind::i8)
  u32 d_format;         // bits 4-5 (DType)
  u32 a_format;         // bits 7-9, per kind
  u32 b_format;         // bits 10-12, per kind
  u32 negate_a;         // bit 13
  u32 negate_b;         // bit 14
  u32 a_mn_major;       // bit 15: "Transpose A" = M-major (9.7.16.10.6)
  u32 b_mn_major;       // bit 16: "Transpose B" = N-major
  u32 n;                // bits 17-22: N >> 3
  u32 m;                // bits 24-28: M >> 4
  u32 max_shift;        // bits 30-31 (.ws only)
  u32 reserved;         // bits 6, 23 and 29, which must be 0
};

TMEMJIT_HD InstrDescriptor decode_instr_descriptor(u32 idesc) {
  InstrDescriptor i;
  i.sparse_selector = bit_field(idesc, 0, 2);
  i.sparse = bit_field(idesc, 2, 1);
  i.saturate = bit_field(idesc, 3, 1);
  i.d_format = bit_field(idesc, 4, 2);
  i.a_format = bit_field(idesc, 7, 3);
  i.b_format = bit_field(idesc, 10, 3);
  i.negate_a = bit_field(idesc, 13, 1);
  i.negate_b = bit_field(idesc, 14, 1);
  i.a_mn_major = bit_field(idesc, 15, 1);
  i.b_mn_major = bit_field(idesc, 16, 1);
  i.n = bit_field(idesc, 17, 6) << 3;
  i.m = bit_field(idesc, 24, 5) << 4;
  i.max_shift = bit_field(idesc, 30, 2);
  i.reserved = bit_field(idesc, 6, 1) | bit_field(idesc, 23, 1) | bit_field(idesc, 29, 1);
  return i;
}

// The element type of an A or B format field of `kind` (Table 42), kInvalidType for a value the
// table does not list.
TMEMJIT_HD u32 operand_type(u32 kind, u32 format) {
  switch (kind) {
    case kKindF16:
      return format == 0u ? kF16 : format == 1u ? kBF16 : kInvalidType;
    case kKindTf32:
      return format == 2u ? kTF32 : kInvalidType;
    case kKindF8f6f4:
      switch (format) {
        case 0u:
          return kE4M3;
        case 1u:
          return kE5M2;
        case 3u:
          return kE2M3;
        case 4u:
          return kE3M2;
        case 5u:
          return kE2M1;
        default:
          return kInvalidType;
      }
    case kKindI8:
      return format == 0u ? kU8 : format == 1u ? kS8 : kInvalidType;
    default:
      return kInvalidType;
  }
}

// K of one MMA (Table 39, dense): 256 bits of K per row of A and B, for every kind.
TMEMJIT_HD u32 mma_k(u32 kind) {
  switch (kind) {
    case kKindF16:
      return 16u;
    case kKindTf32:
      return 8u;
    default:
      return 32u;
  }
}

// Why an MMA is refused: the status word of event 9 (kEmuEventMmaForm). 0: valid.
enum MmaFormError : u32 {
  kMmaFormOk = 0,
  kMmaFormKind = 1,          // kind not emulated (block-scaled kinds) or cta_group not 1/2
  kMmaFormSparse = 2,        // sparsity bit set: .sp has its own instruction
  kMmaFormReserved = 3,      // reserved bits 6, 23, 29 not zero
  kMmaFormDType = 4,         // D format not valid for the kind / A type
  kMmaFormAType = 5,         // A format not valid for the kind
  kMmaFormBType = 6,         // B format not valid for the kind, or f16 kind with A != B
  kMmaFormM = 7,             // M not valid for kind and cta_group (Table 39)
  kMmaFormN = 8,             // N not valid for kind and cta_group (Tables 39, 52)
  kMmaFormNegate = 9,        // negate with .kind::i8 (Table 51)
  kMmaFormSaturate = 10,     // saturate with a float kind
  kMmaFormTranspose = 11,    // MN-major for a 6-bit or 4-bit type (Table 54)
  kMmaFormSwizzle = 12,      // swizzle 3/5/7, or a swizzle the major-ness does not allow
  kMmaFormDescVersion = 13,  // descriptor bits 46-48 not 0b001
  kMmaFormLboMode = 14,      // absolute LBO mode (sm_103a): not emulated
  kMmaFormATmemType = 15,    // A in TMEM with a 6-bit or 4-bit type: not emulated
};

// Table 39 (dense, no .ws): M per cta_group; N in steps of 8 (::1) or 16 (::2), and for
// .kind::i8 {8, 16, 24, 32, 48, ..., 256} (::1) or steps of 32 (::2).
TMEMJIT_HD bool mma_m_valid(u32 m, u32 cta_group) {
  return cta_group == 1u ? (m == 64u || m == 128u) : (m == 128u || m == 256u);
}
TMEMJIT_HD bool mma_n_valid(u32 kind, u32 n, u32 cta_group) {
  if (n == 0u || n > 256u) return false;
  if (kind == kKindI8)
    return cta_group == 1u ? (n <= 32u ? n % 8u == 0u : n % 16u == 0u) : n % 32u == 0u;
  return cta_group == 1u ? n % 8u == 0u : n % 16u == 0u;
}

// Which swizzle modes a major-ness and type allow (Tables 54, 55): K-major every mode but 128B
// with 32-byte atoms (Table 55 has no K-major atom for it); MN-major 16-bit and 8-bit types every
// mode but that one; MN-major 32-bit (tf32) only that one.
TMEMJIT_HD bool swizzle_allowed(u32 swizzle, bool mn_major, u32 type) {
  if (!swizzle_valid(swizzle)) return false;
  if (!mn_major) return swizzle != kSwizzle128B32BAtom;
  if (element_bits(type) == 32u) return swizzle == kSwizzle128B32BAtom;
  return swizzle != kSwizzle128B32BAtom;
}

// Validates one MMA: instruction descriptor against kind and cta_group, and the shared memory
// descriptors (a_desc ignored when A is in TMEM).
TMEMJIT_HD u32 check_mma(u32 kind, u32 cta_group, const InstrDescriptor& i, bool a_in_tmem,
                         const SmemDescriptor& a, const SmemDescriptor& b) {
  if (kind > kKindI8 || (cta_group != 1u && cta_group != 2u)) return kMmaFormKind;
  if (i.sparse != 0u) return kMmaFormSparse;
  if (i.reserved != 0u) return kMmaFormReserved;
  const u32 a_type = operand_type(kind, i.a_format);
  const u32 b_type = operand_type(kind, i.b_format);
  if (a_type == kInvalidType) return kMmaFormAType;
  if (b_type == kInvalidType || (kind == kKindF16 && a_type != b_type)) return kMmaFormBType;
  switch (kind) {
    case kKindF16:  // D f16 only with f16 inputs (Table 39)
      if (!(i.d_format == kDF32 || (i.d_format == kDF16 && a_type == kF16))) return kMmaFormDType;
      break;
    case kKindTf32:
      if (i.d_format != kDF32) return kMmaFormDType;
      break;
    case kKindF8f6f4:
      if (i.d_format != kDF32 && i.d_format != kDF16) return kMmaFormDType;
      break;
    default:
      if (i.d_format != kDS32) return kMmaFormDType;
      break;
  }
  if (!mma_m_valid(i.m, cta_group)) return kMmaFormM;
  if (!mma_n_valid(kind, i.n, cta_group)) return kMmaFormN;
  // 8-bit N-major B: N in steps of 16 (::1) or 32 (::2), Table 52.
  if (i.b_mn_major != 0u && element_bits(b_type) == 8u && i.n % (16u * cta_group) != 0u)
    return kMmaFormN;
  if (kind == kKindI8 && (i.negate_a != 0u || i.negate_b != 0u)) return kMmaFormNegate;
  if (kind != kKindI8 && i.saturate != 0u) return kMmaFormSaturate;
  if ((i.a_mn_major != 0u && element_bits(a_type) < 8u) ||
      (i.b_mn_major != 0u && element_bits(b_type) < 8u))
    return kMmaFormTranspose;
  if (a_in_tmem && element_bits(a_type) < 8u) return kMmaFormATmemType;
  if (!swizzle_allowed(b.swizzle, i.b_mn_major != 0u, b_type)) return kMmaFormSwizzle;
  if (b.version != 1u) return kMmaFormDescVersion;
  if (b.lbo_mode != 0u) return kMmaFormLboMode;
  if (!a_in_tmem) {
    if (!swizzle_allowed(a.swizzle, i.a_mn_major != 0u, a_type)) return kMmaFormSwizzle;
    if (a.version != 1u) return kMmaFormDescVersion;
    if (a.lbo_mode != 0u) return kMmaFormLboMode;
  }
  return kMmaFormOk;
}

// ---------------------------------------------------------------------------------------------
// D in TMEM (9.7.16.10.5 Data Path Layout Organization; the figures are images, the placements
// below are CuTe's UMMA::tmem_frg atoms, mma_traits_sm100.hpp, which NVIDIA's kernels use).

struct TmemOffset {
  u32 lane;
  u32 column;
};

// Rows of D (and of A) that each CTA of the MMA holds: M, or M/2 with cta_group::2 (rows [0, M/2)
// in the even CTA of the pair, [M/2, M) in the odd one; CuTe's 2x1SM CLayout).
TMEMJIT_HD u32 rows_per_cta(u32 m, u32 cta_group) { return m / cta_group; }

// The place of D[m][n] (m: the row within the CTA's rows) relative to the D address:
//   Layout F, M=64 ::1     "4x1, 1/2 datapath": rows 16q..16q+15 in lanes 32q..32q+15, all N
//                          columns (lane alignment 0 or 16: the address's lane adds)
//   Layout D, M=128 ::1    row m in lane m, N columns
//   Layout A, M=256 ::2    row m of each CTA's 128 in lane m, N columns
//   Layout B, M=128 ::2    "2x2": each CTA's 64 rows in lanes 0-63 for columns [0, N/2) and again
//                          in lanes 64-127 for columns [N/2, N), at columns n - N/2
TMEMJIT_HD TmemOffset d_offset(u32 m_local, u32 n, u32 m, u32 n_total, u32 cta_group) {
  TmemOffset t;
  if (cta_group == 1u && m == 64u) {
    t.lane = (m_local % 16u) + 32u * (m_local / 16u);
    t.column = n;
  } else if (cta_group == 2u && m == 128u && n >= n_total / 2u) {
    t.lane = m_local + 64u;
    t.column = n - n_total / 2u;
  } else {
    t.lane = m_local;
    t.column = n;
  }
  return t;
}

// Lanes (from the address's lane) and columns (from its column) D covers in each CTA.
TMEMJIT_HD u32 d_lane_extent(u32 m, u32 cta_group) {
  return (cta_group == 1u && m == 64u) ? 112u : 128u;  // lanes 0-15, 32-47, 64-79, 96-111
}
TMEMJIT_HD u32 d_column_extent(u32 m, u32 n, u32 cta_group) {
  return (cta_group == 2u && m == 128u) ? n / 2u : n;
}
// Lane alignment of D and of A in TMEM (9.7.16.10.5 table): 0 or 16 for Layout F, else 0.
TMEMJIT_HD bool d_lane_valid(u32 lane, u32 m, u32 cta_group) {
  return lane == 0u || (cta_group == 1u && m == 64u && lane == 16u);
}

// A in TMEM (the [a-tmem] form): row m of A is read from the lane D's row m occupies (the same
// layout; for Layout B CuTe's TmemAllocMode::Duplicated holds each row in both lane halves), K
// packed along the columns: 32 bits of K per column, element k at column k * bits / 32, bit
// k * bits % 32 (two 16-bit, four 8-bit elements per cell, CuTe's tmem_frg<T, T>). The ISA's
// packing section states D's format (one element per cell) and the 6/4-bit containers of
// .kind::mxf8f6f4; it does not state this one.
TMEMJIT_HD u32 a_tmem_column(u32 k, u32 type) { return k * element_bits(type) / 32u; }
TMEMJIT_HD u32 a_tmem_bit(u32 k, u32 type) { return k * element_bits(type) % 32u; }

}  // namespace umma
}  // namespace tmemjit

#endif  // TMEMJIT_UMMA_DECODE_CUH
