// The PTX IR: factories, register/label bookkeeping and the verifier that guards the printer.
#include "runtime/ptx/ir.h"

#include <algorithm>
#include <set>
#include <utility>

namespace tmem::ptx {
namespace {

RegClass class_of(Type type) {
  switch (type) {
    case Type::kB64:
    case Type::kU64:
    case Type::kS64:
      return RegClass::kB64;
    case Type::kPred:
      return RegClass::kPred;
    default:
      return RegClass::kB32;
  }
}

bool is_identifier(const std::string& name) {
  if (name.empty()) return false;
  auto follow = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$';
  };
  const char first = name[0];
  const bool letter = (first >= 'a' && first <= 'z') || (first >= 'A' && first <= 'Z');
  if (!letter && !(first == '_' || first == '$')) return false;
  if (!letter && name.size() < 2) return false;
  return std::all_of(name.begin() + 1, name.end(), follow);
}

bool legal_ncols(std::int64_t n) { return n == 32 || n == 64 || n == 128 || n == 256 || n == 512; }

}  // namespace

// ---- names ------------------------------------------------------------------------------------

std::string Reg::name() const {
  switch (cls) {
    case RegClass::kB32:
      return "%r" + std::to_string(index);
    case RegClass::kB64:
      return "%rd" + std::to_string(index);
    case RegClass::kPred:
      return "%p" + std::to_string(index);
  }
  return "%?";
}

int type_bits(Type type) noexcept {
  switch (class_of(type)) {
    case RegClass::kB64:
      return 64;
    case RegClass::kPred:
      return 1;
    default:
      return 32;
  }
}

PtxVersion default_ptx_version(Target target) noexcept {
  if (target == Target::kSm90) return min_ptx_version(target);  // emulation: no tcgen05
  return std::max(PtxVersion{8, 6}, min_ptx_version(target));
}

// ---- operands ---------------------------------------------------------------------------------

Operand Operand::imm(std::int64_t value) {
  Operand o;
  o.kind_ = Kind::kImm;
  o.imm_ = value;
  return o;
}

Operand Operand::symbol(std::string name) {
  Operand o;
  o.kind_ = Kind::kSymbol;
  o.symbol_ = std::move(name);
  return o;
}

Operand Operand::special(SpecialReg reg) {
  Operand o;
  o.kind_ = Kind::kSpecial;
  o.special_ = reg;
  return o;
}

Operand Operand::addr(Reg base, std::int64_t offset) {
  Operand o;
  o.kind_ = Kind::kAddress;
  o.reg_ = base;
  o.imm_ = offset;
  return o;
}

Operand Operand::addr(std::string symbol, std::int64_t offset) {
  Operand o;
  o.kind_ = Kind::kAddress;
  o.symbol_ = std::move(symbol);
  o.imm_ = offset;
  return o;
}

// ---- instruction factories --------------------------------------------------------------------

Instruction Instruction::mov(Type type, Reg dst, Operand src) {
  Instruction i(Op::kMov);
  i.type_ = type;
  i.dsts_ = {dst};
  i.srcs_ = {std::move(src)};
  return i;
}

Instruction Instruction::ld_param(Type type, Reg dst, std::string param) {
  Instruction i(Op::kLdParam);
  i.type_ = type;
  i.dsts_ = {dst};
  i.srcs_ = {Operand::addr(std::move(param))};
  return i;
}

Instruction Instruction::st_param(Type type, std::string param, Reg src, std::int64_t offset) {
  Instruction i(Op::kStParam);
  i.type_ = type;
  i.dsts_ = {Operand::addr(std::move(param), offset)};
  i.srcs_ = {src};
  return i;
}

Instruction Instruction::cvta_to_global(Reg dst, Reg src) {
  Instruction i(Op::kCvtaToGlobal);
  i.type_ = Type::kU64;
  i.dsts_ = {dst};
  i.srcs_ = {src};
  return i;
}

Instruction Instruction::binary(Op op, Type type, Reg dst, Operand a, Operand b) {
  Instruction i(op);
  i.type_ = type;
  i.dsts_ = {dst};
  i.srcs_ = {std::move(a), std::move(b)};
  return i;
}

