// tmemjit check / tmemjit plan: validate a transfer against the native-image rules and print its
// plan.
#include <iostream>
#include <nlohmann/json.hpp>

#include "tmem/check.h"
#include "tools/cli.h"

namespace tmemjit_cli {
namespace {

int check_or_plan(const std::vector<std::string>& argv, bool full) {
  auto args = parse_args(argv, spec_options());
  if (!args) return report(args.error(), false);
  const bool json = args->json();
  // --explain with --op auto keeps the whole selection (every form tried and why it won or
  // lost); otherwise the spec alone.
  std::optional<tmem::Selection> selection;
  std::optional<tmem::TransferSpec> spec;
  if (args->has("--explain")) {
    auto selected = selection_from_args(*args);
    if (!selected) return report(selected.error(), json);
    selection = std::move(*selected);
    spec = selection->spec;
  } else {
    auto parsed = spec_from_args(*args);
    if (!parsed) return report(parsed.error(), json);
    spec = std::move(*parsed);
  }
  auto plan = selection ? tmem::Result<tmem::Plan>(selection->plan) : tmem::check(*spec);
  if (!plan) return report(plan.error(), json);
  if (json) {
    auto out = nlohmann::json::parse(plan->to_json(full));
    if (selection) {
      out["spec"] = nlohmann::json::parse(selection->spec.to_json());
      for (const auto& candidate : selection->considered)
        out["considered"].push_back(
            {{"op", candidate.op.to_string()}, {"verdict", candidate.verdict}});
    }
    std::cout << out.dump() << "\n";
  } else {
    if (selection)
      std::cout << "selection:\n"
                << selection->explain() << "spec:\n"
                << selection->spec.to_string() << "\n";
    std::cout << (full ? plan->to_string() : plan->summary());
  }
  return kExitOk;
}

}  // namespace

int cmd_check(const std::vector<std::string>& argv) { return check_or_plan(argv, false); }
int cmd_plan(const std::vector<std::string>& argv) { return check_or_plan(argv, true); }

}  // namespace tmemjit_cli
