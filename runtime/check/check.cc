// The native-image rules of DESIGN.md §3: decide, element by element, whether the instruction
// repeated over the operand views moves every element where the views say it lives, and plan it.
#include "tmem/check.h"

#include <algorithm>
#include <bit>
#include <sstream>

#include "runtime/check/by_dims.h"
#include "runtime/check/owner.h"
#include "tmem/image.h"

namespace tmem {
namespace {

constexpr int kLanes = 128;    // TMEM lanes per CTA (PTX ISA §9.7.16.1)
constexpr int kColumns = 512;  // 32-bit TMEM columns per CTA on sm_100a/f
constexpr AxisMask kTmemAxes = axis_bit(Axis::kTLane) | axis_bit(Axis::kTCol);
constexpr AxisMask kRegisterAxes = kThreadAxes | axis_bit(Axis::kM);

std::string join(std::span<const std::int64_t> values) {
  std::string text = "(";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  return text + (values.size() == 1 ? ",)" : ")");
}

std::string describe_operand(std::string_view name, const View& view) {
  return std::string(name) + " operand: " + view.to_string() + "\n  shape " + join(view.shape()) +
         ", dtype " + std::string(to_string(view.dtype()));
}

// The operand suffixes an opcode implies (DESIGN.md §3): register words (rows, cols), or
// (2, 16, N) for 16x32bx2; a 16-bit operand adds a trailing half axis of 2.
struct Form {
  std::vector<std::int64_t> atom;  // the atom suffix of the operand's shape
  std::int64_t atom_size = 1;
  bool halves = false;  // 16-bit dtype: two elements per 32-bit word
};

Form register_form(const Opcode& op, DType dtype) {
  Form form;
  if (op.is_split()) form.atom.push_back(2);
  form.atom.push_back(op.atom_rows());
  form.atom.push_back(op.atom_cols());
  form.halves = bits(dtype) == 16;
  if (form.halves) form.atom.push_back(2);
  for (auto extent : form.atom) form.atom_size *= extent;
  return form;
}

Form tmem_form(const Opcode& op, DType dtype) {
  Form form;
  form.atom = {op.atom_rows(), op.atom_cols()};
  form.halves = bits(dtype) == 16;
  if (form.halves) form.atom.push_back(2);
  for (auto extent : form.atom) form.atom_size *= extent;
  return form;
}

struct Checker {
  Checker(const TransferSpec& s, bool by_dims)
      : spec(s),
        op(s.op()),
        scope(s.scope()),
        try_by_dims(by_dims),
        plan{.op = s.op(), .scope = s.scope()} {}

  const TransferSpec& spec;
  const Opcode& op;
  const Scope& scope;
  bool try_by_dims =
      true;  // prove the rules per dim first (check_by_dims.h), elements only if that gives up
  int groups = 1;
  int group_rank = 0;
  std::vector<std::int64_t> repeat_shape;
  std::int64_t repeat_count = 1;
  Form regs_form, tmem_form_;
  std::vector<std::uint8_t> tmem_used;  // 128 lanes x 512 columns x 2 halves
  Plan plan;

  std::optional<Error> run();

  Error fail(std::string rule, std::string message, std::string_view operand_name,
             const View& operand) const {
    return Error(ErrorCode::kRule, rule + ": " + message, describe_operand(operand_name, operand));
  }

  // The view coordinate (group, repeat..., atom...) for messages.
  std::vector<std::int64_t> coordinate(int g, std::int64_t k,
                                       const std::vector<std::int64_t>& atom) const {
    std::vector<std::int64_t> coord;
    if (group_rank) coord.push_back(g);
    std::vector<std::int64_t> digits(repeat_shape.size());
    std::int64_t rest = k;
    for (int d = static_cast<int>(repeat_shape.size()) - 1; d >= 0; --d) {
      digits[d] = rest % repeat_shape[d];
      rest /= repeat_shape[d];
    }
    coord.insert(coord.end(), digits.begin(), digits.end());
    coord.insert(coord.end(), atom.begin(), atom.end());
    return coord;
  }

