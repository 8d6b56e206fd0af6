// tmemjit coords: which logical element each thread holds in each register of a transfer
// (tmem::coord_table, docs/design.md §Production).
#include <iostream>
#include <sstream>

#include "tmem/coords.h"
#include "tools/cli.h"

namespace tmemjit_cli {
namespace {

std::string index_text(const tmem::CoordTable& table, int t, int r, int h) {
  if (!table.used(t, r, h)) return "-";
  std::string out = "(";
  for (int d = 0; d < table.rank; ++d) out += (d ? "," : "") + std::to_string(table.at(t, r, h, d));
  return out + ")";
}

}  // namespace

int cmd_coords(const std::vector<std::string>& argv) {
  auto args = parse_args("coords", argv, spec_options());
  if (!args) return report(args.error(), false);
  const bool json = args->json();
  if (args->has("--explain"))
    return report(tmem::Error(tmem::ErrorCode::kUsage, "coords takes no --explain (check does)"),
                  json);
  auto spec = spec_from_args(*args);
  if (!spec) return report(spec.error(), json);
  auto table = tmem::coord_table(*spec);
  if (!table) return report(table.error(), json);
  const tmem::CoordTable& t = *table;
  if (json) {
    // The table nested as its shape: [thread][register][dim], or [thread][register][half][dim].
    nlohmann::json threads = nlohmann::json::array();
    for (int thread = 0; thread < t.threads; ++thread) {
      nlohmann::json regs = nlohmann::json::array();
      for (int r = 0; r < t.registers; ++r) {
        nlohmann::json halves = nlohmann::json::array();
        for (int h = 0; h < t.halves; ++h) {
          nlohmann::json index = nlohmann::json::array();
          for (int d = 0; d < t.rank; ++d) index.push_back(t.at(thread, r, h, d));
          halves.push_back(std::move(index));
        }
        regs.push_back(t.halves == 2 ? std::move(halves) : std::move(halves[0]));
      }
      threads.push_back(std::move(regs));
    }
    nlohmann::json out = {{"ok", true},
                          {"op", spec->op().to_string()},
                          {"scope", spec->scope().to_string()},
                          {"shape", t.shape()},
                          {"threads", t.threads},
                          {"registers", t.registers},
                          {"halves", t.halves},
                          {"rank", t.rank},
                          {"table", std::move(threads)}};
    std::cout << out.dump() << "\n";  // one line: a table has up to 1024 x 255 x 2 entries
    return kExitOk;
  }
  std::ostringstream os;
  os << spec->op().to_string() << " at scope " << spec->scope().to_string() << ": " << t.threads
     << " threads x " << t.registers << " registers"
     << (t.halves == 2 ? " x 2 halves (low/high)" : "") << ", rank " << t.rank
     << "\n(thread: register=index in the register tensor as written; - where unused)\n";
  for (int thread = 0; thread < t.threads; ++thread) {
    os << "thread " << thread << ":";
    for (int r = 0; r < t.registers; ++r) {
      os << " " << r << "=" << index_text(t, thread, r, 0);
      if (t.halves == 2) os << "/" << index_text(t, thread, r, 1);
    }
    os << "\n";
  }
  std::cout << os.str();
  return kExitOk;
}

}  // namespace tmemjit_cli
