// Embeddable transfers for users' own kernels (docs/design.md §Codegen, §Specialization): the
// `.visible .func` form of a Plan, the CUDA C++ form (inline asm, or the emulated form for sm_90),
// the lifecycle helpers, NAME_coord's index map, and what compile_kernel's NVRTC front end sees of
// a transfer.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/ptx/ir.h"
#include "tmem/device_function.h"
#include "tmem/plan.h"
#include "tmem/result.h"
#include "tmem/target.h"
#include "tmem/transfer.h"

namespace tmem::kernels {

// The function's default name, "tmem_transfer".
std::string device_function_name();

// Builds a module holding only
//   st: .visible .func NAME(.param .b32 tmem_base, .param .b32 slot0, .., slot<N-1>
//                           [, .param .b32 warp] [, .param .b32 column])
//   ld: .visible .func (.param .align 4 .b8 regs[4N]) NAME(.param .b32 tmem_base
//                           [, .param .b32 warp] [, .param .b32 column])
// with N = plan.regs_per_thread: parameter slot<s>, or bytes [4s, 4s+4) of `regs`, is register
// slot s of the plan (regs[s] of the CUDA C++ form); ld returns 0 in slots the plan does not load.
// The return is one aggregate because ptxas takes several return parameters only as .reg, which
// is not the callable ABI. Contract for the caller: the warp (%tid.x / 32, or `warp`) plays the
// plan's group; every thread of the warp calls it (.sync.aligned); tmem_base is what
// tcgen05.alloc wrote; the columns are allocated. It ends with wait::st or wait::ld unless
// options.wait is false. A whole-program compile drops an uncalled .func: compile it as
// relocatable code (ptxas -c) and link it, or put the caller in the same module.
// options.name names the function (default "tmem_transfer"); options.language is ignored.
Result<ptx::Module> build_device_function(const Plan& plan, Target target = Target::kSm100a,
                                          const DeviceFunctionOptions& options = {});

// ---- NAME_coord -------------------------------------------------------------------------------

// One value of NAME_coord's index as closed-form arithmetic:
// constant + sum over set bits b of `thread` of thread_bits[b] + the same over `slot`.
struct CoordTerms {
  std::int64_t constant = 0;
  std::vector<std::int64_t> thread_bits;
  std::vector<std::int64_t> slot_bits;
};

// The runs of bits whose weights double: a bit field times its lowest weight. The PTX and CUDA
// C++ forms of NAME_coord evaluate a weight vector of CoordTerms run by run.
struct BitRun {
  int first = 0;
  int count = 0;
  std::int64_t weight = 0;
};
std::vector<BitRun> bit_runs(const std::vector<std::int64_t>& weights);

// NAME_coord's closed form for one half of the slots: additive over thread and slot bits, or per
// used slot (thread terms only), or neither (NAME_coord then returns -1).
struct CoordForm {
  bool additive = false;
  std::vector<CoordTerms> dims;
  std::vector<std::pair<int, std::vector<CoordTerms>>> per_slot;
  bool expressible = true;
};

// Which element of the register tensor (its logical index, before rearrange/view/permute/[])
// each thread of the scope holds in each register slot: what NAME_coord returns.
struct CoordMap {
  int threads = 0;  // threads of the scope: 32 (warp), 128 (warpgroup), 32 * NW (cta)
  int slots = 0;    // the plan's registers per thread
  int halves = 1;   // 2 for a 16-bit register view: each slot holds two elements
  int rank = 0;     // the register tensor's rank
  std::vector<std::int64_t> shape;  // the register tensor's shape (as written): NAME_shape
  std::vector<std::pair<int, int>> used_slots;  // [begin, end) ranges of the slots the plan moves
  // index(thread, slot)[d] = dims[d] evaluated, for every thread < threads and used slot...
  bool additive = false;
  std::vector<CoordTerms> dims;
  // ... or, when that does not hold, per used slot (thread terms only; slot_bits empty).
  std::vector<std::pair<int, std::vector<CoordTerms>>> per_slot;
  bool expressible = true;  // false: neither form holds; NAME_coord returns -1 (never so far)
  // halves == 2: the closed form of the high halves, for NAME_coord(thread, slot, half, index).
  CoordForm high;
  std::vector<int> table;  // [thread][slot][half][dim], -1 where unused: the reference

