// The CPU simulator's interpreter: scalar PTX per thread, tcgen05 collectives per warp, and the
// runtime rules of docs/tcgen05-rules.md §Addresses, §Lifecycle, §Sync checked as the instructions
// execute.
#include "runtime/sim/interpreter.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/sim/order.h"
#include "tmem/image.h"
#include "tmem/reduction.h"
#include "tmem/rule.h"

namespace tmem::sim {
namespace {

using ptx::Instruction;
using ptx::Op;
using ptx::Operand;
using ptx::Reg;
using ptx::RegClass;
using ptx::Type;

constexpr std::int32_t kUndefined = -2;  // register state: never written
constexpr std::int32_t kDefined = -1;    // register state: holds a value; >= 0: pending tcgen05.ld

bool is_warp_point(const Instruction& i) {
  if (is_tcgen05(i.op())) return true;
  switch (i.op()) {
    case Op::kBarSync:
    case Op::kBarWarpSync:
    case Op::kClusterArrive:
    case Op::kClusterWait:
      return true;
    case Op::kBra:
      return i.int_arg() != 0;  // bra.uni: every thread of the warp must agree
    default:
      return false;
  }
}

int width_of(Type type) { return ptx::type_bits(type); }
bool is_signed(Type type) { return type == Type::kS32 || type == Type::kS64; }
std::uint64_t mask_of(int bits) {
  return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
}
std::int64_t sign_extend(std::uint64_t value, int bits) {
  if (bits >= 64) return static_cast<std::int64_t>(value);
  const std::uint64_t sign = std::uint64_t{1} << (bits - 1);
  return static_cast<std::int64_t>((value ^ sign) - sign);
}

std::string lanes_text(const std::vector<int>& lanes) {
  std::string text;
  for (size_t i = 0; i < lanes.size(); ++i) {
    size_t j = i;
    while (j + 1 < lanes.size() && lanes[j + 1] == lanes[j] + 1) ++j;
    text += (text.empty() ? "" : ",") + std::to_string(lanes[i]);
    if (j > i) text += "-" + std::to_string(lanes[j]);
    i = j;
  }
  return text;
}

std::string hex32(std::uint64_t value) {
  std::ostringstream os;
  os << "0x" << std::hex << value;
  return os.str();
}

class Interpreter {
 public:
  Interpreter(const ptx::Module& module, const ptx::Function& function, const Config& config,
              std::span<const std::uint64_t> params, GlobalMemory& memory,
              std::vector<std::string> lines, std::vector<int> line_numbers)
      : module_(module),
        f_(function),
        body_(function.body()),
        config_(config),
        params_(params),
        global_(memory),
        lines_(std::move(lines)),
        line_numbers_(std::move(line_numbers)),
        warps_per_cta_(config.threads / 32),
        warps_(config.ctas * (config.threads / 32)),
        order_(warps_, warps_per_cta_),
        tmems_(static_cast<size_t>(config.ctas)),
        shareds_(static_cast<size_t>(config.ctas)),
        cta_barriers_(static_cast<size_t>(config.ctas), 0),
        threads_(static_cast<size_t>(config.ctas * config.threads)),
        warp_state_(static_cast<size_t>(warps_)) {}

  Status run() {
    try {
      setup();
      schedule();
      return std::monostate{};
    } catch (Error& error) {
      return std::move(error);
    }
  }

 private:
  struct Thread {
    int pc = 0;
    bool exited = false;
  };
  struct WarpState {
    bool done = false;
    bool at_barrier = false;
    bool at_cluster_wait = false;  // waits for the cluster phase it arrived in
    int pending_phase = -1;        // the cluster phase it arrived in and has not waited for
    int exit_instr = -1;           // a ret that one of its threads executed
  };
  // One cta_group::2 allocation: one half per CTA, each issued by one warp (docs/tcgen05-rules.md
  // §Lifecycle).
  struct PairHalf {
    OpRef alloc;     // that CTA's tcgen05.alloc.cta_group::2
    int block = -1;  // its block in that CTA's TMEM
    OpRef dealloc;   // that CTA's tcgen05.dealloc.cta_group::2
  };
  struct PairAllocation {
    int column = 0;
    int ncols = 0;
    std::array<PairHalf, 2> halves;
  };

  int cta_of(int w) const { return w / warps_per_cta_; }
  int local_warp(int w) const { return w % warps_per_cta_; }
  std::string warp_name(int w) const { return order_.warp_name(w); }
  Tmem& tmem_of(int w) { return tmems_[static_cast<size_t>(cta_of(w))]; }
  bool cta_exited(int cta) const {
    for (int w = cta * warps_per_cta_; w < (cta + 1) * warps_per_cta_; ++w)
      if (!warp_state_[static_cast<size_t>(w)].done) return false;
    return true;
  }

  // ---- errors -------------------------------------------------------------------------------

  std::string mnemonic(int instr) const {
    if (instr < 0) return "";
    std::string text = lines_[static_cast<size_t>(instr)];
    size_t start = text.find_first_not_of(" \t");
    if (start == std::string::npos) return text;
    if (text[start] == '@') start = text.find(' ', start) + 1;
    const size_t end = text.find_first_of(" ;", start);
    return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
  }
  std::string where(int instr) const {
    return "line " + std::to_string(line_numbers_[static_cast<size_t>(instr)]) + " (" +
           mnemonic(instr) + ")";
  }

  // A broken rule: "sim: line 41 (tcgen05.st...): <what> (<rule>)"; the details hold the PTX line.
  [[noreturn]] void fail(int instr, int warp, int thread, const std::string& what,
                         const std::string& rule, ErrorCode code = ErrorCode::kWrongData) const {
    std::string message = "sim: ";
    if (instr >= 0) message += where(instr) + ": ";
    message += what;
    if (!rule.empty()) message += " (" + rule + ")";
    std::string details = "kernel " + f_.name();
    if (instr >= 0) {
      std::string line = lines_[static_cast<size_t>(instr)];
      line.erase(0, line.find_first_not_of(" \t"));
      details +=
          ", line " + std::to_string(line_numbers_[static_cast<size_t>(instr)]) + ": " + line;
    }
    if (warp >= 0) details += "\n" + warp_name(warp);
    if (thread >= 0)
      details +=
          ", thread " + std::to_string(thread) + " (lane " + std::to_string(thread % 32) + ")";
    Error error(code, message, details);
    // What the simulator could not execute, as data for callers (the emulation suite).
    if (code == ErrorCode::kInternal && instr >= 0)
      error.add_detail("instruction", mnemonic(instr));
    throw error.set_rule(rule_of(rule));
  }
  // The docs/tcgen05-rules.md id a citation starts with ("R31, PTX ISA §9.7.16.8.5" is R31).
  static Rule rule_of(std::string_view citation) {
    if (citation.size() < 2 || citation[0] != 'R') return Rule::kNone;
    int id = 0;
    for (size_t i = 1; i < citation.size() && citation[i] >= '0' && citation[i] <= '9'; ++i)
      id = id * 10 + (citation[i] - '0');
    return tcgen05_rule(id);
  }
  [[noreturn]] void fail_thread(int thread, const std::string& what,
                                const std::string& rule = "") const {
    const Thread& t = threads_[static_cast<size_t>(thread)];
    fail(t.pc, thread / 32, thread, what, rule);
  }

  // ---- setup --------------------------------------------------------------------------------

  void setup() {
    if (params_.size() != f_.params().size())
      fail(-1, -1, -1,
           "kernel " + f_.name() + " takes " + std::to_string(f_.params().size()) +
               " parameters, got " + std::to_string(params_.size()),
           "", ErrorCode::kUsage);
    for (size_t i = 0; i < f_.params().size(); ++i) param_index_[f_.params()[i].name] = i;
    for (const ptx::SharedVar& v : module_.shared_vars())
      for (SharedMemory& shared : shareds_) shared_address_[v.name] = shared.add(v.align, v.count);
    for (size_t i = 0; i < body_.size(); ++i)
      if (body_[i].op() == Op::kLabel) labels_[body_[i].text()] = static_cast<int>(i);
    branch_target_.assign(body_.size(), -1);
    for (size_t i = 0; i < body_.size(); ++i)
      if (body_[i].op() == Op::kBra) branch_target_[i] = labels_.at(body_[i].text());
    for (RegClass cls : {RegClass::kB32, RegClass::kB64, RegClass::kPred}) {
      const auto c = static_cast<size_t>(cls);
      reg_count_[c] = static_cast<size_t>(f_.reg_count(cls));
      values_[c].assign(reg_count_[c] * threads_.size(), 0);
      state_[c].assign(reg_count_[c] * threads_.size(), kUndefined);
    }
  }

