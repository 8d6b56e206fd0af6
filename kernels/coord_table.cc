// Coordinates on the host (tmem/coords.h): the coordinate map behind N_coord (coord_map) as a
// table, the comparison of two transfers' owners, and the packed 16-bit twin of a load.
#include <algorithm>
#include <array>
#include <tuple>

#include "kernels/device_function.h"
#include "tmem/check.h"
#include "tmem/coords.h"
#include "tmem/image.h"
#include "tmem/select.h"

namespace tmem {
namespace {

std::string tuple_text(const std::vector<std::int64_t>& index) {
  std::string out = "(";
  for (size_t i = 0; i < index.size(); ++i) out += (i ? "," : "") + std::to_string(index[i]);
  return out + ")";
}

std::string holder_text(const Holder& holder, int halves) {
  std::string out =
      "thread " + std::to_string(holder.thread) + " register " + std::to_string(holder.reg);
  if (halves == 2) out += holder.half ? " (high half)" : " (low half)";
  return out;
}

struct Checked {
  Plan plan;
  CoordTable table;
};

Result<Checked> checked_table(const TransferSpec& spec) {
  auto plan = check(spec);
  if (!plan) return plan.error();
  auto map = kernels::coord_map(spec, *plan);
  if (!map) return map.error();
  CoordTable table;
  table.threads = map->threads;
  table.registers = map->slots;
  table.halves = map->halves;
  table.rank = map->rank;
  table.values.assign(map->table.begin(), map->table.end());
  return Checked{std::move(*plan), std::move(table)};
}

// One (element, CTA thread) -> holder entry of a transfer.
struct Entry {
  std::int64_t element = 0;  // row-major flat index in the register tensor
  int cta_thread = 0;
  Holder holder;
  auto key() const { return std::tie(element, cta_thread, holder.reg, holder.half); }
};

std::vector<Entry> entries(const Checked& checked, std::span<const std::int64_t> shape) {
  const CoordTable& table = checked.table;
  std::vector<Entry> out;
  for (int t = 0; t < table.threads; ++t)
    for (int r = 0; r < table.registers; ++r)
      for (int h = 0; h < table.halves; ++h) {
        if (!table.used(t, r, h)) continue;
        std::int64_t flat = 0;
        for (int d = 0; d < table.rank; ++d)
          flat = flat * shape[static_cast<size_t>(d)] + table.at(t, r, h, d);
        const int cta_thread = 32 * checked.plan.scope.warp_of_group(t / 32) + t % 32;
        out.push_back({flat, cta_thread, {t, r, h}});
      }
  std::ranges::sort(out, [](const Entry& x, const Entry& y) { return x.key() < y.key(); });
  return out;
}

std::vector<std::int64_t> unflatten(std::int64_t flat, std::span<const std::int64_t> shape) {
  std::vector<std::int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

// The base text of a view ("tensor(...)" or a factory call) is everything up to its first closing
// parenthesis at depth 0; what follows are the view's operations, which depend on shapes only.
std::string operations_of(const std::string& text) {
  int depth = 0;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')' && --depth == 0) {
      return text.substr(i + 1);
    }
  }
  return {};
}

// `view`'s operations over `base` (a tensor of the same shape).
Result<View> rebase(const View& view, const Tensor& base) {
  return View::parse(base.to_string() + operations_of(view.to_string()));
}

// Where the load reads register slot `slot` of thread `t`: its TMEM lane and 32-bit column.
struct Cell {
  int lane = -1;
  int column = -1;
};

std::vector<Cell> load_cells(const Plan& plan) {
  const int threads = 32 * plan.warps();
  std::vector<Cell> cells(static_cast<size_t>(threads) * static_cast<size_t>(plan.regs_per_thread));
  for (int g = 0; g < plan.warps(); ++g)
    for (int k = 0; k < plan.instructions_per_warp(); ++k) {
      const std::uint32_t address = plan.address(g, k);
      const RepeatStep& step = plan.repeats[static_cast<size_t>(k)];
      for (int lane = 0; lane < 32; ++lane)
        for (int r = 0; r < plan.op.regs_per_thread(); ++r) {
          const AtomCoord at = image(plan.op, lane, r);
          const int slot = step.slots[static_cast<size_t>(r)];
          cells[static_cast<size_t>(32 * g + lane) * static_cast<size_t>(plan.regs_per_thread) +
                static_cast<size_t>(slot)] = {static_cast<int>(address >> 16) + at.row,
                                              static_cast<int>(address & 0xFFFF) + at.col};
        }
    }
  return cells;
}

}  // namespace

std::vector<std::int64_t> CoordTable::shape() const {
  if (halves == 2) return {threads, registers, 2, rank};
  return {threads, registers, rank};
}

Result<CoordTable> coord_table(const TransferSpec& spec) {
  auto checked = checked_table(spec);
  if (!checked) return checked.error();
  return std::move(checked->table);
}

