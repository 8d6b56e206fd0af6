// A small PTX IR (module, entry/func, typed virtual registers, instructions, labels) and its one
// deterministic printer: the only place in libtmemjit where PTX text is produced.
//
// Equal modules print byte-identical text, so the PTX can be hashed, cached and golden-tested.
// Registers get stable names from per-function counters in creation order (%r0.. .b32, %rd0.. .b64,
// %p0.. .pred) and are declared with one .reg line per class, in that fixed order.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "tmem/opcode.h"
#include "tmem/result.h"
#include "tmem/target.h"

namespace tmem::ptx {

// Register classes; the PTX declaration types are .b32, .b64 and .pred (bit-size register types
// are accepted by every instruction type of the same width: u32, s32, b32, ...).
enum class RegClass { kB32, kB64, kPred };

// A virtual register of one function: "%r<index>", "%rd<index>" or "%p<index>".
struct Reg {
  RegClass cls = RegClass::kB32;
  int index = 0;
  std::string name() const;
  friend bool operator==(const Reg&, const Reg&) = default;
};

// Instruction data types (the .u32 in add.u32). Width 32 or 64 bits, or a predicate.
enum class Type { kB32, kU32, kS32, kF32, kB64, kU64, kS64, kPred };
int type_bits(Type type) noexcept;  // 32, 64, or 1 for kPred

// Special registers read with mov.u32. %warpid is not stable across preemption (PTX ISA §10.7),
// so the warp id is computed as %tid.x >> 5 instead and %warpid is deliberately absent.
enum class SpecialReg { kTidX, kNtidX, kCtaidX, kLaneId, kClusterCtaRank };

// A branch target inside one function, created by Function::new_label and placed with place().
struct Label {
  int index = 0;
  std::string name;  // "$L_<index>_<hint>"
  friend bool operator==(const Label&, const Label&) = default;
};

// An instruction operand: a register, an integer immediate, a symbol (parameter or shared
// variable name), a special register, or a memory address [base+offset] with a register or
// symbol base.
class Operand {
 public:
  enum class Kind { kReg, kImm, kSymbol, kSpecial, kAddress };

  Operand(Reg reg) : kind_(Kind::kReg), reg_(reg) {}  // NOLINT: implicit by design
  static Operand imm(std::int64_t value);
  static Operand symbol(std::string name);
  static Operand special(SpecialReg reg);
  static Operand addr(Reg base, std::int64_t offset = 0);
  static Operand addr(std::string symbol, std::int64_t offset = 0);

  Kind kind() const noexcept { return kind_; }
  // Requires: kind() is kReg, or kAddress with a register base.
  const Reg& reg() const noexcept { return reg_; }
  bool has_reg() const noexcept {
    return kind_ == Kind::kReg || (kind_ == Kind::kAddress && symbol_.empty());
  }
  std::int64_t imm_value() const noexcept { return imm_; }
  const std::string& symbol_name() const noexcept { return symbol_; }
  SpecialReg special_reg() const noexcept { return special_; }

  friend bool operator==(const Operand&, const Operand&) = default;

