// Renders what the plan's instructions do: every (warp, repeat, lane, register) through the
// opcode's native image (tmem/image.h) to its TMEM cell, i.e. the placement the checker proved.
#include "tools/draw.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

#include "tmem/image.h"

namespace tmemjit_cli {
namespace {

// One register word (or 16-bit half) and where it sits in TMEM.
struct Placement {
  int warp = 0;
  int thread = 0;  // CTA thread
  int slot = 0;
  int half = -1;  // pack/unpack: which 16-bit half of the register; -1 when plain
  int lane = 0;
  int column = 0;  // 32-bit TMEM column, relative to the allocation
};

std::vector<Placement> placements(const tmem::Plan& plan) {
  std::vector<Placement> out;
  const tmem::Opcode& op = plan.op;
  std::array<tmem::TmemCell, 2> cells;
  for (int g = 0; g < plan.warps(); ++g) {
    const int warp = plan.scope.warp_of_group(g);
    for (int k = 0; k < plan.instructions_per_warp(); ++k) {
      for (int access = 0; access < op.accesses(); ++access) {
        std::uint32_t address = plan.address(g, k);
        if (access == 1) address += static_cast<std::uint32_t>(*plan.imm);
        for (int l = 0; l < 32; ++l) {
          for (int r = 0; r < op.regs_per_thread(); ++r) {
            const int count = tmem::tmem_cells(op, l, r, cells);
            for (int c = 0; c < count; ++c) {
              if (cells[c].access != access) continue;
              out.push_back({warp, 32 * warp + l,
                             plan.repeats[static_cast<size_t>(k)].slots[static_cast<size_t>(r)],
                             cells[c].half, static_cast<int>(address >> 16) + cells[c].row,
                             static_cast<int>(address & 0xFFFF) + cells[c].col});
            }
          }
        }
      }
    }
  }
  return out;
}

// Eight warps' colors (light, so black labels stay legible); warp w uses kColors[w % 8].
constexpr const char* kColors[] = {"#aec7e8", "#ffbb78", "#98df8a", "#ff9896",
                                   "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d"};

std::string label(const Placement& p) {
  std::string text = std::to_string(p.thread) + "/" + std::to_string(p.slot);
  if (p.half >= 0) text += p.half ? "h" : "l";
  return text;
}

}  // namespace

std::string draw_svg(const tmem::Plan& plan) {
  const std::vector<Placement> all = placements(plan);
  const int columns = std::max(plan.columns_used, 1);
  const int threads = 32 * plan.scope.launch_warps();
  const int slots = std::max(plan.regs_per_thread, 1);
  constexpr int kCellW = 30, kCellH = 12, kMargin = 40, kGap = 60;
  const int tmem_w = columns * kCellW, regs_x = kMargin + tmem_w + kGap;
  const int width = std::max(regs_x + slots * kCellW + kMargin, 760);  // room for the titles
  const int height = kMargin + std::max(128, threads) * kCellH + kMargin;
  std::string svg;
  char buffer[512];
  auto add = [&](const char* format, auto... args) {
    std::snprintf(buffer, sizeof buffer, format, args...);
    svg += buffer;
  };
  add("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
      "font-family=\"monospace\" "
      "font-size=\"7\">\n",
      width, height);
  add("<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
  svg += "<text x=\"" + std::to_string(kMargin) + "\" y=\"14\" font-size=\"11\">" +
         plan.op.to_string() + " at " + plan.scope.to_string() +
         ": TMEM (lane x column, cell = thread/slot)</text>\n";
  add("<text x=\"%d\" y=\"28\" font-size=\"11\">registers (thread x slot, cell = "
      "lane,column)</text>\n",
      regs_x);
  // Empty grids first, so unused cells show as white with a thin border.
  for (int lane = 0; lane < 128; ++lane)
    for (int col = 0; col < columns; ++col)
      add("<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#ddd\" "
          "stroke-width=\"0.5\"/>\n",
          kMargin + col * kCellW, kMargin + lane * kCellH, kCellW, kCellH);
  for (int lane = 0; lane < 128; lane += 16)
    add("<text x=\"2\" y=\"%d\">%d</text>\n", kMargin + lane * kCellH + 9, lane);
  // A packed cell holds two register halves: draw the low half in the top half of the cell.
  std::map<std::pair<int, int>, int> halves_drawn;
  for (const Placement& p : all) {
    const int x = kMargin + p.column * kCellW, y = kMargin + p.lane * kCellH;
    const bool split_cell = p.half >= 0;
    const int h = split_cell ? kCellH / 2 : kCellH;
    const int dy = split_cell ? (halves_drawn[{p.lane, p.column}]++ ? h : 0) : 0;
    add("<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" stroke=\"#555\" "
        "stroke-width=\"0.3\"/>\n",
        x, y + dy, kCellW, h, kColors[p.warp % 8]);
    add("<text x=\"%d\" y=\"%d\"%s>%s</text>\n", x + 1, y + dy + (split_cell ? 5 : 9),
        split_cell ? " font-size=\"5\"" : "", label(p).c_str());
    // The register image: thread row, slot column.
    const int rx = regs_x + p.slot * kCellW, ry = kMargin + p.thread * kCellH;
    if (p.half <= 0) {
      add("<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" stroke=\"#555\" "
          "stroke-width=\"0.3\"/>\n",
          rx, ry, kCellW, kCellH, kColors[p.warp % 8]);
      add("<text x=\"%d\" y=\"%d\">%d,%d</text>\n", rx + 1, ry + 9, p.lane, p.column);
    }
  }
  for (int thread = 0; thread < threads; thread += 16)
    add("<text x=\"%d\" y=\"%d\">%d</text>\n", regs_x - 20, kMargin + thread * kCellH + 9, thread);
  svg += "</svg>\n";
  return svg;
}

std::string draw_ascii(const tmem::Plan& plan, int max_columns) {
  const std::vector<Placement> all = placements(plan);
  const int columns = std::min(std::max(plan.columns_used, 1), max_columns);
  std::map<std::pair<int, int>, std::string> cell;
  int first_lane = 128, last_lane = -1;
  for (const Placement& p : all) {
    if (p.column >= columns) continue;
    std::string& text = cell[{p.lane, p.column}];
    text += (text.empty() ? "" : "+") + label(p);
    first_lane = std::min(first_lane, p.lane);
    last_lane = std::max(last_lane, p.lane);
  }
  size_t width = 4;
  for (const auto& [at, text] : cell) width = std::max(width, text.size());
  std::string out = plan.op.to_string() + " at " + plan.scope.to_string() +
                    ": TMEM lane x column, each cell thread/slot" +
                    (plan.op.packed() ? " (l/h: low/high 16 bits of the register)" : "") + "\n";
  auto pad = [&](std::string text) {
    text.insert(0, width - std::min(width, text.size()), ' ');
    return text + " ";
  };
  out += "lane ";
  for (int col = 0; col < columns; ++col) out += pad("c" + std::to_string(col));
  out += "\n";
  for (int lane = first_lane; lane <= last_lane; ++lane) {
    std::string number = std::to_string(lane);
    out += std::string(4 - std::min<size_t>(4, number.size()), ' ') + number + " ";
    for (int col = 0; col < columns; ++col) {
      auto it = cell.find({lane, col});
      out += pad(it == cell.end() ? "." : it->second);
    }
    out += "\n";
  }
  if (plan.columns_used > columns)
    out += "(columns " + std::to_string(columns) + ".." + std::to_string(plan.columns_used - 1) +
           " not shown; tmemjit draw -o FILE.svg draws them all)\n";
  return out;
}

}  // namespace tmemjit_cli
