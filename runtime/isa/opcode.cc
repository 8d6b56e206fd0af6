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

// --- The qualifier grammar of Opcode::parse (docs/tcgen05-rules.md §Syntax) ---

// Where a qualifier is recorded: each at most once, and the order of the form is checked on these
// positions at the end.
enum class Slot { kSync, kAligned, kShape, kNum, kPack, kType, kRedOp, kAbs, kNaN, kCount };

// Which forms a row of kQualifiers applies to.
enum class Form {
  kAny,
  kIfReduce,    // read in tcgen05.ld.red only; in ld/st the token falls through to later rows
  kReduceOnly,  // tcgen05.ld.red's own; in ld/st it is refused as belonging to ld.red
  kLoad,        // .pack::16b: tcgen05.ld only (rule R6)
  kStore,       // .unpack::16b: tcgen05.st only (rule R6)
};

// Why a row refuses its token; kAccept: it does not.
enum class Refusal { kAccept, kReduction, kReduceType, kReducePacking, kPacking, kType };

struct QualifierRow {
  std::string_view text;
  bool prefix = false;  // the row matches every token starting with `text`
  Form form = Form::kAny;
  Slot slot = Slot::kCount;
  Refusal refusal = Refusal::kAccept;
  void (*apply)(Reduction&) = nullptr;  // what an accepted qualifier sets on tcgen05.ld.red
};

constexpr QualifierRow accept(std::string_view text, Form form, Slot slot,
                              void (*apply)(Reduction&) = nullptr) {
  return {text, false, form, slot, Refusal::kAccept, apply};
}
constexpr QualifierRow refuse(std::string_view text, Form form, Refusal why) {
  return {text, false, form, Slot::kCount, why};
}
constexpr QualifierRow refuse_prefix(std::string_view text, Form form, Refusal why) {
  return {text, true, form, Slot::kCount, why};
}

// One row per qualifier after tcgen05.{ld|st}[.red]; the first row that matches a token decides,
// so the ld.red rows (rule R14) come before the ld/st rows (rules R6-R8) that share a spelling.
// Shapes (kShapes) and .xN are read after the table.
constexpr std::array kQualifiers = {
    accept("min", Form::kReduceOnly, Slot::kRedOp, [](Reduction& r) { r.op = ReductionOp::kMin; }),
    accept("max", Form::kReduceOnly, Slot::kRedOp, [](Reduction& r) { r.op = ReductionOp::kMax; }),
    refuse("add", Form::kReduceOnly, Refusal::kReduction),
    refuse("and", Form::kReduceOnly, Refusal::kReduction),
    refuse("or", Form::kReduceOnly, Refusal::kReduction),
    refuse("xor", Form::kReduceOnly, Refusal::kReduction),
    accept("abs", Form::kReduceOnly, Slot::kAbs, [](Reduction& r) { r.abs = true; }),
    accept("NaN", Form::kReduceOnly, Slot::kNaN, [](Reduction& r) { r.nan = true; }),
    accept("f32", Form::kIfReduce, Slot::kType, [](Reduction& r) { r.type = ReductionType::kF32; }),
    accept("u32", Form::kIfReduce, Slot::kType, [](Reduction& r) { r.type = ReductionType::kU32; }),
    accept("s32", Form::kIfReduce, Slot::kType, [](Reduction& r) { r.type = ReductionType::kS32; }),
    refuse("b32", Form::kIfReduce, Refusal::kReduceType),
    refuse("b16", Form::kIfReduce, Refusal::kReduceType),
    refuse("b64", Form::kIfReduce, Refusal::kReduceType),
    refuse("f16", Form::kIfReduce, Refusal::kReduceType),
    refuse("bf16", Form::kIfReduce, Refusal::kReduceType),
    refuse("f64", Form::kIfReduce, Refusal::kReduceType),
    refuse("u64", Form::kIfReduce, Refusal::kReduceType),
    refuse("s64", Form::kIfReduce, Refusal::kReduceType),
    refuse_prefix("pack::", Form::kIfReduce, Refusal::kReducePacking),
    refuse_prefix("unpack::", Form::kIfReduce, Refusal::kReducePacking),
    accept("sync", Form::kAny, Slot::kSync),
    accept("aligned", Form::kAny, Slot::kAligned),
    accept("pack::16b", Form::kLoad, Slot::kPack),
    accept("unpack::16b", Form::kStore, Slot::kPack),
    refuse_prefix("pack::", Form::kAny, Refusal::kPacking),
    refuse_prefix("unpack::", Form::kAny, Refusal::kPacking),
    accept("b32", Form::kAny, Slot::kType),
    refuse("b16", Form::kAny, Refusal::kType),
    refuse("b64", Form::kAny, Refusal::kType),
    refuse("f32", Form::kAny, Refusal::kType),
    refuse("u32", Form::kAny, Refusal::kType),
    refuse("s32", Form::kAny, Refusal::kType),
    refuse("f16", Form::kAny, Refusal::kType),
    refuse("b8", Form::kAny, Refusal::kType),
    refuse("f64", Form::kAny, Refusal::kType),
};

