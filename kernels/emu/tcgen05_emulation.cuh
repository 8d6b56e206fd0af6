// The device emulation library of tcgen05 for sm_90a (issue 40, emulation ABI half D): the
// tmemjit_emu_* functions that the text lowering (kernels/user_emulation.{h,cc}) calls in place
// of the sm_100 statements ptxas rejects for sm_90a. Compiled by NVRTC (--gpu-architecture
// sm_90a, -rdc, --std=c++17) after the text of kernels::cuda_lifecycle(Target::kSm90, false, 2)
// (EmuState, emu::cta(), status(), record(), resolve()); its .func definitions are spliced into
// the lowered module. TMEM is emu_state.tmem: per CTA 128 lanes x 512 columns of u32, lane-major,
// the CTA's region at its linear block index * 65536 words.
//
// Sections cited are those of PTX ISA 9.1 (9.3 numbers them 9.7.17.x). Where the ISA is silent
// the choice is said in a comment ("ISA silent").
//
// Status events this library adds to kernels/emulation_kernels.h EmuEvent 1-4 (status slot word 0
// = (event << 24) | id, word 1 = the value named here):
//   2  columns   (reused) an MMA, cp or shift touches TMEM columns that are not allocated in a
//                CTA it writes (R19); the operation is skipped. Word 1: the TMEM address.
//   5  alloc_columns   alloc/dealloc column count not a power of 2 in [32, 512] (R22).
//                Word 1: the count. alloc writes kAllocFailed.
//   6  alloc_blocked   alloc that cannot be satisfied: on hardware it blocks until columns are
//                freed (a self-deadlock when this CTA holds them, R30). Word 1: the count.
//                alloc writes kAllocFailed.
//   7  alloc_relinquished   alloc after relinquish_alloc_permit (R25). Word 1: the count.
//                alloc writes kAllocFailed.
//   8  alloc_grows   an allocation larger than the previous one of the CTA (R24); it is made.
//                Word 1: the count.
//   9  mma_form  an MMA or cp the ISA does not define: word 1 = umma::MmaFormError (instruction
//                or shared memory descriptor field) or, for cp, 16 + a CpFormError; skipped.
//   10 tmem_lanes   the TMEM address's lane is not the data-path layout's alignment (MMA: 0, or
//                16 for M = 64; shift: a multiple of 32) or the access passes lane 127; skipped.
//                Word 1: the TMEM address.
//   11 unsupported   a form this library does not emulate (block-scaled kinds, cp decompression).
//                Word 1: the ABI flags; skipped.
//   14 tma_peer  a TMA .cta_group::2 into the peer's barrier whose box bytes could not be read from
//                the tensor map (word 1: 0; the kernel traps) or did not all arrive (word 1: the
//                bytes expected).
//   15 strict_pending   (strict mode, EmuState::flags bit 0; recorded by emu::resolve) a
//                tcgen05.ld/st of columns an MMA writes before the commit that completes it.
//                Word 1: the TMEM address.
//   12 cta_pair  cta_group not 1 or 2, cta_group::2 without a peer CTA in the cluster, or both
//                cta_groups in one CTA (R27, recorded once, the operation goes on). Word 1: the
//                cta_group.
//
// Status header words (status word 2048 + i; the host zeroes them before the launch):
//   0  the end of the highest allocated column (emu::resolve's bound); 1  bitmap of allocated
//   32-column chunks; 2  flags (kFlag*); 3, 4  per chunk (4 bits each, chunk c in word 3 + c/8)
//   log2(columns / 32) + 1 of the allocation that starts there, else 0; 5  the previous
//   allocation's column count; 6, 7  the TMA shadow's lock and bytes; 8  strict mode's pending
//   chunks (a bitmap, as word 1); 15  the header lock.
// Then the MMA queue (status word 2064 + i, kQueue*; zeroed by the host too).
#ifndef TMEMJIT_UMMA_DECODE_CUH
#include "kernels/emu/umma_decode.cuh"
#endif

namespace tmemjit {
namespace emu {

using umma::u32;
using umma::u64;

// Internal linkage: the spliced module exports only the tmemjit_emu_* functions.
namespace {

enum : u32 {
  kEventColumns = 2,
  kEventDealloc = 3,
  kEventAllocColumns = 5,
  kEventAllocBlocked = 6,
  kEventAllocRelinquished = 7,
  kEventAllocGrows = 8,
  kEventMmaForm = 9,
  kEventTmemLanes = 10,
  kEventUnsupported = 11,
  kEventCtaPair = 12,
  kEventTmaPeer = 14,
  kEventStrictPending = 15,
};

enum : u32 {
  kHeaderWord = 2048,
  kHeaderBound = 0,
  kHeaderChunks = 1,
  kHeaderFlags = 2,
  kHeaderSizes = 3,  // and 4
  kHeaderLastAlloc = 5,
  kHeaderTmaLock = 6,   // the shadow barrier's owner (a TMA .cta_group::2 in flight)
  kHeaderTmaBytes = 7,  // that TMA's box bytes
  kHeaderPending = 8,   // strict mode: 32-column chunks an MMA writes until its commit
  kHeaderLock = 15,
};

enum : u32 {
  kFlagRelinquished = 1,
  kFlagCtaGroup1 = 2,
  kFlagCtaGroup2 = 4,
  kFlagCtaPairReported = 8,
};

// (Enumerators, not constexpr variables: NVRTC's relocatable PTX would define those as .global
// variables, which the lowering does not splice.)
enum : u32 {
  // What a failed alloc writes: lane 0, column 65535. Every later access through it fails the
  // column rule (event 2) instead of touching another allocation's columns.
  kAllocFailed = 0xFFFFu,
  kLanes = 128,
  kColumns = 512,
  kChunkColumns = 32,
  kCtaWords = kLanes * kColumns,
  // Per CTA: the status slots (2048), the header (16), the MMA queue (kQueueWords): kernels/
  // emulation_kernels.h kEmuUserStatusWords, checked by tests/kernels/user_emulation_test.cc.
  kStatusWords = 2048 + 16 + 544,
};

// The MMA work queue (see "The MMA queue" below), after the header: words of queue_of(cta).
enum : u32 {
  kQueueWord = 2064,
  kQueueIssued = 0,     // MMAs enqueued so far (their indices are 0, 1, ...)
  kQueueTicket = 1,     // work items claimed so far: item t is band t % kBands of MMA t / kBands
  kQueueLock = 2,       // the enqueue lock
  kQueueLastKey = 3,    // the geometry key of the last MMA enqueued (see geometry_key)
  kQueueBandDone = 32,  // [kBands]: MMAs whose band b is done
  kQueueEntries = 160,  // [kSlots] entries of kEntryWords
  kBands = 128,
  kSlots = 16,
  kEntryWords = 24,
  // An entry: the MMA's ABI arguments, then its progress.
  kEntryDTaddr = 0,
  kEntryADesc = 1,  // and 2 (low, high)
  kEntryATaddr = 3,
  kEntryBDesc = 4,  // and 5
  kEntryIdesc = 6,
  kEntryFlags = 7,
  kEntrySerial = 8,     // 1: waits for the whole previous MMA, not band by band
  kEntryBandsDone = 9,  // bands computed
  kEntryFinished = 10,  // index + 1 of the last MMA of this slot whose commits arrived
  kEntryCommits = 11,   // kCommitDone | the number of commits attached
  kEntryTargets = 12,   // [kCommitTargets] x (address, kTargetMulticast | cta mask)
  kCommitTargets = 4,
  kCommitDone = 0x80000000u,
  kTargetMulticast = 0x10000u,
};

// ---------------------------------------------------------------------------------------------
// The cluster and the CTA pair (9.7.16.5.1: ranks differing in bit 0; the even one is rank & ~1).

__device__ __forceinline__ u32 lane_id() {
  u32 lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}
__device__ __forceinline__ u32 cluster_rank() {
  u32 rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}
__device__ __forceinline__ u32 cluster_size() {
  u32 size;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(size));
  return size;
}

// The linear block index (emu::cta()'s numbering) of the CTA of this cluster with `rank`:
// %cluster_ctarank counts x fastest, and a cluster's CTAs are the blocks clusterid * nctaid +
// ctaid of the grid.
__device__ __forceinline__ u32 cta_of_rank(u32 rank) {
  u32 nx, ny, nz, cx, cy, cz;
  asm("mov.u32 %0, %%cluster_nctaid.x;" : "=r"(nx));
  asm("mov.u32 %0, %%cluster_nctaid.y;" : "=r"(ny));
  asm("mov.u32 %0, %%cluster_nctaid.z;" : "=r"(nz));
  asm("mov.u32 %0, %%clusterid.x;" : "=r"(cx));
  asm("mov.u32 %0, %%clusterid.y;" : "=r"(cy));
  asm("mov.u32 %0, %%clusterid.z;" : "=r"(cz));
  const u32 bx = cx * nx + rank % nx;
  const u32 by = cy * ny + (rank / nx) % ny;
  const u32 bz = cz * nz + rank / (nx * ny);
  return bx + gridDim.x * (by + gridDim.y * bz);
}

__device__ __forceinline__ u32* tmem_of(u32 cta) {
  if (emu_state.tmem == nullptr) __trap();
  return emu_state.tmem + static_cast<u64>(cta) * kCtaWords;
}
__device__ __forceinline__ u32* status_of(u32 cta) {
  if (emu_state.status == nullptr) __trap();
  return emu_state.status + static_cast<u64>(cta) * kStatusWords;
}
__device__ __forceinline__ volatile u32* header_of(u32 cta) { return status_of(cta) + kHeaderWord; }

// The CTAs an operation of `cta_group` touches: part 0 and 1 of the pair (even, odd), or this CTA.
struct Pair {
  u32 parts;                // 1 or 2
  u32 even_rank, odd_rank;  // cluster ranks of part 0 and 1
  u32 even_cta, odd_cta;    // their linear block indices
  u32 own_rank;             // this CTA's rank
  // (Fields, not arrays: an array indexed by a variable would live in local memory.)
  __device__ u32 rank(u32 part) const { return part == 0u ? even_rank : odd_rank; }
  __device__ u32 cta(u32 part) const { return part == 0u ? even_cta : odd_cta; }
};

__device__ __forceinline__ Pair pair_of(u32 cta_group) {
  Pair p;
  p.own_rank = cluster_rank();
  p.parts = cta_group;
  if (cta_group == 1u) {
    p.even_rank = p.odd_rank = p.own_rank;
    p.even_cta = p.odd_cta = cta();
  } else {
    p.even_rank = p.own_rank & ~1u;
    p.odd_rank = p.own_rank | 1u;
    p.even_cta = cta_of_rank(p.even_rank);
    p.odd_cta = cta_of_rank(p.odd_rank);
  }
  return p;
}

// Validates cta_group and notes it in the CTA's flags (R27: one cta_group per kernel; recorded
// once). false: the operation cannot run (event 12 recorded).
__device__ bool note_cta_group(u32 cta_group, u32 id) {
  if (cta_group != 1u && cta_group != 2u) {
    record(kEventCtaPair, id, cta_group);
    return false;
  }
  if (cta_group == 2u && (cluster_rank() | 1u) >= cluster_size()) {
    record(kEventCtaPair, id, cta_group);
    return false;
  }
  volatile u32* h = header_of(cta());
  const u32 mine = cta_group == 1u ? kFlagCtaGroup1 : kFlagCtaGroup2;
  const u32 other = cta_group == 1u ? kFlagCtaGroup2 : kFlagCtaGroup1;
  const u32 flags = atomicOr(const_cast<u32*>(h + kHeaderFlags), mine);
  if ((flags & other) != 0u && (flags & kFlagCtaPairReported) == 0u) {
    atomicOr(const_cast<u32*>(h + kHeaderFlags), kFlagCtaPairReported);
    record(kEventCtaPair, id, cta_group);
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Memory access helpers. TMEM cells are read and written with relaxed gpu-scope accesses: the
// peer CTA's region is written from another SM, and epilogue warps read after a commit's release
// arrive (L1 is not coherent; relaxed.gpu goes to L2).

__device__ __forceinline__ u32 load_cell(const u32* cell) {
  u32 value;
  asm volatile("ld.relaxed.gpu.b32 %0, [%1];" : "=r"(value) : "l"(cell));
  return value;
}
__device__ __forceinline__ void store_cell(u32* cell, u32 value) {
  asm volatile("st.relaxed.gpu.b32 [%0], %1;" ::"l"(cell), "r"(value));
}

// Shared memory of this CTA (shared::cta address) or of another CTA of the cluster (the same
// offset there, through mapa: 9.7.9.x mapa; distributed shared memory).
__device__ __forceinline__ u32 cluster_address(u32 smem, u32 rank) {
  u32 remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem), "r"(rank));
  return remote;
}

}  // namespace
// The kernel's dynamic shared memory (any kernel has its start, used or not): an address inside
// this CTA's shared window.
extern __shared__ __align__(16) unsigned char dynamic_smem[];
namespace {

// A matrix descriptor holds 14 bits of address >> 4 (9.7.16.4.1): the offset in the CTA's own
// shared memory. A shared::cta address carries more than that in a cluster: measured on an H100
// (compute-sanitizer), the descriptor's 0x400 read with ld.shared by the cluster's CTA 1 was CTA
// 0's memory. So the offset is put back into this CTA's window, whose base is that of any
// address inside it with the low 18 bits cleared.
__device__ __forceinline__ u32 own_shared(u32 offset) {
  const u32 inside = static_cast<u32>(__cvta_generic_to_shared(dynamic_smem));
  return (inside & ~0x3FFFFu) | (offset & 0x3FFFFu);
}

__device__ __forceinline__ void load_unit(u32 smem, bool remote, u32 rank, u32* out) {
  smem = own_shared(smem);
  if (remote) {
    asm volatile("ld.shared::cluster.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(out[0]), "=r"(out[1]), "=r"(out[2]), "=r"(out[3])
                 : "r"(cluster_address(smem, rank)));
  } else {
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(out[0]), "=r"(out[1]), "=r"(out[2]), "=r"(out[3])
                 : "r"(smem));
  }
}
// `bytes` (1, 2 or 4) at a shared address of the given CTA, zero-extended.
__device__ __forceinline__ u32 load_bytes(u32 smem, u32 bytes, bool remote, u32 rank) {
  u32 value;
  smem = own_shared(smem);
  if (remote) smem = cluster_address(smem, rank);
  if (bytes == 1u) {
    if (remote)
      asm volatile("ld.shared::cluster.u8 %0, [%1];" : "=r"(value) : "r"(smem));
    else
      asm volatile("ld.shared.u8 %0, [%1];" : "=r"(value) : "r"(smem));
  } else if (bytes == 2u) {
    if (remote)
      asm volatile("ld.shared::cluster.u16 %0, [%1];" : "=r"(value) : "r"(smem));
    else
      asm volatile("ld.shared.u16 %0, [%1];" : "=r"(value) : "r"(smem));
  } else {
    if (remote)
      asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(value) : "r"(smem));
    else
      asm volatile("ld.shared.u32 %0, [%1];" : "=r"(value) : "r"(smem));
  }
  return value;
}

