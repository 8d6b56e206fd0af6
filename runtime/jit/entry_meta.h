// The metadata a cache entry of compile_kernel or compile_transfer keeps beside its cubin: typed
// and versioned, stored as JSON, so a hit (memory, disk or remote) fills the same report the
// compile did and nothing parses free text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kernels/emulation_kernels.h"
#include "tmem/code_stats.h"
#include "tmem/compile.h"
#include "tmem/result.h"

namespace tmem {

struct KernelEntryMeta {
  // Bumped whenever a field changes meaning; an entry of another version does not parse.
  static constexpr int kFormat = 2;

  // Which call wrote the entry: "kernel" (compile_kernel) or "transfer" (compile_transfer).
  std::string kind = "kernel";

  std::string entry;      // the kernel's name in the cubin
  std::string target;     // to_string(Target)
  std::string backend;    // the backend that compiled the PTX
  bool emulated = false;  // sm_90: the Kernel binds emulated TMEM at each launch
  std::vector<CompileReport::Transfer> transfers;
  std::vector<std::string> instructions;  // emulation: status code k + 1 describes instructions[k]
  // compile_transfer's emulated harness kernels (sm_90): status code k + 1 is checked[k]
  // (kernels::check_emulation_status).
  std::vector<kernels::EmulatedInstruction> checked;
  std::vector<std::string> warnings;
  std::string headers;  // CompileReport::headers of the compile
  int include_files = 0;
  CodeStats code;   // read from the cubin when it was compiled
  std::string log;  // the compilers' logs

  std::string to_json() const;
  // kIo naming what is wrong for text that is not this format's JSON (a damaged or foreign entry):
  // a number out of its field's range (never converted), or an entry of another kind than `kind`
  // ("kernel" for compile_kernel's keys, "transfer" for compile_transfer's), is damage too.
  static Result<KernelEntryMeta> parse(std::string_view text, std::string_view kind = "kernel");
};

}  // namespace tmem
