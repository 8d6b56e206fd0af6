// The text lowering of a user's sm_100 PTX module to sm_90, the emulation's target (docs/emulation
// ABI, issue 40, half (L)): every statement ptxas rejects for Hopper becomes sm_90 PTX, inline or
// as a `call` of a function of the device emulation library (TMEM in global memory,
// tmemjit::emu_state).
//
// What each statement becomes (PTX ISA §9.7.16 "Tensor Core 5th Generation Family Instructions"):
//   tcgen05.alloc / dealloc                             call tmemjit_emu_alloc / _dealloc
//   tcgen05.relinquish_alloc_permit                     call tmemjit_emu_relinquish
//   tcgen05.mma (kind::f16, tf32, f8f6f4, i8)           call tmemjit_emu_mma
//   tcgen05.commit                                      call tmemjit_emu_commit
//   tcgen05.cp / tcgen05.shift                          call tmemjit_emu_cp / tmemjit_emu_shift
//   tcgen05.ld / tcgen05.st (every form, ld.red)        call of a function generated here from
//                                                       split_image (library_source), one per form
//   tcgen05.wait::ld / wait::st                         membar.cta; bar.warp.sync -1
//   tcgen05.fence::before/after_thread_sync             fence.acq_rel.gpu
//   clusterlaunchcontrol.try_cancel                     call tmemjit_emu_try_cancel
//   clusterlaunchcontrol.query_cancel                   "not cancelled": false, ctaid 0
//   add/sub/mul/fma .f32x2                              two .f32 instructions, same qualifiers
//   min/max .f32 with three sources                     abs (for .abs), then two min/max
//   cp.async.bulk.tensor .cta_group::1                  the same TMA without the qualifier
//   cp.async.bulk.tensor .cta_group::2 (.multicast)     the TMA on a shadow barrier, then
//                                                       tmemjit_emu_tma_peer_end / multicast_end
//   setmaxnreg (sm_90a only)                            dropped: a register-allocation request
//   mbarrier.try_wait / test_wait (a module with MMAs)   kept, after a call of tmemjit_emu_help:
//                                                       waiting threads compute the queued MMAs
// The device library (kernels/emu/tcgen05_emulation.cuh) defines the tmemjit_emu_* functions other
// than the ld/st ones; the ABI is /work/emu-spec/ABI.md (parameters .b32/.b64 in the documented
// order, immediates stored as they are, predicates through selp.u32, 32-bit registers widened).
//
// Refused (kUsage, naming the statement and its line): tcgen05.mma .ws, .sp, .ashift, the
// block-scaled kinds (mxf8f6f4, mxf4, mxf4nvf4, .block_scale), scale-input-d other than 0,
// .collector::a::use / ::lastuse; tcgen05.cp with decompression (.b8x16.*); TMA with
// .cta_group::2 in an im2col mode; and the other sm_100 features ptxas rejects for Hopper that the
// lowering knows of (256-bit ld/st, st.bulk, redux.sync .f32, .f32.f16/.f32.bf16 arithmetic,
// fp4/fp6/ue8m0 conversions, cvt.rs, TMA gather4/scatter4/im2col::w, .cp_mask, mma.sync .kind::,
// unknown tcgen05 and clusterlaunchcontrol forms). Anything else passes through: ptxas remains the
// final judge.
//
// The disable-output-lane operand of tcgen05.mma (CuTe passes it, zero, with every MMA) is checked
// at run time: a non-zero mask skips the MMA and records kEmuEventUnsupported with the statement's
// id (the emulated MMA writes every lane).
//
// Each lowered statement stays on its own source lines (the replacement is one line, padded with
// the newlines the original statement spanned), so ptxas's line numbers in the lowered module
// are the user's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tmem/result.h"

