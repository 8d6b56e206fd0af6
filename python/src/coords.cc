// coord_table, same_owners and packed_twin (tmem/coords.h, docs/design.md §Production): coordinates
// on the host, the table as a numpy int32 array.
#include "tmem/coords.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "bindings.h"

namespace tmemjit_py {
namespace {

using Int32Array = nb::ndarray<nb::numpy, std::int32_t>;

// The table's values handed to numpy without a copy: the capsule owns them.
Int32Array table_array(tmem::CoordTable&& table) {
  const std::vector<std::int64_t> shape64 = table.shape();
  std::vector<size_t> shape(shape64.begin(), shape64.end());
  auto* values = new std::vector<std::int32_t>(std::move(table.values));
  nb::capsule owner(values,
                    [](void* p) noexcept { delete static_cast<std::vector<std::int32_t>*>(p); });
  return Int32Array(values->data(), shape.size(), shape.data(), owner);
}

nb::tuple holder_tuple(const tmem::Holder& holder) {
  return nb::make_tuple(holder.thread, holder.reg, holder.half);
}

nb::dict held_dict(const tmem::HeldElement& element) {
  nb::dict dict;
  dict["index"] = nb::tuple(nb::cast(element.index));
  dict["a"] = holder_tuple(element.a);
  dict["b"] = holder_tuple(element.b);
  return dict;
}

}  // namespace

void bind_coords(nb::module_& m) {
  nb::class_<tmem::OwnerComparison>(
      m, "OwnerComparison",
      "What same_owners(a, b) found: whether every element both transfers hold sits in the same\n"
      "threads, the counts, the first counterexample, and where each transfer holds each common\n"
      "element. bool(x) is x.same; str(x) is one line.")
      .def_ro("same", &tmem::OwnerComparison::same)
      .def_ro("common", &tmem::OwnerComparison::common, "elements both hold")
      .def_ro("only_a", &tmem::OwnerComparison::only_a, "elements only a holds")
      .def_ro("only_b", &tmem::OwnerComparison::only_b, "elements only b holds")
      .def_prop_ro(
          "counterexample",
          [](const tmem::OwnerComparison& c) -> nb::object {
            if (!c.counterexample) return nb::none();
            return held_dict(*c.counterexample);
          },
          "None, or the first element held in other threads: {'index': (i, j, ...), 'a': "
          "(thread, register, half), 'b': (thread, register, half)}")
      .def_prop_ro(
          "indices",
          [](const tmem::OwnerComparison& c) {
            const size_t rank = c.pairs.empty() ? 0 : c.pairs.front().index.size();
            auto* values = new std::vector<std::int32_t>();
            values->reserve(c.pairs.size() * rank);
            for (const auto& pair : c.pairs)
              for (std::int64_t v : pair.index) values->push_back(static_cast<std::int32_t>(v));
            nb::capsule owner(values, [](void* p) noexcept {
              delete static_cast<std::vector<std::int32_t>*>(p);
            });
            const size_t shape[2] = {c.pairs.size(), rank};
            return Int32Array(values->data(), 2, shape, owner);
          },
          nb::rv_policy::move,
          "int32 array (n, rank): the index of each common element, row-major (with `same`)")
      .def_prop_ro(
          "holders",
          [](const tmem::OwnerComparison& c) {
            auto* values = new std::vector<std::int32_t>();
            values->reserve(c.pairs.size() * 6);
            for (const auto& pair : c.pairs)
              for (const tmem::Holder* h : {&pair.a, &pair.b}) {
                values->push_back(h->thread);
                values->push_back(h->reg);
                values->push_back(h->half);
              }
            nb::capsule owner(values, [](void* p) noexcept {
              delete static_cast<std::vector<std::int32_t>*>(p);
            });
            const size_t shape[3] = {c.pairs.size(), 2, 3};
            return Int32Array(values->data(), 3, shape, owner);
          },
          nb::rv_policy::move,
          "int32 array (n, 2, 3): for each of `indices`, (thread, register, half) in a, then in b")
      .def("__bool__", [](const tmem::OwnerComparison& c) { return c.same; })
      .def("__str__", &tmem::OwnerComparison::to_string)
      .def("__repr__", [](const tmem::OwnerComparison& c) {
        return "<tmemjit.OwnerComparison " + c.to_string() + ">";
      });

  m.def(
      "coord_table",
      [](const tmem::TransferSpec& spec) {
        return table_array(without_gil([&] { return tmem::coord_table(spec); }));
      },
      "spec"_a,
      "The logical index (in the register tensor as written) that each thread of the scope holds\n"
      "in each register of the plan: an int32 array of shape (threads, registers, rank), or\n"
      "(threads, registers, 2, rank) for a 16-bit register view (both halves of each register),\n"
      "-1 where the plan moves nothing. What N_coord returns, for every thread at once.");
  m.def(
      "same_owners",
      [](const tmem::TransferSpec& a, const tmem::TransferSpec& b) {
        return without_gil([&] { return tmem::same_owners(a, b); });
      },
      "a"_a, "b"_a,
      "Whether a and b hold every element they share (by index in their register tensors, of\n"
      "one shape) in the same CTA threads: an OwnerComparison, with the first counterexample\n"
      "when not.");
  m.def(
      "packed_twin",
      [](const tmem::TransferSpec& load, const std::string& dtype) {
        const std::optional<tmem::DType> parsed = tmem::parse_dtype(dtype);
        if (!parsed)
          raise(tmem::ErrorCode::kUsage,
                "packed_twin: dtype '" + dtype + "'; allowed: bf16, f16 (bfloat16, float16)");
        return without_gil([&] { return tmem::packed_twin(load, *parsed); });
      },
      "load"_a, "dtype"_a,
      "FA4's P over S: the 16-bit store whose register q holds, in the same thread, the\n"
      "elements of the load's registers 2q and 2q + 1, over the load's TMEM (each element in\n"
      "its lane, the load's column c becoming 16-bit unit c + c0). Checked; raises Error\n"
      "(\"layout\") naming the register pair no 32-bit register can hold.");
}

}  // namespace tmemjit_py