// The fields of a parsed opcode, from which Opcode::parse builds it.
struct OpcodeFields {
  Direction direction = Direction::kLoad;
  Shape shape = Shape::k32x32b;
  int num = 0;
  bool packed = false;
  std::optional<Reduction> reduction;
};

// Reads one opcode text: the head tcgen05.{ld|st}[.red], one qualifier at a time, then the
// presence and order of the qualifiers the form needs.
class OpcodeParser {
 public:
  explicit OpcodeParser(std::string_view text) : text_(text) { pos_.fill(-1); }

  Result<OpcodeFields> parse() {
    if (auto e = read_head()) return *e;
    for (int i = red_ ? 3 : 2; i < static_cast<int>(tokens_.size()); ++i)
      if (auto e = read_qualifier(i)) return *e;
    if (auto e = check_common()) return *e;
    return red_ ? finish_reduce() : finish_plain();
  }

 private:
  Error error(const std::string& what, Rule rule = Rule::kNone) const {
    return opcode_error(text_, what, rule);
  }
  int& pos(Slot slot) { return pos_[static_cast<size_t>(slot)]; }
  std::string plain_form() const {
    return std::string("tcgen05.") + std::string(tmem::to_string(direction_)) +
           ".sync.aligned.SHAPE.xN" +
           (direction_ == Direction::kLoad ? "[.pack::16b]" : "[.unpack::16b]") + ".b32";
  }

  // Splits on '.' and reads tcgen05, the direction and .red.
  std::optional<Error> read_head() {
    // "pack::16b" has no dot, so every qualifier is one token.
    for (size_t start = 0;;) {
      size_t dot = text_.find('.', start);
      tokens_.push_back(text_.substr(start, dot == std::string_view::npos ? dot : dot - start));
      if (dot == std::string_view::npos) break;
      start = dot + 1;
    }
    if (tokens_[0] != "tcgen05")
      return error("expected it to start with 'tcgen05.', got '" + std::string(tokens_[0]) + "'");
    if (tokens_.size() < 2 || tokens_[1].empty())
      return error("missing the operation after 'tcgen05.'; expected ld or st");
    if (tokens_[1] == "ld") {
      direction_ = Direction::kLoad;
    } else if (tokens_[1] == "st") {
      direction_ = Direction::kStore;
    } else {
      return error("operation '." + std::string(tokens_[1]) +
                       "' is not a TMEM transfer; expected ld or st (rule R1)",
                   Rule::kLdOrSt);
    }
    // tcgen05.ld.red: .red directly after ld (PTX ISA 8.8, docs/tcgen05-rules.md §Syntax); there
    // is no st.red.
    red_ = tokens_.size() > 2 && tokens_[2] == "red";
    if (red_ && direction_ == Direction::kStore)
      return error(
          "tcgen05.st has no '.red'; the load with reduction is tcgen05.ld.red "
          "(rule R14)",
          Rule::kLoadReduceForm);
    return std::nullopt;
  }

  const QualifierRow* find_row(std::string_view token) const {
    for (const QualifierRow& row : kQualifiers) {
      if (row.form == Form::kIfReduce && !red_) continue;
      if (row.prefix ? token.starts_with(row.text) : token == row.text) return &row;
    }
    return nullptr;
  }

  std::optional<Error> read_qualifier(int i) {
    const std::string_view token = tokens_[static_cast<size_t>(i)];
    if (token.empty()) return error("empty qualifier (two dots in a row or a final dot)");
    if (const QualifierRow* row = find_row(token)) return read_row(*row, token, i);
    if (token.size() > 1 && token[0] == 'x' && parse_int(token.substr(1)))
      return read_num(token, i);
    return read_shape(token, i);
  }

