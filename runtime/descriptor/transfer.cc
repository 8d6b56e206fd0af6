// Scope and TransferSpec: parsing, canonical text and JSON forms.
#include "tmem/transfer.h"

#include <charconv>
#include <nlohmann/json.hpp>
#include <ostream>

#include "tmem/text.h"

namespace tmem {
namespace {

// A spec is a few hundred bytes; longer text is refused before any parsing (docs/reliability.md:
// limits).
constexpr size_t kMaxSpecBytes = size_t{1} << 20;

Error too_long(std::string_view what, size_t bytes) {
  return Error(ErrorCode::kLimit,
               std::string(what) + " of " + std::to_string(bytes) + " bytes is longer than 1 MiB");
}

// `text` for an error message, cut to its first 64 bytes so hostile input keeps messages short.
std::string excerpt(std::string_view text) {
  if (text.size() <= 64) return std::string(text);
  return std::string(text.substr(0, 64)) + "... (" + std::to_string(text.size()) + " bytes)";
}

std::optional<std::int64_t> parse_integer(std::string_view text) {
  // Accepts decimal, 0x-hex and a leading '-' (the immediate is a signed 32-bit offset).
  bool negative = !text.empty() && text[0] == '-';
  if (negative) text.remove_prefix(1);
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return negative ? -value : value;
}

std::uint64_t mix(std::uint64_t seed, std::uint64_t value) {
  seed ^= value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
  return seed;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\r'))
    text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r'))
    text.remove_suffix(1);
  return text;
}

Result<View> parse_operand(std::string_view name, std::string_view text) {
  auto view = View::parse(text);
  if (!view) {
    return Error(view.error().code(), std::string(name) + " operand: " + view.error().message(),
                 view.error().details());
  }
  return std::move(view).value();
}

}  // namespace

Result<Scope> Scope::warp(int w) {
  if (w < 0 || w >= 32)
    return Error(ErrorCode::kParse,
                 "scope warp:" + std::to_string(w) + " names no warp; W must be in 0..31");
  return Scope(Kind::kWarp, w);
}

Result<Scope> Scope::cta(int warps) {
  if (warps < 1 || warps > 32)
    return Error(ErrorCode::kParse, "scope cta:" + std::to_string(warps) +
                                        " is not a warp count; NW must be in 1..32 (1024 threads)");
  return Scope(Kind::kCta, warps);
}

Result<Scope> Scope::parse(std::string_view text) {
  text = trim(text);
  if (text == "warpgroup") return warpgroup();
  auto number = [&](std::string_view prefix) -> std::optional<std::int64_t> {
    if (!text.starts_with(prefix)) return std::nullopt;
    return parse_integer(text.substr(prefix.size()));
  };
  if (text.starts_with("warp:")) {
    auto w = number("warp:");
    if (!w || *w < 0 || *w >= 32)
      return Error(ErrorCode::kParse,
                   "scope '" + excerpt(text) + "' names no warp; W must be in 0..31");
    return warp(static_cast<int>(*w));
  }
  if (text.starts_with("cta:")) {
    auto n = number("cta:");
    if (!n || *n < 1 || *n > 32)
      return Error(ErrorCode::kParse,
                   "scope '" + excerpt(text) + "' is not a warp count; NW must be in 1..32");
    return cta(static_cast<int>(*n));
  }
  return Error(ErrorCode::kParse,
               "unknown scope '" + excerpt(text) + "'; expected warp:W, warpgroup or cta:NW");
}

std::string Scope::to_string() const {
  switch (kind_) {
    case Kind::kWarp:
      return "warp:" + std::to_string(value_);
    case Kind::kWarpgroup:
      return "warpgroup";
    case Kind::kCta:
      return "cta:" + std::to_string(value_);
  }
  return "warpgroup";
}

Result<TransferSpec> TransferSpec::make(Opcode op, Scope scope, View tmem, View regs,
                                        std::optional<View> tmem2,
                                        std::optional<std::int64_t> imm) {
  if (op.is_split()) {
    if (!tmem2)
      return Error(ErrorCode::kRule,
                   "shape: " + op.to_string() +
                       " performs two accesses and needs the second TMEM region (--tmem2)")
          .set_rule(Rule::kShape);
    if (!imm)
      return Error(ErrorCode::kRule,
                   "shape: " + op.to_string() +
                       " needs the immediate immHalfSplitoff (--imm), the TMEM address "
                       "delta of the second access (rule R9)")
          .set_rule(Rule::kSplitOffsetOnlyFor16x32bx2);
    if (*imm < INT32_MIN || *imm > UINT32_MAX)
      return Error(ErrorCode::kRule, "imm: immHalfSplitoff " + std::to_string(*imm) +
                                         " does not fit a 32-bit TMEM address delta")
          .set_rule(Rule::kImm);
  } else {
    if (tmem2)
      return Error(ErrorCode::kRule,
                   "shape: a second TMEM region (--tmem2) is only for .16x32bx2, not " +
                       op.to_string())
          .set_rule(Rule::kShape);
    if (imm)
      return Error(ErrorCode::kRule, "shape: an immediate (--imm) is only for .16x32bx2, not " +
                                         op.to_string() + " (rule R9)")
          .set_rule(Rule::kSplitOffsetOnlyFor16x32bx2);
  }
  return TransferSpec(op, scope, std::move(tmem), std::move(regs), std::move(tmem2), imm);
}

Result<TransferSpec> TransferSpec::from_fields(std::string_view op_text,
                                               std::string_view scope_text,
                                               std::string_view tmem_text,
                                               std::string_view regs_text,
                                               std::optional<std::string_view> tmem2_text,
                                               std::optional<std::string_view> imm_text) {
  auto op = Opcode::parse(trim(op_text));
  if (!op) return op.error();
  auto scope = Scope::parse(scope_text);
  if (!scope) return scope.error();
  auto tmem = parse_operand("tmem", tmem_text);
  if (!tmem) return tmem.error();
  auto regs = parse_operand("regs", regs_text);
  if (!regs) return regs.error();
  std::optional<View> tmem2;
  if (tmem2_text) {
    auto parsed = parse_operand("tmem2", *tmem2_text);
    if (!parsed) return parsed.error();
    tmem2 = std::move(parsed).value();
  }
  std::optional<std::int64_t> imm;
  if (imm_text) {
    imm = parse_integer(trim(*imm_text));
    if (!imm)
      return Error(ErrorCode::kParse, "imm '" + excerpt(*imm_text) +
                                          "' is not an integer literal that fits in 64 bits");
  }
  return make(*op, *scope, std::move(tmem).value(), std::move(regs).value(), std::move(tmem2), imm);
}

Result<TransferSpec> TransferSpec::parse(std::string_view text) {
  if (text.size() > kMaxSpecBytes) return too_long("spec text", text.size());
  std::optional<std::string_view> fields[6];
  static constexpr std::string_view kKeys[6] = {"op", "scope", "tmem", "regs", "tmem2", "imm"};
  int line_number = 0;
  while (!text.empty()) {
    ++line_number;
    size_t end = text.find('\n');
    std::string_view line = trim(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (line.empty() || line[0] == '#') continue;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos)
      return Error(ErrorCode::kParse,
                   "spec line " + std::to_string(line_number) +
                       ": expected 'key: value' (keys: op, scope, tmem, regs, tmem2, imm)");
    std::string_view key = trim(line.substr(0, colon));
    int index = -1;
    for (int i = 0; i < 6; ++i)
      if (kKeys[i] == key) index = i;
    if (index < 0)
      return Error(ErrorCode::kParse, "spec line " + std::to_string(line_number) +
                                          ": unknown key '" + excerpt(key) +
                                          "' (keys: op, scope, tmem, regs, tmem2, imm)");
    if (fields[index])
      return Error(ErrorCode::kParse, "spec line " + std::to_string(line_number) + ": key '" +
                                          std::string(key) + "' given twice");
    fields[index] = trim(line.substr(colon + 1));
  }
  for (int i = 0; i < 4; ++i)
    if (!fields[i])
      return Error(ErrorCode::kParse, "spec has no '" + std::string(kKeys[i]) + "' line");
  return from_fields(*fields[0], *fields[1], *fields[2], *fields[3], fields[4], fields[5]);
}

Result<TransferSpec> TransferSpec::from_json(std::string_view json_text) {
  auto file = from_json_with_options(json_text);
  if (!file.ok()) return std::move(file).error();
  return std::move(file->first);
}

Result<std::pair<TransferSpec, TransferSpec::FileOptions>> TransferSpec::from_json_with_options(
    std::string_view json_text) {
  if (json_text.size() > kMaxSpecBytes) return too_long("spec JSON", json_text.size());
  // nlohmann's parser ends the text at a NUL byte: what followed it was silently dropped.
  if (const size_t nul = json_text.find('\0'); nul != std::string_view::npos)
    return Error(ErrorCode::kParse,
                 "spec JSON has a NUL byte at offset " + std::to_string(nul) + "; it is not text");
  if (Status depth = check_json_depth(json_text, "spec JSON"); !depth.ok())
    return std::move(depth).error();
  nlohmann::json json = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return Error(ErrorCode::kParse, "spec is not valid JSON");
  if (!json.is_object())
    return Error(ErrorCode::kParse, "spec JSON must be an object with keys op, scope, tmem, regs");
  static constexpr std::string_view kKeys[6] = {"op", "scope", "tmem", "regs", "tmem2", "imm"};
  static constexpr std::string_view kOptionKeys[5] = {"name", "wait", "warp_argument",
                                                      "column_argument", "cta_group"};
  for (auto it = json.begin(); it != json.end(); ++it) {
    bool known = false;
    for (auto key : kKeys) known |= it.key() == key;
    for (auto key : kOptionKeys) known |= it.key() == key;
    if (!known)
      return Error(ErrorCode::kParse, "spec JSON has an unknown key '" + excerpt(it.key()) +
                                          "' (keys: op, scope, tmem, regs, tmem2, imm; device "
                                          "function: name, wait, warp_argument, "
                                          "column_argument, cta_group)");
  }
  FileOptions options;
  for (std::string_view key : kOptionKeys) {
    auto it = json.find(std::string(key));
    if (it == json.end()) continue;
    options.keys.emplace_back(key);
    if (key == "name") {
      if (!it->is_string())
        return Error(ErrorCode::kParse,
                     "spec JSON key 'name' must be a string, got " + excerpt(it->dump()));
      options.name = it->get<std::string>();
    } else if (key == "cta_group") {
      // Range-checked as JSON: get<int>() read 4294967298 as 2 (issue 30).
      if (!it->is_number_integer() || (*it != 1 && *it != 2))
        return Error(ErrorCode::kParse,
                     "spec JSON key 'cta_group' must be 1 or 2, got " + excerpt(it->dump()));
      options.cta_group = it->get<int>();
    } else {
      if (!it->is_boolean())
        return Error(ErrorCode::kParse, "spec JSON key '" + std::string(key) +
                                            "' must be true or false, got " + excerpt(it->dump()));
      std::optional<bool>& field = key == "wait"            ? options.wait
                                   : key == "warp_argument" ? options.warp_argument
                                                            : options.column_argument;
      field = it->get<bool>();
    }
  }
  std::string values[5];
  for (int i = 0; i < 5; ++i) {
    auto it = json.find(std::string(kKeys[i]));
    if (it == json.end()) {
      if (i < 4)
        return Error(ErrorCode::kParse, "spec JSON has no '" + std::string(kKeys[i]) + "' key");
      continue;
    }
    if (!it->is_string())
      return Error(ErrorCode::kParse,
                   "spec JSON key '" + std::string(kKeys[i]) + "' must be a string");
    values[i] = it->get<std::string>();
  }
  std::optional<std::string> imm;
  if (auto it = json.find("imm"); it != json.end()) {
    // Unsigned first: get<int64_t>() would wrap values above INT64_MAX to negative immediates.
    if (it->is_number_unsigned())
      imm = std::to_string(it->get<std::uint64_t>());
    else if (it->is_number_integer())
      imm = std::to_string(it->get<std::int64_t>());
    else if (it->is_string())
      imm = it->get<std::string>();
    else
      return Error(ErrorCode::kParse, "spec JSON key 'imm' must be an integer");
  }
  std::optional<std::string_view> tmem2;
  if (json.contains("tmem2")) tmem2 = values[4];
  std::optional<std::string_view> imm_view;
  if (imm) imm_view = *imm;
  auto spec =
      TransferSpec::from_fields(values[0], values[1], values[2], values[3], tmem2, imm_view);
  if (!spec.ok()) return std::move(spec).error();
  return std::pair{std::move(spec).value(), std::move(options)};
}

std::string TransferSpec::to_string() const {
  std::string text = "op: " + op_.to_string() + "\nscope: " + scope_.to_string() +
                     "\ntmem: " + tmem_.to_string() + "\nregs: " + regs_.to_string() + "\n";
  if (tmem2_) text += "tmem2: " + tmem2_->to_string() + "\n";
  if (imm_) text += "imm: " + std::to_string(*imm_) + "\n";
  return text;
}

std::string TransferSpec::to_json() const {
  nlohmann::json json = {{"op", op_.to_string()},
                         {"scope", scope_.to_string()},
                         {"tmem", tmem_.to_string()},
                         {"regs", regs_.to_string()}};
  if (tmem2_) json["tmem2"] = tmem2_->to_string();
  if (imm_) json["imm"] = *imm_;
  return json.dump();
}

std::uint64_t TransferSpec::hash() const noexcept {
  std::uint64_t h = op_.hash();
  h = mix(h, static_cast<std::uint64_t>(scope_.kind()) << 8 |
                 static_cast<std::uint64_t>(scope_.groups()) << 16 |
                 static_cast<std::uint64_t>(scope_.warp_id()));
  h = mix(h, tmem_.hash());
  h = mix(h, regs_.hash());
  h = mix(h, tmem2_ ? tmem2_->hash() : 0x5bd1e995u);
  h = mix(h, imm_ ? static_cast<std::uint64_t>(*imm_) : 0xfeedfaceu);
  return h;
}

std::ostream& operator<<(std::ostream& os, const TransferSpec& spec) {
  return os << spec.to_string();
}

}  // namespace tmem
