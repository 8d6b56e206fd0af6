// Random transfer specs for the differential test of `check` against the simulator
// (tests/exec/differential_test.cc) and its fuzz target (tests/fuzz/fuzz_differential.cc):
// valid specs built from the native images (docs/tcgen05-rules.md §Images,
// docs/transfer-semantics.md §Rules), and one-number mutations of them. Everything is text, as a
// user would type it, so a failing case prints as the exact `tmemjit` command that reproduces it.
// The same seed gives the same specs on every platform.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "common/spec_fixtures.h"
#include "tmem/opcode.h"

namespace tmemjit_test {

// One digit of a view dim: `extent` values, each `stride` units of `axis` apart.
struct Digit {
  std::int64_t extent = 1;
  std::int64_t stride = 0;
  std::string axis;  // "TLane", "TCol", "m", "laneid", "tx", ...
};

// An operand as the generator builds it: per view dim its digits (most significant first), the
// offsets, an optional replica, and how the text reaches the dims (a permuted base tensor, an
// extra leading dim that an index removes).
struct OperandText {
  std::vector<std::vector<Digit>> dims;
  std::vector<std::pair<std::string, std::int64_t>> offsets;  // axis, value
  std::optional<Digit> replica;
  std::string dtype = "b32";

  // tensor((shape), S[...] + R[...] + offsets, dtype), then [i] and .permute(...) when `order`
  // (the base dims' order) is not the identity or `sliced` adds a leading dim.
  std::string to_text(const std::vector<int>& order, std::optional<Digit> sliced,
                      std::int64_t index) const {
    std::vector<std::vector<Digit>> base;
    if (sliced) base.push_back({*sliced});
    for (int d : order) base.push_back(dims[static_cast<size_t>(d)]);
    std::string shape = "(", extents = "(", strides = "(";
    bool first_digit = true;
    for (size_t d = 0; d < base.size(); ++d) {
      std::int64_t extent = 1;
      for (const Digit& digit : base[d]) {
        extent *= digit.extent;
        extents += (first_digit ? "" : ",") + std::to_string(digit.extent);
        strides += (first_digit ? "" : ",") + std::to_string(digit.stride) + "@" + digit.axis;
        first_digit = false;
      }
      shape += (d ? "," : "") + std::to_string(extent);
    }
    shape += base.size() == 1 ? ",)" : ")";
    std::string text = "tensor(" + shape + ", S[" + extents + "):" + strides + ")]";
    if (replica)
      text += " + R[" + std::to_string(replica->extent) + ":" + std::to_string(replica->stride) +
              "@" + replica->axis + "]";
    for (const auto& [axis, value] : offsets)
      if (value) text += " + " + std::to_string(value) + "@" + axis;
    text += ", " + dtype + ")";
    if (sliced) text += "[" + std::to_string(index) + "]";
    bool identity = true;
    for (size_t i = 0; i < order.size(); ++i) identity &= order[i] == static_cast<int>(i);
    if (!identity) {
      // The base holds view dim order[j] at position j; the view's dim i is base dim inverse[i].
      std::vector<int> inverse(order.size());
      for (size_t j = 0; j < order.size(); ++j)
        inverse[static_cast<size_t>(order[j])] = static_cast<int>(j);
      text += ".permute(";
      for (size_t i = 0; i < inverse.size(); ++i)
        text += (i ? ", " : "") + std::to_string(inverse[i]);
      text += ")";
    }
    return text;
  }
};

// The shell command that reproduces a case: `tmemjit VERB --op .. --scope .. --tmem '..' ..`.
inline std::string tmemjit_command(const SpecText& spec, const std::string& verb,
                                   const std::string& extra = "") {
  std::string command = "tmemjit " + verb + " --op " + spec.op + " --scope " + spec.scope +
                        " --tmem '" + spec.tmem + "' --regs '" + spec.regs + "'";
  if (spec.tmem2) command += " --tmem2 '" + *spec.tmem2 + "'";
  if (spec.imm) command += " --imm " + *spec.imm;
  if (!extra.empty()) command += " " + extra;
  return command;
}

class SpecGenerator {
 public:
  explicit SpecGenerator(std::uint64_t seed) : rng_(seed) {}

  // A spec that follows every rule of docs/transfer-semantics.md §Rules: `check` must accept it.
  // `max_words` bounds the register words per thread (the simulator's work grows with it).
  SpecText valid(int max_words = 32) {
    for (;;) {
      if (auto spec = try_valid(max_words)) return *spec;
    }
  }

