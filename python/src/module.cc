// The nanobind extension module tmemjit._tmemjit: the public C++ API of libtmemjit with Python
// habits (docs/design.md §Python). The package tmemjit re-exports it.
#include "bindings.h"

NB_MODULE(_tmemjit, m) {
  m.doc() = "libtmemjit: a JIT for Blackwell TMEM transfers (tcgen05.ld / tcgen05.st)";
  m.attr("__version__") = TMEMJIT_PY_VERSION;
  tmemjit_py::bind_errors(m);
  tmemjit_py::bind_options(m);
  tmemjit_py::bind_descriptors(m);
  tmemjit_py::bind_check(m);
  tmemjit_py::bind_jit(m);
  tmemjit_py::bind_run(m);
  tmemjit_py::bind_specialize(m);
  tmemjit_py::bind_coords(m);
  tmemjit_py::bind_warning(m);
  tmemjit_py::bind_emulate(m);
  tmemjit_py::bind_runtime(m);
}
