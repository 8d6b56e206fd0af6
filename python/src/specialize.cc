// device_function and compile_kernel (docs/design.md §Specialization): the transfer inside the
// user's own kernel. Bound when the library has include/tmem/specialize.h; the package's Python
// side says so where it does not (tmemjit/_specialize.py).
#include <algorithm>
#include <chrono>

#include "bindings.h"

#if __has_include("tmem/specialize.h")
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <tuple>
#include <vector>

#include "call_memo.h"
#include "options.h"
#include "tmem/compile.h"
#include "tmem/specialize.h"
#define TMEMJIT_PY_HAVE_SPECIALIZE 1
#endif

namespace tmemjit_py {

#ifdef TMEMJIT_PY_HAVE_SPECIALIZE
namespace {

tmem::Language parse_language(const std::string& text) {
  if (text == "cuda") return tmem::Language::kCuda;
  if (text == "ptx") return tmem::Language::kPtx;
  raise(tmem::ErrorCode::kUsage, "language '" + text + "' is not one of cuda, ptx");
}

const char* language_name(tmem::Language language) {
  return language == tmem::Language::kCuda ? "cuda" : "ptx";
}

tmem::DeviceFunctionOptions function_options(const std::string& name, tmem::Language language,
                                             bool wait, bool warp_argument, bool column_argument,
                                             int cta_group) {
  tmem::DeviceFunctionOptions options;
  options.cta_group = cta_group;
  options.name = name;
  options.language = language;
  options.wait = wait;
  options.warp_argument = warp_argument;
  options.column_argument = column_argument;
  return options;
}

// (name, spec, wait, warp_argument, column_argument): what tmemjit.compile_kernel hands down.
// The spec by pointer: the Python object's own TransferSpec, not a copy. Its fingerprint is then
// computed once and kept in it (a copy carries it), so a memory hit does not hash the views again.
using TransferTuple = std::tuple<std::string, const tmem::TransferSpec*, bool, bool, bool>;

PyKernel run_prepared(const PreparedCall& call) {
  auto report = std::make_shared<tmem::CompileReport>();
  tmem::Kernel kernel = without_gil([&] {
    return tmem::compile_kernel(call.source, call.transfers, call.options, report.get());
  });
  return PyKernel{.kernel = std::move(kernel), .report = std::move(report)};
}

}  // namespace

namespace {

void bind_device_function(nb::module_& m) {
  nb::class_<tmem::DeviceFunction>(
      m, "DeviceFunction",
      "An embeddable device function for a transfer: CUDA C++ (inline asm) or PTX\n"
      "(.func) source, its signature and register budget. str() is the source.")
      .def_ro("name", &tmem::DeviceFunction::name)
      .def_ro("source", &tmem::DeviceFunction::source)
      .def_ro("signature", &tmem::DeviceFunction::signature)
      .def_prop_ro(
          "language", [](const tmem::DeviceFunction& f) { return language_name(f.language); },
          "\"cuda\" or \"ptx\"")
      .def_prop_ro(
          "direction",
          [](const tmem::DeviceFunction& f) { return std::string(tmem::to_string(f.direction)); },
          "\"ld\" or \"st\"")
      .def_ro("regs_per_thread", &tmem::DeviceFunction::regs_per_thread)
      .def("__str__", [](const tmem::DeviceFunction& f) { return f.source; })
      .def("__repr__", [](const tmem::DeviceFunction& f) {
        return "<tmemjit.DeviceFunction " + f.name + " (" + language_name(f.language) + "), " +
               std::to_string(f.regs_per_thread) + " registers per thread>";
      });

  m.def(
      "device_function",
      [](const tmem::TransferSpec& spec, const std::string& name, const std::string& language,
         bool wait, bool warp_argument, bool column_argument, int cta_group) {
        const tmem::DeviceFunctionOptions options = function_options(
            name, parse_language(language), wait, warp_argument, column_argument, cta_group);
        return without_gil([&] { return tmem::device_function(spec, options); });
      },
      "spec"_a, nb::kw_only(), "name"_a = "tmem_transfer", "language"_a = "cuda", "wait"_a = true,
      "warp_argument"_a = false, "column_argument"_a = false, "cta_group"_a = 1,
      "The transfer as a device function to paste into a kernel\n"
      "(docs/design.md §Specialization): NAME(tmem_base, regs\n"
      "[, warp] [, column]), NAME_wait(), NAME_coord() and the constant NAME_regs. wait=False: "
      "the\n"
      "caller calls NAME_wait() itself; warp_argument / column_argument add those parameters.");
}

// What a call means to the library: the source, each transfer with its options, CompileOptions.
std::shared_ptr<PreparedCall> prepare_call(const std::string& source, const std::string& entry,
                                           const std::vector<TransferTuple>& transfers,
                                           const std::string& language, const std::string& path,
                                           const tmem::CompileOptions& options) {
  auto prepared = std::make_shared<PreparedCall>();
  prepared->source.language = parse_language(language);
  prepared->source.text = source;
  prepared->source.entry = entry;
  prepared->source.path = path;
  prepared->transfers.reserve(transfers.size());
  for (const auto& [name, spec, wait, warp_argument, column_argument] : transfers) {
    if (spec == nullptr) raise(tmem::ErrorCode::kUsage, "transfer '" + name + "' has no spec");
    (void)spec->fingerprint();  // kept in the Python object's spec from now on
    prepared->transfers.push_back(
        {*spec, function_options(name, prepared->source.language, wait, warp_argument,
                                 column_argument, options.cta_group)});
  }
  // Checked when the CompileOptions was made; precompile's names are checked by compile_kernel
  // itself, as the CLI's --precompile: a bad name is Error "usage".
  prepared->options = options;
  return prepared;
}

void bind_compile_kernel(nb::module_& m) {
  m.def(
      "_compile_kernel",
      [](const std::string& source, const std::string& entry,
         const std::vector<TransferTuple>& transfers, const std::string& language,
         const std::string& path, const tmem::CompileOptions& options, nb::tuple call) {
        std::shared_ptr<PreparedCall> prepared =
            prepare_call(source, entry, transfers, language, path, options);
        // Checked and converted: a later call with the same objects skips both (call_memo.h).
        if (call.size() == kCallArguments) {
          nb::handle arguments[kCallArguments];
          for (std::size_t i = 0; i < kCallArguments; ++i) arguments[i] = call[i];
          remember(arguments, prepared);
        }
        return run_prepared(*prepared);
      },
      "source"_a, "entry"_a, "transfers"_a, "language"_a, "path"_a, "options"_a, "call"_a,
      "tmemjit.compile_kernel's C++ half; call that instead. `call` is compile_kernel's own\n"
      "arguments but the options, remembered for _compile_kernel_again.");
  m.def(
      "_compile_kernel_again",
      [](nb::handle source, nb::handle entry, nb::handle transfers, nb::handle language,
         nb::handle path, nb::handle options, nb::handle keywords) -> nb::object {
        tmem::CompileOptions made;
        const tmem::CompileOptions& given = call_options(options, keywords, "compile_kernel", made);
        const nb::handle arguments[kCallArguments] = {source, entry, transfers, language, path};
        std::shared_ptr<const PreparedCall> prepared = recall(arguments, given);
        if (!prepared) return nb::none();
        return nb::cast(run_prepared(*prepared));
      },
      // None is an argument like any other here: the wrapper's checks name it if no call matches.
      nb::arg().none(), nb::arg().none(), nb::arg().none(), nb::arg().none(), nb::arg().none(),
      nb::arg().none(), nb::arg().none(),
      "tmemjit.compile_kernel's fast path: the kernel of a call made before with the same\n"
      "objects and equal options (call_memo.h), or None. Raises what CompileOptions raises for\n"
      "options= and keywords that make none.");
  m.def("_forget_calls", &forget_calls,
        "Drops the remembered compile_kernel calls (at exit, and for tests).");
  m.def("_recalled_calls", &recalled_calls,
        "How many compile_kernel calls the memo answered since _forget_calls(), for tests.");
  nb::module_::import_("atexit").attr("register")(nb::cpp_function(&forget_calls));
}

// For python/bench/kernel_hit_bench.py only: the C++ cost of compile_kernel's memory hit on the
// same source and specs with a report, timed in C++ in this process, so the benchmark compares
// Python and C++ within one run.
double cxx_kernel_hit_ns(const std::string& source, const std::string& entry,
                         const std::vector<TransferTuple>& transfers, int iterations) {
  tmem::KernelSource kernel_source{tmem::Language::kCuda, source, entry, ""};
  std::vector<tmem::NamedTransfer> named;
  for (const auto& [name, spec, wait, warp_argument, column_argument] : transfers)
    named.push_back({*spec, function_options(name, tmem::Language::kCuda, wait, warp_argument,
                                             column_argument, 1)});
  const tmem::CompileOptions options;
  nb::gil_scoped_release release;
  tmem::CompileReport report;
  if (!tmem::compile_kernel(kernel_source, named, options, &report)) return -1.0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i)
    if (!tmem::compile_kernel(kernel_source, named, options, &report)) return -1.0;
  const std::chrono::duration<double, std::nano> elapsed = std::chrono::steady_clock::now() - start;
  return elapsed.count() / iterations;
}

nb::tuple parse_spec_file(const std::string& text) {
  tmem::SpecFile file = unwrap(tmem::parse_spec_file(text));
  const bool named =
      std::find(file.option_keys.begin(), file.option_keys.end(), "name") != file.option_keys.end();
  return nb::make_tuple(file.spec, named ? nb::cast(file.options.name) : nb::none(),
                        file.options.wait, file.options.warp_argument, file.options.column_argument,
                        file.options.cta_group, file.option_keys);
}

}  // namespace

