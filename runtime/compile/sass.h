// SASS inspection: find a disassembler (nvdisasm or cuobjdump), disassemble a cubin, and count
// instructions by mnemonic (STTM/LDTM per instruction of a plan) and local-memory use.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tmem/result.h"

namespace tmem::sass {

struct Disassembler {
  std::string path;
  bool is_cuobjdump = false;  // cuobjdump -sass instead of nvdisasm -c
};

// The first usable disassembler of: $TMEMJIT_NVDISASM; nvdisasm, then cuobjdump, on PATH; the CUDA
// toolkit's bin directory; the nvidia-cuda-nvdisasm Python wheel (found by asking python3 where
// the `nvidia` package lives). The search after the environment variable runs once per process.
std::optional<Disassembler> find_disassembler();
// Where find_disassembler() looked, for a test's skip reason.
std::string search_description();

// The SASS text of a cubin (written to a scratch file for the tool). kToolchain on failure.
Result<std::string> disassemble(const Disassembler& tool, std::span<const char> cubin);

// The instructions of a SASS listing.
class Listing {
 public:
  explicit Listing(const std::string& sass_text);

  // Every instruction's mnemonic with its modifiers ("STTM.x64", "LDTM.16dp32bit_t0_t15.x4"),
  // without the guard predicate, in listing order.
  const std::vector<std::string>& mnemonics() const noexcept { return mnemonics_; }
  // Instructions whose base mnemonic (before the first '.') equals `base`, e.g. "STTM".
  int count(const std::string& base) const;
  // Whether the code touches local memory (STL / LDL: a stack or register spills).
  bool uses_local_memory() const { return count("STL") + count("LDL") > 0; }

 private:
  std::vector<std::string> mnemonics_;
};

// The listing of each function of a multi-function disassembly, by name: nvdisasm starts each with
// a "//----- .text.NAME -----" line, cuobjdump with "Function : NAME".
std::map<std::string, Listing> listings_by_function(const std::string& sass_text);

}  // namespace tmem::sass