std::string OwnerComparison::to_string() const {
  const std::string counts = std::to_string(common) + " common element" + (common == 1 ? "" : "s") +
                             ", " + std::to_string(only_a) + " only in a, " +
                             std::to_string(only_b) + " only in b";
  if (same) return "same owners: " + counts;
  if (!counterexample) return "different owners: " + counts;
  const HeldElement& c = *counterexample;
  return "different owners: element " + tuple_text(c.index) + " is in " +
         holder_text(c.a, halves_a) + " of a but in " + holder_text(c.b, halves_b) + " of b (" +
         counts + ")";
}

Result<OwnerComparison> same_owners(const TransferSpec& a, const TransferSpec& b) {
  const std::span<const std::int64_t> shape = a.regs().base().shape();
  if (!std::ranges::equal(shape, b.regs().base().shape()))
    return Error(
        ErrorCode::kLayout,
        "same_owners compares elements by their index in the register tensor, but a's is " +
            shape_to_string(shape) + " and b's " + shape_to_string(b.regs().base().shape()));
  auto ca = checked_table(a);
  if (!ca) return ca.error();
  auto cb = checked_table(b);
  if (!cb) return cb.error();
  const std::vector<Entry> ea = entries(*ca, shape), eb = entries(*cb, shape);
  OwnerComparison out;
  out.same = true;
  out.halves_a = ca->table.halves;
  out.halves_b = cb->table.halves;
  // Walk both sorted lists one element at a time.
  size_t i = 0, j = 0;
  auto span_of = [](const std::vector<Entry>& list, size_t from) {
    size_t to = from;
    while (to < list.size() && list[to].element == list[from].element) ++to;
    return to;
  };
  while (i < ea.size() || j < eb.size()) {
    if (j >= eb.size() || (i < ea.size() && ea[i].element < eb[j].element)) {
      ++out.only_a;
      i = span_of(ea, i);
      continue;
    }
    if (i >= ea.size() || eb[j].element < ea[i].element) {
      ++out.only_b;
      j = span_of(eb, j);
      continue;
    }
    const size_t i_end = span_of(ea, i), j_end = span_of(eb, j);
    ++out.common;
    auto threads = [](const std::vector<Entry>& list, size_t from, size_t to) {
      std::vector<int> set;
      for (size_t k = from; k < to; ++k)
        if (set.empty() || set.back() != list[k].cta_thread) set.push_back(list[k].cta_thread);
      return set;
    };
    const std::vector<int> ta = threads(ea, i, i_end), tb = threads(eb, j, j_end);
    const std::vector<std::int64_t> index = unflatten(ea[i].element, shape);
    if (ta != tb) {
      if (out.same) {
        auto stray = [](const std::vector<Entry>& list, size_t from, size_t to,
                        const std::vector<int>& other) {
          for (size_t k = from; k < to; ++k)
            if (!std::ranges::binary_search(other, list[k].cta_thread)) return list[k].holder;
          return list[from].holder;
        };
        out.counterexample = HeldElement{index, stray(ea, i, i_end, tb), stray(eb, j, j_end, ta)};
        out.pairs.clear();
      }
      out.same = false;
    } else if (out.same) {
      size_t kb = j;
      for (size_t ka = i; ka < i_end; ++ka) {
        if (ka > i && ea[ka].cta_thread == ea[ka - 1].cta_thread) continue;  // first per thread
        while (eb[kb].cta_thread != ea[ka].cta_thread) ++kb;
        out.pairs.push_back({index, ea[ka].holder, eb[kb].holder});
      }
    }
    i = i_end;
    j = j_end;
  }
  return out;
}