  // The element in the slot's low half (the only one for 32-bit views): what NAME_coord gives.
  int at(int thread, int slot, int dim) const noexcept { return at(thread, slot, 0, dim); }
  int at(int thread, int slot, int half, int dim) const noexcept {
    return table[((static_cast<size_t>(thread) * static_cast<size_t>(slots) +
                   static_cast<size_t>(slot)) *
                      static_cast<size_t>(halves) +
                  static_cast<size_t>(half)) *
                     static_cast<size_t>(rank) +
                 static_cast<size_t>(dim)];
  }
  bool slot_used(int slot) const noexcept;
};
// How much of the map to compute: the reference table with the closed forms fitted to it, or only
// the closed forms (the generic tier's descriptor), which a view that permutes bits gives from a
// few elements (the table is then left empty; other views get the table anyway).
enum class CoordDetail { kTable, kForm };
// Requires: plan == check(spec). The table holds both halves of a 16-bit register; the closed
// forms (dims, per_slot) describe the low half, which NAME_coord returns.
Result<CoordMap> coord_map(const TransferSpec& spec, const Plan& plan,
                           CoordDetail detail = CoordDetail::kTable);

// ---- a transfer ready for code generation ------------------------------------------------------

struct TransferCode {
  Plan plan;
  CoordMap coord;
  DeviceFunctionOptions options;
  bool f32 = false;  // the register view's dtype is f32: the float overload exists
  int first_id = 1;  // emulation: the status code of the transfer's first instruction
};

// kUsage unless `name` is a C identifier that is neither a C++ keyword nor reserved: a leading
// "__" or "tmemjit", a CUDA built-in, a type or namespace a kernel names (uint32_t, size_t, std,
// dim3, float4, ...) or an identifier of the generated code itself (its parameters tmem_base,
// regs, warp, column, thread, slot, index and its locals); `what` says whose name it is.
Status check_identifier(std::string_view name, std::string_view what = "transfer name");
// The names a transfer defines: NAME, NAME_regs, NAME_is_load, NAME_wait, NAME_coord,
// NAME_redval(s), NAME_shape, NAME_columns, NAME_alloc_columns.
std::vector<std::string> transfer_symbols(const std::string& name);
// The identifiers the generated code uses besides a transfer's own symbols (check_identifier
// refuses them): parameters, locals, helper namespaces and the types they name.
std::span<const std::string_view> generated_identifiers() noexcept;

// The TMEM columns one call of the plan spans: one past its highest column less its lowest access
// column (every group). NAME_columns, the step of a chunk loop that moves the transfer with
// column_argument.
int columns_spanned(const Plan& plan) noexcept;

// check(spec), the coord map and the name check, as the generators need them.
Result<TransferCode> prepare_transfer(const TransferSpec& spec,
                                      const DeviceFunctionOptions& options,
                                      CoordDetail detail = CoordDetail::kTable);

// The CUDA C++ lifecycle block (namespace tmemjit: alloc, dealloc, fence_before_sync,
// fence_after_sync; for sm_90 also the emulation state and helpers), guarded by a macro so that
// it is defined once per translation unit. `extern_state`: the emulation state is declared, not
// defined (a second translation unit of the same program).
// cta_group 2: the CTA pair's lifecycle (alloc/dealloc/relinquish with .cta_group::2) and
// tmemjit::cluster_sync(), the cluster barrier that orders the peers (docs/tcgen05-rules.md
// §Lifecycle, R29/R31).
std::string cuda_lifecycle(Target target, bool extern_state = false, int cta_group = 1);
// The transfer's CUDA C++ functions, inline: tcgen05 asm, or the emulated form for sm_90.
std::string cuda_transfer(const TransferCode& code, Target target);

// A PTX kernel's transfers emulated for sm_90: CUDA C++ defining, as extern "C" functions with
// the ABI of add_transfer_functions and add_lifecycle_functions, NAME, NAME_wait, NAME_coord
// and the tmemjit_* lifecycle (the pair's with tmemjit_cluster_sync when the codes say cta_group
// 2), plus the emulation state; NVRTC compiles it to relocatable PTX that compile_kernel splices
// into the user's module in place of the real .funcs.
std::string cuda_emulated_ptx_functions(const std::vector<const TransferCode*>& codes);
// Adds the transfer's .funcs to `module`: NAME (as build_device_function), NAME_wait and
// NAME_coord under the given symbols (`wait_symbol` empty: no wait function).
Status add_transfer_functions(ptx::Module& module, const TransferCode& code,
                              const std::string& transfer_symbol, const std::string& wait_symbol,
                              const std::string& coord_symbol);
// Adds the PTX lifecycle .funcs: tmemjit_alloc(.b32 smem_address, .b32 columns),
// tmemjit_dealloc(.b32 tmem_base, .b32 columns), tmemjit_fence_before_sync(),
// tmemjit_fence_after_sync(); with cta_group 2 the pair's forms and tmemjit_cluster_sync().
void add_lifecycle_functions(ptx::Module& module, int cta_group = 1);

// The one cta_group of the lifecycle shared by `codes` (1 when empty): their
// DeviceFunctionOptions::cta_group must agree, since every tcgen05 instruction of a kernel uses
// one .cta_group (R27: kRule naming both transfers); a value other than 1 or 2 is kUsage.
Result<int> lifecycle_cta_group(std::span<const TransferCode> codes);

// The emulation's description of status code `first_id + k` of the transfer: its instruction.
std::vector<std::string> emulated_instructions(const TransferCode& code);

// The PTX module text without its header (.version, .target, .address_size), for splicing
// functions into another module.
std::string ptx_without_header(const std::string& ptx);

}  // namespace tmem::kernels
