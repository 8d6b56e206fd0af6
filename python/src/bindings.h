// Shared helpers of the nanobind module _tmemjit: GIL release around library calls, Result
// unwrapping, and the bind_* functions each source file contributes.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/variant.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <variant>

#include "tmem/compile.h"
#include "tmem/kernel.h"
#include "tmem/result.h"
#include "tmem/view.h"

namespace tmemjit_py {

namespace nb = nanobind;
using namespace nanobind::literals;

// The GIL released for a call into the library. A daemon thread that takes the GIL back once the
// interpreter is finalizing is ended with pthread_exit, whose forced unwind through nanobind's
// noexcept frames aborts the process ("terminate called without an active exception", issue 39
// N21). A compile that returns after finalization or exit began parks its thread instead: exit
// waits for compiles in flight, then ends the process around it (docs/reliability.md "Exit").
class GilReleased {
 public:
  GilReleased() : state_(PyEval_SaveThread()) {}
  GilReleased(const GilReleased&) = delete;
  GilReleased& operator=(const GilReleased&) = delete;
  ~GilReleased() {
    if (tmem::process_exiting() || interpreter_finalizing())
      for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
    PyEval_RestoreThread(state_);
  }

 private:
  static bool interpreter_finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing() != 0;
#else
    return _Py_IsFinalizing() != 0;
#endif
  }
  PyThreadState* state_;
};

// The value of `result`, or its Error thrown as a C++ exception that the module's translator turns
// into tmemjit.Error. Called with the GIL held.
template <class T>
T unwrap(tmem::Result<T>&& result) {
  if (!result) throw std::move(result).error();
  return std::move(result).value();
}

// Runs `call` (which returns a Result) with the GIL released, so other Python threads run during
// compiles and simulator runs; the Result is unwrapped after the GIL is back, because raising a
// Python exception needs it.
template <class Call>
auto without_gil(Call&& call) {
  using R = decltype(call());
  std::optional<R> result;
  {
    GilReleased release;
    result.emplace(call());
  }
  return unwrap(std::move(*result));
}

// __eq__ takes any object (NotImplemented for other types), as type checkers expect of it.
inline const nb::sig kEqSignature("def __eq__(self, other: object, /) -> bool");

// Every argument that names a view takes its text (parsed with View::parse) or a View.
using ViewArg = std::variant<std::string, tmem::View>;
tmem::Result<tmem::View> to_view(const ViewArg& view);
// The text of a view argument, as TransferSpec::from_fields takes it.
std::string view_text(const ViewArg& view);

// tmemjit.Kernel: a compiled kernel and the report of the call that returned it. One compiled
// kernel (a shared handle) is handed to many calls, each with its own report, so the report lives
// beside the handle rather than in it.
struct PyKernel {
  tmem::Kernel kernel;
  // Held by pointer: inline, the report made the Python object too big for pymalloc and doubled
  // the cost of a compile_transfer memory hit from Python.
  std::shared_ptr<const tmem::CompileReport> report;  // null from compile_transfer
};

// A grid or block: an int or a tuple of one to three ints, each at least 1 (TypeError or Error
// "usage" naming `what` otherwise).
tmem::Dim3 to_dim3(nb::handle value, const char* what);

// Raises tmemjit.Error for an ErrorCode (for checks done in the bindings themselves).
[[noreturn]] void raise(tmem::ErrorCode code, std::string message);

void bind_errors(nb::module_& m);
void bind_options(nb::module_& m);
void bind_descriptors(nb::module_& m);
void bind_check(nb::module_& m);
void bind_jit(nb::module_& m);
void bind_run(nb::module_& m);
void bind_specialize(nb::module_& m);
void bind_coords(nb::module_& m);
void bind_warning(nb::module_& m);
void bind_emulate(nb::module_& m);
void bind_runtime(nb::module_& m);
// Kernel.prepare and Kernel.binding, added to the Kernel class bind_jit made (prepare.cc).
void bind_prepare(nb::module_& m);

}  // namespace tmemjit_py
