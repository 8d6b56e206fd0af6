// tmem::Scope and tmem::TransferSpec: what one tiled tcgen05.ld/st transfer is asked to do.
#pragma once

#include <atomic>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tmem/export.h"
#include "tmem/opcode.h"
#include "tmem/result.h"
#include "tmem/view.h"

TMEMJIT_API_BEGIN
namespace tmem {

// Who issues the instruction (docs/transfer-semantics.md §Operands): one statically chosen warp W,
// the four warps of a warpgroup, or the first NW warps of the CTA. The scope fixes the operands'
// group prefix.
class Scope {
 public:
  enum class Kind { kWarp, kWarpgroup, kCta };

  static Result<Scope> warp(int w);  // 0 <= w < 32
  static Scope warpgroup() { return Scope(Kind::kWarpgroup, 4); }
  static Result<Scope> cta(int warps);  // 1 <= warps <= 32 (1024 threads)
  // "warp:W", "warpgroup" or "cta:NW".
  static Result<Scope> parse(std::string_view text);

  Kind kind() const noexcept { return kind_; }
  // warp:W -> W; otherwise 0.
  int warp_id() const noexcept { return kind_ == Kind::kWarp ? value_ : 0; }
  // Extent of the group prefix: 0 (no group axis) for warp scope, 4 or NW otherwise.
  int group_rank() const noexcept { return kind_ == Kind::kWarp ? 0 : 1; }
  int groups() const noexcept { return kind_ == Kind::kWarp ? 1 : value_; }
  // CTA warp id of group g.
  int warp_of_group(int g) const noexcept { return kind_ == Kind::kWarp ? value_ : g; }
  // Warps a harness kernel launches so that every participating warp exists.
  int launch_warps() const noexcept { return kind_ == Kind::kWarp ? value_ + 1 : value_; }

  std::string to_string() const;
  friend bool operator==(const Scope& a, const Scope& b) {
    return a.kind_ == b.kind_ && a.value_ == b.value_;
  }
  friend bool operator!=(const Scope& a, const Scope& b) { return !(a == b); }

 private:
  Scope(Kind kind, int value) : kind_(kind), value_(value) {}
  Kind kind_;
  int value_;  // W for warp, 4 for warpgroup, NW for cta
};

// A 128-bit digest of what a TransferSpec means (TransferSpec::fingerprint).
struct SpecFingerprint {
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  friend bool operator==(const SpecFingerprint& a, const SpecFingerprint& b) {
    return a.lo == b.lo && a.hi == b.hi;
  }
  friend bool operator!=(const SpecFingerprint& a, const SpecFingerprint& b) { return !(a == b); }
};

namespace detail {
// A value computed once from an immutable object and kept inside it: copies carry it, equality
// ignores it (it is a function of the other members), and concurrent first uses may both compute
// it (they store the same value).
class FingerprintMemo {
 public:
  FingerprintMemo() = default;
  FingerprintMemo(const FingerprintMemo& other) noexcept { copy_from(other); }
  FingerprintMemo& operator=(const FingerprintMemo& other) noexcept {
    if (this != &other) copy_from(other);
    return *this;
  }
  bool get(SpecFingerprint& out) const noexcept {
    if (!ready_.load(std::memory_order_acquire)) return false;
    out = {lo_.load(std::memory_order_relaxed), hi_.load(std::memory_order_relaxed)};
    return true;
  }
  void set(SpecFingerprint value) const noexcept {
    lo_.store(value.lo, std::memory_order_relaxed);
    hi_.store(value.hi, std::memory_order_relaxed);
    ready_.store(true, std::memory_order_release);
  }

