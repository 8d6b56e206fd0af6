// run_transfer: seeded data through the harness kernels on a device, checked element by element
// against the placement the views predict (runtime/descriptor/view_placement.h).
#include "tmem/run.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "kernels/transfer_kernels.h"
#include "runtime/descriptor/view_placement.h"
#include "runtime/exec/executor.h"
#include "tmem/check.h"
#include "tmem/reduction.h"

namespace tmem {
namespace {

using detail::Placement;

// SplitMix64: a fixed generator, so a seed gives the same data on every platform.
struct Random {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::uint32_t word() { return static_cast<std::uint32_t>(next() >> 32); }
};

std::uint32_t bits_mask(int bits) { return bits >= 32 ? 0xFFFFFFFFu : (1u << bits) - 1; }
std::uint32_t get_bits(std::uint32_t word, int shift, int bits) {
  return (word >> shift) & bits_mask(bits);
}
void set_bits(std::uint32_t& word, int shift, int bits, std::uint32_t value) {
  const std::uint32_t mask = bits_mask(bits) << shift;
  word = (word & ~mask) | ((value << shift) & mask);
}
// Which 16-bit halves of a word a piece covers: bit 0 the low half, bit 1 the high half.
std::uint8_t halves_of(int shift, int bits) {
  return bits == 32 ? 3 : static_cast<std::uint8_t>(shift == 0 ? 1 : 2);
}

std::string hex(std::uint32_t value, int bits) {
  std::ostringstream os;
  os << "0x" << std::hex;
  os.width(bits / 4);
  os.fill('0');
  os << value;
  return os.str();
}

// One buffer of the harness: rows x columns u32 words, and which halves the views cover.
struct Grid {
  std::int64_t rows = 0, columns = 0;
  std::vector<std::uint32_t> words;
  std::vector<std::uint8_t> covered;
  std::vector<std::int64_t> holder;  // per 16-bit half: the piece placed there, -1 for none
  Grid(std::int64_t r, std::int64_t c)
      : rows(r),
        columns(c),
        words(static_cast<size_t>(r * c)),
        covered(static_cast<size_t>(r * c), 0) {}
  // Marks the halves of word `at` as holding `piece`; false when a piece that `agrees` rejects
  // holds one of them already.
  template <class Agrees>
  bool hold(size_t at, std::uint8_t halves, std::int64_t piece, Agrees agrees) {
    if (holder.empty()) holder.assign(2 * words.size(), -1);
    for (int half = 0; half < 2; ++half) {
      if (!(halves & (1 << half))) continue;
      std::int64_t& who = holder[2 * at + static_cast<size_t>(half)];
      if (who >= 0 && who != piece && !agrees(who)) return false;
      who = piece;
    }
    return true;
  }
  bool contains(std::int64_t row, std::int64_t column) const {
    return row >= 0 && row < rows && column >= 0 && column < columns;
  }
  size_t at(std::int64_t row, std::int64_t column) const {
    return static_cast<size_t>(row * columns + column);
  }
};

// Pieces that share a TMEM cell through any of their replicas. A load reads that cell for each of
// them (a broadcast, or a copy on another element's cell), so they hold one value; a store would
// write the cell twice, so the checks that store with the opcode do not apply.
struct TmemSharing {
  std::vector<std::int64_t> representative;  // per piece: the first piece it shares a cell with
  std::string first;                         // the first shared cell, "" when no cell is shared
};

TmemSharing tmem_sharing(const Placement& placement) {
  constexpr std::int64_t kLanes = 128, kColumns = 512;
  const std::int64_t pieces = placement.pieces();
  TmemSharing sharing;
  sharing.representative.resize(static_cast<size_t>(pieces));
  for (std::int64_t p = 0; p < pieces; ++p) sharing.representative[static_cast<size_t>(p)] = p;
  auto find = [&](std::int64_t p) {
    while (sharing.representative[static_cast<size_t>(p)] != p) {
      auto& up = sharing.representative[static_cast<size_t>(p)];
      up = sharing.representative[static_cast<size_t>(up)];
      p = up;
    }
    return p;
  };
  // Cells outside TMEM cannot be shared; the checks that place them report them.
  std::vector<std::int64_t> holder(static_cast<size_t>(kLanes * kColumns * 2), -1);
  for (std::int64_t p = 0; p < pieces; ++p)
    for (const detail::TmemBits& t : placement.tmem(p)) {
      if (t.lane < 0 || t.lane >= kLanes || t.column < 0 || t.column >= kColumns) continue;
      auto& first = holder[static_cast<size_t>((t.lane * kColumns + t.column) * 2 + t.shift / 16)];
      if (first < 0) {
        first = p;
        continue;
      }
      if (first == p) continue;
      if (sharing.first.empty())
        sharing.first = "TMEM lane " + std::to_string(t.lane) + " column " +
                        std::to_string(t.column) + " holds elements " +
                        detail::coordinate_text(placement.coordinate(first)) + " and " +
                        detail::coordinate_text(placement.coordinate(p)) + " of the register view";
      const std::int64_t a = find(first), b = find(p);
      sharing.representative[static_cast<size_t>(std::max(a, b))] = std::min(a, b);
    }
  for (std::int64_t p = 0; p < pieces; ++p)
    sharing.representative[static_cast<size_t>(p)] = find(p);
  return sharing;
}

class Runner {
 public:
  Runner(const TransferSpec& spec, const Plan& plan, Executor& executor, const Placement& placement,
         const TmemSharing& sharing, std::uint64_t seed, int cta_group)
      : spec_(spec),
        plan_(plan),
        executor_(executor),
        placement_(placement),
        sharing_(sharing),
        seed_(seed),
        cta_group_(cta_group) {}

