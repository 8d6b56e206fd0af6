// Compiler backends and their options: how PTX (or the CUDA C++ form) becomes a cubin.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tmem/code_stats.h"
#include "tmem/export.h"
#include "tmem/result.h"
#include "tmem/span.h"
#include "tmem/target.h"

TMEMJIT_API_BEGIN
namespace tmem {

// Which compiler turns the generated code into a cubin (docs/design.md §Codegen,
// docs/compile-backends.md).
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

// compile_kernel's compiler of CUDA C++ (docs/specialization.md "nvcc as the front end").
enum class FrontEndCompiler {
  kNvrtc,  // the default: NVRTC in-process, with precompiled headers
  kNvcc,   // the toolkit's nvcc as a subprocess: a kernel's SASS is what nvcc makes of it
};
// "nvrtc", "nvcc"
std::string_view to_string(FrontEndCompiler compiler) noexcept;
Result<FrontEndCompiler> parse_front_end(std::string_view text);  // names the allowed set
Span<const Backend> all_backends() noexcept;                      // every name above, kAuto last

// How compile_kernel answers a layout (docs/specialization.md §Tiers). The generic tier is one
// compile per source and transfer signature (registers per thread, scope, options) that reads
// each layout's opcode, offsets and index weights from constant memory: a new layout then costs
// its descriptor, not a compile. It runs slower than the specialized kernel, by an amount that
// depends on the layout: an autotuner times the specialized tier.
enum class Specialization {
  kEager,    // the specialized kernel, compiled by this call when no cache has it (the default)
  kLazy,     // the generic tier at once when a cache has it, while the specialized kernel compiles
             // in the background and takes over (Kernel::tier, Kernel::wait_specialized); when no
             // cache has it, eager, and the generic tier is built in the background for the next
             // layout. Plans the generic tier cannot express are eager (CompileReport::tier_reason)
  kGeneric,  // the generic tier only (compiled by this call when no cache has it)
};
std::string_view to_string(Specialization specialization) noexcept;  // "eager", "lazy", "generic"
Result<Specialization> parse_specialization(std::string_view text);  // names the allowed set

struct CompileOptions {
  Target target = Target::kSm100a;
  Backend backend = Backend::kAuto;  // resolved when compiling, and before any cache key
  int opt_level = 3;                 // ptxas -O0..-O3
  bool line_info = false;            // -lineinfo
  bool tmem_access_check = false;    // ptxas -g-tmem-access-check: run-time TMEM guardrail traps
  // The harness kernels' TMEM lifecycle (compile_transfer, transfer_ptx): 1, one CTA allocates;
  // 2, a CTA pair allocates together with .cta_group::2 for 2-SM MMAs (docs/tcgen05-rules.md
  // §Lifecycle, R29): the kernel must be launched as a cluster of 2 CTAs (docs/kernel-forms.md).
  // Other values: kUsage.
  int cta_group = 1;
  // When not empty, every compile writes NAME.ptx (or NAME.cu), NAME.cubin, NAME.log and, where a
  // disassembler exists, NAME.sass into this directory (NAME = tmemjit_<hash of the input>;
  // compile_kernel: <entry>-<transfers' opcodes>_<hash>, so kernels in one folder tell apart).
  // The input is written before compiling, so a failing compile keeps it too. The directory is
  // made when missing; one that cannot be made or written is a kIo error naming keep_dir.
  std::string keep_dir;
  // The options of each compiler, after the library's own, each one element (a two-part option
  // such as "-include F" is two elements): compile_kernel validates both lists before it compiles,
  // and a wrong option is a kUsage error quoting the compiler's own message.
  //   nvrtc_options: NVRTC, the CUDA C++ front end of compile_kernel (and of Backend::kNvrtc),
  //     e.g. "-std=c++20", "-default-device", "-I/path", "--diag-suppress=177". The defaults,
  //     "--std=c++17" (left out when you name a standard) and the toolkit's include and
  //     include/cccl (searched after your -I), yield to yours (docs/specialization.md).
  //   ptx_options: the PTX compiler (the backend), e.g. "-maxrregcount=64", "--verbose".
  std::vector<std::string> nvrtc_options;
  std::vector<std::string> ptx_options;
  // Older form: passed to the backend unchanged after the options above; compile_kernel sends
  // the front end's options among them (-D, -I, -std, -include, ...) to NVRTC. Prefer the two
  // lists above, which say where each option goes.
  std::vector<std::string> extra_options;
  // compile_kernel only: headers, as `#include <...>` names them, parsed once for every layout:
  // they are included first, before the source, and precompiled with NVRTC's precompiled headers
  // wherever the source includes <tmemjit/transfers.cuh> (a header-only library's own header
  // included). One whose include closure reaches the transfers is kUsage
  // (docs/specialization.md "Header-only libraries").
  std::vector<std::string> precompile;
  // compile_kernel only: the compiler of a CUDA source. kNvcc runs the toolkit's nvcc
  // ($TMEMJIT_NVCC, else $CUDA_HOME/bin/nvcc, else nvcc on PATH) with nvrtc_options as its options
  // (the same -I, -D, -std; nvcc's own such as -Xcompiler too), without precompiled headers; part
  // of the key.
  FrontEndCompiler front_end = FrontEndCompiler::kNvrtc;
  // compile_kernel only: which tier answers (above). Not part of any cache key: eager and lazy
  // share the specialized kernel, lazy and generic the generic tier.
  Specialization specialization = Specialization::kEager;

