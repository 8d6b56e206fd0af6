// tmemjit.CompileOptions and the options of a call (options.h). kFields below is the one list of
// the fields in Python: the constructor, replace(), the properties, ==, hash, repr, to_dict(),
// pickling, the keywords of compile_kernel, compile_transfer and warmup and their signatures all
// read it, and a new tmem::CompileOptions member fails this file's build until it has a row.
#include "options.h"

#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tmem/target.h"

namespace tmemjit_py {
namespace {

using Options = tmem::CompileOptions;

struct Field {
  const char* name;
  const char* parameter_type;  // what the keyword takes, as a signature spells it
  const char* value_type;      // what the property returns
  // Checks `value` and sets the field: TypeError naming the field and the type it needs, or
  // Error naming the value.
  void (*set)(Options& options, const Field& field, nb::handle value);
  nb::object (*get)(const Options& options);
  const char* allowed;  // an int field's allowed values, for its error
  const char* doc;
};

[[noreturn]] void wrong_type(const std::string& what, const char* needed, nb::handle value) {
  throw nb::type_error(
      (what + " must be " + needed + ", not " + nb::type_name(value.type()).c_str()).c_str());
}

std::string text_of(const char* name, nb::handle value) {
  if (!PyUnicode_Check(value.ptr())) wrong_type(name, "a str", value);
  Py_ssize_t size = 0;
  const char* text = PyUnicode_AsUTF8AndSize(value.ptr(), &size);
  if (text == nullptr) throw nb::python_error();
  return std::string(text, static_cast<std::size_t>(size));
}

template <auto Member>
void set_text(Options& options, const Field& field, nb::handle value) {
  options.*Member = text_of(field.name, value);
}

template <auto Member>
nb::object get_text(const Options& options) {
  const std::string& text = options.*Member;
  return nb::str(text.data(), text.size());
}

// An enum by its name, read with the library's parser, whose error names the allowed set.
template <auto Member, auto Parse>
void set_enum(Options& options, const Field& field, nb::handle value) {
  options.*Member = unwrap(Parse(text_of(field.name, value)));
}

template <auto Member>
nb::object get_enum(const Options& options) {
  const std::string_view name = tmem::to_string(options.*Member);
  return nb::str(name.data(), name.size());
}

template <auto Member>
void set_bool(Options& options, const Field& field, nb::handle value) {
  if (!PyBool_Check(value.ptr())) wrong_type(field.name, "a bool", value);
  options.*Member = value.ptr() == Py_True;
}

template <auto Member>
nb::object get_bool(const Options& options) {
  return nb::bool_(options.*Member);
}

// An int in [Low, High]; a bool is no int here (True would pass as 1).
template <auto Member, int Low, int High>
void set_int(Options& options, const Field& field, nb::handle value) {
  if (!PyLong_Check(value.ptr()) || PyBool_Check(value.ptr()))
    wrong_type(field.name, "an int", value);
  int overflow = 0;
  const long long given = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow != 0 || given < Low || given > High)
    raise(tmem::ErrorCode::kUsage,
          std::string(field.name) + " " + nb::str(value).c_str() + "; allowed: " + field.allowed);
  options.*Member = static_cast<int>(given);
}

template <auto Member>
nb::object get_int(const Options& options) {
  return nb::int_(options.*Member);
}

// One item of a list field, its index in the error (made only for the error: this runs per call).
std::string item_text(const Field& field, std::size_t index, nb::handle item) {
  if (!PyUnicode_Check(item.ptr()))
    wrong_type(std::string(field.name) + "[" + std::to_string(index) + "]", "a str", item);
  return text_of(field.name, item);
}

// Any iterable of str but a str itself (whose characters would each become an option); a list or
// tuple read in place.
template <auto Member>
void set_list(Options& options, const Field& field, nb::handle value) {
  PyObject* given = value.ptr();
  std::vector<std::string> items;
  if (PyList_CheckExact(given) || PyTuple_CheckExact(given)) {
    const Py_ssize_t size = PySequence_Fast_GET_SIZE(given);
    items.reserve(static_cast<std::size_t>(size));
    for (Py_ssize_t i = 0; i < size; ++i)
      items.push_back(item_text(field, items.size(), PySequence_Fast_GET_ITEM(given, i)));
    options.*Member = std::move(items);
    return;
  }
  PyObject* iterator = PyUnicode_Check(given) ? nullptr : PyObject_GetIter(given);
  if (iterator == nullptr) {
    PyErr_Clear();
    wrong_type(field.name, "a sequence of str", value);
  }
  const nb::object owned = nb::steal(iterator);
  while (PyObject* next = PyIter_Next(iterator)) {
    const nb::object item = nb::steal(next);
    items.push_back(item_text(field, items.size(), item));
  }
  if (PyErr_Occurred()) throw nb::python_error();
  options.*Member = std::move(items);
}

template <auto Member>
nb::object get_list(const Options& options) {
  const std::vector<std::string>& items = options.*Member;
  nb::list list;
  for (const std::string& item : items) list.append(nb::str(item.data(), item.size()));
  return nb::tuple(list);
}

template <auto Member, auto Parse>
constexpr Field enum_field(const char* name, const char* doc) {
  return {name, "str", "str", &set_enum<Member, Parse>, &get_enum<Member>, nullptr, doc};
}
template <auto Member>
constexpr Field text_field(const char* name, const char* doc) {
  return {name, "str", "str", &set_text<Member>, &get_text<Member>, nullptr, doc};
}
template <auto Member>
constexpr Field bool_field(const char* name, const char* doc) {
  return {name, "bool", "bool", &set_bool<Member>, &get_bool<Member>, nullptr, doc};
}
template <auto Member, int Low, int High>
constexpr Field int_field(const char* name, const char* allowed, const char* doc) {
  return {name, "int", "int", &set_int<Member, Low, High>, &get_int<Member>, allowed, doc};
}
template <auto Member>
constexpr Field list_field(const char* name, const char* doc) {
  return {name,
          "collections.abc.Iterable[str]",
          "tuple[str, ...]",
          &set_list<Member>,
          &get_list<Member>,
          nullptr,
          doc};
}

// In tmem::CompileOptions' order (include/tmem/compile.h says what each one does).
constexpr Field kFields[] = {
    enum_field<&Options::target, &tmem::parse_target>(
        "target",
        "\"sm_100a\" (the default), \"sm_100f\", \"sm_103a\", \"sm_103f\", \"sm_110a\", "
        "\"sm_110f\"; \"sm_90\" builds the emulated form for Hopper"),
    enum_field<&Options::backend, &tmem::parse_backend>(
        "backend",
        "the PTX compiler: \"auto\" (the default), \"nvptxcompiler\", \"nvjitlink\", \"ptxas\", "
        "\"driver\" (\"nvrtc\": the CUDA C++ form)"),
    int_field<&Options::opt_level, 0, 3>("opt_level", "0, 1, 2, 3 (the PTX compiler's -O)",
                                         "ptxas -O0 to -O3 (default 3)"),
    bool_field<&Options::line_info>("line_info", "-lineinfo"),
    bool_field<&Options::tmem_access_check>(
        "tmem_access_check", "ptxas -g-tmem-access-check: run-time TMEM guardrail traps"),
    int_field<&Options::cta_group, 1, 2>(
        "cta_group", "1 (one CTA), 2 (a CTA pair)",
        "the TMEM lifecycle: 1, one CTA; 2, a CTA pair (.cta_group::2)"),
    text_field<&Options::keep_dir>(
        "keep_dir",
        "where each compile writes its input, cubin, log and SASS (not part of the cache key)"),
    list_field<&Options::nvrtc_options>(
        "nvrtc_options",
        "NVRTC's options (nvcc's with front_end=\"nvcc\"), e.g. \"-std=c++20\", \"-I/path\""),
    list_field<&Options::ptx_options>("ptx_options",
                                      "the PTX compiler's options, e.g. \"-maxrregcount=64\""),
    list_field<&Options::extra_options>(
        "extra_options",
        "older form: to the backend after the two lists above (compile_kernel sends front-end "
        "options among them to NVRTC)"),
    list_field<&Options::precompile>(
        "precompile",
        "compile_kernel: headers, as #include <...> names them, parsed once for every layout"),
    enum_field<&Options::front_end, &tmem::parse_front_end>(
        "front_end", "compile_kernel: the compiler of a CUDA source, \"nvrtc\" or \"nvcc\""),
    enum_field<&Options::specialization, &tmem::parse_specialization>(
        "specialization",
        "compile_kernel: the tier, \"eager\", \"lazy\" or \"generic\" (not part of the cache "
        "key)"),
};

// The number of members of an aggregate: the most initializers T{...} takes.
struct AnyMember {
  template <class T>
  operator T() const;  // never called: only the initializers' count is asked
};
template <class T, class... Given>
constexpr std::size_t member_count() {
  if constexpr (requires { T{Given{}..., AnyMember{}}; })
    return member_count<T, Given..., AnyMember>();
  else
    return sizeof...(Given);
}
static_assert(member_count<Options>() == std::size(kFields),
              "a new tmem::CompileOptions member: give it a row in kFields");

const Options& defaults() {
  static const Options instance;
  return instance;
}

const Field* field_named(nb::handle name) {
  for (const Field& field : kFields)
    if (PyUnicode_CompareWithASCIIString(name.ptr(), field.name) == 0) return &field;
  return nullptr;
}

std::string field_names() {
  std::string names;
  for (const Field& field : kFields) names += std::string(names.empty() ? "" : ", ") + field.name;
  return names;
}

// Sets the fields `keywords` (a dict) names; TypeError naming `function` for an unknown one.
void apply(Options& options, nb::handle keywords, const char* function) {
  PyObject *name = nullptr, *value = nullptr;
  Py_ssize_t position = 0;
  while (PyDict_Next(keywords.ptr(), &position, &name, &value)) {
    const Field* field = field_named(name);
    if (field == nullptr)
      throw nb::type_error((std::string(function) + "() got an unexpected keyword argument " +
                            nb::repr(name).c_str() +
                            " (the options are CompileOptions' fields: " + field_names() + ")")
                               .c_str());
    field->set(options, *field, value);
  }
}

Options from_keywords(nb::handle keywords, const char* function) {
  Options options;
  apply(options, keywords, function);
  return options;
}

Options replaced(const Options& options, const nb::kwargs& changes) {
  Options changed = options;
  apply(changed, changes, "CompileOptions.replace");
  return changed;
}

nb::dict to_dict(const Options& options) {
  nb::dict dict;
  for (const Field& field : kFields) dict[field.name] = field.get(options);
  return dict;
}

// The fields that differ from the defaults, so that repr(CompileOptions()) is short and
// eval(repr(x)) == x.
std::string options_repr(const Options& options) {
  std::string text;
  for (const Field& field : kFields) {
    nb::object value = field.get(options);
    if (value.equal(field.get(defaults()))) continue;
    text += std::string(text.empty() ? "" : ", ") + field.name + "=" + nb::repr(value).c_str();
  }
  return "CompileOptions(" + text + ")";
}

Py_hash_t options_hash(const Options& options) {
  nb::list values;
  for (const Field& field : kFields) values.append(field.get(options));
  return nb::hash(nb::tuple(values));
}

std::string method_signature(const char* head, const char* tail, bool with_defaults) {
  return std::string("def ") + head + "(self, *, " + option_parameters(with_defaults) + ")" + tail;
}

}  // namespace

