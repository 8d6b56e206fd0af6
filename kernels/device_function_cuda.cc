// The CUDA C++ form of a transfer (kernels/device_function.h): the inline functions (tcgen05 asm,
// or the sm_90 emulation), NAME_coord and the layout constants as C++, the lifecycle block, and
// the sm_90 emulation of the PTX form's .funcs.
#include <algorithm>
#include <sstream>

#include "kernels/device_function.h"
#include "kernels/emulation_kernels.h"
#include "tmem/image.h"

namespace tmem::kernels {
namespace {

constexpr const char* kU = "unsigned int";

// C++ text of sum over runs of ((var >> first) & mask) * weight, as int.
std::string cuda_terms(const std::string& var, const std::vector<std::int64_t>& weights) {
  std::string text;
  for (const BitRun& run : bit_runs(weights)) {
    std::string field = var;
    if (run.first) field = "(" + var + " >> " + std::to_string(run.first) + "u)";
    field = "static_cast<int>(" + field + " & " + std::to_string((1u << run.count) - 1) + "u)";
    if (run.weight != 1) field += " * " + std::to_string(run.weight);
    text += " + " + field;
  }
  return text;
}

std::string u32(std::int64_t value) {
  return std::to_string(static_cast<std::uint32_t>(static_cast<std::uint64_t>(value))) + "u";
}

std::string transfer_params(const TransferCode& code, const std::string& element) {
  std::string text = std::string(kU) + " tmem_base, " + element + " (&regs)[" +
                     std::to_string(code.plan.regs_per_thread) + "]";
  if (code.options.warp_argument) text += ", " + std::string(kU) + " warp";
  if (code.options.column_argument) text += ", " + std::string(kU) + " column";
  return text;
}

// The warp's TMEM address, as plan_code's emit_warp_address computes it.
std::string cuda_warp_address(const TransferCode& code) {
  const Plan& plan = code.plan;
  const std::string warp = code.options.warp_argument ? "warp" : "(threadIdx.x / 32u)";
  std::string text = "  const " + std::string(kU) + " warp_ = " + warp + ";\n  const " + kU +
                     " taddr_ = tmem_base + ((warp_ % 4u) << 21)";
  if (plan.scope.kind() != Scope::Kind::kWarp) {
    if (plan.group_column_stride) text += " + (warp_ % 4u) * " + u32(plan.group_column_stride);
    if (plan.warpgroup_column_stride)
      text += " + (warp_ / 4u) * " + u32(plan.warpgroup_column_stride);
  }
  if (code.options.column_argument) text += " + column";
  return text + ";\n";
}

std::string wait_asm(bool store) {
  return std::string("asm volatile(\"") +
         (store ? "tcgen05.wait::st.sync.aligned;" : "tcgen05.wait::ld.sync.aligned;") +
         "\" ::: \"memory\");";
}

// One asm statement per repeat; `constraint` is "r" (unsigned) or "f" (float).
std::string cuda_real_body(const TransferCode& code, const std::string& constraint) {
  const Plan& plan = code.plan;
  const bool store = !plan.op.is_load();
  std::ostringstream os;
  os << cuda_warp_address(code);
  for (const RepeatStep& step : plan.repeats) {
    const std::int64_t delta = (static_cast<std::int64_t>(step.lane_offset) << 16) + step.column;
    const int n = static_cast<int>(step.slots.size());
    os << "  asm volatile(\"" << plan.op.to_string() << " ";
    std::string vector = "{";
    for (int i = 0; i < n; ++i) vector += (i ? ", %" : "%") + std::to_string(store ? i + 1 : i);
    vector += "}";
    // ld.red: redval is one more output, between the vector and the address (docs/tcgen05-rules.md
    // §Syntax).
    const bool red = step.redval_slot >= 0;
    const std::string address = store ? "[%0]" : "[%" + std::to_string(n + (red ? 1 : 0)) + "]";
    const std::string imm = plan.imm ? ", " + std::to_string(*plan.imm) : "";
    if (store)
      os << address << imm << ", " << vector;
    else
      os << vector << (red ? ", %" + std::to_string(n) : "") << ", " << address << imm;
    os << ";\"\n               : ";
    if (!store) {
      for (int i = 0; i < n; ++i)
        os << (i ? ", " : "") << "\"=" << constraint << "\"(regs["
           << step.slots[static_cast<size_t>(i)] << "])";
      if (red) os << ", \"=" << constraint << "\"(regs[" << step.redval_slot << "])";
    }
    os << "\n               : \"r\"(taddr_ + " << u32(delta) << ")";
    if (store)
      for (int i = 0; i < n; ++i)
        os << ", \"" << constraint << "\"(regs[" << step.slots[static_cast<size_t>(i)] << "])";
    os << "\n               : \"memory\");\n";
  }
  if (code.options.wait) os << "  " << wait_asm(store) << "\n";
  return os.str();
}

// tcgen05.ld.red emulated (sm_90): the same PTX min/max{.NaN} (after abs.f32 with .abs) over the
// loaded registers in register order, as kernels/emulation_kernels.cc and the simulator compute
// it (tmem/reduction.h).
std::string cuda_emulated_reduction(const Reduction& reduction, const RepeatStep& step) {
  const std::string type(to_string(reduction.type));
  const std::string op =
      std::string(to_string(reduction.op)) + (reduction.nan ? ".NaN." : ".") + type;
  std::ostringstream os;
  os << "    {  // ." << reduction.to_string() << " into redval slot " << step.redval_slot << "\n";
  os << "      " << kU << " acc_ = regs[" << step.slots[0] << "], v_;\n";
  if (reduction.abs) os << "      asm(\"abs.f32 %0, %0;\" : \"+r\"(acc_));\n";
  for (size_t r = 1; r < step.slots.size(); ++r) {
    os << "      v_ = regs[" << step.slots[r] << "];\n";
    if (reduction.abs) os << "      asm(\"abs.f32 %0, %0;\" : \"+r\"(v_));\n";
    os << "      asm(\"" << op << " %0, %0, %1;\" : \"+r\"(acc_) : \"r\"(v_));\n";
  }
  os << "      regs[" << step.redval_slot << "] = acc_;\n    }\n";
  return os.str();
}

// The emulated accesses (sm_90): global loads and stores of tmemjit::emu's TMEM region.
std::string cuda_emulated_body(const TransferCode& code, const SplitImage& split) {
  const Plan& plan = code.plan;
  const bool store = !plan.op.is_load();
  const Opcode& op = plan.op;
  std::vector<std::int64_t> rows(kLaneBits), cols(kLaneBits);
  for (int b = 0; b < kLaneBits; ++b) {
    rows[static_cast<size_t>(b)] = split.lane_bits[static_cast<size_t>(b)].row;
    cols[static_cast<size_t>(b)] = split.lane_bits[static_cast<size_t>(b)].col;
  }
  std::ostringstream os;
  os << "  // " << (store ? "tcgen05.st" : "tcgen05.ld")
     << " emulated: TMEM is this CTA's region of global memory (libtmemjit emulation)\n"
     << "  asm volatile(\"// tmemjit emulated transfer " << code.options.name << "\");\n"
     << cuda_warp_address(code) << "  " << kU << "* const tm_ = tmemjit::emu::tmem();\n"
     << "  const " << kU << " l_ = tmemjit::emu::thread() % 32u;\n";
  for (size_t k = 0; k < plan.repeats.size(); ++k) {
    const RepeatStep& step = plan.repeats[k];
    const std::int64_t delta = (static_cast<std::int64_t>(step.lane_offset) << 16) + step.column;
    os << "  {  // " << op.to_string() << ", repeat " << k << "\n    " << kU << " a_ = taddr_ + "
       << u32(delta);
    if (plan.imm && split.access_bit >= 0)
      os << " + (((l_ >> " << split.access_bit << "u) & 1u) ? " << u32(*plan.imm) << " : 0u)";
    os << ";\n    const bool ok_ = tmemjit::emu::resolve(" << code.first_id + static_cast<int>(k)
       << "u, a_, " << op.atom_rows() << "u, " << op.atom_tmem_cols() << "u);\n"
       << "    const " << kU << " w_ = ((a_ >> 16)" << cuda_terms("l_", rows)
       << ") * 512u + (a_ & 0xFFFFu)" << cuda_terms("l_", cols) << ";\n";
    for (size_t r = 0; r < step.slots.size(); ++r) {
      const auto& cells = split.cells[r];
      const std::string reg = "regs[" + std::to_string(step.slots[r]) + "]";
      auto at = [&](int c) {
        const TmemCell& cell = cells[static_cast<size_t>(c)];
        return "tm_[w_ + " + u32(static_cast<std::int64_t>(cell.row) * 512 + cell.col) + "]";
      };
      if (split.cells_per_reg == 1) {
        if (store)
          os << "    if (ok_) " << at(0) << " = " << reg << ";\n";
        else
          os << "    " << reg << " = ok_ ? " << at(0) << " : 0u;\n";
      } else if (store) {  // unpack::16b: the upper 16 bits of a cell are unspecified; written 0
        os << "    if (ok_) { " << at(0) << " = " << reg << " & 0xFFFFu; " << at(1) << " = " << reg
           << " >> 16; }\n";
      } else {  // pack::16b: the low 16 bits of two cells
        os << "    " << reg << " = ok_ ? ((" << at(0) << " & 0xFFFFu) | (" << at(1)
           << " << 16)) : 0u;\n";
      }
    }
    if (step.redval_slot >= 0) os << cuda_emulated_reduction(*op.reduction(), step);
    os << "  }\n";
  }
  if (code.options.wait) os << "  tmemjit::emu::wait();\n";
  return os.str();
}

std::string coord_rank_text(const TransferCode& code) {
  return std::to_string(std::max(code.coord.rank, 1));
}

// The body of NAME_coord for one half: -1 everywhere, then the closed form where `ok_` holds.
std::string cuda_coord_body(const CoordMap& map, const CoordForm& form,
                            const std::string& condition) {
  std::ostringstream os;
  os << "  const " << kU << " s_ = static_cast<" << kU << ">(slot);\n"
     << "  const bool ok_ = " << condition << "thread < " << map.threads << "u && (";
  if (map.used_slots.empty()) os << "false";
  for (size_t i = 0; i < map.used_slots.size(); ++i)
    os << (i ? " || " : "") << "("
       << (map.used_slots[i].first ? "s_ >= " + std::to_string(map.used_slots[i].first) + "u && "
                                   : std::string())
       << "s_ < " << map.used_slots[i].second << "u)";
  os << ");\n";
  auto value = [&](const CoordTerms& terms) {
    return std::to_string(terms.constant) + cuda_terms("thread", terms.thread_bits) +
           cuda_terms("s_", terms.slot_bits);
  };
  for (int d = 0; d < map.rank; ++d) {
    os << "  index[" << d << "] = -1;\n";
  }
  if (form.expressible && form.additive) {
    os << "  if (ok_) {\n";
    for (int d = 0; d < map.rank; ++d)
      os << "    index[" << d << "] = " << value(form.dims[static_cast<size_t>(d)]) << ";\n";
    os << "  }\n";
  } else if (form.expressible) {
    os << "  if (!ok_) return;\n  switch (slot) {\n";
    for (const auto& [s, terms] : form.per_slot) {
      os << "    case " << s << ":\n";
      for (int d = 0; d < map.rank; ++d)
        os << "      index[" << d << "] = " << value(terms[static_cast<size_t>(d)]) << ";\n";
      os << "      break;\n";
    }
    os << "    default:\n      break;\n  }\n";
  }
  return os.str();
}

// NAME_coord in C++ (both targets); for a 16-bit register view also the overload with a half
// (0: bits 0-15, 1: bits 16-31), so both elements of a register are named.
std::string cuda_coord_function(const TransferCode& code) {
  const CoordMap& map = code.coord;
  const std::string& name = code.options.name;
  std::ostringstream os;
  os << "__device__ __forceinline__ void " << name << "_coord(" << kU
     << " thread, int slot, int (&index)[" << coord_rank_text(code) << "]) {\n"
     << cuda_coord_body(map, {map.additive, map.dims, map.per_slot, map.expressible}, "") << "}\n";
  if (map.halves == 2)
    os << "__device__ __forceinline__ void " << name << "_coord(" << kU
       << " thread, int slot, int half, int (&index)[" << coord_rank_text(code) << "]) {\n"
       << "  if (half == 0) {\n    " << name << "_coord(thread, slot, index);\n    return;\n  }\n"
       << cuda_coord_body(map, map.high, "half == 1 && ") << "}\n";
  return os.str();
}

// Whether N is a tcgen05.ld: both directions take the same array, so a store spec given where the
// kernel expects a load compiles and stores registers it never set. A kernel can say which it
// expects: static_assert(acc_load_is_load).
std::string direction_constant(const TransferCode& code) {
  return "constexpr bool " + code.options.name +
         "_is_load = " + (code.plan.op.is_load() ? "true" : "false") + ";\n";
}

// tcgen05.ld.red: where the reduction results are. Instruction k's min/max is regs[N_redval + k]
// for k < N_redvals (the slots after the register view's); nothing for other forms.
std::string redval_constants(const TransferCode& code) {
  const Plan& plan = code.plan;
  if (!plan.op.reduces() || plan.repeats.empty()) return {};
  const std::string& name = code.options.name;
  return "// ." + plan.op.reduction()->to_string() + ": instruction k's reduction result is regs[" +
         name + "_redval + k], k < " + name + "_redvals.\nconstexpr int " + name +
         "_redval = " + std::to_string(plan.repeats.front().redval_slot) + ";\nconstexpr int " +
         name + "_redvals = " + std::to_string(plan.instructions_per_warp()) + ";\n";
}

// The transfer's geometry as compile-time constants, so a kernel can unroll its chunk loops and
// static_assert what it assumes of a layout: the register tensor's shape (NAME_coord's index
// space; __device__ because device code may index it at run time, and constexpr so that
// static_assert and array bounds read it), the TMEM columns one call spans (the chunk step with
// column_argument) and the columns one call needs allocated.
std::string geometry_constants(const TransferCode& code) {
  const std::string& name = code.options.name;
  const std::vector<std::int64_t>& shape = code.coord.shape;
  std::string extents;
  for (size_t d = 0; d < shape.size(); ++d) extents += (d ? ", " : "") + std::to_string(shape[d]);
  if (shape.empty()) extents = "0";
  return "__device__ constexpr int " + name + "_shape[" +
         std::to_string(std::max<size_t>(shape.size(), 1)) + "] = {" + extents +
         "};  // the register tensor's shape\nconstexpr int " + name +
         "_columns = " + std::to_string(columns_spanned(code.plan)) +
         ";  // TMEM columns one call spans: the chunk step\nconstexpr int " + name +
         "_alloc_columns = " + std::to_string(code.plan.alloc_columns) +
         ";  // columns one call needs allocated\n";
}

std::string cuda_header_comment(const TransferCode& code, Target target) {
  const Plan& plan = code.plan;
  std::ostringstream os;
  os << "// " << code.options.name << ": " << plan.op.to_string() << " at scope "
     << plan.scope.to_string() << ", generated by libtmemjit"
     << (target == Target::kSm90 ? " (emulated for sm_90: TMEM in global memory)" : "") << ".\n"
     << "// " << plan.regs_per_thread << " registers per thread, " << plan.instructions_per_warp()
     << " instruction" << (plan.instructions_per_warp() == 1 ? "" : "s") << " per warp, "
     << plan.alloc_columns << " TMEM columns to allocate. regs[s] is register slot s of the plan;\n"
     << "// tmem_base is what tmemjit::alloc wrote"
     << (code.options.wait ? ""
                           : "; call " + code.options.name +
                                 "_wait() before the registers are used or the cells overwritten")
     << ".\n";
  return os.str();
}

// tmemjit::cluster_sync() of a CTA pair's lifecycle (sm_90 has the cluster barrier too, so the
// emulated form is the same); nothing for cta_group 1.
std::string cuda_cluster_sync(int cta_group) {
  if (cta_group != 2) return "";
  return "// The CTA pair's barrier (cta_group::2): every thread of both CTAs. Around it,\n"
         "// fence_before_sync/fence_after_sync order TMEM use across the pair: both peers\n"
         "// allocate before either uses, neither deallocates before the other is done, and\n"
         "// neither exits before its peer has deallocated (docs/tcgen05-rules.md §Lifecycle, "
         "R29/R31).\n"
         "__device__ __forceinline__ void cluster_sync() {\n"
         "  asm volatile(\"barrier.cluster.arrive.aligned;\" ::: \"memory\");\n"
         "  asm volatile(\"barrier.cluster.wait.aligned;\" ::: \"memory\");\n}\n";
}

}  // namespace

std::string cuda_lifecycle(Target target, bool extern_state, int cta_group) {
  const std::string group = ".cta_group::" + std::to_string(cta_group == 2 ? 2 : 1);
  std::ostringstream os;
  os << "#ifndef TMEMJIT_LIFECYCLE_DEFINED\n#define TMEMJIT_LIFECYCLE_DEFINED\n"
     << "// The TMEM lifecycle (docs/tcgen05-rules.md §Lifecycle, §Sync), once per translation "
        "unit: one whole warp calls\n"
     << "// alloc (it writes the base address to shared memory, then relinquishes the permit) and\n"
     << "// dealloc; fence_before_sync / fence_after_sync go around the __syncthreads() that "
        "hands\n"
     << "// TMEM from one warp to another.\n";
  if (target != Target::kSm90) {
    os << "namespace tmemjit {\n"
       << "__device__ __forceinline__ void alloc(" << kU << "* smem_result, " << kU
       << " columns) {\n"
       << "  " << kU << " dst;\n"
       << "  asm volatile(\"{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }\" : "
          "\"=r\"(dst) : \"l\"(smem_result));\n"
       << "  asm volatile(\"tcgen05.alloc" << group
       << ".sync.aligned.shared::cta.b32 [%0], %1;\" "
          "::\n               \"r\"(dst), \"r\"(columns) : \"memory\");\n"
       << "  asm volatile(\"tcgen05.relinquish_alloc_permit" << group
       << ".sync.aligned;\" ::: "
          "\"memory\");\n}\n"
       << "__device__ __forceinline__ void dealloc(" << kU << " tmem_base, " << kU
       << " columns) {\n"
       << "  asm volatile(\"tcgen05.dealloc" << group
       << ".sync.aligned.b32 %0, %1;\" :: "
          "\"r\"(tmem_base), \"r\"(columns)\n               : \"memory\");\n}\n"
       << "__device__ __forceinline__ void fence_before_sync() {\n"
       << "  asm volatile(\"tcgen05.fence::before_thread_sync;\" ::: \"memory\");\n}\n"
       << "__device__ __forceinline__ void fence_after_sync() {\n"
       << "  asm volatile(\"tcgen05.fence::after_thread_sync;\" ::: \"memory\");\n}\n"
       << cuda_cluster_sync(cta_group) << "}  // namespace tmemjit\n";
  } else {
    os << "// Emulated for sm_90: TMEM lives in global memory, one region per CTA, bound by\n"
       << "// libtmemjit when it launches the kernel (tmemjit::emu_state).\n"
       << "namespace tmemjit {\n"
       << "struct EmuState {\n  " << kU << "* tmem;    // " << kEmuTmemWords
       << " words per CTA: lane-major, 512 columns per lane\n  " << kU << "* status;  // "
       << kEmuUserStatusWords
       << " words per CTA: two per thread, then the header (word 0: allocated columns)\n"
       << "  unsigned long long flags;  // bit 0: strict mode (docs/emulation.md)\n};\n"
       << (extern_state ? "extern __device__ EmuState emu_state;  // defined by the kernel's side\n"
                        : "__device__ EmuState emu_state;\n")
       << "namespace emu {\n"
       << "__device__ __forceinline__ " << kU << " cta() {\n"
       << "  return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);\n}\n"
       << "__device__ __forceinline__ " << kU << " thread() {\n"
       << "  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);\n}\n"
       << "__device__ __forceinline__ " << kU << "* tmem() {\n"
       << "  if (emu_state.tmem == nullptr) __trap();  // launched without libtmemjit's binding\n"
       << "  return emu_state.tmem + static_cast<unsigned long long>(cta()) * " << kEmuTmemWords
       << "ull;\n}\n"
       << "__device__ __forceinline__ " << kU << "* status() {\n"
       << "  if (emu_state.status == nullptr) __trap();\n"
       << "  return emu_state.status + static_cast<unsigned long long>(cta()) * "
       << kEmuUserStatusWords << "ull;\n}\n"
       << "// Keeps this thread's first violation (a warning yields to a violation).\n"
       << "__device__ __forceinline__ void record(" << kU << " event, " << kU << " id, " << kU
       << " address) {\n"
       << "  " << kU << "* s = status() + 2u * (thread() % " << kEmuMaxThreads << "u);\n"
       << "  const " << kU << " old = s[0] >> 24;\n"
       << "  if (old == 0u || (old == " << static_cast<unsigned>(EmuEvent::kWarpRelative)
       << "u && event != " << static_cast<unsigned>(EmuEvent::kWarpRelative) << "u)) {\n"
       << "    s[0] = (event << 24) | id;\n    s[1] = address;\n  }\n}\n"
       << "// The lanes and columns of one access: the ISA's rules where it is explicit (R17: the\n"
       << "// warp's lane slab; R19: the allocated columns), and the warp-relative lane address\n"
       << "// (lane 0 or 16 from every warp, as DeepGEMM and TileLang pass it), which the ISA\n"
       << "// leaves open, emulated in the warp's own slab with a warning. false: skip the "
          "access.\n"
       << "__device__ __forceinline__ bool resolve(" << kU << " id, " << kU << "& address, " << kU
       << " rows, " << kU << " width) {\n"
       << "  const " << kU << " slab = 32u * ((thread() / 32u) % 4u);\n"
       << "  " << kU << " lane = address >> 16;\n"
       << "  const " << kU << " column = address & 0xFFFFu;\n"
       << "  if (slab != 0u && lane + rows <= 32u) {\n"
       << "    record(" << static_cast<unsigned>(EmuEvent::kWarpRelative) << "u, id, address);\n"
       << "    lane += slab;\n    address = (lane << 16) | column;\n  }\n"
       << "  if (lane < slab || lane + rows > slab + 32u) {\n"
       << "    record(" << static_cast<unsigned>(EmuEvent::kSlab) << "u, id, address);\n"
       << "    return false;\n  }\n"
       << "  if (column + width > status()[" << kEmuStatusWords << "]) {\n"
       << "    record(" << static_cast<unsigned>(EmuEvent::kColumns) << "u, id, address);\n"
       << "    return false;\n  }\n"
       << "  // Strict mode: columns an MMA writes until its commit (header word "
       << kEmuHeaderPending << ").\n"
       << "  if ((emu_state.flags & 1ull) != 0ull) {\n"
       << "    const " << kU << " first_ = column / 32u, last_ = (column + width - 1u) / 32u;\n"
       << "    const " << kU << " pending_ = status()[" << kEmuStatusWords + kEmuHeaderPending
       << "] >> first_;\n"
       << "    if ((pending_ & ((2u << (last_ - first_)) - 1u)) != 0u)\n"
       << "      record(" << static_cast<unsigned>(EmuEvent::kStrictPending)
       << "u, id, address);\n  }\n  return true;\n}\n"
       << "__device__ __forceinline__ void wait() {\n  __threadfence_block();\n  __syncwarp();\n}\n"
       << "}  // namespace emu\n"
       << "__device__ __forceinline__ void alloc(" << kU << "* smem_result, " << kU
       << " columns) {\n"
       << "  if (emu::thread() % 32u == 0u) {\n    *smem_result = 0u;  // lane 0, column 0\n"
       << "    emu::status()[" << kEmuStatusWords << "] = columns;\n"
       << "    // The 32-column chunks it holds, as the device library's own alloc counts them\n"
       << "    // (kernels/emu/tcgen05_emulation.cuh): a kernel's own MMA writes into them.\n"
       << "    emu::status()[" << kEmuStatusWords + 1
       << "] = columns >= 512u ? 0xFFFFu : (1u << ((columns + 31u) / 32u)) - 1u;\n  }\n"
       << "  __threadfence_block();\n  __syncwarp();\n}\n"
       << "__device__ __forceinline__ void dealloc(" << kU << " tmem_base, " << kU
       << " columns) {\n"
       << "  (void)columns;\n"
       << "  if (tmem_base != 0u) emu::record(" << static_cast<unsigned>(EmuEvent::kDealloc)
       << "u, 0u, tmem_base);\n}\n"
       << "__device__ __forceinline__ void fence_before_sync() { __threadfence_block(); }\n"
       << "__device__ __forceinline__ void fence_after_sync() { __threadfence_block(); }\n"
       << cuda_cluster_sync(cta_group) << "}  // namespace tmemjit\n";
  }
  os << "#endif  // TMEMJIT_LIFECYCLE_DEFINED\n";
  return os.str();
}

std::string cuda_transfer(const TransferCode& code, Target target) {
  const Plan& plan = code.plan;
  const std::string& name = code.options.name;
  const bool store = !plan.op.is_load();
  const int regs = plan.regs_per_thread;
  std::ostringstream os;
  os << cuda_header_comment(code, target) << "constexpr int " << name << "_regs = " << regs << ";\n"
     << direction_constant(code) << redval_constants(code) << geometry_constants(code);
  // The source is text until NVRTC compiles it: an opcode the target lacks (ld.red on sm_100a,
  // rule R14) fails there with the library's own sentence rather than a ptxas log.
  if (target != Target::kSm90 && !plan.op.supports(target))
    os << "static_assert(false, \"" << plan.op.unsupported_target_error(target).message()
       << "\");\n";
  if (target != Target::kSm90) {
    os << "__device__ __forceinline__ void " << name << "(" << transfer_params(code, kU) << ") {\n"
       << cuda_real_body(code, "r") << "}\n";
    if (code.f32)
      os << "__device__ __forceinline__ void " << name << "(" << transfer_params(code, "float")
         << ") {\n"
         << cuda_real_body(code, "f") << "}\n";
    os << "__device__ __forceinline__ void " << name << "_wait() { " << wait_asm(store) << " }\n";
  } else {
    auto split = split_image(plan.op);
    os << "__device__ __forceinline__ void " << name << "(" << transfer_params(code, kU) << ") {\n";
    if (split.ok())
      os << cuda_emulated_body(code, *split);
    else
      os << "  __trap();  // " << split.error().message() << "\n";
    os << "}\n";
    if (code.f32) {
      std::string args = "tmem_base, bits_";
      if (code.options.warp_argument) args += ", warp";
      if (code.options.column_argument) args += ", column";
      os << "__device__ __forceinline__ void " << name << "(" << transfer_params(code, "float")
         << ") {\n  " << kU << " bits_[" << regs << "];\n";
      if (store)
        os << "  for (int s = 0; s < " << regs << "; ++s) bits_[s] = __float_as_uint(regs[s]);\n"
           << "  " << name << "(" << args << ");\n";
      else
        os << "  " << name << "(" << args << ");\n"
           << "  for (int s = 0; s < " << regs << "; ++s) regs[s] = __uint_as_float(bits_[s]);\n";
      os << "}\n";
    }
    os << "__device__ __forceinline__ void " << name << "_wait() { tmemjit::emu::wait(); }\n";
  }
  os << cuda_coord_function(code);
  return os.str();
}

namespace {

// The parameters and arguments the options add after tmem_base (and the slots of a store).
struct ExtraParams {
  std::string params, args;
};
ExtraParams extra_params(const TransferCode& code) {
  ExtraParams extra;
  if (code.options.warp_argument) {
    extra.params += ", " + std::string(kU) + " warp";
    extra.args += ", warp";
  }
  if (code.options.column_argument) {
    extra.params += ", " + std::string(kU) + " column";
    extra.args += ", column";
  }
  return extra;
}

// The arguments that forward transfer_params: "tmem_base, regs[, warp][, column]".

// The PTX form's ABI in C++, for the emulated .funcs of a PTX kernel (cuda_emulated_ptx_functions):
// by-value parameters, a load's registers and NAME_coord's index returned in one aggregate.
std::string detail_types(const TransferCode& code) {
  const std::string& name = code.options.name;
  std::ostringstream os;
  if (code.plan.op.is_load())
    os << "struct " << name << "_regs_t {\n  " << kU << " r[" << code.plan.regs_per_thread
       << "];\n};\n";
  os << "struct " << name << "_coord_t {\n  int i[" << coord_rank_text(code) << "];\n};\n";
  return os.str();
}

std::string detail_transfer_head(const TransferCode& code) {
  const std::string& name = code.options.name;
  std::ostringstream os;
  if (code.plan.op.is_load()) {
    os << "__device__ " << name << "_regs_t " << name << "(" << kU << " tmem_base"
       << extra_params(code).params << ")";
  } else {
    os << "__device__ void " << name << "(" << kU << " tmem_base";
    for (int s = 0; s < code.plan.regs_per_thread; ++s)
      os << (s % 8 == 0 ? ",\n    " : ", ") << kU << " s" << s;
    os << extra_params(code).params << ")";
  }
  return os.str();
}

std::string detail_coord_head(const TransferCode& code) {
  const std::string& name = code.options.name;
  return "__device__ " + name + "_coord_t " + name + "_coord(" + kU + " thread, int slot)";
}

// The bodies that forward detail_transfer_head and detail_coord_head to the generated inline
// functions in namespace tmemjit_impl.
std::string forwarding_transfer_body(const TransferCode& code) {
  const std::string& name = code.options.name;
  const ExtraParams extra = extra_params(code);
  std::ostringstream os;
  os << " {\n";
  if (code.plan.op.is_load()) {
    os << "  " << name << "_regs_t v_;\n  tmemjit_impl::" << name << "(tmem_base, v_.r"
       << extra.args << ");\n  return v_;\n";
  } else {
    os << "  " << kU << " r_[" << code.plan.regs_per_thread << "] = {";
    for (int s = 0; s < code.plan.regs_per_thread; ++s) os << (s ? ", s" : "s") << s;
    os << "};\n  tmemjit_impl::" << name << "(tmem_base, r_" << extra.args << ");\n";
  }
  os << "}\n";
  return os.str();
}

std::string forwarding_coord_body(const TransferCode& code) {
  const std::string& name = code.options.name;
  return " {\n  " + name + "_coord_t c_;\n  tmemjit_impl::" + name +
         "_coord(thread, slot, c_.i);\n  return c_;\n}\n";
}

}  // namespace

std::string cuda_emulated_ptx_functions(const std::vector<const TransferCode*>& codes) {
  const int cta_group = codes.empty() ? 1 : codes.front()->options.cta_group;
  std::ostringstream os;
  os << "// The sm_90 emulation of the PTX form: the .funcs a PTX kernel calls, with the ABI of\n"
     << "// add_transfer_functions and add_lifecycle_functions (by-value .b32 parameters, one\n"
     << "// aggregate return), compiled by NVRTC as relocatable code. Generated by libtmemjit.\n"
     << cuda_lifecycle(Target::kSm90, /*extern_state=*/false, cta_group) << "\n";
  for (const TransferCode* code : codes)
    os << "namespace tmemjit_impl {\n"
       << cuda_transfer(*code, Target::kSm90) << "}  // namespace tmemjit_impl\n";
  os << "extern \"C\" {\n";
  for (const TransferCode* code : codes) {
    const std::string& name = code->options.name;
    os << detail_types(*code) << detail_transfer_head(*code) << forwarding_transfer_body(*code)
       << "__device__ void " << name << "_wait() { tmemjit::emu::wait(); }\n"
       << detail_coord_head(*code) << forwarding_coord_body(*code);
  }
  // tcgen05.alloc takes the 32-bit .shared::cta address; the emulated alloc a generic pointer.
  os << "__device__ void tmemjit_alloc(" << kU << " smem_address, " << kU << " columns) {\n"
     << "  unsigned long long generic;\n"
     << "  asm(\"cvta.shared.u64 %0, %1;\" : \"=l\"(generic) : \"l\"(static_cast<unsigned long "
        "long>(smem_address)));\n"
     << "  tmemjit::alloc(reinterpret_cast<" << kU << "*>(generic), columns);\n}\n"
     << "__device__ void tmemjit_dealloc(" << kU << " tmem_base, " << kU
     << " columns) { tmemjit::dealloc(tmem_base, columns); }\n"
     << "__device__ void tmemjit_fence_before_sync() { tmemjit::fence_before_sync(); }\n"
     << "__device__ void tmemjit_fence_after_sync() { tmemjit::fence_after_sync(); }\n"
     << (cta_group == 2 ? "__device__ void tmemjit_cluster_sync() { tmemjit::cluster_sync(); }\n"
                        : "")
     << "}  // extern \"C\"\n";
  return os.str();
}

}  // namespace tmem::kernels
