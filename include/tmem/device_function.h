// A transfer as a device function for the user's own kernel (docs/specialization.md): its options,
// the generated code, and the user's kernel with its named transfers, which compile_kernel
// (tmem/specialize.h) compiles. The kernels stage implements it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tmem/export.h"
#include "tmem/opcode.h"
#include "tmem/result.h"
#include "tmem/target.h"
#include "tmem/transfer.h"

TMEMJIT_API_BEGIN
namespace tmem {

// The language of generated device code and of a user's kernel source.
enum class Language { kCuda, kPtx };
std::string_view to_string(Language language) noexcept;  // "cuda", "ptx"
Result<Language> parse_language(std::string_view text);  // names the allowed set on failure

struct DeviceFunctionOptions {
  // A C identifier (letters, digits, '_', not starting with a digit, not a C++ keyword, not
  // starting with "tmemjit" or "__"): the function is NAME, its helpers NAME_wait, NAME_coord and
  // NAME_regs. kUsage otherwise.
  std::string name = "tmem_transfer";
  Language language = Language::kCuda;
  bool wait = true;              // false: the caller calls NAME_wait() itself (overlap a load)
  bool warp_argument = false;    // true: the caller passes the warp's index (warp-specialized)
  bool column_argument = false;  // true: the caller passes a column offset added to every address
  // The lifecycle helpers' .cta_group (docs/tcgen05-rules.md §Lifecycle): 1, one warp of the CTA
  // allocates; 2, a CTA pair (a cluster of 2 CTAs, for 2-SM MMAs) allocates together, one warp in
  // each CTA, and tmemjit::cluster_sync() (PTX: tmemjit_cluster_sync) orders the peers
  // (docs/specialization.md). Transfers compiled into one kernel share one value (R27); other
  // values are kUsage.
  int cta_group = 1;
  friend bool operator==(const DeviceFunctionOptions& a, const DeviceFunctionOptions& b) {
    return a.name == b.name && a.language == b.language && a.wait == b.wait &&
           a.warp_argument == b.warp_argument && a.column_argument == b.column_argument &&
           a.cta_group == b.cta_group;
  }
  friend bool operator!=(const DeviceFunctionOptions& a, const DeviceFunctionOptions& b) {
    return !(a == b);
  }
};

// A transfer as code to embed in a kernel. The device contract (CUDA form; the PTX form has the
// same names as .func, docs/specialization.md), for a transfer named N with R registers/thread:
//
//   constexpr int N_regs = R;
//   __device__ void N(uint32_t tmem_base, uint32_t (&regs)[R] [, uint32_t warp] [, uint32_t
//   column]);
//   __device__ void N(uint32_t tmem_base, float (&regs)[R] ...);  // register view's dtype f32
//   __device__ void N_wait();                          // tcgen05.wait::ld / ::st
//   __device__ void N_coord(uint32_t thread, int slot, int (&index)[RANK]);
//   namespace tmemjit { alloc, dealloc, fence_before_sync, fence_after_sync }  // once per module
//
// ld fills regs, st reads them; regs[s] is register slot s of the plan. `warp` (with
// warp_argument) is the warp's index as the address uses it: its lane slab is 32 * (warp % 4) and
// its column offset the plan's group stride times (warp % 4) (plus the warpgroup stride times
// warp / 4 at cta scope): pass the warp's rank in the warpgroup at warpgroup scope, the CTA warp
// id at cta and warp scope. Without it the functions use threadIdx.x / 32. `column` (with
// column_argument) is added to every TMEM address; the allocation must cover it. N_coord gives
// the logical index, in the register tensor as written (before rearrange/view/permute/[]), that
// `thread` (laneid | tid_in_wg | tx: numbered in the scope) holds in register slot `slot` (the low
// half for 16-bit register dtypes); -1 in every entry where the plan leaves the slot unused.
// tcgen05.ld.red adds `constexpr int N_redval, N_redvals;`: instruction k's min/max is
// regs[N_redval + k] for k < N_redvals (slots after the register view's; R counts them, N_coord
// gives -1 there). Its targets are sm_103a/f and sm_110a/f, or sm_90 emulated (rule R14).
// No __global__ and no extern "C": several transfers share one file.
struct DeviceFunction {
  std::string name;       // options.name
  std::string source;     // CUDA C++ or PTX text
  std::string signature;  // the declaration of N itself, e.g. "__device__ void acc(uint32_t ...)"
  Language language = Language::kCuda;
  Direction direction = Direction::kLoad;
  int regs_per_thread = 0;        // R, N_regs
  int instructions_per_warp = 0;  // tcgen05.ld/st per warp per call
  int alloc_columns = 0;          // the smallest allocation the transfer fits (without `column`)
  int coord_rank = 0;             // RANK of N_coord: the register tensor's rank
  Target target = Target::kSm100a;
};

// The device function of `spec` (check()ed first: its rule errors come back as they are). With
// Target::kSm90 the emulated form: TMEM in global memory, bound by compile_kernel's Kernel when
// it launches (docs/specialization.md); every other target gets the real tcgen05 code.
Result<DeviceFunction> device_function(const TransferSpec& spec,
                                       const DeviceFunctionOptions& options = {},
                                       Target target = Target::kSm100a);

// A user's kernel: CUDA C++ that writes `#include <tmemjit/transfers.cuh>` (compile_kernel
// provides that header, generated for the given transfers), or PTX that calls the generated
// .funcs (their definitions are added to the module, in the user's .version and .target).
struct KernelSource {
  Language language = Language::kCuda;
  std::string text;
  std::string entry;  // the __global__ function (extern "C" name, plain name or name expression)
  std::string path;   // the file name compiler messages use; default "kernel.cu" / "kernel.ptx"
};

// One transfer of a kernel; options.name names it (options.language is the source's).
struct NamedTransfer {
  TransferSpec spec;
  DeviceFunctionOptions options;
};

// One spec-file format for every reader (TransferSpec::from_json, tmemjit check / plan / compile
// --spec, tmemjit specialize --transfer N=SPEC.json, Python's TransferSpec.from_json and
// spec_file): the JSON object of TransferSpec::from_json (op, scope, tmem, regs[, tmem2, imm])
// that may also carry the device function's options: "name" (a string), "wait",
// "warp_argument", "column_argument" (booleans) and "cta_group" (1 or 2). Any other key is
// kParse, naming the key and the allowed set.
struct SpecFile {
  TransferSpec spec;
  DeviceFunctionOptions options;         // `defaults` with the options the file names
  std::vector<std::string> option_keys;  // the option keys the file names, in the order above
};
Result<SpecFile> parse_spec_file(std::string_view json, const DeviceFunctionOptions& defaults = {});

}  // namespace tmem
TMEMJIT_API_END
