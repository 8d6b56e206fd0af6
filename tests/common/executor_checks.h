// Data checks of harness kernels run by an Executor (the emu and device suites): what each kernel
// must produce, predicted from the spec's tensor views alone (never from the Plan), and the
// cases both suites run (the seed's three examples and every opcode's warpgroup identity).
//
// The prediction is local to the tests on purpose: it reads the two views element by element
// (docs/descriptor-language.md §Semantics, docs/transfer-semantics.md §Rules) and knows nothing of
// the checker, the planner or the kernels.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "common/spec_fixtures.h"
#include "kernels/transfer_kernels.h"
#include "runtime/exec/executor.h"
#include "tmem/check.h"
#include "tmem/dtype.h"
#include "tmem/reduction.h"

namespace tmemjit_test {

// One element of the transfer: register bits of (thread, word) <-> TMEM bits of (lane, cell).
// half: -1 for the whole 32-bit word, else the 16-bit half (0 = bits [0,16), 1 = bits [16,32)).
struct Link {
  int thread = 0, word = 0, reg_half = -1;
  int lane = 0, cell = 0, tmem_half = -1;
};

inline std::uint32_t half_mask(int half) { return half < 0 ? 0xFFFFFFFFu : 0xFFFFu << (16 * half); }
inline std::uint32_t bits_of(std::uint32_t word, int half) {
  return half < 0 ? word : (word >> (16 * half)) & 0xFFFFu;
}

// The CTA thread of a register-operand coordinate: warp scope reads laneid of warp W; warpgroup
// tid_in_wg or wid_in_wg + laneid; cta tx or warpid + laneid (docs/transfer-semantics.md §Rules
// rule 1).
inline int cta_thread(const tmem::Scope& scope, const tmem::PhysCoord& c) {
  using tmem::Axis;
  std::int64_t t = c[Axis::kTx] + 32 * c[Axis::kWarpid] + 128 * c[Axis::kWgid] + c[Axis::kTidInWg] +
                   32 * c[Axis::kWidInWg] + c[Axis::kLaneid];
  if (scope.kind() == tmem::Scope::Kind::kWarp) t += 32 * scope.warp_id();
  return static_cast<int>(t);
}

// Every element of the register view paired with its TMEM element. 16x32bx2: the register
// operand has an access dim before its last two (docs/transfer-semantics.md §Rules: (2,16,N));
// access a pairs with tmem (a = 0) or tmem2 (a = 1). Packed forms with a 32-bit register view pair
// register half h with the TMEM view's trailing dim h.
inline std::vector<Link> predict_links(const tmem::TransferSpec& spec) {
  std::vector<Link> links;
  const tmem::View& regs = spec.regs();
  const int reg_units = tmem::units_per_word(regs.dtype());
  const std::vector<std::int64_t> shape(regs.shape().begin(), regs.shape().end());
  const int access_dim = spec.op().is_split() ? static_cast<int>(shape.size()) - 3 : -1;
  std::vector<std::int64_t> x(shape.size(), 0);
  for (std::int64_t flat = 0; flat < regs.size(); ++flat) {
    std::int64_t rest = flat;
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      x[static_cast<size_t>(d)] = rest % shape[static_cast<size_t>(d)];
      rest /= shape[static_cast<size_t>(d)];
    }
    const tmem::PhysCoord r = regs.apply(x).value().front();
    const int thread = cta_thread(spec.scope(), r);
    std::vector<std::int64_t> y;
    int access = 0;
    for (int d = 0; d < static_cast<int>(x.size()); ++d) {
      if (d == access_dim)
        access = static_cast<int>(x[static_cast<size_t>(d)]);
      else
        y.push_back(x[static_cast<size_t>(d)]);
    }
    const tmem::View& mem = access ? *spec.tmem2() : spec.tmem();
    const int mem_units = tmem::units_per_word(mem.dtype());
    const bool split_halves = mem.ndim() == static_cast<int>(y.size()) + 1;
    for (int h = 0; h < (split_halves ? 2 : 1); ++h) {
      std::vector<std::int64_t> z = y;
      if (split_halves) z.push_back(h);
      const tmem::PhysCoord t = mem.apply(z).value().front();
      Link link;
      link.thread = thread;
      const std::int64_t m = r[tmem::Axis::kM], col = t[tmem::Axis::kTCol];
      link.word = static_cast<int>(m / reg_units);
      link.reg_half = split_halves ? h : (reg_units == 2 ? static_cast<int>(m % 2) : -1);
      link.lane = static_cast<int>(t[tmem::Axis::kTLane]);
      link.cell = static_cast<int>(col / mem_units);
      link.tmem_half = mem_units == 2 ? static_cast<int>(col % 2) : -1;
      links.push_back(link);
    }
  }
  return links;
}

