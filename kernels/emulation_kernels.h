// GPU emulation of the harness kernels (docs/design.md §Codegen "Emulation", issue 7 part 2): the
// tcgen05 kernels of kernels/transfer_kernels.h lowered to sm_90 PTX with TMEM emulated in global
// memory, so spec -> PTX -> compile -> load -> launch -> read back runs on a GPU without tcgen05
// (Hopper).
//
// The lowering rewrites only the tcgen05 instructions of the real kernel; control flow, the warp
// that allocates, the barriers and every global access stay as they are, so the emulated kernel
// has the same parameters and In/Out/Raw buffer layouts (kernels::launch_shape) plus one trailing
// parameter `tmem_emu`: a u64 global pointer to an EmulationBuffer of one CTA.
//
//   tcgen05.alloc [dst], n      st.shared [dst], 0: the base address, lane 0 column 0 (one
//                               allocation per CTA, so the free region starts at column 0)
//   tcgen05.st / tcgen05.ld     one st.global / ld.global per TMEM cell of the native image
//                               (tmem/image.h tmem_cells), unpack::16b: low 16 bits of each half,
//                               upper 16 bits written as 0; pack::16b: low 16 bits of two cells
//   tcgen05.wait::st / ::ld     membar.cta; bar.warp.sync -1
//   tcgen05.fence::*            membar.cta
//   tcgen05.dealloc             checks that the address is the one alloc returned
//   tcgen05.relinquish          nothing (a comment)
//
// The per-lane part of each image is closed-form arithmetic on the lane id, derived from
// tmem::image() bit by bit (every native image is linear over the bits of the lane and register,
// native_image_map; the lowering fails with kInternal otherwise).
// Every emulated access is checked against the rules the hardware enforces at run time
// (docs/tcgen05-rules.md §Addresses R16-R19: the warp's lane slab, the allocated columns): a
// violating access is skipped and recorded in the thread's status slot, and
// check_emulation_status() turns it into an error.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/descriptor/bit_linear.h"
#include "runtime/ptx/ir.h"
#include "tmem/image.h"
#include "tmem/kernel_kind.h"
#include "tmem/plan.h"
#include "tmem/result.h"

