// tmemjit describe / tmemjit image: decode an opcode and print its native image.
#include <iomanip>
#include <iostream>
#include <sstream>

#include "tmem/image.h"
#include "tmem/opcode.h"
#include "tools/cli.h"

namespace tmemjit_cli {
namespace {

std::string pack_mode(const tmem::Opcode& op) {
  if (!op.packed()) return "none";
  return op.is_load() ? "pack::16b" : "unpack::16b";
}

// Parses "OPCODE [--json]"; on failure returns the exit code through `exit`.
std::optional<tmem::Opcode> opcode_argument(const std::vector<std::string>& argv, const char* name,
                                            bool& json, int& exit) {
  auto args = parse_args(name, argv, {{"--json", false}});
  if (!args) {
    exit = report(args.error(), false);
    return std::nullopt;
  }
  json = args->json();
  if (args->positional().size() != 1) {
    exit = report(tmem::Error(tmem::ErrorCode::kUsage, std::string(name) +
                                                           " takes exactly one OPCODE, e.g. " +
                                                           "tcgen05.ld.sync.aligned.32x32b.x4.b32"),
                  json);
    return std::nullopt;
  }
  auto op = tmem::Opcode::parse(args->positional()[0]);
  if (!op) {
    exit = report(op.error(), json, {{"valid", false}});
    return std::nullopt;
  }
  return *op;
}

}  // namespace

int cmd_describe(const std::vector<std::string>& argv) {
  bool json = false;
  int exit = 0;
  auto op = opcode_argument(argv, "describe", json, exit);
  if (!op) return exit;
  nlohmann::json targets = nlohmann::json::array();
  nlohmann::json versions = nlohmann::json::object();
  for (tmem::Target target : op->targets()) {
    targets.push_back(std::string(tmem::to_string(target)));
    versions[std::string(tmem::to_string(target))] = op->min_ptx_version(target).to_string();
  }
  if (json) {
    print_json({{"ok", true},
                {"valid", true},
                {"opcode", op->to_string()},
                {"dir", std::string(tmem::to_string(op->direction()))},
                {"shape", std::string(tmem::to_string(op->shape()))},
                {"num", op->num()},
                {"pack", op->packed()},
                {"pack_mode", pack_mode(*op)},
                {"regs", op->regs_per_thread()},
                {"atom_rows", op->atom_rows()},
                {"atom_cols", op->atom_cols()},
                {"atom_tmem_cols", op->atom_tmem_cols()},
                {"accesses", op->accesses()},
                {"columns", op->atom_tmem_cols()},
                {"needs_immediate", op->is_split()},
                {"reduction", op->reduces() ? nlohmann::json(op->reduction()->to_string())
                                            : nlohmann::json(nullptr)},
                {"redval", op->reduces() ? 1 : 0},
                {"ptx_version", op->min_ptx_version().to_string()},
                {"min_ptx_version", versions},
                {"targets", targets}});
    return kExitOk;
  }
  std::cout << "opcode     " << op->to_string() << "\n"
            << "direction  "
            << (op->is_load() ? "ld (TMEM -> registers)" : "st (registers -> TMEM)") << "\n"
            << "shape      " << tmem::to_string(op->shape()) << " (" << op->atom_rows()
            << " TMEM lanes per access"
            << (op->is_split() ? ", two accesses: taddr and taddr+imm" : "") << ")\n"
            << "num        x" << op->num() << "\n"
            << "pack       " << pack_mode(*op) << "\n"
            << "registers  " << op->regs_per_thread() << " per thread"
            << (op->reduces() ? " (loaded), plus redval: one register with the " +
                                    op->reduction()->to_string() + " over them"
                              : "")
            << "\n"
            << "atom       " << op->atom_rows() << " rows x " << op->atom_cols()
            << " columns of register words";
  if (op->packed())
    std::cout << "; " << op->atom_rows() << " x " << op->atom_tmem_cols()
              << " TMEM cells (16-bit halves)";
  std::cout << "\ncolumns    " << op->atom_tmem_cols() << " TMEM columns per access\n"
            << "ptx        .version " << op->min_ptx_version().to_string() << " or later\n"
            << "targets   ";
  for (tmem::Target target : op->targets())
    std::cout << " " << tmem::to_string(target)
              << " (.version >= " << op->min_ptx_version(target).to_string() << ")";
  std::cout << "\n";
  return kExitOk;
}

int cmd_image(const std::vector<std::string>& argv) {
  bool json = false;
  int exit = 0;
  auto op = opcode_argument(argv, "image", json, exit);
  if (!op) return exit;
  std::array<tmem::TmemCell, 2> cells;
  if (json) {
    nlohmann::json entries = nlohmann::json::array();
    for (int lane = 0; lane < 32; ++lane) {
      for (int reg = 0; reg < op->regs_per_thread(); ++reg) {
        int count = tmem::tmem_cells(*op, lane, reg, cells);
        for (int i = 0; i < count; ++i) {
          nlohmann::json entry = {
              {"lane", lane}, {"reg", reg}, {"row", cells[i].row}, {"col", cells[i].col}};
          if (cells[i].half >= 0) entry["half"] = cells[i].half;
          if (op->is_split()) entry["access"] = cells[i].access;
          entries.push_back(std::move(entry));
        }
      }
    }
    nlohmann::json out = {{"opcode", op->to_string()}, {"entries", entries}};
    if (op->reduces())  // the image of the load, plus redval: lane -> reduction of its registers
      out["redval"] = {{"reduction", op->reduction()->to_string()},
                       {"regs", op->regs_per_thread()}};
    print_json(out);
    return kExitOk;
  }
  // A picture of each access: TMEM rows down, TMEM columns across, each cell "lane.reg"
  // (with pack, ".h" names the 16-bit half of the register the cell's low half carries).
  const int rows = op->atom_rows(), cols = op->atom_tmem_cols();
  std::vector<std::string> grid(static_cast<size_t>(op->accesses() * rows * cols));
  for (int lane = 0; lane < 32; ++lane) {
    for (int reg = 0; reg < op->regs_per_thread(); ++reg) {
      int count = tmem::tmem_cells(*op, lane, reg, cells);
      for (int i = 0; i < count; ++i) {
        std::ostringstream label;
        label << lane << "." << reg;
        if (cells[i].half >= 0) label << "." << (cells[i].half == 0 ? "lo" : "hi");
        grid[static_cast<size_t>((cells[i].access * rows + cells[i].row) * cols + cells[i].col)] =
            label.str();
      }
    }
  }
  size_t width = 0;
  for (const auto& label : grid) width = std::max(width, label.size());
  std::cout << op->to_string() << ": cell = lane.register" << (op->packed() ? ".half" : "") << "\n";
  if (op->reduces())
    std::cout << "redval: each lane's " << op->reduction()->to_string() << " over its registers 0.."
              << op->regs_per_thread() - 1 << "\n";
  for (int access = 0; access < op->accesses(); ++access) {
    if (op->is_split())
      std::cout << (access == 0 ? "access 0 at taddr (lanes 0-15)\n"
                                : "access 1 at taddr + imm (lanes 16-31)\n");
    std::cout << "row\\col";
    for (int c = 0; c < cols; ++c) std::cout << " " << std::setw(static_cast<int>(width)) << c;
    std::cout << "\n";
    for (int r = 0; r < rows; ++r) {
      std::cout << std::setw(7) << r;
      for (int c = 0; c < cols; ++c)
        std::cout << " " << std::setw(static_cast<int>(width))
                  << grid[static_cast<size_t>((access * rows + r) * cols + c)];
      std::cout << "\n";
    }
  }
  return kExitOk;
}

}  // namespace tmemjit_cli