Instruction Instruction::add(Type type, Reg dst, Operand a, Operand b) {
  return binary(Op::kAdd, type, dst, std::move(a), std::move(b));
}

Instruction Instruction::mul_lo(Type type, Reg dst, Operand a, Operand b) {
  return binary(Op::kMulLo, type, dst, std::move(a), std::move(b));
}

Instruction Instruction::min(Type type, Reg dst, Operand a, Operand b, bool nan) {
  Instruction i = binary(Op::kMin, type, dst, std::move(a), std::move(b));
  i.int_arg_ = nan ? 1 : 0;
  return i;
}

Instruction Instruction::max(Type type, Reg dst, Operand a, Operand b, bool nan) {
  Instruction i = binary(Op::kMax, type, dst, std::move(a), std::move(b));
  i.int_arg_ = nan ? 1 : 0;
  return i;
}

Instruction Instruction::abs_f32(Reg dst, Operand a) {
  Instruction i(Op::kAbs);
  i.type_ = Type::kF32;
  i.dsts_ = {dst};
  i.srcs_ = {std::move(a)};
  return i;
}

Instruction Instruction::mul_wide(Type type, Reg dst, Operand a, Operand b) {
  return binary(Op::kMulWide, type, dst, std::move(a), std::move(b));
}

Instruction Instruction::shl(Type type, Reg dst, Operand a, Operand b) {
  return binary(Op::kShl, type, dst, std::move(a), std::move(b));
}

Instruction Instruction::shr(Type type, Reg dst, Operand a, Operand b) {
  return binary(Op::kShr, type, dst, std::move(a), std::move(b));
}

Instruction Instruction::bit_and(Type type, Reg dst, Operand a, Operand b) {
  return binary(Op::kAnd, type, dst, std::move(a), std::move(b));
}

Instruction Instruction::bit_or(Type type, Reg dst, Operand a, Operand b) {
  return binary(Op::kOr, type, dst, std::move(a), std::move(b));
}

Instruction Instruction::setp(Cmp cmp, Type type, Reg dst, Operand a, Operand b) {
  Instruction i = add(type, dst, std::move(a), std::move(b));
  i.op_ = Op::kSetp;
  i.cmp_ = cmp;
  return i;
}

Instruction Instruction::bra(const Label& target, std::optional<Reg> guard, bool negate,
                             bool uniform) {
  Instruction i(Op::kBra);
  i.text_ = target.name;
  i.guard_ = guard;
  i.guard_negated_ = guard.has_value() && negate;
  i.int_arg_ = uniform ? 1 : 0;
  return i;
}

Instruction Instruction::bar_sync(int barrier) {
  Instruction i(Op::kBarSync);
  i.int_arg_ = barrier;
  return i;
}

Instruction Instruction::ld_global(std::vector<Reg> dst, Operand addr) {
  Instruction i(Op::kLdGlobal);
  i.type_ = Type::kB32;
  i.dsts_.assign(dst.begin(), dst.end());
  i.srcs_ = {std::move(addr)};
  return i;
}

Instruction Instruction::st_global(Operand addr, std::vector<Reg> src) {
  Instruction i(Op::kStGlobal);
  i.type_ = Type::kB32;
  i.dsts_ = {std::move(addr)};
  i.srcs_.assign(src.begin(), src.end());
  return i;
}

Instruction Instruction::ld_shared(Reg dst, Operand addr) {
  Instruction i(Op::kLdShared);
  i.type_ = Type::kU32;
  i.dsts_ = {dst};
  i.srcs_ = {std::move(addr)};
  return i;
}

Instruction Instruction::st_shared(Operand addr, Reg src) {
  Instruction i(Op::kStShared);
  i.type_ = Type::kU32;
  i.dsts_ = {std::move(addr)};
  i.srcs_ = {src};
  return i;
}

Instruction Instruction::ret() { return Instruction(Op::kRet); }

Instruction Instruction::tcgen05_alloc(Operand dst_smem, Operand ncols, int cta_group) {
  Instruction i(Op::kTcgen05Alloc);
  i.dsts_ = {std::move(dst_smem)};
  i.srcs_ = {std::move(ncols)};
  i.int_arg_ = cta_group;
  return i;
}