inline std::string hex32(std::uint32_t value) {
  char text[11];
  std::snprintf(text, sizeof text, "0x%08x", value);
  return text;
}

inline std::vector<std::uint32_t> random_words(std::size_t n, std::uint32_t seed) {
  std::mt19937 engine(seed);
  std::vector<std::uint32_t> words(n);
  for (auto& w : words) w = static_cast<std::uint32_t>(engine());
  return words;
}

// A named spec for the parameterized suites.
struct ExecutorCase {
  std::string name;
  SpecText text;
  // Test listings show the opcode, not the struct's bytes.
  friend void PrintTo(const ExecutorCase& c, std::ostream* os) {
    *os << c.text.op << " at " << c.text.scope;
  }
};

inline std::string case_name(const ::testing::TestParamInfo<ExecutorCase>& info) {
  return info.param.name;
}

// The seed's three examples (st and ld spellings) and every legal opcode's warpgroup identity.
inline std::vector<ExecutorCase> executor_cases() {
  std::vector<ExecutorCase> cases;
  for (bool store : {true, false}) {
    const std::string d = store ? "St" : "Ld";
    cases.push_back({"SeedLayoutB" + d, seed_layout_b(store)});
    cases.push_back({"SeedPack" + d, seed_pack(store)});
    cases.push_back({"SeedSplit" + d, seed_split(store)});
  }
  for (tmem::Direction direction : {tmem::Direction::kStore, tmem::Direction::kLoad})
    for (tmem::Shape shape : tmem::all_shapes())
      for (int num = 1; num <= 128; num *= 2)
        for (bool pack : {false, true}) {
          auto op = tmem::Opcode::make(direction, shape, num, pack);
          if (!op) continue;
          std::string name = std::string("Identity") +
                             (direction == tmem::Direction::kStore ? "St" : "Ld") + "_" +
                             std::string(tmem::to_string(shape)) + "_x" + std::to_string(num) +
                             (pack ? "_pack" : "");
          cases.push_back({name, identity_spec(*op)});
        }
  return cases;
}

