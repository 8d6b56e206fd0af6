// tmemjit run: random data through a transfer's harness kernels on a device, PASS or FAIL.
#include <charconv>
#include <iostream>

#include "tmem/check.h"
#include "tmem/run.h"
#include "tools/cli.h"

namespace tmemjit_cli {

int cmd_run(const std::vector<std::string>& argv) {
  std::vector<OptionSpec> options = with_cache_options(spec_options());
  options.push_back({"--device", true});
  options.push_back({"--seed", true});
  options.push_back({"--cta-group", true});
  auto args = parse_args("run", argv, options);
  if (!args) return report(args.error(), false);
  const bool json = args->json();
  // The gpu and emu devices compile through the cache; the simulator ignores it.
  if (auto applied = apply_cache_args(*args); !applied) return report(applied.error(), json);
  tmem::RunOptions run_options;
  if (auto device = args->get("--device")) {
    auto parsed = tmem::parse_device(*device);
    if (!parsed) return report(parsed.error(), json);
    run_options.device = *parsed;
  }
  if (auto seed = args->get("--seed")) {
    const char* end = seed->data() + seed->size();
    auto [ptr, ec] = std::from_chars(seed->data(), end, run_options.seed);
    if (seed->empty() || ec != std::errc() || ptr != end)
      return report(tmem::Error(tmem::ErrorCode::kUsage,
                                "--seed takes an unsigned 64-bit integer, not '" + *seed + "'"),
                    json);
  }
  auto cta_group = cta_group_from_args(*args);
  if (!cta_group) return report(cta_group.error(), json);
  // A --spec file's cta_group counts here as in compile: it was read and dropped, and the run used
  // the flag's (issue 39, N19).
  tmem::DeviceFunctionOptions defaults;
  defaults.cta_group = *cta_group;
  auto file = spec_file_from_args(*args, defaults);
  if (!file) return report(file.error(), json);
  run_options.cta_group = file->options.cta_group;
  auto result = tmem::run_transfer(file->spec, run_options);
  if (!result) return report(result.error(), json);
  if (json) {
    auto out = nlohmann::json::parse(result->to_json());
    out["ok"] = true;  // the command's envelope (docs/design.md §CLI)
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << result->to_string();
  }
  return result->passed() ? kExitOk : kExitWrongData;
}

}  // namespace tmemjit_cli
