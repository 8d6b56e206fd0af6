// The tcgen05.ld / tcgen05.st form table and the opcode parser (docs/tcgen05-rules.md §Shapes,
// §Syntax, §Registers, §Rules rules R1-R9, and R14 for tcgen05.ld.red).
#include "tmem/opcode.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <ostream>
#include <vector>

namespace tmem {
namespace {

// One row per shape: the single source of truth (PTX ISA §9.7.16.2.3 and Tables 49/50).
struct ShapeRow {
  Shape shape;
  std::string_view name;
  int rows;          // TMEM lanes per access
  int regs_per_num;  // registers per thread per .num unit
  int cols_per_num;  // 32-bit columns per access per .num unit, without pack
};

constexpr std::array<ShapeRow, 5> kShapes = {{
    {Shape::k32x32b, "32x32b", 32, 1, 1},
    {Shape::k16x64b, "16x64b", 16, 1, 2},
    {Shape::k16x128b, "16x128b", 16, 2, 4},
    {Shape::k16x256b, "16x256b", 16, 4, 8},
    {Shape::k16x32bx2, "16x32bx2", 16, 1, 1},
}};

constexpr std::array<Shape, 5> kAllShapes = {Shape::k32x32b, Shape::k16x64b, Shape::k16x128b,
                                             Shape::k16x256b, Shape::k16x32bx2};

const ShapeRow& row(Shape shape) { return kShapes[static_cast<size_t>(shape)]; }

constexpr std::string_view kShapeList = ".32x32b, .16x64b, .16x128b, .16x256b, .16x32bx2";
constexpr std::string_view kNumList = ".x1, .x2, .x4, .x8, .x16, .x32, .x64, .x128";

// Shapes of tcgen05.cp / tcgen05.shift that users paste by mistake.
constexpr std::array<std::string_view, 6> kCopyShapes = {"128x256b", "4x256b",  "128x128b",
                                                         "64x128b",  "32x128b", "31x256b"};

// `rule`: the docs/tcgen05-rules.md §Rules rule the text breaks (the message cites it too), kNone
// for syntax.
Error opcode_error(std::string_view text, const std::string& what, Rule rule = Rule::kNone) {
  return Error(ErrorCode::kOpcode, "invalid opcode '" + std::string(text) + "': " + what)
      .set_rule(rule);
}

std::optional<int> parse_int(std::string_view digits) {
  int value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

bool is_power_of_two_num(int num) { return num >= 1 && num <= 128 && (num & (num - 1)) == 0; }

// The largest legal .num of a shape under the 128-register limit (rule R4).
int max_num(Shape shape) { return std::min(128, kMaxRegsPerThread / row(shape).regs_per_num); }

std::string allowed_nums(Shape shape) { return ".x1 to .x" + std::to_string(max_num(shape)); }

// Checks R3/R4/R6 on fields; shared by parse() and make().
std::optional<std::string> field_error(Direction direction, Shape shape, int num) {
  if (!is_power_of_two_num(num))
    return "'.x" + std::to_string(num) +
           "' is not a repetition count; allowed: " + std::string(kNumList);
  int regs = row(shape).regs_per_num * num;
  if (regs > kMaxRegsPerThread)
    return "'.x" + std::to_string(num) + "' with shape '." + std::string(row(shape).name) +
           "' needs " + std::to_string(regs) + " registers per thread, above the limit of " +
           std::to_string(kMaxRegsPerThread) + " registers per tcgen05." +
           std::string(tmem::to_string(direction)) + " (allowed for ." +
           std::string(row(shape).name) + ": " + allowed_nums(shape) + ")";
  return std::nullopt;
}

constexpr std::string_view kReduceForm =
    "tcgen05.ld.red.sync.aligned.{32x32b|16x32bx2}.xN.{min|max}[.abs][.NaN].{f32|u32|s32}";

// Rule R14 on the fields of tcgen05.ld.red; shared by parse() and make_load_reduce().
std::optional<std::string> reduce_field_error(Shape shape, int num, const Reduction& reduction) {
  if (shape != Shape::k32x32b && shape != Shape::k16x32bx2)
    return "shape '." + std::string(row(shape).name) +
           "' is not allowed on tcgen05.ld.red; allowed: .32x32b, .16x32bx2";
  if (num < 2)
    return "'.x" + std::to_string(num) +
           "' is not allowed on tcgen05.ld.red; allowed: .x2 to .x128";
  if (reduction.type != ReductionType::kF32 && (reduction.abs || reduction.nan))
    return std::string("'.") + (reduction.abs ? "abs" : "NaN") + "' is not allowed with type '." +
           std::string(to_string(reduction.type)) + "'; '.abs' and '.NaN' take '.f32' only";
  return std::nullopt;
}

}  // namespace

std::string_view to_string(Direction direction) noexcept {
  return direction == Direction::kLoad ? "ld" : "st";
}
std::string_view to_string(Shape shape) noexcept { return row(shape).name; }
std::span<const Shape> all_shapes() noexcept { return kAllShapes; }
int shape_rows(Shape shape) noexcept { return row(shape).rows; }
int shape_regs_per_num(Shape shape) noexcept { return row(shape).regs_per_num; }
int shape_cols_per_num(Shape shape) noexcept { return row(shape).cols_per_num; }

Result<Opcode> Opcode::make(Direction direction, Shape shape, int num, bool pack) {
  if (auto problem = field_error(direction, shape, num)) {
    return Error(ErrorCode::kOpcode, "invalid tcgen05." + std::string(tmem::to_string(direction)) +
                                         " form: " + *problem)
        .set_rule(is_power_of_two_num(num) ? Rule::kAtMost128Registers : Rule::kNumPowerOfTwo);
  }
  return Opcode(direction, shape, num, pack);
}

Result<Opcode> Opcode::make_load_reduce(Shape shape, int num, Reduction reduction) {
  if (auto problem = field_error(Direction::kLoad, shape, num))
    return Error(ErrorCode::kOpcode, "invalid tcgen05.ld.red form: " + *problem)
        .set_rule(is_power_of_two_num(num) ? Rule::kAtMost128Registers : Rule::kNumPowerOfTwo);
  if (auto problem = reduce_field_error(shape, num, reduction))
    return Error(ErrorCode::kOpcode, "invalid tcgen05.ld.red form: " + *problem + " (rule R14)")
        .set_rule(Rule::kLoadReduceForm);
  return Opcode(Direction::kLoad, shape, num, false, reduction);
}

Result<Opcode> Opcode::parse(std::string_view text) {
  // The longest form has 53 bytes; refuse absurd text before splitting it (and quoting it back).
  constexpr size_t kMaxOpcodeBytes = 256;
  if (text.size() > kMaxOpcodeBytes)
    return Error(ErrorCode::kLimit, "opcode text of " + std::to_string(text.size()) +
                                        " bytes is longer than " + std::to_string(kMaxOpcodeBytes) +
                                        "; a tcgen05.ld/st opcode has at most 53");
  // Split on '.'; "pack::16b" has no dot, so every qualifier is one token.
  std::vector<std::string_view> tokens;
  for (size_t start = 0;;) {
    size_t dot = text.find('.', start);
    tokens.push_back(text.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (tokens[0] != "tcgen05")
    return opcode_error(
        text, "expected it to start with 'tcgen05.', got '" + std::string(tokens[0]) + "'");
  if (tokens.size() < 2 || tokens[1].empty())
    return opcode_error(text, "missing the operation after 'tcgen05.'; expected ld or st");
  Direction direction;
  if (tokens[1] == "ld") {
    direction = Direction::kLoad;
  } else if (tokens[1] == "st") {
    direction = Direction::kStore;
  } else {
    return opcode_error(text,
                        "operation '." + std::string(tokens[1]) +
                            "' is not a TMEM transfer; expected ld or st (rule R1)",
                        Rule::kLdOrSt);
  }
  // tcgen05.ld.red: .red directly after ld (PTX ISA 8.8, docs/tcgen05-rules.md §Syntax); there is
  // no st.red.
  const bool red = tokens.size() > 2 && tokens[2] == "red";
  if (red && direction == Direction::kStore)
    return opcode_error(text,
                        "tcgen05.st has no '.red'; the load with reduction is tcgen05.ld.red "
                        "(rule R14)",
                        Rule::kLoadReduceForm);

  // Positions of each qualifier; -1 = absent. Order is checked after classification.
  int pos_sync = -1, pos_aligned = -1, pos_shape = -1, pos_num = -1, pos_pack = -1, pos_type = -1;
  int pos_red_op = -1, pos_abs = -1, pos_nan = -1;
  Shape shape = Shape::k32x32b;
  int num = 0;
  Reduction reduction;
  auto duplicate = [&](std::string_view token) {
    return opcode_error(text, "qualifier '." + std::string(token) + "' appears twice");
  };
  // A qualifier that only tcgen05.ld.red takes, on a plain ld or st.
  auto red_only = [&](std::string_view token) {
    return opcode_error(text,
                        "qualifier '." + std::string(token) +
                            "' belongs to tcgen05.ld.red (load with reduction); the form is "
                            "tcgen05.ld.red.sync.aligned.SHAPE.xN.{min|max}[.abs][.NaN].TYPE "
                            "(rule R14)",
                        Rule::kLoadReduceForm);
  };
  for (int i = red ? 3 : 2; i < static_cast<int>(tokens.size()); ++i) {
    std::string_view token = tokens[i];
    if (token.empty())
      return opcode_error(text, "empty qualifier (two dots in a row or a final dot)");
    if (token == "min" || token == "max") {
      if (!red) return red_only(token);
      if (pos_red_op >= 0) return duplicate(token);
      reduction.op = token == "min" ? ReductionOp::kMin : ReductionOp::kMax;
      pos_red_op = i;
    } else if (token == "add" || token == "and" || token == "or" || token == "xor") {
      if (!red) return red_only(token);
      return opcode_error(text,
                          "reduction '." + std::string(token) +
                              "' is not allowed; tcgen05.ld.red takes '.min' or '.max' (rule R14)",
                          Rule::kLoadReduceForm);
    } else if (token == "abs" || token == "NaN") {
      if (!red) return red_only(token);
      int& pos = token == "abs" ? pos_abs : pos_nan;
      if (pos >= 0) return duplicate(token);
      (token == "abs" ? reduction.abs : reduction.nan) = true;
      pos = i;
    } else if (red && (token == "f32" || token == "u32" || token == "s32")) {
      if (pos_type >= 0) return duplicate(token);
      reduction.type = token == "f32"   ? ReductionType::kF32
                       : token == "u32" ? ReductionType::kU32
                                        : ReductionType::kS32;
      pos_type = i;
    } else if (red && (token == "b32" || token == "b16" || token == "b64" || token == "f16" ||
                       token == "bf16" || token == "f64" || token == "u64" || token == "s64")) {
      return opcode_error(text,
                          "type '." + std::string(token) +
                              "' is not allowed; tcgen05.ld.red takes '.f32', '.u32' or '.s32' "
                              "(rule R14)",
                          Rule::kLoadReduceForm);
    } else if (red && (token.starts_with("pack::") || token.starts_with("unpack::"))) {
      return opcode_error(text,
                          "'." + std::string(token) +
                              "' is not allowed on tcgen05.ld.red; it loads 32-bit values "
                              "without packing (rule R14)",
                          Rule::kLoadReduceForm);
    } else if (token == "sync") {
      if (pos_sync >= 0) return duplicate(token);
      pos_sync = i;
    } else if (token == "aligned") {
      if (pos_aligned >= 0) return duplicate(token);
      pos_aligned = i;
    } else if (token == "pack::16b" || token == "unpack::16b") {
      if (pos_pack >= 0) return duplicate(token);
      bool is_pack = token == "pack::16b";
      if (is_pack != (direction == Direction::kLoad)) {
        return opcode_error(
            text,
            "'." + std::string(token) + "' is not allowed on tcgen05." +
                std::string(tmem::to_string(direction)) + "; " +
                (direction == Direction::kLoad ? "ld takes '.pack::16b' or nothing"
                                               : "st takes '.unpack::16b' or nothing") +
                " (rule R6)",
            Rule::kPackModeOfDirection);
      }
      pos_pack = i;
    } else if (token.starts_with("pack::") || token.starts_with("unpack::")) {
      return opcode_error(text,
                          "unknown packing '." + std::string(token) + "'; allowed: " +
                              (direction == Direction::kLoad ? "'.pack::16b'" : "'.unpack::16b'") +
                              " (rule R6)",
                          Rule::kPackModeOfDirection);
    } else if (token == "b32") {
      if (pos_type >= 0) return duplicate(token);
      pos_type = i;
    } else if (token == "b16" || token == "b64" || token == "f32" || token == "u32" ||
               token == "s32" || token == "f16" || token == "b8" || token == "f64") {
      return opcode_error(text,
                          "type '." + std::string(token) +
                              "' is not allowed; tcgen05.ld/st take only '.b32' (rule R7)",
                          Rule::kTypeB32);
    } else if (token.size() > 1 && token[0] == 'x' && parse_int(token.substr(1))) {
      if (pos_num >= 0) return duplicate(token);
      num = *parse_int(token.substr(1));
      if (!is_power_of_two_num(num))
        return opcode_error(text,
                            "'." + std::string(token) + "' is not a repetition count; allowed: " +
                                std::string(kNumList) + " (rule R3)",
                            Rule::kNumPowerOfTwo);
      pos_num = i;
    } else {
      bool found = false;
      for (const auto& entry : kShapes) {
        if (entry.name == token) {
          if (pos_shape >= 0) return duplicate(token);
          shape = entry.shape;
          pos_shape = i;
          found = true;
        }
      }
      if (found) continue;
      for (auto copy_shape : kCopyShapes) {
        if (copy_shape == token)
          return opcode_error(text,
                              "shape '." + std::string(token) +
                                  "' belongs to tcgen05.cp, not ld/st; allowed: " +
                                  std::string(kShapeList) + " (rule R2)",
                              Rule::kKnownShape);
      }
      if (!token.empty() && token[0] >= '0' && token[0] <= '9')
        return opcode_error(text,
                            "unknown shape '." + std::string(token) +
                                "'; allowed: " + std::string(kShapeList) + " (rule R2)",
                            Rule::kKnownShape);
      return opcode_error(
          text, "unknown qualifier '." + std::string(token) + "'; the form is tcgen05." +
                    std::string(tmem::to_string(direction)) + ".sync.aligned.SHAPE.xN" +
                    (direction == Direction::kLoad ? "[.pack::16b]" : "[.unpack::16b]") + ".b32");
    }
  }

  if (pos_sync < 0) return opcode_error(text, "missing '.sync' (rule R8)", Rule::kSyncAligned);
  if (pos_aligned < 0)
    return opcode_error(text,
                        "missing '.aligned'; the PTX ISA requires it on tcgen05.ld/st even "
                        "though ptxas 13.0 accepts its absence (rule R8)",
                        Rule::kSyncAligned);
  if (pos_shape < 0)
    return opcode_error(text, "missing shape; allowed: " + std::string(kShapeList) + " (rule R2)",
                        Rule::kKnownShape);
  if (pos_num < 0)
    return opcode_error(
        text, "missing repetition count '.xN'; allowed: " + std::string(kNumList) + " (rule R3)",
        Rule::kNumPowerOfTwo);
  if (red) {
    if (pos_red_op < 0)
      return opcode_error(text, "missing the reduction '.min' or '.max' (rule R14)",
                          Rule::kLoadReduceForm);
    if (pos_type < 0)
      return opcode_error(text, "missing type '.f32', '.u32' or '.s32' (rule R14)",
                          Rule::kLoadReduceForm);
    if (auto problem = reduce_field_error(shape, num, reduction))
      return opcode_error(text, *problem + " (rule R14)", Rule::kLoadReduceForm);
    // Order: .sync/.aligned, shape, .xN, then .redOp, .abs, .NaN and the type in any order (ptxas
    // 13.0 accepts each order; the ISA text and its example differ: docs/tcgen05-rules.md
    // §Targets).
    const int last_sync = std::max(pos_sync, pos_aligned);
    const int first_reduce = std::min(
        {pos_red_op, pos_type, pos_abs < 0 ? pos_type : pos_abs, pos_nan < 0 ? pos_type : pos_nan});
    if (last_sync > pos_shape || pos_shape > pos_num || pos_num > first_reduce)
      return opcode_error(text, "qualifiers out of order; the form is " + std::string(kReduceForm));
    return Opcode(direction, shape, num, false, reduction);
  }
  if (pos_type < 0) return opcode_error(text, "missing type '.b32' (rule R7)", Rule::kTypeB32);
  if (auto problem = field_error(direction, shape, num))
    return opcode_error(text, *problem + " (rule R4)", Rule::kAtMost128Registers);

  // Order: .sync/.aligned (either order), shape, then .xN and pack (either order, as ptxas
  // accepts), and the type last.
  int last_sync = std::max(pos_sync, pos_aligned);
  int first_after_shape = pos_pack >= 0 ? std::min(pos_num, pos_pack) : pos_num;
  int last_before_type = std::max(pos_num, pos_pack);
  if (last_sync > pos_shape || pos_shape > first_after_shape || last_before_type > pos_type ||
      pos_type != static_cast<int>(tokens.size()) - 1) {
    return opcode_error(
        text, "qualifiers out of order; the form is tcgen05." +
                  std::string(tmem::to_string(direction)) + ".sync.aligned.SHAPE.xN" +
                  (direction == Direction::kLoad ? "[.pack::16b]" : "[.unpack::16b]") + ".b32");
  }
  return Opcode(direction, shape, num, pos_pack >= 0);
}

std::optional<Error> Opcode::check_operands(int vector_length, bool has_immediate,
                                            bool has_redval) const {
  if (reduces() != has_redval)
    return Error(ErrorCode::kOpcode,
                 to_string() + (reduces() ? " needs redval, the 32-bit register that receives the "
                                            "reduction, between the vector and [taddr] (rule R14)"
                                          : " takes no redval; only tcgen05.ld.red has one "
                                            "(rule R14)"))
        .set_rule(Rule::kLoadReduceForm);
  if (vector_length != regs_per_thread()) {
    return Error(ErrorCode::kOpcode,
                 to_string() + " takes a vector of " + std::to_string(regs_per_thread()) +
                     " registers per thread, got " + std::to_string(vector_length) +
                     (packed_ ? " (pack/unpack does not change the count)" : "") + " (rule R5)")
        .set_rule(Rule::kVectorLengthIsNregs);
  }
  if (is_split() && !has_immediate)
    return Error(ErrorCode::kOpcode,
                 to_string() +
                     " needs the immediate immHalfSplitoff (the second access's "
                     "address offset) (rule R9)")
        .set_rule(Rule::kSplitOffsetOnlyFor16x32bx2);
  if (!is_split() && has_immediate)
    return Error(ErrorCode::kOpcode, to_string() +
                                         " takes no immediate; only .16x32bx2 has "
                                         "immHalfSplitoff (rule R9)")
        .set_rule(Rule::kSplitOffsetOnlyFor16x32bx2);
  return std::nullopt;
}

namespace {
// tcgen05.ld.red: sm_103a/f and sm_110a/f (PTX ISA: sm_101a -> sm_110a, sm_101f+, sm_103f+), not
// sm_100a/f (docs/tcgen05-rules.md §Targets, observed with ptxas 13.0).
constexpr std::array<Target, 4> kReduceTargets = {Target::kSm103a, Target::kSm103f, Target::kSm110a,
                                                  Target::kSm110f};
}  // namespace

std::span<const Target> Opcode::targets() const noexcept {
  if (reduces()) return kReduceTargets;
  return all_targets();
}

bool Opcode::supports(Target target) const noexcept {
  for (Target t : targets())
    if (t == target) return true;
  return false;
}

Error Opcode::unsupported_target_error(Target target) const {
  std::string allowed;
  for (Target t : targets())
    allowed += (allowed.empty() ? "" : ", ") + std::string(tmem::to_string(t));
  const Rule rule = reduces() ? Rule::kLoadReduceForm : Rule::kTargetAndVersion;
  // The wording the IR verifier has always used, with the rule for ld.red (which users meet on the
  // default target, sm_100a).
  return Error(ErrorCode::kTarget,
               to_string() + " cannot run on target " + std::string(tmem::to_string(target)) +
                   "; it runs on: " + allowed + (reduces() ? " (rule R14)" : ""))
      .set_rule(rule);
}

PtxVersion Opcode::min_ptx_version(Target target) const noexcept {
  return std::max(min_ptx_version(), tmem::min_ptx_version(target));
}

std::string Opcode::to_string() const {
  std::string text = "tcgen05.";
  text += tmem::to_string(direction_);
  if (reduction_) text += ".red";
  text += ".sync.aligned.";
  text += row(shape_).name;
  text += ".x" + std::to_string(num_);
  if (reduction_) return text + "." + reduction_->to_string();
  if (packed_) text += is_load() ? ".pack::16b" : ".unpack::16b";
  text += ".b32";
  return text;
}

std::uint64_t Opcode::hash() const noexcept {
  // Fields are small; a packed word through a 64-bit mix is stable across runs and platforms.
  std::uint64_t word =
      static_cast<std::uint64_t>(direction_) | static_cast<std::uint64_t>(shape_) << 8 |
      static_cast<std::uint64_t>(num_) << 16 | static_cast<std::uint64_t>(packed_) << 32;
  if (reduction_)  // bit 40 marks .red; the fields above it cannot collide with the plain form
    word |= std::uint64_t{1} << 40 | static_cast<std::uint64_t>(reduction_->op) << 41 |
            static_cast<std::uint64_t>(reduction_->type) << 42 |
            static_cast<std::uint64_t>(reduction_->abs) << 44 |
            static_cast<std::uint64_t>(reduction_->nan) << 45;
  word ^= word >> 33;
  word *= 0xff51afd7ed558ccdULL;
  word ^= word >> 33;
  word *= 0xc4ceb9fe1a85ec53ULL;
  return word ^ (word >> 33);
}

std::ostream& operator<<(std::ostream& os, const Opcode& opcode) {
  return os << opcode.to_string();
}

}  // namespace tmem
