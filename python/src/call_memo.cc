// The memo of compile_kernel calls (call_memo.h): a few entries, matched by identity first and the
// compile options by value.
#include "call_memo.h"

#include <array>
#include <mutex>
#include <optional>
#include <utility>

namespace tmemjit_py {
namespace {

// Enough for an autotuner that alternates between a few layouts; matching is a linear scan.
constexpr std::size_t kEntries = 8;

// The same object, or an equal value of an immutable scalar type (a str read again from a file).
bool same(PyObject* a, PyObject* b) {
  if (a == b) return true;
  if (Py_TYPE(a) != Py_TYPE(b)) return false;
  if (!PyUnicode_CheckExact(a) && !PyLong_CheckExact(a)) return false;
  const int equal = PyObject_RichCompareBool(a, b, Py_EQ);
  if (equal < 0) PyErr_Clear();
  return equal == 1;
}

// What a transfer value held when its call was remembered: a frozen Transfer can still be changed
// with object.__setattr__ (issue 39 N18), so its attributes are compared, by identity, as well as
// the object. Empty for a value without a __dict__ (a TransferSpec: immutable in C++).
using Attributes = std::vector<std::pair<nb::object, nb::object>>;

std::optional<Attributes> attributes_of(PyObject* value) {
  if (Py_TYPE(value)->tp_dictoffset == 0) return Attributes{};
  PyObject* dict = PyObject_GenericGetDict(value, nullptr);
  if (dict == nullptr) {
    PyErr_Clear();
    return std::nullopt;
  }
  Attributes attributes;
  Py_ssize_t position = 0;
  PyObject *key = nullptr, *item = nullptr;
  while (PyDict_Next(dict, &position, &key, &item))
    attributes.emplace_back(nb::borrow(key), nb::borrow(item));
  Py_DECREF(dict);
  return attributes;
}

bool same_attributes(const Attributes& stored, PyObject* value) {
  if (Py_TYPE(value)->tp_dictoffset == 0) return stored.empty();
  PyObject* dict = PyObject_GenericGetDict(value, nullptr);
  if (dict == nullptr) {
    PyErr_Clear();
    return false;
  }
  bool same = PyDict_Size(dict) == static_cast<Py_ssize_t>(stored.size());
  for (std::size_t i = 0; same && i < stored.size(); ++i)
    same = PyDict_GetItem(dict, stored[i].first.ptr()) == stored[i].second.ptr();
  Py_DECREF(dict);
  return same;
}

struct Transfer {
  nb::object name;
  nb::object value;
  Attributes attributes;
};

struct Entry {
  std::array<nb::object, kCallArguments> arguments;  // the scalars, and the transfers' dict
  std::vector<Transfer> transfers;                   // in order
  std::shared_ptr<const PreparedCall> prepared;      // with the call's options
};

bool same_transfers(const Entry& entry, nb::handle given) {
  PyObject* dict = given.ptr();
  if (!PyDict_CheckExact(dict) ||
      PyDict_Size(dict) != static_cast<Py_ssize_t>(entry.transfers.size()))
    return false;
  Py_ssize_t position = 0;
  PyObject *name = nullptr, *value = nullptr;
  for (const Transfer& stored : entry.transfers) {
    if (!PyDict_Next(dict, &position, &name, &value)) return false;
    if (!same(stored.name.ptr(), name) || stored.value.ptr() != value ||
        !same_attributes(stored.attributes, value))
      return false;
  }
  return true;
}

bool matches(const Entry& entry, const nb::handle (&arguments)[kCallArguments],
             const tmem::CompileOptions& options) {
  for (std::size_t i = 0; i < kCallArguments; ++i)
    if (i != kTransfers && !same(entry.arguments[i].ptr(), arguments[i].ptr())) return false;
  return same_transfers(entry, arguments[kTransfers]) && entry.prepared->options == options;
}

// The entry for these arguments, or nullopt when the transfers are not a dict that can match.
std::optional<Entry> snapshot(const nb::handle (&arguments)[kCallArguments]) {
  Entry entry;
  for (std::size_t i = 0; i < kCallArguments; ++i) entry.arguments[i] = nb::borrow(arguments[i]);
  PyObject* dict = arguments[kTransfers].ptr();
  if (!PyDict_CheckExact(dict)) return std::nullopt;
  Py_ssize_t position = 0;
  PyObject *name = nullptr, *value = nullptr;
  while (PyDict_Next(dict, &position, &name, &value)) {
    std::optional<Attributes> attributes = attributes_of(value);
    if (!attributes) return std::nullopt;
    entry.transfers.push_back({nb::borrow(name), nb::borrow(value), std::move(*attributes)});
  }
  return entry;
}

struct Memo {
  std::mutex mutex;  // the GIL guards it too; this keeps a free-threaded interpreter safe
  std::array<std::optional<Entry>, kEntries> entries;
  std::size_t next = 0;      // the entry to replace next
  std::size_t recalled = 0;  // calls answered
};

// Never destroyed: its references are dropped by forget_calls() before the interpreter ends.
Memo& memo() {
  static Memo* instance = new Memo;
  return *instance;
}

}  // namespace

std::shared_ptr<const PreparedCall> recall(const nb::handle (&arguments)[kCallArguments],
                                           const tmem::CompileOptions& options) {
  Memo& calls = memo();
  std::lock_guard lock(calls.mutex);
  for (const std::optional<Entry>& entry : calls.entries)
    if (entry && matches(*entry, arguments, options)) {
      ++calls.recalled;
      return entry->prepared;
    }
  return nullptr;
}

void remember(const nb::handle (&arguments)[kCallArguments],
              std::shared_ptr<const PreparedCall> prepared) {
  std::optional<Entry> entry = snapshot(arguments);
  if (!entry) return;
  entry->prepared = std::move(prepared);
  Memo& calls = memo();
  std::optional<Entry> replaced;  // released after the lock: dropping references runs Python code
  {
    std::lock_guard lock(calls.mutex);
    replaced = std::exchange(calls.entries[calls.next], std::move(entry));
    calls.next = (calls.next + 1) % kEntries;
  }
}

void forget_calls() {
  Memo& calls = memo();
  std::array<std::optional<Entry>, kEntries> dropped;
  {
    std::lock_guard lock(calls.mutex);
    dropped = std::exchange(calls.entries, {});
    calls.recalled = 0;
  }
}

std::size_t recalled_calls() {
  Memo& calls = memo();
  std::lock_guard lock(calls.mutex);
  return calls.recalled;
}

}  // namespace tmemjit_py