const Options& call_options(nb::handle options, nb::handle keywords, const char* function,
                            Options& made) {
  const bool has_keywords =
      keywords.is_valid() && PyDict_Check(keywords.ptr()) && PyDict_GET_SIZE(keywords.ptr()) > 0;
  if (!options.is_none()) {
    if (!nb::isinstance<Options>(options))
      wrong_type("options", "a tmemjit.CompileOptions or None", options);
    if (has_keywords) {
      PyObject *name = nullptr, *value = nullptr;
      Py_ssize_t position = 0;
      PyDict_Next(keywords.ptr(), &position, &name, &value);
      throw nb::type_error((std::string(function) +
                            "() takes the compile options as options= or as keyword arguments, "
                            "not both: got options= and " +
                            nb::str(name).c_str() + "= (options.replace(" + nb::str(name).c_str() +
                            "=...) changes one field)")
                               .c_str());
    }
    return nb::cast<const Options&>(options);
  }
  if (!has_keywords) return defaults();
  made = Options{};
  apply(made, keywords, function);
  return made;
}

std::string option_parameters(bool with_defaults) {
  std::string text;
  for (const Field& field : kFields)
    text += std::string(text.empty() ? "" : ", ") + field.name + ": " + field.parameter_type +
            " = " + (with_defaults ? nb::repr(field.get(defaults())).c_str() : "...");
  return text;
}