  // `spec` with one integer literal of one field replaced (the op's .xN, the scope's count, a
  // view's extent, stride, offset, index or permutation, the immediate).
  SpecText mutate(SpecText spec) {
    std::vector<std::string*> fields = {&spec.tmem, &spec.tmem, &spec.regs,
                                        &spec.regs, &spec.op,   &spec.scope};
    if (spec.tmem2) fields.push_back(&*spec.tmem2);
    if (spec.imm) fields.push_back(&*spec.imm);
    for (int attempt = 0; attempt < 8; ++attempt) {
      std::string& field = *fields[below(fields.size())];
      std::vector<std::pair<size_t, size_t>> numbers;  // position, length
      for (size_t i = 0; i < field.size();) {
        if (field[i] >= '0' && field[i] <= '9') {
          size_t j = i;
          while (j < field.size() && field[j] >= '0' && field[j] <= '9') ++j;
          numbers.push_back({i, j - i});
          i = j;
        } else {
          ++i;
        }
      }
      if (numbers.empty()) continue;
      // Mostly a stride or an offset (a number before '@'): a changed extent seldom still
      // multiplies to the tensor's size, so it rarely gives a spec at all.
      std::vector<std::pair<size_t, size_t>> placed;
      for (const auto& number : numbers)
        if (number.first + number.second < field.size() &&
            field[number.first + number.second] == '@')
          placed.push_back(number);
      const auto& pool = !placed.empty() && chance(75) ? placed : numbers;
      const auto [at, length] = pool[below(pool.size())];
      const long old_value = std::stol(field.substr(at, std::min<size_t>(length, 12)));
      static const long kValues[] = {0,  1,  2,   3,   4,   8,   16,  31,
                                     32, 64, 127, 128, 255, 256, 511, 512};
      long value;
      switch (below(4)) {
        case 0:
          value = kValues[below(std::size(kValues))];
          break;
        case 1:
          value = std::max(0L, old_value + (below(2) ? 1 : -1));
          break;
        case 2:
          value = old_value * 2;
          break;
        default:
          value = static_cast<long>(below(140));
          break;
      }
      if (value == old_value) value = old_value + 1;
      field = field.substr(0, at) + std::to_string(value) + field.substr(at + length);
      return spec;
    }
    return spec;
  }

  std::uint64_t below(std::uint64_t n) { return n ? rng_() % n : 0; }
  bool chance(int percent) { return below(100) < static_cast<std::uint64_t>(percent); }