 private:
  Operand() = default;
  Kind kind_ = Kind::kImm;
  Reg reg_{};
  std::int64_t imm_ = 0;  // the immediate, or the address offset
  std::string symbol_;
  SpecialReg special_ = SpecialReg::kTidX;
};

// Comparison of setp.
enum class Cmp { kEq, kNe, kLt, kLe, kGt, kGe };

// What an instruction does. Every kind but kUncheckedRaw has a fixed spelling in the printer.
enum class Op {
  kMov,
  kLdParam,
  kStParam,
  kCvtaToGlobal,
  kAdd,
  kMulLo,
  kMulWide,
  kShl,
  kShr,
  kAnd,
  kOr,
  kMin,  // min{.NaN}.TYPE (GPU emulation of tcgen05.ld.red)
  kMax,  // max{.NaN}.TYPE
  kAbs,  // abs.f32 (GPU emulation of tcgen05.ld.red .abs)
  kSetp,
  kBra,
  kBarSync,
  kLdGlobal,
  kStGlobal,
  kLdShared,
  kStShared,
  kRet,
  kTcgen05Alloc,
  kTcgen05Dealloc,
  kTcgen05Relinquish,
  kTcgen05WaitLd,
  kTcgen05WaitSt,
  kTcgen05FenceBefore,
  kTcgen05FenceAfter,
  kTcgen05Ld,
  kTcgen05St,
  kMembarCta,     // membar.cta (GPU emulation of tcgen05 waits and fences)
  kBarWarpSync,   // bar.warp.sync -1 (GPU emulation of tcgen05 waits)
  kComment,       // "// text" on its own line
  kLabel,         // a label definition "$L_..:" (use Function::place)
  kUncheckedRaw,  // verbatim text, for negative compile tests only
  // barrier.cluster.arrive.aligned (release) and barrier.cluster.wait.aligned (acquire): the
  // CTA pair's lifecycle (R29/R31)
  kClusterArrive,
  kClusterWait,
};

// The tcgen05 instructions (kTcgen05Alloc .. kTcgen05St): warp-collective, sm_100a only, and what
// the Hopper emulation lowers (kernels/emulation_kernels.cc) and the simulator checks per warp.
constexpr bool is_tcgen05(Op op) noexcept {
  return op >= Op::kTcgen05Alloc && op <= Op::kTcgen05St;
}
static_assert(static_cast<int>(Op::kTcgen05St) - static_cast<int>(Op::kTcgen05Alloc) == 8,
              "is_tcgen05 takes the nine tcgen05 ops as one range: keep them together");

// One PTX instruction (or a label definition). Built only through the named factories below, so
// each kind has the operands its printer expects; Module::verify() checks register classes.
class Instruction {
 public:
  // mov.TYPE dst, src (src: register, immediate, special register or symbol address).
  static Instruction mov(Type type, Reg dst, Operand src);
  // ld.param.TYPE dst, [param]
  static Instruction ld_param(Type type, Reg dst, std::string param);
  // st.param.TYPE [param+offset], src: writes a return parameter of a .func.
  static Instruction st_param(Type type, std::string param, Reg src, std::int64_t offset = 0);
  // cvta.to.global.u64 dst, src
  static Instruction cvta_to_global(Reg dst, Reg src);
  // add.TYPE / mul.lo.TYPE / shl.TYPE / shr.TYPE / and.TYPE / or.TYPE dst, a, b
  static Instruction add(Type type, Reg dst, Operand a, Operand b);
  static Instruction mul_lo(Type type, Reg dst, Operand a, Operand b);
  static Instruction shl(Type type, Reg dst, Operand a, Operand b);
  static Instruction shr(Type type, Reg dst, Operand a, Operand b);
  static Instruction bit_and(Type type, Reg dst, Operand a, Operand b);
  static Instruction bit_or(Type type, Reg dst, Operand a, Operand b);
  // min{.NaN}.TYPE / max{.NaN}.TYPE dst, a, b (TYPE: u32, s32, f32; .NaN with f32 only) and
  // abs.f32 dst, a: what the GPU emulation computes tcgen05.ld.red's reduction with.
  static Instruction min(Type type, Reg dst, Operand a, Operand b, bool nan = false);
  static Instruction max(Type type, Reg dst, Operand a, Operand b, bool nan = false);
  static Instruction abs_f32(Reg dst, Operand a);
  // mul.wide.TYPE dst64, a32, b32 (TYPE is the 32-bit source type: u32 or s32)
  static Instruction mul_wide(Type type, Reg dst, Operand a, Operand b);
  // setp.CMP.TYPE pdst, a, b
  static Instruction setp(Cmp cmp, Type type, Reg dst, Operand a, Operand b);
  // [@p | @!p] bra.uni? target; `uniform` prints bra.uni (every thread of the warp agrees).
  static Instruction bra(const Label& target, std::optional<Reg> guard = std::nullopt,
                         bool negate = false, bool uniform = false);
  // bar.sync 0
  static Instruction bar_sync(int barrier = 0);
  // barrier.cluster.arrive.aligned; / barrier.cluster.wait.aligned; (PTX ISA §9.7.13.3.2,
  // sm_90+): every thread of every CTA of the cluster arrives, then waits. Arrive releases and
  // wait acquires by default, so tcgen05.fence::before_thread_sync before the arrive and
  // fence::after_thread_sync after the wait order tcgen05 operations across the CTA pair.
  static Instruction cluster_arrive();
  static Instruction cluster_wait();
  // ld.global[.v2|.v4].b32 {dst..}, [addr] and st.global[.v2|.v4].b32 [addr], {src..}
  // (one register: scalar form without braces).
  static Instruction ld_global(std::vector<Reg> dst, Operand addr);
  static Instruction st_global(Operand addr, std::vector<Reg> src);
  // ld.shared.u32 dst, [addr] and st.shared.u32 [addr], src
  static Instruction ld_shared(Reg dst, Operand addr);
  static Instruction st_shared(Operand addr, Reg src);
  static Instruction ret();