  // ---- registers ----------------------------------------------------------------------------

  size_t slot(int thread, const Reg& reg) const {
    return static_cast<size_t>(thread) * reg_count_[static_cast<size_t>(reg.cls)] +
           static_cast<size_t>(reg.index);
  }
  std::uint64_t read_reg(int thread, const Reg& reg, int instr) const {
    const size_t s = slot(thread, reg);
    const std::int32_t state = state_[static_cast<size_t>(reg.cls)][s];
    if (state == kUndefined)
      fail(instr, thread / 32, thread, "reads " + reg.name() + ", which no instruction has written",
           "");
    // A destination of a tcgen05.ld in flight (state >= 0) may be read: the hardware honours a
    // true register dependency without tcgen05.wait::ld (docs/tcgen05-rules.md §Sync). Writing
    // it, or overwriting the cells it came from, needs the wait (write_reg, R31).
    return values_[static_cast<size_t>(reg.cls)][s];
  }
  void write_reg(int thread, const Reg& reg, std::uint64_t value, int instr,
                 std::int32_t state = kDefined) {
    const size_t s = slot(thread, reg);
    std::int32_t& current = state_[static_cast<size_t>(reg.cls)][s];
    if (current >= 0)
      fail(instr, thread / 32, thread,
           "overwrites " + reg.name() + ", a destination of the tcgen05.ld at " + where(current) +
               ", before tcgen05.wait::ld",
           "R31, PTX ISA §9.7.16.8.5");
    const int bits = reg.cls == RegClass::kB64 ? 64 : reg.cls == RegClass::kB32 ? 32 : 1;
    values_[static_cast<size_t>(reg.cls)][s] = value & mask_of(bits);
    current = state;
  }

  std::uint64_t special(int thread, ptx::SpecialReg reg) const {
    switch (reg) {
      case ptx::SpecialReg::kTidX:
        return static_cast<std::uint64_t>(thread % config_.threads);
      case ptx::SpecialReg::kNtidX:
        return static_cast<std::uint64_t>(config_.threads);
      case ptx::SpecialReg::kCtaidX:
      case ptx::SpecialReg::kClusterCtaRank:  // a grid of one cluster
        return static_cast<std::uint64_t>(thread / config_.threads);
      case ptx::SpecialReg::kLaneId:
        return static_cast<std::uint64_t>(thread % 32);
    }
    return 0;
  }

  std::uint64_t shared_symbol(const std::string& name, int instr, int thread) const {
    auto it = shared_address_.find(name);
    if (it == shared_address_.end())
      fail(instr, thread / 32, thread, "unknown shared variable '" + name + "'", "");
    return it->second;
  }

  // The value of a source operand, `bits` wide.
  std::uint64_t value(int thread, const Operand& o, int bits, int instr) const {
    switch (o.kind()) {
      case Operand::Kind::kReg:
        return read_reg(thread, o.reg(), instr) & mask_of(bits);
      case Operand::Kind::kImm:
        return static_cast<std::uint64_t>(o.imm_value()) & mask_of(bits);
      case Operand::Kind::kSpecial:
        return special(thread, o.special_reg()) & mask_of(bits);
      case Operand::Kind::kSymbol:
        return shared_symbol(o.symbol_name(), instr, thread) & mask_of(bits);
      case Operand::Kind::kAddress:
        break;
    }
    fail(instr, thread / 32, thread, "an address is not a value", "", ErrorCode::kInternal);
  }

  // [reg+offset] or [symbol+offset] as a shared or global byte address.
  std::uint64_t address(int thread, const Operand& o, int instr) const {
    if (o.kind() != Operand::Kind::kAddress)
      fail(instr, thread / 32, thread, "expected an address operand", "", ErrorCode::kInternal);
    const std::uint64_t base = o.symbol_name().empty()
                                   ? read_reg(thread, o.reg(), instr)
                                   : shared_symbol(o.symbol_name(), instr, thread);
    return base + static_cast<std::uint64_t>(o.imm_value());
  }

  bool guard_passes(int thread, const Instruction& i, int instr) const {
    if (!i.guard()) return true;
    const bool p = read_reg(thread, *i.guard(), instr) != 0;
    return i.guard_negated() ? !p : p;
  }

  // ---- scalar instructions --------------------------------------------------------------------

  // Runs thread `t` until it reaches a warp point or exits.
  void run_thread(int t) {
    Thread& th = threads_[static_cast<size_t>(t)];
    while (!th.exited) {
      if (th.pc >= static_cast<int>(body_.size())) {  // fell off the end: the thread exits
        th.exited = true;
        return;
      }
      const int pc = th.pc;
      const Instruction& i = body_[static_cast<size_t>(pc)];
      if (is_warp_point(i)) return;
      if (++executed_ > config_.instruction_budget)
        fail(pc, t / 32, t,
             "the kernel did not finish within " + std::to_string(config_.instruction_budget) +
                 " instructions; is there a loop that never ends?",
             "instruction budget");
      if (!guard_passes(t, i, pc)) {
        ++th.pc;
        continue;
      }
      execute_scalar(t, i, pc);
    }
  }

  void execute_scalar(int t, const Instruction& i, int pc) {
    Thread& th = threads_[static_cast<size_t>(t)];
    switch (i.op()) {
      case Op::kLabel:
      case Op::kComment:
      case Op::kMembarCta:  // the simulator's memory is sequentially consistent
        break;
      case Op::kRet:
        th.exited = true;
        warp_state_[static_cast<size_t>(t / 32)].exit_instr = pc;
        return;
      case Op::kBra:
        th.pc = branch_target_[static_cast<size_t>(pc)];
        return;
      case Op::kLdGlobal:
      case Op::kStGlobal:
        access_global(t, i, pc);
        break;
      case Op::kLdShared:
      case Op::kStShared:
        access_shared(t, i, pc);
        break;
      case Op::kUncheckedRaw:
        fail(pc, t / 32, t, "the simulator cannot execute raw PTX text ('" + i.text() + "')", "",
             ErrorCode::kInternal);
      default: {
        // Fails first for anything that is not a scalar instruction, whose dsts may be empty.
        const std::uint64_t result = scalar_result(t, i, pc);
        write_reg(t, i.dsts()[0].reg(), result, pc);
      }
    }
    ++th.pc;
  }

  [[noreturn]] void unsupported(int t, int pc) const {
    fail(pc, t / 32, t, "the simulator does not execute " + mnemonic(pc), "", ErrorCode::kInternal);
  }

