#include "runtime/jit/entry_meta.h"

#include <limits>
#include <nlohmann/json.hpp>

namespace tmem {
namespace {

using json = nlohmann::json;

// Our own entries nest three deep; anything deeper is not ours (and a deep one would recurse).
constexpr int kMaxDepth = 8;

Error damaged(const std::string& why) {
  return Error(ErrorCode::kIo, "cache entry metadata is damaged or from another build: " + why,
               "tmemjit cache clear removes it; the next call compiles again");
}

// A field whose value is of the right type but out of its range; parse() reports it as the
// damage it is, as it does nlohmann's type errors.
struct OutOfRange {
  std::string why;
};

// A count the entry keeps, checked rather than converted: nlohmann's get<int>() turns 2^32 + 2
// into 2 and 1e30 into INT_MIN, so a forged or damaged entry would read as other numbers (issue
// 39, N14). An integer in [min, INT_MAX], or the entry is damaged, naming the field and its text.
int count(const json& object, const char* field, int min = 0) {
  const json& value = object.at(field);
  constexpr int kMax = std::numeric_limits<int>::max();
  if (value.is_number_unsigned()) {
    if (value.get<uint64_t>() <= static_cast<uint64_t>(kMax)) return value.get<int>();
  } else if (value.is_number_integer()) {
    const int64_t number = value.get<int64_t>();
    if (number >= min && number <= kMax) return static_cast<int>(number);
  }
  throw OutOfRange{std::string("'") + field + "' must be an integer in [" + std::to_string(min) +
                   ", " + std::to_string(kMax) + "], got " + value.dump()};
}

}  // namespace

std::string KernelEntryMeta::to_json() const {
  json transfers_json = json::array();
  for (const CompileReport::Transfer& t : transfers)
    transfers_json.push_back({{"name", t.name},
                              {"op", t.op},
                              {"regs_per_thread", t.regs_per_thread},
                              {"instructions_per_warp", t.instructions_per_warp},
                              {"alloc_columns", t.alloc_columns}});
  json checked_json = json::array();
  for (const kernels::EmulatedInstruction& op : checked)
    checked_json.push_back({{"text", op.text},
                            {"function", op.function},
                            {"body_index", op.body_index},
                            {"access", op.access},
                            {"rows", op.rows},
                            {"columns", op.columns},
                            {"alloc_columns", op.alloc_columns}});
  const json doc = {{"format", kFormat},
                    {"kind", kind},
                    {"entry", entry},
                    {"target", target},
                    {"backend", backend},
                    {"emulated", emulated},
                    {"transfers", transfers_json},
                    {"instructions", instructions},
                    {"checked", checked_json},
                    {"warnings", warnings},
                    {"headers", headers},
                    {"include_files", include_files},
                    {"code",
                     {{"registers", code.registers},
                      {"local_bytes", code.local_bytes},
                      {"instructions", code.instructions},
                      {"ldtm", code.ldtm},
                      {"sttm", code.sttm},
                      {"disassembler", code.disassembler}}},
                    {"log", log}};
  // Invalid UTF-8 (a log quoting the user's bytes) is replaced, never a throw.
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<KernelEntryMeta> KernelEntryMeta::parse(std::string_view text, std::string_view kind) {
  bool too_deep = false;
  const json::parser_callback_t depth_limit = [&](int depth, json::parse_event_t, json&) {
    if (depth > kMaxDepth) too_deep = true;
    return !too_deep;
  };
  const json doc = json::parse(text.begin(), text.end(), depth_limit, /*allow_exceptions=*/false);
  if (too_deep) return damaged("nested more than " + std::to_string(kMaxDepth) + " levels");
  if (doc.is_discarded() || !doc.is_object()) return damaged("not a JSON object");
  try {
    // Compared as JSON, never converted: 2^32 + 2 or 2.5 read as an int would pass for 2.
    const auto format = doc.find("format");
    if (format == doc.end() || !format->is_number_integer() || *format != kFormat)
      return damaged("format " + (format == doc.end() ? std::string("missing") : format->dump()) +
                     ", this library reads " + std::to_string(kFormat));
    KernelEntryMeta meta;
    meta.kind = doc.at("kind").get<std::string>();
    if (meta.kind != "kernel" && meta.kind != "transfer")
      return damaged("kind " + json(meta.kind).dump() + ", neither \"kernel\" nor \"transfer\"");
    // A harness kernel's entry under a compile_kernel key (or the reverse) would launch another
    // call's kernel with this call's arguments (issue 39, N14).
    if (meta.kind != kind)
      return damaged("a " + meta.kind + " entry where a " + std::string(kind) +
                     " entry belongs (compile_" + std::string(kind) + "'s key)");
    meta.entry = doc.at("entry").get<std::string>();
    meta.target = doc.at("target").get<std::string>();
    meta.backend = doc.at("backend").get<std::string>();
    meta.emulated = doc.at("emulated").get<bool>();
    for (const json& t : doc.at("transfers"))
      meta.transfers.push_back({t.at("name").get<std::string>(), t.at("op").get<std::string>(),
                                count(t, "regs_per_thread"), count(t, "instructions_per_warp"),
                                count(t, "alloc_columns")});
    meta.instructions = doc.at("instructions").get<std::vector<std::string>>();
    for (const json& op : doc.at("checked"))
      meta.checked.push_back({op.at("text").get<std::string>(),
                              op.at("function").get<std::string>(), count(op, "body_index"),
                              op.at("access").get<bool>(), count(op, "rows"), count(op, "columns"),
                              count(op, "alloc_columns")});
    meta.warnings = doc.at("warnings").get<std::vector<std::string>>();
    meta.headers = doc.at("headers").get<std::string>();
    meta.include_files = count(doc, "include_files");
    const json& code = doc.at("code");
    meta.code.registers = count(code, "registers");
    meta.code.local_bytes = count(code, "local_bytes");
    meta.code.instructions = count(code, "instructions");
    meta.code.ldtm = count(code, "ldtm", -1);  // -1: not counted (CodeStats)
    meta.code.sttm = count(code, "sttm", -1);
    meta.code.disassembler = code.at("disassembler").get<std::string>();
    meta.log = doc.at("log").get<std::string>();
    if (meta.entry.empty()) return damaged("no entry");
    return meta;
  } catch (const OutOfRange& e) {
    return damaged(e.why);
  } catch (const json::exception& e) {
    return damaged(e.what());
  }
}

}  // namespace tmem