  Result<CheckResult> raw();
  Result<CheckResult> roundtrip();
  Result<CheckResult> store();
  Result<CheckResult> load();

 private:
  Random random(int check) const {
    return Random{seed_ * 0x2545F4914F6CDD1Dull + static_cast<std::uint64_t>(check)};
  }

  std::vector<std::uint32_t> piece_values(Random& rng) const {
    std::vector<std::uint32_t> values(static_cast<size_t>(placement_.pieces()));
    for (auto& v : values) v = rng.word() & bits_mask(placement_.piece_bits());
    return values;
  }

  // The register grid of kernel `kind` (threads x slots) with every piece's value at each of its
  // register replicas; the rest random. An empty string on success, else why it cannot be built.
  std::string scatter_registers(Grid& grid, const std::vector<std::uint32_t>& values,
                                Random& rng) const {
    for (auto& w : grid.words) w = rng.word();
    const int bits = placement_.piece_bits();
    for (std::int64_t p = 0; p < placement_.pieces(); ++p)
      for (const detail::RegisterBits& r : placement_.registers(p)) {
        if (!grid.contains(r.thread, r.slot))
          return "element " + detail::coordinate_text(placement_.coordinate(p)) +
                 " of the register view lives at " +
                 (r.thread < 0
                      ? std::string("an unknown thread (its thread axes disagree)")
                      : "thread " + std::to_string(r.thread) + " slot " + std::to_string(r.slot)) +
                 ", outside the harness buffer of " + std::to_string(grid.rows) + " threads x " +
                 std::to_string(grid.columns) + " slots (the plan's register budget)";
        const size_t at = grid.at(r.thread, r.slot);
        const std::uint8_t halves = halves_of(r.shift, bits);
        // Two replicas of one element on one register (R[2:0]) agree; two elements do not.
        if (!grid.hold(at, halves, p, [&](std::int64_t other) { return other == p; }))
          return "two elements of the register view share thread " + std::to_string(r.thread) +
                 " slot " + std::to_string(r.slot) + " (one is " +
                 detail::coordinate_text(placement_.coordinate(p)) + ")";
        grid.covered[at] |= halves;
        set_bits(grid.words[at], r.shift, bits, values[static_cast<size_t>(p)]);
      }
    return "";
  }

