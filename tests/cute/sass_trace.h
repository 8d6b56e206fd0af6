// The TMEM instructions of a SASS listing with their addresses traced back to one base, so two
// compilers' code for one transfer can be compared (docs/cute-agreement.md).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tmemjit_cute {

// One LDTM or STTM: its mnemonic with every modifier ("LDTM.16dp32bit_t0_t15.x8.PACK16BIT"), and
// its TMEM address as a root value plus a constant offset (lane in bits 31:16, column in 15:0).
struct TmemInstruction {
  std::string mnemonic;
  std::string root;     // what the address register was computed from, e.g. "R0@7"
  std::int64_t offset;  // constant added to the root on the way to the address
  std::string text;     // the instruction as listed
};

// The listing of each function of an nvdisasm -c (".text.NAME" headers) or cuobjdump -sass
// ("Function : NAME") disassembly, by name.
std::map<std::string, std::string> split_functions(const std::string& sass);

// The instructions of `function_sass` whose base mnemonic is `base` ("LDTM" or "STTM"), in
// listing order. Each address register is traced backwards through moves (R2UR, MOV, UMOV) and
// additions of a constant (IADD3, UIADD3, VIADD, IADD with one register and one immediate); the
// first definition of any other kind is the root. Register names differ between compilers even
// where values agree (UR4 vs UR6), so only roots and offsets are compared.
std::vector<TmemInstruction> trace_tmem(const std::string& function_sass, const std::string& base);

}  // namespace tmemjit_cute