Instruction Instruction::tcgen05_dealloc(Reg taddr, Operand ncols, int cta_group) {
  Instruction i(Op::kTcgen05Dealloc);
  i.srcs_ = {taddr, std::move(ncols)};
  i.int_arg_ = cta_group;
  return i;
}

Instruction Instruction::tcgen05_relinquish(int cta_group) {
  Instruction i(Op::kTcgen05Relinquish);
  i.int_arg_ = cta_group;
  return i;
}

Instruction Instruction::tcgen05_wait_ld() { return Instruction(Op::kTcgen05WaitLd); }
Instruction Instruction::tcgen05_wait_st() { return Instruction(Op::kTcgen05WaitSt); }
Instruction Instruction::tcgen05_fence_before() { return Instruction(Op::kTcgen05FenceBefore); }
Instruction Instruction::tcgen05_fence_after() { return Instruction(Op::kTcgen05FenceAfter); }

Instruction Instruction::tcgen05_ld(const Opcode& opcode, std::vector<Reg> regs, Reg taddr,
                                    std::optional<std::int64_t> imm) {
  Instruction i(Op::kTcgen05Ld);
  i.opcode_ = opcode;
  i.dsts_.assign(regs.begin(), regs.end());
  i.srcs_ = {Operand::addr(taddr)};
  i.imm_ = imm;
  return i;
}

Instruction Instruction::tcgen05_ld_red(const Opcode& opcode, std::vector<Reg> regs, Reg redval,
                                        Reg taddr, std::optional<std::int64_t> imm) {
  Instruction i = tcgen05_ld(opcode, std::move(regs), taddr, imm);
  i.dsts_.push_back(redval);
  return i;
}

Instruction Instruction::tcgen05_st(const Opcode& opcode, Reg taddr, std::vector<Reg> regs,
                                    std::optional<std::int64_t> imm) {
  Instruction i(Op::kTcgen05St);
  i.opcode_ = opcode;
  i.dsts_ = {Operand::addr(taddr)};
  i.srcs_.assign(regs.begin(), regs.end());
  i.imm_ = imm;
  return i;
}

Instruction Instruction::membar_cta() { return Instruction(Op::kMembarCta); }
Instruction Instruction::cluster_arrive() { return Instruction(Op::kClusterArrive); }
Instruction Instruction::cluster_wait() { return Instruction(Op::kClusterWait); }
Instruction Instruction::bar_warp_sync() { return Instruction(Op::kBarWarpSync); }

Instruction Instruction::comment(std::string text) {
  Instruction i(Op::kComment);
  i.text_ = std::move(text);
  return i;
}

Instruction Instruction::unchecked_raw(std::string text) {
  Instruction i(Op::kUncheckedRaw);
  i.text_ = std::move(text);
  return i;
}

Instruction& Instruction::guarded(Reg pred, bool negate) {
  guard_ = pred;
  guard_negated_ = negate;
  return *this;
}

// ---- functions and modules --------------------------------------------------------------------

const std::string& Function::add_param(Type type, std::string name) {
  params_.push_back({type, std::move(name)});
  return params_.back().name;
}

const std::string& Function::add_return_param(Param param) {
  return_params_.push_back(std::move(param));
  return return_params_.back().name;
}

Reg Function::new_reg(RegClass cls) { return Reg{cls, reg_counts_[static_cast<int>(cls)]++}; }

std::vector<Reg> Function::new_regs(RegClass cls, int count) {
  std::vector<Reg> regs;
  regs.reserve(static_cast<size_t>(std::max(count, 0)));
  for (int k = 0; k < count; ++k) regs.push_back(new_reg(cls));
  return regs;
}

Label Function::new_label(const std::string& hint) {
  Label label;
  label.index = label_count_++;
  label.name = "$L_" + std::to_string(label.index);
  if (!hint.empty()) label.name += "_" + hint;
  return label;
}

void Function::place(const Label& label) {
  Instruction i(Op::kLabel);
  i.text_ = label.name;
  body_.push_back(std::move(i));
}

