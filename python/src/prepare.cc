// Kernel.prepare and Kernel.binding (docs/specialization.md, "Launching with your own launcher"):
// what a launcher of the user's own (cuda.core, cuda.bindings, a PyTorch extension) needs before
// it launches a Kernel, which Kernel.launch otherwise does itself.
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <utility>

#include "bindings.h"
#include "tmem/kernel.h"

namespace tmemjit_py {
namespace {

// A KernelBinding with the Kernel whose payload its cubin views, so the view outlives nothing.
struct PyKernelBinding {
  tmem::KernelBinding binding;
  tmem::Kernel owner;
};

std::uintptr_t handle_of(void* handle) { return reinterpret_cast<std::uintptr_t>(handle); }

void bind_results(nb::module_& m) {
  nb::class_<tmem::PreparedKernel>(
      m, "PreparedKernel",
      "What Kernel.prepare() returns: the entry of the tier that runs now, loaded and bound in\n"
      "the CUDA context current at the call. Launch it in that context.")
      .def_prop_ro(
          "function", [](const tmem::PreparedKernel& p) { return handle_of(p.function); },
          "the CUfunction, as an int: cuLaunchKernel / cuLaunchKernelEx (cuda.bindings: "
          "driver.CUfunction(function)), a PyTorch extension's launch")
      .def_prop_ro(
          "kernel", [](const tmem::PreparedKernel& p) { return handle_of(p.kernel); },
          "the CUkernel of the same entry, as an int: cuda.core's Kernel.from_handle(kernel)")
      .def_ro("tier", &tmem::PreparedKernel::tier, "\"generic\" or \"specialized\"")
      .def("__repr__", [](const tmem::PreparedKernel& p) {
        return "<tmemjit.PreparedKernel " + p.tier +
               " function=" + std::to_string(handle_of(p.function)) + ">";
      });
  nb::class_<PyKernelBinding>(
      m, "KernelBinding",
      "What Kernel.binding() returns, for a launcher that loads the cubin itself: the tier that\n"
      "runs now, its cubin and entry, and the globals to write into the loaded module before\n"
      "each launch. All of one tier: load this cubin, not Kernel.cubin read at another time.")
      .def_prop_ro(
          "tier", [](const PyKernelBinding& b) { return b.binding.tier; },
          "\"generic\" or \"specialized\"")
      .def_prop_ro(
          "entry", [](const PyKernelBinding& b) { return b.binding.entry; },
          "the kernel's name in the cubin")
      .def_prop_ro(
          "cubin",
          [](const PyKernelBinding& b) {
            return nb::bytes(b.binding.cubin.data(), b.binding.cubin.size());
          },
          "the tier's image, as bytes")
      .def_prop_ro(
          "globals",
          [](const PyKernelBinding& b) {
            nb::list list;
            for (const tmem::ModuleGlobal& global : b.binding.globals)
              list.append(nb::make_tuple(global.symbol,
                                         nb::bytes(global.bytes.data(), global.bytes.size())));
            return list;
          },
          nb::for_getter(nb::sig("def globals(self) -> list[tuple[str, bytes]]")),
          "(symbol, bytes) of each global to write (cuLibraryGetGlobal + cuMemcpyHtoD); empty\n"
          "when nothing needs writing. Skip a symbol the module lacks: it belongs to a transfer\n"
          "the kernel never calls, whose descriptor the compiler dropped.")
      .def("__repr__", [](const PyKernelBinding& b) {
        return "<tmemjit.KernelBinding " + b.binding.entry + " " + b.binding.tier + ", " +
               std::to_string(b.binding.globals.size()) + " globals>";
      });
}

}  // namespace

void bind_prepare(nb::module_& m) {
  bind_results(m);
  // Methods of tmemjit.Kernel (bound in jit.cc), defined as class_::def defines them.
  const nb::handle kernel = nb::type<PyKernel>();
  nb::cpp_function_def(
      [](const PyKernel& k, nb::handle grid) {
        if (grid.is_none()) return without_gil([&] { return k.kernel.prepare(); });
        const tmem::Dim3 dim = to_dim3(grid, "grid");
        return without_gil([&] { return k.kernel.prepare(dim); });
      },
      nb::scope(kernel), nb::name("prepare"), nb::is_method(), "grid"_a = nb::none(),
      nb::sig("def prepare(self, grid: int | tuple[int, ...] | None = None) -> PreparedKernel"),
      "Readies the kernel for a launcher of your own (cuda.core, cuda.bindings, a PyTorch\n"
      "extension): writes what the tier that runs now reads before it runs (the generic tier's\n"
      "layout descriptors; an emulated kernel's TMEM for `grid`) into this Kernel's module in\n"
      "the current CUDA context, as launch() does, and returns that tier's entry as a\n"
      "PreparedKernel (.function, a CUfunction; .kernel, a CUkernel; .tier). Launch it in the\n"
      "context current now. Call prepare() before each launch: a lazy kernel switches tiers\n"
      "once (handles already returned keep running theirs, correctly; a new prepare() picks up\n"
      "the specialized kernel), and an emulated kernel (target sm_90) needs prepare(grid) with\n"
      "the launch's grid every time (its emulated TMEM bound, the records emulation_check()\n"
      "reads cleared). Error \"usage\" for an emulated kernel without grid, \"driver\" without a\n"
      "CUDA driver, \"target\" where the current device cannot run the target.");
  nb::cpp_function_def(
      [](const PyKernel& k, nb::handle grid) {
        if (grid.is_none())
          return PyKernelBinding{without_gil([&] { return k.kernel.binding(); }), k.kernel};
        const tmem::Dim3 dim = to_dim3(grid, "grid");
        return PyKernelBinding{without_gil([&] { return k.kernel.binding(dim); }), k.kernel};
      },
      nb::scope(kernel), nb::name("binding"), nb::is_method(), "grid"_a = nb::none(),
      nb::sig("def binding(self, grid: int | tuple[int, ...] | None = None) -> KernelBinding"),
      "The contract of prepare() for a launcher that loads the cubin itself: a KernelBinding of\n"
      "the tier that runs now (.tier, .entry, .cubin, and .globals: the (symbol, bytes) to\n"
      "write into the loaded module before each launch; empty for a specialized kernel, the\n"
      "layout's descriptors for the generic tier). Ask again before each launch: the tier and\n"
      "its bytes change when a lazy kernel switches. Needs no driver, except for an emulated\n"
      "kernel: binding(grid) allocates its emulated TMEM in the current context and adds\n"
      "tmemjit::emu_state (_ZN7tmemjit9emu_stateE) pointing at it.");
}

}  // namespace tmemjit_py