void bind_options(nb::module_& m) {
  nb::class_<Options> options(
      m, "CompileOptions",
      "The options of a compile, as a value (tmem::CompileOptions): compile_kernel,\n"
      "warmup_kernel, compile_transfer and warmup take one as options=, or the same fields as\n"
      "keyword arguments (not both: use replace() to change a field of one). Immutable, with\n"
      "==, hash and a repr that evaluates back; replace(**changes) returns a changed copy.\n"
      "Each field is checked when set: a wrong type is TypeError naming the field, a wrong\n"
      "value tmemjit.Error naming it and the allowed set. The fields marked compile_kernel\n"
      "change nothing in compile_transfer and warmup; language and path (compile_kernel) and\n"
      "kind (compile_transfer) say what the source is, not how to compile it, and stay\n"
      "arguments of those functions.");
  // nanobind copies a signature: these strings need not outlive the calls that take them.
  const std::string init_signature = method_signature("__init__", " -> None", true);
  const std::string replace_signature = method_signature("replace", " -> CompileOptions", false);
  options
      .def(
          "__init__",
          [](Options* self, const nb::kwargs& fields) {
            new (self) Options(from_keywords(fields, "CompileOptions"));
          },
          "fields"_a, nb::sig(init_signature.c_str()))
      .def("replace", &replaced, "changes"_a, nb::sig(replace_signature.c_str()),
           "A copy with the fields named changed, each checked as the constructor checks it.")
      // copy.replace(options, ...) (Python 3.13), as for a dataclass.
      .def("__replace__", &replaced, "changes"_a,
           nb::sig(method_signature("__replace__", " -> CompileOptions", false).c_str()))
      .def("to_dict", &to_dict, nb::sig("def to_dict(self) -> dict[str, object]"),
           "Every field by name, in the constructor's order: CompileOptions(**o.to_dict()) == o.")
      .def("__repr__", &options_repr)
      .def(
          "__eq__", [](const Options& a, const Options& b) { return a == b; }, nb::is_operator(),
          kEqSignature)
      .def("__hash__", &options_hash)
      .def("__getstate__", &to_dict)
      .def("__setstate__", [](Options* self, const nb::dict& state) {
        new (self) Options(from_keywords(state, "CompileOptions"));
      });
  for (const Field& field : kFields) {
    const std::string getter = std::string("def ") + field.name + "(self) -> " + field.value_type;
    options.def_prop_ro(
        field.name, [get = field.get](const Options& o) { return get(o); },
        nb::for_getter(nb::sig(getter.c_str())), field.doc);
  }
  m.def(
      "_call_options",
      [](nb::handle given, const nb::dict& keywords, const char* function) {
        Options made;
        return call_options(given, keywords, function, made);
      },
      "options"_a.none(), "keywords"_a, "function"_a,
      "The CompileOptions of a call given options= and the fields as keywords (a dict): "
      "compile_kernel's and warmup_kernel's, in tmemjit/_specialize.py.");
}

}  // namespace tmemjit_py
