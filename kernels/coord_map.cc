// NAME_coord's index map (kernels/device_function.h): which element of the register tensor each
// thread of the scope holds in each register slot, as the reference table and as the closed forms
// that the PTX and CUDA C++ forms of NAME_coord and the generic tier's descriptor evaluate.
#include <algorithm>
#include <bit>
#include <optional>
#include <set>

#include "kernels/device_function.h"
#include "runtime/descriptor/bit_linear.h"
#include "runtime/descriptor/owner.h"

namespace tmem::kernels {
namespace {

// Bits needed to number `count` values (0 for 1).
int bits_for(int count) {
  return static_cast<int>(std::bit_width(static_cast<unsigned>(count - 1)));
}

int scope_threads(const Scope& scope) { return 32 * scope.groups(); }

// Thread number in the scope of a register element's owner, or -1 outside the scope.
int scope_thread(const Scope& scope, const Owner& owner) {
  if (!owner.valid() || owner.lane < 0 || owner.lane >= 32) return -1;
  switch (scope.kind()) {
    case Scope::Kind::kWarp:
      if (owner.warp >= 0 && owner.warp != scope.warp_id()) return -1;
      return static_cast<int>(owner.lane);
    case Scope::Kind::kWarpgroup:
    case Scope::Kind::kCta:
      for (int g = 0; g < scope.groups(); ++g)
        if (scope.warp_of_group(g) == owner.warp) return 32 * g + static_cast<int>(owner.lane);
      return -1;
  }
  return -1;
}

// Fits value(t, s) = constant + sum thread bits + sum slot bits over every thread < threads and
// used slot; nullopt when that does not hold.
std::optional<CoordTerms> fit_terms(const CoordMap& map, int dim, const std::vector<int>& slots,
                                    int half = 0) {
  const int thread_bits = bits_for(map.threads), slot_bits = bits_for(map.slots);
  const int s0 = slots.front();
  auto value = [&](int t, int s) { return static_cast<std::int64_t>(map.at(t, s, half, dim)); };
  CoordTerms terms;
  terms.thread_bits.assign(static_cast<size_t>(thread_bits), 0);
  terms.slot_bits.assign(static_cast<size_t>(slots.size() > 1 ? slot_bits : 0), 0);
  for (int b = 0; b < thread_bits; ++b)
    if ((1 << b) < map.threads)
      terms.thread_bits[static_cast<size_t>(b)] = value(1 << b, s0) - value(0, s0);
  const std::set<int> used(slots.begin(), slots.end());
  for (size_t b = 0; b < terms.slot_bits.size(); ++b) {
    for (int s : slots) {
      const int with = s | (1 << b);
      if ((s & (1 << b)) == 0 && used.count(with)) {
        terms.slot_bits[b] = value(0, with) - value(0, s);
        break;
      }
    }
  }
  auto eval = [](const CoordTerms& c, int t, int s) {
    std::int64_t v = c.constant;
    for (size_t b = 0; b < c.thread_bits.size(); ++b)
      if (t >> b & 1) v += c.thread_bits[b];
    for (size_t b = 0; b < c.slot_bits.size(); ++b)
      if (s >> b & 1) v += c.slot_bits[b];
    return v;
  };
  terms.constant = value(0, s0) - eval(terms, 0, s0);
  // The check of every (thread, slot): the thread part once per thread, the slot part once per
  // slot (the generic tier builds a layout's descriptor from this fit; docs/specialization.md
  // §Tiers).
  std::vector<std::int64_t> thread_part(static_cast<size_t>(map.threads));
  for (int t = 0; t < map.threads; ++t) thread_part[static_cast<size_t>(t)] = eval(terms, t, 0);
  for (int s : slots) {
    const std::int64_t slot_part = eval(terms, 0, s);
    for (int t = 0; t < map.threads; ++t) {
      const std::int64_t v = value(t, s);
      if (v < 0 || thread_part[static_cast<size_t>(t)] + slot_part - terms.constant != v)
        return std::nullopt;
    }
  }
  return terms;
}

// The closed form of one half over the used slots: additive if every dim fits one, else per slot.
CoordForm fit_form(const CoordMap& map, const std::vector<int>& slots, int half) {
  CoordForm form;
  form.additive = true;
  for (int d = 0; d < map.rank && form.additive; ++d) {
    auto terms = fit_terms(map, d, slots, half);
    if (!terms) {
      form.additive = false;
      form.dims.clear();
    } else {
      form.dims.push_back(std::move(*terms));
    }
  }
  if (form.additive) return form;
  for (int s : slots) {
    std::vector<CoordTerms> dims;
    for (int d = 0; d < map.rank; ++d) {
      auto terms = fit_terms(map, d, {s}, half);
      if (!terms) {
        form.expressible = false;
        form.per_slot.clear();
        return form;
      }
      terms->slot_bits.clear();
      dims.push_back(std::move(*terms));
    }
    form.per_slot.emplace_back(s, std::move(dims));
  }
  return form;
}

std::vector<int> used_slot_list(const CoordMap& map) {
  std::vector<int> slots;
  for (const auto& [begin, end] : map.used_slots)
    for (int s = begin; s < end; ++s) slots.push_back(s);
  return slots;
}

// The closed form without the table, when the view is a permutation of bits (docs/specialization.md
// §Tiers: a layout's descriptor in microseconds). Every power-of-two layout is exactly linear in
// the bits of the flat index (digits are shifts and masks). Two BitLinearMaps of the flat index,
// checked on every single bit and every pair of bits (a carry between two bits would show there):
// where the element sits, as the position thread + threads * m, and its logical index. When the
// position is a permutation of bits covering every thread of the scope and every register unit
// once, the index after the position's inverse gives the weights of the thread, half and slot
// bits; false leaves the map to the full table.
bool bit_permutation_form(const View& regs, const Plan& plan, CoordMap& map) {
  const std::int64_t size = regs.size(), threads = map.threads, units = map.halves;
  if (regs.replica_offsets().size() != 1 || size <= 1) return false;
  if (!std::has_single_bit(static_cast<std::uint64_t>(size)) ||
      !std::has_single_bit(static_cast<std::uint64_t>(threads)) ||
      size != threads * units * map.slots)
    return false;
  if (map.used_slots.size() != 1 || map.used_slots[0] != std::pair{0, map.slots}) return false;
  const int bits = std::countr_zero(static_cast<std::uint64_t>(size));
  const std::span<const std::int64_t> shape = regs.base().shape();
  const AxisMask axes = regs.axes();
  auto position = [&](std::uint64_t flat, BitLinearMap::Vector& value) {
    PhysCoord at;
    regs.apply_flat(static_cast<std::int64_t>(flat), at);
    at += regs.replica_offsets()[0];
    const int thread = scope_thread(plan.scope, owner_of(at, axes));
    value.assign({thread + threads * at[Axis::kM]});
    return thread >= 0 && at[Axis::kM] >= 0;
  };
  auto index = [&](std::uint64_t flat, BitLinearMap::Vector& value) {
    std::int64_t rest = regs.base_index(static_cast<std::int64_t>(flat));
    value.assign(static_cast<size_t>(map.rank), 0);
    for (int d = map.rank - 1; d >= 0; --d) {
      value[static_cast<size_t>(d)] = rest % shape[static_cast<size_t>(d)];
      rest /= shape[static_cast<size_t>(d)];
    }
    return true;
  };
  constexpr auto kPairs = BitLinearMap::Verify::kPairs;
  const auto where = BitLinearMap::probe(bits, position, kPairs);
  const auto from_where = where ? where->inverse() : std::nullopt;
  const auto what = from_where ? BitLinearMap::probe(bits, index, kPairs) : std::nullopt;
  if (!what) return false;
  // Position bit p -> index: thread bits, then the half bit of a 16-bit view, then slot bits.
  const BitLinearMap weights = what->compose(*from_where).value();
  const int thread_bits = bits_for(map.threads);
  const int half_bits = units == 2 ? 1 : 0;
  std::vector<CoordTerms> low(static_cast<size_t>(map.rank));
  for (int d = 0; d < map.rank; ++d) {
    CoordTerms& terms = low[static_cast<size_t>(d)];
    terms.constant = weights.origin()[static_cast<size_t>(d)];
    for (int p = 0; p < bits; ++p) {
      const std::int64_t w = weights.image(p)[static_cast<size_t>(d)];
      if (p < thread_bits) terms.thread_bits.push_back(w);
      if (p >= thread_bits + half_bits) terms.slot_bits.push_back(w);
    }
  }
  map.additive = true;
  map.expressible = true;
  map.dims = low;
  if (units == 2) {
    std::vector<CoordTerms> high = std::move(low);
    for (int d = 0; d < map.rank; ++d)
      high[static_cast<size_t>(d)].constant += weights.image(thread_bits)[static_cast<size_t>(d)];
    map.high = CoordForm{true, std::move(high), {}, true};
  }
  return true;
}

}  // namespace

std::vector<BitRun> bit_runs(const std::vector<std::int64_t>& weights) {
  std::vector<BitRun> runs;
  for (size_t b = 0; b < weights.size();) {
    if (weights[b] == 0) {
      ++b;
      continue;
    }
    size_t end = b + 1;
    while (end < weights.size() && weights[end] == 2 * weights[end - 1]) ++end;
    runs.push_back({static_cast<int>(b), static_cast<int>(end - b), weights[b]});
    b = end;
  }
  return runs;
}

bool CoordMap::slot_used(int slot) const noexcept {
  for (const auto& [begin, end] : used_slots)
    if (slot >= begin && slot < end) return true;
  return false;
}

Result<CoordMap> coord_map(const TransferSpec& spec, const Plan& plan, CoordDetail detail) {
  const View& regs = spec.regs();
  CoordMap map;
  map.threads = scope_threads(plan.scope);
  map.slots = plan.regs_per_thread;
  const std::span<const std::int64_t> shape = regs.base().shape();
  map.rank = static_cast<int>(shape.size());
  map.shape.assign(shape.begin(), shape.end());
  std::vector<bool> used(static_cast<size_t>(map.slots), false);
  for (const RepeatStep& step : plan.repeats)
    for (int s : step.slots) used[static_cast<size_t>(s)] = true;
  for (int s = 0; s < map.slots;) {
    if (!used[static_cast<size_t>(s)]) {
      ++s;
      continue;
    }
    int end = s;
    while (end < map.slots && used[static_cast<size_t>(end)]) ++end;
    map.used_slots.emplace_back(s, end);
    s = end;
  }
  const int units = units_per_word(regs.dtype());
  map.halves = units;
  if (detail == CoordDetail::kForm && bit_permutation_form(regs, plan, map)) return map;
  map.table.assign(static_cast<size_t>(map.threads) * static_cast<size_t>(map.slots) *
                       static_cast<size_t>(units) * static_cast<size_t>(map.rank),
                   -1);
  const AxisMask axes = regs.axes();
  std::vector<std::int64_t> index(static_cast<size_t>(map.rank));
  // Power-of-two extents (most register tensors) split the index with shifts, not divisions.
  std::vector<int> shifts(static_cast<size_t>(map.rank), -1);
  for (int d = 0; d < map.rank; ++d) {
    const std::int64_t extent = shape[static_cast<size_t>(d)];
    if (extent > 0 && (extent & (extent - 1)) == 0)
      shifts[static_cast<size_t>(d)] = std::countr_zero(static_cast<std::uint64_t>(extent));
  }
  for (std::int64_t flat = 0; flat < regs.size(); ++flat) {
    const std::int64_t base = regs.base_index(flat);
    std::int64_t rest = base;
    for (int d = map.rank - 1; d >= 0; --d) {
      const int shift = shifts[static_cast<size_t>(d)];
      if (shift >= 0 && rest >= 0) {
        index[static_cast<size_t>(d)] = rest & ((std::int64_t{1} << shift) - 1);
        rest >>= shift;
      } else {
        index[static_cast<size_t>(d)] = rest % shape[static_cast<size_t>(d)];
        rest /= shape[static_cast<size_t>(d)];
      }
    }
    PhysCoord at;
    regs.apply_flat(flat, at);
    for (const PhysCoord& replica : regs.replica_offsets()) {
      PhysCoord copy = at;
      copy += replica;
      const int thread = scope_thread(plan.scope, owner_of(copy, axes));
      const std::int64_t m = copy[Axis::kM];
      if (thread < 0 || thread >= map.threads || m < 0) continue;
      const std::int64_t slot = m / units, half = m % units;
      if (slot >= map.slots || !used[static_cast<size_t>(slot)]) continue;
      for (int d = 0; d < map.rank; ++d)
        map.table[((static_cast<size_t>(thread) * static_cast<size_t>(map.slots) +
                    static_cast<size_t>(slot)) *
                       static_cast<size_t>(units) +
                   static_cast<size_t>(half)) *
                      static_cast<size_t>(map.rank) +
                  static_cast<size_t>(d)] = static_cast<int>(index[static_cast<size_t>(d)]);
    }
  }
  const std::vector<int> slots = used_slot_list(map);
  if (slots.empty()) return map;
  CoordForm low = fit_form(map, slots, 0);
  map.additive = low.additive;
  map.dims = std::move(low.dims);
  map.per_slot = std::move(low.per_slot);
  map.expressible = low.expressible;
  if (map.halves == 2) map.high = fit_form(map, slots, 1);
  return map;
}

}  // namespace tmem::kernels