  // The same for the TMEM side: a 128 x alloc_columns grid.
  std::string scatter_tmem(Grid& grid, const std::vector<std::uint32_t>& values,
                           Random& rng) const {
    for (auto& w : grid.words) w = rng.word();
    const int bits = placement_.piece_bits();
    for (std::int64_t p = 0; p < placement_.pieces(); ++p)
      for (const detail::TmemBits& t : placement_.tmem(p)) {
        if (!grid.contains(t.lane, t.column))
          return "element " + detail::coordinate_text(placement_.coordinate(p)) +
                 " lives at TMEM lane " + std::to_string(t.lane) + " column " +
                 std::to_string(t.column) + ", outside the " + std::to_string(grid.columns) +
                 "-column allocation of the plan";
        const size_t at = grid.at(t.lane, t.column);
        const std::uint8_t halves = halves_of(t.shift, bits);
        // Pieces sharing a cell were given one value (tmem_sharing); any other overlap is a bug.
        if (!grid.hold(at, halves, p, [&](std::int64_t other) {
              return sharing_.representative[static_cast<size_t>(other)] ==
                     sharing_.representative[static_cast<size_t>(p)];
            }))
          return "two elements of the TMEM view share lane " + std::to_string(t.lane) + " column " +
                 std::to_string(t.column);
        grid.covered[at] |= halves;
        set_bits(grid.words[at], t.shift, bits, values[static_cast<size_t>(p)]);
      }
    return "";
  }

  // Runs the kernel; a broken runtime rule (kWrongData) fails the check instead of the run.
  // With a CTA pair CTA 1's block of each buffer is the complement of CTA 0's (`first` and
  // `second` are CTA 0's); CTA 1's result lands in peer_second_.
  Result<bool> execute(KernelKind kind, const std::vector<std::uint32_t>& first,
                       std::vector<std::uint32_t>& second, CheckResult& result) {
    Status status = std::monostate{};
    if (cta_group_ == 2) {
      std::vector<std::uint32_t> pair_first(first), pair_second(second);
      for (std::uint32_t w : first) pair_first.push_back(~w);
      for (std::uint32_t w : second) pair_second.push_back(~w);
      status = executor_.run_pair(spec_, plan_, kind, pair_first, pair_second);
      std::copy(pair_second.begin(), pair_second.begin() + static_cast<long>(second.size()),
                second.begin());
      peer_second_.assign(pair_second.begin() + static_cast<long>(second.size()),
                          pair_second.end());
    } else {
      status = executor_.run(spec_, plan_, kind, first, second);
    }
    if (status.ok()) return true;
    if (status.error().code() != ErrorCode::kWrongData) return std::move(status).error();
    result.error = status.error().full_text();
    result.rule = status.error().rule();
    return false;
  }

  // Compares a destination grid with the pieces' values: each piece must hold its value at one of
  // its replicas on that side; with `untouched`, halves no piece covers must keep their words.
  template <class Positions>
  void compare(CheckResult& result, const Grid& got, const std::vector<std::uint32_t>& values,
               Positions positions, const Grid* untouched) const {
    const int bits = placement_.piece_bits();
    for (std::int64_t p = 0; p < placement_.pieces(); ++p) {
      ++result.elements;
      const auto where = positions(p);
      bool ok = false;
      for (const auto& at : where)
        ok = ok || get_bits(got.words[got.at(row_of(at), col_of(at))], at.shift, bits) ==
                       values[static_cast<size_t>(p)];
      if (ok || result.mismatch) continue;
      Mismatch m;
      m.check = result.name;
      m.element = placement_.coordinate(p);
      m.bits = bits;
      m.shift = where[0].shift;
      const auto reg = placement_.registers(p)[0];
      const auto cell = placement_.tmem(p)[0];
      if (result.name != "raw") {
        m.thread = static_cast<int>(reg.thread);
        m.slot = static_cast<int>(reg.slot);
        m.lane = static_cast<int>(cell.lane);
        m.column = static_cast<int>(cell.column);
      }
      m.expected = values[static_cast<size_t>(p)];
      m.got = get_bits(got.words[got.at(row_of(where[0]), col_of(where[0]))], where[0].shift, bits);
      result.mismatch = m;
    }
    if (untouched && !result.mismatch) {
      for (std::int64_t row = 0; row < got.rows && !result.mismatch; ++row)
        for (std::int64_t column = 0; column < got.columns && !result.mismatch; ++column) {
          const size_t at = got.at(row, column);
          for (int half = 0; half < 2; ++half) {
            if (untouched->covered[at] & (1 << half)) continue;
            const std::uint32_t before = get_bits(untouched->words[at], 16 * half, 16);
            const std::uint32_t after = get_bits(got.words[at], 16 * half, 16);
            if (before == after) continue;
            Mismatch m;
            m.check = result.name;
            m.thread = static_cast<int>(row);
            m.slot = static_cast<int>(column);
            m.bits = 16;
            m.shift = 16 * half;
            m.expected = before;
            m.got = after;
            m.note = "the kernel wrote a register slot that no element of the views uses";
            result.mismatch = m;
            break;
          }
        }
    }
    result.passed = !result.mismatch && result.error.empty();
  }
  // CTA 1's block after a pair run: the comparison above against the complemented values (and,
  // for words no element covers, the complemented initial words).
  template <class Positions>
  void compare_peer(CheckResult& result, const Grid& cta0, const std::vector<std::uint32_t>& values,
                    Positions positions, const Grid* untouched) const {
    if (cta_group_ != 2) return;
    Grid got = cta0;
    got.words = peer_second_;
    std::vector<std::uint32_t> peer_values(values);
    for (auto& v : peer_values) v = ~v & bits_mask(placement_.piece_bits());
    std::optional<Grid> before;
    if (untouched) {
      before = *untouched;
      for (auto& w : before->words) w = ~w;
    }
    const bool had = result.mismatch.has_value();
    compare(result, got, peer_values, positions, before ? &*before : nullptr);
    if (!had && result.mismatch) result.mismatch->cta = 1;
  }

