// tmemjit.Error: every tmem::Error that reaches Python, with its code, message and details.
#include <Python.h>

#include <string>
#include <string_view>

#include "bindings.h"
#include "tmem/text.h"

// The rule an error breaks and its keyed details (Error::rule(), Error::detail_entries()) came
// with tmem/rule.h; older libraries give the details as one text only.
#if __has_include("tmem/rule.h")
#include "tmem/rule.h"
#define TMEMJIT_PY_HAVE_RULE 1
#endif

namespace tmemjit_py {
namespace {

// The exception type, created once at import; the module holds the other reference.
PyObject* error_type = nullptr;

// Every text made valid UTF-8 first (bytes that are not are written \xNN): nb::str refuses invalid
// UTF-8, which once turned a Latin-1 name or compiler log into a RuntimeError (issue 30).
nb::str py_text(std::string_view text) {
  const std::string valid = tmem::valid_utf8(text);
  return nb::str(valid.c_str(), valid.size());
}

void set_python_error(const tmem::Error& error) {
  const nb::str message = py_text(error.message());
  nb::object instance = nb::steal(PyObject_CallOneArg(error_type, message.ptr()));
  if (!instance.is_valid()) return;  // the call set its own exception (memory)
  instance.attr("code") = nb::str(tmem::to_string(error.code()));
  instance.attr("message") = message;
  instance.attr("details") = py_text(error.details());
#ifdef TMEMJIT_PY_HAVE_RULE
  if (error.rule() != tmem::Rule::kNone)
    instance.attr("rule") = nb::str(tmem::to_string(error.rule()));
  nb::list entries;
  for (const tmem::ErrorDetail& entry : error.detail_entries())
    entries.append(nb::make_tuple(py_text(entry.key), py_text(entry.text)));
  instance.attr("detail_entries") = nb::tuple(entries);
#endif
  PyErr_SetObject(error_type, instance.ptr());
}

}  // namespace

[[noreturn]] void raise(tmem::ErrorCode code, std::string message) {
  throw tmem::Error(code, std::move(message));
}

void bind_errors(nb::module_& m) {
  error_type = PyErr_NewExceptionWithDoc(
      "tmemjit.Error",
      "Every failure of the library: a parse or rule error in a spec, a compiler or driver "
      "failure.\n\n"
      "Attributes:\n"
      "    code: the error's kind, one of \"parse\", \"opcode\", \"layout\", \"rule\", "
      "\"target\",\n"
      "        \"limit\", \"toolchain\", \"driver\", \"io\", \"wrong_data\", \"usage\", "
      "\"internal\"\n"
      "        (docs/errors.md).\n"
      "    message: one sentence saying what is wrong (also str(error)).\n"
      "    details: what helps fix it: the operand as text, a compiler log, the PTX; may be "
      "empty.\n"
      "    rule: the rule it breaks (\"placement\", \"ownership\", ..., \"R3\"), else None.\n"
      "    detail_entries: the details as (key, text) pairs: \"operand\", \"log\", \"ptx\", ...",
      PyExc_Exception, nullptr);
  if (!error_type) throw nb::python_error();
  // Attributes of an Error raised from Python code (tmemjit.Error("...")) default to these.
  PyObject_SetAttrString(error_type, "code", nb::str("internal").ptr());
  PyObject_SetAttrString(error_type, "details", nb::str("").ptr());
  PyObject_SetAttrString(error_type, "rule", Py_None);
  PyObject_SetAttrString(error_type, "detail_entries", nb::tuple().ptr());
  m.attr("Error") = nb::borrow(error_type);

  nb::register_exception_translator([](const std::exception_ptr& thrown, void*) {
    try {
      std::rethrow_exception(thrown);
    } catch (const tmem::Error& error) {
      set_python_error(error);
    }
  });
}

}  // namespace tmemjit_py