// ---------------------------------------------------------------------------------------------
// The column allocator (9.7.16.1.2, 9.7.16.7.1): units of 32 columns x 128 lanes, power-of-2
// counts in [32, 512]. The ISA gives no placement rule; allocations are placed first-fit at a
// multiple of their own size (as a buddy allocator would), so equal histories give equal
// columns: both CTAs of a pair, whose warps each run the same cta_group::2 alloc and dealloc
// sequence (R27, R29), get the same columns without talking to each other.

__device__ __forceinline__ bool column_count_valid(u32 ncols) {
  return ncols >= 32u && ncols <= 512u && (ncols & (ncols - 1u)) == 0u;
}

__device__ __forceinline__ void lock_header(volatile u32* h) {
  while (atomicCAS(const_cast<u32*>(h + kHeaderLock), 0u, 1u) != 0u) __nanosleep(32);
  __threadfence();
}
__device__ __forceinline__ void unlock_header(volatile u32* h) {
  __threadfence();
  atomicExch(const_cast<u32*>(h + kHeaderLock), 0u);
}

__device__ __forceinline__ u32 size_code(volatile u32* h, u32 chunk) {
  return (h[kHeaderSizes + chunk / 8u] >> (4u * (chunk % 8u))) & 0xFu;
}
__device__ __forceinline__ void set_size_code(volatile u32* h, u32 chunk, u32 code) {
  const u32 word = kHeaderSizes + chunk / 8u;
  const u32 shift = 4u * (chunk % 8u);
  h[word] = (h[word] & ~(0xFu << shift)) | (code << shift);
}
// The bound emu::resolve checks: the end of the highest allocated chunk.
__device__ __forceinline__ void update_bound(volatile u32* h) {
  const u32 chunks = h[kHeaderChunks];
  h[kHeaderBound] = chunks == 0u ? 0u : (32u - __clz(static_cast<int>(chunks))) * kChunkColumns;
}

// Strict mode (docs/emulation.md §Strict mode): real TMEM holds whatever the previous owner left;
// a fresh allocation reads as NaN (f32) / -1 (integers) until something writes it.
__device__ __forceinline__ bool strict() { return (emu_state.flags & 1ull) != 0ull; }
enum : u32 { kStrictPattern = 0xFFFFFFFFu };
__device__ void fill_columns(u32 column, u32 ncols) {
  u32* region = tmem();
  for (u32 lane = 0; lane < kLanes; ++lane)
    for (u32 c = 0; c < ncols; ++c)
      store_cell(region + lane * kColumns + column + c, kStrictPattern);
}

// The 32-column chunks of [column, column + width) as a bitmap (header word kHeaderChunks's form).
__device__ __forceinline__ u32 chunk_mask(u32 column, u32 width) {
  u32 mask = 0u;
  for (u32 chunk = column / kChunkColumns;
       chunk <= (column + width - 1u) / kChunkColumns && chunk < kColumns / kChunkColumns; ++chunk)
    mask |= 1u << chunk;
  return mask;
}

__device__ u32 allocate_columns(u32 ncols, u32 id) {
  if (!column_count_valid(ncols)) {
    record(kEventAllocColumns, id, ncols);
    return kAllocFailed;
  }
  volatile u32* h = header_of(cta());
  lock_header(h);
  u32 address = kAllocFailed;
  if ((h[kHeaderFlags] & kFlagRelinquished) != 0u) {
    record(kEventAllocRelinquished, id, ncols);
  } else {
    if (h[kHeaderLastAlloc] != 0u && ncols > h[kHeaderLastAlloc])
      record(kEventAllocGrows, id, ncols);
    const u32 count = ncols / kChunkColumns;
    const u32 mask = count == 16u ? 0xFFFFu : ((1u << count) - 1u);
    const u32 used = h[kHeaderChunks];
    for (u32 chunk = 0; chunk + count <= 16u; chunk += count) {
      if ((used & (mask << chunk)) == 0u) {
        h[kHeaderChunks] = used | (mask << chunk);
        set_size_code(h, chunk, 32u - __clz(static_cast<int>(count)));  // log2(count) + 1
        h[kHeaderLastAlloc] = ncols;
        update_bound(h);
        address = chunk * kChunkColumns;  // lane 0
        if (strict()) fill_columns(address, ncols);
        break;
      }
    }
    if (address == kAllocFailed) record(kEventAllocBlocked, id, ncols);
  }
  unlock_header(h);
  return address;
}

