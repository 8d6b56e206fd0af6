// Opcode and view selection for two logical tiles; see tmem/select.h.
#include "tmem/select.h"

#include <algorithm>
#include <bit>
#include <numeric>

#include "runtime/check/by_dims.h"
#include "runtime/descriptor/additive_map.h"
#include "runtime/descriptor/owner.h"
#include "tmem/check.h"

namespace tmem {
namespace {

// What one bit of the tile's flat index does on each side.
struct Bit {
  int index = 0;            // dim of the binary view (0 = most significant)
  std::int64_t lane = 0;    // TMEM lane step
  std::int64_t column = 0;  // TMEM column step: 32-bit cells, or the atom's register-word columns
  std::int64_t unit = 0;    // TMEM column step in layout units (16-bit halves for 16-bit tiles)
  std::int64_t thread = 0;  // CTA thread step of the owner
  std::int64_t m = 0;       // register step in layout units (16-bit halves for 16-bit tiles)
};

std::int64_t thread_of(const PhysCoord& at, AxisMask axes) {
  const Owner owner = owner_of(at, axes);
  return 32 * std::max<std::int64_t>(owner.warp, 0) + std::max<std::int64_t>(owner.lane, 0);
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// The tile as n binary dims, one per index bit (most significant first).
Result<View> binary(const View& view, int bits) {
  std::vector<std::int64_t> twos(static_cast<size_t>(bits), 2);
  return view.view(twos);
}

// How the elements of a 16-bit tile pair up (docs/descriptor-language.md §Units): the bit that
// moves an element to the other half of its register (m step 1) decides the form. Its TMEM step
// says where that other half lives: in the same cell (1 unit: plain .b32, both halves of each word
// and cell), or in the low half of the next cell (2 units: .pack::16b on ld, .unpack::16b on st;
// PTX ISA §9.7.16.8.2).
struct HalfPairing {
  std::optional<Bit> half;
  bool packed = false;
  std::string note;
};

Result<HalfPairing> pair_halves(std::vector<Bit>& rest, Direction direction) {
  auto fail = [](std::string message) {
    return Error(ErrorCode::kLayout, "--op auto: 16-bit tiles: " + std::move(message));
  };
  auto it =
      std::ranges::find_if(rest, [](const Bit& bit) { return bit.m == 1 && bit.thread == 0; });
  if (it == rest.end())
    return fail(
        "no index bit moves an element to the other half of its register (a register step of 1 "
        "in 16-bit units); a 32-bit register holds two 16-bit elements, so the register tile "
        "needs them in pairs");
  HalfPairing pairing;
  pairing.half = *it;
  rest.erase(it);
  const Bit& half = *pairing.half;
  if (half.lane != 0 || (half.unit != 1 && half.unit != 2))
    return fail("the two elements of a register sit " +
                (half.lane != 0 ? std::to_string(half.lane) +
                                      (half.lane == 1 ? " TMEM lane apart" : " TMEM lanes apart")
                                : std::to_string(half.unit) + " 16-bit units apart in TMEM") +
                "; a form puts them in one cell (1 unit apart: plain .b32) or in the low halves "
                "of adjacent cells (2 units apart: .pack::16b / .unpack::16b)");
  pairing.packed = half.unit == 2;
  const std::int64_t units_per_column = pairing.packed ? 4 : 2;
  for (Bit& bit : rest) {
    if (bit.m % 2 != 0)
      return fail("index bit " + std::to_string(bit.index) + " moves an element by " +
                  std::to_string(bit.m) + " 16-bit units in the registers, not by whole registers");
    if (bit.unit % units_per_column != 0)
      return fail("index bit " + std::to_string(bit.index) + " moves an element by " +
                  std::to_string(bit.unit) + " 16-bit units in TMEM, not by whole " +
                  (pairing.packed ? "cell pairs (4 units)" : "cells (2 units)"));
    bit.column = bit.unit / units_per_column;
  }
  const bool load = direction == Direction::kLoad;
  pairing.note =
      pairing.packed
          ? "16-bit tiles: the two elements of a register sit in the low halves of adjacent "
            "TMEM cells (2 units apart), so only the " +
                std::string(load ? ".pack::16b forms are tried (the ld packs two cells into one "
                                   "register)"
                                 : ".unpack::16b forms are tried (the st unpacks one register "
                                   "into two cells)")
          : "16-bit tiles: the two elements of a register share one TMEM cell (1 unit apart), so "
            "the plain .b32 forms are tried: each moves whole 32-bit words, two 16-bit elements "
            "per register and cell (a bf16x2 register)";
  return pairing;
}

// A candidate's index bits: atom rows (lane steps below the atom height), atom columns (column
// steps below its width) and repeats (the rest), each most significant first.
struct AtomSplit {
  std::vector<Bit> rows, cols, repeats;
};

AtomSplit split_atom(const std::vector<Bit>& rest, int rows, int cols) {
  AtomSplit split;
  for (const Bit& bit : rest) {
    if (bit.column == 0 && bit.lane > 0 && bit.lane < rows)
      split.rows.push_back(bit);
    else if (bit.lane == 0 && bit.column > 0 && bit.column < cols)
      split.cols.push_back(bit);
    else
      split.repeats.push_back(bit);
  }
  std::ranges::sort(split.rows, std::greater{}, &Bit::lane);
  std::ranges::sort(split.cols, std::greater{}, &Bit::column);
  std::ranges::sort(split.repeats, [](const Bit& a, const Bit& b) {
    return a.column != b.column ? a.column > b.column : a.lane > b.lane;
  });
  return split;
}

// One run of tmem::select, a step per method: check the tiles, read their index bits, try each
// form, then choose.
class Selector {
 public:
  Selector(Direction direction, const Scope& scope, const View& tmem, const View& regs,
           const SelectOptions& options)
      : direction_(direction), scope_(scope), tmem_(tmem), regs_(regs), options_(options) {}

  std::optional<Error> check_tiles() const;
  std::optional<Error> read_bits();
  void try_forms();
  Result<Selection> choose();

 private:
  static Error layout_error(std::string message) {
    return Error(ErrorCode::kLayout, "--op auto: " + std::move(message));
  }
  SelectionCandidate consider(const Opcode& op);
  Result<View> arrange(const View& tile, const View& bits_view, const AtomSplit& split, int rows,
                       int cols) const;

  Direction direction_;
  const Scope& scope_;
  const View& tmem_;
  const View& regs_;
  const SelectOptions& options_;
  std::optional<View> tmem_bits_, regs_bits_;  // the tiles as binary views
  std::vector<Bit> group_bits_;                // bits that move an element to another warp
  std::vector<Bit> rest_;                      // the others, but the 16-bit half bit
  HalfPairing pairing_;
  std::optional<Selection> best_;
  std::vector<SelectionCandidate> considered_;
  Rule first_rule_ = Rule::kNone;  // why the first form that reached check was rejected
};

std::optional<Error> Selector::check_tiles() const {
  if (options_.register_budget < 0 || options_.register_budget > kMaxRegsPerThread)
    return Error(ErrorCode::kUsage, "--op auto: a register budget of " +
                                        std::to_string(options_.register_budget) +
                                        " registers per instruction; allowed: 1.." +
                                        std::to_string(kMaxRegsPerThread) + ", or 0 for none");
  const int tmem_width = bits(tmem_.dtype()), regs_width = bits(regs_.dtype());
  if (tmem_width != regs_width)
    return layout_error(
        "the TMEM tile is " + std::to_string(tmem_width) + "-bit (" +
        std::string(to_string(tmem_.dtype())) + ") and the register tile " +
        std::to_string(regs_width) + "-bit (" + std::string(to_string(regs_.dtype())) +
        "); automatic selection takes two 32-bit tiles or two 16-bit ones (two elements per "
        "register); for 16-bit TMEM halves with a b32 register image name the .pack::16b or "
        ".unpack::16b opcode explicitly");
  if (!std::ranges::equal(tmem_.shape(), regs_.shape()))
    return layout_error(
        "the TMEM and register tiles must have the same logical shape (one tile, no group or "
        "repeat axes)");
  const std::int64_t size = tmem_.size();
  if (size < 32 || !std::has_single_bit(static_cast<std::uint64_t>(size)))
    return layout_error("the tile has " + std::to_string(size) +
                        " elements; automatic selection needs a power of "
                        "two of at least 32");
  return std::nullopt;
}

// What each index bit of the tile does on each side; the warp bits; the 16-bit pairing.
std::optional<Error> Selector::read_bits() {
  const int n = std::countr_zero(static_cast<std::uint64_t>(tmem_.size()));
  auto tmem_bits = binary(tmem_, n);
  auto regs_bits = binary(regs_, n);
  if (!tmem_bits || !regs_bits) return layout_error("the tile cannot be split into index bits");
  auto tmem_map = additive_map(*tmem_bits);
  auto regs_map = additive_map(*regs_bits);
  if (!tmem_map || !regs_map)
    return layout_error(
        "a layout carries between index bits (or is replicated); write the views and name the "
        "opcode explicitly");
  tmem_bits_ = std::move(*tmem_bits);
  regs_bits_ = std::move(*regs_bits);

  const AxisMask regs_axes = regs_.axes();
  const std::int64_t thread0 = thread_of(regs_map->origin, regs_axes);
  for (int d = 0; d < n; ++d) {
    Bit bit;
    bit.index = d;
    const PhysCoord& t = tmem_map->dims[static_cast<size_t>(d)][1];
    bit.lane = t[Axis::kTLane];
    bit.unit = bit.column = t[Axis::kTCol];
    PhysCoord r = regs_map->origin;
    r += regs_map->dims[static_cast<size_t>(d)][1];
    bit.thread = thread_of(r, regs_axes) - thread0;
    bit.m = regs_map->dims[static_cast<size_t>(d)][1][Axis::kM];
    // Warps: the bits that move an element to another warp, most significant first.
    (bit.thread >= 32 || bit.thread <= -32 ? group_bits_ : rest_).push_back(bit);
  }
  std::ranges::sort(group_bits_, std::greater{}, &Bit::thread);
  const int groups = scope_.groups();
  if ((std::int64_t{1} << group_bits_.size()) != groups)
    return layout_error(
        "the register tile spreads over " + std::to_string(std::int64_t{1} << group_bits_.size()) +
        " warps but scope " + scope_.to_string() + " has " + std::to_string(groups));
  if (bits(tmem_.dtype()) == 16) {
    auto paired = pair_halves(rest_, direction_);
    if (!paired) return paired.error();
    pairing_ = std::move(*paired);
  }
  return std::nullopt;
}

void Selector::try_forms() {
  for (Shape shape : all_shapes()) {
    if (shape == Shape::k16x32bx2) continue;
    for (int num = 128; num >= 1; num /= 2) {
      auto op = Opcode::make(direction_, shape, num, pairing_.packed);
      if (op) considered_.push_back(consider(*op));
    }
  }
}

// One form's verdict; a legal form that beats the best so far becomes the best.
SelectionCandidate Selector::consider(const Opcode& op) {
  SelectionCandidate candidate{.op = op};
  if (options_.register_budget > 0 && op.regs_per_thread() > options_.register_budget) {
    candidate.verdict = "skipped: " + std::to_string(op.regs_per_thread()) +
                        " registers per instruction, above the budget of " +
                        std::to_string(options_.register_budget);
    return candidate;
  }
  const int rows = op.atom_rows(), cols = op.atom_cols();
  const AtomSplit split = split_atom(rest_, rows, cols);
  if ((1 << split.rows.size()) != rows || (1 << split.cols.size()) != cols) {
    candidate.verdict = "skipped: the tile has no " + std::to_string(rows) + "-lane by " +
                        std::to_string(cols) + "-column block per warp";
    return candidate;
  }
  auto tmem_view = arrange(tmem_, *tmem_bits_, split, rows, cols);
  auto regs_view = arrange(regs_, *regs_bits_, split, rows, cols);
  if (!tmem_view || !regs_view) {
    candidate.verdict = "skipped: " + (tmem_view ? regs_view.error() : tmem_view.error()).message();
    return candidate;
  }
  auto spec = TransferSpec::make(op, scope_, *tmem_view, *regs_view);
  if (!spec) {
    candidate.verdict = "rejected: " + spec.error().message();
    return candidate;
  }
  // Each rejected candidate is one line of --explain: no search for what else would fit.
  auto plan = check_without_hints(*spec);
  if (!plan) {
    if (first_rule_ == Rule::kNone) first_rule_ = plan.error().rule();
    candidate.verdict = "rejected: " + first_line(plan.error().message());
    return candidate;
  }
  candidate.legal = true;
  candidate.instructions_per_warp = plan->instructions_per_warp();
  candidate.regs_per_thread = plan->regs_per_thread;
  const bool better = !best_ ||
                      plan->instructions_per_warp() < best_->plan.instructions_per_warp() ||
                      (plan->instructions_per_warp() == best_->plan.instructions_per_warp() &&
                       plan->regs_per_thread < best_->plan.regs_per_thread);
  if (better) best_.emplace(Selection{std::move(*spec), std::move(*plan), {}, {}});
  return candidate;
}

// The tile as the candidate's (group, repeat, row, col[, half]) view.
Result<View> Selector::arrange(const View& tile, const View& bits_view, const AtomSplit& split,
                               int rows, int cols) const {
  std::vector<std::int64_t> order, shape_out;
  for (const auto* part : {&group_bits_, &split.repeats, &split.rows, &split.cols})
    for (const Bit& bit : *part) order.push_back(bit.index);
  if (pairing_.half) order.push_back(pairing_.half->index);  // the trailing half axis
  if (scope_.group_rank()) shape_out.push_back(scope_.groups());
  if (!split.repeats.empty()) shape_out.push_back(std::int64_t{1} << split.repeats.size());
  shape_out.push_back(rows);
  shape_out.push_back(cols);
  if (pairing_.half) shape_out.push_back(2);
  // In order, the tile reshapes directly (its text then reads as one .view of the tile).
  if (std::ranges::is_sorted(order)) return tile.view(shape_out);
  auto permuted = bits_view.permute(order);
  if (!permuted) return permuted.error();
  return permuted->view(shape_out);
}

Result<Selection> Selector::choose() {
  if (!best_) {
    std::string why = pairing_.note.empty() ? std::string() : pairing_.note + "\n";
    for (const auto& candidate : considered_)
      why += candidate.op.to_string() + ": " + candidate.verdict + "\n";
    return Error(ErrorCode::kRule,
                 "--op auto: no " + std::string(to_string(direction_)) +
                     " form fits these tiles at scope " + scope_.to_string(),
                 why)
        .set_rule(first_rule_ == Rule::kNone ? Rule::kShape : first_rule_);
  }
  for (auto& candidate : considered_) {
    if (!candidate.legal) continue;
    if (candidate.op == best_->spec.op())
      candidate.verdict = "chosen: " + std::to_string(candidate.instructions_per_warp) +
                          " instruction(s) per warp, " + std::to_string(candidate.regs_per_thread) +
                          " registers per thread";
    else
      candidate.verdict = "legal, lost: " + std::to_string(candidate.instructions_per_warp) +
                          " instruction(s) per warp and " +
                          std::to_string(candidate.regs_per_thread) + " registers per thread vs " +
                          std::to_string(best_->plan.instructions_per_warp()) + " and " +
                          std::to_string(best_->plan.regs_per_thread);
  }
  best_->considered = std::move(considered_);
  if (!pairing_.note.empty()) best_->notes.push_back(std::move(pairing_.note));
  return std::move(*best_);
}

}  // namespace

std::string Selection::explain() const {
  std::string out;
  for (const std::string& note : notes) out += note + "\n";
  for (const SelectionCandidate& candidate : considered)
    out += candidate.op.to_string() + ": " + candidate.verdict + "\n";
  return out;
}

Result<Selection> select(Direction direction, const Scope& scope, const View& tmem,
                         const View& regs, const SelectOptions& options) {
  Selector selector(direction, scope, tmem, regs, options);
  if (auto error = selector.check_tiles()) return std::move(*error);
  if (auto error = selector.read_bits()) return std::move(*error);
  selector.try_forms();
  return selector.choose();
}

}  // namespace tmem
