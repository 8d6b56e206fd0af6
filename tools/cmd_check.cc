// tmemjit check / tmemjit plan: validate a transfer against the native-image rules and print its
// plan, with warnings for what is legal but likely costly (Plan::warnings).
#include <charconv>
#include <iostream>
#include <nlohmann/json.hpp>

#include "tmem/check.h"
#include "tools/cli.h"

namespace tmemjit_cli {
namespace {

// --op auto with --register-budget N: the selection of tmem::select under that budget.
tmem::Result<tmem::Selection> budgeted_selection(const Args& args, const std::string& budget_text) {
  int budget = 0;
  const char* end = budget_text.data() + budget_text.size();
  auto [ptr, ec] = std::from_chars(budget_text.data(), end, budget);
  if (budget_text.empty() || ec != std::errc() || ptr != end || budget < 1)
    return tmem::Error(tmem::ErrorCode::kUsage,
                       "--register-budget takes a number of registers per instruction (1..128), "
                       "not '" +
                           budget_text + "'");
  return selection_from_args(args, {.register_budget = budget});
}

int check_or_plan(const std::vector<std::string>& argv, bool full) {
  std::vector<OptionSpec> options = spec_options();
  options.push_back({"--register-budget", true});
  auto args = parse_args(full ? "plan" : "check", argv, options);
  if (!args) return report(args.error(), false);
  const bool json = args->json();
  // --explain with --op auto keeps the whole selection (every form tried and why it won or
  // lost); otherwise the spec alone. --register-budget selects under that budget.
  std::optional<tmem::Selection> selection;
  std::optional<tmem::TransferSpec> spec;
  const std::optional<std::string> budget = args->get("--register-budget");
  if (budget || args->has("--explain")) {
    auto selected = budget ? budgeted_selection(*args, *budget) : selection_from_args(*args);
    if (!selected) return report(selected.error(), json);
    spec = selected->spec;
    if (args->has("--explain")) selection = std::move(*selected);
  } else {
    auto parsed = spec_from_args(*args);
    if (!parsed) return report(parsed.error(), json);
    spec = std::move(*parsed);
  }
  auto plan = selection ? tmem::Result<tmem::Plan>(selection->plan) : tmem::check(*spec);
  if (!plan) return report(plan.error(), json);
  const std::vector<std::string> warnings = plan->warnings();
  if (json) {
    auto out = nlohmann::json::parse(plan->to_json(full));
    out["ok"] = true;  // the command's envelope (docs/design.md §CLI)
    out["warnings"] = warnings;
    if (selection) {
      out["spec"] = nlohmann::json::parse(selection->spec.to_json());
      out["notes"] = selection->notes;  // how the register tile's dtype chose the forms
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
    for (const std::string& warning : warnings) std::cerr << "warning: " << warning << "\n";
  }
  return kExitOk;
}

}  // namespace

int cmd_check(const std::vector<std::string>& argv) { return check_or_plan(argv, false); }
int cmd_plan(const std::vector<std::string>& argv) { return check_or_plan(argv, true); }

}  // namespace tmemjit_cli