 private:
  std::optional<SpecText> try_valid(int max_words) {
    using tmem::Shape;
    const bool store = chance(50);
    const auto shapes = tmem::all_shapes();
    const Shape shape = shapes[below(shapes.size())];
    const bool pack = chance(25);
    std::vector<int> nums;
    for (int num = 1; num <= 128; num *= 2)
      if (auto op = tmem::Opcode::make(tmem::Direction::kLoad, shape, num, pack);
          op && op->regs_per_thread() <= max_words)
        nums.push_back(num);
    if (nums.empty()) return std::nullopt;
    // Small forms are likelier: the repeats then have room.
    const int num = nums[below(std::min<size_t>(nums.size(), 1 + below(nums.size())))];
    const tmem::Opcode op =
        tmem::Opcode::make(store ? tmem::Direction::kStore : tmem::Direction::kLoad, shape, num,
                           pack)
            .value();
    const bool split = op.is_split();
    const int rows = op.atom_rows(), cols = op.atom_cols(), width = op.atom_tmem_cols();
    const int regs_per_instr = op.regs_per_thread();
    // 16-bit elements: pack always (TMEM halves, b32 registers); plain forms sometimes on both.
    const bool halves16 = !pack && chance(20);
    const bool tmem_halves = pack || halves16;
    const int tmem_units = tmem_halves ? 2 : 1;  // TCol units per 32-bit cell
    const int m_units = halves16 ? 2 : 1;        // m units per register slot

    // ---- scope and groups
    std::string scope;
    int warps = 1, fixed_warp = -1;
    switch (below(5)) {
      case 0:
      case 1:
        fixed_warp = static_cast<int>(below(8));
        scope = "warp:" + std::to_string(fixed_warp);
        break;
      case 2:
        scope = "warpgroup";
        warps = 4;
        break;
      default: {
        static const int kCta[] = {1, 2, 4, 4, 8, 8, 12};
        warps = kCta[below(std::size(kCta))];
        scope = "cta:" + std::to_string(warps);
        break;
      }
    }
    const bool grouped = fixed_warp < 0;
    const int warpgroups = (warps + 3) / 4;

    // ---- repeats: up to two axes; a half-slab axis (16@TLane) for the plain 16-row shapes
    std::vector<std::int64_t> repeats;
    for (int n = static_cast<int>(below(3)); n > 0; --n)
      repeats.push_back(1 + static_cast<std::int64_t>(below(3)));
    std::int64_t repeat_count = 1;
    for (auto r : repeats) repeat_count *= r;
    if (repeat_count * regs_per_instr > max_words) return std::nullopt;
    int half_axis = -1;  // the repeat axis that moves to the upper half-slab
    if (rows == 16 && !split && !repeats.empty() && chance(40)) {
      half_axis = static_cast<int>(below(repeats.size()));
      repeats[static_cast<size_t>(half_axis)] = 2;
    }
    repeat_count = 1;
    for (auto r : repeats) repeat_count *= r;
    if (repeat_count * regs_per_instr > max_words) return std::nullopt;

    // ---- TMEM: lanes, the split's second access, columns per repeat and per warpgroup
    const int lane_offset = rows == 16 && half_axis < 0 && chance(30) ? 16 : 0;
    std::int64_t dl = 0, dc = 0;  // the second access: lanes and columns from the first
    if (split) {
      dl = lane_offset == 0 && chance(70) ? 16 : 0;
      if (dl == 16)
        dc = chance(40) ? 0 : chance(50) ? width : static_cast<std::int64_t>(below(2 * width + 1));
      else
        dc = !store && chance(25) ? static_cast<std::int64_t>(below(width))  // overlapping read
                                  : width + static_cast<std::int64_t>(below(3));
    }
    // Columns one repeat's accesses span (the second access may sit left of the first).
    const std::int64_t span = split ? std::max<std::int64_t>(width, dc + width) : width;
    // Column strides of the repeat axes and the warpgroup axis: a mixed radix over blocks of
    // `span` columns in a random order, with gaps; a load may read one block twice (stride 0).
    std::vector<std::int64_t> col_stride(repeats.size(), 0);
    std::int64_t warpgroup_stride = 0;
    {
      std::vector<int> axes;  // repeat axes that need columns, then -1 for the warpgroup axis
      for (size_t i = 0; i < repeats.size(); ++i)
        if (static_cast<int>(i) != half_axis) axes.push_back(static_cast<int>(i));
      if (warpgroups > 1) axes.push_back(-1);
      std::shuffle(axes.begin(), axes.end(), rng_);
      std::int64_t block = span;
      for (int axis : axes) {
        const std::int64_t extent = axis < 0 ? warpgroups : repeats[static_cast<size_t>(axis)];
        std::int64_t stride = block * (chance(20) ? 2 : 1);
        if (!store && chance(10)) stride = 0;  // a broadcast
        (axis < 0 ? warpgroup_stride : col_stride[static_cast<size_t>(axis)]) = stride;
        block = std::max(block, stride * extent);
      }
    }
    std::int64_t used = span;
    for (size_t i = 0; i < repeats.size(); ++i) used += col_stride[i] * (repeats[i] - 1);
    used += warpgroup_stride * (warpgroups - 1);
    const std::int64_t room = 512 - used;
    if (room < 0) return std::nullopt;
    std::int64_t column0 =
        chance(50) ? 0 : static_cast<std::int64_t>(below(std::min<std::int64_t>(room, 64) + 1));
    if (split && dc < 0) column0 = std::max(column0, -dc);

    OperandText tmem, tmem2;
    tmem.dtype = tmem_halves ? (chance(50) ? "f16" : "bf16") : (chance(50) ? "f32" : "b32");
    if (grouped) {
      if (warps > 4)
        tmem.dims.push_back(
            {{warpgroups, warpgroup_stride * tmem_units, "TCol"}, {4, 32, "TLane"}});
      else
        tmem.dims.push_back({{warps, 32, "TLane"}});
    }
    for (size_t i = 0; i < repeats.size(); ++i) {
      if (static_cast<int>(i) == half_axis)
        tmem.dims.push_back({{2, 16, "TLane"}});
      else
        tmem.dims.push_back({{repeats[i], col_stride[i] * tmem_units, "TCol"}});
    }
    tmem.dims.push_back({{rows, 1, "TLane"}});
    const std::int64_t col_units = pack ? 4 : tmem_halves ? 2 : 1;
    tmem.dims.push_back({{cols, col_units, "TCol"}});
    if (tmem_halves) tmem.dims.push_back({{2, pack ? 2 : 1, "TCol"}});
    const std::int64_t lane0 = lane_offset + (fixed_warp >= 0 ? 32 * (fixed_warp % 4) : 0);
    tmem.offsets = {{"TLane", lane0}, {"TCol", column0 * tmem_units}};
    if (split) {
      tmem2 = tmem;
      tmem2.offsets = {{"TLane", lane0 + dl}, {"TCol", (column0 + dc) * tmem_units}};
    }

    // ---- registers: the inverse image (docs/tcgen05-rules.md §Images) as digits on axes L, m
    OperandText regs;
    regs.dtype = pack                                         ? "b32"
                 : tmem.dtype == "f32" || tmem.dtype == "b32" ? (chance(50) ? "f32" : "u32")
                                                              : tmem.dtype;
    const bool regs_halves = halves16;
    // Lane and warp axes.
    std::string lane_axis = "laneid";
    std::int64_t lane_unit = 1;  // the lane axis's units per lane
    std::vector<Digit> group_digits;
    std::vector<std::pair<std::string, std::int64_t>> thread_offsets;
    switch (below(4)) {
      case 0:  // tid_in_wg (+ wgid), or laneid at warp scope
        if (grouped && warps <= 4) {
          lane_axis = "tid_in_wg";
          group_digits = {{warps, 32, "tid_in_wg"}};
        } else if (grouped) {
          lane_axis = "tid_in_wg";
          group_digits = {{warpgroups, 1, "wgid"}, {4, 32, "tid_in_wg"}};
        }
        break;
      case 1:  // tx
        lane_axis = "tx";
        if (grouped)
          group_digits = warps > 4 ? std::vector<Digit>{{warpgroups, 128, "tx"}, {4, 32, "tx"}}
                                   : std::vector<Digit>{{warps, 32, "tx"}};
        else
          thread_offsets.push_back({"tx", 32 * fixed_warp});
        break;
      case 2:  // warpid + laneid
        if (grouped)
          group_digits = warps > 4 ? std::vector<Digit>{{warpgroups, 4, "warpid"}, {4, 1, "warpid"}}
                                   : std::vector<Digit>{{warps, 1, "warpid"}};
        else if (chance(50))
          thread_offsets.push_back({"warpid", fixed_warp});
        break;
      default:  // wid_in_wg (+ wgid) + laneid
        if (grouped)
          group_digits = warps > 4
                             ? std::vector<Digit>{{warpgroups, 1, "wgid"}, {4, 1, "wid_in_wg"}}
                             : std::vector<Digit>{{warps, 1, "wid_in_wg"}};
        break;
    }
    // Slots: register r of repeat k is slot0 + sigma*r + sum(k_i * slot_stride_i).
    const std::int64_t sigma = chance(20) ? 2 : 1;
    std::vector<std::int64_t> slot_stride(repeats.size(), 0);
    {
      std::vector<int> order(repeats.size());
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng_);
      std::int64_t block = sigma * regs_per_instr;
      for (int axis : order) {
        slot_stride[static_cast<size_t>(axis)] = block * (chance(15) ? 2 : 1);
        block = slot_stride[static_cast<size_t>(axis)] * repeats[static_cast<size_t>(axis)];
      }
    }
    std::int64_t max_slot = sigma * (regs_per_instr - 1);
    for (size_t i = 0; i < repeats.size(); ++i) max_slot += slot_stride[i] * (repeats[i] - 1);
    if (max_slot > 254) return std::nullopt;
    const std::int64_t slot0 =
        chance(70)
            ? 0
            : static_cast<std::int64_t>(below(std::min<std::int64_t>(254 - max_slot, 16) + 1));
    const std::int64_t reg = sigma * m_units;  // m units per register index r
    const std::string& L = lane_axis;
    if (grouped) regs.dims.push_back(group_digits);
    for (size_t i = 0; i < repeats.size(); ++i)
      regs.dims.push_back({{repeats[i], slot_stride[i] * m_units, "m"}});
    const std::int64_t N = num;
    switch (shape) {
      case Shape::k32x32b:
        regs.dims.push_back({{32, lane_unit, L}});
        regs.dims.push_back({{N, reg, "m"}});
        break;
      case Shape::k16x64b:  // lane = 4*(R%8) + 2*(C%2) + R/8, reg = C/2
        regs.dims.push_back({{2, lane_unit, L}, {8, 4 * lane_unit, L}});
        regs.dims.push_back({{N, reg, "m"}, {2, 2 * lane_unit, L}});
        break;
      case Shape::k16x128b:  // lane = 4*(R%8) + C%4, reg = R/8 + 2*(C/4)
        regs.dims.push_back({{2, reg, "m"}, {8, 4 * lane_unit, L}});
        regs.dims.push_back({{N, 2 * reg, "m"}, {4, lane_unit, L}});
        break;
      case Shape::k16x256b:  // lane = 4*(R%8) + (C/2)%4, reg = C%2 + 2*(R/8) + 4*(C/8)
        regs.dims.push_back({{2, 2 * reg, "m"}, {8, 4 * lane_unit, L}});
        regs.dims.push_back({{N, 4 * reg, "m"}, {4, lane_unit, L}, {2, reg, "m"}});
        break;
      case Shape::k16x32bx2:  // lane = 16*access + R, reg = C
        regs.dims.push_back({{2, 16 * lane_unit, L}});
        regs.dims.push_back({{16, lane_unit, L}});
        regs.dims.push_back({{N, reg, "m"}});
        break;
    }
    if (regs_halves) regs.dims.push_back({{2, 1, "m"}});
    regs.offsets = thread_offsets;
    regs.offsets.push_back({"m", slot0 * m_units});