  // tcgen05.ld.red: the threads that run the plan's instructions (the scope's warps).
  std::vector<int> transfer_threads(std::int64_t rows) const {
    std::vector<int> threads;
    for (int g = 0; g < plan_.warps(); ++g)
      for (int l = 0; l < 32; ++l) {
        const int thread = 32 * plan_.scope.warp_of_group(g) + l;
        if (thread < rows) threads.push_back(thread);
      }
    return threads;
  }

  // The slot where instruction k's reduction result belongs by the contract (docs/descriptor-
  // language.md): S + k, S = the register view's budget. Derived from the budget, not from
  // RepeatStep::redval_slot, so that a plan that misplaces a result fails here.
  int redval_slot(int k) const { return plan_.regs_per_thread - plan_.instructions_per_warp() + k; }

  // Marks the redval slots as covered, so that the untouched-slot comparison leaves them to
  // compare_redvals.
  void cover_redvals(Grid& before) const {
    if (!plan_.op.reduces()) return;
    for (int thread : transfer_threads(before.rows))
      for (int k = 0; k < plan_.instructions_per_warp(); ++k)
        before.covered[before.at(thread, redval_slot(k))] = 3;
  }

  // tcgen05.ld.red: each thread's redval slot of instruction k must hold the min/max
  // (tmem::reduce) over the values `expected` has in that thread's slots of instruction k, which
  // are what the load put there (the register comparison checks those). `why` names the source.
  void compare_redvals(CheckResult& result, const Grid& got, const Grid& expected) const {
    if (!plan_.op.reduces()) return;
    std::vector<std::uint32_t> loaded;
    for (int thread : transfer_threads(got.rows))
      for (int k = 0; k < plan_.instructions_per_warp(); ++k) {
        ++result.elements;
        loaded.clear();
        for (int slot : plan_.repeats[static_cast<size_t>(k)].slots)
          loaded.push_back(expected.words[expected.at(thread, slot)]);
        const std::uint32_t want = *reduce(*plan_.op.reduction(), loaded);
        const std::uint32_t have = got.words[got.at(thread, redval_slot(k))];
        if (want == have || result.mismatch) continue;
        Mismatch m;
        m.check = result.name;
        m.thread = thread;
        m.slot = redval_slot(k);
        m.expected = want;
        m.got = have;
        m.note = "the ." + plan_.op.reduction()->to_string() + " reduction result (redval)";
        result.mismatch = m;
      }
    result.passed = !result.mismatch && result.error.empty();
  }

  static std::int64_t row_of(const detail::RegisterBits& r) { return r.thread; }
  static std::int64_t col_of(const detail::RegisterBits& r) { return r.slot; }
  static std::int64_t row_of(const detail::TmemBits& t) { return t.lane; }
  static std::int64_t col_of(const detail::TmemBits& t) { return t.column; }

  CheckResult start(const char* name, const char* description) const {
    CheckResult result;
    result.name = name;
    result.description = description;
    return result;
  }

