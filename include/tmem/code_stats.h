// What the compiler made of a kernel, read from its cubin: registers, local memory, instruction
// count and the TMEM loads and stores (CompileReport::code).
#pragma once

#include <string>
#include <string_view>

#include "tmem/export.h"
#include "tmem/result.h"
#include "tmem/span.h"

TMEMJIT_API_BEGIN
namespace tmem {

// The figures of one entry and of every function it calls (the cubin's .nv.callgraph), so that a
// device function the compiler did not inline still counts.
struct CodeStats {
  // Registers per thread: the largest EIATTR_REGCOUNT of those functions; what limits occupancy.
  int registers = 0;
  // Local memory per thread in bytes: the stack the entry needs (EIATTR_FRAME_SIZE and the
  // cumulative MIN/MAX_STACK_SIZE, plus its callees' frames along the deepest call chain): register
  // spills and local arrays. 0 means the code never touches local memory.
  int local_bytes = 0;
  // SASS instructions of their .text sections (16 bytes each), NOPs left out: they are the
  // alignment padding after the final EXIT, not work.
  int instructions = 0;
  // LDTM and STTM in their SASS: one per tcgen05.ld / tcgen05.st issued (two for 16x32bx2, one per
  // half; tcgen05.ld.red is an LDTM too). -1 when not counted; `disassembler` says why.
  int ldtm = -1;
  int sttm = -1;
  // How LDTM/STTM were counted: "sass encoding (sm_100 family)" (from the opcodes), "none on
  // sm_90: tcgen05 exists only on ..." (0 by nature), the path of the disassembler that listed
  // them, or why they were not counted ("not asked", an arch whose encoding is not known here,
  // "no SASS disassembler found: ...", the disassembler's failure).
  std::string disassembler;

  friend bool operator==(const CodeStats& a, const CodeStats& b) {
    return a.registers == b.registers && a.local_bytes == b.local_bytes &&
           a.instructions == b.instructions && a.ldtm == b.ldtm && a.sttm == b.sttm &&
           a.disassembler == b.disassembler;
  }
  friend bool operator!=(const CodeStats& a, const CodeStats& b) { return !(a == b); }
};

// How code_stats counts LDTM and STTM.
//  kEncoding  From the opcode field of each instruction (microseconds, no subprocess): for cubins
//             of sm_100, sm_101, sm_103 and sm_110, whose encoding the tests check against
//             nvdisasm for every tcgen05.ld/st form. Arches without tcgen05 (below sm_100;
//             sm_120, sm_121) count 0 and 0 without reading the code: no TMEM instruction exists
//             there (PTX ISA §9.7.16: tcgen05 needs sm_100a/f, sm_101a, sm_103a/f or sm_110a/f).
//             Any other arch counts -1, naming the arch: kTool reads it.
//  kTool      From the disassembly by nvdisasm (or cuobjdump) of the whole cubin: a subprocess of
//             about 0.4 s of CPU; -1 without a disassembler.
//  kSkip      Not counted: -1 and -1, "not asked".
enum class Disassembly { kEncoding, kTool, kSkip };

// The figures of `entry` (its name in the cubin: the lowered name for C++) in `cubin`, a CUDA ELF
// of sm_70 or later (the NOP encoding it recognizes). The ELF is checked before it is read: a
// wrong magic, class or machine, a truncated image, a header or section outside the image, a code
// section that is not whole 16-byte instructions, or a malformed .nv.info record is a kUsage
// error naming what is wrong, and an `entry` that is not a kernel of the cubin is a kUsage error
// naming the kernels it holds. An arch whose LDTM/STTM encoding is not known, and a disassembler
// that is missing or fails, are no error: ldtm and sttm stay -1 and `disassembler` says why.
Result<CodeStats> code_stats(Span<const char> cubin, std::string_view entry,
                             Disassembly disassembly = Disassembly::kEncoding);

// One line for logs and reports: "registers=40 local_bytes=0 instructions=212 ldtm=2 sttm=2"
// ("ldtm=? sttm=? (not asked)" where they were not counted).
std::string to_string(const CodeStats& stats);

}  // namespace tmem
TMEMJIT_API_END