    // ---- harmless replicas on the source operand
    if (chance(10)) {
      const std::int64_t top = max_slot + slot0 + 1;  // the first slot no element uses
      if (store && top <= 127) {
        // Copies in the slots above every used one, all below 255.
        regs.replica =
            Digit{2, (top + static_cast<std::int64_t>(below(255 - 2 * top + 1))) * m_units, "m"};
      } else if (!store) {
        // A copy anywhere in TMEM (in 16-bit units when the elements are halves): to the right,
        // over other elements' cells (a broadcast the load may read) or past them, or below, in
        // lanes no element uses.
        const std::int64_t column_top = column0 + used;
        const std::int64_t room_units = (512 - column_top) * tmem_units;
        if (room_units > 0 && chance(70))
          tmem.replica = Digit{2, 1 + static_cast<std::int64_t>(below(room_units)), "TCol"};
        else if (const std::int64_t free_lanes =
                     128 - (grouped ? 32 * std::min(warps, 4) : 32 * (fixed_warp % 4) + 32);
                 free_lanes > 0 && chance(50))
          tmem.replica = Digit{2, 1 + static_cast<std::int64_t>(below(free_lanes)), "TLane"};
      }
    }

    // ---- how the text reaches the dims: permuted bases, an index into a leading dim
    SpecText spec;
    spec.op = op.to_string();
    spec.scope = scope;
    spec.tmem = emit(tmem, "TCol", tmem_units);
    spec.regs = emit(regs, "m", m_units);
    if (split) {
      spec.tmem2 = emit(tmem2, "TCol", tmem_units);
      spec.imm = std::to_string((dl << 16) + dc);
    }
    return spec;
  }