  // The value an instruction with one destination register writes there.
  std::uint64_t scalar_result(int t, const Instruction& i, int pc) const {
    const auto& s = i.srcs();
    const int bits = width_of(i.type());
    switch (i.op()) {
      case Op::kMov:
        return value(t, s[0], bits, pc);
      case Op::kLdParam:
        return param(t, s[0].symbol_name(), pc) & mask_of(bits);
      case Op::kCvtaToGlobal:  // simulated generic and global addresses coincide
        return value(t, s[0], 64, pc);
      case Op::kAdd:
      case Op::kMulLo: {
        if (i.type() == Type::kF32 || i.type() == Type::kPred) unsupported(t, pc);
        const std::uint64_t a = value(t, s[0], bits, pc), b = value(t, s[1], bits, pc);
        return i.op() == Op::kAdd ? a + b : a * b;
      }
      case Op::kMulWide: {
        const std::uint64_t a = value(t, s[0], 32, pc), b = value(t, s[1], 32, pc);
        return is_signed(i.type())
                   ? static_cast<std::uint64_t>(sign_extend(a, 32) * sign_extend(b, 32))
                   : a * b;
      }
      case Op::kShl:
      case Op::kShr:
        return shift(t, i, pc);
      case Op::kAnd:
      case Op::kOr: {
        if (i.type() == Type::kF32) unsupported(t, pc);
        const std::uint64_t a = value(t, s[0], bits, pc), b = value(t, s[1], bits, pc);
        return i.op() == Op::kAnd ? a & b : a | b;
      }
      case Op::kMin:
      case Op::kMax:
        return min_max(t, i, pc);
      case Op::kAbs:  // abs.f32 without .ftz: clears the sign bit, denormals and NaN kept
        return value(t, s[0], 32, pc) & 0x7FFFFFFFu;
      case Op::kSetp:
        return compare(t, i, pc) ? 1 : 0;
      default:
        fail(pc, t / 32, t, "internal: " + mnemonic(pc) + " is not a scalar instruction", "",
             ErrorCode::kInternal);
    }
  }

  std::uint64_t param(int t, const std::string& name, int pc) const {
    auto it = param_index_.find(name);
    if (it == param_index_.end()) fail(pc, t / 32, t, "unknown parameter '" + name + "'", "");
    return params_[it->second];
  }

  std::uint64_t shift(int t, const Instruction& i, int pc) const {
    if (i.type() == Type::kF32 || i.type() == Type::kPred) unsupported(t, pc);
    const int bits = width_of(i.type());
    const std::uint64_t a = value(t, i.srcs()[0], bits, pc);
    const std::uint64_t amount = value(t, i.srcs()[1], 32, pc);
    if (i.op() == Op::kShl) return amount >= static_cast<std::uint64_t>(bits) ? 0 : a << amount;
    if (is_signed(i.type())) {  // shr.s: arithmetic, clamped to the width (PTX ISA shr)
      const std::int64_t v = sign_extend(a, bits);
      return static_cast<std::uint64_t>(
          v >> std::min<std::uint64_t>(amount, static_cast<std::uint64_t>(bits - 1)));
    }
    return amount >= static_cast<std::uint64_t>(bits) ? 0 : a >> amount;
  }

  std::uint64_t min_max(int t, const Instruction& i, int pc) const {
    // The PTX min/max semantics are tmem::reduce_pair's (tmem/reduction.h), .abs excluded.
    Reduction pair;
    pair.op = i.op() == Op::kMin ? ReductionOp::kMin : ReductionOp::kMax;
    pair.type = i.type() == Type::kF32   ? ReductionType::kF32
                : i.type() == Type::kS32 ? ReductionType::kS32
                                         : ReductionType::kU32;
    pair.nan = i.nan_qualifier();
    const auto a = static_cast<std::uint32_t>(value(t, i.srcs()[0], 32, pc));
    const auto b = static_cast<std::uint32_t>(value(t, i.srcs()[1], 32, pc));
    return reduce_pair(pair, a, b);
  }

  void access_global(int t, const Instruction& i, int pc) {
    const bool load = i.op() == Op::kLdGlobal;
    const auto& regs = load ? i.dsts() : i.srcs();
    const int bytes = 4 * static_cast<int>(regs.size());
    const std::uint64_t at = address(t, load ? i.srcs()[0] : i.dsts()[0], pc);
    std::string why;
    if (load) {
      const std::uint32_t* words = global_.read(at, bytes, why);
      if (!words) fail(pc, t / 32, t, why, "global memory");
      for (size_t k = 0; k < regs.size(); ++k) write_reg(t, regs[k].reg(), words[k], pc);
    } else {
      std::uint32_t* words = global_.write(at, bytes, why);
      if (!words) fail(pc, t / 32, t, why, "global memory");
      for (size_t k = 0; k < regs.size(); ++k)
        words[k] = static_cast<std::uint32_t>(read_reg(t, regs[k].reg(), pc));
    }
  }

  void access_shared(int t, const Instruction& i, int pc) {
    const bool load = i.op() == Op::kLdShared;
    const std::uint64_t at = address(t, load ? i.srcs()[0] : i.dsts()[0], pc);
    SharedMemory& shared = shareds_[static_cast<size_t>(cta_of(t / 32))];
    const int barriers = cta_barriers_[static_cast<size_t>(cta_of(t / 32))];
    SharedMemory::Word* word = shared.word(at);
    if (!word)
      fail(pc, t / 32, t,
           "shared address " + hex32(at) + " is outside the " + std::to_string(shared.bytes()) +
               " bytes of shared memory or not 4-byte aligned",
           "shared memory");
    if (!load) {
      *word = {static_cast<std::uint32_t>(read_reg(t, i.srcs()[0].reg(), pc)), true, t / 32,
               barriers};
      return;
    }
    if (!word->written)
      fail(pc, t / 32, t, "reads shared address " + hex32(at) + ", which nothing has written",
           "shared memory");
    if (word->writer_warp != t / 32 && word->generation >= barriers)
      fail(pc, t / 32, t,
           "reads shared address " + hex32(at) + ", which " + warp_name(word->writer_warp) +
               " wrote, with no barrier (bar.sync) in between",
           "data race");
    write_reg(t, i.dsts()[0].reg(), word->value, pc);
  }

  bool compare(int t, const Instruction& i, int pc) const {
    const int bits = width_of(i.type());
    const std::uint64_t a = value(t, i.srcs()[0], bits, pc), b = value(t, i.srcs()[1], bits, pc);
    int order;  // -1, 0, 1; 2: unordered (NaN)
    if (i.type() == Type::kF32) {
      const float x = std::bit_cast<float>(static_cast<std::uint32_t>(a));
      const float y = std::bit_cast<float>(static_cast<std::uint32_t>(b));
      order = x != x || y != y ? 2 : x < y ? -1 : x > y ? 1 : 0;
    } else if (is_signed(i.type())) {
      const std::int64_t x = sign_extend(a, bits), y = sign_extend(b, bits);
      order = x < y ? -1 : x > y ? 1 : 0;
    } else {
      order = a < b ? -1 : a > b ? 1 : 0;
    }
    if (order == 2) return false;  // ordered comparisons are false on NaN
    switch (i.cmp()) {
      case ptx::Cmp::kEq:
        return order == 0;
      case ptx::Cmp::kNe:
        return order != 0;
      case ptx::Cmp::kLt:
        return order < 0;
      case ptx::Cmp::kLe:
        return order <= 0;
      case ptx::Cmp::kGt:
        return order > 0;
      case ptx::Cmp::kGe:
        return order >= 0;
    }
    return false;
  }

  // ---- scheduling -----------------------------------------------------------------------------

  void schedule() {
    for (;;) {
      for (int w = 0; w < warps_; ++w) {
        WarpState& ws = warp_state_[static_cast<size_t>(w)];
        if (!ws.done && !ws.at_barrier && !ws.at_cluster_wait) run_warp(w);
      }
      bool released = false;
      for (int cta = 0; cta < config_.ctas; ++cta) released = release_cta_barrier(cta) || released;
      released = release_cluster_waiters() || released;
      if (released) continue;
      std::vector<int> blocked;
      for (int w = 0; w < warps_; ++w)
        if (!warp_state_[static_cast<size_t>(w)].done) blocked.push_back(w);
      if (blocked.empty()) break;
      report_deadlock(blocked);
    }
    // Rule R29: both halves of every cta_group::2 allocation were issued.
    for (const PairAllocation& pair : pairs_)
      for (int cta = 0; cta < 2; ++cta) {
        const OpRef& mine = pair.halves[static_cast<size_t>(cta)].alloc;
        if (!mine.valid() || pair.halves[static_cast<size_t>(1 - cta)].alloc.valid()) continue;
        fail(mine.instr, mine.warp, -1,
             warp_name(mine.warp) + "'s tcgen05.alloc.cta_group::2 of " +
                 std::to_string(pair.ncols) + " columns has no partner: no warp of CTA " +
                 std::to_string(1 - cta) + " allocated with it",
             "R29, PTX ISA §9.7.16.7.1");
      }
    // Rule R26: every allocation is freed before the kernel exits.
    for (const Tmem& tmem : tmems_)
      for (const Allocation& block : tmem.allocations())
        if (block.live)
          fail(block.op.instr, block.op.warp, -1,
               "the kernel exits with TMEM columns " + std::to_string(block.column) + ".." +
                   std::to_string(block.column + block.ncols - 1) + " still allocated by " +
                   warp_name(block.op.warp) + " (no tcgen05.dealloc freed them)",
               "R26, PTX ISA §9.7.16.7.1");
  }

