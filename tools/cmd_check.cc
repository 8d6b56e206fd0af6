// tmemjit check / tmemjit plan: validate a transfer against the native-image rules and print its plan.
#include <iostream>

#include "tmem/check.h"
#include "tools/cli.h"

namespace tmemjit_cli {
namespace {

int check_or_plan(const std::vector<std::string>& argv, bool full) {
  auto args = parse_args(argv, spec_options());
  if (!args) return report(args.error(), false);
  const bool json = args->json();
  auto spec = spec_from_args(*args);
  if (!spec) return report(spec.error(), json);
  auto plan = tmem::check(*spec);
  if (!plan) return report(plan.error(), json);
  if (json) {
    std::cout << plan->to_json(full) << "\n";
  } else {
    std::cout << (full ? plan->to_string() : plan->summary());
  }
  return kExitOk;
}

}  // namespace

int cmd_check(const std::vector<std::string>& argv) { return check_or_plan(argv, false); }
int cmd_plan(const std::vector<std::string>& argv) { return check_or_plan(argv, true); }

}  // namespace tmemjit_cli