void bind_specialize(nb::module_& m) {
  bind_device_function(m);
  bind_compile_kernel(m);
  m.def("_cxx_kernel_hit_ns", &cxx_kernel_hit_ns, "source"_a, "entry"_a, "transfers"_a,
        "iterations"_a);
  m.def("_parse_spec_file", &parse_spec_file, "text"_a,
        "tmemjit.spec_file's C++ half; call that instead.");
  m.def(
      "background_compiles",
      [] {
        const tmem::BackgroundCompiles now = tmem::background_compiles();
        nb::dict out;
        out["queued"] = now.queued;
        out["running"] = now.running;
        return out;
      },
      "The library's background compiles now, {'queued': n, 'running': 0 or 1}: lazy kernels'\n"
      "specialized builds, generic tiers, precompiled headers (docs/specialization.md).");
  m.def(
      "wait_background_compiles",
      [] {
        nb::gil_scoped_release release;  // a background job may call a warning handler
        tmem::wait_background_compiles();
      },
      "Blocks until no background compile is queued or running (the precompiled header a first\n"
      "compile left to the background, lazy kernels' builds).");
  m.attr("_have_specialize") = true;
}
#else
void bind_specialize(nb::module_& m) { m.attr("_have_specialize") = false; }
#endif

}  // namespace tmemjit_py