Instruction& Function::emit(Instruction instruction) {
  body_.push_back(std::move(instruction));
  return body_.back();
}

const std::string& Module::add_shared(std::string name, int align, int count) {
  shared_.push_back({std::move(name), align, count});
  return shared_.back().name;
}

Function& Module::add_function(Function::Kind kind, std::string name) {
  functions_.emplace_back(kind, std::move(name));
  return functions_.back();
}

// ---- verification -----------------------------------------------------------------------------

namespace {

// Checks one function; `where` prefixes every message with the function and instruction index.
class FunctionVerifier {
 public:
  FunctionVerifier(const Module& module, const Function& function)
      : module_(module), function_(function) {}

  std::optional<Error> run() {
    if (!is_identifier(function_.name()))
      return internal("function name '" + function_.name() + "' is not a PTX identifier");
    std::set<std::string> names;
    if (function_.kind() == Function::Kind::kEntry && !function_.return_params().empty())
      return internal("an .entry has no return parameters");
    for (const auto* list : {&function_.params(), &function_.return_params()})
      for (const Param& p : *list) {
        if (!is_identifier(p.name))
          return internal("parameter '" + p.name + "' is not an identifier");
        if (p.array_bytes == 0 && p.type == Type::kPred)
          return internal("parameter '" + p.name + "' has type pred");
        if (p.array_bytes < 0 || (p.array_bytes > 0 && (p.align < 1 || (p.align & (p.align - 1)))))
          return internal("parameter '" + p.name + "' needs a size >= 0 and a power-of-two align");
        if (!names.insert(p.name).second) return internal("parameter '" + p.name + "' is repeated");
      }
    std::set<std::string> labels;
    for (const Instruction& i : function_.body())
      if (i.op() == Op::kLabel && !labels.insert(i.text()).second)
        return internal("label " + i.text() + " is defined twice");
    for (size_t k = 0; k < function_.body().size(); ++k) {
      index_ = k;
      const Instruction& i = function_.body()[k];
      if (i.op() == Op::kUncheckedRaw) continue;
      if (i.guard() && !reg_ok(*i.guard(), RegClass::kPred)) return bad("guard is not a predicate");
      if (i.op() == Op::kBra && !labels.count(i.text()))
        return bad("branch to undefined label " + i.text());
      if (auto error = check_target(i)) return error;
      if (auto error = check(i)) return error;
    }
    return std::nullopt;
  }

 private:
  std::optional<Error> internal(const std::string& message) const {
    return Error(ErrorCode::kInternal, "ptx ir: " + function_.name() + ": " + message);
  }
  std::optional<Error> bad(const std::string& message) const {
    return Error(ErrorCode::kInternal, "ptx ir: " + function_.name() + ": instruction " +
                                           std::to_string(index_) + ": " + message);
  }

  bool reg_ok(const Reg& r, RegClass cls) const {
    return r.cls == cls && r.index >= 0 && r.index < function_.reg_count(cls);
  }
  bool operand_is(const Operand& o, RegClass cls, bool imm_ok) const {
    if (o.kind() == Operand::Kind::kImm) return imm_ok;
    return o.kind() == Operand::Kind::kReg && reg_ok(o.reg(), cls);
  }
  bool shared_declared(const std::string& name) const {
    const auto& vars = module_.shared_vars();
    return std::any_of(vars.begin(), vars.end(),
                       [&](const SharedVar& v) { return v.name == name; });
  }
  bool param_declared(const std::string& name) const {
    const auto& ps = function_.params();
    return std::any_of(ps.begin(), ps.end(),
                       [&](const Param& p) { return p.name == name && p.array_bytes == 0; });
  }
  const Param* return_param(const std::string& name) const {
    for (const Param& p : function_.return_params())
      if (p.name == name) return &p;
    return nullptr;
  }
  // [reg] with a register of one of the classes, or [shared symbol] when symbol_ok.
  bool address_is(const Operand& o, std::initializer_list<RegClass> classes, bool symbol_ok) const {
    if (o.kind() != Operand::Kind::kAddress) return false;
    if (!o.symbol_name().empty()) return symbol_ok && shared_declared(o.symbol_name());
    return std::any_of(classes.begin(), classes.end(),
                       [&](RegClass c) { return reg_ok(o.reg(), c); });
  }
  bool all_b32(const std::vector<Operand>& ops) const {
    return std::all_of(ops.begin(), ops.end(),
                       [&](const Operand& o) { return operand_is(o, RegClass::kB32, false); });
  }
  bool ncols_ok(const Operand& o) const {
    if (o.kind() == Operand::Kind::kImm) return legal_ncols(o.imm_value());
    return operand_is(o, RegClass::kB32, false);
  }

