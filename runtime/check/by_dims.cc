// Per-dim proof of the native-image rules; see check_by_dims.h. Each block names the rule of
// docs/transfer-semantics.md §Rules it proves and mirrors the per-element checker in check.cc.
#include "runtime/check/by_dims.h"

#include <algorithm>
#include <array>
#include <bit>
#include <vector>

#include "runtime/descriptor/additive_map.h"
#include "runtime/descriptor/owner.h"
#include "tmem/image.h"

namespace tmem {
namespace {

constexpr int kLanes = 128;
constexpr int kColumns = 512;
constexpr int kWordsPerLane = 2 * kColumns / 64;  // coverage bits: 16-bit units of one lane
constexpr std::int64_t kMaxSlot = 254;            // a thread has at most 255 registers

// One operand's tables: origin, per group, per flattened repeat, and its atom dims.
struct OperandTables {
  AdditiveMap map;
  std::vector<PhysCoord> per_repeat;  // row-major over repeat_shape
  const std::vector<PhysCoord>* per_group = nullptr;
  int atom_start = 0;  // index of the first atom dim
  const PhysCoord& group(int g) const {
    static const PhysCoord kZero{};
    return per_group ? (*per_group)[static_cast<size_t>(g)] : kZero;
  }
  const std::vector<PhysCoord>& atom(int i) const {
    return map.dims[static_cast<size_t>(atom_start + i)];
  }
};

std::optional<OperandTables> tables_of(const View& view, int group_rank,
                                       std::span<const std::int64_t> repeat_shape,
                                       std::int64_t repeat_count) {
  auto map = additive_map(view);
  if (!map) return std::nullopt;
  OperandTables tables{.map = std::move(*map)};
  if (group_rank) tables.per_group = &tables.map.dims[0];
  tables.atom_start = group_rank + static_cast<int>(repeat_shape.size());
  tables.per_repeat.assign(static_cast<size_t>(repeat_count), PhysCoord{});
  std::vector<std::int64_t> digit(repeat_shape.size(), 0);
  for (std::int64_t k = 0; k < repeat_count; ++k) {
    PhysCoord& sum = tables.per_repeat[static_cast<size_t>(k)];
    for (size_t d = 0; d < repeat_shape.size(); ++d)
      sum += tables.map.dims[static_cast<size_t>(group_rank) + d][static_cast<size_t>(digit[d])];
    for (size_t d = repeat_shape.size(); d-- > 0;) {  // odometer, last dim fastest
      if (++digit[d] < repeat_shape[d]) break;
      digit[d] = 0;
    }
  }
  return tables;
}

// Rule 3 inside one atom: row r is lane +r, column c is `col_step` units further, half h is
// `half_step` units further, wherever the atom starts.
bool atom_is_native(const OperandTables& t, bool halves, std::int64_t col_step,
                    std::int64_t half_step) {
  const auto& rows = t.atom(0);
  const auto& cols = t.atom(1);
  for (size_t r = 0; r < rows.size(); ++r)
    if (rows[r][Axis::kTLane] != static_cast<std::int64_t>(r) || rows[r][Axis::kTCol] != 0)
      return false;
  for (size_t c = 0; c < cols.size(); ++c)
    if (cols[c][Axis::kTLane] != 0 ||
        cols[c][Axis::kTCol] != static_cast<std::int64_t>(c) * col_step)
      return false;
  if (halves) {
    const auto& half = t.atom(2);
    for (size_t h = 0; h < half.size(); ++h)
      if (half[h][Axis::kTLane] != 0 ||
          half[h][Axis::kTCol] != static_cast<std::int64_t>(h) * half_step)
        return false;
  }
  return true;
}

// Coverage bits in 16-bit units, 1024 per lane: sets units first, first + step, ... (`count` of
// them, step 1 or 2) a word at a time; false when one was set already (rule 7: two elements on
// one cell).
bool cover(std::vector<std::uint64_t>& bits, std::int64_t lane, std::int64_t first,
           std::int64_t count, int step) {
  std::uint64_t* row = bits.data() + lane * kWordsPerLane;
  // 64 is even, so the units of one parity sit at the same bits of every word.
  const std::uint64_t pattern = step == 1   ? ~std::uint64_t{0}
                                : first % 2 ? 0xAAAAAAAAAAAAAAAAull
                                            : 0x5555555555555555ull;
  const std::int64_t end = first + (count - 1) * step + 1;
  for (std::int64_t unit = first; unit < end;) {
    const std::int64_t word = unit / 64, low = unit % 64;
    const std::int64_t high = std::min<std::int64_t>(64, low + (end - unit));  // exclusive
    const std::uint64_t upto = high == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << high) - 1;
    const std::uint64_t mask = pattern & upto & ~((std::uint64_t{1} << low) - 1);
    if (row[word] & mask) return false;
    row[word] |= mask;
    unit += high - low;
  }
  return true;
}

// Where one instruction's accesses start: TMEM lane and 32-bit column (the second only for
// 16x32bx2).
struct AccessStarts {
  std::int64_t lane[2] = {0, 0};
  std::int64_t col[2] = {0, 0};
};

// One run of plan_by_dims: the operands' tables and the plan being built, one step per rule group
// (as Checker::run in check.cc). Each step returns false when it gives up.
struct DimProof {
  DimProof(const TransferSpec& s, std::span<const std::int64_t> shape, bool regs_h, bool tmem_h)
      : spec(s),
        op(s.op()),
        scope(s.scope()),
        repeat_shape(shape),
        regs_halves(regs_h),
        tmem_halves(tmem_h),
        groups(scope.groups()),
        group_rank(scope.group_rank()),
        regs_per_instr(op.regs_per_thread()),
        rows(op.atom_rows()),
        cols(op.atom_cols()),
        is_store(!op.is_load()),
        tmem_units(units_per_word(s.tmem().dtype())),
        regs_units(units_per_word(s.regs().dtype())),
        plan{.op = s.op(), .scope = s.scope()} {
    for (auto extent : repeat_shape) repeat_count *= extent;
  }

