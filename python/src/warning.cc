// tmemjit.set_warning_handler: the library's warnings (tmem/warning.h) to a Python callable, such
// as warnings.warn, instead of stderr.
#include "tmem/warning.h"

#include <Python.h>

#include <memory>
#include <string_view>
#include <utility>

#include "bindings.h"

namespace tmemjit_py {
namespace {

// The callable, referenced with the GIL held whichever thread drops the last copy of the handler
// (a compile in another thread may still hold one), and never after the interpreter is gone.
struct PyCallable {
  PyObject* object;
  explicit PyCallable(PyObject* o) : object(o) { Py_INCREF(o); }
  PyCallable(const PyCallable&) = delete;
  PyCallable& operator=(const PyCallable&) = delete;
  ~PyCallable() {
    if (!Py_IsInitialized()) return;
    const PyGILState_STATE state = PyGILState_Ensure();
    Py_DECREF(object);
    PyGILState_Release(state);
  }
};

tmem::WarningHandler python_handler(nb::object callable) {
  auto held = std::make_shared<PyCallable>(callable.ptr());
  return [held](std::string_view message) {
    if (!Py_IsInitialized()) return;
    nb::gil_scoped_acquire gil;
    try {
      nb::handle(held->object)(nb::str(message.data(), message.size()));
    } catch (nb::python_error& error) {
      // A warnings filter set to "error", or a failing callable: reported, not raised into the
      // compile that warned.
      error.restore();
      PyErr_WriteUnraisable(held->object);
    }
  };
}

}  // namespace

void bind_warning(nb::module_& m) {
  m.def(
      "set_warning_handler",
      [](nb::object handler) {
        // A non-callable would fail only at the first warning, far from this call (issue 39 N15).
        if (!handler.is_none() && !PyCallable_Check(handler.ptr()))
          throw nb::type_error(("handler must be a callable taking the message, or None, not " +
                                std::string(nb::type_name(handler.type()).c_str()))
                                   .c_str());
        tmem::set_warning_handler(handler.is_none() ? tmem::WarningHandler()
                                                    : python_handler(std::move(handler)));
      },
      "handler"_a.none(),
      "Sends the library's warnings (a cache that falls back, a transfer a kernel never calls) "
      "to handler(message: str), e.g. warnings.warn; None restores the default, a line "
      "'tmemjit: warning: MESSAGE' on stderr.");
  // The handler holds a Python object: drop it before the interpreter goes.
  nb::module_::import_("atexit").attr("register")(
      nb::cpp_function([] { tmem::set_warning_handler({}); }));
}

}  // namespace tmemjit_py