__device__ void free_columns(u32 taddr, u32 ncols, u32 id) {
  if (!column_count_valid(ncols)) {
    record(kEventAllocColumns, id, ncols);
    return;
  }
  const u32 column = taddr & 0xFFFFu;
  const u32 chunk = column / kChunkColumns;
  volatile u32* h = header_of(cta());
  lock_header(h);
  const bool starts = (taddr >> 16) == 0u && column % kChunkColumns == 0u && chunk < 16u;
  const u32 code = starts ? size_code(h, chunk) : 0u;
  if (code == 0u || (kChunkColumns << (code - 1u)) != ncols) {
    record(kEventDealloc, id, taddr);  // R23: not an address alloc returned, or another count
  } else {
    const u32 count = ncols / kChunkColumns;
    const u32 mask = count == 16u ? 0xFFFFu : ((1u << count) - 1u);
    h[kHeaderChunks] = h[kHeaderChunks] & ~(mask << chunk);
    set_size_code(h, chunk, 0u);
    update_bound(h);
  }
  unlock_header(h);
}

// Whether columns [column, column + width) are allocated in CTA `cta` (R19).
__device__ bool columns_allocated(u32 cta_index, u32 column, u32 width) {
  if (width == 0u) return true;
  if (column + width > kColumns) return false;
  const u32 chunks =
      load_cell(const_cast<const u32*>(status_of(cta_index)) + kHeaderWord + kHeaderChunks);
  for (u32 chunk = column / kChunkColumns; chunk <= (column + width - 1u) / kChunkColumns; ++chunk)
    if ((chunks & (1u << chunk)) == 0u) return false;
  return true;
}

