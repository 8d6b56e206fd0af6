// Argument parsing and error reporting shared by every tmemjit command.
#include "tools/cli.h"

#include <iostream>

namespace tmemjit_cli {

std::optional<std::string> Args::get(std::string_view name) const {
  auto it = values_.find(std::string(name));
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

tmem::Result<Args> parse_args(const std::vector<std::string>& argv,
                              const std::vector<OptionSpec>& options) {
  Args args;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& word = argv[i];
    // Options start with '-' ("--json", "-o"); views, opcodes and paths never do.
    if (word.size() < 2 || word[0] != '-' || (word[1] >= '0' && word[1] <= '9')) {
      args.positional_.push_back(word);
      continue;
    }
    std::string name = word;
    std::optional<std::string> inline_value;
    if (auto eq = word.find('='); eq != std::string::npos) {
      name = word.substr(0, eq);
      inline_value = word.substr(eq + 1);
    }
    const OptionSpec* spec = nullptr;
    for (const auto& candidate : options)
      if (candidate.name == name) spec = &candidate;
    if (spec == nullptr) {
      std::string allowed;
      for (const auto& candidate : options)
        allowed += (allowed.empty() ? "" : ", ") + candidate.name;
      return tmem::Error(tmem::ErrorCode::kUsage, "unknown option '" + name + "' (allowed: " +
                                                      (allowed.empty() ? "none" : allowed) + ")");
    }
    if (!spec->takes_value) {
      if (inline_value)
        return tmem::Error(tmem::ErrorCode::kUsage, "option '" + name + "' takes no value");
      args.values_[name] = "";
      continue;
    }
    if (inline_value) {
      args.values_[name] = *inline_value;
    } else if (i + 1 < argv.size()) {
      // "--keep --json" would otherwise make "--json" the directory and lose the option; a value
      // that really is such a word goes in as "--keep=--json".
      const std::string& next = argv[i + 1];
      const std::string next_name = next.substr(0, next.find('='));
      for (const auto& candidate : options)
        if (candidate.name == next_name)
          return tmem::Error(
              tmem::ErrorCode::kUsage,
              "option '" + name + "' needs a value, got the option '" + next_name + "'");
      args.values_[name] = argv[++i];
    } else {
      return tmem::Error(tmem::ErrorCode::kUsage, "option '" + name + "' needs a value");
    }
  }
  return args;
}

int exit_code(const tmem::Error& error) {
  switch (error.code()) {
    case tmem::ErrorCode::kUsage:
      return kExitUsage;
    case tmem::ErrorCode::kToolchain:
    case tmem::ErrorCode::kDriver:
    case tmem::ErrorCode::kIo:
    case tmem::ErrorCode::kInternal:
      return kExitToolchain;
    case tmem::ErrorCode::kWrongData:
      return kExitWrongData;
    default:
      return kExitInvalidInput;
  }
}

int report(const tmem::Error& error, bool json, const nlohmann::json& extra) {
  if (json) {
    nlohmann::json details =
        error.details().empty() ? nlohmann::json() : nlohmann::json(error.details());
    nlohmann::json object = {{"ok", false},
                             {"error",
                              {{"code", tmem::to_string(error.code())},
                               {"message", error.message()},
                               {"details", details}}}};
    if (error.rule() != tmem::Rule::kNone)
      object["error"]["rule"] = std::string(tmem::to_string(error.rule()));
    object.update(extra);
    print_json(object);
  }
  std::cerr << "error: " << error.message() << "\n";
  if (!error.details().empty())
    std::cerr << error.details() << (error.details().back() == '\n' ? "" : "\n");
  return exit_code(error);
}

void print_json(const nlohmann::json& object) { std::cout << object.dump(2) << "\n"; }

}  // namespace tmemjit_cli