  // tcgen05.alloc.cta_group::G.sync.aligned.shared::cta.b32 [dst], ncols;
  static Instruction tcgen05_alloc(Operand dst_smem, Operand ncols, int cta_group = 1);
  // tcgen05.dealloc.cta_group::G.sync.aligned.b32 taddr, ncols;
  static Instruction tcgen05_dealloc(Reg taddr, Operand ncols, int cta_group = 1);
  // tcgen05.relinquish_alloc_permit.cta_group::G.sync.aligned;
  static Instruction tcgen05_relinquish(int cta_group = 1);
  // tcgen05.wait::ld.sync.aligned; / tcgen05.wait::st.sync.aligned;
  static Instruction tcgen05_wait_ld();
  static Instruction tcgen05_wait_st();
  // tcgen05.fence::before_thread_sync; / tcgen05.fence::after_thread_sync;
  static Instruction tcgen05_fence_before();
  static Instruction tcgen05_fence_after();
  // The tcgen05.ld / tcgen05.st of `opcode`, spelled by Opcode::to_string():
  //   ld: OPCODE {regs}, [taddr]{, imm};   st: OPCODE [taddr]{, imm}, {regs};
  // `imm` (immHalfSplitoff) is required for 16x32bx2 and forbidden otherwise; the vector must
  // hold opcode.regs_per_thread() registers (checked by verify()).
  static Instruction tcgen05_ld(const Opcode& opcode, std::vector<Reg> regs, Reg taddr,
                                std::optional<std::int64_t> imm = std::nullopt);
  static Instruction tcgen05_st(const Opcode& opcode, Reg taddr, std::vector<Reg> regs,
                                std::optional<std::int64_t> imm = std::nullopt);
  // tcgen05.ld.red (opcode.reduces()): OPCODE {regs}, redval, [taddr]{, imm};
  // (docs/tcgen05-rules.md §Syntax). dsts() holds the vector and then redval.
  static Instruction tcgen05_ld_red(const Opcode& opcode, std::vector<Reg> regs, Reg redval,
                                    Reg taddr, std::optional<std::int64_t> imm = std::nullopt);

  // membar.cta; and bar.warp.sync -1; (every lane of the warp). The emulation kernels
  // (kernels/emulation_kernels.h) lower tcgen05.wait and tcgen05.fence to these.
  static Instruction membar_cta();
  static Instruction bar_warp_sync();
  // "// text" on its own line; `text` holds no line break (verify() checks).
  static Instruction comment(std::string text);

  // Verbatim PTX line (without the final ';', which the printer adds), never checked. Only for
  // tests that need PTX the IR refuses to express, e.g. the lead's negative compile tests.
  static Instruction unchecked_raw(std::string text);

  // Guards this instruction with @pred (or @!pred).
  Instruction& guarded(Reg pred, bool negate = false);

  Op op() const noexcept { return op_; }
  Type type() const noexcept { return type_; }
  Cmp cmp() const noexcept { return cmp_; }
  const std::vector<Operand>& dsts() const noexcept { return dsts_; }
  const std::vector<Operand>& srcs() const noexcept { return srcs_; }
  const std::optional<Reg>& guard() const noexcept { return guard_; }
  bool guard_negated() const noexcept { return guard_negated_; }
  const std::optional<Opcode>& opcode() const noexcept { return opcode_; }
  const std::optional<std::int64_t>& split_imm() const noexcept { return imm_; }
  std::int64_t int_arg() const noexcept { return int_arg_; }  // barrier id, cta_group, bra.uni
  // min/max: the .NaN qualifier (int_arg() != 0).
  bool nan_qualifier() const noexcept { return int_arg_ != 0; }
  const std::string& text() const noexcept { return text_; }  // label name or raw text

  friend bool operator==(const Instruction&, const Instruction&) = default;

 private:
  friend class Function;
  explicit Instruction(Op op) : op_(op) {}
  // OP.TYPE dst, a, b: the two-operand arithmetic and bitwise factories.
  static Instruction binary(Op op, Type type, Reg dst, Operand a, Operand b);

  Op op_;
  Type type_ = Type::kB32;
  Cmp cmp_ = Cmp::kEq;
  std::vector<Operand> dsts_;
  std::vector<Operand> srcs_;
  std::optional<Reg> guard_;
  bool guard_negated_ = false;
  std::optional<Opcode> opcode_;
  std::optional<std::int64_t> imm_;
  std::int64_t int_arg_ = 0;
  std::string text_;
};

// A kernel parameter or device-function parameter: .param .u64 name / .param .u32 name.
// With array_bytes > 0 it is the aggregate `.param .align A .b8 name[array_bytes]` (type unused):
// how a .func returns several values, since ptxas accepts several return parameters only in the
// .reg state space, which is not the callable ABI ("Multiple return parameters require .register
// state space").
struct Param {
  Type type = Type::kU64;
  std::string name;
  int array_bytes = 0;
  int align = 0;  // of an aggregate: a power of two
  friend bool operator==(const Param&, const Param&) = default;
};

// A .entry (kernel) or .func (device function) with its registers and body.
class Function {
 public:
  enum class Kind { kEntry, kFunc };