  // bar.sync of CTA `cta`: completes when every warp of the CTA waits at it.
  bool release_cta_barrier(int cta) {
    std::vector<int> waiting;
    for (int w = cta * warps_per_cta_; w < (cta + 1) * warps_per_cta_; ++w) {
      const WarpState& ws = warp_state_[static_cast<size_t>(w)];
      if (ws.at_barrier)
        waiting.push_back(w);
      else if (!ws.done)
        return false;  // still running or waiting elsewhere
    }
    if (waiting.empty()) return false;
    const int first_pc = threads_[static_cast<size_t>(32 * waiting[0])].pc;
    if (static_cast<int>(waiting.size()) != warps_per_cta_) {
      int exited = cta * warps_per_cta_;
      while (!warp_state_[static_cast<size_t>(exited)].done) ++exited;
      fail(first_pc, waiting[0], -1,
           "bar.sync waits for every thread of the CTA, but " + warp_name(exited) + " has exited" +
               (warp_state_[static_cast<size_t>(exited)].exit_instr >= 0
                    ? " at " + where(warp_state_[static_cast<size_t>(exited)].exit_instr)
                    : std::string()) +
               ": the barrier never completes",
           "deadlock");
    }
    const std::int64_t id = body_[static_cast<size_t>(first_pc)].int_arg();
    for (int w : waiting) {
      const int pc = threads_[static_cast<size_t>(32 * w)].pc;
      if (body_[static_cast<size_t>(pc)].int_arg() != id)
        fail(pc, w, -1,
             warp_name(w) + " waits at barrier " +
                 std::to_string(body_[static_cast<size_t>(pc)].int_arg()) + " while " +
                 warp_name(waiting[0]) + " waits at barrier " + std::to_string(id) + " (" +
                 where(first_pc) + "): neither completes",
             "deadlock");
    }
    order_.barrier(waiting);
    ++cta_barriers_[static_cast<size_t>(cta)];
    for (int w : waiting) {
      warp_state_[static_cast<size_t>(w)].at_barrier = false;
      advance(w);
    }
    return true;
  }

  // barrier.cluster.arrive of warp `w`; the phase completes when every warp of the cluster arrived.
  void cluster_arrive(int w, int pc) {
    WarpState& ws = warp_state_[static_cast<size_t>(w)];
    if (ws.pending_phase >= 0)
      fail(pc, w, -1,
           warp_name(w) + " arrives at the cluster barrier twice without barrier.cluster.wait",
           "PTX ISA §9.7.13.3.2");
    ws.pending_phase = cluster_phases_;
    order_.cluster_arrive(w);
    if (++cluster_arrivals_ < warps_) return;
    std::vector<int> all(static_cast<size_t>(warps_));
    for (int k = 0; k < warps_; ++k) all[static_cast<size_t>(k)] = k;
    order_.cluster_complete(all);
    cluster_arrivals_ = 0;
    ++cluster_phases_;
    for (int cta = 0; cta < config_.ctas; ++cta) ++cta_barriers_[static_cast<size_t>(cta)];
  }

  // Warps at barrier.cluster.wait whose phase has completed go on.
  bool release_cluster_waiters() {
    bool released = false;
    for (int w = 0; w < warps_; ++w) {
      WarpState& ws = warp_state_[static_cast<size_t>(w)];
      if (!ws.at_cluster_wait || cluster_phases_ <= ws.pending_phase) continue;
      ws.at_cluster_wait = false;
      pass_cluster_wait(w);
      released = true;
    }
    return released;
  }

  void pass_cluster_wait(int w) {
    warp_state_[static_cast<size_t>(w)].pending_phase = -1;
    order_.cluster_wait(w);
    advance(w);
  }

  // No warp can go on: say where the first blocked one waits, and for what.
  [[noreturn]] void report_deadlock(const std::vector<int>& blocked) {
    const int w = blocked[0];
    const int pc = threads_[static_cast<size_t>(32 * w)].pc;
    std::string missing;
    for (int k = 0; k < warps_; ++k) {
      const WarpState& ks = warp_state_[static_cast<size_t>(k)];
      if (ks.done) {
        missing = warp_name(k) + " has exited";
        break;
      }
      if (ks.at_barrier && warp_state_[static_cast<size_t>(w)].at_cluster_wait) {
        missing = warp_name(k) + " waits at bar.sync (" +
                  where(threads_[static_cast<size_t>(32 * k)].pc) + ")";
        break;
      }
      if (ks.at_cluster_wait && warp_state_[static_cast<size_t>(w)].at_barrier) {
        missing = warp_name(k) + " waits at the cluster barrier (" +
                  where(threads_[static_cast<size_t>(32 * k)].pc) + ")";
        break;
      }
    }
    fail(pc, w, -1,
         warp_name(w) + " waits forever" + (missing.empty() ? "" : ": " + missing) +
             (warp_state_[static_cast<size_t>(w)].at_cluster_wait
                  ? "; barrier.cluster.wait needs every thread of every CTA of the cluster to "
                    "arrive"
                  : ""),
         "deadlock");
  }

  // Runs warp `w` until it waits at a barrier or all its threads have exited.
  void run_warp(int w) {
    WarpState& ws = warp_state_[static_cast<size_t>(w)];
    const int first = 32 * w;
    for (;;) {
      for (int l = 0; l < 32; ++l) run_thread(first + l);
      std::vector<int> live, gone;
      for (int l = 0; l < 32; ++l)
        (threads_[static_cast<size_t>(first + l)].exited ? gone : live).push_back(l);
      if (live.empty()) {
        ws.done = true;
        return;
      }
      // Divergence is reported at the earliest instruction any lane waits at.
      int pc = threads_[static_cast<size_t>(first + live[0])].pc;
      for (int l : live) pc = std::min(pc, threads_[static_cast<size_t>(first + l)].pc);
      const Instruction& i = body_[static_cast<size_t>(pc)];
      if (!gone.empty())
        fail(pc, w, -1,
             "lanes " + lanes_text(live) + " of " + warp_name(w) +
                 " reach this instruction but lanes " + lanes_text(gone) +
                 " have exited; it needs all 32 threads of the warp",
             "divergence, R21");
      std::vector<int> here, elsewhere;
      for (int l : live)
        (threads_[static_cast<size_t>(first + l)].pc == pc ? here : elsewhere).push_back(l);
      if (!elsewhere.empty())
        fail(pc, w, -1,
             "lanes " + lanes_text(here) + " of " + warp_name(w) +
                 " reach this instruction while lanes " + lanes_text(elsewhere) + " are at " +
                 where(threads_[static_cast<size_t>(first + elsewhere[0])].pc) +
                 "; a .sync.aligned instruction needs the whole warp converged",
             "divergence, R21");
      executed_ += 32;
      if (executed_ > config_.instruction_budget)
        fail(pc, w, -1,
             "the kernel did not finish within " + std::to_string(config_.instruction_budget) +
                 " instructions",
             "instruction budget");
      // The guard of a warp-wide instruction must agree in every lane.
      std::vector<int> taken, skipped;
      for (int l = 0; l < 32; ++l) (guard_passes(first + l, i, pc) ? taken : skipped).push_back(l);
      if (!taken.empty() && !skipped.empty())
        fail(pc, w, -1,
             "the guard " + std::string(i.guard_negated() ? "@!" : "@") + i.guard()->name() +
                 " is true in lanes " + lanes_text(taken) + " and false in lanes " +
                 lanes_text(skipped) +
                 (i.op() == Op::kBra ? "; bra.uni promises a uniform branch"
                                     : "; the instruction is warp-wide"),
             "divergence, R21");
      if (taken.empty()) {
        advance(w);
        continue;
      }
      if (i.op() == Op::kBra) {
        for (int l = 0; l < 32; ++l)
          threads_[static_cast<size_t>(first + l)].pc = branch_target_[static_cast<size_t>(pc)];
        continue;
      }
      if (i.op() == Op::kBarSync) {
        ws.at_barrier = true;
        return;
      }
      if (i.op() == Op::kClusterArrive) {
        cluster_arrive(w, pc);
        advance(w);
        continue;
      }
      if (i.op() == Op::kClusterWait) {
        if (ws.pending_phase < 0)
          fail(pc, w, -1,
               warp_name(w) + " executes barrier.cluster.wait without barrier.cluster.arrive",
               "PTX ISA §9.7.13.3.2");
        if (cluster_phases_ > ws.pending_phase) {
          pass_cluster_wait(w);
          continue;
        }
        ws.at_cluster_wait = true;
        return;
      }
      execute_collective(w, i, pc);
      advance(w);
    }
  }