namespace tmem::kernels {

// The buffer behind `tmem_emu`, in u32 words: a status slot of two words per CTA thread (word 0:
// 0, or the 1-based index of the violating instruction in EmulationKernel::checked; word 1: the
// TMEM address it used), then the emulated TMEM, lane-major: word kEmuStatusWords + 512 * lane +
// column. The host zeroes the status slots; TMEM starts with whatever the host puts there (real
// TMEM holds garbage after alloc, so the executor poisons it).
inline constexpr int kEmuLanes = 128;
inline constexpr int kEmuColumns = 512;
inline constexpr int kEmuMaxThreads = 1024;
inline constexpr std::size_t kEmuStatusWords = 2 * kEmuMaxThreads;
inline constexpr std::size_t kEmuTmemWords = std::size_t{kEmuLanes} * kEmuColumns;
inline constexpr std::size_t kEmuBufferWords = kEmuStatusWords + kEmuTmemWords;

// The name of the trailing kernel parameter.
inline constexpr const char* kEmuParam = "tmem_emu";

// One tcgen05 instruction whose emulation is checked at run time.
struct EmulatedInstruction {
  std::string text;       // "tcgen05.st.sync.aligned.32x32b.x64.b32" or "tcgen05.dealloc"
  std::string function;   // the entry it is in
  int body_index = 0;     // its index in the real function's body
  bool access = true;     // ld/st (slab and column rule); false: dealloc (address rule)
  int rows = 0;           // TMEM lanes of one access
  int columns = 0;        // 32-bit TMEM columns of one access
  int alloc_columns = 0;  // columns allocated when it runs
};

struct EmulationKernel {
  ptx::Module module;                        // target sm_90, no tcgen05 instruction
  std::vector<EmulatedInstruction> checked;  // status code k names checked[k - 1]
};

// The native image of one opcode as a lane part plus a register part: cell k of register r of
// lane l is at (row, col) = sum over set bits b of l of lane_bits[b] + cells[r][k], in the access
// given by lane bit access_bit (16x32bx2) or access 0. Every native image is additive over the
// lane bits: split_image reads the lane part off native_image_map (kInternal where there is none).
inline constexpr int kLaneBits = 5;
struct SplitImage {
  struct Term {
    int row = 0;
    int col = 0;
  };
  std::array<Term, kLaneBits> lane_bits{};
  int access_bit = -1;
  int cells_per_reg = 1;
  std::vector<std::array<TmemCell, 2>> cells;  // per register, relative to lane 0
};
Result<SplitImage> split_image(const Opcode& op);

// The whole native image of `op` as one map linear over the bits of its input
// lane | cell << 5 | register << (5 + cell bits), with one cell bit for packed forms, to
// (access, row, col, half) of tmem_cells. Every image is such a map (docs/tcgen05-rules.md
// §Images): NativeImageMap.IsLinearOnEveryInputOfEveryOpcode checks all of them on every input,
// so callers may check only the pairs of bits (13 bits: 92 probes rather than 8192).
std::optional<BitLinearMap> native_image_map(
    const Opcode& op, BitLinearMap::Verify verify = BitLinearMap::Verify::kAll);

// Emulated TMEM of users' kernels (compile_kernel for Target::kSm90, docs/specialization.md):
// the library binds `tmemjit::emu_state` (mangled kEmuStateSymbol) to two arrays with one region
// per CTA: kEmuTmemWords of TMEM cells (lane-major, 512 columns per lane), and
// kEmuUserStatusWords of status: two words per thread (as the harness's status slots, with the
// kind of event in bits 31:24 and the instruction's id below), then a header whose word 0 is the
// allocated columns.
inline constexpr const char* kEmuStateSymbol = "_ZN7tmemjit9emu_stateE";
inline constexpr std::size_t kEmuHeaderWords = 16;
// Then the queue of MMAs waiting for a thread to compute them (kernels/emu/tcgen05_emulation.cuh
// "The MMA queue"; its kStatusWords is this total).
inline constexpr std::size_t kEmuQueueWords = 544;
inline constexpr std::size_t kEmuUserStatusWords =
    kEmuStatusWords + kEmuHeaderWords + kEmuQueueWords;
enum class EmuEvent : std::uint32_t {
  kNone = 0,
  kSlab = 1,          // lanes outside the warp's lane slab (rule R17): access skipped
  kColumns = 2,       // columns outside the allocation (rule R19): access skipped
  kDealloc = 3,       // dealloc of an address alloc did not return (rule R23)
  kWarpRelative = 4,  // a warp-relative lane address, emulated in the warp's own slab (warning)
  // The device library of users' own tcgen05 (kernels/emu/tcgen05_emulation.cuh says what word 1
  // holds for each): skipped operations, but kAllocGrows (made, a warning).
  kAllocColumns = 5,       // alloc/dealloc columns not a power of 2 in [32, 512] (rule R22)
  kAllocBlocked = 6,       // an alloc the free columns cannot satisfy: it blocks on hardware (R30)
  kAllocRelinquished = 7,  // an alloc after relinquish_alloc_permit (rule R25)
  kAllocGrows = 8,         // an allocation larger than the CTA's previous one (rule R24)
  kMmaForm = 9,            // an MMA or cp form the ISA does not define (a descriptor field)
  kTmemLanes = 10,         // a TMEM lane the data-path layout does not allow
  kNotEmulated = 11,       // a form the library does not emulate yet
  kCtaPair = 12,           // cta_group::2 without its peer, or both cta_groups in one CTA (R27)
  kOperandNotEmulated =
      13,               // an operand value the lowering cannot emulate (kernels/user_emulation.h)
  kTmaPeer = 14,        // a TMA .cta_group::2 into the peer's barrier: its bytes unknown or missing
  kStrictPending = 15,  // strict mode: an access to columns an MMA writes before its commit
};
// Strict mode's header word (relative to the header): the 32-column chunks an MMA writes until
// its commit completes it (kernels/emu/tcgen05_emulation.cuh kHeaderPending).
inline constexpr std::size_t kEmuHeaderPending = 8;
// Decodes the status slots of one CTA (kEmuStatusWords words at least) of a user kernel:
// `instructions[id - 1]` describes id. Adds one line per warning to `warnings` (once per
// instruction, first thread) and returns the first violation as a kRule error.
Status decode_user_emulation_status(std::span<const std::uint32_t> status, unsigned cta,
                                    std::span<const std::string> instructions,
                                    std::vector<std::string>& warnings);

// Lowers a tcgen05 module (any target) as described above. Fails with kInternal on IR the
// lowering does not know (a tcgen05.ld/st before any alloc, a native image that is not additive).
Result<EmulationKernel> lower_to_emulation(const ptx::Module& module);

// build_kernel(plan, kind, cta_group) lowered: the harness kernel `kind` for sm_90. The Plan must
// come from tmem::check. With cta_group 2 the kernel runs as a cluster of 2 CTAs (sm_90 has
// clusters and barrier.cluster) and `tmem_emu` points at 2 EmulationBuffers, one per CTA (CTA c
// at word c * kEmuBufferWords): TMEM is per CTA, as on sm_100.
Result<EmulationKernel> build_emulation_kernel(const Plan& plan, KernelKind kind,
                                               int cta_group = 1);

// Reads the status slots of a finished launch (kEmuStatusWords words, or fewer: the first
// threads' slots). The first violation in thread order is a kRule error naming the instruction,
// the thread and warp, the TMEM address and the rule it broke; none is success.
// `checked` is the kernel's EmulationKernel::checked.
Status check_emulation_status(std::span<const EmulatedInstruction> checked,
                              std::span<const std::uint32_t> status);

}  // namespace tmem::kernels