  std::optional<Error> check_cta_group(const Instruction& i) {
    const int group = static_cast<int>(i.int_arg());
    if (group != 1 && group != 2)
      return bad("cta_group must be 1 or 2, got " + std::to_string(group));
    // R27: ptxas refuses the mix per function ("uses single CTA(.cta_group::1) and CTA pair
    // granularity(.cta_group::2)"); say so before it does, naming both instructions.
    if (cta_group_ != 0 && cta_group_ != group)
      return Error(ErrorCode::kRule,
                   "ptx: " + function_.name() + " mixes .cta_group::" + std::to_string(cta_group_) +
                       " (instruction " + std::to_string(cta_group_index_) + ") and .cta_group::" +
                       std::to_string(group) + " (instruction " + std::to_string(index_) +
                       "); all tcgen05 instructions of a kernel use one .cta_group")
          .set_rule(Rule::kOneCtaGroupPerKernel);
    if (cta_group_ == 0) cta_group_index_ = index_;
    cta_group_ = group;
    return std::nullopt;
  }

  // tcgen05 instructions other than ld/st (which check_tcgen05 names with their opcode) on a
  // target without tcgen05 (sm_90, the emulation target).
  std::optional<Error> check_target(const Instruction& i) const {
    const char* mnemonic = nullptr;
    switch (i.op()) {
      case Op::kTcgen05Alloc:
        mnemonic = "tcgen05.alloc";
        break;
      case Op::kTcgen05Dealloc:
        mnemonic = "tcgen05.dealloc";
        break;
      case Op::kTcgen05Relinquish:
        mnemonic = "tcgen05.relinquish_alloc_permit";
        break;
      case Op::kTcgen05WaitLd:
        mnemonic = "tcgen05.wait::ld";
        break;
      case Op::kTcgen05WaitSt:
        mnemonic = "tcgen05.wait::st";
        break;
      case Op::kTcgen05FenceBefore:
        mnemonic = "tcgen05.fence::before_thread_sync";
        break;
      case Op::kTcgen05FenceAfter:
        mnemonic = "tcgen05.fence::after_thread_sync";
        break;
      default:
        return std::nullopt;
    }
    const auto targets = all_targets();
    if (std::find(targets.begin(), targets.end(), module_.target()) != targets.end())
      return std::nullopt;
    return Error(ErrorCode::kTarget, std::string(mnemonic) + " cannot run on target " +
                                         std::string(to_string(module_.target())) +
                                         "; tcgen05 runs on: sm_100a, sm_100f, sm_103a, sm_103f, "
                                         "sm_110a, sm_110f")
        .set_rule(Rule::kTargetAndVersion);
  }