  void advance(int w) {
    for (int l = 0; l < 32; ++l) ++threads_[static_cast<size_t>(32 * w + l)].pc;
  }

  // ---- tcgen05 collectives --------------------------------------------------------------------

  // An operand that must hold the same value in every lane (docs/tcgen05-rules.md §Addresses:
  // .sync.aligned).
  std::uint64_t uniform(int w, int pc, const Operand& o, const char* what,
                        bool is_address = false) {
    std::uint64_t first = 0;
    for (int l = 0; l < 32; ++l) {
      const int t = 32 * w + l;
      const std::uint64_t v = is_address ? address(t, o, pc) : value(t, o, 32, pc);
      if (l == 0)
        first = v;
      else if (v != first)
        fail(pc, w, t,
             std::string(what) + " is " + hex32(v) + " in lane " + std::to_string(l) + " but " +
                 hex32(first) + " in lane 0; every thread of the warp must pass the same value",
             "R21, PTX ISA §9.7.16.8.3");
    }
    return first;
  }

  // cta_group::2 needs the peer CTA launched (a cluster of two) and still active
  // (docs/tcgen05-rules.md §Lifecycle).
  void check_cta_group(int w, int pc, const Instruction& i) {
    if (i.int_arg() != 2) return;
    if (config_.ctas != 2)
      fail(pc, w, -1,
           "cta_group::2 needs a peer CTA, but the kernel runs as " + std::to_string(config_.ctas) +
               " CTA(s); launch it as a cluster of 2 CTAs (sim::Config::ctas)",
           "R29, PTX ISA §9.7.16.7.1");
    const int peer = 1 - cta_of(w);
    if (cta_exited(peer))
      fail(pc, w, -1,
           warp_name(w) + " issues a cta_group::2 collective after its peer CTA " +
               std::to_string(peer) +
               " has exited; the peer must be launched and still active (keep it alive with a "
               "cluster barrier after the dealloc)",
           "R29, PTX ISA §9.7.16.7.1");
  }

  // One warp per CTA issues the pair's alloc/dealloc, the same warp in both CTAs (CUTLASS
  // Allocator2Sm; docs/tcgen05-rules.md §Lifecycle).
  void check_pair_warp(int w, int pc, const char* what) {
    const int cta = cta_of(w), peer = 1 - cta;
    int& mine = pair_warp_[static_cast<size_t>(cta)];
    const int theirs = pair_warp_[static_cast<size_t>(peer)];
    if (mine >= 0 && mine != local_warp(w))
      fail(pc, w, -1,
           warp_name(w) + " issues " + what + ", but warp " + std::to_string(mine) + " of CTA " +
               std::to_string(cta) +
               " issues this CTA's cta_group::2 lifecycle; one warp per peer CTA performs it",
           "R29, PTX ISA §9.7.16.7.1");
    if (theirs >= 0 && theirs != local_warp(w))
      fail(pc, w, -1,
           warp_name(w) + " issues " + what + ", but its peer CTA " + std::to_string(peer) +
               " issues the pair's lifecycle from warp " + std::to_string(theirs) +
               "; the pair's two warps have the same warp id in their CTAs",
           "R29, docs/tcgen05-rules.md §Lifecycle");
    mine = local_warp(w);
  }

  // The pair allocation that block `block` of CTA `cta` belongs to, or null.
  PairAllocation* pair_of(int cta, int block) {
    for (PairAllocation& pair : pairs_)
      if (pair.halves[static_cast<size_t>(cta)].block == block &&
          pair.halves[static_cast<size_t>(cta)].alloc.valid())
        return &pair;
    return nullptr;
  }

  // Before warp `w` uses or frees the pair's columns, the peer CTA's half of the alloc reached it
  // (fence::before, cluster barrier, fence::after): both peers allocate before either uses or
  // releases (R31).
  void check_peer_allocated(int w, int pc, const PairAllocation& pair, const char* action) {
    const int peer = 1 - cta_of(w);
    const OpRef& theirs = pair.halves[static_cast<size_t>(peer)].alloc;
    if (!theirs.valid())
      fail(pc, w, -1,
           warp_name(w) + " " + action + " columns " + std::to_string(pair.column) + ".." +
               std::to_string(pair.column + pair.ncols - 1) +
               " of a cta_group::2 allocation that its peer CTA " + std::to_string(peer) +
               " has not allocated yet; order both allocs before any use or release with "
               "fence::before_thread_sync, barrier.cluster.arrive/wait, fence::after_thread_sync",
           "R31, docs/tcgen05-rules.md §Lifecycle, §Sync");
    if (!order_.visible(OpKind::kAlloc, theirs, w))
      fail(pc, w, -1,
           warp_name(w) + " " + action + " columns " + std::to_string(pair.column) + ".." +
               std::to_string(pair.column + pair.ncols - 1) +
               " of a cta_group::2 allocation before the peer's alloc at " + where(theirs.instr) +
               " is ordered before it: " + order_.missing(OpKind::kAlloc, theirs, w),
           "R31, docs/tcgen05-rules.md §Lifecycle, §Sync");
  }

  static bool legal_ncols(std::uint64_t n) {
    return n == 32 || n == 64 || n == 128 || n == 256 || n == 512;
  }

  void execute_collective(int w, const Instruction& i, int pc) {
    switch (i.op()) {
      case Op::kTcgen05Alloc:
        return alloc(w, i, pc);
      case Op::kTcgen05Dealloc:
        return dealloc(w, i, pc);
      case Op::kTcgen05Relinquish:
        check_cta_group(w, pc, i);
        tmem_of(w).relinquish(pc);
        return;
      case Op::kTcgen05WaitSt:
        order_.wait(w, OpKind::kStore);
        return;
      case Op::kTcgen05WaitLd:
        order_.wait(w, OpKind::kLoad);
        for (int l = 0; l < 32; ++l) {
          const size_t begin = static_cast<size_t>(32 * w + l) * reg_count_[0];
          for (size_t r = begin; r < begin + reg_count_[0]; ++r)
            if (state_[0][r] >= 0) state_[0][r] = kDefined;
        }
        return;
      case Op::kTcgen05FenceBefore:
        order_.fence_before(w);
        return;
      case Op::kTcgen05FenceAfter:
        order_.fence_after(w);
        return;
      case Op::kTcgen05Ld:
      case Op::kTcgen05St:
        return transfer(w, i, pc);
      case Op::kBarWarpSync:  // the whole warp arrived: that is all it asks
        return;
      default:
        fail(pc, w, -1, "internal: " + mnemonic(pc) + " is not a collective", "",
             ErrorCode::kInternal);
    }
  }

