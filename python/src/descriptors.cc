// Python classes of the descriptors: Opcode, View and TransferSpec (docs/descriptor-language.md,
// docs/design.md §Python), immutable values with ==, hash, str and a repr that evaluates back to an
// equal value.
#include <Python.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "bindings.h"
#include "tmem/layout.h"
#include "tmem/opcode.h"
#include "tmem/transfer.h"

namespace tmemjit_py {

tmem::Result<tmem::View> to_view(const ViewArg& view) {
  if (const auto* text = std::get_if<std::string>(&view)) return tmem::View::parse(*text);
  return std::get<tmem::View>(view);
}

std::string view_text(const ViewArg& view) {
  if (const auto* text = std::get_if<std::string>(&view)) return *text;
  return std::get<tmem::View>(view).to_string();
}

namespace {

std::string py_repr(const std::string& text) {
  return nb::repr(nb::str(text.c_str(), text.size())).c_str();
}

nb::tuple to_tuple(std::span<const std::int64_t> values) {
  nb::list list;
  for (std::int64_t v : values) list.append(v);
  return nb::tuple(list);
}

// One entry of v[...]: an int (negative counts from the end, as in Python) or a slice of step 1
// (clamped to the extent, as in Python).
tmem::Slice to_slice(nb::handle item, std::int64_t extent) {
  if (PySlice_Check(item.ptr())) {
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(item.ptr(), &start, &stop, &step) < 0) throw nb::python_error();
    if (step != 1) raise(tmem::ErrorCode::kUsage, "a view slice takes no step other than 1");
    PySlice_AdjustIndices(static_cast<Py_ssize_t>(extent), &start, &stop, step);
    return tmem::Slice::range(start, std::max<Py_ssize_t>(start, stop));
  }
  if (!PyLong_Check(item.ptr())) throw nb::type_error("view indices must be integers or slices");
  std::int64_t index = nb::cast<std::int64_t>(item);
  if (index < 0) index += extent;
  return tmem::Slice::at(index);
}

tmem::View index_view(const tmem::View& view, nb::handle key) {
  std::vector<nb::handle> items;
  if (PyTuple_Check(key.ptr())) {
    for (nb::handle item : nb::borrow<nb::tuple>(key)) items.push_back(item);
  } else {
    items.push_back(key);
  }
  if (static_cast<int>(items.size()) > view.ndim())
    raise(tmem::ErrorCode::kLayout,
          "too many indices for a view of rank " + std::to_string(view.ndim()));
  std::vector<tmem::Slice> slices;
  for (size_t d = 0; d < items.size(); ++d) slices.push_back(to_slice(items[d], view.shape()[d]));
  return unwrap(view.index(slices));
}

nb::dict coord_dict(const tmem::PhysCoord& coord, tmem::AxisMask axes) {
  nb::dict out;
  for (tmem::Axis axis : tmem::all_axes())
    if (axes & tmem::axis_bit(axis))
      out[nb::str(std::string(tmem::to_string(axis)).c_str())] =
          coord.value[static_cast<int>(axis)];
  return out;
}

std::string fingerprint_hex(const tmem::TransferSpec& spec) {
  const tmem::SpecFingerprint fp = spec.fingerprint();
  char text[33];
  std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(fp.hi),
                static_cast<unsigned long long>(fp.lo));
  return text;
}

std::string spec_repr(const tmem::TransferSpec& spec) {
  std::string text = "TransferSpec(op=" + py_repr(spec.op().to_string()) +
                     ", scope=" + py_repr(spec.scope().to_string()) +
                     ", tmem=" + py_repr(spec.tmem().to_string()) +
                     ", regs=" + py_repr(spec.regs().to_string());
  if (spec.tmem2()) text += ", tmem2=" + py_repr(spec.tmem2()->to_string());
  if (spec.imm()) text += ", imm=" + std::to_string(*spec.imm());
  return text + ")";
}

tmem::TransferSpec make_spec(const std::string& op, const std::string& scope, const ViewArg& tmem,
                             const ViewArg& regs, const std::optional<ViewArg>& tmem2,
                             std::optional<std::int64_t> imm) {
  // One path for every spelling: from_fields names the operand in its errors, as the CLI does.
  const std::string tmem_text = view_text(tmem), regs_text = view_text(regs);
  std::optional<std::string> tmem2_text, imm_text;
  if (tmem2) tmem2_text = view_text(*tmem2);
  if (imm) imm_text = std::to_string(*imm);
  std::optional<std::string_view> tmem2_arg, imm_arg;
  if (tmem2_text) tmem2_arg = *tmem2_text;
  if (imm_text) imm_arg = *imm_text;
  return unwrap(
      tmem::TransferSpec::from_fields(op, scope, tmem_text, regs_text, tmem2_arg, imm_arg));
}

