// check() -> Plan and select() -> Selection (docs/transfer-semantics.md §Rules, docs/design.md
// §Python): the verdict on a spec, and the choice of an opcode for two tiles.
#include "tmem/check.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "bindings.h"
#include "tmem/plan.h"
#include "tmem/select.h"

namespace tmemjit_py {
namespace {

// The plan's JSON (the keys of `tmemjit plan --json`) as a dict, through Python's json so that
// the library stays the one place that names the keys.
nb::dict plan_dict(const tmem::Plan& plan, bool full) {
  nb::dict dict =
      nb::cast<nb::dict>(nb::module_::import_("json").attr("loads")(plan.to_json(full)));
  return dict;
}

tmem::Direction parse_direction(const std::string& text) {
  if (text == "st" || text == "store") return tmem::Direction::kStore;
  if (text == "ld" || text == "load") return tmem::Direction::kLoad;
  raise(tmem::ErrorCode::kUsage, "direction '" + text + "' is not one of st, ld, store, load");
}

void bind_plan(nb::module_& m) {
  nb::class_<tmem::RepeatStep>(m, "RepeatStep",
                               "One instruction per warp of a Plan: repeat k of the transfer.")
      .def_ro("index", &tmem::RepeatStep::index,
              "the repeat coordinate (empty without repeat axes)")
      .def_ro("lane_offset", &tmem::RepeatStep::lane_offset, "h_k: 0, or 16 on the upper half-slab")
      .def_ro("column", &tmem::RepeatStep::column,
              "c_k: the 32-bit TMEM column of group 0's access")
      .def_ro("slots", &tmem::RepeatStep::slots, "register slot of each instruction register")
      .def("__repr__",
           [](const tmem::RepeatStep& s) {
             return std::string("RepeatStep(lane_offset=") + std::to_string(s.lane_offset) +
                    ", column=" + std::to_string(s.column) +
                    ", slots=" + nb::repr(nb::cast(s.slots)).c_str() + ")";
           })
      .def(
          "__eq__", [](const tmem::RepeatStep& a, const tmem::RepeatStep& b) { return a == b; },
          nb::is_operator(), kEqSignature);

  nb::class_<tmem::Plan>(
      m, "Plan",
      "A checked transfer, instruction by instruction (docs/transfer-semantics.md §Plan).\n"
      "str() is the listing of `tmemjit plan`; to_dict() holds the keys of `tmemjit plan --json`.")
      .def_prop_ro(
          "op", [](const tmem::Plan& p) { return p.op.to_string(); }, "the opcode's PTX spelling")
      .def_prop_ro("scope", [](const tmem::Plan& p) { return p.scope.to_string(); })
      .def_prop_ro("warps", &tmem::Plan::warps, "warps that issue the instruction")
      .def_prop_ro("repeats", &tmem::Plan::instructions_per_warp,
                   "instructions per warp (the CLI's JSON key); the steps themselves are .steps")
      .def_prop_ro("instructions_per_warp", &tmem::Plan::instructions_per_warp)
      .def_ro("steps", &tmem::Plan::repeats,
              "the RepeatStep of each instruction, row-major over repeat_shape")
      .def_ro("repeat_shape", &tmem::Plan::repeat_shape, "extents of the repeat axes")
      .def_ro("regs_per_thread", &tmem::Plan::regs_per_thread, "register budget: highest slot + 1")
      .def_ro("alloc_columns", &tmem::Plan::alloc_columns, "TMEM columns to allocate: 32 ... 512")
      .def_ro("columns_used", &tmem::Plan::columns_used, "one past the highest column touched")
      .def_ro("group_column_stride", &tmem::Plan::group_column_stride,
              "d: column step per warp rank")
      .def_ro("warpgroup_column_stride", &tmem::Plan::warpgroup_column_stride,
              "e: column step per warpgroup")
      .def_ro("imm", &tmem::Plan::imm, "immHalfSplitoff of 16x32bx2, else None")
      .def("address", &tmem::Plan::address, "group"_a, "repeat"_a,
           "TMEM address (lane << 16 | column) of `repeat` for the warp of `group`, relative to "
           "the allocation")
      .def("summary", &tmem::Plan::summary, "The paragraph `tmemjit check` prints.")
      .def("to_dict", &plan_dict, "full"_a = true,
           "The keys of `tmemjit plan --json` (full) or `tmemjit check --json`, without \"ok\".")
      .def("__str__", &tmem::Plan::to_string)
      .def("__repr__",
           [](const tmem::Plan& p) {
             return "<tmemjit.Plan " + p.op.to_string() + " " + p.scope.to_string() + ": " +
                    std::to_string(p.instructions_per_warp()) + " instructions per warp, " +
                    std::to_string(p.regs_per_thread) + " registers per thread, " +
                    std::to_string(p.alloc_columns) + " columns>";
           })
      .def(
          "__eq__", [](const tmem::Plan& a, const tmem::Plan& b) { return a == b; },
          nb::is_operator(), kEqSignature);

  m.def(
      "check",
      [](const tmem::TransferSpec& spec) { return without_gil([&] { return tmem::check(spec); }); },
      "spec"_a,
      "Applies every native-image rule to `spec` and plans it. Raises Error (code \"rule\", ...) "
      "naming\n"
      "the rule, the first offending coordinate, the expected and actual placement, with the "
      "operand\n"
      "in .details.");
}

void bind_select(nb::module_& m) {
  nb::class_<tmem::SelectionCandidate>(m, "Candidate", "One form select() tried, and its verdict.")
      .def_prop_ro("op", [](const tmem::SelectionCandidate& c) { return c.op.to_string(); })
      .def_ro("legal", &tmem::SelectionCandidate::legal)
      .def_ro("instructions_per_warp", &tmem::SelectionCandidate::instructions_per_warp,
              "when legal")
      .def_ro("regs_per_thread", &tmem::SelectionCandidate::regs_per_thread, "when legal")
      .def_ro("verdict", &tmem::SelectionCandidate::verdict,
              "\"chosen: ...\", \"legal but ...\", \"rejected: <rule>\" or \"skipped: ...\"")
      .def("__repr__", [](const tmem::SelectionCandidate& c) {
        return "<tmemjit.Candidate " + c.op.to_string() + ": " + c.verdict + ">";
      });

  nb::class_<tmem::Selection>(m, "Selection",
                              "What select() chose: the spec, its plan and every candidate.")
      .def_ro("spec", &tmem::Selection::spec,
              "the chosen opcode with its (group, *repeat, *atom) views")
      .def_ro("plan", &tmem::Selection::plan)
      .def_ro("candidates", &tmem::Selection::considered, "every form tried, in the order tried")
      .def_ro("notes", &tmem::Selection::notes,
              "how the tiles chose the forms tried (16-bit data: the packed .b32 form and why)")
      .def("explain", &tmem::Selection::explain, "One line per candidate: why it won or lost.")
      .def("__str__", &tmem::Selection::explain)
      .def("__repr__", [](const tmem::Selection& s) {
        return "<tmemjit.Selection " + s.spec.op().to_string() + ", " +
               std::to_string(s.considered.size()) + " candidates>";
      });

  m.def(
      "select",
      [](const std::string& direction, const std::string& scope, const ViewArg& tmem,
         const ViewArg& regs, int register_budget) {
        const tmem::Direction dir = parse_direction(direction);
        const tmem::Scope parsed_scope = unwrap(tmem::Scope::parse(scope));
        const tmem::View tmem_view = unwrap(to_view(tmem)), regs_view = unwrap(to_view(regs));
        tmem::SelectOptions options;
        options.register_budget = register_budget;
        return without_gil(
            [&] { return tmem::select(dir, parsed_scope, tmem_view, regs_view, options); });
      },
      "direction"_a, "scope"_a, "tmem"_a, "regs"_a, nb::kw_only(), "register_budget"_a = 0,
      "Picks the tcgen05 form and operand views for two equal logical tiles (`--op auto`): the "
      "legal\n"
      "form with the fewest instructions per warp, then the fewest registers. direction is \"st\" "
      "or\n"
      "\"ld\"; tmem and regs are view text or View objects without group or repeat axes.\n"
      "register_budget: the most registers one instruction may take (0: none), so a load fits\n"
      "beside the rest of a kernel: the tile moves in more repeats of a smaller .num. Raises\n"
      "Error (\"rule\") when no form fits; its details list why each failed; \"usage\" for a\n"
      "budget outside 0..128.");
}

}  // namespace

void bind_check(nb::module_& m) {
  bind_plan(m);
  bind_select(m);
}

}  // namespace tmemjit_py
