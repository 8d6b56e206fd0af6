// The native-image rules of docs/transfer-semantics.md §Rules: decide, element by element, whether
// the instruction repeated over the operand views moves every element where the views say it lives,
// and plan it. One function per rule (docs/checking.md lists them in the order they are applied);
// each names its rule (tmem/rule.h) and writes its own message.
#include "tmem/check.h"

#include <algorithm>
#include <bit>
#include <sstream>

#include "runtime/check/by_dims.h"
#include "runtime/descriptor/owner.h"
#include "tmem/image.h"

namespace tmem {
namespace {

constexpr int kLanes = 128;    // TMEM lanes per CTA (PTX ISA §9.7.16.1)
constexpr int kColumns = 512;  // 32-bit TMEM columns per CTA on sm_100a/f
constexpr int kSlabRows = 32;  // lanes a warp may access (PTX ISA §9.7.16.8.1)
// A thread has at most 255 registers (PTX ISA §5.4.1 "maxnreg", ptxas: 255 per thread on
// sm_100): a slot past 254 names a register no thread has.
constexpr std::int64_t kMaxSlot = 254;
// Each (repeat, register) of a transfer needs its own slot (rule 7), so more register words per
// thread than slots can never pass; refusing them first also bounds the walk below to 32 warps x
// 32 lanes x 255 words x 2 halves per operand.
constexpr std::int64_t kMaxRegisterWords = kMaxSlot + 1;
// Units of work of one check: elements x replicas, summed over the operands. The largest legal
// transfer has 2 x 522,240 (cta:32, 255 words, 16-bit halves), which 2^20 admits; a walk of 2^20
// units takes about a quarter of a second (docs/reliability.md).
constexpr std::int64_t kMaxWork = std::int64_t{1} << 20;
// Units the search for a fitting opcode or view may spend after a failure (each candidate is a
// whole check): two candidates for the largest specs, all of them for ordinary ones.
constexpr std::int64_t kMaxHintWork = std::int64_t{1} << 21;

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

// The coordinate of flat element `flat` of `view` (row-major over its shape).
std::vector<std::int64_t> unravel(const View& view, std::int64_t flat) {
  auto shape = view.shape();
  std::vector<std::int64_t> coord(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    coord[d] = flat % shape[d];
    flat /= shape[d];
  }
  return coord;
}

// Elements x replicas over the operands: what one pass of the per-element walk visits.
std::int64_t work_units(const TransferSpec& spec) {
  auto units = [](const View& view) {
    // Both factors are bounded (kMaxElements, kMaxReplicas), so the product fits int64.
    return view.size() * static_cast<std::int64_t>(view.replica_offsets().size());
  };
  return units(spec.tmem()) + units(spec.regs()) + (spec.tmem2() ? units(*spec.tmem2()) : 0);
}

// The operand suffixes an opcode implies (docs/transfer-semantics.md §Operands): register words
// (rows, cols), or (2, 16, N) for 16x32bx2; a 16-bit operand adds a trailing half axis of 2.
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

// One (group, repeat, lane, register, half) of the per-element walk.
struct Visit {
  int g = 0;
  int warp = 0;
  std::int64_t k = 0;
  int l = 0;
  int r = 0;
  int h = 0;
  AtomCoord word;
  std::int64_t operand_base = 0;  // g * repeats + k: the (group, repeat) in atoms
};

// Where the instruction reads or writes a register element, and which replica that is.
struct RegisterSide {
  PhysCoord at;  // the replica the instruction uses (replica 0 when none matches)
  std::int64_t m = 0;
  std::int64_t flat = 0;  // the element's flat index in the register view
  size_t used = 0;        // index of the replica the instruction uses
  bool matched = false;
};

// The TMEM element of a visit: where it is and where the instruction puts it.
struct TmemSide {
  const View* view = nullptr;
  std::string_view name;  // "tmem" or "tmem2"
  std::int64_t flat = 0;  // the element's flat index in the TMEM view
  PhysCoord at;           // the replica at the instruction's cell (replica 0 when none is)
  size_t used = 0;
  bool matched = false;
  std::int64_t want_lane = 0;
  std::int64_t want_unit = 0;  // in TCol units: 32-bit cells, or 16-bit halves
};

// Who holds each register position of a replicated store source: (thread, slot, 16-bit half) ->
// the register view's flat element + 1 (0: nobody). Filled during the walk; the first position
// claimed by two elements is kept for check_replica_collisions.
struct RegisterClaims {
  static constexpr std::int64_t kThreads = 32 * 32;  // a CTA of 32 warps
  std::vector<std::int32_t> holder;
  std::int64_t conflict_key = -1;
  std::int64_t conflict_first = 0, conflict_second = 0;  // flat elements
  bool second_is_replica = false;
  static std::int64_t key(std::int64_t thread, std::int64_t slot, int half) {
    return (thread * (kMaxSlot + 1) + slot) * 2 + half;
  }
  void claim(std::int64_t key, std::int64_t flat, bool replica) {
    if (holder.empty()) holder.assign(static_cast<size_t>(key_count()), 0);
    std::int32_t& at = holder[static_cast<size_t>(key)];
    if (at == 0) {
      at = static_cast<std::int32_t>(flat + 1);
    } else if (at != flat + 1 && conflict_key < 0) {
      conflict_key = key;
      conflict_first = at - 1;
      conflict_second = flat;
      second_is_replica = replica;
    }
  }
  static std::int64_t key_count() { return kThreads * (kMaxSlot + 1) * 2; }
};

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
  bool try_by_dims = true;  // prove the rules per dim first (by_dims.h), elements only if that
                            // gives up
  int groups = 1;
  int group_rank = 0;
  std::vector<std::int64_t> repeat_shape;
  std::int64_t repeat_count = 1;
  Form regs_form, tmem_form_;
  int regs_units = 1, tmem_units = 1;  // TCol / m units per 32-bit word
  int halves = 1;                      // pieces per 32-bit word visited
  bool is_store = false;
  AxisMask regs_axes = 0;
  std::vector<std::uint8_t> tmem_used;  // 128 lanes x 512 columns x 2 halves (stores)
  std::vector<int> slot_of;             // per (repeat, register): the slot, -1 until seen
  RegisterClaims claims;                // only when a store's register source is replicated
  std::int64_t base_lane[2] = {0, 0}, base_col[2] = {0, 0};  // this instruction's accesses
  int columns_used = 0;
  int max_replica_slot = -1;
  std::string failed_operand;  // "tmem", "tmem2" or "regs" of the last error
  Plan plan;