  Function(Kind kind, std::string name) : kind_(kind), name_(std::move(name)) {}

  Kind kind() const noexcept { return kind_; }
  const std::string& name() const noexcept { return name_; }

  // Adds a parameter and returns its name for ld.param.
  const std::string& add_param(Type type, std::string name);
  const std::vector<Param>& params() const noexcept { return params_; }
  // Adds a return parameter of a .func (written with st.param; verify() rejects one on an .entry)
  // and returns its name.
  const std::string& add_return_param(Param param);
  const std::vector<Param>& return_params() const noexcept { return return_params_; }

  // .maxntid N, 1, 1 (0: none). Lets ptxas budget registers for the real block size.
  void set_max_threads(int threads) { max_threads_ = threads; }
  int max_threads() const noexcept { return max_threads_; }

  // A fresh register of the class, named by creation order.
  Reg new_reg(RegClass cls);
  std::vector<Reg> new_regs(RegClass cls, int count);
  int reg_count(RegClass cls) const noexcept { return reg_counts_[static_cast<int>(cls)]; }

  // A fresh label; `hint` (letters, digits, '_') only makes the PTX easier to read.
  Label new_label(const std::string& hint = {});
  // Defines `label` at the current end of the body.
  void place(const Label& label);

  // Appends an instruction; returns it so that a guard can be added.
  Instruction& emit(Instruction instruction);
  const std::vector<Instruction>& body() const noexcept { return body_; }

  friend bool operator==(const Function&, const Function&) = default;

 private:
  Kind kind_;
  std::string name_;
  std::vector<Param> params_;
  std::vector<Param> return_params_;
  int max_threads_ = 0;
  int reg_counts_[3] = {0, 0, 0};
  int label_count_ = 0;
  std::vector<Instruction> body_;
};

// A module-scope shared variable: .shared .align A .b32 name[count];
struct SharedVar {
  std::string name;
  int align = 4;
  int count = 1;
  friend bool operator==(const SharedVar&, const SharedVar&) = default;
};

// PTX ISA version a module built for `target` declares. It is the lowest version that the target
// accepts (8.6 for sm_100a, 8.8 for sm_100f/sm_103a/sm_103f, 9.0 for sm_110a/f;
// docs/tcgen05-rules.md §Targets), raised to 8.6 for tcgen05: the generated code uses nothing
// newer, and the lowest version keeps the PTX loadable by the oldest toolkit that knows the target
// (CUDA 12.8 for sm_100a).
PtxVersion default_ptx_version(Target target) noexcept;

// A PTX module: .version, .target, .address_size 64, shared variables and functions.
class Module {
 public:
  explicit Module(Target target = Target::kSm100a)
      : target_(target), version_(default_ptx_version(target)) {}

  Target target() const noexcept { return target_; }
  PtxVersion version() const noexcept { return version_; }
  // Overrides the .version (tests of the target/version rule); verify() still checks it.
  void set_version(PtxVersion version) { version_ = version; }
  static constexpr int kAddressSize = 64;

  // Declares `.shared .align A .b32 name[count];` and returns the name.
  const std::string& add_shared(std::string name, int align = 4, int count = 1);
  const std::vector<SharedVar>& shared_vars() const noexcept { return shared_; }

  // The reference stays valid while the module lives (functions are kept in a deque).
  Function& add_function(Function::Kind kind, std::string name);
  const std::deque<Function>& functions() const noexcept { return functions_; }

  // Checks what the printer relies on: register classes per operand, vector sizes of every
  // tcgen05.ld/st against its opcode, the split immediate, labels defined once, symbols declared,
  // and that the target and .version can run every tcgen05 opcode (kTarget; sm_90, the emulation
  // target, runs no tcgen05 instruction at all). IR misuse is
  // kInternal. unchecked_raw instructions are not checked.
  Result<bool> verify() const;

  friend bool operator==(const Module&, const Module&) = default;

 private:
  Target target_;
  PtxVersion version_;
  std::vector<SharedVar> shared_;
  std::deque<Function> functions_;
};

// The one PTX printer: verify(), then print. Equal modules give byte-identical text.
Result<std::string> print(const Module& module);

}  // namespace tmem::ptx