  friend bool operator==(const CompileOptions& a, const CompileOptions& b) {
    return a.target == b.target && a.backend == b.backend && a.opt_level == b.opt_level &&
           a.line_info == b.line_info && a.tmem_access_check == b.tmem_access_check &&
           a.cta_group == b.cta_group && a.keep_dir == b.keep_dir &&
           a.nvrtc_options == b.nvrtc_options && a.ptx_options == b.ptx_options &&
           a.extra_options == b.extra_options && a.precompile == b.precompile &&
           a.front_end == b.front_end && a.specialization == b.specialization;
  }
  friend bool operator!=(const CompileOptions& a, const CompileOptions& b) { return !(a == b); }
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

// True when libtmemjit was built with nvPTXCompiler (cmake/TmemjitNvPtxCompiler.cmake).
bool nvptxcompiler_built_in() noexcept;

// The backend that `backend` stands for: kAuto is kNvPtxCompiler when built in (whole-program code,
// as compact as ptxas, in-process), else kNvJitLink. kNvJitLink (given or from kAuto) becomes
// kPtxas when libnvJitLink cannot be loaded, with one warning on stderr per process; every other
// backend is itself.
Backend resolve_backend(Backend backend) noexcept;

// Compiles PTX for options.target with resolve_backend(options.backend): kNvJitLink,
// kNvPtxCompiler (in-process), kPtxas (subprocess) or kDriver (the driver's JIT; kDriver errors
// where no driver exists). kNvrtc takes CUDA C++ (see compile_cuda) and is a kUsage error here.
// "-c" in options.extra_options compiles relocatable code (nvPTXCompiler, ptxas). Not cached.
// Every failure is Error(kToolchain, "<stage> failed: <reason>") -- kDriver for a missing driver --
// whose details hold the backend, the options, the full compiler log and the PTX.
Result<CompiledModule> compile_ptx(const std::string& ptx, const CompileOptions& options);

// Compiles CUDA C++ with NVRTC straight to a cubin for options.target; options.backend is ignored
// and the result says kNvrtc. `kernel_name`, when not empty, is registered as a name expression
// and its lowered (mangled) name is returned in CompiledModule::entry_name. Not cached.
Result<CompiledModule> compile_cuda(const std::string& cuda_source, const std::string& kernel_name,
                                    const CompileOptions& options);

// Which tier answered a cached compile (CompileReport::cache): compiled by this call, memory,
// the disk cache, or the remote cache.
enum class CacheSource { kCompiled, kMemory, kDisk, kRemote };
// "miss", "memory", "disk", "remote" (the `cache` field of `tmemjit specialize --json`).
std::string_view to_string(CacheSource source) noexcept;

// What one cached compile did (compile_transfer and compile_kernel with a report).
struct CompileReport {
  CacheSource cache = CacheSource::kCompiled;  // who answered (kCompiled: this call compiled)
  bool cache_enabled = true;              // false: caching was off, so this call compiled uncached
  Backend backend = Backend::kNvJitLink;  // the resolved backend of the final compile
  double compile_ms = 0;                  // wall time of the compile this call ran; 0 on a hit
  std::string key;                        // the cache key, 32 hex digits
  std::string log;                    // the compiler's log kept with the entry (also after a hit)
  std::vector<std::string> warnings;  // e.g. a transfer the source never calls

  // compile_kernel only.
  // Where the parse of the source's headers came from: kCompiled (parsed by this call), kMemory
  // (NVRTC's precompiled headers of an earlier layout, in this process); for a hit, the tier.
  CacheSource front_end_cache = CacheSource::kCompiled;
  // What NVRTC did with the headers: "deferred: ..." (a prefix's first compile, its precompiled
  // header made in the background), "reused", "created" (made by this compile), "none" (no header
  // before the include of tmemjit/transfers.cuh), or why they were off (docs/specialization.md).
  std::string headers;
  double front_end_ms = 0;    // NVRTC time of this call (0 on a hit and for PTX sources)
  double ptx_compile_ms = 0;  // its whole-program PTX compile (0 on a hit)
  // The LTO link of the route compile_kernel had before 0.2.0; always 0 now, and removed in the
  // release after 0.2.0 (CHANGELOG.md). Static, so that `report.link_ms` still reads while copies
  // of a report raise no warning (a deprecated data member warns in every implicit copy).
  [[deprecated(
      "compile_kernel has no link stage since 0.2.0: link_ms is always 0; its time is in "
      "front_end_ms and ptx_compile_ms (CHANGELOG.md)")]] static constexpr double link_ms = 0;
  std::string entry;      // the entry's name in the cubin (lowered for C++ names)
  int include_files = 0;  // files of the source's include closure in the cache key
  // The kernel's code, read from its cubin (registers, local memory, instructions; LDTM/STTM).
  CodeStats code;
  struct Transfer {
    std::string name;
    std::string op;
    int regs_per_thread = 0;
    int instructions_per_warp = 0;
    int alloc_columns = 0;
  };
  std::vector<Transfer> transfers;
  // The tier the returned Kernel runs first ("specialized" or "generic", as Kernel::tier), and,
  // when the tier asked for is not the one returned, why: a plan the generic tier cannot express
  // (naming the transfer), or, for lazy, that no cache had the generic tier yet.
  std::string tier = "specialized";
  std::string tier_reason;
};

// True once exit() has begun (docs/reliability.md "Exit"): compiles are refused from then on, and
// exit waits for those in flight. A binding that released a lock for a compile (Python's GIL) must
// not take it back then.
bool process_exiting();

}  // namespace tmem
TMEMJIT_API_END