  std::optional<Error> read_row(const QualifierRow& row, std::string_view token, int i) {
    if (row.form == Form::kReduceOnly && !red_)
      return error("qualifier '." + std::string(token) +
                       "' belongs to tcgen05.ld.red (load with reduction); the form is "
                       "tcgen05.ld.red.sync.aligned.SHAPE.xN.{min|max}[.abs][.NaN].TYPE "
                       "(rule R14)",
                   Rule::kLoadReduceForm);
    if (row.refusal != Refusal::kAccept) return refusal(row.refusal, token);
    if (pos(row.slot) >= 0) return duplicate(token);
    const bool wrong_direction = (row.form == Form::kLoad && direction_ != Direction::kLoad) ||
                                 (row.form == Form::kStore && direction_ != Direction::kStore);
    if (wrong_direction)
      return error("'." + std::string(token) + "' is not allowed on tcgen05." +
                       std::string(tmem::to_string(direction_)) + "; " +
                       (direction_ == Direction::kLoad ? "ld takes '.pack::16b' or nothing"
                                                       : "st takes '.unpack::16b' or nothing") +
                       " (rule R6)",
                   Rule::kPackModeOfDirection);
    pos(row.slot) = i;
    if (row.apply) row.apply(reduction_);
    return std::nullopt;
  }

  Error duplicate(std::string_view token) const {
    return error("qualifier '." + std::string(token) + "' appears twice");
  }

  Error refusal(Refusal why, std::string_view token) const {
    const std::string quoted = "'." + std::string(token) + "'";
    switch (why) {
      case Refusal::kReduction:
        return error("reduction " + quoted +
                         " is not allowed; tcgen05.ld.red takes '.min' or '.max' (rule R14)",
                     Rule::kLoadReduceForm);
      case Refusal::kReduceType:
        return error("type " + quoted +
                         " is not allowed; tcgen05.ld.red takes '.f32', '.u32' or '.s32' "
                         "(rule R14)",
                     Rule::kLoadReduceForm);
      case Refusal::kReducePacking:
        return error(quoted +
                         " is not allowed on tcgen05.ld.red; it loads 32-bit values "
                         "without packing (rule R14)",
                     Rule::kLoadReduceForm);
      case Refusal::kPacking:
        return error("unknown packing " + quoted + "; allowed: " +
                         (direction_ == Direction::kLoad ? "'.pack::16b'" : "'.unpack::16b'") +
                         " (rule R6)",
                     Rule::kPackModeOfDirection);
      case Refusal::kType:
      case Refusal::kAccept:
        break;
    }
    return error("type " + quoted + " is not allowed; tcgen05.ld/st take only '.b32' (rule R7)",
                 Rule::kTypeB32);
  }

  // .xN (rule R3).
  std::optional<Error> read_num(std::string_view token, int i) {
    if (pos(Slot::kNum) >= 0) return duplicate(token);
    num_ = *parse_int(token.substr(1));
    if (!is_power_of_two_num(num_))
      return error("'." + std::string(token) + "' is not a repetition count; allowed: " +
                       std::string(kNumList) + " (rule R3)",
                   Rule::kNumPowerOfTwo);
    pos(Slot::kNum) = i;
    return std::nullopt;
  }

  // A shape of kShapes (rule R2), or the error for any other token.
  std::optional<Error> read_shape(std::string_view token, int i) {
    for (const auto& entry : kShapes) {
      if (entry.name != token) continue;
      if (pos(Slot::kShape) >= 0) return duplicate(token);
      shape_ = entry.shape;
      pos(Slot::kShape) = i;
      return std::nullopt;
    }
    if (std::ranges::find(kCopyShapes, token) != kCopyShapes.end())
      return error("shape '." + std::string(token) +
                       "' belongs to tcgen05.cp, not ld/st; allowed: " + std::string(kShapeList) +
                       " (rule R2)",
                   Rule::kKnownShape);
    if (token[0] >= '0' && token[0] <= '9')
      return error("unknown shape '." + std::string(token) +
                       "'; allowed: " + std::string(kShapeList) + " (rule R2)",
                   Rule::kKnownShape);
    return error("unknown qualifier '." + std::string(token) + "'; the form is " + plain_form());
  }