  void alloc(int w, const Instruction& i, int pc) {
    check_cta_group(w, pc, i);
    const std::uint64_t dst = uniform(w, pc, i.dsts()[0], "the alloc destination", true);
    const std::uint64_t ncols = uniform(w, pc, i.srcs()[0], "the column count");
    const std::string warp = warp_name(w);
    Tmem& tmem = tmem_of(w);
    if (!legal_ncols(ncols))
      fail(
          pc, w, -1,
          warp + " allocates " + std::to_string(ncols) + " columns; allowed: 32, 64, 128, 256, 512",
          "R22, PTX ISA §9.7.16.7.1");
    if (tmem.relinquish_instr() >= 0)
      fail(pc, w, -1,
           warp + " allocates after the CTA gave up its allocation permit at " +
               where(tmem.relinquish_instr()),
           "R25, PTX ISA §9.7.16.7.1");
    const int n = static_cast<int>(ncols);
    if (!tmem.allocations().empty() && tmem.allocations().back().ncols < n)
      fail(pc, w, -1,
           warp + " allocates " + std::to_string(n) + " columns after an allocation of " +
               std::to_string(tmem.allocations().back().ncols) + " at " +
               where(tmem.allocations().back().op.instr) + "; allocation sizes must not increase",
           "R24, PTX ISA §9.7.16.7.1");
    const bool paired = i.int_arg() == 2;
    const int cta = cta_of(w), peer = 1 - cta;
    PairAllocation* pair = nullptr;
    if (paired) {
      check_pair_warp(w, pc, "tcgen05.alloc.cta_group::2");
      // The k-th alloc::2 of one CTA pairs with the k-th of its peer.
      const size_t k = static_cast<size_t>(pair_halves_[static_cast<size_t>(cta)]++);
      if (k < pairs_.size()) {
        pair = &pairs_[k];
        const OpRef& theirs = pair->halves[static_cast<size_t>(peer)].alloc;
        if (pair->ncols != n)
          fail(pc, w, -1,
               warp + " allocates " + std::to_string(n) + " columns with cta_group::2, but CTA " +
                   std::to_string(peer) + " allocated " + std::to_string(pair->ncols) + " at " +
                   where(theirs.instr) + "; both halves of the pair take the same nCols",
               "R29, PTX ISA §9.7.16.7.1");
        if (!tmem.is_free(pair->column, n))
          fail(pc, w, -1,
               warp + " allocates columns " + std::to_string(pair->column) + ".." +
                   std::to_string(pair->column + n - 1) + " that CTA " + std::to_string(peer) +
                   " holds for the pair, but they are taken in CTA " + std::to_string(cta) +
                   ": the alloc blocks forever",
               "R30, PTX ISA §9.7.16.7.1");
      } else {
        pairs_.push_back({});
        pair = &pairs_.back();
      }
    }
    std::optional<int> column =
        pair && pair->ncols ? std::optional<int>(pair->column)
        : paired ? tmem.find_free(n, config_.placement, &tmems_[static_cast<size_t>(peer)])
                 : tmem.find_free(n, config_.placement);
    if (!column) {
      int held = 0;
      for (const Allocation& block : tmem.allocations()) held += block.live ? block.ncols : 0;
      fail(pc, w, -1,
           warp + " allocates " + std::to_string(n) + " columns but live allocations hold " +
               std::to_string(held) + " of 512: the alloc blocks forever",
           "R30, PTX ISA §9.7.16.7.1");
    }
    SharedMemory::Word* word = shareds_[static_cast<size_t>(cta)].word(dst);
    if (!word)
      fail(pc, w, -1, "the alloc destination " + hex32(dst) + " is not a word of shared memory",
           "R28");
    const OpRef op = order_.issue(w, OpKind::kAlloc, pc);
    const int block = tmem.add(*column, n, op);
    if (pair) {
      pair->column = *column;
      pair->ncols = n;
      pair->halves[static_cast<size_t>(cta)].alloc = op;
      pair->halves[static_cast<size_t>(cta)].block = block;
    }
    *word = {static_cast<std::uint32_t>(*column), true, w,
             cta_barriers_[static_cast<size_t>(cta)]};  // lane 0 in bits 31:16
  }

  void dealloc(int w, const Instruction& i, int pc) {
    check_cta_group(w, pc, i);
    const std::uint64_t taddr = uniform(w, pc, i.srcs()[0], "the dealloc address");
    const std::uint64_t ncols = uniform(w, pc, i.srcs()[1], "the column count");
    const std::string warp = warp_name(w);
    Tmem& tmem = tmem_of(w);
    if (!legal_ncols(ncols))
      fail(pc, w, -1,
           warp + " deallocates " + std::to_string(ncols) +
               " columns; allowed: 32, 64, 128, 256, 512",
           "R22, PTX ISA §9.7.16.7.1");
    const int index = (taddr >> 16) == 0 ? tmem.block_at(static_cast<int>(taddr & 0xFFFF)) : -1;
    if (index < 0)
      fail(pc, w, -1,
           warp + " deallocates address " + hex32(taddr) + " (lane " + std::to_string(taddr >> 16) +
               ", column " + std::to_string(taddr & 0xFFFF) +
               "), which is not the start of a live allocation",
           "R23, PTX ISA §9.7.16.7.1");
    const Allocation block = tmem.allocations()[static_cast<size_t>(index)];
    if (static_cast<int>(ncols) != block.ncols)
      fail(pc, w, -1,
           warp + " deallocates " + std::to_string(ncols) + " columns of the " +
               std::to_string(block.ncols) + "-column allocation at " + where(block.op.instr),
           "R23, PTX ISA §9.7.16.7.1");
    if (block.op.warp != w)
      fail(pc, w, -1,
           warp + " deallocates columns that " + warp_name(block.op.warp) + " allocated at " +
               where(block.op.instr) + "; the allocating warp frees them",
           "R29, docs/tcgen05-rules.md §Lifecycle");
    PairAllocation* pair = pair_of(cta_of(w), index);
    // The verifier refused a kernel that mixes ::1 and ::2 (R27), so ::2 frees pair blocks only.
    if (pair) {
      check_pair_warp(w, pc, "tcgen05.dealloc.cta_group::2");
      check_peer_allocated(w, pc, *pair, "deallocates");
      // Both halves have the pair's nCols: each equals its own block's (R23 above), and the
      // blocks' were checked equal at the allocs (R29).
      const int peer = 1 - cta_of(w);
      const PairHalf& theirs = pair->halves[static_cast<size_t>(peer)];
      // With ::2 no access of the peer CTA may be outstanding either (docs/tcgen05-rules.md
      // §Lifecycle).
      if (!theirs.dealloc.valid()) check_accesses_done(w, pc, peer, block);
      pair->halves[static_cast<size_t>(cta_of(w))].dealloc = {w, 0, pc};
    }
    check_accesses_done(w, pc, cta_of(w), block);
    tmem.release(index);
  }

  // No access to the block's columns in CTA `cta` may be outstanding, and other warps' accesses
  // must be handed over to warp `w` (R31).
  void check_accesses_done(int w, int pc, int cta, const Allocation& block) {
    const std::string warp = warp_name(w);
    Tmem& tmem = tmems_[static_cast<size_t>(cta)];
    for (int column = block.column; column < block.column + block.ncols; ++column)
      for (int lane = 0; lane < kTmemLanes; ++lane) {
        const Cell& c = tmem.cell(lane, column);
        if (!order_.visible(OpKind::kStore, c.last_store, w))
          fail(pc, w, -1,
               warp + " deallocates " + cell_name(cta, lane, column) + " while the tcgen05.st at " +
                   where(c.last_store.instr) + " by " + warp_name(c.last_store.warp) +
                   " may still be running: " + order_.missing(OpKind::kStore, c.last_store, w),
               "R31, docs/tcgen05-rules.md §Sync");
        for (const OpRef& ld : c.loads)
          if (!order_.visible(OpKind::kLoad, ld, w))
            fail(pc, w, -1,
                 warp + " deallocates " + cell_name(cta, lane, column) +
                     " while the tcgen05.ld at " + where(ld.instr) + " by " + warp_name(ld.warp) +
                     " may still be running: " + order_.missing(OpKind::kLoad, ld, w),
                 "R31, docs/tcgen05-rules.md §Sync");
      }
  }

