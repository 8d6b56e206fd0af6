// tmemjit.emulate (docs/emulation.md §Blackwell kernels on Hopper): a module written for a tcgen05
// target lowered to run on Hopper, through tmem::emulate_ptx / emulate_cuda. The package's
// tmemjit.emulate (tmemjit/_emulate.py) checks the arguments and wraps the result.
#include "tmem/emulate.h"

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"

namespace tmemjit_py {

tmem::CompileOptions compile_options(const std::string& target, const std::string& backend,
                                     int opt_level, bool line_info, bool tmem_access_check,
                                     const std::string& keep_dir,
                                     const std::vector<std::string>& extra_options);

void bind_emulate(nb::module_& m) {
  m.def(
      "_emulate",
      [](const std::string& source, const std::string& language, const std::string& entry,
         const std::string& path, const std::string& target, const std::string& backend,
         int opt_level, const std::vector<std::string>& nvrtc_options,
         const std::vector<std::string>& ptx_options, bool strict, std::uint32_t standalone_ctas) {
        tmem::EmulateOptions options;
        options.strict = strict;
        options.standalone_ctas = standalone_ctas;
        options.entry = entry;
        options.path = path;
        options.compile = compile_options(target, backend, opt_level, false, false, "", {});
        options.compile.nvrtc_options = nvrtc_options;
        options.compile.ptx_options = ptx_options;
        tmem::EmulatedKernel emulated = without_gil([&] {
          if (language == "ptx") return tmem::emulate_ptx(source, options);
          tmem::KernelSource kernel_source{tmem::Language::kCuda, source, entry, path};
          return tmem::emulate_cuda(kernel_source, options);
        });
        const tmem::EmulationReport& report = emulated.report;
        nb::dict info;
        info["lowered"] = report.lowered;
        info["changed"] = report.changed;
        info["registers"] = report.code.registers;
        info["local_bytes"] = report.code.local_bytes;
        info["lower_ms"] = report.lower_ms;
        info["library_ms"] = report.library_ms;
        info["ptx_compile_ms"] = report.ptx_compile_ms;
        info["warnings"] = report.warnings;
        info["ptx"] = emulated.ptx;
        return nb::make_tuple(PyKernel{.kernel = std::move(emulated.kernel), .report = nullptr},
                              info);
      },
      "source"_a, "language"_a, "entry"_a, "path"_a, "target"_a, "backend"_a, "opt_level"_a,
      "nvrtc_options"_a, "ptx_options"_a, "strict"_a, "standalone_ctas"_a,
      "tmemjit.emulate's C++ half; call that instead.");
}

}  // namespace tmemjit_py