__device__ bool pair_columns_allocated(const Pair& pair, u32 taddr, u32 width, u32 id) {
  for (u32 p = 0; p < pair.parts; ++p) {
    if (!columns_allocated(pair.cta(p), taddr & 0xFFFFu, width)) {
      record(kEventColumns, id, taddr);
      return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// MMA (9.7.16.10.9.1): D[m][n] (+)= sum over k of A[m][k] * B[n][k], computed a row at a time by
// the threads the MMA queue hands the rows to (or, in strict mode, by the issuing thread at issue).
// That is legal: completion is promised only through a later tcgen05.commit, whose mbarrier arrive
// follows these writes.

// One 256-bit K slice of a row of A or B: the 32 bytes of K one MMA reads per row (9.7.16.3.3:
// two 16-byte units; K = 256 bits / element bits for every kind), element k at bit
// (k / T) * 128 + (k % T) * bits: for 8, 16 and 32-bit types simply k * bits.
struct Slice {
  u32 word[8];
};
// The same K elements as 32 f16 values (element k in half k % 2 of word k / 2): the form every
// .kind::f8f6f4 type is multiplied in (each of its values is exact in f16).
struct HalfSlice {
  u32 word[16];
};

__device__ __forceinline__ u32 slice_bit(u32 type, u32 k) {
  const u32 t = umma::unit_elements(type);
  return (k / t) * 128u + (k % t) * umma::element_bits(type);
}

// Where one operand comes from: a shared memory descriptor (as its branch-free unit map) in the
// CTA of cluster rank `rank`.
struct Operand {
  umma::UnitMap map;
  u32 type;
  bool mn_major;
  bool remote;
  u32 rank;
};

// MN-major: the K elements of row `row` are T per unit apart; one load each. kBytes: the element
// size (MN-major has no sub-byte type, Table 54). The words are filled in order through a shift
// register (no indexing by a variable, which would put the slice in local memory). Inlined: a
// call in the MMA loop costs more registers (the ABI's saves) than the code it saves.
template <u32 kBytes>
__device__ __forceinline__ Slice gather_mn_major_slice(const Operand& op, u32 row) {
  constexpr u32 kPerWord = 4u / kBytes;
  constexpr u32 kPerUnit = 16u / kBytes;
  Slice s;
#pragma unroll
  for (u32 w = 0; w < 8u; ++w) s.word[w] = 0u;
  const u32 in_unit = (row % kPerUnit) * kBytes;
#pragma unroll 1
  for (u32 w = 0; w < 8u; ++w) {
    u32 word = 0u;
#pragma unroll
    for (u32 e = 0; e < kPerWord; ++e) {
      const u32 address = umma::unit_address(op.map, row / kPerUnit, w * kPerWord + e);
      word |= load_bytes(address + in_unit, kBytes, op.remote, op.rank) << (8u * kBytes * e);
    }
#pragma unroll
    for (u32 i = 0; i < 7u; ++i) s.word[i] = s.word[i + 1u];
    s.word[7] = word;
  }
  return s;
}

// The K slice of row `row` (m of A, n of B) from shared memory.
__device__ __forceinline__ Slice load_slice(const Operand& op, u32 row) {
  if (op.mn_major) {
    const u32 bytes = umma::element_bits(op.type) / 8u;
    if (bytes == 1u) return gather_mn_major_slice<1>(op, row);
    if (bytes == 2u) return gather_mn_major_slice<2>(op, row);
    return gather_mn_major_slice<4>(op, row);
  }
  Slice s;
  load_unit(umma::unit_address(op.map, row, 0u), op.remote, op.rank, &s.word[0]);
  load_unit(umma::unit_address(op.map, row, 1u), op.remote, op.rank, &s.word[4]);
  return s;
}

// The K slice of A held in TMEM (the [a-tmem] form): 8 columns of one lane.
__device__ __forceinline__ Slice load_tmem_slice(const u32* lane_cells) {
  Slice s;
#pragma unroll
  for (u32 w = 0; w < 8u; ++w) s.word[w] = load_cell(lane_cells + w);
  return s;
}

struct MmaPlan {
  u32 kind, m, n, rows;
  u32 d_format, saturate;
  bool accumulate, a_in_tmem, negate_a, negate_b;
  Operand a, b;
  u32 d_lane, d_column, a_lane, a_column;
  Pair pair;
};

// One tcgen05.mma as the lowering passes it (the ABI's arguments of tmemjit_emu_mma).
struct MmaArgs {
  u32 d_taddr;
  u64 a_desc;
  u32 a_taddr;
  u64 b_desc;
  u32 idesc, flags;
};

// The plan of an MMA whose form was checked (plan_mma): descriptors decoded, no events.
__device__ __forceinline__ void decode_plan(const MmaArgs& x, MmaPlan& plan) {
  const u32 cta_group = x.flags & 3u;
  plan.kind = (x.flags >> 2) & 15u;
  plan.a_in_tmem = ((x.flags >> 6) & 1u) != 0u;
  plan.accumulate = ((x.flags >> 7) & 1u) != 0u;
  const umma::InstrDescriptor i = umma::decode_instr_descriptor(x.idesc);
  const umma::SmemDescriptor a = umma::decode_smem_descriptor(x.a_desc);
  const umma::SmemDescriptor b = umma::decode_smem_descriptor(x.b_desc);
  plan.m = i.m;
  plan.n = i.n;
  plan.rows = umma::rows_per_cta(i.m, cta_group);
  plan.d_format = i.d_format;
  plan.saturate = i.saturate;
  plan.negate_a = i.negate_a != 0u;
  plan.negate_b = i.negate_b != 0u;
  plan.pair = pair_of(cta_group);
  plan.a = Operand{umma::make_unit_map(a, i.a_mn_major != 0u),
                   umma::operand_type(plan.kind, i.a_format), i.a_mn_major != 0u, false, 0u};
  plan.b = Operand{umma::make_unit_map(b, i.b_mn_major != 0u),
                   umma::operand_type(plan.kind, i.b_format), i.b_mn_major != 0u, false, 0u};
  plan.d_lane = x.d_taddr >> 16;
  plan.d_column = x.d_taddr & 0xFFFFu;
  plan.a_lane = x.a_taddr >> 16;
  plan.a_column = x.a_taddr & 0xFFFFu;
}

// Decodes and checks one MMA; false: skipped (the event is recorded).
__device__ __forceinline__ bool plan_mma(const MmaArgs& x, u32 id, MmaPlan& plan) {
  const u32 cta_group = x.flags & 3u;
  const u32 kind = (x.flags >> 2) & 15u;
  if (kind > umma::kKindI8) {  // block-scaled kinds: the lowering refuses them
    record(kEventUnsupported, id, x.flags);
    return false;
  }
  if (!note_cta_group(cta_group, id)) return false;
  const umma::InstrDescriptor i = umma::decode_instr_descriptor(x.idesc);
  const u32 form = umma::check_mma(kind, cta_group, i, ((x.flags >> 6) & 1u) != 0u,
                                   umma::decode_smem_descriptor(x.a_desc),
                                   umma::decode_smem_descriptor(x.b_desc));
  if (form != umma::kMmaFormOk) {
    record(kEventMmaForm, id, form);
    return false;
  }
  decode_plan(x, plan);
  // Lane alignment (9.7.16.10.5): 0, or 0/16 for Layout F, the same for A and D.
  if (!umma::d_lane_valid(plan.d_lane, i.m, cta_group)) {
    record(kEventTmemLanes, id, x.d_taddr);
    return false;
  }
  if (plan.a_in_tmem && plan.a_lane != plan.d_lane) {
    record(kEventTmemLanes, id, x.a_taddr);
    return false;
  }
  if (!pair_columns_allocated(plan.pair, x.d_taddr, umma::d_column_extent(i.m, i.n, cta_group), id))
    return false;
  if (plan.a_in_tmem && !pair_columns_allocated(plan.pair, x.a_taddr, 8u, id)) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Products. Each kind multiplies in one form: f16 pairs (.kind::f16's f16, and every
// .kind::f8f6f4 type converted to f16), bf16 pairs, tf32 words, or bytes (.kind::i8, dp4a). The
// products of every kind are exact in f32 (at most 11 x 11 significant bits) and are summed in k
// order with fused multiply-adds; see float_result for D.

__device__ __forceinline__ float low_half(u32 pair) {
  float value;
  asm("{ .reg .f16 lo, hi; mov.b32 {lo, hi}, %1; cvt.f32.f16 %0, lo; }" : "=f"(value) : "r"(pair));
  return value;
}
__device__ __forceinline__ float high_half(u32 pair) {
  float value;
  asm("{ .reg .f16 lo, hi; mov.b32 {lo, hi}, %1; cvt.f32.f16 %0, hi; }" : "=f"(value) : "r"(pair));
  return value;
}

template <u32 kWords>
__device__ __forceinline__ float dot_f16(const u32* a, const u32* b) {
  float sum = 0.0f;
#pragma unroll
  for (u32 w = 0; w < kWords; ++w) {
    sum = fmaf(low_half(a[w]), low_half(b[w]), sum);
    sum = fmaf(high_half(a[w]), high_half(b[w]), sum);
  }
  return sum;
}
__device__ __forceinline__ float dot_bf16(const u32* a, const u32* b) {
  float sum = 0.0f;
#pragma unroll
  for (u32 w = 0; w < 8u; ++w) {
    sum = fmaf(umma::float_from_bits(a[w] << 16), umma::float_from_bits(b[w] << 16), sum);
    sum = fmaf(umma::float_from_bits(a[w] & 0xFFFF0000u), umma::float_from_bits(b[w] & 0xFFFF0000u),
               sum);
  }
  return sum;
}
__device__ __forceinline__ float dot_tf32(const u32* a, const u32* b) {
  float sum = 0.0f;
#pragma unroll
  for (u32 w = 0; w < 8u; ++w)
    sum = fmaf(umma::tf32_to_float(a[w]), umma::tf32_to_float(b[w]), sum);
  return sum;
}
// .kind::i8: four byte products per dp4a, s32 accumulation (exact: |sum| <= 32 * 255 * 255).
template <bool kASigned, bool kBSigned>
__device__ __forceinline__ int dot_i8(const u32* a, const u32* b) {
  int sum = 0;
#pragma unroll
  for (u32 w = 0; w < 8u; ++w) {
    if (kASigned && kBSigned)
      asm("dp4a.s32.s32 %0, %1, %2, %0;" : "+r"(sum) : "r"(a[w]), "r"(b[w]));
    else if (kASigned)
      asm("dp4a.s32.u32 %0, %1, %2, %0;" : "+r"(sum) : "r"(a[w]), "r"(b[w]));
    else if (kBSigned)
      asm("dp4a.u32.s32 %0, %1, %2, %0;" : "+r"(sum) : "r"(a[w]), "r"(b[w]));
    else
      asm("dp4a.u32.u32 %0, %1, %2, %0;" : "+r"(sum) : "r"(a[w]), "r"(b[w]));
  }
  return sum;
}

// .kind::f8f6f4 operands to f16 pairs. E4M3 and E5M2 with cvt.rn.f16x2.e4m3x2/e5m2x2 (the upper
// byte to the upper half); the 6-bit and 4-bit types through their values, one pair per call
// (slow, rare, kept out of the MMA loop's code).
__device__ __noinline__ u32 sub_byte_pair(Slice s, u32 type, u32 k) {
  const u32 bits = umma::element_bits(type);
  u32 pair = 0u;
#pragma unroll 1
  for (u32 e = 0; e < 2u; ++e) {
    const u32 bit = slice_bit(type, k + e);
    // s.word[bit / 32] and the next word, without indexing (which would put s in local memory).
    u32 low = s.word[0], high = s.word[1];
#pragma unroll
    for (u32 w = 1; w < 8u; ++w) {
      if (bit / 32u == w) low = s.word[w];
      if (bit / 32u + 1u == w) high = s.word[w];
    }
    u32 value = low >> (bit % 32u);
    if (bit % 32u + bits > 32u) value |= high << (32u - bit % 32u);
    unsigned short half;
    asm("cvt.rn.f16.f32 %0, %1;"
        : "=h"(half)
        : "f"(umma::element_to_float(type, value & ((1u << bits) - 1u))));
    pair |= static_cast<u32>(half) << (16u * e);
  }
  return pair;
}
__device__ __forceinline__ HalfSlice sub_byte_to_halves(const Slice& s, u32 type) {
  HalfSlice h;
#pragma unroll
  for (u32 w = 0; w < 16u; ++w) h.word[w] = sub_byte_pair(s, type, 2u * w);
  return h;
}
__device__ __forceinline__ HalfSlice to_halves(const Slice& s, u32 type) {
  HalfSlice h;
  if (type == umma::kE4M3) {
#pragma unroll
    for (u32 w = 0; w < 8u; ++w) {
      asm("{ .reg .b16 lo, hi; mov.b32 {lo, hi}, %2;\n\t"
          "cvt.rn.f16x2.e4m3x2 %0, lo; cvt.rn.f16x2.e4m3x2 %1, hi; }"
          : "=r"(h.word[2u * w]), "=r"(h.word[2u * w + 1u])
          : "r"(s.word[w]));
    }
  } else if (type == umma::kE5M2) {
#pragma unroll
    for (u32 w = 0; w < 8u; ++w) {
      asm("{ .reg .b16 lo, hi; mov.b32 {lo, hi}, %2;\n\t"
          "cvt.rn.f16x2.e5m2x2 %0, lo; cvt.rn.f16x2.e5m2x2 %1, hi; }"
          : "=r"(h.word[2u * w]), "=r"(h.word[2u * w + 1u])
          : "r"(s.word[w]));
    }
  } else {
    h = sub_byte_to_halves(s, type);
  }
  return h;
}

// An operand slice in its kind's multiply form, negated by its sign bits (Table 51; exact).
template <u32 kKind>
struct Prepared {
  u32 word[kKind == umma::kKindF8f6f4 ? 16 : 8];
};

template <u32 kKind>
__device__ __forceinline__ Prepared<kKind> prepare(const Slice& s, u32 type, bool negate) {
  Prepared<kKind> p;
  if constexpr (kKind == umma::kKindF8f6f4) {
    const HalfSlice h = to_halves(s, type);
#pragma unroll
    for (u32 w = 0; w < 16u; ++w) p.word[w] = h.word[w] ^ (negate ? 0x80008000u : 0u);
  } else {
    const u32 sign = !negate ? 0u : kKind == umma::kKindTf32 ? 0x80000000u : 0x80008000u;
#pragma unroll
    for (u32 w = 0; w < 8u; ++w) p.word[w] = s.word[w] ^ (kKind == umma::kKindI8 ? 0u : sign);
  }
  return p;
}

// The new D cell of a float kind. The sum of the K products is formed first (fused
// multiply-adds in k order), then added to D: the tensor core's order and internal precision are
// not specified, so the result is exact only where every partial sum is (small integers).
__device__ __forceinline__ u32 float_result(const MmaPlan& plan, float sum, u32 old) {
  float d = sum;
  if (plan.accumulate)
    d += plan.d_format == umma::kDF16 ? low_half(old) : umma::float_from_bits(old);
  // f16 D: one element in the low 16 bits of the cell (9.7.16.10.4.1); the upper bits are left 0.
  if (plan.d_format != umma::kDF16) return umma::bits_from_float(d);
  unsigned short half;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(half) : "f"(d));
  return half;
}
// The new D cell of .kind::i8: s32, wrapping, or clamped to the s32 range with the saturate bit
// (the ISA does not say whether intermediate sums saturate; the exact sum is clamped once).
__device__ __forceinline__ u32 int_result(const MmaPlan& plan, int products, u32 old) {
  long long sum = products;
  if (plan.accumulate) sum += static_cast<int>(old);
  if (plan.saturate != 0u) {
    if (sum > 2147483647ll) sum = 2147483647ll;
    if (sum < -2147483648ll) sum = -2147483648ll;
  }
  return static_cast<u32>(static_cast<unsigned long long>(sum) & 0xFFFFFFFFull);
}

// One D cell from its row of A and column of B.
template <u32 kKind>
__device__ __forceinline__ u32 cell_result(const MmaPlan& plan, const Prepared<kKind>& a,
                                           const Prepared<kKind>& b, u32 old) {
  if constexpr (kKind == umma::kKindI8) {
    const bool a_signed = plan.a.type == umma::kS8;
    const bool b_signed = plan.b.type == umma::kS8;
    int sum;
    if (a_signed)
      sum = b_signed ? dot_i8<true, true>(a.word, b.word) : dot_i8<true, false>(a.word, b.word);
    else
      sum = b_signed ? dot_i8<false, true>(a.word, b.word) : dot_i8<false, false>(a.word, b.word);
    return int_result(plan, sum, old);
  } else if constexpr (kKind == umma::kKindTf32) {
    return float_result(plan, dot_tf32(a.word, b.word), old);
  } else if constexpr (kKind == umma::kKindF8f6f4) {
    return float_result(plan, dot_f16<16>(a.word, b.word), old);
  } else {
    const float sum =
        plan.a.type == umma::kF16 ? dot_f16<8>(a.word, b.word) : dot_bf16(a.word, b.word);
    return float_result(plan, sum, old);
  }
}

// Columns of D per pass: their B slices are loaded before any is used, so that the loads are in
// flight together. One for .kind::f8f6f4, whose operands take twice the registers as f16 pairs.
__device__ constexpr u32 columns_per_pass(u32 kind) { return kind == umma::kKindF8f6f4 ? 1u : 2u; }
// D cells are read 8 at a time (N, and each half of N, is a multiple of 8): one L2 round trip
// per 8 cells instead of per cell, 16-byte loads when the cells are 16-byte aligned.
constexpr u32 kDChunk = 8;

struct DChunk {
  u32 cell[kDChunk];
};
__device__ __forceinline__ DChunk load_d_chunk(const u32* cells) {
  DChunk d;
  if ((reinterpret_cast<unsigned long long>(cells) & 15ull) == 0ull) {
#pragma unroll
    for (u32 q = 0; q < kDChunk; q += 4u)
      asm volatile("ld.relaxed.gpu.v4.b32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(d.cell[q]), "=r"(d.cell[q + 1u]), "=r"(d.cell[q + 2u]),
                     "=r"(d.cell[q + 3u])
                   : "l"(cells + q));
  } else {
#pragma unroll
    for (u32 j = 0; j < kDChunk; ++j) d.cell[j] = load_cell(cells + j);
  }
  return d;
}

__device__ __forceinline__ void store_d_chunk(u32* cells, const DChunk& d) {
  if ((reinterpret_cast<unsigned long long>(cells) & 15ull) == 0ull) {
#pragma unroll
    for (u32 q = 0; q < kDChunk; q += 4u)
      asm volatile("st.relaxed.gpu.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(cells + q), "r"(d.cell[q]),
                   "r"(d.cell[q + 1u]), "r"(d.cell[q + 2u]), "r"(d.cell[q + 3u]));
  } else {
#pragma unroll
    for (u32 j = 0; j < kDChunk; ++j) store_cell(cells + j, d.cell[j]);
  }
}

// Row `row` of one CTA of the MMA (`part` of the pair) for the D columns [n_begin, n_end) whose B
// columns [b_begin, ...) come from one CTA (`b`). The row of A is prepared once, then each column
// of B is loaded and multiplied against it; D is read and written 8 cells at a time.
template <u32 kKind>
__device__ __forceinline__ void mma_row(const MmaPlan& plan, u32 part, u32 row, u32 n_begin,
                                        u32 n_end, const Operand& b, u32 b_begin) {
  constexpr u32 kPass = columns_per_pass(kKind);
  Operand a_operand = plan.a;
  a_operand.rank = plan.pair.rank(part);
  a_operand.remote = a_operand.rank != plan.pair.own_rank;
  u32* region = tmem_of(plan.pair.cta(part));
  // D's columns [n_begin, n_end) of this row are contiguous cells from `place`.
  const umma::TmemOffset place = umma::d_offset(row, n_begin, plan.m, plan.n, plan.pair.parts);
  const Slice a_slice =
      plan.a_in_tmem
          ? load_tmem_slice(region + (plan.a_lane + place.lane) * kColumns + plan.a_column)
          : load_slice(a_operand, row);
  const Prepared<kKind> a = prepare<kKind>(a_slice, plan.a.type, plan.negate_a);
  u32* d_cells = region + (plan.d_lane + place.lane) * kColumns + plan.d_column + place.column;
#pragma unroll 1
  for (u32 c0 = 0; c0 < n_end - n_begin; c0 += kDChunk) {
    DChunk old{}, fresh{};
    if (plan.accumulate) old = load_d_chunk(d_cells + c0);
#pragma unroll 1
    for (u32 j0 = 0; j0 < kDChunk; j0 += kPass) {
      // Not unrolled (code size); the chunk's cells move down by a pass each time instead of
      // being indexed by j0 (which would put them in local memory).
      Slice b_slices[kPass];
#pragma unroll
      for (u32 j = 0; j < kPass; ++j) b_slices[j] = load_slice(b, b_begin + c0 + j0 + j);
#pragma unroll
      for (u32 i = 0; i + kPass < kDChunk; ++i) fresh.cell[i] = fresh.cell[i + kPass];
#pragma unroll
      for (u32 j = 0; j < kPass; ++j) {
        const Prepared<kKind> b_values = prepare<kKind>(b_slices[j], b.type, plan.negate_b);
        fresh.cell[kDChunk - kPass + j] = cell_result<kKind>(plan, a, b_values, old.cell[j]);
      }
#pragma unroll
      for (u32 i = 0; i + kPass < kDChunk; ++i) old.cell[i] = old.cell[i + kPass];
    }
    store_d_chunk(d_cells + c0, fresh);
  }
}

// Rows [first, last) of the MMA, counting the even CTA's rows first (cta_group::2), each with all
// of D's columns, split where B's source CTA changes (cta_group::2: B columns [0, N/2) in the even
// CTA, [N/2, N) in the odd one, each CTA's descriptor describing its N/2 columns).
template <u32 kKind>
__device__ __forceinline__ void run_rows(const MmaPlan& plan, u32 first, u32 last) {
  const u32 columns = plan.n / plan.pair.parts;
#pragma unroll 1
  for (u32 r = first; r < last; ++r) {
    const u32 part = r / plan.rows;
#pragma unroll 1
    for (u32 b_part = 0; b_part < plan.pair.parts; ++b_part) {
      Operand b = plan.b;
      b.rank = plan.pair.rank(b_part);
      b.remote = b.rank != plan.pair.own_rank;
      mma_row<kKind>(plan, part, r % plan.rows, b_part * columns, (b_part + 1u) * columns, b, 0u);
    }
  }
}

__device__ void run_mma_rows(const MmaPlan& plan, u32 first, u32 last) {
  switch (plan.kind) {
    case umma::kKindF16:
      run_rows<umma::kKindF16>(plan, first, last);
      break;
    case umma::kKindTf32:
      run_rows<umma::kKindTf32>(plan, first, last);
      break;
    case umma::kKindF8f6f4:
      run_rows<umma::kKindF8f6f4>(plan, first, last);
      break;
    default:
      run_rows<umma::kKindI8>(plan, first, last);
      break;
  }
}

// Shared-memory and generic addresses of an mbarrier (9.7.13.15: mbarrier.arrive takes a
// shared::cluster address; a shared::cta address of the executing CTA is one).
__device__ __forceinline__ u32 generic_to_shared(u64 generic) {
  u64 shared;
  asm("cvta.to.shared.u64 %0, %1;" : "=l"(shared) : "l"(generic));
  return static_cast<u32>(shared);
}
__device__ __forceinline__ u32 generic_to_cluster(u64 generic) {
  u64 shared;
  asm("cvta.to.shared::cluster.u64 %0, %1;" : "=l"(shared) : "l"(generic));
  return static_cast<u32>(shared);
}
__device__ __forceinline__ void arrive_one(u32 cluster_mbar) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(cluster_mbar)
               : "memory");
}

// ---------------------------------------------------------------------------------------------
// The MMA queue (docs/emulation.md §The MMA queue). An MMA is asynchronous: it completes only
// through a later tcgen05.commit, whose mbarrier arrive follows its TMEM writes (9.7.16.6.x,
// 9.7.16.12.1). So the issuing thread only enqueues it; the threads that wait on an mbarrier (the
// lowering calls tmemjit_emu_help before each mbarrier.try_wait/test_wait) compute it, a band of
// kBands rows each (a warp takes 32 bands at once), and the last band's thread makes the arrives
// of the commits attached to it. Ordering: band b of MMA i starts once band b of MMA i - 1 is done
// (the same rows: equal geometry keys), or once all of MMA i - 1 is (a different geometry); so
// when every band of MMA i is done, so is every earlier MMA, as a commit promises. The queue lives
// in the CTA's status words (the host zeroes them); strict mode computes at issue instead.

__device__ __forceinline__ u32 load_acquire(const u32* word) {
  u32 value;
  asm volatile("ld.acquire.gpu.b32 %0, [%1];" : "=r"(value) : "l"(word) : "memory");
  return value;
}
__device__ __forceinline__ void store_release(u32* word, u32 value) {
  asm volatile("st.release.gpu.b32 [%0], %1;" ::"l"(word), "r"(value) : "memory");
}
__device__ __forceinline__ u32* queue_of(u32 cta_index) {
  return status_of(cta_index) + kQueueWord;
}
__device__ __forceinline__ u32* entry_of(u32* q, u32 index) {
  return q + kQueueEntries + (index % kSlots) * kEntryWords;
}
__device__ __forceinline__ MmaArgs entry_args(const u32* e) {
  MmaArgs x;
  x.d_taddr = e[kEntryDTaddr];
  x.a_desc = (static_cast<u64>(e[kEntryADesc + 1u]) << 32) | e[kEntryADesc];
  x.a_taddr = e[kEntryATaddr];
  x.b_desc = (static_cast<u64>(e[kEntryBDesc + 1u]) << 32) | e[kEntryBDesc];
  x.idesc = e[kEntryIdesc];
  x.flags = e[kEntryFlags];
  return x;
}
// MMAs with equal keys map row r to the same TMEM lanes, so band b depends only on band b.
__device__ __forceinline__ u32 geometry_key(const MmaPlan& plan) {
  return plan.m | (plan.n << 9) | (plan.pair.parts << 18) | ((plan.d_lane & 127u) << 20);
}

// A commit's mbarrier: one arrive, or one in each CTA of the multicast mask.
__device__ void arrive_target(u32 address, u32 target) {
  if ((target & kTargetMulticast) == 0u) {
    arrive_one(address);
    return;
  }
  for (u32 rank = 0; rank < 16u; ++rank)
    if ((target & (1u << rank)) != 0u) arrive_one(cluster_address(address, rank));
}

// Every band of MMA `index` is done: its commits arrive (after every helper's TMEM writes, which
// each made visible before counting its band), then the slot is free for index + kSlots.
__device__ void finish_mma(u32* e, u32 index) {
  __threadfence();
  const u32 commits = atomicOr(e + kEntryCommits, kCommitDone);
  __threadfence();
  for (u32 k = 0; k < (commits & ~kCommitDone); ++k)
    arrive_target(e[kEntryTargets + 2u * k], e[kEntryTargets + 2u * k + 1u]);
  store_release(e + kEntryFinished, index + 1u);
}

// Computes work item `ticket` (band ticket % kBands of MMA ticket / kBands) once its rows' earlier
// MMAs are done.
__device__ void run_ticket(u32* q, u32 ticket) {
  const u32 index = ticket / kBands;
  const u32 band = ticket % kBands;
  while (load_acquire(q + kQueueIssued) <= index) {
  }  // the claim's leader saw it issued: this thread's acquire of the entry
  u32* e = entry_of(q, index);
  if (e[kEntrySerial] != 0u) {
    while (load_acquire(entry_of(q, index - 1u) + kEntryFinished) < index) __nanosleep(32);
  } else {
    while (load_acquire(q + kQueueBandDone + band) < index) __nanosleep(32);
  }
  // The operands were written by TMA or by other threads, which the issuer observed (its
  // mbarrier wait) before enqueueing: order this thread's reads after that, at cluster scope.
  asm volatile("fence.acq_rel.cluster;" ::: "memory");
  MmaPlan plan;
  decode_plan(entry_args(e), plan);
  const u32 rows = plan.pair.parts * plan.rows;
  run_mma_rows(plan, band * rows / kBands, (band + 1u) * rows / kBands);
  __threadfence();
  atomicAdd(q + kQueueBandDone + band, 1u);
  if (atomicAdd(e + kEntryBandsDone, 1u) == kBands - 1u) finish_mma(e, index);
}

// Claims up to one item per calling lane of the warp (the first active lane claims for all) and
// computes it. false: nothing was left to claim.
__device__ bool help_one(u32* q) {
  const u32 active = __activemask();
  const u32 lane = lane_id();
  const u32 leader = static_cast<u32>(__ffs(active)) - 1u;
  u32 first = 0u, count = 0u;
  if (lane == leader) {
    for (u32 attempt = 0; attempt < 8u; ++attempt) {
      const u32 available = load_acquire(q + kQueueIssued) * kBands;
      const u32 ticket = load_acquire(q + kQueueTicket);
      if (ticket >= available) break;
      const u32 wanted = min(static_cast<u32>(__popc(active)), available - ticket);
      if (atomicCAS(q + kQueueTicket, ticket, ticket + wanted) == ticket) {
        first = ticket;
        count = wanted;
        break;
      }
    }
  }
  first = __shfl_sync(active, first, leader);
  count = __shfl_sync(active, count, leader);
  const u32 rank = static_cast<u32>(__popc(active & ((1u << lane) - 1u)));
  if (rank < count) run_ticket(q, first + rank);
  return count != 0u;
}

// Helps until every MMA enqueued so far is finished (before a dealloc, cp or shift, which would
// otherwise overtake them).
__device__ void drain_queue() {
  u32* q = queue_of(cta());
  const u32 issued = load_acquire(q + kQueueIssued);
  if (issued == 0u) return;
  const u32* last = entry_of(q, issued - 1u);
  while (load_acquire(last + kEntryFinished) < issued)
    if (!help_one(q)) __nanosleep(64);
}

__device__ void enqueue_mma(const MmaArgs& x, const MmaPlan& plan) {
  u32* q = queue_of(cta());
  while (atomicCAS(q + kQueueLock, 0u, 1u) != 0u) __nanosleep(32);
  __threadfence();
  const u32 index = load_acquire(q + kQueueIssued);
  u32* e = entry_of(q, index);
  // The slot's previous MMA must be finished first (a full queue: help).
  while (index >= kSlots && load_acquire(e + kEntryFinished) < index - kSlots + 1u)
    if (!help_one(q)) __nanosleep(64);
  e[kEntryDTaddr] = x.d_taddr;
  e[kEntryADesc] = static_cast<u32>(x.a_desc);
  e[kEntryADesc + 1u] = static_cast<u32>(x.a_desc >> 32);
  e[kEntryATaddr] = x.a_taddr;
  e[kEntryBDesc] = static_cast<u32>(x.b_desc);
  e[kEntryBDesc + 1u] = static_cast<u32>(x.b_desc >> 32);
  e[kEntryIdesc] = x.idesc;
  e[kEntryFlags] = x.flags;
  const u32 key = geometry_key(plan);
  e[kEntrySerial] = index > 0u && q[kQueueLastKey] != key ? 1u : 0u;
  q[kQueueLastKey] = key;
  e[kEntryBandsDone] = 0u;
  e[kEntryCommits] = 0u;
  __threadfence();
  store_release(q + kQueueIssued, index + 1u);
  atomicExch(q + kQueueLock, 0u);
}

// A commit: its arrive waits for the last MMA enqueued (and so for every earlier one). Attached
// to that MMA unless it is finished (then the arrive is made now); a fifth commit on one MMA
// helps until it is.
__device__ void commit_after_queue(u32 address, u32 target) {
  u32* q = queue_of(cta());
  const u32 issued = load_acquire(q + kQueueIssued);
  if (issued != 0u) {
    u32* e = entry_of(q, issued - 1u);
    for (;;) {
      const u32 commits = load_acquire(e + kEntryCommits);
      if ((commits & kCommitDone) != 0u) break;
      if (commits >= kCommitTargets) {
        drain_queue();
        break;
      }
      e[kEntryTargets + 2u * commits] = address;
      e[kEntryTargets + 2u * commits + 1u] = target;
      __threadfence();
      if (atomicCAS(e + kEntryCommits, commits, commits + 1u) == commits) return;
    }
  }
  __threadfence();
  arrive_target(address, target);
}

// ---------------------------------------------------------------------------------------------
// tcgen05.cp (see tmemjit_emu_cp).

enum CpFormError : u32 {
  kCpFormShape = 1,      // shape field > 4
  kCpFormMulticast = 2,  // multicast not the one the shape requires (9.7.16.9.2)
  kCpFormSwizzle = 3,    // swizzle 3/5/7 or 128B with 32-byte atoms (no K-major atom)
  kCpFormVersion = 4,    // descriptor bits 46-48 not 0b001
};

struct CpShape {
  u32 rows;   // source rows
  u32 units;  // 16-byte units per row
};

__device__ __forceinline__ CpShape cp_shape(u32 shape) {
  switch (shape) {
    case 0:
      return CpShape{128u, 2u};
    case 1:
      return CpShape{4u, 2u};
    case 2:
      return CpShape{128u, 1u};
    case 3:
      return CpShape{64u, 1u};
    default:
      return CpShape{32u, 1u};
  }
}

// The destination lane (relative to taddr's lane) of copy `replica` of source row r.
__device__ __forceinline__ u32 cp_lane(u32 shape, u32 multicast, u32 r, u32 replica) {
  switch (shape) {
    case 1:
      return 32u * r;
    case 3:
      if (multicast == 1u) return r + 64u * replica;
      return (r < 32u ? r : r + 32u) + 32u * replica;
    case 4:
      return r + 32u * replica;
    default:
      return r;
  }
}
// The multicast each shape requires (9.7.16.9.2): 64x128b a warpx2 form, 32x128b warpx4, the
// others none.
__device__ __forceinline__ bool cp_multicast_valid(u32 shape, u32 multicast) {
  if (shape == 3u) return multicast == 1u || multicast == 2u;
  return multicast == (shape == 4u ? 3u : 0u);
}
__device__ __forceinline__ u32 cp_replicas(u32 multicast) {
  return multicast == 3u ? 4u : multicast != 0u ? 2u : 1u;
}
// The highest lane (relative) a shape writes, plus one.
__device__ __forceinline__ u32 cp_lane_extent(u32 shape) { return shape == 1u ? 97u : 128u; }

}  // namespace
}  // namespace emu
}  // namespace tmemjit

