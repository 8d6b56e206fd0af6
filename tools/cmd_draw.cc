// tmemjit draw SPEC [-o FILE.svg] [--ascii]: the transfer's TMEM and register images as a picture.
#include <fstream>
#include <iostream>

#include "tmem/check.h"
#include "tools/cli.h"
#include "tools/draw.h"

namespace tmemjit_cli {

int cmd_draw(const std::vector<std::string>& argv) {
  std::vector<OptionSpec> options = spec_options();
  options.push_back({"-o", true});
  options.push_back({"--ascii", false});
  options.push_back({"--columns", true});
  auto args = parse_args("draw", argv, options);
  if (!args) return report(args.error(), false);
  auto spec = spec_from_args(*args);
  if (!spec) return report(spec.error(), false);
  auto plan = tmem::check(*spec);
  if (!plan) return report(plan.error(), false);
  const auto output = args->get("-o");
  if (args->has("--ascii") || !output) {
    int columns = 32;
    if (auto text = args->get("--columns")) {
      try {
        columns = std::stoi(*text);
      } catch (const std::exception&) {
        columns = 0;
      }
      if (columns < 1 || columns > 512)
        return report(tmem::Error(tmem::ErrorCode::kUsage, "--columns takes a number in 1..512"),
                      false);
    }
    std::cout << draw_ascii(*plan, columns);
  }
  if (output) {
    if (auto written = write_output_file(*output, draw_svg(*plan)); !written)
      return report(written.error(), false);
    std::cerr << "wrote " << *output << "\n";
  }
  return kExitOk;
}

}  // namespace tmemjit_cli
