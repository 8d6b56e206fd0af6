// Compiler backends and their options: how PTX (or the CUDA C++ form) becomes a cubin.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tmem/export.h"
#include "tmem/result.h"
#include "tmem/target.h"

TMEMJIT_API_BEGIN
namespace tmem {

// Which compiler turns the generated code into a cubin (DESIGN.md §4, docs/compile-backends.md).
enum class Backend {
  kNvJitLink,      // libnvJitLink, in-process; compiles PTX as relocatable code, which costs about
                   // 640 B of code per kernel (docs/compile-backends.md)
  kPtxas,          // the ptxas executable as a subprocess (whole-program compile)
  kNvrtc,          // NVRTC, in-process, for the CUDA C++ (inline asm) form
  kDriver,         // the driver's own PTX JIT (cuLink*), only where libcuda exists
  kNvPtxCompiler,  // nvPTXCompiler, in-process ptxas (whole-program); only when built in
  kAuto,           // the default: kNvPtxCompiler when built in, else kNvJitLink
};

// "nvjitlink", "ptxas", "nvrtc", "driver", "nvptxcompiler", "auto"
std::string_view to_string(Backend backend) noexcept;
Result<Backend> parse_backend(std::string_view text);  // names the allowed set on failure
std::span<const Backend> all_backends() noexcept;      // every name above, kAuto last

struct CompileOptions {
  Target target = Target::kSm100a;
  Backend backend = Backend::kAuto;  // resolved when compiling, and before any cache key
  int opt_level = 3;                 // ptxas -O0..-O3
  bool line_info = false;            // -lineinfo
  bool tmem_access_check = false;    // ptxas -g-tmem-access-check: run-time TMEM guardrail traps
  // When not empty, every compile writes NAME.ptx (or NAME.cu), NAME.cubin, NAME.log and, where a
  // disassembler exists, NAME.sass into this directory (NAME = tmemjit_<hash of the input>).
  // The input is written before compiling, so a failing compile keeps it too.
  std::string keep_dir;
  // Passed to the backend unchanged after the options above (e.g. "-maxrregcount=64").
  std::vector<std::string> extra_options;

  friend bool operator==(const CompileOptions&, const CompileOptions&) = default;
};

// The options as one line of text, e.g. "target=sm_100a backend=nvjitlink -O3", for error details
// and cache keys. It prints the backend as given ("backend=auto"): resolve it first where the text
// must name the compiler that runs (a cache key).
std::string to_string(const CompileOptions& options);

// A compiled module: the cubin, the code it came from and what the compiler said.
struct CompiledModule {
  std::vector<char> cubin;
  std::string ptx;                        // the PTX input (or, for NVRTC, the CUDA C++ source)
  std::string log;                        // compiler info log (warnings); empty when silent
  Backend backend = Backend::kNvJitLink;  // the backend that ran: never kAuto
  Target target = Target::kSm100a;
  double compile_ms = 0;   // wall time of the backend call
  std::string entry_name;  // NVRTC: the lowered name of the requested kernel; else empty
};

}  // namespace tmem
TMEMJIT_API_END