// ---------------------------------------------------------------------------------------------
// The ABI (emulation ABI.md "Functions of (D)"). Parameters are u32 (.b32) or u64 (.b64).

// tcgen05.alloc.cta_group.sync.aligned.shared::cta.b32 [dst_smem], ncols (9.7.16.7.1). All 32
// lanes call it; lane 0 allocates and writes the TMEM address (lane 0, first column) to dst_smem.
// cta_group::2: the peer CTA's warp makes the same call; each CTA allocates in its own header and
// equal histories give equal columns (see allocate_columns).
extern "C" __device__ __noinline__ void tmemjit_emu_alloc(unsigned int dst_smem, unsigned int ncols,
                                                          unsigned int cta_group, unsigned int id) {
  using namespace tmemjit::emu;
  if (lane_id() == 0u) {
    const u32 address = note_cta_group(cta_group, id) ? allocate_columns(ncols, id) : kAllocFailed;
    asm volatile("st.shared.u32 [%0], %1;" ::"r"(dst_smem), "r"(address) : "memory");
  }
  __syncwarp();
}

// tcgen05.dealloc.cta_group.sync.aligned.b32 taddr, ncols: frees an allocation alloc returned,
// with its column count (R23, else event 3).
extern "C" __device__ __noinline__ void tmemjit_emu_dealloc(unsigned int taddr, unsigned int ncols,
                                                            unsigned int cta_group,
                                                            unsigned int id) {
  using namespace tmemjit::emu;
  if (lane_id() == 0u && note_cta_group(cta_group, id)) {
    drain_queue();  // a queued MMA may still write these columns
    free_columns(taddr, ncols, id);
  }
  __syncwarp();
}