void bind_opcode(nb::module_& m) {
  nb::class_<tmem::Opcode>(
      m, "Opcode",
      "One tcgen05.ld / tcgen05.st form: its shape, .num, pack and operand counts.\n\n"
      "Opcode.parse(\"tcgen05.ld.sync.aligned.16x256b.x4.b32\"); str() is the canonical\n"
      "PTX spelling.")
      .def_static(
          "parse", [](const std::string& text) { return unwrap(tmem::Opcode::parse(text)); },
          "text"_a,
          "Parses the PTX spelling; raises Error (code \"parse\" or \"opcode\") naming the "
          "offending token.")
      .def_prop_ro(
          "direction",
          [](const tmem::Opcode& op) { return std::string(tmem::to_string(op.direction())); },
          "\"ld\" or \"st\"")
      .def_prop_ro(
          "shape", [](const tmem::Opcode& op) { return std::string(tmem::to_string(op.shape())); },
          "\"32x32b\", \"16x64b\", \"16x128b\", \"16x256b\" or \"16x32bx2\"")
      .def_prop_ro("num", &tmem::Opcode::num, "the N of .xN")
      .def_prop_ro("packed", &tmem::Opcode::packed, "pack::16b (ld) or unpack::16b (st)")
      .def_prop_ro("regs_per_thread", &tmem::Opcode::regs_per_thread, "32-bit registers per thread")
      .def_prop_ro("atom_rows", &tmem::Opcode::atom_rows, "TMEM lanes one access touches")
      .def_prop_ro("atom_cols", &tmem::Opcode::atom_cols, "register-word columns of one access")
      .def_prop_ro("atom_tmem_cols", &tmem::Opcode::atom_tmem_cols,
                   "32-bit TMEM columns one access touches (atom_cols, doubled by pack)")
      .def("__str__", &tmem::Opcode::to_string)
      .def("__repr__",
           [](const tmem::Opcode& op) { return "Opcode.parse(" + py_repr(op.to_string()) + ")"; })
      .def(
          "__eq__", [](const tmem::Opcode& a, const tmem::Opcode& b) { return a == b; },
          nb::is_operator(), kEqSignature)
      .def("__hash__", &tmem::Opcode::hash)
      .def("__getstate__", &tmem::Opcode::to_string)
      .def("__setstate__", [](tmem::Opcode* self, const std::string& text) {
        new (self) tmem::Opcode(unwrap(tmem::Opcode::parse(text)));
      });
}

void bind_view(nb::module_& m) {
  nb::class_<tmem::View>(
      m, "View",
      "A tensor (shape, layout, dtype) seen through rearrange / view / permute / index,\n"
      "in the descriptor language of docs/descriptor-language.md. A view never moves data.\n\n"
      "View.parse('tmem_datapath_layout(\"B\",64,128)'); str() re-parses to an equal view.")
      .def_static(
          "parse", [](const std::string& text) { return unwrap(tmem::View::parse(text)); },
          "text"_a,
          "Parses a view; raises Error (code \"parse\" or \"layout\") with the column of the "
          "mistake.")
      .def_prop_ro(
          "shape", [](const tmem::View& v) { return to_tuple(v.shape()); },
          "the view's logical shape")
      .def_prop_ro(
          "dtype", [](const tmem::View& v) { return std::string(tmem::to_string(v.dtype())); },
          "\"b32\", \"f32\", \"u32\", \"s32\", \"b16\", \"f16\" or \"bf16\"")
      .def_prop_ro("ndim", &tmem::View::ndim)
      .def_prop_ro("size", &tmem::View::size, "number of elements")
      .def_prop_ro(
          "base", [](const tmem::View& v) { return tmem::View(v.base()); },
          "the identity view of the underlying tensor")
      .def(
          "rearrange",
          [](const tmem::View& v, const std::string& pattern, const nb::kwargs& sizes) {
            std::vector<std::pair<std::string, std::int64_t>> named;
            for (auto [name, size] : sizes)
              named.emplace_back(nb::cast<std::string>(name), nb::cast<std::int64_t>(size));
            return unwrap(v.rearrange(pattern, named));
          },
          "pattern"_a, "sizes"_a,
          "einops rearrange: splits, merges and permutes dims; sizes by keyword, e.g.\n"
          "v.rearrange(\"(wh r) c -> wh r c\", wh=2).")
      .def(
          "view",
          [](const tmem::View& v, const std::vector<std::int64_t>& shape) {
            return unwrap(v.view(shape));
          },
          "shape"_a, "Reshape in row-major order; one extent may be -1 (inferred).")
      .def(
          "permute",
          [](const tmem::View& v, const std::vector<std::int64_t>& order) {
            return unwrap(v.permute(order));
          },
          "order"_a, "New dim i is old dim order[i].")
      .def(
          "__getitem__", [](const tmem::View& v, nb::handle key) { return index_view(v, key); },
          nb::sig("def __getitem__(self, key: int | slice | tuple[int | slice, ...], /) -> View"),
          "Python indexing: an int drops a dim, a slice (step 1) keeps it.")
      .def(
          "apply",
          [](const tmem::View& v, const std::vector<std::int64_t>& coord) {
            std::vector<tmem::PhysCoord> coords = unwrap(v.apply(coord));
            nb::list out;
            for (const tmem::PhysCoord& c : coords) out.append(coord_dict(c, v.axes()));
            return out;
          },
          "coord"_a,
          nb::sig("def apply(self, coord: collections.abc.Sequence[int]) -> list[dict[str, int]]"),
          "The physical coordinates of the element at `coord`, one dict per replica, keyed by the\n"
          "axes the layout names (\"TLane\", \"TCol\", \"m\", \"tid_in_wg\", ...). TCol and m "
          "count\n"
          "elements of the dtype.")
      .def("__str__", &tmem::View::to_string)
      .def("__repr__",
           [](const tmem::View& v) { return "View.parse(" + py_repr(v.to_string()) + ")"; })
      .def(
          "__eq__", [](const tmem::View& a, const tmem::View& b) { return a == b; },
          nb::is_operator(), kEqSignature)
      .def("__hash__", &tmem::View::hash)
      .def("__getstate__", &tmem::View::to_string)
      .def("__setstate__", [](tmem::View* self, const std::string& text) {
        new (self) tmem::View(unwrap(tmem::View::parse(text)));
      });
}