  const TransferSpec& spec;
  const Opcode& op;
  const Scope& scope;
  std::span<const std::int64_t> repeat_shape;
  bool regs_halves, tmem_halves;
  int groups, group_rank;
  std::int64_t repeat_count = 1;
  int regs_per_instr, rows, cols;
  bool is_store;
  int tmem_units, regs_units;
  std::optional<OperandTables> regs, tmem, tmem2;
  // Rule 3 per atom dim: in 16-bit units a plain 32-bit column is 1 unit, a 16-bit column 2 with
  // the half 1 apart, a packed column 4 (two cells) with the half one cell (2 units) apart.
  std::int64_t col_step = 1, half_step = 1;
  std::vector<std::uint64_t> covered;  // stores: rule 7 coverage bits
  int columns_used = 0;
  // Per register of the atom: its m in layout units, for the low and the high half.
  std::vector<std::array<std::int64_t, 2>> atom_m;
  // Group 0's atom's tid_in_wg and wid_in_wg ranges.
  std::array<std::int64_t, 2> tid_range = {INT64_MAX, INT64_MIN}, wid_range = tid_range;
  int max_slot = -1;
  Plan plan;

  bool build_tables();
  bool tmem_atoms_native();
  bool place_instructions();
  bool place(int g, std::int64_t k);
  bool second_access_at_imm(int g, std::int64_t k, int slab, AccessStarts& at) const;
  bool accesses_fit(const AccessStarts& at);
  bool register_steps_keep_threads() const;
  bool register_atom_owned();
  bool groups_stay_in_warpgroup() const;
  bool assign_slots();
  Plan finish();
};

bool DimProof::build_tables() {
  regs = tables_of(spec.regs(), group_rank, repeat_shape, repeat_count);
  tmem = tables_of(spec.tmem(), group_rank, repeat_shape, repeat_count);
  if (!regs || !tmem) return false;
  if (op.is_split()) {
    tmem2 = tables_of(*spec.tmem2(), group_rank, repeat_shape, repeat_count);
    if (!tmem2) return false;
  }
  return true;
}

bool DimProof::tmem_atoms_native() {
  col_step = op.packed() ? 4 : tmem_halves ? 2 : 1;
  half_step = op.packed() ? 2 : 1;
  if (!atom_is_native(*tmem, tmem_halves, col_step, half_step)) return false;
  return !tmem2 || atom_is_native(*tmem2, tmem_halves, col_step, half_step);
}

// Rules 3-5 and 7 per (group, repeat): where each instruction starts, and what it covers.
bool DimProof::place_instructions() {
  plan.repeat_shape.assign(repeat_shape.begin(), repeat_shape.end());
  plan.imm = spec.imm();
  plan.repeats.assign(static_cast<size_t>(repeat_count), RepeatStep{});
  covered.assign(is_store ? static_cast<size_t>(kLanes) * kWordsPerLane : 0, 0);
  for (int g = 0; g < groups; ++g)
    for (std::int64_t k = 0; k < repeat_count; ++k)
      if (!place(g, k)) return false;
  return true;
}

bool DimProof::place(int g, std::int64_t k) {
  const int slab = 32 * (scope.warp_of_group(g) % 4);
  RepeatStep& step = plan.repeats[static_cast<size_t>(k)];
  const PhysCoord& gk_group = tmem->group(g);
  const PhysCoord& gk_repeat = tmem->per_repeat[static_cast<size_t>(k)];
  const std::int64_t lane0 =
      tmem->map.origin[Axis::kTLane] + gk_group[Axis::kTLane] + gk_repeat[Axis::kTLane];
  const std::int64_t unit0 =
      tmem->map.origin[Axis::kTCol] + gk_group[Axis::kTCol] + gk_repeat[Axis::kTCol];
  if (unit0 % tmem_units != 0) return false;
  const std::int64_t col0 = unit0 / tmem_units;
  const std::int64_t offset = lane0 - slab;
  if (!(offset == 0 || (rows == 16 && offset == 16))) return false;  // rule 4: slab
  if (g == 0) {
    step.lane_offset = static_cast<int>(offset);
    step.column = static_cast<int>(col0);
    step.index.resize(repeat_shape.size());
    std::int64_t rest = k;
    for (size_t d = repeat_shape.size(); d-- > 0;) {
      step.index[d] = rest % repeat_shape[d];
      rest /= repeat_shape[d];
    }
  } else if (offset != step.lane_offset) {
    return false;
  }
  if (g == 1 && k == 0) plan.group_column_stride = static_cast<int>(col0 - plan.repeats[0].column);
  if (g == 4 && k == 0)
    plan.warpgroup_column_stride = static_cast<int>(col0 - plan.repeats[0].column);
  if (g > 0 && col0 != step.column + static_cast<std::int64_t>(plan.group_column_stride) * (g % 4) +
                           static_cast<std::int64_t>(plan.warpgroup_column_stride) * (g / 4))
    return false;  // rule 4: one column stride per warp (and per warpgroup)

  AccessStarts at{.lane = {lane0, 0}, .col = {col0, 0}};
  if (tmem2 && !second_access_at_imm(g, k, slab, at)) return false;
  return accesses_fit(at);
}

// Rule 6: the second access is at taddr + imm, a plain 32-bit address add.
bool DimProof::second_access_at_imm(int g, std::int64_t k, int slab, AccessStarts& at) const {
  const std::uint32_t address1 = static_cast<std::uint32_t>(at.lane[0] << 16 | at.col[0]) +
                                 static_cast<std::uint32_t>(*spec.imm());
  at.lane[1] = address1 >> 16;
  at.col[1] = address1 & 0xFFFF;
  if (at.lane[1] < slab || at.lane[1] + rows > slab + 32) return false;
  const std::int64_t lane2 = tmem2->map.origin[Axis::kTLane] + tmem2->group(g)[Axis::kTLane] +
                             tmem2->per_repeat[static_cast<size_t>(k)][Axis::kTLane];
  const std::int64_t unit2 = tmem2->map.origin[Axis::kTCol] + tmem2->group(g)[Axis::kTCol] +
                             tmem2->per_repeat[static_cast<size_t>(k)][Axis::kTCol];
  return lane2 == at.lane[1] && unit2 == at.col[1] * tmem_units;
}

bool DimProof::accesses_fit(const AccessStarts& at) {
  // Last 16-bit unit an atom touches past its first, and how coverage walks a row of it.
  const std::int64_t atom_units = (cols - 1) * col_step + (tmem_halves ? half_step : 0);
  const std::int64_t cover_count = 2 * cols;  // 16-bit units per atom row, in every mode
  const int cover_step = op.packed() ? 2 : 1;
  for (int access = 0; access < op.accesses(); ++access) {
    // Rule 5: bounds (lanes are inside the slab already).
    const std::int64_t first_unit = at.col[access] * tmem_units;
    const std::int64_t last_cell = (first_unit + atom_units) / tmem_units;
    if (last_cell >= kColumns) return false;
    columns_used = std::max(columns_used, static_cast<int>(last_cell) + 1);
    if (!is_store) continue;
    // Rule 7: the destination receives each cell once (16-bit units; a 32-bit element covers
    // both).
    for (int row = 0; row < rows; ++row)
      if (!cover(covered, at.lane[access] + row, 2 * at.col[access], cover_count, cover_step))
        return false;
  }
  return true;
}

// Rules 1-2 on the register operand: repeats move no element to another thread, groups shift
// the owning warp by exactly the warp step and keep slots; one atom then decides for all.
bool DimProof::register_steps_keep_threads() const {
  const AxisMask axes = spec.regs().axes();
  auto has = [&](Axis axis) { return (axes & axis_bit(axis)) != 0; };
  for (const PhysCoord& step : regs->per_repeat) {
    for (Axis axis : all_axes())
      if ((kThreadAxes & axis_bit(axis)) && step[axis] != 0) return false;
    if (regs_halves && step[Axis::kM] % 2 != 0) return false;
  }
  for (int g = 1; g < groups; ++g) {
    const PhysCoord& shift = regs->group(g);
    const std::int64_t warps = scope.warp_of_group(g) - scope.warp_of_group(0);
    if (shift[Axis::kM] != 0 || shift[Axis::kLaneid] != 0) return false;
    if (has(Axis::kTidInWg) && (shift[Axis::kTidInWg] % 32 != 0 ||
                                shift[Axis::kTidInWg] / 32 + 4 * shift[Axis::kWgid] != warps))
      return false;
    if (has(Axis::kTx) && (shift[Axis::kTx] % 32 != 0 || shift[Axis::kTx] / 32 != warps))
      return false;
    if (has(Axis::kWarpid) && shift[Axis::kWarpid] != warps) return false;
    if (has(Axis::kWidInWg) && shift[Axis::kWidInWg] + 4 * shift[Axis::kWgid] != warps)
      return false;
  }
  return true;
}

// Group 0's atom, element by element (the image couples lanes and registers): each element is
// owned by the lane that holds it, in group 0's warp, and each register has one m in every lane.
bool DimProof::register_atom_owned() {
  const AxisMask axes = spec.regs().axes();
  const int warp0 = scope.warp_of_group(0);
  const int halves = regs_halves ? 2 : 1;
  const int atom_dim = op.is_split() ? 1 : 0;  // the split's access axis comes first
  // Only the axes the register layout uses are summed, from compact per-dim tables.
  std::array<Axis, kNumAxes> used{};
  int n_used = 0;
  for (Axis axis : all_axes())
    if (axes & (kThreadAxes | axis_bit(Axis::kM)) & axis_bit(axis))
      used[static_cast<size_t>(n_used++)] = axis;
  auto compact = [&](const std::vector<PhysCoord>& table) {
    std::vector<std::int64_t> out(table.size() * static_cast<size_t>(n_used));
    for (size_t i = 0; i < table.size(); ++i)
      for (int a = 0; a < n_used; ++a)
        out[i * static_cast<size_t>(n_used) + static_cast<size_t>(a)] =
            table[i][used[static_cast<size_t>(a)]];
    return out;
  };
  const std::vector<PhysCoord> kNoAccess(1);
  const auto access_table = compact(op.is_split() ? regs->atom(0) : kNoAccess);
  const auto row_table = compact(regs->atom(atom_dim));
  const auto col_table = compact(regs->atom(atom_dim + 1));
  const std::vector<PhysCoord> kNoHalf(2);
  const auto half_table = compact(regs_halves ? regs->atom(atom_dim + 2) : kNoHalf);
  const int m_index =
      static_cast<int>(std::find(used.begin(), used.begin() + n_used, Axis::kM) - used.begin());
  atom_m.assign(static_cast<size_t>(regs_per_instr), {-1, -1});
  PhysCoord at;  // axes outside `used` stay 0
  for (int l = 0; l < 32; ++l) {
    for (int r = 0; r < regs_per_instr; ++r) {
      const AtomCoord word = image(op, l, r);
      const std::int64_t* acc =
          &access_table[static_cast<size_t>(word.access * (op.is_split() ? n_used : 0))];
      const std::int64_t* row = &row_table[static_cast<size_t>(word.row * n_used)];
      const std::int64_t* col = &col_table[static_cast<size_t>(word.col * n_used)];
      for (int h = 0; h < halves; ++h) {
        const std::int64_t* half = &half_table[static_cast<size_t>(h * n_used)];
        for (int a = 0; a < n_used; ++a)
          at[used[static_cast<size_t>(a)]] =
              regs->map.origin[used[static_cast<size_t>(a)]] + acc[a] + row[a] + col[a] + half[a];
        const Owner owner = owner_of(at, axes);
        if (owner.lane != l || (owner.warp != -1 && owner.warp != warp0)) return false;
        tid_range = {std::min(tid_range[0], at[Axis::kTidInWg]),
                     std::max(tid_range[1], at[Axis::kTidInWg])};
        wid_range = {std::min(wid_range[0], at[Axis::kWidInWg]),
                     std::max(wid_range[1], at[Axis::kWidInWg])};
        const std::int64_t m = m_index < n_used ? at[Axis::kM] : 0;
        if (regs_halves && m % 2 != h) return false;
        std::int64_t& seen = atom_m[static_cast<size_t>(r)][static_cast<size_t>(h)];
        if (seen < 0)
          seen = m;
        else if (seen != m)
          return false;  // rule 2: one register name in every lane
      }
    }
  }
  return true;
}

// tid_in_wg and wid_in_wg count inside one warpgroup (owner.h): every group's atom must stay in
// 0..127 and 0..3. The other groups' atoms are group 0's shifted by the group's table entry.
bool DimProof::groups_stay_in_warpgroup() const {
  const AxisMask axes = spec.regs().axes();
  auto has = [&](Axis axis) { return (axes & axis_bit(axis)) != 0; };
  for (int g = 1; g < groups; ++g) {
    const PhysCoord& shift = regs->group(g);
    if (has(Axis::kTidInWg) && (tid_range[0] + shift[Axis::kTidInWg] < 0 ||
                                tid_range[1] + shift[Axis::kTidInWg] >= kThreadsPerWarpgroup))
      return false;
    if (has(Axis::kWidInWg) && (wid_range[0] + shift[Axis::kWidInWg] < 0 ||
                                wid_range[1] + shift[Axis::kWidInWg] >= kWarpsPerWarpgroup))
      return false;
  }
  return true;
}

// Slots per (repeat, register), the register budget, and rule 7 on the register side.
bool DimProof::assign_slots() {
  for (std::int64_t k = 0; k < repeat_count; ++k) {
    const std::int64_t shift = regs->per_repeat[static_cast<size_t>(k)][Axis::kM];
    auto& slots = plan.repeats[static_cast<size_t>(k)].slots;
    slots.resize(static_cast<size_t>(regs_per_instr));
    for (int r = 0; r < regs_per_instr; ++r) {
      const std::int64_t slot = (atom_m[static_cast<size_t>(r)][0] + shift) / regs_units;
      if (regs_halves && (atom_m[static_cast<size_t>(r)][1] + shift) / regs_units != slot)
        return false;
      if (slot > kMaxSlot) return false;
      slots[static_cast<size_t>(r)] = static_cast<int>(slot);
      max_slot = std::max(max_slot, static_cast<int>(slot));
    }
  }
  std::vector<char> slot_taken(static_cast<size_t>(max_slot + 1), 0);
  for (const RepeatStep& step : plan.repeats)
    for (int slot : step.slots) {
      if (slot_taken[static_cast<size_t>(slot)]) return false;
      slot_taken[static_cast<size_t>(slot)] = 1;
    }
  return true;
}

Plan DimProof::finish() {
  plan.regs_per_thread = max_slot + 1;
  plan.columns_used = columns_used;
  plan.alloc_columns = std::max(
      32, static_cast<int>(std::bit_ceil(static_cast<unsigned>(std::max(columns_used, 1)))));
  return std::move(plan);
}

}  // namespace

std::optional<Plan> plan_by_dims(const TransferSpec& spec,
                                 std::span<const std::int64_t> repeat_shape, bool regs_halves,
                                 bool tmem_halves) {
  DimProof proof(spec, repeat_shape, regs_halves, tmem_halves);
  if (!proof.build_tables() || !proof.tmem_atoms_native() || !proof.place_instructions() ||
      !proof.register_steps_keep_threads() || !proof.register_atom_owned() ||
      !proof.groups_stay_in_warpgroup() || !proof.assign_slots())
    return std::nullopt;
  return proof.finish();
}

}  // namespace tmem