  std::optional<Error> check_shapes();
  std::optional<Error> check_axes() const;
};

std::optional<Error> Checker::check_axes() const {
  auto check_one = [&](std::string_view name, const View& view, AxisMask allowed,
                       const char* hint) -> std::optional<Error> {
    AxisMask stray = view.axes() & ~allowed;
    if (!stray) return std::nullopt;
    for (Axis axis : all_axes()) {
      if (stray & axis_bit(axis))
        return fail("axes",
                    "the " + std::string(name) + " operand uses axis " +
                        std::string(to_string(axis)) + "; " + hint,
                    name, view);
    }
    return std::nullopt;
  };
  if (auto e = check_one("tmem", spec.tmem(), kTmemAxes,
                         "a TMEM operand is placed with TLane and TCol only"))
    return e;
  if (spec.tmem2())
    if (auto e = check_one("tmem2", *spec.tmem2(), kTmemAxes,
                           "a TMEM operand is placed with TLane and TCol only"))
      return e;
  if (auto e = check_one("regs", spec.regs(), kRegisterAxes,
                         "a register operand is placed with thread axes (tid_in_wg, tx, warpid, "
                         "laneid, ...) and m"))
    return e;
  return std::nullopt;
}

std::optional<Error> Checker::check_shapes() {
  const std::string op_name = op.to_string();
  regs_form = register_form(op, spec.regs().dtype());
  tmem_form_ = tmem_form(op, spec.tmem().dtype());

  // dtype widths: plain forms move whole words (same width on both sides); pack/unpack needs
  // 16-bit TMEM elements (the low halves of two cells, PTX ISA §9.7.16.8.2).
  const int tmem_bits = bits(spec.tmem().dtype()), regs_bits = bits(spec.regs().dtype());
  if (op.packed() && tmem_bits != 16)
    return fail("pack",
                op_name +
                    " moves 16-bit halves: the TMEM operand needs a 16-bit dtype (b16, f16, bf16) "
                    "and a trailing half axis of 2, not " +
                    std::string(to_string(spec.tmem().dtype())),
                "tmem", spec.tmem());
  if (!op.packed() && tmem_bits != regs_bits)
    return fail(
        "dtype",
        "the TMEM operand is " + std::to_string(tmem_bits) + "-bit but the register operand is " +
            std::to_string(regs_bits) + "-bit; " + op_name +
            " copies 32-bit words unchanged (use .pack::16b/.unpack::16b to move 16-bit halves)",
        "regs", spec.regs());
  if (spec.tmem2() && spec.tmem2()->dtype() != spec.tmem().dtype())
    return fail("dtype", "the second TMEM region's dtype differs from the first's", "tmem2",
                *spec.tmem2());

  auto check_operand = [&](std::string_view name, const View& view,
                           const Form& form) -> std::optional<Error> {
    auto shape = view.shape();
    const int need = group_rank + static_cast<int>(form.atom.size());
    if (static_cast<int>(shape.size()) < need) {
      std::string expected = "(";
      if (group_rank) expected += std::to_string(groups) + ", ";
      expected += "*repeat, ";
      for (size_t i = 0; i < form.atom.size(); ++i)
        expected += (i ? ", " : "") + std::to_string(form.atom[i]);
      expected += ")";
      return fail("shape",
                  "the " + std::string(name) + " operand has rank " + std::to_string(shape.size()) +
                      " but " + op_name + " at scope " + scope.to_string() + " needs shape " +
                      expected,
                  name, view);
    }
    if (group_rank && shape[0] != groups)
      return fail("shape",
                  "axis 0 of the " + std::string(name) + " operand is the group axis of scope " +
                      scope.to_string() + " and must have extent " + std::to_string(groups) +
                      ", not " + std::to_string(shape[0]),
                  name, view);
    const size_t atom_start = shape.size() - form.atom.size();
    for (size_t i = 0; i < form.atom.size(); ++i) {
      if (shape[atom_start + i] != form.atom[i]) {
        std::string atom_text = join(form.atom);
        return fail("shape",
                    "axis " + std::to_string(atom_start + i) + " of the " + std::string(name) +
                        " operand has extent " + std::to_string(shape[atom_start + i]) +
                        " but the atom of " + op_name + " is " + atom_text +
                        (form.halves ? " (the last axis is the 16-bit half)" : ""),
                    name, view);
      }
    }
    return std::nullopt;
  };
  if (auto e = check_operand("tmem", spec.tmem(), tmem_form_)) return e;
  if (auto e = check_operand("regs", spec.regs(), regs_form)) return e;
  if (spec.tmem2())
    if (auto e = check_operand("tmem2", *spec.tmem2(), tmem_form_)) return e;

  auto repeats_of = [&](const View& view, const Form& form) {
    auto shape = view.shape();
    return std::vector<std::int64_t>(shape.begin() + group_rank,
                                     shape.end() - static_cast<long>(form.atom.size()));
  };
  repeat_shape = repeats_of(spec.tmem(), tmem_form_);
  auto regs_repeats = repeats_of(spec.regs(), regs_form);
  if (regs_repeats != repeat_shape)
    return fail("shape",
                "the repeat axes differ: the TMEM operand has " + join(repeat_shape) +
                    " and the register operand " + join(regs_repeats) +
                    "; both are (group, *repeat, *atom) with the same repeats",
                "regs", spec.regs());
  if (spec.tmem2() && repeats_of(*spec.tmem2(), tmem_form_) != repeat_shape)
    return fail("shape", "the repeat axes of the second TMEM region differ from the first's",
                "tmem2", *spec.tmem2());
  repeat_count = 1;
  for (auto extent : repeat_shape) repeat_count *= extent;
  // Each repeat is one instruction per warp, and every (lane, register) of an instruction is its
  // own TMEM cell: a warp's 32 lanes x 512 columns hold 512 register words per thread, so more can
  // only re-read cells. The cap also bounds the element-by-element checker's work (and its hints')
  // to 32 warps x 32 lanes x 512 x 2 halves per pass: a few hundred bytes of text once made it
  // visit 67M elements (seconds) before it failed.
  constexpr std::int64_t kMaxRegisterWords = kColumns;
  if (repeat_count * op.regs_per_thread() > kMaxRegisterWords)
    return Error(ErrorCode::kLimit,
                 "limit: the transfer issues " + std::to_string(repeat_count) +
                     " instructions of " + std::to_string(op.regs_per_thread()) +
                     " registers per warp, " + std::to_string(repeat_count * op.regs_per_thread()) +
                     " register words per thread; at most " + std::to_string(kMaxRegisterWords) +
                     " fit a warp's 32 lanes x 512 columns of TMEM",
                 describe_operand("tmem", spec.tmem()));
  return std::nullopt;
}

std::optional<Error> Checker::run() {
  groups = scope.groups();
  group_rank = scope.group_rank();
  if (auto e = check_axes()) return e;
  if (auto e = check_shapes()) return e;

  const bool is_store = !op.is_load();
  const View& regs = spec.regs();
  const AxisMask regs_axes = regs.axes();
  const bool regs_has_warp =
      (regs_axes & (axis_bit(Axis::kWarpid) | axis_bit(Axis::kTx) | axis_bit(Axis::kTidInWg) |
                    axis_bit(Axis::kWidInWg))) != 0;
  if (!regs_has_warp && scope.kind() != Scope::Kind::kWarp)
    return fail("ownership",
                "the register operand does not say which warp owns an element; at scope " +
                    scope.to_string() + " use tid_in_wg, tx, wid_in_wg+laneid or warpid+laneid",
                "regs", regs);
  if ((regs_axes & (axis_bit(Axis::kLaneid) | axis_bit(Axis::kTidInWg) | axis_bit(Axis::kTx))) == 0)
    return fail(
        "ownership",
        "the register operand does not say which lane owns an element; use laneid, tid_in_wg or tx",
        "regs", regs);

  // Replicas are harmless only on the source operand, and only when one replica sits exactly
  // where the instruction reads (rule 7): the destination must be written in one place.
  const View& destination = is_store ? spec.tmem() : regs;
  if (destination.replica_offsets().size() > 1)
    return fail("replicas",
                "the " + std::string(is_store ? "TMEM" : "register") +
                    " operand is the destination of " + op.to_string() +
                    " and is replicated (R[...]); the instruction writes each element once",
                is_store ? "tmem" : "regs", destination);
  if (spec.tmem2() && is_store && spec.tmem2()->replica_offsets().size() > 1) {
    return fail("replicas",
                "the second TMEM region is the destination of a store and is replicated (R[...])",
                "tmem2", *spec.tmem2());
  }

  if (try_by_dims) {
    if (auto proven = plan_by_dims(spec, repeat_shape, regs_form.halves, tmem_form_.halves)) {
      plan = std::move(*proven);
      return std::nullopt;
    }
  }

  const int regs_per_instr = op.regs_per_thread();
  const int halves = (regs_form.halves || tmem_form_.halves) ? 2 : 1;
  const int tmem_units = units_per_word(spec.tmem().dtype());
  const int regs_units = units_per_word(regs.dtype());
  const int shape_rows = op.atom_rows();
  const int slab_rows = 32;

  plan.op = op;
  plan.scope = scope;
  plan.repeat_shape = repeat_shape;
  plan.imm = spec.imm();
  plan.repeats.assign(static_cast<size_t>(repeat_count), RepeatStep{});
  tmem_used.assign(static_cast<size_t>(kLanes) * kColumns * 2, 0);
  int columns_used = 0;
  std::vector<int> slot_of(static_cast<size_t>(repeat_count * regs_per_instr), -1);

  PhysCoord at, candidate;
  for (int g = 0; g < groups; ++g) {
    const int warp = scope.warp_of_group(g);
    const int slab = 32 * (warp % 4);
    for (std::int64_t k = 0; k < repeat_count; ++k) {
      RepeatStep& step = plan.repeats[static_cast<size_t>(k)];
      const std::int64_t operand_base = (static_cast<std::int64_t>(g) * repeat_count + k);
      std::int64_t base_lane[2] = {0, 0}, base_col[2] = {0, 0};
      for (int access = 0; access < op.accesses(); ++access) {
        const View& tmem = access == 0 ? spec.tmem() : *spec.tmem2();
        if (access == 0) {
          // The instruction's address comes from the element of register 0 of lane 0, at (row 0,
          // col 0).
          tmem.apply_flat(operand_base * tmem_form_.atom_size, at);
          base_lane[0] = at[Axis::kTLane];
          base_col[0] = at[Axis::kTCol] / tmem_units;
          const std::int64_t offset = base_lane[0] - slab;
          const bool ok_offset = offset == 0 || (shape_rows == 16 && offset == 16);
          if (!ok_offset) {
            std::string allowed = shape_rows == 16
                                      ? std::to_string(slab) + " or " + std::to_string(slab + 16)
                                      : std::to_string(slab);
            std::string why =
                base_lane[0] >= slab && base_lane[0] < slab + slab_rows
                    ? (shape_rows == 16 ? "; a 16-row shape starts at half 0 or 16 of the slab"
                                        : "; 32x32b covers the whole slab")
                    : "; warp " + std::to_string(warp) + " may only access lanes " +
                          std::to_string(slab) + ".." + std::to_string(slab + 31) +
                          " (PTX ISA §9.7.16.8.1)";
            return fail(
                "slab",
                "element " +
                    join(coordinate(g, k, std::vector<std::int64_t>(tmem_form_.atom.size(), 0))) +
                    " of the TMEM operand starts " + op.to_string() + " of warp " +
                    std::to_string(warp) + " at lane " + std::to_string(base_lane[0]) +
                    ", expected lane " + allowed + why,
                "tmem", tmem);
          }
          if (g == 0) {
            step.lane_offset = static_cast<int>(offset);
            step.column = static_cast<int>(base_col[0]);
            auto full = coordinate(0, k, {});
            step.index.assign(full.begin() + group_rank, full.end());
          } else if (offset != step.lane_offset) {
            return fail("slab",
                        "repeat " + join(coordinate(g, k, {})) + " starts at half-slab offset " +
                            std::to_string(offset) + " in warp " + std::to_string(warp) + " but " +
                            std::to_string(step.lane_offset) + " in warp " +
                            std::to_string(scope.warp_of_group(0)) +
                            "; one instruction has one lane offset in every warp",
                        "tmem", tmem);
          }
          if (g == 1 && k == 0)
            plan.group_column_stride = static_cast<int>(base_col[0] - plan.repeats[0].column);
          if (g == 4 && k == 0)
            plan.warpgroup_column_stride = static_cast<int>(base_col[0] - plan.repeats[0].column);
          const std::int64_t expected_col =
              step.column + static_cast<std::int64_t>(plan.group_column_stride) * (g % 4) +
              static_cast<std::int64_t>(plan.warpgroup_column_stride) * (g / 4);
          if (g > 0 && base_col[0] != expected_col) {
            return fail(
                "columns",
                "repeat " + join(coordinate(g, k, {})) + " of warp " + std::to_string(warp) +
                    " starts at column " + std::to_string(base_col[0]) + ", expected " +
                    std::to_string(expected_col) + " = " + std::to_string(step.column) + " + " +
                    std::to_string(plan.group_column_stride) + "*" + std::to_string(g % 4) +
                    (g >= 4 ? " + " + std::to_string(plan.warpgroup_column_stride) + "*" +
                                  std::to_string(g / 4)
                            : std::string()) +
                    "; a warp's column is the repeat's column plus a fixed stride per warp "
                    "(and per warpgroup)",
                "tmem", tmem);
          }
        } else {
          // Rule 6: the second access is at taddr + imm, a plain 32-bit address add.
          const std::uint32_t address0 =
              static_cast<std::uint32_t>(base_lane[0] << 16 | base_col[0]);
          const std::uint32_t address1 = address0 + static_cast<std::uint32_t>(*spec.imm());
          base_lane[1] = address1 >> 16;
          base_col[1] = address1 & 0xFFFF;
          if (base_lane[1] < slab || base_lane[1] + shape_rows > slab + slab_rows)
            return fail("split",
                        "the second access of warp " + std::to_string(warp) + " lands at lane " +
                            std::to_string(base_lane[1]) + " (taddr + imm with imm = " +
                            std::to_string(*spec.imm()) + "), outside the warp's lanes " +
                            std::to_string(slab) + ".." + std::to_string(slab + 31),
                        "tmem2", tmem);
        }
      }

      for (int l = 0; l < 32; ++l) {
        for (int r = 0; r < regs_per_instr; ++r) {
          const AtomCoord word = image(op, l, r);
          const int access = word.access;
          const View& tmem = access == 0 ? spec.tmem() : *spec.tmem2();
          const std::string_view tmem_name = access == 0 ? "tmem" : "tmem2";
          for (int h = 0; h < halves; ++h) {
            // --- register side: ownership (rule 1) and slot uniformity (rule 2)
            if (h == 0 || regs_form.halves) {
              std::int64_t atom_flat =
                  (static_cast<std::int64_t>(access) * op.atom_rows() + word.row) * op.atom_cols() +
                  word.col;
              if (regs_form.halves) atom_flat = atom_flat * 2 + h;
              regs.apply_flat(operand_base * regs_form.atom_size + atom_flat, at);
              const auto replicas = regs.replica_offsets();
              bool matched = false;
              Owner owner;
              std::int64_t m = 0;
              for (size_t rep = 0; rep < replicas.size() && !matched; ++rep) {
                candidate = at;
                candidate += replicas[rep];
                owner = owner_of(candidate, regs_axes);
                m = candidate[Axis::kM];
                matched = owner.lane == l && (owner.warp == -1 || owner.warp == warp);
                if (matched && rep == 0) at = candidate;
                if (!matched && replicas.size() == 1) break;
              }
              auto coord_text = [&] {
                std::vector<std::int64_t> atom;
                if (op.is_split()) atom.push_back(access);
                atom.push_back(word.row);
                atom.push_back(word.col);
                if (regs_form.halves) atom.push_back(h);
                return join(coordinate(g, k, atom));
              };
              if (!matched) {
                owner = owner_of(at, regs_axes);
                auto text = [](std::int64_t value) {
                  return value == -2 ? std::string("(thread axes disagree)")
                         : value < 0 ? std::string("?")
                                     : std::to_string(value);
                };
                return fail("ownership",
                            "register element " + coord_text() + " belongs to warp " +
                                text(owner.warp) + " lane " + text(owner.lane) + ", but " +
                                op.to_string() + " reads register " + std::to_string(r) +
                                " of warp " + std::to_string(warp) + " lane " + std::to_string(l) +
                                " there",
                            "regs", regs);
              }
              if (regs_form.halves && m % 2 != h)
                return fail("slot",
                            "register element " + coord_text() + " is in the " +
                                (m % 2 ? "high" : "low") + " half of its register, but " +
                                op.to_string() + " puts half " + std::to_string(h) +
                                " of register " + std::to_string(r) + " there",
                            "regs", regs);
              const std::int64_t slot = m / regs_units;
              if (slot > 65535)
                return fail("slot",
                            "register element " + coord_text() + " is in slot " +
                                std::to_string(slot) + ", beyond any register file",
                            "regs", regs);
              int& recorded = slot_of[static_cast<size_t>(k * regs_per_instr + r)];
              if (recorded < 0) {
                recorded = static_cast<int>(slot);
              } else if (recorded != slot) {
                return fail("slot",
                            "register element " + coord_text() + " is in slot " +
                                std::to_string(slot) + " of thread " +
                                std::to_string(32 * warp + l) + ", but register " +
                                std::to_string(r) + " of repeat " + join(coordinate(0, k, {})) +
                                " is slot " + std::to_string(recorded) +
                                " elsewhere; one PTX register name serves every lane and warp",
                            "regs", regs);
              }
            }
            // --- TMEM side: placement (rule 3), bounds (rule 5), coverage (rule 7)
            if (h == 0 || tmem_form_.halves) {
              std::int64_t atom_flat =
                  static_cast<std::int64_t>(word.row) * op.atom_cols() + word.col;
              if (tmem_form_.halves) atom_flat = atom_flat * 2 + h;
              tmem.apply_flat(operand_base * tmem_form_.atom_size + atom_flat, at);
              const std::int64_t want_lane = base_lane[access] + word.row;
              // Units of TCol: 32-bit cells, or 16-bit halves (u = 2*cell + half).
              std::int64_t want_unit;
              if (op.packed())
                want_unit = 2 * (base_col[access] + 2 * word.col + h);  // low half of cell 2c+h
              else if (tmem_form_.halves)
                want_unit = 2 * (base_col[access] + word.col) + h;
              else
                want_unit = base_col[access] + word.col;
              const auto replicas = tmem.replica_offsets();
              bool matched = false;
              for (size_t rep = 0; rep < replicas.size() && !matched; ++rep) {
                candidate = at;
                candidate += replicas[rep];
                matched =
                    candidate[Axis::kTLane] == want_lane && candidate[Axis::kTCol] == want_unit;
                if (matched) at = candidate;
                if (is_store) break;  // a store's TMEM operand has no replicas (checked above)
              }
              if (!matched) {
                std::vector<std::int64_t> atom = {word.row, word.col};
                if (tmem_form_.halves) atom.push_back(h);
                auto cell_text = [&](std::int64_t lane, std::int64_t unit) {
                  std::string text = "lane " + std::to_string(lane) + ", column " +
                                     std::to_string(unit / tmem_units);
                  if (tmem_units == 2) text += std::string(unit % 2 ? " high" : " low") + " half";
                  return text;
                };
                return fail(
                    op.packed() ? "placement (packed)" : "placement",
                    "TMEM element " + join(coordinate(g, k, atom)) + " is at " +
                        cell_text(at[Axis::kTLane], at[Axis::kTCol]) + ", but " + op.to_string() +
                        " puts register " + std::to_string(r) +
                        (halves == 2 ? " half " + std::to_string(h) : "") + " of warp " +
                        std::to_string(warp) + " lane " + std::to_string(l) + " at " +
                        cell_text(want_lane, want_unit) +
                        (op.packed()
                             ? " (packed halves sit in the low 16 bits of adjacent cells: column "
                               "stride 4 and half stride 2 in 16-bit units)"
                             : ""),
                    tmem_name, tmem);
              }
              if (want_lane < 0 || want_lane >= kLanes)
                return fail(
                    "bounds",
                    "TMEM lane " + std::to_string(want_lane) + " does not exist (lanes 0..127)",
                    tmem_name, tmem);
              const std::int64_t cell = want_unit / tmem_units;
              if (cell >= kColumns)
                return fail("bounds",
                            "TMEM element " + join(coordinate(g, k, {word.row, word.col})) +
                                " is at column " + std::to_string(cell) +
                                ", past the 512 columns of TMEM",
                            tmem_name, tmem);
              // Coverage in 16-bit units: a 32-bit element covers both halves of its cell.
              const std::int64_t first_half = tmem_units == 2 ? want_unit % 2 : 0;
              const std::int64_t half_count = tmem_units == 2 ? 1 : 2;
              for (std::int64_t half = first_half; half < first_half + half_count && is_store;
                   ++half) {
                auto& used =
                    tmem_used[static_cast<size_t>((want_lane * kColumns + cell) * 2 + half)];
                if (used)
                  return fail("coverage",
                              "TMEM lane " + std::to_string(want_lane) + ", column " +
                                  std::to_string(cell) + " receives two elements; element " +
                                  join(coordinate(g, k, {word.row, word.col})) + " is the second",
                              tmem_name, tmem);
                used = 1;
              }
              columns_used = std::max(columns_used, static_cast<int>(cell) + 1);
            }
          }
        }
      }
    }
  }

  // Registers: one (repeat, register) per slot (rule 7): a load must not write one register twice,
  // and a store reading one register for two TMEM elements means the views alias; the slot map is
  // also the register budget.
  std::vector<int> owner_of_slot;
  int max_slot = -1;
  for (int s : slot_of) max_slot = std::max(max_slot, s);
  owner_of_slot.assign(static_cast<size_t>(max_slot + 1), -1);
  for (size_t i = 0; i < slot_of.size(); ++i) {
    int& first = owner_of_slot[static_cast<size_t>(slot_of[i])];
    if (first >= 0) {
      const int k1 = first / regs_per_instr, r1 = first % regs_per_instr;
      const int k2 = static_cast<int>(i) / regs_per_instr,
                r2 = static_cast<int>(i) % regs_per_instr;
      return fail("coverage",
                  "register slot " + std::to_string(slot_of[i]) + " holds two elements: register " +
                      std::to_string(r1) + " of repeat " + join(coordinate(0, k1, {})) +
                      " and register " + std::to_string(r2) + " of repeat " +
                      join(coordinate(0, k2, {})),
                  "regs", regs);
    }
    first = static_cast<int>(i);
  }
  for (std::int64_t k = 0; k < repeat_count; ++k) {
    auto& slots = plan.repeats[static_cast<size_t>(k)].slots;
    slots.assign(slot_of.begin() + k * regs_per_instr, slot_of.begin() + (k + 1) * regs_per_instr);
  }
  plan.regs_per_thread = max_slot + 1;
  plan.columns_used = columns_used;
  plan.alloc_columns = std::max(
      32, static_cast<int>(std::bit_ceil(static_cast<unsigned>(std::max(columns_used, 1)))));
  return std::nullopt;
}

// Plain check, no hints: used for the user's opcode and for the alternatives.
Result<Plan> check_once(const TransferSpec& spec, bool by_dims = true) {
  Checker checker(spec, by_dims);
  if (auto error = checker.run()) return *error;
  return std::move(checker.plan);
}

// Another legal opcode of the same direction and pack mode that fits the same views, if any.
std::optional<Opcode> alternative_opcode(const TransferSpec& spec) {
  for (Shape shape : all_shapes()) {
    if ((shape == Shape::k16x32bx2) != spec.op().is_split()) continue;
    for (int num = 1; num <= 128; num *= 2) {
      auto op = Opcode::make(spec.op().direction(), shape, num, spec.op().packed());
      if (!op || *op == spec.op()) continue;
      auto candidate =
          TransferSpec::make(*op, spec.scope(), spec.tmem(), spec.regs(), spec.tmem2(), spec.imm());
      if (candidate && check_once(*candidate)) return *op;
    }
  }
  return std::nullopt;
}

// Re-orderings of one operand's (group, *repeat) dims that a kernel author plausibly mixed up:
// the group axis read in the other digit order ("(wl wh)" for "(wh wl)") and permutations of the
// leading dims. The atom dims are the instruction's and stay put.
std::vector<View> reordered_views(const View& view, int leading) {
  std::vector<View> out;
  if (leading < 1 || leading > view.ndim()) return out;
  std::string rest;
  for (int d = 1; d < view.ndim(); ++d) rest += " d" + std::to_string(d);
  const std::int64_t groups = view.shape()[0];
  for (std::int64_t a = 2; a < groups; ++a) {
    if (groups % a) continue;
    auto swapped = view.rearrange("(ga gb)" + rest + " -> (gb ga)" + rest, {{"ga", a}});
    if (swapped) out.push_back(std::move(*swapped));
  }
  if (leading >= 2 && leading <= 4) {
    std::vector<std::int64_t> order(static_cast<size_t>(view.ndim()));
    for (int d = 0; d < view.ndim(); ++d) order[static_cast<size_t>(d)] = d;
    while (std::next_permutation(order.begin(), order.begin() + leading)) {
      auto permuted = view.permute(order);
      if (permuted) out.push_back(std::move(*permuted));
    }
  }
  return out;
}

// A re-ordered register or TMEM view under which the spec passes, if any (the failing operand is
// the one the error prints).
std::optional<std::string> alternative_view(const TransferSpec& spec, const Error& error) {
  const bool regs_failed = error.details().starts_with("regs operand");
  if (!regs_failed && !error.details().starts_with("tmem operand")) return std::nullopt;
  const View& failing = regs_failed ? spec.regs() : spec.tmem();
  const int atom_rank =
      static_cast<int>(regs_failed ? register_form(spec.op(), spec.regs().dtype()).atom.size()
                                   : tmem_form(spec.op(), spec.tmem().dtype()).atom.size());
  for (const View& candidate : reordered_views(failing, failing.ndim() - atom_rank)) {
    auto changed =
        TransferSpec::make(spec.op(), spec.scope(), regs_failed ? spec.tmem() : candidate,
                           regs_failed ? candidate : spec.regs(), spec.tmem2(), spec.imm());
    if (changed && check_once(*changed))
      return std::string(regs_failed ? "register" : "TMEM") + " view " + candidate.to_string();
  }
  return std::nullopt;
}

}  // namespace

Result<Plan> check_each_element(const TransferSpec& spec) { return check_once(spec, false); }

Result<Plan> check_without_hints(const TransferSpec& spec) { return check_once(spec); }

Result<Plan> check(const TransferSpec& spec) {
  auto plan = check_once(spec);
  if (plan) return plan;
  const Error& error = plan.error();
  const std::string& message = error.message();
  const bool view_mismatch = message.starts_with("shape") || message.starts_with("ownership") ||
                             message.starts_with("placement") || message.starts_with("slot") ||
                             message.starts_with("slab");
  if (!view_mismatch) return plan;
  if (auto other = alternative_opcode(spec)) {
    return Error(ErrorCode::kRule,
                 message + " (these views match " + other->to_string() + ", not " +
                     spec.op().to_string() + ")",
                 error.details());
  }
  if (auto view = alternative_view(spec, error))
    return Error(ErrorCode::kRule, message + " (the spec passes with the " + *view + ")",
                 error.details());
  return plan;
}

}  // namespace tmem
