// Text and JSON forms of a Plan.
#include "tmem/plan.h"

#include <nlohmann/json.hpp>
#include <sstream>

namespace tmem {
namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? "," : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

// "0-63" for contiguous slots, else the list.
std::string slots_text(const std::vector<int>& slots) {
  bool contiguous = true;
  for (size_t i = 1; i < slots.size(); ++i) contiguous &= slots[i] == slots[i - 1] + 1;
  if (contiguous && slots.size() > 2)
    return std::to_string(slots.front()) + "-" + std::to_string(slots.back());
  std::string text;
  for (size_t i = 0; i < slots.size(); ++i) text += (i ? "," : "") + std::to_string(slots[i]);
  return text;
}

}  // namespace

std::vector<std::string> Plan::warnings() const {
  std::vector<std::string> out;
  if (regs_per_thread > kSpillWarningRegisters) {
    out.push_back("spills likely: the plan holds " + std::to_string(regs_per_thread) +
                  " registers per thread (" + std::to_string(instructions_per_warp()) + " x " +
                  op.to_string() + "), leaving " +
                  std::to_string(kMaxRegistersPerThread - regs_per_thread) + " of a thread's " +
                  std::to_string(kMaxRegistersPerThread) +
                  " for the rest of a kernel; move the tile in transfers of at most " +
                  std::to_string(kSpillWarningRegisters) + " registers per thread");
  }
  return out;
}

std::string Plan::summary() const {
  std::ostringstream os;
  os << "ok: " << op.to_string() << " at scope " << scope.to_string() << "\n"
     << "  warps " << warps() << ", " << instructions_per_warp() << " instruction"
     << (instructions_per_warp() == 1 ? "" : "s") << " per warp (repeats "
     << shape_text(repeat_shape) << ")\n"
     << "  " << regs_per_thread << " registers per thread, " << columns_used
     << " TMEM columns used, allocation " << alloc_columns << " columns\n";
  if (group_column_stride) os << "  column stride per warp " << group_column_stride << "\n";
  if (warpgroup_column_stride)
    os << "  column stride per warpgroup " << warpgroup_column_stride << "\n";
  if (op.reduces() && !repeats.empty())
    os << "  reduction " << op.reduction()->to_string() << ": redval of instruction k in slot "
       << repeats.front().redval_slot << " + k\n";
  if (imm)
    os << "  immHalfSplitoff " << *imm << " (lane +" << (static_cast<std::uint32_t>(*imm) >> 16)
       << ", column +" << (static_cast<std::uint32_t>(*imm) & 0xFFFF) << ")\n";
  return os.str();
}

std::string Plan::to_string() const {
  std::ostringstream os;
  os << summary();
  for (size_t k = 0; k < repeats.size(); ++k) {
    const RepeatStep& step = repeats[k];
    os << "  repeat " << shape_text(step.index) << ": lane offset " << step.lane_offset
       << ", column " << step.column << ", slots " << slots_text(step.slots);
    if (step.redval_slot >= 0) os << ", redval slot " << step.redval_slot;
    os << "\n";
  }
  return os.str();
}

std::string Plan::to_json(bool full) const {
  nlohmann::json json = {{"op", op.to_string()},
                         {"scope", scope.to_string()},
                         {"warps", warps()},
                         {"repeats", instructions_per_warp()},
                         {"repeat_shape", repeat_shape},
                         {"instructions_per_warp", instructions_per_warp()},
                         {"regs_per_thread", regs_per_thread},
                         {"alloc_columns", alloc_columns},
                         {"columns_used", columns_used},
                         {"group_column_stride", group_column_stride},
                         {"warpgroup_column_stride", warpgroup_column_stride}};
  if (imm) json["imm"] = *imm;
  if (op.reduces()) {  // ld.red: one reduction result per instruction, in these slots
    nlohmann::json redval_slots = nlohmann::json::array();
    for (const RepeatStep& step : repeats) redval_slots.push_back(step.redval_slot);
    json["reduction"] = op.reduction()->to_string();
    json["redval_slots"] = redval_slots;
  }
  if (full) {
    nlohmann::json steps = nlohmann::json::array();
    for (const RepeatStep& step : repeats) {
      steps.push_back({{"index", step.index},
                       {"lane_offset", step.lane_offset},
                       {"column", step.column},
                       {"slots", step.slots}});
      if (step.redval_slot >= 0) steps.back()["redval_slot"] = step.redval_slot;
    }
    json["steps"] = steps;
    nlohmann::json addresses = nlohmann::json::array();
    for (int g = 0; g < warps(); ++g) {
      nlohmann::json per_warp = nlohmann::json::array();
      for (size_t k = 0; k < repeats.size(); ++k)
        per_warp.push_back(address(g, static_cast<int>(k)));
      addresses.push_back({{"warp", scope.warp_of_group(g)}, {"taddr", per_warp}});
    }
    json["addresses"] = addresses;
  }
  return json.dump(2);
}

}  // namespace tmem