  const TransferSpec& spec_;
  const Plan& plan_;
  Executor& executor_;
  const Placement& placement_;
  const TmemSharing& sharing_;
  std::uint64_t seed_;
  int cta_group_;
  std::vector<std::uint32_t> peer_second_;  // CTA 1's block of the written buffer (a pair run)
};

Result<CheckResult> Runner::raw() {
  CheckResult result =
      start("raw", "Raw -> TMEM -> Raw2 through 32x32b only: the path store and load rely on");
  const kernels::LaunchShape shape = kernels::launch_shape(plan_, KernelKind::kFill);
  Random rng = random(0);
  std::vector<std::uint32_t> in(static_cast<size_t>(128 * shape.raw_columns)), out(in.size());
  for (auto& w : in) w = rng.word();
  for (size_t k = 0; k < in.size(); ++k) out[k] = ~in[k];
  Result<bool> ran = execute(KernelKind::kFill, in, out, result);
  if (!ran) return std::move(ran).error();
  if (*ran) {
    for (size_t k = 0; k < in.size(); ++k) {
      ++result.elements;
      if (out[k] == in[k] || result.mismatch) continue;
      Mismatch m;
      m.check = "raw";
      m.lane = static_cast<int>(k / static_cast<size_t>(shape.raw_columns));
      m.column = static_cast<int>(k % static_cast<size_t>(shape.raw_columns));
      m.expected = in[k];
      m.got = out[k];
      result.mismatch = m;
    }
    for (size_t k = 0; k < in.size() && cta_group_ == 2; ++k) {
      ++result.elements;
      if (peer_second_[k] == ~in[k] || result.mismatch) continue;
      Mismatch m;
      m.check = "raw";
      m.cta = 1;
      m.lane = static_cast<int>(k / static_cast<size_t>(shape.raw_columns));
      m.column = static_cast<int>(k % static_cast<size_t>(shape.raw_columns));
      m.expected = ~in[k];
      m.got = peer_second_[k];
      result.mismatch = m;
    }
  }
  result.passed = *ran && !result.mismatch;
  return result;
}

Result<CheckResult> Runner::roundtrip() {
  CheckResult result =
      start("roundtrip", "In -> st -> wait::st -> ld -> wait::ld -> Out, compared with In");
  const kernels::LaunchShape shape = kernels::launch_shape(plan_, KernelKind::kRoundtrip);
  Random rng = random(1);
  const std::vector<std::uint32_t> values = piece_values(rng);
  Grid in(shape.threads, shape.slots);
  if (std::string why = scatter_registers(in, values, rng); !why.empty()) {
    result.error = why;
    return result;
  }
  Grid out = in;
  for (auto& w : out.words) w = ~w;
  Grid before = out;
  cover_redvals(before);
  Result<bool> ran = execute(KernelKind::kRoundtrip, in.words, out.words, result);
  if (!ran) return std::move(ran).error();
  if (*ran) {
    auto positions = [&](std::int64_t p) { return placement_.registers(p); };
    compare(result, out, values, positions, &before);
    compare_peer(result, out, values, positions, &before);
    compare_redvals(result, out, in);  // ld.red reduces what the st wrote: In's slots
  }
  return result;
}

Result<CheckResult> Runner::store() {
  CheckResult result =
      start("store", "In -> st, then TMEM -> Raw through 32x32b, compared with the TMEM view");
  const kernels::LaunchShape shape = kernels::launch_shape(plan_, KernelKind::kStore);
  Random rng = random(2);
  const std::vector<std::uint32_t> values = piece_values(rng);
  Grid in(shape.threads, shape.slots);
  if (std::string why = scatter_registers(in, values, rng); !why.empty()) {
    result.error = why;
    return result;
  }
  Grid raw(128, shape.raw_columns);
  for (std::int64_t p = 0; p < placement_.pieces(); ++p)
    for (const detail::TmemBits& t : placement_.tmem(p))
      if (!raw.contains(t.lane, t.column)) {
        result.error = "element " + detail::coordinate_text(placement_.coordinate(p)) +
                       " lives at TMEM lane " + std::to_string(t.lane) + " column " +
                       std::to_string(t.column) + ", outside the " + std::to_string(raw.columns) +
                       "-column allocation of the plan";
        return result;
      }
  Result<bool> ran = execute(KernelKind::kStore, in.words, raw.words, result);
  if (!ran) return std::move(ran).error();
  if (*ran) {
    auto positions = [&](std::int64_t p) { return placement_.tmem(p); };
    compare(result, raw, values, positions, nullptr);
    compare_peer(result, raw, values, positions, nullptr);
  }
  return result;
}

Result<CheckResult> Runner::load() {
  CheckResult result =
      start("load", "Raw -> TMEM through 32x32b, then ld -> Out, compared with the register view");
  const kernels::LaunchShape shape = kernels::launch_shape(plan_, KernelKind::kLoad);
  Random rng = random(3);
  std::vector<std::uint32_t> values = piece_values(rng);
  // Elements on one cell (a broadcast) read one value.
  for (size_t p = 0; p < values.size(); ++p)
    values[p] = values[static_cast<size_t>(sharing_.representative[p])];
  Grid raw(128, shape.raw_columns);
  if (std::string why = scatter_tmem(raw, values, rng); !why.empty()) {
    result.error = why;
    return result;
  }
  // Out starts as the complement of what the views predict, so an element never written fails.
  Grid out(shape.threads, shape.slots);
  if (std::string why = scatter_registers(out, values, rng); !why.empty()) {
    result.error = why;
    return result;
  }
  const Grid expected = out;  // the values the view predicts, before they are complemented
  for (auto& w : out.words) w = ~w;
  Grid before = out;
  cover_redvals(before);
  Result<bool> ran = execute(KernelKind::kLoad, raw.words, out.words, result);
  if (!ran) return std::move(ran).error();
  if (*ran) {
    auto positions = [&](std::int64_t p) { return placement_.registers(p); };
    compare(result, out, values, positions, &before);
    compare_peer(result, out, values, positions, &before);
    compare_redvals(result, out, expected);
  }
  return result;
}

}  // namespace

std::string Mismatch::to_string() const {
  std::string text = check + ": ";
  if (cta != 0) text += "CTA " + std::to_string(cta) + " of the pair: ";
  if (!element.empty()) text += "element " + detail::coordinate_text(element) + ": ";
  std::string reg, cell;
  if (thread >= 0) reg = "thread " + std::to_string(thread) + " slot " + std::to_string(slot);
  if (lane >= 0) cell = "TMEM lane " + std::to_string(lane) + " column " + std::to_string(column);
  if (!reg.empty() && !cell.empty())
    text += check == "load" ? cell + " -> " + reg : reg + " -> " + cell;
  else
    text += reg + cell;
  if (bits == 16) text += " bits " + std::to_string(shift) + "-" + std::to_string(shift + 15);
  text += ": expected " + hex(expected, bits) + ", got " + hex(got, bits);
  if (!note.empty()) text += " (" + note + ")";
  return text;
}

bool RunReport::passed() const noexcept { return first_failure() == nullptr && !checks.empty(); }

std::int64_t RunReport::elements() const noexcept {
  std::int64_t total = 0;
  for (const CheckResult& c : checks) total += c.elements;
  return total;
}

const CheckResult* RunReport::first_failure() const noexcept {
  for (const CheckResult& c : checks)
    if (!c.passed) return &c;
  return nullptr;
}

std::string RunReport::to_string() const {
  std::ostringstream os;
  os << "device: " << device_description << "\n";
  for (const std::string& line : passed_over) os << "  passed over " << line << "\n";
  os << "seed: " << seed << "\n";
  if (cta_group == 2)
    os << "cta group: 2 (a CTA pair in one cluster; CTA 1 runs on the complement of CTA 0's "
          "data)\n";
  for (const CheckResult& c : checks) {
    std::string name = c.name;
    name.resize(10, ' ');
    os << "  " << name << (c.passed ? "PASS  " : "FAIL  ") << c.elements << " elements  ("
       << c.description << ")\n";
  }
  for (const LeftOutCheck& c : left_out) {
    std::string name = c.name;
    name.resize(10, ' ');
    os << "  " << name << "left out: " << c.reason << "\n";
  }
  if (const CheckResult* failure = first_failure()) {
    os << "FAIL: ";
    if (failure->mismatch)
      os << failure->mismatch->to_string() << "\n";
    else
      os << failure->name << ": " << failure->error << "\n";
  } else {
    os << "PASS: " << checks.size() << " checks, " << elements() << " elements on "
       << tmem::to_string(device) << "\n";
  }
  return os.str();
}

std::string RunReport::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const CheckResult& c : checks) {
    nlohmann::json item = {{"name", c.name},
                           {"description", c.description},
                           {"elements", c.elements},
                           {"pass", c.passed}};
    if (c.mismatch) {
      const Mismatch& m = *c.mismatch;
      item["mismatch"] = {{"check", m.check}, {"element", m.element}, {"thread", m.thread},
                          {"slot", m.slot},   {"lane", m.lane},       {"column", m.column},
                          {"bits", m.bits},   {"shift", m.shift},     {"expected", m.expected},
                          {"got", m.got},     {"note", m.note},       {"text", m.to_string()},
                          {"cta", m.cta}};
    }
    if (!c.error.empty()) item["error"] = c.error;
    if (c.rule != Rule::kNone) item["rule"] = tmem::to_string(c.rule);
    list.push_back(item);
  }
  nlohmann::json skipped = nlohmann::json::array();
  for (const LeftOutCheck& c : left_out)
    skipped.push_back({{"name", c.name}, {"reason", c.reason}});
  nlohmann::json json = {{"pass", passed()},
                         {"device", tmem::to_string(device)},
                         {"description", device_description},
                         {"passed_over", passed_over},
                         {"seed", seed},
                         {"cta_group", cta_group},
                         {"elements", elements()},
                         {"checks", list},
                         {"left_out", skipped}};
  return json.dump(2);
}