namespace tmem::kernels {

// The status event the generated library records when an operand value is not emulated
// (tmemjit_emu_unsupported): word 0 (event << 24) | id, word 1 the reason below; the statement is
// skipped. Events 1-4 are kernels::EmuEvent, 5-12 the device library's (tcgen05_emulation.cuh).
inline constexpr std::uint32_t kEmuEventUnsupported = 13;
inline constexpr std::uint32_t kEmuUnsupportedDisableOutputLane = 1;  // mask of an MMA non-zero

// The NVRTC options the library (emu_prefix.cuh + tcgen05_emulation.cuh + library_source) is
// compiled with: relocatable PTX, so that every extern "C" function is a .visible .func whether the
// module calls it or not (compile_cuda_front_end with Target::kSm90 and kRelocatablePtx); the
// hand-written part includes umma_decode.cuh (an -I or an in-memory header). The lowered module
// is .target sm_90, so that one cubin serves every 9.x device.
inline constexpr const char* kEmuLibraryNvrtcOptions[] = {
    "--gpu-architecture=compute_90", "--relocatable-device-code=true", "--std=c++17"};

struct UserLowering {
  // The module: .target sm_90, every rejected statement rewritten. Calls tmemjit_emu_* functions
  // it does not define: splice_emulation_library puts the compiled library after its header.
  std::string ptx;
  // CUDA C++ of the functions this module needs that the lowering generates (tcgen05.ld/st, one
  // function per form, and tmemjit_emu_unsupported); empty when none. It uses tmemjit::emu of
  // emu_prefix.cuh: compile it after emu_prefix.cuh and tcgen05_emulation.cuh.
  std::string library_source;
  // Status id first_id + k names instructions[k]: every lowered statement has an id, in the
  // order of the module, e.g. "tcgen05.ld.sync.aligned.32x32b.x8.b32 (PTX line 120)".
  std::vector<std::string> instructions;
  // How many statements of each family were lowered, in a fixed order, families with none left
  // out: "tcgen05.alloc", "tcgen05.dealloc", "tcgen05.relinquish_alloc_permit", "tcgen05.ld",
  // "tcgen05.st", "tcgen05.wait", "tcgen05.fence", "tcgen05.mma", "tcgen05.commit", "tcgen05.cp",
  // "tcgen05.shift", "clusterlaunchcontrol", ".f32x2", "min3", "max3", "cp.async.bulk.tensor",
  // "setmaxnreg".
  std::vector<std::pair<std::string, int>> families;
  // What the lowering changed besides statements, one sentence each (a .version lowered to 9.0,
  // the .target it replaced).
  std::vector<std::string> notes;
  // false: no statement needed lowering (the module passes through, only retargeted).
  bool changed = false;
};

// Lowers `ptx` (any sm_100-family target; `source_name` names it in errors). The lowered
// statements get the status ids first_id, first_id + 1, ... (ids below 2^24: the status word keeps
// the event in bits 31:24), so that a module's ids can follow those of other generated code.
// Errors:
//   kParse  the text is not PTX this scanner can follow (an unterminated comment, string, block
//           or statement; a '}' without '{'; no .target), naming the line;
//   kUsage  a statement the emulation refuses or does not know (see above), naming the statement,
//           its line and why; also an operand it cannot read (a register without .reg);
//   kLimit  first_id below 1, or more statements than ids.
// Requires: nothing; the input is the user's. Postcondition: equal input gives equal output.
// standalone: every kernel of a module that uses tcgen05 first calls
// tmemjit_emu_standalone_enter (emulation_library_source with standalone_ctas > 0 defines it),
// counted as the family "kernel entry (clears the standalone state)".
Result<UserLowering> lower_user_ptx(std::string_view ptx, std::string_view source_name,
                                    std::uint32_t first_id = 1, bool standalone = false);

// `lowered_ptx` (lower_user_ptx's ptx) with the compiled library's PTX (its .version, .target and
// .address_size lines removed: ptx_without_header) inserted after the module header, the way
// compile_kernel splices generated functions. The user's lines move down by the number of lines
// inserted after the header's last line (ptx::header_end). kUsage when `lowered_ptx` has no
// .target.
Result<std::string> splice_emulation_library(std::string_view lowered_ptx,
                                             std::string_view library_ptx);

}  // namespace tmem::kernels