 private:
  void copy_from(const FingerprintMemo& other) noexcept {
    SpecFingerprint value;
    if (other.get(value))
      set(value);
    else
      ready_.store(false, std::memory_order_relaxed);
  }
  mutable std::atomic<std::uint64_t> lo_{0};
  mutable std::atomic<std::uint64_t> hi_{0};
  mutable std::atomic<bool> ready_{false};
};
}  // namespace detail

// One transfer: the opcode, the scope, the TMEM operand view, the register operand view and, for
// 16x32bx2, the second TMEM region and the immediate immHalfSplitoff (a TMEM address delta: lane
// in bits 31:16, column in bits 15:0).
class TransferSpec {
 public:
  // Structural checks only (operand presence: tmem2 and imm exactly for 16x32bx2); the
  // native-image rules are check()'s job.
  static Result<TransferSpec> make(Opcode op, Scope scope, View tmem, View regs,
                                   std::optional<View> tmem2 = std::nullopt,
                                   std::optional<std::int64_t> imm = std::nullopt);
  // From the textual fields, as the CLI takes them (--op --scope --tmem --regs [--tmem2 --imm]).
  static Result<TransferSpec> from_fields(std::string_view op, std::string_view scope,
                                          std::string_view tmem, std::string_view regs,
                                          std::optional<std::string_view> tmem2 = std::nullopt,
                                          std::optional<std::string_view> imm = std::nullopt);
  // The canonical text of to_string(): one "key: value" line per field.
  static Result<TransferSpec> parse(std::string_view text);
  // A spec file (docs/design.md §CLI): a JSON object with the keys op, scope, tmem, regs and
  // optionally tmem2, imm, and the device function's options (name, wait, warp_argument,
  // column_argument, cta_group), which are checked and dropped here; parse_spec_file
  // (tmem/specialize.h) returns them.
  static Result<TransferSpec> from_json(std::string_view json);
  // The same, with the device function's options the file names (checked: a string name, booleans,
  // a cta_group of 1 or 2); parse_spec_file applies them to a DeviceFunctionOptions.
  struct FileOptions {
    std::optional<std::string> name;
    std::optional<bool> wait, warp_argument, column_argument;
    std::optional<int> cta_group;
    std::vector<std::string> keys;  // the option keys the file names: name, wait, ... in order
  };
  static Result<std::pair<TransferSpec, FileOptions>> from_json_with_options(std::string_view json);

  const Opcode& op() const noexcept { return op_; }
  const Scope& scope() const noexcept { return scope_; }
  const View& tmem() const noexcept { return tmem_; }
  const View& regs() const noexcept { return regs_; }
  const std::optional<View>& tmem2() const noexcept { return tmem2_; }
  const std::optional<std::int64_t>& imm() const noexcept { return imm_; }

  // "op: ...\nscope: ...\ntmem: ...\nregs: ...[\ntmem2: ...\nimm: ...]\n"; parse() inverts it.
  std::string to_string() const;
  std::string to_json() const;
  // Stable over runs and platforms; equal specs have equal hashes.
  std::uint64_t hash() const noexcept;
  // XXH3-128 of the spec's normal form: the opcode, the scope, the immediate and, per operand, its
  // dtype, view shape, view digits and offset, the axes its layout names and its base layout
  // canonicalized (Layout::canonicalize). Equal specs have equal fingerprints, and so do spellings
  // of one transfer that differ only in spacing, in an equal factorization of a layout, or in how
  // the view was built (the base tensor's shape does not enter). Specs with equal fingerprints
  // get the same verdict from check() and the same code (only error texts quote the spelling).
  // Stable over runs and platforms. Computed on first use and kept, so later calls (also on
  // copies) cost two loads.
  SpecFingerprint fingerprint() const;
  // Member by member; fingerprint_ is left out, a function of the others.
  friend bool operator==(const TransferSpec& a, const TransferSpec& b) {
    return a.op_ == b.op_ && a.scope_ == b.scope_ && a.tmem_ == b.tmem_ && a.regs_ == b.regs_ &&
           a.tmem2_ == b.tmem2_ && a.imm_ == b.imm_;
  }
  friend bool operator!=(const TransferSpec& a, const TransferSpec& b) { return !(a == b); }

 private:
  TransferSpec(Opcode op, Scope scope, View tmem, View regs, std::optional<View> tmem2,
               std::optional<std::int64_t> imm)
      : op_(op),
        scope_(scope),
        tmem_(std::move(tmem)),
        regs_(std::move(regs)),
        tmem2_(std::move(tmem2)),
        imm_(imm) {}

  Opcode op_;
  Scope scope_;
  View tmem_;
  View regs_;
  std::optional<View> tmem2_;
  std::optional<std::int64_t> imm_;
  detail::FingerprintMemo fingerprint_;  // equality ignores it
};

std::ostream& operator<<(std::ostream& os, const TransferSpec& spec);

}  // namespace tmem
TMEMJIT_API_END