  std::optional<Error> check_tcgen05(const Instruction& i) {
    const Opcode& opcode = *i.opcode();
    const bool load = i.op() == Op::kTcgen05Ld;
    if (opcode.is_load() != load)
      return bad("opcode " + opcode.to_string() + " used as tcgen05." + (load ? "ld" : "st"));
    const auto& regs = load ? i.dsts() : i.srcs();
    const auto& addr = load ? i.srcs() : i.dsts();
    // ld.red: the vector, then redval (one 32-bit register, rule R14).
    const int want = opcode.regs_per_thread() + (opcode.reduces() ? 1 : 0);
    if (static_cast<int>(regs.size()) != want)
      return bad(opcode.to_string() + " needs " + std::to_string(opcode.regs_per_thread()) +
                 " registers" + (opcode.reduces() ? " and redval" : "") + ", got " +
                 std::to_string(regs.size()));
    if (!all_b32(regs)) return bad(opcode.to_string() + " needs 32-bit registers");
    if (addr.size() != 1 || !address_is(addr[0], {RegClass::kB32}, false) ||
        addr[0].imm_value() != 0)
      return bad("the tmem address must be a 32-bit register in brackets (rule R12)");
    if (opcode.is_split() != i.split_imm().has_value())
      return bad(opcode.is_split() ? "16x32bx2 needs immHalfSplitoff (rule R9)"
                                   : "only 16x32bx2 takes an immediate (rule R9)");
    const Target target = module_.target();
    if (!opcode.supports(target)) return opcode.unsupported_target_error(target);
    const PtxVersion need = opcode.min_ptx_version(target);
    if (module_.version() < need)
      return Error(ErrorCode::kTarget, opcode.to_string() + " on " +
                                           std::string(to_string(target)) + " needs .version " +
                                           need.to_string() + ", the module has " +
                                           module_.version().to_string())
          .set_rule(opcode.reduces() ? Rule::kLoadReduceForm : Rule::kTargetAndVersion);
    return std::nullopt;
  }

  std::optional<Error> check(const Instruction& i) {
    switch (i.op()) {
      case Op::kMov:
        return check_mov(i);
      case Op::kLdParam:
        return check_ld_param(i);
      case Op::kStParam:
        return check_st_param(i);
      case Op::kCvtaToGlobal:
      case Op::kAbs:
        return check_unary(i);
      case Op::kAdd:
      case Op::kMulLo:
      case Op::kMulWide:
      case Op::kSetp:
        return check_arithmetic(i);
      case Op::kMin:
      case Op::kMax:
        return check_min_max(i);
      case Op::kAnd:
      case Op::kOr:
      case Op::kShl:
      case Op::kShr:
        return check_bitwise(i);
      case Op::kLdGlobal:
      case Op::kStGlobal:
        return check_global(i);
      case Op::kLdShared:
      case Op::kStShared:
        return check_shared(i);
      case Op::kTcgen05Alloc:
        return check_alloc(i);
      case Op::kTcgen05Dealloc:
        return check_dealloc(i);
      case Op::kTcgen05Relinquish:
        return check_cta_group(i);
      case Op::kTcgen05Ld:
      case Op::kTcgen05St:
        return check_tcgen05(i);
      default:
        return check_control(i);
    }
  }

  std::optional<Error> check_mov(const Instruction& i) const {
    const RegClass cls = class_of(i.type());
    if (!reg_ok(i.dsts()[0].reg(), cls)) return bad("mov destination does not match its type");
    const Operand& src = i.srcs()[0];
    if (src.kind() == Operand::Kind::kSpecial && cls != RegClass::kB32)
      return bad("special registers are read with a 32-bit mov");
    if (src.kind() == Operand::Kind::kSymbol &&
        (cls == RegClass::kPred || !shared_declared(src.symbol_name())))
      return bad("mov of undeclared symbol '" + src.symbol_name() + "'");
    if (src.kind() == Operand::Kind::kReg && !reg_ok(src.reg(), cls))
      return bad("mov source does not match its type");
    if (src.kind() == Operand::Kind::kAddress) return bad("mov takes no address");
    return std::nullopt;
  }

  std::optional<Error> check_ld_param(const Instruction& i) const {
    const RegClass cls = class_of(i.type());
    if (cls == RegClass::kPred || !reg_ok(i.dsts()[0].reg(), cls))
      return bad("ld.param destination");
    if (!param_declared(i.srcs()[0].symbol_name()))
      return bad("ld.param of unknown parameter '" + i.srcs()[0].symbol_name() + "'");
    return std::nullopt;
  }

