// What the compiler made of a kernel, read from its cubin: registers, local memory, instruction
// count and, where a disassembler exists, the TMEM loads and stores (CompileReport::code).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "tmem/export.h"
#include "tmem/result.h"

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
  // half). -1 when no disassembler ran; `disassembler` says why.
  int ldtm = -1;
  int sttm = -1;
  // The tool that counted LDTM/STTM (its path), or why none did ("no SASS disassembler found:
  // looked at ...", "not asked", or the disassembler's failure).
  std::string disassembler;

  friend bool operator==(const CodeStats&, const CodeStats&) = default;
};

// Whether code_stats runs a disassembler for the LDTM/STTM counts: a subprocess of tens of
// milliseconds, where the ELF figures cost microseconds.
enum class Disassembly { kIfFound, kSkip };

// The figures of `entry` (its name in the cubin: the lowered name for C++) in `cubin`, a CUDA ELF
// of sm_70 or later (the NOP encoding it recognizes). The ELF is checked before it is read: a
// wrong magic, class or machine, a truncated image, a header or section outside the image, or a
// malformed .nv.info record is a kUsage error naming what is wrong, and an `entry` that is not a
// kernel of the cubin is a kUsage error naming the kernels it holds. A disassembler that fails is
// no error: ldtm and sttm stay -1 and `disassembler` holds its message.
Result<CodeStats> code_stats(std::span<const char> cubin, std::string_view entry,
                             Disassembly disassembly = Disassembly::kIfFound);

// One line for logs and reports: "registers=40 local_bytes=0 instructions=212 ldtm=2 sttm=2"
// ("ldtm=? sttm=? (no SASS disassembler found: ...)" without a disassembler).
std::string to_string(const CodeStats& stats);

}  // namespace tmem
TMEMJIT_API_END