// tcgen05.relinquish_alloc_permit.cta_group.sync.aligned: later allocs of the CTA are violations
// (event 7).
extern "C" __device__ __noinline__ void tmemjit_emu_relinquish(unsigned int cta_group) {
  using namespace tmemjit::emu;
  if (lane_id() == 0u && note_cta_group(cta_group, 0u))
    atomicOr(const_cast<u32*>(header_of(tmemjit::emu::cta()) + kHeaderFlags), kFlagRelinquished);
  __syncwarp();
}

// tcgen05.mma.cta_group.kind [d], a_desc|[a_tmem], b_desc, idesc, enable_input_d (9.7.16.10.9.1),
// checked now and enqueued (computed by the threads that wait: see "The MMA queue"); in strict
// mode computed now by the calling thread. flags: bits 0-1 cta_group, 2-5 kind (0 f16, 1 tf32,
// 2 f8f6f4, 3 i8), 6 A in TMEM, 7 enable_input_d.
//   cta_group::1: A (M rows) and B (N columns) from this CTA's shared memory, D in its TMEM.
//   cta_group::2: rows [0, M/2) of A from the even CTA's shared memory and D in its TMEM, rows
//   [M/2, M) from / in the odd CTA; B's columns [0, N/2) from the even CTA, [N/2, N) from the
//   odd one (CuTe's 2x1SM A/B/C layouts), each through the same descriptor address.
extern "C" __device__ __noinline__ void tmemjit_emu_mma(
    unsigned int d_taddr, unsigned long long a_desc, unsigned int a_taddr,
    unsigned long long b_desc, unsigned int idesc, unsigned int flags, unsigned int id) {
  using namespace tmemjit::emu;
  const MmaArgs args{d_taddr, a_desc, a_taddr, b_desc, idesc, flags};
  MmaPlan plan;
  if (!plan_mma(args, id, plan)) return;
  if (!strict()) {
    enqueue_mma(args, plan);
    return;
  }
  // Strict mode: D is the MMA's until a commit of this thread completes it (9.7.16.12.1); an
  // access before that is a race that real hardware resolves by timing.
  const u32 pending =
      chunk_mask(plan.d_column, tmemjit::umma::d_column_extent(plan.m, plan.n, flags & 3u));
  for (u32 part = 0; part < plan.pair.parts; ++part)
    atomicOr(const_cast<u32*>(header_of(plan.pair.cta(part)) + kHeaderPending), pending);
  // Operands were written by TMA or by other threads (this CTA's or the peer's): order this
  // thread's reads after what it has observed (its mbarrier wait) at cluster scope.
  asm volatile("fence.acq_rel.cluster;" ::: "memory");
  run_mma_rows(plan, 0u, plan.pair.parts * plan.rows);
}