  std::optional<Error> run();

  // Whole-operand rules, before any element is visited.
  std::optional<Error> check_axes();
  std::optional<Error> check_dtypes();
  std::optional<Error> check_shapes();
  std::optional<Error> check_size();
  std::optional<Error> check_thread_axes();
  std::optional<Error> check_destination_replicas();
  // Per (group, repeat): the instruction's address.
  std::optional<Error> check_slab(int g, std::int64_t k);
  std::optional<Error> check_columns(int g, std::int64_t k);
  std::optional<Error> check_split(int g, std::int64_t k);
  // Per element.
  std::optional<Error> check_ownership(const Visit& v, const RegisterSide& reg);
  std::optional<Error> check_slot(const Visit& v, const RegisterSide& reg);
  std::optional<Error> check_register_replicas(const Visit& v, const RegisterSide& reg);
  std::optional<Error> check_placement(const Visit& v, const TmemSide& t);
  std::optional<Error> check_bounds(const Visit& v, const TmemSide& t);
  std::optional<Error> check_tmem_replicas(const Visit& v, const TmemSide& t);
  std::optional<Error> check_coverage(const Visit& v, const TmemSide& t);
  // After the walk.
  std::optional<Error> check_register_coverage();
  std::optional<Error> check_replica_collisions();

  // The walk's pieces that decide nothing.
  std::optional<Error> visit_instruction(int g, std::int64_t k);
  std::optional<Error> visit_element(const Visit& v);
  RegisterSide locate_register(const Visit& v) const;
  TmemSide locate_tmem(const Visit& v) const;
  void finish_plan();

