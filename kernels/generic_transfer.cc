// The generic tier's transfers: eligibility, descriptor words and the CUDA C++ that reads them.
#include "kernels/generic_transfer.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <sstream>

#include "kernels/emulation_kernels.h"
#include "kernels/specialized_source.h"

namespace tmem::kernels {
namespace {

constexpr const char* kU = "unsigned int";

// Bits needed to number `count` values (0 for 1).
int bits_for(int count) {
  return static_cast<int>(std::bit_width(static_cast<unsigned>(count - 1)));
}

// The descriptor's words, in order. The header is fixed; the arrays follow, sized by the
// signature (R registers, T thread bits, S slot bits, H halves, D dims).
enum Word : int {
  kOpCase = 0,           // index into generic_granules (tcgen05 targets)
  kGroupStride = 1,      // the plan's column stride per warp rank (d)
  kWarpgroupStride = 2,  // per warpgroup (e)
  kRegsPerOp = 3,        // registers of one granule instruction (n)
  kAtomRows = 4,         // emulation: lanes of one granule access
  kAtomCols = 5,         // emulation: TMEM columns of one granule access
  kCellsPerReg = 6,      // emulation: 2 for pack::16b / unpack::16b
  kLaneRows = 7,         // emulation: 5 words, the native image's row per lane bit
  kLaneCols = 12,        // emulation: 5 words, its column per lane bit
  kHeaderWords = 17,
};

struct Layout {
  int regs, thread_bits, slot_bits, halves, rank;
  int offsets() const { return kHeaderWords; }             // R: offset of granule j
  int ids() const { return offsets() + regs; }             // R: emulation status id of j
  int cells() const { return ids() + regs; }               // 2R: emulation cells of register r
  int used() const { return cells() + 2 * regs; }          // bit mask of the slots moved
  int coord() const { return used() + (regs + 31) / 32; }  // H x D x (1 + T + S)
  int terms() const { return 1 + thread_bits + slot_bits; }
  int words() const { return coord() + halves * rank * terms(); }
};

Layout layout_of(const GenericSignature& s) {
  return {s.regs, bits_for(s.threads), bits_for(s.regs), s.halves, std::max(s.rank, 1)};
}

std::string scope_of(const Plan& plan) { return plan.scope.to_string(); }

// Why the plan's registers cannot be data: each instruction must fill one aligned run of slots.
std::string slot_order_problem(const Plan& plan) {
  const int n = plan.op.regs_per_thread();
  for (size_t k = 0; k < plan.repeats.size(); ++k) {
    const std::vector<int>& slots = plan.repeats[k].slots;
    bool run = static_cast<int>(slots.size()) == n && slots.front() % n == 0;
    for (size_t i = 1; run && i < slots.size(); ++i) run = slots[i] == slots[i - 1] + 1;
    if (!run)
      return "the register view interleaves the instructions' destinations (instruction " +
             std::to_string(k + 1) + " fills slots " + std::to_string(slots.front()) +
             ", ...): a register index is a compile-time operand";
  }
  return {};
}

void put_terms(std::vector<std::uint32_t>& words, size_t at, const CoordTerms& terms) {
  words[at] = static_cast<std::uint32_t>(terms.constant);
  for (size_t b = 0; b < terms.thread_bits.size(); ++b)
    words[at + 1 + b] = static_cast<std::uint32_t>(terms.thread_bits[b]);
  const size_t thread_words = terms.thread_bits.size();
  for (size_t b = 0; b < terms.slot_bits.size(); ++b)
    words[at + 1 + thread_words + b] = static_cast<std::uint32_t>(terms.slot_bits[b]);
}

// The layout constants of the contract, as geometry_constants defines them, for those the source
// names.
std::vector<std::pair<std::string, std::string>> named_constants(const TransferCode& code,
                                                                 std::string_view source) {
  const std::string& name = code.options.name;
  std::vector<std::pair<std::string, std::string>> out;
  if (mentions_identifier(source, name + "_shape")) {
    std::string extents;
    for (size_t d = 0; d < code.coord.shape.size(); ++d)
      extents += (d ? ", " : "") + std::to_string(code.coord.shape[d]);
    out.emplace_back(name + "_shape",
                     "__device__ constexpr int " + name + "_shape[" +
                         std::to_string(std::max<size_t>(code.coord.shape.size(), 1)) + "] = {" +
                         (extents.empty() ? "0" : extents) + "};");
  }
  if (mentions_identifier(source, name + "_columns"))
    out.emplace_back(name + "_columns", "constexpr int " + name + "_columns = " +
                                            std::to_string(columns_spanned(code.plan)) + ";");
  if (mentions_identifier(source, name + "_alloc_columns"))
    out.emplace_back(name + "_alloc_columns", "constexpr int " + name + "_alloc_columns = " +
                                                  std::to_string(code.plan.alloc_columns) + ";");
  return out;
}

// ---- CUDA C++ ---------------------------------------------------------------------------------

std::string params(const GenericSignature& s, const std::string& element) {
  std::string text =
      std::string(kU) + " tmem_base, " + element + " (&regs)[" + std::to_string(s.regs) + "]";
  if (s.warp_argument) text += ", " + std::string(kU) + " warp";
  if (s.column_argument) text += ", " + std::string(kU) + " column";
  return text;
}

// The warp's TMEM address as cuda_warp_address computes it, the strides read from the descriptor.
std::string warp_address(const GenericSignature& s, const std::string& desc) {
  std::string text = "  const " + std::string(kU) +
                     " warp_ = " + (s.warp_argument ? "warp" : "(threadIdx.x / 32u)") +
                     ";\n  const " + kU + " taddr_ = tmem_base + ((warp_ % 4u) << 21)";
  if (s.scope.rfind("warp:", 0) != 0)  // warp scope has no group strides
    text += " + (warp_ % 4u) * " + desc + "[" + std::to_string(kGroupStride) +
            "] + (warp_ / 4u) * " + desc + "[" + std::to_string(kWarpgroupStride) + "]";
  if (s.column_argument) text += " + column";
  return text + ";\n";
}

std::string wait_statement(bool load) {
  return std::string("asm volatile(\"") +
         (load ? "tcgen05.wait::ld.sync.aligned;" : "tcgen05.wait::st.sync.aligned;") +
         "\" ::: \"memory\");";
}

// One case of the switch: the granule `op` once per run of its registers, each at its offset.
std::string real_case(const GenericSignature& s, const Layout& layout, const Opcode& op, int index,
                      const std::string& desc) {
  const int n = op.regs_per_thread();
  std::ostringstream os;
  os << "    case " << index << ":  // " << op.to_string() << "\n";
  for (int j = 0; j * n + n <= s.regs; ++j) {
    os << "      asm volatile(\"" << op.to_string() << " ";
    std::string vector = "{";
    for (int i = 0; i < n; ++i) vector += (i ? ", %" : "%") + std::to_string(s.load ? i : i + 1);
    vector += "}";
    if (s.load)
      os << vector << ", [%" << n << "];\" : ";
    else
      os << "[%0], " << vector << ";\" :: ";
    if (s.load) {
      for (int i = 0; i < n; ++i) os << (i ? ", " : "") << "\"=r\"(regs[" << j * n + i << "])";
      os << " : ";
    }
    os << "\"r\"(taddr_ + " << desc << "[" << layout.offsets() + j << "])";
    if (!s.load)
      for (int i = 0; i < n; ++i) os << ", \"r\"(regs[" << j * n + i << "])";
    os << " : \"memory\");\n";
  }
  os << "      break;\n";
  return os.str();
}

std::string real_body(const GenericSignature& s, const Layout& layout, const std::string& desc) {
  std::ostringstream os;
  os << warp_address(s, desc) << "  switch (" << desc << "[" << kOpCase << "]) {\n";
  const std::vector<Opcode> ops = generic_granules(s.load, s.packed, s.regs);
  for (size_t i = 0; i < ops.size(); ++i)
    os << real_case(s, layout, ops[i], static_cast<int>(i), desc);
  os << "    default:\n      __trap();  // a descriptor of another signature\n  }\n";
  if (s.wait) os << "  " << wait_statement(s.load) << "\n";
  return os.str();
}

// The emulated accesses: slot s is register s % n of instruction s / n. Each slot's cells are
// found in a loop that is not unrolled (the guardrail check, the division by n), then one short
// access per register: unrolled per slot, as the sm_100a build's switch of real instructions is,
// the address arithmetic made the generic tier's sm_90 compile 8-15x slower (issue 39 item 8).
std::string emulated_body(const GenericSignature& s, const Layout& layout,
                          const std::string& desc) {
  std::ostringstream os;
  const std::string slots = std::to_string(s.regs);
  os << "  asm volatile(\"// tmemjit generic emulated transfer " << s.name << "\");\n"
     << warp_address(s, desc) << "  " << kU << "* const tm_ = tmemjit::emu::tmem();\n"
     << "  const " << kU << " l_ = tmemjit::emu::thread() % 32u;\n"
     << "  " << kU << " r_ = 0u, c_ = 0u;  // the native image's cell of this lane\n"
     << "  for (" << kU << " b = 0u; b < 5u; ++b)\n"
     << "    if ((l_ >> b) & 1u) {\n"
     << "      r_ += " << desc << "[" << kLaneRows << "u + b];\n"
     << "      c_ += " << desc << "[" << kLaneCols << "u + b];\n    }\n"
     << "  const " << kU << " n_ = " << desc << "[" << kRegsPerOp << "];\n"
     << "  const bool pair_ = " << desc << "[" << kCellsPerReg << "] == 2u;\n"
     << "  " << kU << " x_[" << slots << "], y_[" << slots
     << "];  // each slot's cells; x_ ~0u: the access is skipped\n"
     << "#pragma unroll 1\n"
     << "  for (" << kU << " s_ = 0u; s_ < " << slots << "u; ++s_) {\n"
     << "    const " << kU << " k_ = s_ / n_, i_ = s_ - k_ * n_;\n"
     << "    " << kU << " a_ = taddr_ + " << desc << "[" << layout.offsets() << "u + k_];\n"
     << "    const bool ok_ = tmemjit::emu::resolve(" << desc << "[" << layout.ids()
     << "u + k_], a_, " << desc << "[" << kAtomRows << "], " << desc << "[" << kAtomCols << "]);\n"
     << "    const " << kU << " w_ = ((a_ >> 16) + r_) * 512u + (a_ & 0xFFFFu) + c_;\n"
     << "    x_[s_] = ok_ ? w_ + " << desc << "[" << layout.cells() << "u + 2u * i_] : ~0u;\n"
     << "    y_[s_] = w_ + " << desc << "[" << layout.cells() << "u + 2u * i_ + 1u];\n  }\n";
  for (int slot = 0; slot < s.regs; ++slot) {
    const std::string reg = "regs[" + std::to_string(slot) + "]";
    const std::string x = "x_[" + std::to_string(slot) + "]",
                      y = "y_[" + std::to_string(slot) + "]";
    if (s.load)
      os << "  " << reg << " = " << x << " == ~0u ? 0u : pair_ ? ((tm_[" << x
         << "] & 0xFFFFu) | (tm_[" << y << "] << 16)) : tm_[" << x << "];\n";
    else
      os << "  if (" << x << " != ~0u) {\n    if (pair_) {\n      tm_[" << x << "] = " << reg
         << " & 0xFFFFu;\n      tm_[" << y << "] = " << reg << " >> 16;\n    } else {\n      tm_["
         << x << "] = " << reg << ";\n    }\n  }\n";
  }
  if (s.wait) os << "  tmemjit::emu::wait();\n";
  return os.str();
}

// NAME_coord reading its weights: -1 unless the thread is in the scope and the slot is moved.
std::string coord_function(const GenericSignature& s, const Layout& layout,
                           const std::string& desc) {
  const std::string rank = std::to_string(layout.rank);
  std::ostringstream os;
  for (int half = 0; half < s.halves; ++half) {
    os << "__device__ __forceinline__ void " << s.name << "_coord(" << kU << " thread, int slot, "
       << (s.halves == 2 ? "int half, " : "") << "int (&index)[" << rank << "]) {\n"
       << "  const " << kU << " s_ = static_cast<" << kU << ">(slot);\n"
       << "  const bool ok_ = " << (s.halves == 2 ? "half == " + std::to_string(half) + " && " : "")
       << "thread < " << s.threads << "u && s_ < " << s.regs << "u && ((" << desc << "["
       << layout.used() << "u + (s_ >> 5)] >> (s_ & 31u)) & 1u);\n"
       << "  for (int d = 0; d < " << s.rank << "; ++d) index[d] = -1;\n"
       << "  if (!ok_) return;\n"
       << "  for (int d = 0; d < " << s.rank << "; ++d) {\n"
       << "    const " << kU << "* w_ = " << desc << " + "
       << layout.coord() + half * layout.rank * layout.terms() << " + d * " << layout.terms()
       << ";\n"
       << "    " << kU << " v_ = w_[0];\n"
       << "    for (int b = 0; b < " << layout.thread_bits << "; ++b)\n"
       << "      if ((thread >> b) & 1u) v_ += w_[1 + b];\n"
       << "    for (int b = 0; b < " << layout.slot_bits << "; ++b)\n"
       << "      if ((s_ >> b) & 1u) v_ += w_[" << 1 + layout.thread_bits << " + b];\n"
       << "    index[d] = static_cast<int>(v_);\n  }\n}\n";
  }
  if (s.halves == 2)  // the contract's 3-argument form is the low half
    os << "__device__ __forceinline__ void " << s.name << "_coord(" << kU
       << " thread, int slot, int (&index)[" << rank << "]) {\n  " << s.name
       << "_coord(thread, slot, 0, index);\n}\n";
  return os.str();
}

std::string transfer_code(const GenericSignature& s, Target target) {
  const Layout layout = layout_of(s);
  const std::string desc = generic_descriptor_symbol(s.name);
  std::ostringstream os;
  os << "// " << s.name
     << ": the generic tier (libtmemjit, docs/specialization.md §Tiers): " << s.text()
     << ".\n// The layout is data: " << desc << " holds its opcode, offsets and " << s.name
     << "_coord's weights.\n"
     << "extern \"C\" {\n__constant__ " << kU << " " << desc << "[" << layout.words() << "];\n}\n"
     << "constexpr int " << s.name << "_regs = " << s.regs << ";\n"
     << "constexpr bool " << s.name << "_is_load = " << (s.load ? "true" : "false") << ";\n";
  for (const auto& [symbol, definition] : s.constants) os << definition << "\n";
  os << "__device__ __forceinline__ void " << s.name << "(" << params(s, kU) << ") {\n"
     << (target == Target::kSm90 ? emulated_body(s, layout, desc) : real_body(s, layout, desc))
     << "}\n";
  if (s.f32) {
    std::string args = "tmem_base, bits_";
    if (s.warp_argument) args += ", warp";
    if (s.column_argument) args += ", column";
    os << "__device__ __forceinline__ void " << s.name << "(" << params(s, "float") << ") {\n  "
       << kU << " bits_[" << s.regs << "];\n";
    if (!s.load)
      os << "  for (int s = 0; s < " << s.regs << "; ++s) bits_[s] = __float_as_uint(regs[s]);\n"
         << "  " << s.name << "(" << args << ");\n";
    else
      os << "  " << s.name << "(" << args << ");\n"
         << "  for (int s = 0; s < " << s.regs << "; ++s) regs[s] = __uint_as_float(bits_[s]);\n";
    os << "}\n";
  }
  os << "__device__ __forceinline__ void " << s.name << "_wait() { "
     << (target == Target::kSm90 ? std::string("tmemjit::emu::wait();") : wait_statement(s.load))
     << " }\n"
     << coord_function(s, layout, desc);
  return os.str();
}

}  // namespace

std::string GenericSignature::text() const {
  std::string out = std::string(load ? "ld" : "st") + " of " + std::to_string(regs) +
                    " registers at scope " + scope + " (" + std::to_string(threads) +
                    " threads), index rank " + std::to_string(rank);
  if (halves == 2) out += ", 16-bit halves";
  if (packed) out += load ? ", .pack::16b" : ", .unpack::16b";
  if (f32) out += ", float overload";
  out += std::string(wait ? ", waits" : ", no wait") + (warp_argument ? ", warp argument" : "") +
         (column_argument ? ", column argument" : "");
  for (const auto& [symbol, definition] : constants) out += ", " + definition;
  return out;
}

std::string generic_descriptor_symbol(std::string_view name) {
  return "tmemjit_desc_" + std::string(name);
}

std::vector<Opcode> generic_granules(bool load, bool packed, int regs) {
  std::vector<Opcode> out;
  const Direction direction = load ? Direction::kLoad : Direction::kStore;
  for (Shape shape : {Shape::k32x32b, Shape::k16x64b, Shape::k16x128b, Shape::k16x256b})
    for (int num = 1; num <= 128; num *= 2) {
      auto op = Opcode::make(direction, shape, num, packed);
      if (!op.ok()) continue;
      if (op->regs_per_thread() <= regs) out.push_back(*op);
      break;  // the smallest .xN of the shape is its granule
    }
  return out;
}

bool is_granule_copies(const Opcode& op, const Opcode& granule) {
  // The images' inputs number cells only for packed forms, so both must pack alike.
  const int n = granule.regs_per_thread();
  if (op.packed() != granule.packed() || op.regs_per_thread() % n != 0) return false;
  // Pairs of bits suffice: every native image is linear on every input (native_image_map).
  constexpr auto kPairs = BitLinearMap::Verify::kPairs;
  const std::optional<BitLinearMap> whole = native_image_map(op, kPairs),
                                    part = native_image_map(granule, kPairs);
  if (!whole || !part) return false;
  // The register's high bits number the copy; each copy is atom_tmem_cols() columns further.
  const std::optional<BitLinearMap> copies =
      part->product(op.regs_per_thread() / n, {0, 0, granule.atom_tmem_cols(), 0});
  return copies && *copies == *whole;
}

namespace {

// Why the plan cannot be a generic transfer before its descriptor is built, or empty: the checks
// on the instruction, the plan and the coordinate map.
std::string ineligibility(const TransferCode& code) {
  const Plan& plan = code.plan;
  if (plan.op.reduces())
    return plan.op.to_string() +
           " writes its reduction results to slots after the register view; the generic "
           "tier compiles no reductions";
  if (plan.op.is_split())
    return plan.op.to_string() +
           ": 16x32bx2's half-split offset is an immediate operand (PTX takes no register "
           "there)";
  if (plan.repeats.empty()) return "the plan issues no instruction";
  if (std::string problem = slot_order_problem(plan); !problem.empty()) return problem;
  const CoordMap& map = code.coord;
  const bool high_ok = map.halves != 2 || (map.high.expressible && map.high.additive);
  if (!map.expressible || !map.additive || !high_ok)
    return code.options.name +
           "_coord is not affine in the bits of the thread and the slot for this layout";
  return {};
}

GenericSignature signature_of(const TransferCode& code, std::string_view source) {
  const Plan& plan = code.plan;
  GenericSignature s;
  s.name = code.options.name;
  s.load = plan.op.is_load();
  s.regs = plan.regs_per_thread;
  s.scope = scope_of(plan);
  s.threads = code.coord.threads;
  s.rank = code.coord.rank;
  s.halves = code.coord.halves;
  s.f32 = code.f32;
  s.packed = plan.op.packed();
  s.wait = code.options.wait;
  s.warp_argument = code.options.warp_argument;
  s.column_argument = code.options.column_argument;
  s.constants = named_constants(code, source);
  return s;
}

// The fixed header: the granule's case and shape, the plan's strides and, for the emulation
// (`split` set), the granule's native image.
void put_header(std::vector<std::uint32_t>& words, const Layout& layout, const Plan& plan,
                int op_case, const Opcode& granule, const std::optional<SplitImage>& split) {
  words[kOpCase] = static_cast<std::uint32_t>(op_case);
  words[kGroupStride] = static_cast<std::uint32_t>(plan.group_column_stride);
  words[kWarpgroupStride] = static_cast<std::uint32_t>(plan.warpgroup_column_stride);
  words[kRegsPerOp] = static_cast<std::uint32_t>(granule.regs_per_thread());
  words[kAtomRows] = static_cast<std::uint32_t>(granule.atom_rows());
  words[kAtomCols] = static_cast<std::uint32_t>(granule.atom_tmem_cols());
  if (!split) return;
  words[kCellsPerReg] = static_cast<std::uint32_t>(split->cells_per_reg);
  for (int b = 0; b < kLaneBits; ++b) {
    words[static_cast<size_t>(kLaneRows + b)] =
        static_cast<std::uint32_t>(split->lane_bits[static_cast<size_t>(b)].row);
    words[static_cast<size_t>(kLaneCols + b)] =
        static_cast<std::uint32_t>(split->lane_bits[static_cast<size_t>(b)].col);
  }
  for (size_t r = 0; r < split->cells.size(); ++r)
    for (int c = 0; c < split->cells_per_reg; ++c) {
      const TmemCell& cell = split->cells[r][static_cast<size_t>(c)];
      words[static_cast<size_t>(layout.cells()) + 2 * r + static_cast<size_t>(c)] =
          static_cast<std::uint32_t>(cell.row * 512 + cell.col);
    }
}

// Each granule's TMEM offset and emulation status id, and the mask of the slots moved. Returns
// why the plan cannot be generic, or empty.
std::string put_granules(std::vector<std::uint32_t>& words, const Layout& layout,
                         const TransferCode& code, const Opcode& granule) {
  const Plan& plan = code.plan;
  const int n = granule.regs_per_thread();
  const int copies = plan.op.regs_per_thread() / n;
  // Granule j moves slots [j n, j n + n). Every granule is issued (the cases have no branches):
  // one the layout leaves unused loads again from the first used granule's cells, which a load
  // may; a store would overwrite TMEM, so a store must use every slot.
  std::vector<bool> issued(static_cast<size_t>(layout.regs / n), false);
  for (size_t k = 0; k < plan.repeats.size(); ++k) {
    const RepeatStep& step = plan.repeats[k];
    const std::uint32_t offset = (static_cast<std::uint32_t>(step.lane_offset) << 16) +
                                 static_cast<std::uint32_t>(step.column);
    for (int copy = 0; copy < copies; ++copy) {
      const size_t j = static_cast<size_t>(step.slots.front() / n + copy);
      issued[j] = true;
      words[static_cast<size_t>(layout.offsets()) + j] =
          offset + static_cast<std::uint32_t>(copy * granule.atom_tmem_cols());
      words[static_cast<size_t>(layout.ids()) + j] =
          static_cast<std::uint32_t>(code.first_id + static_cast<int>(k));
    }
    for (int slot : step.slots)
      words[static_cast<size_t>(layout.used() + slot / 32)] |= 1u << (slot % 32);
  }
  const size_t first =
      static_cast<size_t>(std::find(issued.begin(), issued.end(), true) - issued.begin());
  for (size_t j = 0; j < issued.size(); ++j) {
    if (issued[j]) continue;
    if (!plan.op.is_load())
      return "the layout leaves register slots " + std::to_string(j * static_cast<size_t>(n)) +
             ".. unused, and a generic store issues every granule";
    words[static_cast<size_t>(layout.offsets()) + j] =
        words[static_cast<size_t>(layout.offsets()) + first];
    words[static_cast<size_t>(layout.ids()) + j] = words[static_cast<size_t>(layout.ids()) + first];
  }
  return {};
}

// The coordinate map's weights: per half and dimension, the constant and one weight per thread
// bit and per slot bit, zero-padded to the signature's bit counts.
void put_coord_weights(std::vector<std::uint32_t>& words, const Layout& layout,
                       const CoordMap& map) {
  for (int half = 0; half < map.halves; ++half) {
    const std::vector<CoordTerms>& dims = half == 0 ? map.dims : map.high.dims;
    for (int d = 0; d < map.rank; ++d) {
      CoordTerms terms = dims[static_cast<size_t>(d)];
      terms.thread_bits.resize(static_cast<size_t>(layout.thread_bits), 0);
      terms.slot_bits.resize(static_cast<size_t>(layout.slot_bits), 0);
      put_terms(words,
                static_cast<size_t>(layout.coord() + (half * layout.rank + d) * layout.terms()),
                terms);
    }
  }
}

}  // namespace

GenericForm generic_form(const TransferCode& code, Target target, std::string_view source) {
  const Plan& plan = code.plan;
  GenericForm form;
  if (std::string why = ineligibility(code); !why.empty()) {
    form.why_not = std::move(why);
    return form;
  }
  GenericSignature s = signature_of(code, source);
  const Layout layout = layout_of(s);
  constexpr int kMaxWords = 4096;  // 16 KiB of the 64 KiB of constant memory per module
  if (layout.words() > kMaxWords) {
    form.why_not = "the descriptor would need " + std::to_string(layout.words()) +
                   " words of constant memory (at most " + std::to_string(kMaxWords) + ")";
    return form;
  }
  const std::vector<Opcode> granules = generic_granules(s.load, s.packed, s.regs);
  const auto granule = std::find_if(granules.begin(), granules.end(),
                                    [&](const Opcode& g) { return g.shape() == plan.op.shape(); });
  if (granule == granules.end() || !is_granule_copies(plan.op, *granule)) {
    form.why_not = plan.op.to_string() + " is not a row of copies of one generic granule";
    return form;
  }
  std::optional<SplitImage> split;
  if (target == Target::kSm90) {
    auto made = split_image(*granule);
    if (!made.ok()) {
      form.why_not = "the emulation has no native image of " + granule->to_string() + ": " +
                     made.error().message();
      return form;
    }
    split = std::move(made).value();
  }
  std::vector<std::uint32_t> words(static_cast<size_t>(layout.words()), 0);
  put_header(words, layout, plan, static_cast<int>(granule - granules.begin()), *granule, split);
  if (std::string why = put_granules(words, layout, code, *granule); !why.empty()) {
    form.why_not = std::move(why);
    return form;
  }
  put_coord_weights(words, layout, code.coord);
  form.transfer = GenericTransfer{std::move(s), std::move(words)};
  return form;
}

std::string generic_transfers_header(std::span<const GenericTransfer> transfers, int cta_group,
                                     Target target) {
  std::string header = transfers_header_prelude(
      "the generic tier, generated by libtmemjit for compile_kernel (docs/specialization.md "
      "§Tiers).",
      cta_group, target);
  for (const GenericTransfer& t : transfers) header += "\n" + transfer_code(t.signature, target);
  return header;
}

}  // namespace tmem::kernels