  // Qualifiers every form needs (rules R2, R3, R8).
  std::optional<Error> check_common() {
    if (pos(Slot::kSync) < 0) return error("missing '.sync' (rule R8)", Rule::kSyncAligned);
    if (pos(Slot::kAligned) < 0)
      return error(
          "missing '.aligned'; the PTX ISA requires it on tcgen05.ld/st even "
          "though ptxas 13.0 accepts its absence (rule R8)",
          Rule::kSyncAligned);
    if (pos(Slot::kShape) < 0)
      return error("missing shape; allowed: " + std::string(kShapeList) + " (rule R2)",
                   Rule::kKnownShape);
    if (pos(Slot::kNum) < 0)
      return error(
          "missing repetition count '.xN'; allowed: " + std::string(kNumList) + " (rule R3)",
          Rule::kNumPowerOfTwo);
    return std::nullopt;
  }

  Result<OpcodeFields> finish_reduce() {
    if (pos(Slot::kRedOp) < 0)
      return error("missing the reduction '.min' or '.max' (rule R14)", Rule::kLoadReduceForm);
    if (pos(Slot::kType) < 0)
      return error("missing type '.f32', '.u32' or '.s32' (rule R14)", Rule::kLoadReduceForm);
    if (auto problem = reduce_field_error(shape_, num_, reduction_))
      return error(*problem + " (rule R14)", Rule::kLoadReduceForm);
    // Order: .sync/.aligned, shape, .xN, then .redOp, .abs, .NaN and the type in any order (ptxas
    // 13.0 accepts each order; the ISA text and its example differ: docs/tcgen05-rules.md
    // §Targets).
    const int pos_type = pos(Slot::kType);
    const int last_sync = std::max(pos(Slot::kSync), pos(Slot::kAligned));
    const int first_reduce =
        std::min({pos(Slot::kRedOp), pos_type, pos(Slot::kAbs) < 0 ? pos_type : pos(Slot::kAbs),
                  pos(Slot::kNaN) < 0 ? pos_type : pos(Slot::kNaN)});
    if (last_sync > pos(Slot::kShape) || pos(Slot::kShape) > pos(Slot::kNum) ||
        pos(Slot::kNum) > first_reduce)
      return error("qualifiers out of order; the form is " + std::string(kReduceForm));
    return OpcodeFields{direction_, shape_, num_, false, reduction_};
  }

  Result<OpcodeFields> finish_plain() {
    if (pos(Slot::kType) < 0) return error("missing type '.b32' (rule R7)", Rule::kTypeB32);
    if (auto problem = field_error(direction_, shape_, num_))
      return error(*problem + " (rule R4)", Rule::kAtMost128Registers);
    // Order: .sync/.aligned (either order), shape, then .xN and pack (either order, as ptxas
    // accepts), and the type last.
    const int pos_num = pos(Slot::kNum), pos_pack = pos(Slot::kPack);
    const int last_sync = std::max(pos(Slot::kSync), pos(Slot::kAligned));
    const int first_after_shape = pos_pack >= 0 ? std::min(pos_num, pos_pack) : pos_num;
    const int last_before_type = std::max(pos_num, pos_pack);
    if (last_sync > pos(Slot::kShape) || pos(Slot::kShape) > first_after_shape ||
        last_before_type > pos(Slot::kType) ||
        pos(Slot::kType) != static_cast<int>(tokens_.size()) - 1)
      return error("qualifiers out of order; the form is " + plain_form());
    return OpcodeFields{direction_, shape_, num_, pos_pack >= 0, std::nullopt};
  }

  std::string_view text_;
  std::vector<std::string_view> tokens_;
  Direction direction_ = Direction::kLoad;
  bool red_ = false;
  std::array<int, static_cast<size_t>(Slot::kCount)> pos_;  // token index per slot; -1: absent
  Shape shape_ = Shape::k32x32b;
  int num_ = 0;
  Reduction reduction_;
};

}  // namespace

std::string_view to_string(Direction direction) noexcept {
  return direction == Direction::kLoad ? "ld" : "st";
}
std::string_view to_string(Shape shape) noexcept { return row(shape).name; }
Span<const Shape> all_shapes() noexcept { return kAllShapes; }
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
  auto fields = OpcodeParser(text).parse();
  if (!fields) return std::move(fields).error();
  return Opcode(fields->direction, fields->shape, fields->num, fields->packed, fields->reduction);
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

Span<const Target> Opcode::targets() const noexcept {
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