// Called by the lowering before every mbarrier.try_wait / test_wait of a module that issues MMAs:
// a waiting thread computes queued MMA bands (up to 64 claims, then it goes back to its wait).
extern "C" __device__ __noinline__ void tmemjit_emu_help() {
  using namespace tmemjit::emu;
  if (tmemjit::emu_state.status == nullptr) return;
  u32* q = queue_of(cta());
  for (u32 claim = 0; claim < 64u; ++claim)
    if (!help_one(q)) return;
}

// tcgen05.commit.cta_group.mbarrier::arrive::one{.shared::cluster}{.multicast::cluster}.b64
// [mbar]{, cta_mask} (9.7.16.12.1): once every earlier MMA/cp/shift of this thread is complete,
// arrive (count one, release at cluster scope) with their TMEM writes visible (gpu scope: they may
// be in the peer CTA's region). cp and shift are synchronous; MMAs are in the queue, so the arrive
// is attached to the last one (commit_after_queue). flags: bits 0-1 cta_group, bit 2 mbar is a
// shared::cluster address (else generic), bit 3 multicast: the barrier at the same offset in each
// CTA of cta_mask (bit i = %cluster_ctarank i).
extern "C" __device__ __noinline__ void tmemjit_emu_commit(unsigned long long mbar,
                                                           unsigned int flags,
                                                           unsigned int cta_mask) {
  using namespace tmemjit::emu;
  const bool cluster_address_given = (flags & 4u) != 0u;
  const bool multicast = (flags & 8u) != 0u;
  // Multicast: the barrier's offset in this CTA (a shared::cta address is a shared::cluster
  // address of the executing CTA), mapped into each CTA of the mask.
  const u32 address =
      multicast ? (cluster_address_given ? static_cast<u32>(mbar) : generic_to_shared(mbar))
                : (cluster_address_given ? static_cast<u32>(mbar) : generic_to_cluster(mbar));
  const u32 target = multicast ? kTargetMulticast | (cta_mask & 0xFFFFu) : 0u;
  if (!strict()) {
    commit_after_queue(address, target);
    return;
  }
  // Strict mode computed the MMAs at issue: their columns may be read (before the arrive).
  const Pair pair = pair_of(flags & 3u);
  for (u32 part = 0; part < pair.parts; ++part)
    atomicExch(const_cast<u32*>(header_of(pair.cta(part)) + kHeaderPending), 0u);
  __threadfence();
  arrive_target(address, target);
}

// tcgen05.cp.cta_group.shape{.multicast} [taddr], s_desc (9.7.16.9.2): copies rows of 128 or 256
// bits from shared memory (the K-major canonical layout of the descriptor: row r, 16-byte unit u,
// swizzle included) to TMEM lanes, 32 bits per column. flags: bits 0-1 cta_group, 2-5 shape
// (0 128x256b, 1 4x256b, 2 128x128b, 3 64x128b, 4 32x128b), 6-7 multicast (0 none,
// 1 warpx2::02_13, 2 warpx2::01_23, 3 warpx4), 8-11 decompression (0 none; others: event 11).
// Source row r goes to lanes (the figures are images; CuTe's UTCCP ValIDs, copy_traits_sm100.hpp):
//   128x256b, 128x128b   r
//   4x256b               32 r (one row per warp sub-partition)
//   64x128b.02_13        r and r + 64 (warps 0/2 and 1/3 each get half the rows)
//   64x128b.01_23        r < 32: r and r + 32; r >= 32: r + 32 and r + 64
//   32x128b.warpx4       r + 32 w for each warp w
// cta_group::2: each CTA of the pair copies from its own shared memory (the same descriptor
// address) into its own TMEM (ISA silent on the source; CuTe's 2-CTA atoms take a source per CTA).
extern "C" __device__ __noinline__ void tmemjit_emu_cp(unsigned int taddr,
                                                       unsigned long long s_desc,
                                                       unsigned int flags, unsigned int id) {
  using namespace tmemjit::emu;
  namespace umma = tmemjit::umma;
  const u32 cta_group = flags & 3u;
  const u32 shape = (flags >> 2) & 15u;
  const u32 multicast = (flags >> 6) & 3u;
  if (((flags >> 8) & 15u) != 0u) {
    record(kEventUnsupported, id, flags);
    return;
  }
  if (!note_cta_group(cta_group, id)) return;
  const umma::SmemDescriptor desc = umma::decode_smem_descriptor(s_desc);
  u32 form = 0u;
  if (shape > 4u)
    form = kCpFormShape;
  else if (!cp_multicast_valid(shape, multicast))
    form = kCpFormMulticast;
  else if (!umma::swizzle_valid(desc.swizzle) || desc.swizzle == umma::kSwizzle128B32BAtom)
    form = kCpFormSwizzle;
  else if (desc.version != 1u)
    form = kCpFormVersion;
  if (form != 0u) {
    record(kEventMmaForm, id, 16u + form);
    return;
  }
  const CpShape s = cp_shape(shape);
  const u32 lane0 = taddr >> 16;
  const u32 column0 = taddr & 0xFFFFu;
  if (lane0 + cp_lane_extent(shape) > kLanes) {
    record(kEventTmemLanes, id, taddr);
    return;
  }
  const Pair pair = pair_of(cta_group);
  if (!pair_columns_allocated(pair, taddr, 4u * s.units, id)) return;
  const umma::UnitMap map = umma::make_unit_map(desc, false);
  drain_queue();  // an earlier MMA of this thread comes first (and may read these columns)
  asm volatile("fence.acq_rel.cluster;" ::: "memory");
  for (u32 part = 0; part < pair.parts; ++part) {
    u32* region = tmem_of(pair.cta(part));
    const bool remote = pair.rank(part) != pair.own_rank;
    for (u32 r = 0; r < s.rows; ++r) {
      for (u32 unit = 0; unit < s.units; ++unit) {
        u32 words[4];
        load_unit(umma::unit_address(map, r, unit), remote, pair.rank(part), words);
        for (u32 copy = 0; copy < cp_replicas(multicast); ++copy) {
          u32* cells = region + (lane0 + cp_lane(shape, multicast, r, copy)) * kColumns + column0 +
                       4u * unit;
          for (u32 w = 0; w < 4u; ++w) store_cell(cells + w, words[w]);
        }
      }
    }
  }
}

// tcgen05.shift.cta_group.down [taddr] (9.7.16.9.3): "shifting of 32-byte elements downwards
// across all the rows, except the last, by one row", shape 31x256b: in the 32 lanes from taddr's
// lane (a multiple of 32), 8 columns, lane L+i+1 takes lane L+i's cells for i = 30..0. Lane L
// keeps its cells (ISA silent on what it holds after the shift). cta_group::2: in both CTAs.
extern "C" __device__ __noinline__ void tmemjit_emu_shift(unsigned int taddr,
                                                          unsigned int cta_group, unsigned int id) {
  using namespace tmemjit::emu;
  if (!note_cta_group(cta_group, id)) return;
  const u32 lane0 = taddr >> 16;
  const u32 column0 = taddr & 0xFFFFu;
  if (lane0 % 32u != 0u || lane0 >= kLanes) {
    record(kEventTmemLanes, id, taddr);
    return;
  }
  const Pair pair = pair_of(cta_group);
  if (!pair_columns_allocated(pair, taddr, 8u, id)) return;
  drain_queue();  // an earlier MMA of this thread comes first
  for (u32 part = 0; part < pair.parts; ++part) {
    u32* region = tmem_of(pair.cta(part)) + column0;
    for (u32 i = 31u; i-- > 0u;) {
      for (u32 w = 0; w < 8u; ++w)
        store_cell(region + (lane0 + i + 1u) * kColumns + w,
                   load_cell(region + (lane0 + i) * kColumns + w));
    }
  }
}

// clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes
// {.multicast::cluster::all}.b128 [result_smem], [mbar_smem]: answers "not cancelled", a legal
// answer (the grid's CTAs then run normally): 16 zero bytes at result_smem, then complete_tx of
// 16 bytes on mbar_smem; with multicast_all, in each CTA of the cluster at the same offsets.
extern "C" __device__ __noinline__ void tmemjit_emu_try_cancel(unsigned int result_smem,
                                                               unsigned int mbar_smem,
                                                               unsigned int multicast_all) {
  using namespace tmemjit::emu;
  const u32 first = multicast_all != 0u ? 0u : cluster_rank();
  const u32 last = multicast_all != 0u ? cluster_size() : first + 1u;
  for (u32 rank = first; rank < last; ++rank) {
    asm volatile("st.shared::cluster.v4.u32 [%0], {%1, %1, %1, %1};" ::"r"(
                     cluster_address(result_smem, rank)),
                 "r"(0u)
                 : "memory");
  }
  // The response before the transaction count (complete_tx is relaxed: 9.7.13.15.x).
  asm volatile("fence.acq_rel.cluster;" ::: "memory");
  for (u32 rank = first; rank < last; ++rank) {
    asm volatile("mbarrier.complete_tx.relaxed.cluster.shared::cluster.b64 [%0], 16;" ::"r"(
                     cluster_address(mbar_smem, rank))
                 : "memory");
  }
}

// ---------------------------------------------------------------------------------------------
// cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2
// [dst], [tensor_map, {coordinates}], [mbar] (9.7.9.25.5.1) whose mbar is the peer CTA's. On
// sm_90 a TMA completes only on a barrier of the issuing CTA (measured, docs/emulation.md §TMA
// .cta_group::2), so the lowering sends it to this CTA's shadow barrier between these two calls:
// begin takes the shadow (one per CTA, under a lock in the status header: the TMA is synchronous
// here, so the wait is short), initializes it and expects the box's bytes (read from the tensor
// map); end waits for them, then completes the same bytes on the peer's barrier.
namespace tmemjit {
namespace emu {
namespace {
// 1 KB aligned to 1 KB, so that the dynamic shared memory after it starts 1024-aligned, as it
// does on hardware (after the 1 KB the system reserves): CuTe's 128B-swizzled TMA destinations
// need that, and with 8 bytes here tutorials 04 and 05 failed with "misaligned address".
struct alignas(1024) ShadowBarrier {
  unsigned long long barrier;
  unsigned char pad[1024 - sizeof(unsigned long long)];
};
__shared__ ShadowBarrier tma_shadow;

// The bytes one tiled TMA of `map` (a CUtensorMap: 16 u64, opaque) moves, which its mbarrier's
// transaction count receives. Measured on an H100 (driver 580, docs/emulation.md §TMA
// .cta_group::2) over 80 encodings (every data type, ranks 2-5, boxes 1-256, element strides,
// swizzles, interleaves, L2 and OOB settings, global sizes and addresses): word 8 holds exactly
// that count, the box's traversed elements times the element size, and nothing else. 0: the word
// does not look like one (another encoding), so the caller stops rather than guess.
__device__ u32 tma_box_bytes(const unsigned long long* map) {
  const unsigned long long word = map[8];
  const u32 bytes = static_cast<u32>(word);
  if ((word >> 32) != 0ull || bytes == 0u || bytes % 16u != 0u || bytes > 227u * 1024u) return 0u;
  return bytes;
}

// Spins bounded: a TMA whose bytes never arrive (a box the decoding got wrong) is an error, not a
// hang. About 2^24 polls of ~100 ns: seconds, far past any real TMA.
enum : u32 { kTmaPolls = 1u << 24 };
}  // namespace
}  // namespace emu
}  // namespace tmemjit

extern "C" __device__ __noinline__ unsigned int tmemjit_emu_tma_peer_begin(
    unsigned long long tensor_map, unsigned int id) {
  using namespace tmemjit::emu;
  volatile u32* h = header_of(tmemjit::emu::cta());
  while (atomicCAS(const_cast<u32*>(h + kHeaderTmaLock), 0u, 1u) != 0u) __nanosleep(64);
  __threadfence();
  const u32 bytes = tma_box_bytes(reinterpret_cast<const unsigned long long*>(tensor_map));
  if (bytes == 0u) {  // no byte count: the leader would wait forever; stop the kernel instead
    record(kEventTmaPeer, id, 0u);
    __trap();
  }
  h[kHeaderTmaBytes] = bytes;
  const u32 shadow = static_cast<u32>(__cvta_generic_to_shared(&tma_shadow.barrier));
  asm volatile(
      "mbarrier.init.shared::cta.b64 [%0], 1;\n\t"
      "fence.mbarrier_init.release.cluster;\n\t"
      "fence.proxy.async.shared::cta;\n\t"
      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shadow),
      "r"(bytes)
      : "memory");
  return shadow;
}

namespace tmemjit {
namespace emu {
namespace {
// Waits (bounded) for the bytes tmemjit_emu_tma_peer_begin expected on the shadow, retires it,
// and returns the count; bytes that never came are event 14 with the count, not a hang.
__device__ u32 await_shadow(u32 shadow, u32 id) {
  volatile u32* h = header_of(cta());
  const u32 bytes = h[kHeaderTmaBytes];
  u32 done = 0u;
  for (u32 poll = 0; poll < kTmaPolls && done == 0u; ++poll) {
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, "
        "p; }"
        : "=r"(done)
        : "r"(shadow)
        : "memory");
  }
  if (done == 0u) record(kEventTmaPeer, id, bytes);
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(shadow) : "memory");
  return bytes;
}

// `bytes` completed on the barrier at shared::cluster address `mbar`. What landed before is
// visible first: complete_tx is relaxed, so a cluster-scope fence orders the copy's writes.
__device__ void complete_on(u32 mbar, u32 bytes) {
  asm volatile("fence.acq_rel.cluster;" ::: "memory");
  asm volatile("mbarrier.complete_tx.relaxed.cluster.shared::cluster.b64 [%0], %1;" ::"r"(mbar),
               "r"(bytes)
               : "memory");
}

__device__ void release_shadow() {
  __threadfence();
  atomicExch(const_cast<u32*>(header_of(cta()) + kHeaderTmaLock), 0u);
}

// The CTA-relative offset of a shared::cluster address moved into the CTA of rank `to`: the
// address's distance from the window of its own CTA (getctarank), added to the window of `to`,
// both windows found by mapa of this CTA's shadow (a shared::cta address, which mapa maps by the
// ISA: 9.7.9.x mapa). A foreign address is not given to mapa itself.
__device__ u32 moved_to_cta(u32 address, u32 to) {
  u32 from;
  asm volatile("getctarank.shared::cluster.u32 %0, %1;" : "=r"(from) : "r"(address));
  const u32 anchor = static_cast<u32>(__cvta_generic_to_shared(&tma_shadow.barrier));
  return address - cluster_address(anchor, from) + cluster_address(anchor, to);
}
}  // namespace
}  // namespace emu
}  // namespace tmemjit

extern "C" __device__ __noinline__ void tmemjit_emu_tma_peer_end(unsigned int shadow,
                                                                 unsigned int mbar,
                                                                 unsigned int id) {
  using namespace tmemjit::emu;
  complete_on(mbar, await_shadow(shadow, id));
  release_shadow();
}

// cp.async.bulk.tensor...multicast::cluster.cta_group::2 [dst], [map, {c}], [mbar], ctaMask: the
// box lands at dst's offset in each CTA of ctaMask, and each destination's bytes complete on the
// barrier at mbar's offset in its pair's CTA of mbar's parity, the leader for mbar = the leader's
// (PTX ISA 9.7.9.25.5.1; CUTLASS's 2-SM multicast loads pass the leader's barrier). sm_90's
// multicast completes on each destination's own barrier (docs/emulation.md §TMA .cta_group::2),
// so the lowering loads the box into this CTA alone, on the shadow taken by begin; this call then
// copies it to the other destinations (16-byte distributed shared-memory stores) and completes
// each destination's bytes on its barrier. The issuing CTA must be a destination: it holds the
// box first (event 14 with value 1 stops the kernel otherwise, checked before the load).
extern "C" __device__ __noinline__ unsigned int tmemjit_emu_tma_multicast_begin(
    unsigned long long tensor_map, unsigned int cta_mask, unsigned int id) {
  using namespace tmemjit::emu;
  if (((cta_mask >> cluster_rank()) & 1u) == 0u) {
    record(kEventTmaPeer, id, 1u);
    __trap();
  }
  return tmemjit_emu_tma_peer_begin(tensor_map, id);
}

extern "C" __device__ __noinline__ void tmemjit_emu_tma_multicast_end(unsigned int shadow,
                                                                      unsigned int dst,
                                                                      unsigned int mbar,
                                                                      unsigned int cta_mask,
                                                                      unsigned int id) {
  using namespace tmemjit::emu;
  const u32 bytes = await_shadow(shadow, id);
  const u32 self = cluster_rank();
  u32 mbar_rank;
  asm volatile("getctarank.shared::cluster.u32 %0, %1;" : "=r"(mbar_rank) : "r"(mbar));
  const u32 box = moved_to_cta(dst, self);  // this CTA's copy, whatever window dst named
  for (u32 rank = 0; rank < 16u; ++rank) {
    if (((cta_mask >> rank) & 1u) == 0u) continue;
    if (rank != self) {
      const u32 remote = moved_to_cta(dst, rank);
      for (u32 offset = 0; offset < bytes; offset += 16u) {
        uint4 v;
        asm volatile("ld.shared::cluster.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "r"(box + offset)
                     : "memory");
        asm volatile("st.shared::cluster.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(remote + offset),
                     "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                     : "memory");
      }
    }
    complete_on(moved_to_cta(mbar, (rank & ~1u) | (mbar_rank & 1u)), bytes);
  }
  release_shadow();
}
