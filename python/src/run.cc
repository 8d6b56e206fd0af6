// run_transfer -> RunReport: a transfer's harness kernels on random data, on a Blackwell GPU, in
// Hopper emulation or in the CPU simulator, checked element by element (docs/design.md §CLI,
// §Python).
#include "tmem/run.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "bindings.h"
#include "tmem/device.h"

namespace tmemjit_py {
namespace {

std::optional<std::string> mismatch_text(const tmem::CheckResult& check) {
  if (!check.mismatch) return std::nullopt;
  return check.mismatch->to_string();
}

}  // namespace

void bind_run(nb::module_& m) {
  nb::class_<tmem::CheckResult>(m, "CheckResult",
                                "One check of a run: raw, roundtrip, store or load.")
      .def_ro("name", &tmem::CheckResult::name)
      .def_ro("description", &tmem::CheckResult::description, "what the check runs and compares")
      .def_ro("elements", &tmem::CheckResult::elements, "elements compared")
      .def_ro("passed", &tmem::CheckResult::passed)
      .def_prop_ro("mismatch", &mismatch_text, "the first wrong element as text, else None")
      .def_ro("error", &tmem::CheckResult::error, "the rule the run broke (simulator), else empty")
      .def("__repr__", [](const tmem::CheckResult& c) {
        return "<tmemjit.CheckResult " + c.name + ": " + (c.passed ? "pass" : "FAIL") + ", " +
               std::to_string(c.elements) + " elements>";
      });

  nb::class_<tmem::RunReport>(
      m, "RunReport",
      "What run_transfer found: str() is the report of `tmemjit run`, ending in PASS or\n"
      "FAIL; .passed is the verdict. Wrong data is a report, not an Error.")
      .def_prop_ro("passed", &tmem::RunReport::passed)
      .def_prop_ro(
          "device", [](const tmem::RunReport& r) { return std::string(tmem::to_string(r.device)); },
          "\"gpu\", \"emu\" or \"sim\": where it ran")
      .def_ro("device_description", &tmem::RunReport::device_description)
      .def_ro("passed_over", &tmem::RunReport::passed_over,
              "one line per device `auto` did not use, and why")
      .def_ro("seed", &tmem::RunReport::seed)
      .def_prop_ro("elements", &tmem::RunReport::elements, "elements compared in all checks")
      .def_ro("checks", &tmem::RunReport::checks)
      .def(
          "to_dict",
          [](const tmem::RunReport& r) {
            nb::dict dict =
                nb::cast<nb::dict>(nb::module_::import_("json").attr("loads")(r.to_json()));
            return dict;
          },
          "The keys of `tmemjit run --json`, without its \"ok\" envelope.")
      .def("__str__", &tmem::RunReport::to_string)
      .def("__repr__", [](const tmem::RunReport& r) {
        return std::string("<tmemjit.RunReport ") + (r.passed() ? "PASS" : "FAIL") + " on " +
               std::string(tmem::to_string(r.device)) + ", " + std::to_string(r.elements()) +
               " elements>";
      });

  m.def(
      "run_transfer",
      [](const tmem::TransferSpec& spec, const std::string& device, std::uint64_t seed,
         int cta_group) {
        tmem::RunOptions options;
        options.device = unwrap(tmem::parse_device(device));
        options.seed = seed;
        options.cta_group = cta_group;
        return without_gil([&] { return tmem::run_transfer(spec, options); });
      },
      "spec"_a, nb::kw_only(), "device"_a = "auto", "seed"_a = 1, "cta_group"_a = 1,
      "Checks `spec`, then runs its harness kernels on random data (the same seed, the same data) "
      "and\n"
      "compares every element with what the views predict. device: \"gpu\" (Blackwell), \"emu\"\n"
      "(emulation on another GPU), \"sim\" (the CPU simulator) or \"auto\" (the first that "
      "exists).\n"
      "Raises Error for an invalid spec (\"rule\", ...) or a device that cannot run (\"driver\").");
}

}  // namespace tmemjit_py
