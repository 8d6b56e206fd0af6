// tmemjit layout: the shape, dtype, canonical text and physical coordinates of a view
// (docs/design.md §CLI).
#include <charconv>
#include <iostream>
#include <sstream>

#include "tmem/layout.h"
#include "tmem/view.h"
#include "tools/cli.h"

namespace tmemjit_cli {
namespace {

// Views with at most this many elements print a full table when --at is not given.
constexpr std::int64_t kMaxTableElements = 4096;

// Parses "--at 1,2,3" (optionally in parentheses or brackets).
tmem::Result<std::vector<std::int64_t>> parse_at(std::string_view text) {
  std::vector<std::int64_t> out;
  std::string_view body = text;
  if (body.size() >= 2 &&
      ((body.front() == '(' && body.back() == ')') || (body.front() == '[' && body.back() == ']')))
    body = body.substr(1, body.size() - 2);
  size_t pos = 0;
  while (true) {
    while (pos < body.size() && body[pos] == ' ') ++pos;
    std::int64_t value = 0;
    const char* first = body.data() + pos;
    auto [end, ec] = std::from_chars(first, body.data() + body.size(), value);
    if (ec != std::errc() || end == first)
      return tmem::Error(tmem::ErrorCode::kParse,
                         "--at '" + std::string(text) + "': expected an integer at character " +
                             std::to_string(pos + 1 + (body.data() - text.data())));
    out.push_back(value);
    pos = static_cast<size_t>(end - body.data());
    while (pos < body.size() && body[pos] == ' ') ++pos;
    if (pos >= body.size()) break;
    if (body[pos] != ',')
      return tmem::Error(tmem::ErrorCode::kParse,
                         "--at '" + std::string(text) + "': expected ',' at character " +
                             std::to_string(pos + 1 + (body.data() - text.data())));
    ++pos;
  }
  return out;
}

nlohmann::json coord_json(const tmem::PhysCoord& coord, tmem::AxisMask axes) {
  nlohmann::json out = nlohmann::json::object();
  for (tmem::Axis axis : tmem::all_axes())
    if (axes & tmem::axis_bit(axis)) out[std::string(tmem::to_string(axis))] = coord[axis];
  return out;
}

std::string tuple_text(std::span<const std::int64_t> values) {
  std::string out = "(";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + std::to_string(values[i]);
  return out + ")";
}

// Row-major coordinate of flat index `flat` in `shape`.
std::vector<std::int64_t> unflatten(std::int64_t flat, std::span<const std::int64_t> shape) {
  std::vector<std::int64_t> coord(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    coord[d] = flat % shape[d];
    flat /= shape[d];
  }
  return coord;
}

}  // namespace

int cmd_layout(const std::vector<std::string>& argv) {
  auto args = parse_args("layout", argv, {{"--json", false}, {"--at", true}});
  if (!args) return report(args.error(), false);
  const bool json = args->json();
  if (args->positional().size() != 1)
    return report(tmem::Error(tmem::ErrorCode::kUsage,
                              "layout takes exactly one VIEW, e.g. "
                              "'tmem_datapath_layout(\"B\", 64, 128)' (quote it for the shell)"),
                  json);
  auto view = tmem::View::parse(args->positional()[0]);
  if (!view) return report(view.error(), json);
  const tmem::AxisMask axes = view->axes();
  const std::vector<std::int64_t> shape(view->shape().begin(), view->shape().end());
  const std::string dtype(tmem::to_string(view->dtype()));

  std::optional<std::vector<std::int64_t>> at;
  std::vector<tmem::PhysCoord> at_coords;
  if (auto text = args->get("--at")) {
    auto parsed = parse_at(*text);
    if (!parsed) return report(parsed.error(), json);
    auto coords = view->apply(*parsed);
    if (!coords) return report(coords.error(), json);
    at = std::move(*parsed);
    at_coords = std::move(*coords);
  }
  const bool table = !at && view->size() <= kMaxTableElements;
  const auto replicas = view->replica_offsets();

  if (json) {
    nlohmann::json out = {{"ok", true},
                          {"shape", shape},
                          {"dtype", dtype},
                          {"layout", view->to_string()},
                          {"elements", view->size()},
                          {"replicas", static_cast<std::int64_t>(replicas.size())}};
    nlohmann::json axis_names = nlohmann::json::array();
    for (tmem::Axis axis : tmem::all_axes())
      if (axes & tmem::axis_bit(axis)) axis_names.push_back(std::string(tmem::to_string(axis)));
    out["axes"] = axis_names;
    if (at) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& coord : at_coords) list.push_back(coord_json(coord, axes));
      out["coord"] = *at;
      out["at"] = list;
    } else if (table) {
      nlohmann::json rows = nlohmann::json::array();
      tmem::PhysCoord base;
      for (std::int64_t flat = 0; flat < view->size(); ++flat) {
        view->apply_flat(flat, base);
        nlohmann::json list = nlohmann::json::array();
        for (const auto& delta : replicas) {
          tmem::PhysCoord coord = base;
          coord += delta;
          list.push_back(coord_json(coord, axes));
        }
        rows.push_back({{"coord", unflatten(flat, shape)}, {"at", list}});
      }
      out["table"] = rows;
    }
    print_json(out);
    return kExitOk;
  }

  std::cout << "shape: " << tuple_text(shape) << "\n"
            << "dtype: " << dtype << "\n"
            << "layout: " << view->to_string() << "\n";
  if (tmem::bits(view->dtype()) == 16)
    std::cout << "units: TCol and m count 16-bit halves (unit u is half u%2 of 32-bit word u/2)\n";
  if (at) {
    for (const auto& coord : at_coords)
      std::cout << "at " << tuple_text(*at) << ": " << tmem::to_string(coord, axes) << "\n";
    return kExitOk;
  }
  if (!table) {
    std::cout << "(" << view->size() << " elements, more than " << kMaxTableElements
              << ": pass --at i,j,... to see one)\n";
    return kExitOk;
  }
  std::ostringstream table_text;
  table_text << "coordinate";
  for (tmem::Axis axis : tmem::all_axes())
    if (axes & tmem::axis_bit(axis)) table_text << "\t" << tmem::to_string(axis);
  table_text << "\n";
  tmem::PhysCoord base;
  for (std::int64_t flat = 0; flat < view->size(); ++flat) {
    view->apply_flat(flat, base);
    const std::string coord_text = tuple_text(unflatten(flat, shape));
    for (const auto& delta : replicas) {
      tmem::PhysCoord coord = base;
      coord += delta;
      table_text << coord_text;
      for (tmem::Axis axis : tmem::all_axes())
        if (axes & tmem::axis_bit(axis)) table_text << "\t" << coord[axis];
      table_text << "\n";
    }
  }
  std::cout << table_text.str();
  return kExitOk;
}

}  // namespace tmemjit_cli
