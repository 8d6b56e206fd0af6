// The generic tier of compile_kernel (docs/specialization.md §Tiers): a transfer whose layout is
// data. Between two layouts with the same registers per thread, a plan differs only in its opcode,
// its instruction offsets and its NAME_coord weights; the generic form reads them from a
// per-transfer __constant__ descriptor (tmemjit_desc_NAME), so one compile serves every layout of
// a GenericSignature and a new layout costs only its descriptor.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/device_function.h"
#include "tmem/target.h"

namespace tmem::kernels {

// Everything of a transfer that the generic tier compiles in: two layouts with equal signatures
// share one generic kernel.
struct GenericSignature {
  std::string name;
  bool load = true;
  int regs = 0;         // N_regs
  std::string scope;    // Scope::to_string(): the warp address arithmetic
  int threads = 0;      // threads of the scope: NAME_coord's range
  int rank = 0;         // NAME_coord's index rank
  int halves = 1;       // 2 for a 16-bit register view (NAME_coord's half overload)
  bool f32 = false;     // the float overload exists
  bool packed = false;  // .pack::16b / .unpack::16b: its granules are other instructions
  bool wait = true;
  bool warp_argument = false;
  bool column_argument = false;
  // The contract's layout constants the source names (NAME_shape, NAME_columns,
  // NAME_alloc_columns): the generic tier defines only these, with this layout's values, so a
  // layout that changes one needs another generic tier. Pairs of (symbol, C++ definition).
  std::vector<std::pair<std::string, std::string>> constants;

  // One line naming every field: the generic tier's key and its description in reports.
  std::string text() const;
};

// A transfer ready for the generic tier: its signature and this layout's descriptor words.
struct GenericTransfer {
  GenericSignature signature;
  std::vector<std::uint32_t> descriptor;  // tmemjit_desc_NAME, written before the first launch
};

// The generic form of one prepared transfer, or why its plan cannot be data (the transfer then
// keeps the specialized path, and CompileReport::tier_reason says why).
struct GenericForm {
  std::optional<GenericTransfer> transfer;
  std::string why_not;  // set when transfer is empty
};
// `source` is the user's kernel text: which layout constants it names (mentions_identifier).
GenericForm generic_form(const TransferCode& code, Target target, std::string_view source);

// The descriptor symbol of a transfer: "tmemjit_desc_" + name (extern "C", so the driver finds it
// by that name; the tmemjit prefix is reserved, so no user symbol collides).
std::string generic_descriptor_symbol(std::string_view name);

// tmemjit/transfers.cuh of the generic tier: the lifecycle, then every transfer's generic
// functions and descriptor. Every .xN is N/G copies of its shape's smallest form .xG (the
// granule) side by side in TMEM, so a layout's instructions become granules at base +
// offset[j]: for a tcgen05 target each transfer is a switch over the granules (one case per
// shape and packing, each issuing R / n granules with compile-time registers); for sm_90 the
// emulation reads the granule's native image from the descriptor.
std::string generic_transfers_header(std::span<const GenericTransfer> transfers, int cta_group,
                                     Target target);

// The granules the generic switch covers for (direction, packing, registers): the smallest .xN of
// every shape but 16x32bx2 (its half-split offset is an immediate) whose registers fit; the
// descriptor's word 0 indexes this list.
std::vector<Opcode> generic_granules(bool load, bool packed, int regs);

// Whether `op` is op.num() / granule.num() copies of `granule`, side by side in TMEM: register r
// of op is register r % n of granule copy r / n, whose cells sit granule.atom_tmem_cols() columns
// further per copy (docs/specialization.md §Tiers): op's native_image_map is the granule's times
// N/G copies (BitLinearMap::product).
bool is_granule_copies(const Opcode& op, const Opcode& granule);

}  // namespace tmem::kernels