  std::string cell_name(int cta, int lane, int column) const {
    return (config_.ctas > 1 ? "CTA " + std::to_string(cta) + " " : std::string()) +
           cell_text(lane, column);
  }

  std::string cell_text(int lane, int column) const {
    return "TMEM lane " + std::to_string(lane) + ", column " + std::to_string(column);
  }

  // One tcgen05.ld / tcgen05.st of warp `w`, as its cells are visited.
  struct TmemAccess {
    const Opcode& op;
    bool load;
    int w;
    int pc;
    std::uint32_t taddr;
    std::uint32_t imm;  // the split address's immediate, added by the second access
    OpRef self;
    int slab;  // the first of the 32 TMEM lanes the warp may access
    std::string warp;
    Tmem& tmem;
    int pair_checked = -1;  // the block whose pair was checked last
  };
  // Where one register of one thread meets a TMEM cell.
  struct CellVisit {
    int thread_lane;  // the thread's lane in the warp
    int reg;          // the register's index in the vector
    int lane;         // the TMEM lane
    int column;       // the TMEM column
  };

  // tcgen05.ld / tcgen05.st: the native image (docs/tcgen05-rules.md §Images) at the address in the
  // register.
  void transfer(int w, const Instruction& i, int pc) {
    const Opcode& op = *i.opcode();
    const bool load = i.op() == Op::kTcgen05Ld;
    const auto& operands = load ? i.dsts() : i.srcs();
    const Operand& addr = load ? i.srcs()[0] : i.dsts()[0];
    const int nregs = op.regs_per_thread();
    // ld.red: the vector, then redval (docs/tcgen05-rules.md §Syntax).
    const bool reduces = load && op.reduces();
    check_transfer_registers(w, pc, op, load, operands, addr);
    const std::span<const Operand> regs(operands.data(), static_cast<size_t>(nregs));
    const auto taddr = static_cast<std::uint32_t>(uniform(w, pc, addr, "the TMEM address", true));
    const auto imm =
        static_cast<std::uint32_t>(i.split_imm().value_or(0));  // a 32-bit address add, mod 2^32
    const OpRef self = order_.issue(w, load ? OpKind::kLoad : OpKind::kStore, pc);
    TmemAccess access{.op = op,
                      .load = load,
                      .w = w,
                      .pc = pc,
                      .taddr = taddr,
                      .imm = imm,
                      .self = self,
                      .slab = 32 * (local_warp(w) % 4),
                      .warp = warp_name(w),
                      .tmem = tmem_of(w)};

    std::vector<std::uint32_t> data(static_cast<size_t>(32 * nregs), 0);
    if (!load)
      for (int l = 0; l < 32; ++l)
        for (int r = 0; r < nregs; ++r)
          data[static_cast<size_t>(l * nregs + r)] = static_cast<std::uint32_t>(
              read_reg(32 * w + l, regs[static_cast<size_t>(r)].reg(), pc));

    std::array<TmemCell, 2> cells;
    for (int l = 0; l < 32; ++l)
      for (int r = 0; r < nregs; ++r) {
        const int count = tmem_cells(op, l, r, cells);
        for (int k = 0; k < count; ++k)
          visit_cell(access, l, r, cells[static_cast<size_t>(k)],
                     data[static_cast<size_t>(l * nregs + r)]);
      }
    if (load) write_loaded(w, pc, op, regs, reduces ? &operands.back() : nullptr, data);
  }

  // The register operands of a tcgen05.ld / tcgen05.st: the count the shape needs, and no
  // destination repeated (docs/tcgen05-rules.md §Syntax).
  void check_transfer_registers(int w, int pc, const Opcode& op, bool load,
                                const std::vector<Operand>& operands, const Operand& addr) const {
    const int nregs = op.regs_per_thread();
    const bool reduces = load && op.reduces();
    if (static_cast<int>(operands.size()) != nregs + (reduces ? 1 : 0))
      fail(pc, w, -1,
           op.to_string() + " needs " + std::to_string(nregs) + " registers" +
               (reduces ? " and redval" : ""),
           reduces ? "R14" : "R5");
    const std::span<const Operand> regs(operands.data(), static_cast<size_t>(nregs));
    if (reduces && (operands.back().reg() == addr.reg() ||
                    std::any_of(regs.begin(), regs.end(), [&](const Operand& r) {
                      return r.reg() == operands.back().reg();
                    })))
      fail(pc, w, -1,
           "redval " + operands.back().reg().name() +
               " is also a destination of the vector or the TMEM address register",
           "R13");
    if (!load) return;
    // R13 (policy): the meaning of a repeated destination is not defined
    for (size_t a = 0; a < regs.size(); ++a) {
      if (regs[a].reg() == addr.reg())
        fail(pc, w, -1,
             "destination " + regs[a].reg().name() + " is also the TMEM address register", "R13");
      for (size_t b = a + 1; b < regs.size(); ++b)
        if (regs[a].reg() == regs[b].reg())
          fail(pc, w, -1, "destination " + regs[a].reg().name() + " appears twice in the vector",
               "R13");
    }
  }

  // One cell of the access: the address rules first (R16, R17, R19, R31), then the move.
  void visit_cell(TmemAccess& access, int thread_lane, int reg, const TmemCell& at,
                  std::uint32_t& word) {
    const std::uint32_t base = at.access ? access.taddr + access.imm : access.taddr;
    const CellVisit visit{thread_lane, reg, static_cast<int>(base >> 16) + at.row,
                          static_cast<int>(base & 0xFFFF) + at.col};
    Cell& c = checked_cell(access, visit);
    if (access.load)
      load_cell(access, visit, c, at.half, word);
    else
      store_cell(access, visit, c, at.half, word);
  }

  // Built only on failure: the cell loop runs for every cell of every access.
  [[noreturn]] void fail_cell(const TmemAccess& access, const CellVisit& visit,
                              const std::string& what, const std::string& rule) const {
    fail(access.pc, access.w, 32 * access.w + visit.thread_lane,
         access.warp + " lane " + std::to_string(visit.thread_lane) + " register " +
             std::to_string(visit.reg) + what,
         rule);
  }

  // The cell, once the warp may touch it: inside TMEM and its lane slab, allocated, and the alloc
  // (and a cta_group::2 peer's) handed over to the warp.
  Cell& checked_cell(TmemAccess& access, const CellVisit& visit) {
    const int w = access.w;
    if (visit.lane >= kTmemLanes || visit.column >= kTmemColumns)
      fail_cell(access, visit,
                " addresses " + cell_text(visit.lane, visit.column) +
                    ", outside the 128 lanes x 512 columns of TMEM",
                "R16, PTX ISA §9.7.16.1");
    if (visit.lane < access.slab || visit.lane >= access.slab + 32)
      fail_cell(access, visit,
                " addresses " + cell_text(visit.lane, visit.column) + ", but " + access.warp +
                    " may only access lanes " + std::to_string(access.slab) + ".." +
                    std::to_string(access.slab + 31),
                "R17, PTX ISA §9.7.16.8.1");
    const int block = access.tmem.live_block(visit.column);
    if (block < 0)
      fail_cell(access, visit,
                " addresses " + cell_text(visit.lane, visit.column) + ", which is not allocated",
                "R19, PTX ISA §9.7.16.1.2");
    const Allocation& a = access.tmem.allocations()[static_cast<size_t>(block)];
    if (!order_.visible(OpKind::kAlloc, a.op, w))
      fail_cell(access, visit,
                " addresses " + cell_text(visit.lane, visit.column) +
                    " of the allocation made at " + where(a.op.instr) +
                    " before it is handed over: " + order_.missing(OpKind::kAlloc, a.op, w),
                "R31, docs/tcgen05-rules.md §Sync");
    if (block != access.pair_checked && config_.ctas > 1) {
      if (const PairAllocation* pair = pair_of(cta_of(w), block))
        check_peer_allocated(w, access.pc, *pair, access.load ? "reads" : "writes");
      access.pair_checked = block;
    }
    return access.tmem.cell(visit.lane, visit.column);
  }