  std::optional<Error> check_st_param(const Instruction& i) const {
    const RegClass cls = class_of(i.type());
    const Operand& dst = i.dsts()[0];
    const Param* p = return_param(dst.symbol_name());
    if (p == nullptr)
      return bad("st.param to '" + dst.symbol_name() + "', which is no return parameter");
    if (cls == RegClass::kPred || !operand_is(i.srcs()[0], cls, false))
      return bad("st.param source does not match its type");
    const std::int64_t bytes = type_bits(i.type()) / 8;
    const bool fits = p->array_bytes > 0 ? dst.imm_value() >= 0 && dst.imm_value() % bytes == 0 &&
                                               dst.imm_value() + bytes <= p->array_bytes
                                         : dst.imm_value() == 0 && class_of(p->type) == cls;
    if (!fits) return bad("st.param writes outside return parameter '" + p->name + "'");
    return std::nullopt;
  }

  std::optional<Error> check_unary(const Instruction& i) const {
    const auto& d = i.dsts();
    const auto& s = i.srcs();
    if (i.op() == Op::kCvtaToGlobal) {
      if (!reg_ok(d[0].reg(), RegClass::kB64) || !operand_is(s[0], RegClass::kB64, false))
        return bad("cvta.to.global needs 64-bit registers");
      return std::nullopt;
    }
    if (!reg_ok(d[0].reg(), RegClass::kB32) || !operand_is(s[0], RegClass::kB32, false))
      return bad("abs.f32 takes 32-bit registers");
    return std::nullopt;
  }

  std::optional<Error> check_arithmetic(const Instruction& i) const {
    const RegClass cls = class_of(i.type());
    const auto& d = i.dsts();
    const auto& s = i.srcs();
    switch (i.op()) {
      case Op::kAdd:
      case Op::kMulLo:
        if (cls == RegClass::kPred || !reg_ok(d[0].reg(), cls) || !operand_is(s[0], cls, true) ||
            !operand_is(s[1], cls, true))
          return bad("arithmetic operands do not match the type");
        return std::nullopt;
      case Op::kMulWide:
        if (cls != RegClass::kB32 || !reg_ok(d[0].reg(), RegClass::kB64) ||
            !operand_is(s[0], RegClass::kB32, true) || !operand_is(s[1], RegClass::kB32, true))
          return bad("mul.wide takes 32-bit sources and a 64-bit destination");
        return std::nullopt;
      default:  // kSetp
        if (cls == RegClass::kPred || !reg_ok(d[0].reg(), RegClass::kPred) ||
            !operand_is(s[0], cls, true) || !operand_is(s[1], cls, true))
          return bad("setp operands do not match the type");
        return std::nullopt;
    }
  }

  std::optional<Error> check_bitwise(const Instruction& i) const {
    const RegClass cls = class_of(i.type());
    const auto& d = i.dsts();
    const auto& s = i.srcs();
    if (i.op() == Op::kAnd || i.op() == Op::kOr) {
      if (!reg_ok(d[0].reg(), cls) || !operand_is(s[0], cls, cls != RegClass::kPred) ||
          !operand_is(s[1], cls, cls != RegClass::kPred))
        return bad("logic operands do not match the type");
      return std::nullopt;
    }
    // The shift amount is always .u32 (PTX ISA shl/shr).
    if (cls == RegClass::kPred || !reg_ok(d[0].reg(), cls) || !operand_is(s[0], cls, true) ||
        !operand_is(s[1], RegClass::kB32, true))
      return bad("shift operands do not match the type");
    return std::nullopt;
  }

  std::optional<Error> check_min_max(const Instruction& i) const {
    const RegClass cls = class_of(i.type());
    if ((i.type() != Type::kU32 && i.type() != Type::kS32 && i.type() != Type::kF32) ||
        !reg_ok(i.dsts()[0].reg(), cls) || !operand_is(i.srcs()[0], cls, true) ||
        !operand_is(i.srcs()[1], cls, true))
      return bad("min/max take u32, s32 or f32 operands");
    if (i.nan_qualifier() && i.type() != Type::kF32) return bad("min/max.NaN needs f32");
    return std::nullopt;
  }