void bind_transfer_spec(nb::module_& m) {
  nb::class_<tmem::TransferSpec>(
      m, "TransferSpec",
      "One tiled tcgen05.ld/st transfer: the opcode, the scope, the TMEM and register operand "
      "views\n"
      "and, for 16x32bx2, the second TMEM region and the immediate.\n\n"
      "TransferSpec(op=\"tcgen05.st.sync.aligned.32x32b.x64.b32\", scope=\"warpgroup\", tmem=..., "
      "regs=...)\n"
      "Views are text or View objects; scope is \"warp:W\", \"warpgroup\" or \"cta:NW\". "
      "Construction\n"
      "checks only the structure (parse errors, tmem2/imm exactly for 16x32bx2); check() applies\n"
      "the native-image rules. Immutable; ==, hash and repr (which evaluates back) follow the C++ "
      "value.")
      .def(
          "__init__",
          [](tmem::TransferSpec* self, const std::string& op, const std::string& scope,
             const ViewArg& tmem, const ViewArg& regs, const std::optional<ViewArg>& tmem2,
             std::optional<std::int64_t> imm) {
            new (self) tmem::TransferSpec(make_spec(op, scope, tmem, regs, tmem2, imm));
          },
          nb::kw_only(), "op"_a, "scope"_a, "tmem"_a, "regs"_a, "tmem2"_a = nb::none(),
          "imm"_a = nb::none())
      .def_static(
          "from_json",
          [](const std::string& text) { return unwrap(tmem::TransferSpec::from_json(text)); },
          "text"_a, "A JSON object with the keys op, scope, tmem, regs and optionally tmem2, imm.")
      .def_static(
          "parse", [](const std::string& text) { return unwrap(tmem::TransferSpec::parse(text)); },
          "text"_a, "The \"key: value\" lines of str(spec).")
      .def("to_json", &tmem::TransferSpec::to_json,
           "The JSON form that from_json() and `tmemjit --spec` read.")
      .def_prop_ro(
          "op", [](const tmem::TransferSpec& s) { return s.op().to_string(); },
          "the opcode's PTX spelling")
      .def_prop_ro(
          "opcode", [](const tmem::TransferSpec& s) { return s.op(); }, "the opcode as an Opcode")
      .def_prop_ro(
          "scope", [](const tmem::TransferSpec& s) { return s.scope().to_string(); },
          "\"warp:W\", \"warpgroup\" or \"cta:NW\"")
      .def_prop_ro(
          "tmem", [](const tmem::TransferSpec& s) { return s.tmem(); }, "the TMEM operand view")
      .def_prop_ro(
          "regs", [](const tmem::TransferSpec& s) { return s.regs(); }, "the register operand view")
      .def_prop_ro(
          "tmem2", [](const tmem::TransferSpec& s) { return s.tmem2(); },
          "the second TMEM region of 16x32bx2, else None")
      .def_prop_ro(
          "imm", [](const tmem::TransferSpec& s) { return s.imm(); },
          "immHalfSplitoff of 16x32bx2 (lane << 16 | column), else None")
      .def_prop_ro("fingerprint", &fingerprint_hex,
                   "32 hex digits of the XXH3-128 of what the spec means: spellings of one "
                   "transfer share it")
      .def("__str__", &tmem::TransferSpec::to_string)
      .def("__repr__", &spec_repr)
      .def(
          "__eq__", [](const tmem::TransferSpec& a, const tmem::TransferSpec& b) { return a == b; },
          nb::is_operator(), kEqSignature)
      .def("__hash__", &tmem::TransferSpec::hash)
      .def("__getstate__", &tmem::TransferSpec::to_json)
      .def("__setstate__", [](tmem::TransferSpec* self, const std::string& json) {
        new (self) tmem::TransferSpec(unwrap(tmem::TransferSpec::from_json(json)));
      });
}

}  // namespace

void bind_descriptors(nb::module_& m) {
  bind_opcode(m);
  bind_view(m);
  bind_transfer_spec(m);
}

}  // namespace tmemjit_py