  // tcgen05.ld of one cell into `word`; `half` >= 0: pack::16b, the cell's low half into that half.
  void load_cell(const TmemAccess& access, const CellVisit& visit, Cell& c, int half,
                 std::uint32_t& word) {
    const int w = access.w;
    if (!order_.visible(OpKind::kStore, c.last_store, w))
      fail_cell(access, visit,
                " reads " + cell_text(visit.lane, visit.column) + ", which the tcgen05.st at " +
                    where(c.last_store.instr) + " by " + warp_name(c.last_store.warp) +
                    " wrote: " + order_.missing(OpKind::kStore, c.last_store, w),
                "R31, PTX ISA §9.7.16.6");
    auto mine =
        std::find_if(c.loads.begin(), c.loads.end(), [&](const OpRef& o) { return o.warp == w; });
    if (mine == c.loads.end())
      c.loads.push_back(access.self);
    else
      *mine = access.self;
    if (half < 0)
      word = c.value;
    else
      word |= (c.value & 0xFFFFu) << (16 * half);  // pack::16b: the low half of the cell
  }

  // tcgen05.st of `word` into one cell; `half` >= 0: unpack::16b, that half into the low half.
  void store_cell(const TmemAccess& access, const CellVisit& visit, Cell& c, int half,
                  std::uint32_t word) {
    const int w = access.w;
    if (c.last_store.warp == w && c.last_store.seq == access.self.seq)
      fail_cell(access, visit,
                " writes " + cell_text(visit.lane, visit.column) +
                    ", which this instruction already wrote " +
                    "(the two accesses of 16x32bx2 overlap)",
                "R20");
    if (!order_.visible(OpKind::kStore, c.last_store, w))
      fail_cell(access, visit,
                " overwrites " + cell_text(visit.lane, visit.column) +
                    ", which the tcgen05.st at " + where(c.last_store.instr) + " by " +
                    warp_name(c.last_store.warp) +
                    " wrote: " + order_.missing(OpKind::kStore, c.last_store, w),
                "R31, PTX ISA §9.7.16.6");
    for (const OpRef& ld : c.loads)
      if (!order_.visible(OpKind::kLoad, ld, w))
        fail_cell(access, visit,
                  " overwrites " + cell_text(visit.lane, visit.column) +
                      ", which the tcgen05.ld at " + where(ld.instr) + " by " + warp_name(ld.warp) +
                      " reads: " + order_.missing(OpKind::kLoad, ld, w),
                  "R31, PTX ISA §9.7.16.6");
    c.loads.clear();
    c.last_store = access.self;
    if (half < 0) {
      c.value = word;
      c.upper_unspecified = false;
      return;
    }
    // unpack::16b defines the low 16 bits only (docs/tcgen05-rules.md §Packing); the upper half
    // gets junk so that nothing can rely on it.
    const std::uint32_t junk =
        (static_cast<std::uint32_t>(visit.lane * 512 + visit.column) * 0x9E37u + access.self.seq) &
        0xFFFFu;
    c.value = (junk << 16) | ((word >> (16 * half)) & 0xFFFFu);
    c.upper_unspecified = true;
  }

  // The loaded vector into each lane's registers, pending until tcgen05.wait::ld; `redval`, when
  // not null, gets the ld.red min/max over the lane's values (docs/tcgen05-rules.md §Targets).
  void write_loaded(int w, int pc, const Opcode& op, std::span<const Operand> regs,
                    const Operand* redval, const std::vector<std::uint32_t>& data) {
    const auto nregs = regs.size();
    for (int l = 0; l < 32; ++l) {
      for (size_t r = 0; r < nregs; ++r)
        write_reg(32 * w + l, regs[r].reg(), data[static_cast<size_t>(l) * nregs + r], pc, pc);
      if (redval)
        write_reg(32 * w + l, redval->reg(),
                  *reduce(*op.reduction(), std::span<const std::uint32_t>(data).subspan(
                                               static_cast<size_t>(l) * nregs, nregs)),
                  pc, pc);
    }
  }

  const ptx::Module& module_;
  const ptx::Function& f_;
  const std::vector<Instruction>& body_;
  const Config& config_;
  std::span<const std::uint64_t> params_;
  GlobalMemory& global_;
  std::vector<std::string> lines_;  // printed PTX of each body instruction
  std::vector<int> line_numbers_;   // its 1-based line in the printed module
  int warps_per_cta_;
  int warps_;  // of the whole cluster: warp w is warp w % warps_per_cta_ of CTA w / warps_per_cta_
  AsyncOrder order_;
  std::vector<Tmem> tmems_;            // per CTA
  std::vector<SharedMemory> shareds_;  // per CTA
  std::vector<int> cta_barriers_;      // barriers each CTA completed (shared-memory races)
  std::vector<Thread> threads_;        // thread t is thread t % threads of CTA t / threads
  std::vector<WarpState> warp_state_;
  std::vector<PairAllocation> pairs_;     // cta_group::2 allocations in order
  std::array<int, 2> pair_halves_{};      // alloc::2 halves each CTA issued
  std::array<int, 2> pair_warp_{-1, -1};  // the warp of each CTA that issues its ::2 lifecycle
  int cluster_arrivals_ = 0;              // warps arrived at the current cluster phase
  int cluster_phases_ = 0;                // cluster barrier phases completed
  std::map<std::string, size_t> param_index_;
  std::map<std::string, std::uint32_t> shared_address_;
  std::map<std::string, int> labels_;
  std::vector<int> branch_target_;
  size_t reg_count_[3] = {0, 0, 0};
  std::vector<std::uint64_t> values_[3];
  std::vector<std::int32_t> state_[3];
  std::uint64_t executed_ = 0;
};

}  // namespace

Status run_kernel(const ptx::Module& module, std::string_view entry, const Config& config,
                  std::span<const std::uint64_t> params, GlobalMemory& memory) {
  if (config.threads < 32 || config.threads > 1024 || config.threads % 32 != 0)
    return Error(ErrorCode::kUsage,
                 "sim: a CTA of " + std::to_string(config.threads) +
                     " threads; the simulator runs whole warps, 32..1024 threads");
  if (config.ctas != 1 && config.ctas != 2)
    return Error(ErrorCode::kUsage, "sim: a cluster of " + std::to_string(config.ctas) +
                                        " CTAs; the simulator runs 1, or 2 (a cta_group::2 pair)");
  const ptx::Function* function = nullptr;
  int entries = 0;
  for (const ptx::Function& f : module.functions()) {
    if (f.kind() != ptx::Function::Kind::kEntry) continue;
    ++entries;
    if (entry.empty() || f.name() == entry) function = function ? function : &f;
  }
  if (!function || (entry.empty() && entries != 1))
    return Error(ErrorCode::kUsage,
                 entry.empty() ? "sim: the module has " + std::to_string(entries) +
                                     " entries; name the one to run"
                               : "sim: the module has no entry '" + std::string(entry) + "'");
  // The printed PTX gives every error its line: each body instruction prints as one line, and the
  // body ends right before the function's closing brace.
  Result<std::string> text = ptx::print(module);
  if (!text) return std::move(text).error();
  std::vector<std::string> all;
  {
    std::istringstream in(*text);
    for (std::string line; std::getline(in, line);) all.push_back(line);
  }
  const std::string header = ".visible .entry " + function->name() + "(";
  size_t close = 0;
  for (size_t k = 0; k < all.size(); ++k) {
    if (all[k] != header) continue;
    close = k;
    while (close < all.size() && all[close] != "}") ++close;
    break;
  }
  const size_t n = function->body().size();
  if (close >= all.size() || close < n)
    return Error(ErrorCode::kInternal,
                 "sim: cannot find the body of " + function->name() + " in the printed PTX");
  std::vector<std::string> lines(all.begin() + static_cast<long>(close - n),
                                 all.begin() + static_cast<long>(close));
  std::vector<int> numbers(n);
  for (size_t k = 0; k < n; ++k) numbers[k] = static_cast<int>(close - n + k + 1);
  Interpreter interpreter(module, *function, config, params, memory, std::move(lines),
                          std::move(numbers));
  return interpreter.run();
}

}  // namespace tmem::sim