  Error fail(Rule rule, const std::string& message, std::string_view operand_name,
             const View& operand, std::string_view qualifier = {}) {
    failed_operand = operand_name;
    std::string prefix = to_string(rule);
    if (!qualifier.empty()) prefix += " (" + std::string(qualifier) + ")";
    return Error(ErrorCode::kRule, prefix + ": " + message, describe_operand(operand_name, operand))
        .set_rule(rule);
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
  // The register element of a visit, in the register view's coordinates.
  std::string register_coordinate(const Visit& v) const {
    std::vector<std::int64_t> atom;
    if (op.is_split()) atom.push_back(v.word.access);
    atom.push_back(v.word.row);
    atom.push_back(v.word.col);
    if (regs_form.halves) atom.push_back(v.h);
    return join(coordinate(v.g, v.k, atom));
  }
  std::string cell_text(std::int64_t lane, std::int64_t unit) const {
    std::string text =
        "lane " + std::to_string(lane) + ", column " + std::to_string(unit / tmem_units);
    if (tmem_units == 2) text += std::string(unit % 2 ? " high" : " low") + " half";
    return text;
  }
  bool in_scope(std::int64_t warp) const {
    for (int g = 0; g < groups; ++g)
      if (scope.warp_of_group(g) == warp) return true;
    return false;
  }
};

// ---- whole-operand rules ----------------------------------------------------------------------

// axes: a TMEM operand is placed with TLane/TCol, a register operand with thread axes and m.
std::optional<Error> Checker::check_axes() {
  auto check_one = [&](std::string_view name, const View& view, AxisMask allowed,
                       const char* hint) -> std::optional<Error> {
    AxisMask stray = view.axes() & ~allowed;
    if (!stray) return std::nullopt;
    for (Axis axis : all_axes()) {
      if (stray & axis_bit(axis))
        return fail(Rule::kAxes,
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

// pack, dtype: plain forms move whole words (same width on both sides); pack/unpack needs 16-bit
// TMEM elements (the low halves of two cells, PTX ISA §9.7.16.8.2).
std::optional<Error> Checker::check_dtypes() {
  const std::string op_name = op.to_string();
  const int tmem_bits = bits(spec.tmem().dtype()), regs_bits = bits(spec.regs().dtype());
  if (op.packed() && tmem_bits != 16)
    return fail(Rule::kPack,
                op_name +
                    " moves 16-bit halves: the TMEM operand needs a 16-bit dtype (b16, f16, bf16) "
                    "and a trailing half axis of 2, not " +
                    std::string(to_string(spec.tmem().dtype())),
                "tmem", spec.tmem());
  if (!op.packed() && tmem_bits != regs_bits)
    return fail(
        Rule::kDtype,
        "the TMEM operand is " + std::to_string(tmem_bits) + "-bit but the register operand is " +
            std::to_string(regs_bits) + "-bit; " + op_name +
            " copies 32-bit words unchanged (use .pack::16b/.unpack::16b to move 16-bit halves)",
        "regs", spec.regs());
  // ld.red reduces 32-bit values (.f32, .u32, .s32; rule R14): 16-bit elements have no form.
  if (op.reduces() && regs_bits != 32)
    return fail(Rule::kDtype,
                op_name +
                    " reduces 32-bit values: the operands need a 32-bit dtype (f32, u32, "
                    "s32, b32), not " +
                    std::string(to_string(spec.regs().dtype())) + " (rule R14)",
                "regs", spec.regs());
  if (spec.tmem2() && spec.tmem2()->dtype() != spec.tmem().dtype())
    return fail(Rule::kDtype, "the second TMEM region's dtype differs from the first's", "tmem2",
                *spec.tmem2());
  return std::nullopt;
}

// shape: every operand is (*group, *repeat, *atom) with the scope's group, the opcode's atom and
// the same repeats.
std::optional<Error> Checker::check_shapes() {
  const std::string op_name = op.to_string();
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
      return fail(Rule::kShape,
                  "the " + std::string(name) + " operand has rank " + std::to_string(shape.size()) +
                      " but " + op_name + " at scope " + scope.to_string() + " needs shape " +
                      expected,
                  name, view);
    }
    if (group_rank && shape[0] != groups)
      return fail(Rule::kShape,
                  "axis 0 of the " + std::string(name) + " operand is the group axis of scope " +
                      scope.to_string() + " and must have extent " + std::to_string(groups) +
                      ", not " + std::to_string(shape[0]),
                  name, view);
    const size_t atom_start = shape.size() - form.atom.size();
    for (size_t i = 0; i < form.atom.size(); ++i) {
      if (shape[atom_start + i] != form.atom[i]) {
        std::string atom_text = join(form.atom);
        return fail(Rule::kShape,
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
    return fail(Rule::kShape,
                "the repeat axes differ: the TMEM operand has " + join(repeat_shape) +
                    " and the register operand " + join(regs_repeats) +
                    "; both are (group, *repeat, *atom) with the same repeats",
                "regs", spec.regs());
  if (spec.tmem2() && repeats_of(*spec.tmem2(), tmem_form_) != repeat_shape)
    return fail(Rule::kShape, "the repeat axes of the second TMEM region differ from the first's",
                "tmem2", *spec.tmem2());
  repeat_count = 1;
  for (auto extent : repeat_shape) repeat_count *= extent;
  return std::nullopt;
}

// limit: refused before any per-element work (docs/reliability.md). Not a rule violation.
std::optional<Error> Checker::check_size() {
  failed_operand = "tmem";
  // Each repeat is one instruction per warp and each of its registers needs its own slot.
  if (repeat_count * op.regs_per_thread() > kMaxRegisterWords)
    return Error(ErrorCode::kLimit,
                 "limit: the transfer issues " + std::to_string(repeat_count) +
                     " instructions of " + std::to_string(op.regs_per_thread()) +
                     " registers per warp, " + std::to_string(repeat_count * op.regs_per_thread()) +
                     " register words per thread; a thread has at most " +
                     std::to_string(kMaxRegisterWords) + " registers",
                 describe_operand("tmem", spec.tmem()));
  // Every replica of every element is visited (and placed by `run`).
  const std::int64_t work = work_units(spec);
  if (work > kMaxWork)
    return Error(
        ErrorCode::kLimit,
        "limit: the operands hold " + std::to_string(work) +
            " element replicas (elements x replicas of each operand); at most " +
            std::to_string(kMaxWork) + " are checked",
        describe_operand("tmem", spec.tmem()) + "\n" + describe_operand("regs", spec.regs()));
  return std::nullopt;
}

// ownership (rule 1), before any element: the register operand must say which warp and which
// lane hold an element.
std::optional<Error> Checker::check_thread_axes() {
  const bool regs_has_warp =
      (regs_axes & (axis_bit(Axis::kWarpid) | axis_bit(Axis::kTx) | axis_bit(Axis::kTidInWg) |
                    axis_bit(Axis::kWidInWg))) != 0;
  if (!regs_has_warp && scope.kind() != Scope::Kind::kWarp)
    return fail(Rule::kOwnership,
                "the register operand does not say which warp owns an element; at scope " +
                    scope.to_string() + " use tid_in_wg, tx, wid_in_wg+laneid or warpid+laneid",
                "regs", spec.regs());
  if ((regs_axes & (axis_bit(Axis::kLaneid) | axis_bit(Axis::kTidInWg) | axis_bit(Axis::kTx))) == 0)
    return fail(
        Rule::kOwnership,
        "the register operand does not say which lane owns an element; use laneid, tid_in_wg or tx",
        "regs", spec.regs());
  return std::nullopt;
}

// replicas (rule 7), destination side: the instruction writes each element once, so the
// destination (a store's TMEM, a load's registers) cannot be replicated. The source's replicas
// are checked element by element (check_register_replicas, check_tmem_replicas).
std::optional<Error> Checker::check_destination_replicas() {
  const View& destination = is_store ? spec.tmem() : spec.regs();
  if (destination.replica_offsets().size() > 1)
    return fail(Rule::kReplicas,
                "the " + std::string(is_store ? "TMEM" : "register") +
                    " operand is the destination of " + op.to_string() +
                    " and is replicated (R[...]); the instruction writes each element once",
                is_store ? "tmem" : "regs", destination);
  if (spec.tmem2() && is_store && spec.tmem2()->replica_offsets().size() > 1) {
    return fail(Rule::kReplicas,
                "the second TMEM region is the destination of a store and is replicated (R[...])",
                "tmem2", *spec.tmem2());
  }
  return std::nullopt;
}

// ---- per instruction --------------------------------------------------------------------------

// slab (rule 4): warp w's instruction starts at lane 32*(w%4), + 16 for the upper half of a
// 16-row shape, at the same half-slab offset in every warp.
std::optional<Error> Checker::check_slab(int g, std::int64_t k) {
  const int warp = scope.warp_of_group(g);
  const int slab = 32 * (warp % 4);
  const int shape_rows = op.atom_rows();
  const std::int64_t offset = base_lane[0] - slab;
  const bool ok_offset = offset == 0 || (shape_rows == 16 && offset == 16);
  if (!ok_offset) {
    std::string allowed = shape_rows == 16
                              ? std::to_string(slab) + " or " + std::to_string(slab + 16)
                              : std::to_string(slab);
    std::string why =
        base_lane[0] >= slab && base_lane[0] < slab + kSlabRows
            ? (shape_rows == 16 ? "; a 16-row shape starts at half 0 or 16 of the slab"
                                : "; 32x32b covers the whole slab")
            : "; warp " + std::to_string(warp) + " may only access lanes " + std::to_string(slab) +
                  ".." + std::to_string(slab + 31) + " (PTX ISA §9.7.16.8.1)";
    return fail(
        Rule::kSlab,
        "element " + join(coordinate(g, k, std::vector<std::int64_t>(tmem_form_.atom.size(), 0))) +
            " of the TMEM operand starts " + op.to_string() + " of warp " + std::to_string(warp) +
            " at lane " + std::to_string(base_lane[0]) + ", expected lane " + allowed + why,
        "tmem", spec.tmem());
  }
  const RepeatStep& step = plan.repeats[static_cast<size_t>(k)];
  if (g > 0 && offset != step.lane_offset)
    return fail(Rule::kSlab,
                "repeat " + join(coordinate(g, k, {})) + " starts at half-slab offset " +
                    std::to_string(offset) + " in warp " + std::to_string(warp) + " but " +
                    std::to_string(step.lane_offset) + " in warp " +
                    std::to_string(scope.warp_of_group(0)) +
                    "; one instruction has one lane offset in every warp",
                "tmem", spec.tmem());
  return std::nullopt;
}

// columns (rule 4): warp g's column is the repeat's column plus d*(g%4) + e*(g/4).
std::optional<Error> Checker::check_columns(int g, std::int64_t k) {
  if (g == 0) return std::nullopt;
  const int warp = scope.warp_of_group(g);
  const RepeatStep& step = plan.repeats[static_cast<size_t>(k)];
  const std::int64_t expected_col =
      step.column + static_cast<std::int64_t>(plan.group_column_stride) * (g % 4) +
      static_cast<std::int64_t>(plan.warpgroup_column_stride) * (g / 4);
  if (base_col[0] == expected_col) return std::nullopt;
  return fail(Rule::kColumns,
              "repeat " + join(coordinate(g, k, {})) + " of warp " + std::to_string(warp) +
                  " starts at column " + std::to_string(base_col[0]) + ", expected " +
                  std::to_string(expected_col) + " = " + std::to_string(step.column) + " + " +
                  std::to_string(plan.group_column_stride) + "*" + std::to_string(g % 4) +
                  (g >= 4 ? " + " + std::to_string(plan.warpgroup_column_stride) + "*" +
                                std::to_string(g / 4)
                          : std::string()) +
                  "; a warp's column is the repeat's column plus a fixed stride per warp "
                  "(and per warpgroup)",
              "tmem", spec.tmem());
}

// split (rule 6): the second access of 16x32bx2 is at taddr + imm, a plain 32-bit address add,
// and stays in the warp's slab.
std::optional<Error> Checker::check_split(int g, std::int64_t /*k*/) {
  const int warp = scope.warp_of_group(g);
  const int slab = 32 * (warp % 4);
  const std::uint32_t address0 = static_cast<std::uint32_t>(base_lane[0] << 16 | base_col[0]);
  const std::uint32_t address1 = address0 + static_cast<std::uint32_t>(*spec.imm());
  base_lane[1] = address1 >> 16;
  base_col[1] = address1 & 0xFFFF;
  if (base_lane[1] >= slab && base_lane[1] + op.atom_rows() <= slab + kSlabRows)
    return std::nullopt;
  return fail(
      Rule::kSplit,
      "the second access of warp " + std::to_string(warp) + " lands at lane " +
          std::to_string(base_lane[1]) + " (taddr + imm with imm = " + std::to_string(*spec.imm()) +
          "), outside the warp's lanes " + std::to_string(slab) + ".." + std::to_string(slab + 31),
      "tmem2", *spec.tmem2());
}

// ---- per element ------------------------------------------------------------------------------

// ownership (rule 1): the register element the instruction moves for (warp, lane l, register r)
// belongs to that thread (one of its replicas, for a store's source).
std::optional<Error> Checker::check_ownership(const Visit& v, const RegisterSide& reg) {
  if (reg.matched) return std::nullopt;
  const Owner owner = owner_of(reg.at, regs_axes);
  auto text = [](std::int64_t value) {
    return value == -2 ? std::string("(thread axes disagree)")
           : value < 0 ? std::string("?")
                       : std::to_string(value);
  };
  std::string who = "warp " + text(owner.warp) + " lane " + text(owner.lane);
  if (owner.range) who = "no thread (" + std::string(owner.range) + ")";
  return fail(Rule::kOwnership,
              "register element " + register_coordinate(v) + " belongs to " + who + ", but " +
                  op.to_string() + " reads register " + std::to_string(v.r) + " of warp " +
                  std::to_string(v.warp) + " lane " + std::to_string(v.l) + " there",
              "regs", spec.regs());
}

// slot (rule 2): the element sits in the register half the image says, in a slot a thread has,
// and in the same slot in every lane and warp (one PTX register name).
std::optional<Error> Checker::check_slot(const Visit& v, const RegisterSide& reg) {
  if (regs_form.halves && reg.m % 2 != v.h)
    return fail(Rule::kSlot,
                "register element " + register_coordinate(v) + " is in the " +
                    (reg.m % 2 ? "high" : "low") + " half of its register, but " + op.to_string() +
                    " puts half " + std::to_string(v.h) + " of register " + std::to_string(v.r) +
                    " there",
                "regs", spec.regs());
  const std::int64_t slot = reg.m / regs_units;
  if (slot > kMaxSlot)
    return fail(Rule::kSlot,
                "register element " + register_coordinate(v) + " is in slot " +
                    std::to_string(slot) + ", but a thread has at most " +
                    std::to_string(kMaxSlot + 1) + " registers (slots 0.." +
                    std::to_string(kMaxSlot) + ")",
                "regs", spec.regs());
  int& recorded = slot_of[static_cast<size_t>(v.k * op.regs_per_thread() + v.r)];
  if (recorded < 0) {
    recorded = static_cast<int>(slot);
    return std::nullopt;
  }
  if (recorded == slot) return std::nullopt;
  return fail(Rule::kSlot,
              "register element " + register_coordinate(v) + " is in slot " + std::to_string(slot) +
                  " of thread " + std::to_string(32 * v.warp + v.l) + ", but register " +
                  std::to_string(v.r) + " of repeat " + join(coordinate(0, v.k, {})) + " is slot " +
                  std::to_string(recorded) +
                  " elsewhere; one PTX register name serves every lane and warp",
              "regs", spec.regs());
}

// replicas (rule 7), a store's register source: each replica the instruction does not read is a
// copy that must exist (a thread of the scope, a slot a thread has); it is placed by `run` and
// counts in the register budget. Collisions with other elements are decided after the walk.
std::optional<Error> Checker::check_register_replicas(const Visit& v, const RegisterSide& reg) {
  const auto replicas = spec.regs().replica_offsets();
  if (replicas.size() < 2) return std::nullopt;
  PhysCoord base, copy;
  spec.regs().apply_flat(reg.flat, base);
  const std::int64_t slot = reg.m / regs_units;
  const int read_thread = 32 * v.warp + v.l;
  // A 32-bit element holds both halves of its slot, a 16-bit one the half m % 2.
  auto claim = [&](std::int64_t thread, std::int64_t m, bool replica) {
    const int first = regs_units == 2 ? static_cast<int>(m % 2) : 0;
    for (int half = first; half < (regs_units == 2 ? first + 1 : 2); ++half)
      claims.claim(RegisterClaims::key(thread, m / regs_units, half), reg.flat, replica);
  };
  claim(read_thread, reg.m, false);
  for (size_t rep = 0; rep < replicas.size(); ++rep) {
    if (rep == reg.used) continue;
    copy = base;
    copy += replicas[rep];
    Owner owner = owner_of(copy, regs_axes);
    if (owner.warp == -1 && scope.kind() == Scope::Kind::kWarp) owner.warp = scope.warp_id();
    const std::int64_t m = copy[Axis::kM];
    const std::string where = "register element " + register_coordinate(v) + " (read from slot " +
                              std::to_string(slot) + " of thread " + std::to_string(read_thread) +
                              ") has a replica ";
    if (owner.range || owner.lane < 0 || owner.warp < 0 || !in_scope(owner.warp))
      return fail(Rule::kReplicas,
                  where + "in " +
                      (owner.range      ? "no thread (" + std::string(owner.range) + ")"
                       : owner.lane < 0 ? std::string("no thread (its thread axes disagree)")
                       : owner.warp < 0 ? std::string("no warp (its thread axes disagree)")
                                        : "warp " + std::to_string(owner.warp)) +
                      ", which does not take part in a transfer at scope " + scope.to_string(),
                  "regs", spec.regs());
    if (m / regs_units > kMaxSlot)
      return fail(Rule::kReplicas,
                  where + "in slot " + std::to_string(m / regs_units) +
                      ", but a thread has at most " + std::to_string(kMaxSlot + 1) + " registers",
                  "regs", spec.regs());
    max_replica_slot = std::max(max_replica_slot, static_cast<int>(m / regs_units));
    if (32 * owner.warp + owner.lane != read_thread || m != reg.m)
      claim(32 * owner.warp + owner.lane, m, true);
  }
  return std::nullopt;
}

// placement (rule 3): the TMEM element is at lane lane0 + row, column col0 + col (packed: the low
// half of cell col0 + 2*col + h).
std::optional<Error> Checker::check_placement(const Visit& v, const TmemSide& t) {
  if (t.matched) return std::nullopt;
  std::vector<std::int64_t> atom = {v.word.row, v.word.col};
  if (tmem_form_.halves) atom.push_back(v.h);
  const int pieces = halves;
  return fail(Rule::kPlacement,
              "TMEM element " + join(coordinate(v.g, v.k, atom)) + " is at " +
                  cell_text(t.at[Axis::kTLane], t.at[Axis::kTCol]) + ", but " + op.to_string() +
                  " puts register " + std::to_string(v.r) +
                  (pieces == 2 ? " half " + std::to_string(v.h) : "") + " of warp " +
                  std::to_string(v.warp) + " lane " + std::to_string(v.l) + " at " +
                  cell_text(t.want_lane, t.want_unit) +
                  (op.packed() ? " (packed halves sit in the low 16 bits of adjacent cells: column "
                                 "stride 4 and half stride 2 in 16-bit units)"
                               : ""),
              t.name, *t.view, op.packed() ? "packed" : "");
}

// bounds (rule 5): lanes < 128, columns < 512.
std::optional<Error> Checker::check_bounds(const Visit& v, const TmemSide& t) {
  if (t.want_lane < 0 || t.want_lane >= kLanes)
    return fail(Rule::kBounds,
                "TMEM lane " + std::to_string(t.want_lane) + " does not exist (lanes 0..127)",
                t.name, *t.view);
  const std::int64_t cell = t.want_unit / tmem_units;
  if (cell >= kColumns)
    return fail(Rule::kBounds,
                "TMEM element " + join(coordinate(v.g, v.k, {v.word.row, v.word.col})) +
                    " is at column " + std::to_string(cell) + ", past the 512 columns of TMEM",
                t.name, *t.view);
  return std::nullopt;
}

// replicas (rule 7), a load's TMEM source: each replica the instruction does not read is a copy
// of the element that must exist in TMEM; the allocation covers it. Copies may share cells with
// other elements: a load may read one cell for several elements (a broadcast).
std::optional<Error> Checker::check_tmem_replicas(const Visit& v, const TmemSide& t) {
  const auto replicas = t.view->replica_offsets();
  if (replicas.size() < 2) return std::nullopt;
  PhysCoord base, copy;
  t.view->apply_flat(t.flat, base);
  for (size_t rep = 0; rep < replicas.size(); ++rep) {
    if (rep == t.used) continue;
    copy = base;
    copy += replicas[rep];
    const std::int64_t lane = copy[Axis::kTLane], cell = copy[Axis::kTCol] / tmem_units;
    if (lane >= kLanes || cell >= kColumns) {
      std::vector<std::int64_t> atom = {v.word.row, v.word.col};
      if (tmem_form_.halves) atom.push_back(v.h);
      return fail(Rule::kReplicas,
                  "TMEM element " + join(coordinate(v.g, v.k, atom)) + " (read at " +
                      cell_text(t.want_lane, t.want_unit) + ") has a replica at " +
                      cell_text(lane, copy[Axis::kTCol]) +
                      ", which TMEM does not have (lanes 0..127, columns 0..511)",
                  t.name, *t.view);
    }
    columns_used = std::max(columns_used, static_cast<int>(cell) + 1);
  }
  return std::nullopt;
}

// coverage (rule 7), a store's TMEM destination: each cell (16-bit half) receives one element.
std::optional<Error> Checker::check_coverage(const Visit& v, const TmemSide& t) {
  if (!is_store) return std::nullopt;
  const std::int64_t cell = t.want_unit / tmem_units;
  // Coverage in 16-bit units: a 32-bit element covers both halves of its cell.
  const std::int64_t first_half = tmem_units == 2 ? t.want_unit % 2 : 0;
  const std::int64_t half_count = tmem_units == 2 ? 1 : 2;
  for (std::int64_t half = first_half; half < first_half + half_count; ++half) {
    auto& used = tmem_used[static_cast<size_t>((t.want_lane * kColumns + cell) * 2 + half)];
    if (used)
      return fail(Rule::kCoverage,
                  "TMEM lane " + std::to_string(t.want_lane) + ", column " + std::to_string(cell) +
                      " receives two elements; element " +
                      join(coordinate(v.g, v.k, {v.word.row, v.word.col})) + " is the second",
                  t.name, *t.view);
    used = 1;
  }
  return std::nullopt;
}

// ---- after the walk ---------------------------------------------------------------------------

// coverage (rule 7), registers: one (repeat, register) per slot. A load must not write one
// register twice, and a store reading one register for two TMEM elements means the views alias.
std::optional<Error> Checker::check_register_coverage() {
  const int regs_per_instr = op.regs_per_thread();
  int max_slot = -1;
  for (int s : slot_of) max_slot = std::max(max_slot, s);
  std::vector<int> owner_of_slot(static_cast<size_t>(max_slot + 1), -1);
  for (size_t i = 0; i < slot_of.size(); ++i) {
    int& first = owner_of_slot[static_cast<size_t>(slot_of[i])];
    if (first >= 0) {
      const int k1 = first / regs_per_instr, r1 = first % regs_per_instr;
      const int k2 = static_cast<int>(i) / regs_per_instr,
                r2 = static_cast<int>(i) % regs_per_instr;
      return fail(Rule::kCoverage,
                  "register slot " + std::to_string(slot_of[i]) + " holds two elements: register " +
                      std::to_string(r1) + " of repeat " + join(coordinate(0, k1, {})) +
                      " and register " + std::to_string(r2) + " of repeat " +
                      join(coordinate(0, k2, {})),
                  "regs", spec.regs());
    }
    first = static_cast<int>(i);
  }
  return std::nullopt;
}

// replicas (rule 7), a store's register source: a copy must not sit in a register that holds
// another element (the instruction's or another copy): a register holds one value.
std::optional<Error> Checker::check_replica_collisions() {
  if (claims.conflict_key < 0) return std::nullopt;
  const std::int64_t cell = claims.conflict_key / 2;
  const std::int64_t thread = cell / (kMaxSlot + 1), slot = cell % (kMaxSlot + 1);
  // The register coverage rule ran first, so one of the two is a replica.
  const std::int64_t copy =
      claims.second_is_replica ? claims.conflict_second : claims.conflict_first;
  const std::int64_t other =
      claims.second_is_replica ? claims.conflict_first : claims.conflict_second;
  return fail(Rule::kReplicas,
              "register element " + join(unravel(spec.regs(), copy)) + " has a replica in slot " +
                  std::to_string(slot) + " of thread " + std::to_string(thread) +
                  ", where element " + join(unravel(spec.regs(), other)) +
                  " is too; a register holds one element",
              "regs", spec.regs());
}

// ---- the walk ---------------------------------------------------------------------------------

RegisterSide Checker::locate_register(const Visit& v) const {
  RegisterSide side;
  std::int64_t atom_flat =
      (static_cast<std::int64_t>(v.word.access) * op.atom_rows() + v.word.row) * op.atom_cols() +
      v.word.col;
  if (regs_form.halves) atom_flat = atom_flat * 2 + v.h;
  side.flat = v.operand_base * regs_form.atom_size + atom_flat;
  spec.regs().apply_flat(side.flat, side.at);
  // The instruction reads (or writes) the first replica its thread holds.
  const auto replicas = spec.regs().replica_offsets();
  PhysCoord candidate;
  for (size_t rep = 0; rep < replicas.size(); ++rep) {
    candidate = side.at;
    candidate += replicas[rep];
    const Owner owner = owner_of(candidate, regs_axes);
    if (owner.lane == v.l && (owner.warp == -1 || owner.warp == v.warp)) {
      side.matched = true;
      side.used = rep;
      side.m = candidate[Axis::kM];
      if (rep == 0) side.at = candidate;
      break;
    }
  }
  return side;
}

TmemSide Checker::locate_tmem(const Visit& v) const {
  TmemSide side;
  const int access = v.word.access;
  side.view = access == 0 ? &spec.tmem() : &*spec.tmem2();
  side.name = access == 0 ? "tmem" : "tmem2";
  std::int64_t atom_flat = static_cast<std::int64_t>(v.word.row) * op.atom_cols() + v.word.col;
  if (tmem_form_.halves) atom_flat = atom_flat * 2 + v.h;
  side.flat = v.operand_base * tmem_form_.atom_size + atom_flat;
  side.view->apply_flat(side.flat, side.at);
  side.want_lane = base_lane[access] + v.word.row;
  // Units of TCol: 32-bit cells, or 16-bit halves (u = 2*cell + half).
  if (op.packed())
    side.want_unit = 2 * (base_col[access] + 2 * v.word.col + v.h);  // low half of cell 2c+h
  else if (tmem_form_.halves)
    side.want_unit = 2 * (base_col[access] + v.word.col) + v.h;
  else
    side.want_unit = base_col[access] + v.word.col;
  // The instruction uses the replica at its cell (a store's destination has one).
  const auto replicas = side.view->replica_offsets();
  PhysCoord candidate;
  for (size_t rep = 0; rep < replicas.size(); ++rep) {
    candidate = side.at;
    candidate += replicas[rep];
    if (candidate[Axis::kTLane] == side.want_lane && candidate[Axis::kTCol] == side.want_unit) {
      side.matched = true;
      side.used = rep;
      side.at = candidate;
      break;
    }
  }
  return side;
}

std::optional<Error> Checker::visit_instruction(int g, std::int64_t k) {
  RepeatStep& step = plan.repeats[static_cast<size_t>(k)];
  // The instruction's address comes from the element of register 0 of lane 0, at (row 0, col 0).
  PhysCoord at;
  spec.tmem().apply_flat((static_cast<std::int64_t>(g) * repeat_count + k) * tmem_form_.atom_size,
                         at);
  base_lane[0] = at[Axis::kTLane];
  base_col[0] = at[Axis::kTCol] / tmem_units;
  if (auto e = check_slab(g, k)) return e;
  if (g == 0) {
    step.lane_offset = static_cast<int>(base_lane[0] - 32 * (scope.warp_of_group(0) % 4));
    step.column = static_cast<int>(base_col[0]);
    auto full = coordinate(0, k, {});
    step.index.assign(full.begin() + group_rank, full.end());
  }
  if (g == 1 && k == 0)
    plan.group_column_stride = static_cast<int>(base_col[0] - plan.repeats[0].column);
  if (g == 4 && k == 0)
    plan.warpgroup_column_stride = static_cast<int>(base_col[0] - plan.repeats[0].column);
  if (auto e = check_columns(g, k)) return e;
  if (op.is_split())
    if (auto e = check_split(g, k)) return e;
  return std::nullopt;
}

std::optional<Error> Checker::visit_element(const Visit& v) {
  // Register side: ownership (rule 1), slot (rule 2), the source's replicas (rule 7).
  if (v.h == 0 || regs_form.halves) {
    const RegisterSide reg = locate_register(v);
    if (auto e = check_ownership(v, reg)) return e;
    if (auto e = check_slot(v, reg)) return e;
    if (is_store)
      if (auto e = check_register_replicas(v, reg)) return e;
  }
  // TMEM side: placement (rule 3), bounds (rule 5), the source's replicas and coverage (rule 7).
  if (v.h == 0 || tmem_form_.halves) {
    const TmemSide t = locate_tmem(v);
    if (auto e = check_placement(v, t)) return e;
    if (auto e = check_bounds(v, t)) return e;
    if (!is_store)
      if (auto e = check_tmem_replicas(v, t)) return e;
    if (auto e = check_coverage(v, t)) return e;
    columns_used = std::max(columns_used, static_cast<int>(t.want_unit / tmem_units) + 1);
  }
  return std::nullopt;
}

void Checker::finish_plan() {
  const int regs_per_instr = op.regs_per_thread();
  int max_slot = max_replica_slot;
  for (int s : slot_of) max_slot = std::max(max_slot, s);
  for (std::int64_t k = 0; k < repeat_count; ++k) {
    auto& slots = plan.repeats[static_cast<size_t>(k)].slots;
    slots.assign(slot_of.begin() + k * regs_per_instr, slot_of.begin() + (k + 1) * regs_per_instr);
  }
  plan.regs_per_thread = max_slot + 1;
  plan.columns_used = columns_used;
  plan.alloc_columns = std::max(
      32, static_cast<int>(std::bit_ceil(static_cast<unsigned>(std::max(columns_used, 1)))));
}

std::optional<Error> Checker::run() {
  groups = scope.groups();
  group_rank = scope.group_rank();
  is_store = !op.is_load();
  regs_axes = spec.regs().axes();
  regs_form = register_form(op, spec.regs().dtype());
  tmem_form_ = tmem_form(op, spec.tmem().dtype());
  regs_units = units_per_word(spec.regs().dtype());
  tmem_units = units_per_word(spec.tmem().dtype());
  halves = (regs_form.halves || tmem_form_.halves) ? 2 : 1;

  if (auto e = check_axes()) return e;
  if (auto e = check_dtypes()) return e;
  if (auto e = check_shapes()) return e;
  if (auto e = check_size()) return e;
  if (auto e = check_thread_axes()) return e;
  if (auto e = check_destination_replicas()) return e;

  if (try_by_dims) {
    if (auto proven = plan_by_dims(spec, repeat_shape, regs_form.halves, tmem_form_.halves)) {
      plan = std::move(*proven);
      return std::nullopt;
    }
  }

  const int regs_per_instr = op.regs_per_thread();
  plan.op = op;
  plan.scope = scope;
  plan.repeat_shape = repeat_shape;
  plan.imm = spec.imm();
  plan.repeats.assign(static_cast<size_t>(repeat_count), RepeatStep{});
  if (is_store) tmem_used.assign(static_cast<size_t>(kLanes) * kColumns * 2, 0);
  slot_of.assign(static_cast<size_t>(repeat_count * regs_per_instr), -1);

  Visit v;
  for (v.g = 0; v.g < groups; ++v.g) {
    v.warp = scope.warp_of_group(v.g);
    for (v.k = 0; v.k < repeat_count; ++v.k) {
      v.operand_base = static_cast<std::int64_t>(v.g) * repeat_count + v.k;
      if (auto e = visit_instruction(v.g, v.k)) return e;
      for (v.l = 0; v.l < 32; ++v.l)
        for (v.r = 0; v.r < regs_per_instr; ++v.r) {
          v.word = image(op, v.l, v.r);
          for (v.h = 0; v.h < halves; ++v.h)
            if (auto e = visit_element(v)) return e;
        }
    }
  }
  if (auto e = check_register_coverage()) return e;
  if (auto e = check_replica_collisions()) return e;
  finish_plan();
  return std::nullopt;
}

// A plain check, no hints: used for the user's opcode and for the alternatives. `failed_operand`
// receives the operand an error prints ("tmem", "tmem2", "regs").
// tcgen05.ld.red: each instruction's reduction result gets its own register slot after the
// register view's slots (docs/descriptor-language.md "ld.red"): repeat k -> slot S + k, S = the
// view's register budget. The view describes the loaded values only.
std::optional<Error> assign_redval_slots(Plan& plan) {
  if (!plan.op.reduces()) return std::nullopt;
  const int first = plan.regs_per_thread;
  const int total = first + plan.instructions_per_warp();
  if (total - 1 > kMaxSlot)
    return Error(ErrorCode::kRule, "slot: " + plan.op.to_string() + " needs " +
                                       std::to_string(plan.instructions_per_warp()) +
                                       " reduction results after the register view's " +
                                       std::to_string(first) + " slots, " + std::to_string(total) +
                                       " registers per thread; a thread has " +
                                       std::to_string(kMaxSlot + 1))
        .set_rule(Rule::kSlot);
  for (int k = 0; k < plan.instructions_per_warp(); ++k)
    plan.repeats[static_cast<size_t>(k)].redval_slot = first + k;
  plan.regs_per_thread = total;
  return std::nullopt;
}

Result<Plan> check_once(const TransferSpec& spec, bool by_dims = true,
                        std::string* failed_operand = nullptr) {
  Checker checker(spec, by_dims);
  if (auto error = checker.run()) {
    if (failed_operand) *failed_operand = checker.failed_operand;
    return *error;
  }
  if (auto error = assign_redval_slots(checker.plan)) {
    if (failed_operand) *failed_operand = "regs";
    return *error;
  }
  return std::move(checker.plan);
}

// The hint search's allowance: each candidate is one check of a spec of the same size.
struct HintBudget {
  std::int64_t left;
  bool spend(std::int64_t units) {
    if (left < units) return false;
    left -= units;
    return true;
  }
};

// Another legal opcode of the same direction and pack mode that fits the same views, if any.
std::optional<Opcode> alternative_opcode(const TransferSpec& spec, HintBudget& budget) {
  const std::int64_t units = std::max<std::int64_t>(work_units(spec), 1);
  for (Shape shape : all_shapes()) {
    if ((shape == Shape::k16x32bx2) != spec.op().is_split()) continue;
    for (int num = 1; num <= 128; num *= 2) {
      // ld.red keeps its reduction: the hint names a form with the same .redOp and type.
      auto op = spec.op().reduces()
                    ? Opcode::make_load_reduce(shape, num, *spec.op().reduction())
                    : Opcode::make(spec.op().direction(), shape, num, spec.op().packed());
      if (!op || *op == spec.op()) continue;
      auto candidate =
          TransferSpec::make(*op, spec.scope(), spec.tmem(), spec.regs(), spec.tmem2(), spec.imm());
      if (!candidate) continue;
      if (!budget.spend(units)) return std::nullopt;
      if (check_once(*candidate)) return *op;
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

// A re-ordered register or TMEM view under which the spec passes, if any (`failing` is the
// operand the error printed).
std::optional<std::string> alternative_view(const TransferSpec& spec, const std::string& failing,
                                            HintBudget& budget) {
  const bool regs_failed = failing == "regs";
  if (!regs_failed && failing != "tmem") return std::nullopt;
  const View& operand = regs_failed ? spec.regs() : spec.tmem();
  const int atom_rank =
      static_cast<int>(regs_failed ? register_form(spec.op(), spec.regs().dtype()).atom.size()
                                   : tmem_form(spec.op(), spec.tmem().dtype()).atom.size());
  const std::int64_t units = std::max<std::int64_t>(work_units(spec), 1);
  for (const View& candidate : reordered_views(operand, operand.ndim() - atom_rank)) {
    auto changed =
        TransferSpec::make(spec.op(), spec.scope(), regs_failed ? spec.tmem() : candidate,
                           regs_failed ? candidate : spec.regs(), spec.tmem2(), spec.imm());
    if (!changed) continue;
    if (!budget.spend(units)) return std::nullopt;
    if (check_once(*changed))
      return std::string(regs_failed ? "register" : "TMEM") + " view " + candidate.to_string();
  }
  return std::nullopt;
}

// The rules whose failure may come from a view written for another opcode or in another order.
bool is_view_mismatch(Rule rule) {
  return rule == Rule::kShape || rule == Rule::kOwnership || rule == Rule::kPlacement ||
         rule == Rule::kSlot || rule == Rule::kSlab;
}

}  // namespace

Result<Plan> check_each_element(const TransferSpec& spec) { return check_once(spec, false); }

Result<Plan> check_without_hints(const TransferSpec& spec) { return check_once(spec); }

Result<Plan> check(const TransferSpec& spec) {
  std::string failing;
  auto plan = check_once(spec, true, &failing);
  if (plan) return plan;
  const Error& error = plan.error();
  if (!is_view_mismatch(error.rule())) return plan;
  HintBudget budget{kMaxHintWork};
  if (auto other = alternative_opcode(spec, budget)) {
    return Error(ErrorCode::kRule,
                 error.message() + " (these views match " + other->to_string() + ", not " +
                     spec.op().to_string() + ")",
                 error.details())
        .set_rule(error.rule());
  }
  if (auto view = alternative_view(spec, failing, budget))
    return Error(ErrorCode::kRule, error.message() + " (the spec passes with the " + *view + ")",
                 error.details())
        .set_rule(error.rule());
  return plan;
}

}  // namespace tmem