Result<RunReport> run_transfer(const TransferSpec& spec, const RunOptions& options) {
  Result<Plan> plan = check(spec);
  if (!plan) return std::move(plan).error();
  return run_transfer(spec, *plan, options);
}

Result<RunReport> run_transfer(const TransferSpec& spec, const Plan& plan,
                               const RunOptions& options) {
  Result<detail::Placement> placement = detail::place_elements(spec);
  if (!placement) return std::move(placement).error();
  std::string why_not;
  Result<std::unique_ptr<Executor>> executor = make_executor(options.device, &why_not);
  if (!executor) {
    // A device that cannot run (no driver, a GPU without tcgen05) is a driver failure, not an
    // invalid spec (docs/design.md §CLI: exit 3); a toolchain failure stays one.
    const Error& e = executor.error();
    const ErrorCode code =
        e.code() == ErrorCode::kToolchain ? ErrorCode::kToolchain : ErrorCode::kDriver;
    return Error(code, "device " + std::string(to_string(options.device)) + ": " + e.message(),
                 e.details());
  }
  RunReport report;
  report.device = (*executor)->device();
  report.device_description = (*executor)->description();
  report.seed = options.seed;
  report.cta_group = options.cta_group;
  std::istringstream lines(why_not);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) report.passed_over.push_back(line);
  const TmemSharing sharing = tmem_sharing(*placement);
  if (options.cta_group != 1 && options.cta_group != 2)
    return Error(ErrorCode::kUsage, "cta_group " + std::to_string(options.cta_group) +
                                        "; allowed: 1 (one CTA), 2 (a CTA pair)");
  Runner runner(spec, plan, **executor, *placement, sharing, options.seed, options.cta_group);
  // The checks that store with the opcode need each TMEM cell written once; a load that reads a
  // cell twice is legal (docs/checking.md), so for it they are left out, and said so.
  const bool store_applies = sharing.first.empty();
  struct Step {
    Result<CheckResult> (Runner::*run)();
    const char* name;
    bool stores;
  };
  for (const Step& step :
       {Step{&Runner::raw, "raw", false}, Step{&Runner::roundtrip, "roundtrip", true},
        Step{&Runner::store, "store", true}, Step{&Runner::load, "load", false}}) {
    if (step.stores && !store_applies) {
      report.left_out.push_back({step.name, sharing.first + ": " + spec.op().to_string() +
                                                " may read a cell for several elements, but the " +
                                                step.name +
                                                " check would store to it once for each"});
      continue;
    }
    Result<CheckResult> result = (runner.*step.run)();
    if (!result) return std::move(result).error();
    report.checks.push_back(std::move(result).value());
  }
  return report;
}

}  // namespace tmem