  // The operand's text with a random base order and, sometimes, an index into an extra leading
  // dim that only moves the operand along `axis` (the index's digit stays in range).
  std::string emit(const OperandText& operand, const std::string& axis, std::int64_t units) {
    std::vector<int> order(operand.dims.size());
    std::iota(order.begin(), order.end(), 0);
    if (chance(30)) std::shuffle(order.begin(), order.end(), rng_);
    std::optional<Digit> sliced;
    std::int64_t index = 0;
    OperandText shifted = operand;
    if (chance(15)) {
      // tensor((2, ...), S[(2, ...):(X@axis, ...)] + offset - X)[1] is the operand; with X = 0
      // either index is.
      std::int64_t* offset = nullptr;
      for (auto& [name, value] : shifted.offsets)
        if (name == axis) offset = &value;
      if (offset && *offset >= units && chance(70)) {
        const std::int64_t x = units * (1 + static_cast<std::int64_t>(below(*offset / units)));
        *offset -= x;
        sliced = Digit{2, x, axis};
        index = 1;
      } else {
        sliced = Digit{2, 0, axis};
        index = static_cast<std::int64_t>(below(2));
      }
    }
    return shifted.to_text(order, sliced, index);
  }

  std::mt19937_64 rng_;
};

}  // namespace tmemjit_test
