// The SPEC arguments shared by check, plan, ptx, compile and run (docs/design.md §CLI).
#include <algorithm>
#include <filesystem>

#include "tmem/text.h"
#include "tools/cli.h"
#include "tools/source_args.h"

namespace tmemjit_cli {

std::vector<OptionSpec> spec_options() {
  return {{"--op", true},   {"--scope", true}, {"--tmem", true},
          {"--regs", true}, {"--tmem2", true}, {"--imm", true},
          {"--spec", true}, {"--json", false}, {"--explain", false}};
}

std::optional<tmem::Direction> auto_direction(std::string_view op) {
  // `auto` is a store (the seed's round trip starts with st); auto.ld / auto.st say it.
  if (op == "auto" || op == "auto.st") return tmem::Direction::kStore;
  if (op == "auto.ld") return tmem::Direction::kLoad;
  return std::nullopt;
}

tmem::Result<tmem::Selection> selection_from_args(const Args& args,
                                                  const tmem::SelectOptions& options) {
  const std::optional<std::string> op = args.get("--op");
  const auto direction = op ? auto_direction(*op) : std::nullopt;
  if (!direction)
    return tmem::Error(tmem::ErrorCode::kUsage,
                       "--explain and --register-budget need --op auto (or auto.ld, auto.st)");
  for (const char* field : {"--scope", "--tmem", "--regs"})
    if (!args.has(field))
      return tmem::Error(tmem::ErrorCode::kUsage,
                         std::string("missing ") + field +
                             " (--op auto takes --scope and the two tiles as --tmem and --regs)");
  if (args.has("--tmem2") || args.has("--imm") || args.has("--spec"))
    return tmem::Error(tmem::ErrorCode::kUsage,
                       "--op auto selects among the plain forms: it takes no --tmem2, --imm or "
                       "--spec (name a 16x32bx2 opcode with --tmem2 and --imm)");
  auto scope = tmem::Scope::parse(*args.get("--scope"));
  if (!scope) return scope.error();
  auto tmem_view = tmem::View::parse(*args.get("--tmem"));
  if (!tmem_view) return tmem_view.error();
  auto regs_view = tmem::View::parse(*args.get("--regs"));
  if (!regs_view) return regs_view.error();
  return tmem::select(*direction, *scope, *tmem_view, *regs_view, options);
}

tmem::Result<int> cta_group_from_args(const Args& args) {
  const std::string text = args.get("--cta-group").value_or("1");
  if (text == "1") return 1;
  if (text == "2") return 2;
  return tmem::Error(tmem::ErrorCode::kUsage,
                     "--cta-group takes 1 (one CTA) or 2 (a CTA pair), not '" + text + "'");
}

tmem::Status check_file_agrees_with_flags(const tmem::SpecFile& file, const Args& args,
                                          std::string_view path,
                                          const std::optional<NameFlag>& name) {
  auto has_key = [&](const char* key) {
    return std::find(file.option_keys.begin(), file.option_keys.end(), key) !=
           file.option_keys.end();
  };
  auto disagree = [&](const std::string& key, const std::string& file_value,
                      const std::string& flag) {
    return tmem::Error(tmem::ErrorCode::kUsage, "spec file '" + tmem::quote_excerpt(path) +
                                                    "' says \"" + key + "\": " + file_value +
                                                    " but the command line says " + flag +
                                                    "; drop one of them or make them agree");
  };
  if (name && has_key("name") && file.options.name != name->value)
    return disagree("name", nlohmann::json(file.options.name).dump(),
                    name->flag + " " + tmem::quote_excerpt(name->value));
  if (args.has("--no-wait") && has_key("wait") && file.options.wait)
    return disagree("wait", "true", "--no-wait");
  if (args.has("--warp-arg") && has_key("warp_argument") && !file.options.warp_argument)
    return disagree("warp_argument", "false", "--warp-arg");
  if (args.has("--column-arg") && has_key("column_argument") && !file.options.column_argument)
    return disagree("column_argument", "false", "--column-arg");
  // A --cta-group that is not 1 or 2 is cta_group_from_args's error, not a disagreement.
  if (auto group = cta_group_from_args(args);
      args.has("--cta-group") && group && has_key("cta_group") && *group != file.options.cta_group)
    return disagree("cta_group", std::to_string(file.options.cta_group),
                    "--cta-group " + std::to_string(*group));
  return std::monostate{};
}

tmem::Result<tmem::TransferSpec> spec_from_args(const Args& args) {
  auto file = spec_file_from_args(args, {});
  if (!file) return file.error();
  return std::move(file->spec);
}

tmem::Result<tmem::SpecFile> spec_file_from_args(const Args& args,
                                                 const tmem::DeviceFunctionOptions& defaults) {
  if (!args.positional().empty()) {
    const std::string& word = args.positional()[0];
    std::error_code ec;
    const bool file = word.ends_with(".json") || std::filesystem::is_regular_file(word, ec);
    return tmem::Error(tmem::ErrorCode::kUsage,
                       "unexpected argument '" + word + "'; " +
                           (file ? "a spec file goes in --spec " + word
                                 : std::string("quote views that contain spaces")));
  }
  if (auto path = args.get("--spec")) {
    for (const char* field : {"--op", "--scope", "--tmem", "--regs", "--tmem2", "--imm"})
      if (args.has(field))
        return tmem::Error(tmem::ErrorCode::kUsage,
                           std::string("--spec and ") + field + " cannot be combined");
    // A spec is a few hundred bytes: at most 1 MiB is read, so a huge file or an endless one
    // (/dev/zero is refused, a pipe is cut off) fails without being read (docs/reliability.md).
    auto text = read_text(*path, std::streamsize{1} << 20, "spec file");
    if (!text) return text.error();
    auto file = tmem::parse_spec_file(*text, defaults);
    if (!file) return file.error();
    std::optional<NameFlag> name;
    if (auto given = args.get("--name")) name = NameFlag{"--name", *given};
    if (auto agreed = check_file_agrees_with_flags(*file, args, *path, name); !agreed)
      return agreed.error();
    return file;
  }
  for (const char* field : {"--op", "--scope", "--tmem", "--regs"})
    if (!args.has(field))
      return tmem::Error(tmem::ErrorCode::kUsage,
                         std::string("missing ") + field +
                             " (SPEC := --op OPCODE --scope S --tmem VIEW --regs VIEW "
                             "[--tmem2 VIEW --imm N] | --spec FILE.json)");
  if (auto_direction(*args.get("--op"))) {
    auto selection = selection_from_args(args);
    if (!selection) return selection.error();
    return tmem::SpecFile{std::move(selection->spec), defaults, {}};
  }
  std::optional<std::string> tmem2 = args.get("--tmem2"), imm = args.get("--imm");
  std::optional<std::string_view> tmem2_view, imm_view;
  if (tmem2) tmem2_view = *tmem2;
  if (imm) imm_view = *imm;
  auto spec =
      tmem::TransferSpec::from_fields(*args.get("--op"), *args.get("--scope"), *args.get("--tmem"),
                                      *args.get("--regs"), tmem2_view, imm_view);
  if (!spec) return spec.error();
  return tmem::SpecFile{std::move(spec).value(), defaults, {}};
}

}  // namespace tmemjit_cli
