// The SPEC arguments shared by check, plan, ptx, compile and run (DESIGN.md §5).
#include <fstream>
#include <sstream>

#include "tools/cli.h"

namespace tmemjit_cli {

std::vector<OptionSpec> spec_options() {
  return {{"--op", true},    {"--scope", true}, {"--tmem", true}, {"--regs", true},
          {"--tmem2", true}, {"--imm", true},   {"--spec", true}, {"--json", false}};
}

tmem::Result<tmem::TransferSpec> spec_from_args(const Args& args) {
  if (!args.positional().empty())
    return tmem::Error(tmem::ErrorCode::kUsage, "unexpected argument '" + args.positional()[0] +
                                                    "'; quote views that contain spaces");
  if (auto path = args.get("--spec")) {
    for (const char* field : {"--op", "--scope", "--tmem", "--regs", "--tmem2", "--imm"})
      if (args.has(field))
        return tmem::Error(tmem::ErrorCode::kUsage, std::string("--spec and ") + field + " cannot be combined");
    std::ifstream in(*path);
    if (!in) return tmem::Error(tmem::ErrorCode::kUsage, "cannot read spec file '" + *path + "'");
    std::stringstream buffer;
    buffer << in.rdbuf();
    // Refuse absurd files before parsing them (a spec is a few hundred bytes).
    if (buffer.str().size() > (1u << 20))
      return tmem::Error(tmem::ErrorCode::kLimit, "spec file '" + *path + "' is larger than 1 MiB");
    return tmem::TransferSpec::from_json(buffer.str());
  }
  for (const char* field : {"--op", "--scope", "--tmem", "--regs"})
    if (!args.has(field))
      return tmem::Error(tmem::ErrorCode::kUsage, std::string("missing ") + field +
                                                      " (SPEC := --op OPCODE --scope S --tmem VIEW --regs VIEW "
                                                      "[--tmem2 VIEW --imm N] | --spec FILE.json)");
  std::optional<std::string> tmem2 = args.get("--tmem2"), imm = args.get("--imm");
  std::optional<std::string_view> tmem2_view, imm_view;
  if (tmem2) tmem2_view = *tmem2;
  if (imm) imm_view = *imm;
  return tmem::TransferSpec::from_fields(*args.get("--op"), *args.get("--scope"), *args.get("--tmem"),
                                         *args.get("--regs"), tmem2_view, imm_view);
}

}  // namespace tmemjit_cli
