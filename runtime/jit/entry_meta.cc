#include "runtime/jit/entry_meta.h"

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

Result<KernelEntryMeta> KernelEntryMeta::parse(std::string_view text) {
  bool too_deep = false;
  const json::parser_callback_t depth_limit = [&](int depth, json::parse_event_t, json&) {
    if (depth > kMaxDepth) too_deep = true;
    return !too_deep;
  };
  const json doc = json::parse(text.begin(), text.end(), depth_limit, /*allow_exceptions=*/false);
  if (too_deep) return damaged("nested more than " + std::to_string(kMaxDepth) + " levels");
  if (doc.is_discarded() || !doc.is_object()) return damaged("not a JSON object");
  try {
    if (doc.value("format", 0) != kFormat)
      return damaged("format " + doc.value("format", json(0)).dump() + ", this library reads " +
                     std::to_string(kFormat));
    KernelEntryMeta meta;
    meta.kind = doc.at("kind").get<std::string>();
    if (meta.kind != "kernel" && meta.kind != "transfer")
      return damaged("kind " + json(meta.kind).dump() + ", neither \"kernel\" nor \"transfer\"");
    meta.entry = doc.at("entry").get<std::string>();
    meta.target = doc.at("target").get<std::string>();
    meta.backend = doc.at("backend").get<std::string>();
    meta.emulated = doc.at("emulated").get<bool>();
    for (const json& t : doc.at("transfers"))
      meta.transfers.push_back({t.at("name").get<std::string>(), t.at("op").get<std::string>(),
                                t.at("regs_per_thread").get<int>(),
                                t.at("instructions_per_warp").get<int>(),
                                t.at("alloc_columns").get<int>()});
    meta.instructions = doc.at("instructions").get<std::vector<std::string>>();
    for (const json& op : doc.at("checked"))
      meta.checked.push_back({op.at("text").get<std::string>(),
                              op.at("function").get<std::string>(), op.at("body_index").get<int>(),
                              op.at("access").get<bool>(), op.at("rows").get<int>(),
                              op.at("columns").get<int>(), op.at("alloc_columns").get<int>()});
    meta.warnings = doc.at("warnings").get<std::vector<std::string>>();
    meta.headers = doc.at("headers").get<std::string>();
    meta.include_files = doc.at("include_files").get<int>();
    const json& code = doc.at("code");
    meta.code.registers = code.at("registers").get<int>();
    meta.code.local_bytes = code.at("local_bytes").get<int>();
    meta.code.instructions = code.at("instructions").get<int>();
    meta.code.ldtm = code.at("ldtm").get<int>();
    meta.code.sttm = code.at("sttm").get<int>();
    meta.code.disassembler = code.at("disassembler").get<std::string>();
    meta.log = doc.at("log").get<std::string>();
    if (meta.entry.empty()) return damaged("no entry");
    return meta;
  } catch (const json::exception& e) {
    return damaged(e.what());
  }
}

}  // namespace tmem