Result<TransferSpec> packed_twin(const TransferSpec& load, DType dtype) {
  auto usage = [](std::string message) {
    return Error(ErrorCode::kUsage, "packed_twin: " + std::move(message));
  };
  if (dtype != DType::kBF16 && dtype != DType::kF16)
    return usage("dtype " + std::string(to_string(dtype)) +
                 "; allowed: bf16, f16 (two 16-bit elements per 32-bit register)");
  const Opcode& op = load.op();
  if (!op.is_load())
    return usage(op.to_string() + " is a store; the twin of a load (S) is the store of P");
  if (op.packed() || op.is_split())
    return usage(op.to_string() +
                 ": the twin is taken of a plain load (not .pack::16b, not 16x32bx2)");
  if (bits(load.regs().dtype()) != 32 || bits(load.tmem().dtype()) != 32)
    return usage("the load's views are " + std::string(to_string(load.tmem().dtype())) + " and " +
                 std::string(to_string(load.regs().dtype())) +
                 "; the twin packs a 32-bit load's registers in pairs");
  auto plan = check(load);
  if (!plan) return plan.error();

  // Each pair of registers (2q, 2q+1) becomes one 32-bit register of the twin, so one TMEM cell:
  // both must be loaded from one lane, columns c and c + 1 with c + c0 even.
  int first_column = INT32_MAX;
  for (const RepeatStep& step : plan->repeats) first_column = std::min(first_column, step.column);
  const int c0 = first_column - first_column % 2;
  const std::vector<Cell> cells = load_cells(*plan);
  auto map = kernels::coord_map(load, *plan);
  if (!map) return map.error();
  const int regs = plan->regs_per_thread;
  auto element = [&](int t, int s) {
    std::vector<std::int64_t> index;
    for (int d = 0; d < map->rank; ++d) index.push_back(map->at(t, s, d));
    return tuple_text(index);
  };
  for (int t = 0; t < map->threads; ++t)
    for (int q = 0; 2 * q < regs; ++q) {
      const int lo = 2 * q, hi = 2 * q + 1;
      const bool lo_used = map->slot_used(lo), hi_used = hi < regs && map->slot_used(hi);
      if (!lo_used && !hi_used) continue;
      if (lo_used != hi_used)
        return Error(ErrorCode::kLayout,
                     "packed_twin: the load moves register " + std::to_string(lo_used ? lo : hi) +
                         " but not register " + std::to_string(lo_used ? hi : lo) +
                         ", so register " + std::to_string(q) +
                         " of a twin would hold one element; the twin needs the load's "
                         "registers in pairs 2q, 2q + 1");
      const Cell a =
          cells[static_cast<size_t>(t) * static_cast<size_t>(regs) + static_cast<size_t>(lo)];
      const Cell b =
          cells[static_cast<size_t>(t) * static_cast<size_t>(regs) + static_cast<size_t>(hi)];
      if (a.lane != b.lane || b.column != a.column + 1 || a.column % 2 != 0)
        return Error(ErrorCode::kLayout,
                     "packed_twin: no 16-bit store holds the load's registers " +
                         std::to_string(lo) + " and " + std::to_string(hi) +
                         " in one register over its TMEM: thread " + std::to_string(t) +
                         " loads element " + element(t, lo) + " from lane " +
                         std::to_string(a.lane) + ", column " + std::to_string(a.column) +
                         " and element " + element(t, hi) + " from lane " + std::to_string(b.lane) +
                         ", column " + std::to_string(b.column) +
                         "; a register of the twin is one TMEM cell, so each pair must sit in "
                         "one lane, in columns c and c + 1 with c even (" +
                         op.to_string() +
                         " pairs them otherwise; 32x32b and 16x256b loads keep pairs in a row)");
    }

  // P keeps S's layouts with 16-bit elements: register unit s is slot s/2, half s%2; TMEM unit
  // c + c0 is cell (c + c0)/2, so the twin's cells start at the load's first (even) column.
  const Tensor& regs_base = load.regs().base();
  const Tensor& tmem_base = load.tmem().base();
  auto regs16 =
      Tensor::make(std::vector<std::int64_t>(regs_base.shape().begin(), regs_base.shape().end()),
                   regs_base.layout(), dtype);
  if (!regs16) return regs16.error();
  std::vector<Offset> offsets(tmem_base.layout().offsets().begin(),
                              tmem_base.layout().offsets().end());
  if (c0) offsets.push_back({Axis::kTCol, c0});
  auto tmem_layout = Layout::make(
      std::vector<Iter>(tmem_base.layout().shard().begin(), tmem_base.layout().shard().end()),
      std::vector<Iter>(tmem_base.layout().replica().begin(), tmem_base.layout().replica().end()),
      offsets);
  if (!tmem_layout) return tmem_layout.error();
  auto tmem16 =
      Tensor::make(std::vector<std::int64_t>(tmem_base.shape().begin(), tmem_base.shape().end()),
                   std::move(*tmem_layout), dtype);
  if (!tmem16) return tmem16.error();
  auto regs_view = rebase(load.regs(), *regs16);
  auto tmem_view = rebase(load.tmem(), *tmem16);
  if (!regs_view || !tmem_view)
    return Error(ErrorCode::kInternal,
                 "packed_twin: the load's views do not re-parse over 16-bit tensors: " +
                     (regs_view ? tmem_view.error() : regs_view.error()).message());
  auto selection = select(Direction::kStore, load.scope(), *tmem_view, *regs_view);
  if (!selection)
    return Error(
               selection.error().code(),
               "packed_twin: no 16-bit store fits the load's pairs: " + selection.error().message(),
               selection.error().detail_entries())
        .set_rule(selection.error().rule());
  TransferSpec twin = std::move(selection->spec);

  // Checked: register q of the twin holds the load's slots 2q and 2q + 1 in the same thread.
  auto twin_table = coord_table(twin);
  if (!twin_table) return twin_table.error();
  for (int t = 0; t < map->threads; ++t)
    for (int s = 0; s < regs; ++s)
      for (int d = 0; d < map->rank; ++d)
        if (map->slot_used(s) && twin_table->at(t, s / 2, s % 2, d) != map->at(t, s, d))
          return Error(ErrorCode::kInternal,
                       "packed_twin: register " + std::to_string(s / 2) + " of thread " +
                           std::to_string(t) + " of " + twin.op().to_string() +
                           " does not hold the load's register " + std::to_string(s));
  auto owners = same_owners(load, twin);
  if (!owners) return owners.error();
  if (!owners->same) return Error(ErrorCode::kInternal, "packed_twin: " + owners->to_string());
  return twin;
}

}  // namespace tmem