// Runs `kind` of the spec on the executor with random data and checks what came back against
// the views' prediction. `poisoned`: the executor starts TMEM as 0xA5 bytes (emulation), so every
// cell the transfer does not write must still hold 0xA5A5A5A5 after a store.
inline ::testing::AssertionResult run_and_check(tmem::Executor& executor,
                                                const tmem::TransferSpec& spec,
                                                const tmem::Plan& plan, tmem::KernelKind kind,
                                                std::uint32_t seed, bool poisoned = false) {
  const auto shape = tmem::kernels::launch_shape(plan, kind);
  const std::size_t regs_words =
      static_cast<std::size_t>(shape.threads) * static_cast<std::size_t>(shape.slots);
  const std::size_t raw_words = 128 * static_cast<std::size_t>(shape.raw_columns);
  const bool raw_first = kind == tmem::KernelKind::kLoad || kind == tmem::KernelKind::kFill;
  const bool raw_second = kind == tmem::KernelKind::kStore || kind == tmem::KernelKind::kFill;
  const std::vector<std::uint32_t> first = random_words(raw_first ? raw_words : regs_words, seed);
  const std::vector<std::uint32_t> initial =
      random_words(raw_second ? raw_words : regs_words, seed ^ 0x9E3779B9u);
  std::vector<std::uint32_t> second = initial;
  tmem::Status ran = executor.run(spec, plan, kind, first, second);
  if (!ran.ok())
    return ::testing::AssertionFailure()
           << executor.description() << ": " << ran.error().full_text();

  auto fail = [&](const std::string& what, std::size_t index, std::uint32_t expected,
                  std::uint32_t got) {
    return ::testing::AssertionFailure()
           << executor.description() << ", " << tmem::to_string(kind) << ": " << what << " (word "
           << index << "): expected " << hex32(expected) << ", got " << hex32(got) << "\n"
           << spec.to_string();
  };
  const int slots = shape.slots, columns = shape.raw_columns;
  if (kind == tmem::KernelKind::kFill) {
    for (std::size_t i = 0; i < raw_words; ++i)
      if (second[i] != first[i])
        return fail(
            "Raw2 lane " + std::to_string(i / columns) + " column " + std::to_string(i % columns),
            i, first[i], second[i]);
    return ::testing::AssertionSuccess();
  }
  const std::vector<Link> links = predict_links(spec);
  // reg word -> bits the transfer defines; TMEM cell -> bits the store defines.
  std::map<std::size_t, std::uint32_t> reg_bits, cell_bits;
  for (const Link& l : links) {
    if (l.thread >= shape.threads || l.word >= slots || l.lane >= 128 || l.cell >= columns)
      return ::testing::AssertionFailure()
             << "the views place an element outside the kernel's buffers: thread " << l.thread
             << " word " << l.word << ", lane " << l.lane << " cell " << l.cell;
    reg_bits[static_cast<std::size_t>(l.thread) * slots + l.word] |= half_mask(l.reg_half);
    cell_bits[static_cast<std::size_t>(l.lane) * columns + l.cell] |= half_mask(l.tmem_half);
  }
  const std::string what_reg = kind == tmem::KernelKind::kStore ? "" : "Out thread ";
  for (const Link& l : links) {
    const std::size_t reg = static_cast<std::size_t>(l.thread) * slots + l.word;
    const std::size_t cell = static_cast<std::size_t>(l.lane) * columns + l.cell;
    const std::string at = "thread " + std::to_string(l.thread) + " slot " +
                           std::to_string(l.word) + " <-> lane " + std::to_string(l.lane) +
                           " cell " + std::to_string(l.cell);
    switch (kind) {
      case tmem::KernelKind::kRoundtrip:
        if (bits_of(second[reg], l.reg_half) != bits_of(first[reg], l.reg_half))
          return fail("roundtrip Out " + at, reg, bits_of(first[reg], l.reg_half),
                      bits_of(second[reg], l.reg_half));
        break;
      case tmem::KernelKind::kStore:
        if (bits_of(second[cell], l.tmem_half) != bits_of(first[reg], l.reg_half))
          return fail("store Raw " + at, cell, bits_of(first[reg], l.reg_half),
                      bits_of(second[cell], l.tmem_half));
        break;
      case tmem::KernelKind::kLoad:
        if (bits_of(second[reg], l.reg_half) != bits_of(first[cell], l.tmem_half))
          return fail("load Out " + at, reg, bits_of(first[cell], l.tmem_half),
                      bits_of(second[reg], l.reg_half));
        break;
      case tmem::KernelKind::kFill:
        break;
    }
  }
  if (kind != tmem::KernelKind::kStore && plan.op.reduces()) {
    // tcgen05.ld.red: each thread's redval slot holds the reduction (tmem::reduce) of the words
    // the instruction loaded into its slots, which the comparison above has checked.
    std::vector<std::uint32_t> loaded;
    for (int g = 0; g < plan.warps(); ++g)
      for (int l = 0; l < 32; ++l) {
        const std::size_t thread = static_cast<std::size_t>(32 * plan.scope.warp_of_group(g) + l);
        if (thread >= static_cast<std::size_t>(shape.threads)) continue;
        for (size_t k = 0; k < plan.repeats.size(); ++k) {
          const tmem::RepeatStep& step = plan.repeats[k];
          loaded.clear();
          for (int s : step.slots)
            loaded.push_back(second[thread * slots + static_cast<std::size_t>(s)]);
          // By the contract, not by step.redval_slot: slot S + k after the view's S slots.
          const std::size_t at =
              thread * slots +
              static_cast<std::size_t>(plan.regs_per_thread - plan.instructions_per_warp() +
                                       static_cast<int>(k));
          const std::uint32_t want = *tmem::reduce(*plan.op.reduction(), loaded);
          if (second[at] != want)
            return fail(
                "redval of thread " + std::to_string(thread) + " instruction " + std::to_string(k),
                at, want, second[at]);
          reg_bits[at] = 0xFFFFFFFFu;
        }
      }
  }
  if (kind != tmem::KernelKind::kStore) {
    // Out words no element maps to keep the caller's values.
    for (std::size_t i = 0; i < regs_words; ++i)
      if (!reg_bits.count(i) && second[i] != initial[i])
        return fail("Out word outside the views changed", i, initial[i], second[i]);
  } else if (poisoned) {
    for (std::size_t i = 0; i < raw_words; ++i)
      if (!cell_bits.count(i) && second[i] != 0xA5A5A5A5u)
        return fail("a TMEM cell outside the views was written", i, 0xA5A5A5A5u, second[i]);
  }
  return ::testing::AssertionSuccess();
}

}  // namespace tmemjit_test