  std::optional<Error> check_global(const Instruction& i) const {
    const bool load = i.op() == Op::kLdGlobal;
    const auto& regs = load ? i.dsts() : i.srcs();
    const auto& addr = load ? i.srcs() : i.dsts();
    if (regs.size() != 1 && regs.size() != 2 && regs.size() != 4)
      return bad("global access takes 1, 2 or 4 registers");
    if (!all_b32(regs)) return bad("global access takes 32-bit registers");
    if (!address_is(addr[0], {RegClass::kB64}, false))
      return bad("global address must be a 64-bit register");
    return std::nullopt;
  }

  std::optional<Error> check_shared(const Instruction& i) const {
    const bool load = i.op() == Op::kLdShared;
    const Operand& reg = load ? i.dsts()[0] : i.srcs()[0];
    const Operand& addr = load ? i.srcs()[0] : i.dsts()[0];
    if (!operand_is(reg, RegClass::kB32, false))
      return bad("shared access takes a 32-bit register");
    if (!address_is(addr, {RegClass::kB32, RegClass::kB64}, true))
      return bad("shared address must be a register or a declared shared variable");
    return std::nullopt;
  }

  std::optional<Error> check_alloc(const Instruction& i) {
    if (auto error = check_cta_group(i)) return error;
    if (!address_is(i.dsts()[0], {RegClass::kB32, RegClass::kB64}, true))
      return bad("alloc destination must be a shared::cta address (rule R28)");
    if (!ncols_ok(i.srcs()[0]))
      return bad("alloc columns must be 32, 64, 128, 256 or 512 (rule R22)");
    return std::nullopt;
  }

  std::optional<Error> check_dealloc(const Instruction& i) {
    if (auto error = check_cta_group(i)) return error;
    if (!operand_is(i.srcs()[0], RegClass::kB32, false))
      return bad("dealloc address must be 32-bit");
    if (!ncols_ok(i.srcs()[1]))
      return bad("dealloc columns must be 32, 64, 128, 256 or 512 (rule R22)");
    return std::nullopt;
  }

  // Branches, barriers, waits, fences, labels and comments: at most an argument to check.
  std::optional<Error> check_control(const Instruction& i) const {
    switch (i.op()) {
      case Op::kBra:
      case Op::kRet:
      case Op::kLabel:
      case Op::kTcgen05WaitLd:
      case Op::kTcgen05WaitSt:
      case Op::kTcgen05FenceBefore:
      case Op::kTcgen05FenceAfter:
      case Op::kMembarCta:
      case Op::kBarWarpSync:
      case Op::kClusterArrive:
      case Op::kClusterWait:
      case Op::kUncheckedRaw:
        return std::nullopt;
      case Op::kComment:
        if (i.text().find_first_of("\r\n") != std::string::npos)
          return bad("a comment holds a line break");
        return std::nullopt;
      case Op::kBarSync:
        if (i.int_arg() < 0 || i.int_arg() > 15) return bad("bar.sync barrier must be 0..15");
        return std::nullopt;
      default:
        return bad("unknown instruction kind");
    }
  }

  const Module& module_;
  const Function& function_;
  size_t index_ = 0;
  int cta_group_ = 0;
  size_t cta_group_index_ = 0;  // the instruction that set cta_group_
};

}  // namespace

Result<bool> Module::verify() const {
  if (version_ < min_ptx_version(target_))
    return Error(ErrorCode::kTarget, "target " + std::string(to_string(target_)) +
                                         " needs .version " + min_ptx_version(target_).to_string() +
                                         ", the module has " + version_.to_string())
        .set_rule(Rule::kTargetAndVersion);
  std::set<std::string> globals;
  for (const SharedVar& v : shared_) {
    if (!is_identifier(v.name) || v.count < 1 || v.align < 1 || (v.align & (v.align - 1)) != 0)
      return Error(ErrorCode::kInternal, "ptx ir: bad shared variable '" + v.name + "'");
    if (!globals.insert(v.name).second)
      return Error(ErrorCode::kInternal, "ptx ir: '" + v.name + "' is declared twice");
  }
  for (const Function& f : functions_) {
    if (!globals.insert(f.name()).second)
      return Error(ErrorCode::kInternal, "ptx ir: '" + f.name() + "' is declared twice");
    if (auto error = FunctionVerifier(*this, f).run()) return std::move(*error);
  }
  return true;
}

}  // namespace tmem::ptx
