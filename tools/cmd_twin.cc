// tmemjit twin: the 16-bit store whose register q holds a load's registers 2q and 2q + 1 (FA4's P
// over S; tmem::packed_twin, docs/design.md §Production), printed as the spec JSON that --spec
// takes.
#include <iostream>

#include "tmem/coords.h"
#include "tools/cli.h"

namespace tmemjit_cli {

int cmd_twin(const std::vector<std::string>& argv) {
  std::vector<OptionSpec> options = spec_options();
  options.push_back({"--dtype", true});
  auto args = parse_args("twin", argv, options);
  if (!args) return report(args.error(), false);
  const bool json = args->json();
  if (args->has("--explain"))
    return report(tmem::Error(tmem::ErrorCode::kUsage, "twin takes no --explain (check does)"),
                  json);
  const std::optional<std::string> dtype_text = args->get("--dtype");
  if (!dtype_text)
    return report(tmem::Error(tmem::ErrorCode::kUsage,
                              "missing --dtype: the twin's 16-bit type, bf16 or f16"),
                  json);
  const std::optional<tmem::DType> dtype = tmem::parse_dtype(*dtype_text);
  if (!dtype || tmem::bits(*dtype) != 16)
    return report(
        tmem::Error(tmem::ErrorCode::kUsage, "--dtype '" + *dtype_text + "'; allowed: bf16, f16"),
        json);
  auto spec = spec_from_args(*args);
  if (!spec) return report(spec.error(), json);
  auto twin = tmem::packed_twin(*spec, *dtype);
  if (!twin) return report(twin.error(), json);
  // The spec itself, with or without --json: `tmemjit twin ... > p.json` feeds `--spec p.json`.
  std::cout << twin->to_json() << "\n";
  return kExitOk;
}

}  // namespace tmemjit_cli
