// compile_transfer and warmup -> Kernel (cubin, PTX, name), and the module cache's counters and
// maintenance (docs/design.md §Codegen, §Python).
#include "tmem/jit.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <limits>
#include <string>
#include <vector>

#include "bindings.h"
#include "options.h"
#include "tmem/cache.h"
#include "tmem/compile.h"
#include "tmem/kernel.h"
#include "tmem/kernel_kind.h"
#include "tmem/text.h"

namespace tmemjit_py {

tmem::CompileOptions compile_options(const std::string& target, const std::string& backend,
                                     int opt_level, bool line_info, bool tmem_access_check,
                                     const std::string& keep_dir,
                                     const std::vector<std::string>& extra_options) {
  tmem::CompileOptions options;
  options.target = unwrap(tmem::parse_target(target));  // sm_90 included: the emulation
  options.backend = unwrap(tmem::parse_backend(backend));
  options.opt_level = opt_level;
  options.line_info = line_info;
  options.tmem_access_check = tmem_access_check;
  options.keep_dir = keep_dir;
  options.extra_options = extra_options;
  return options;
}

namespace {

void bind_report(nb::module_& m) {
  nb::class_<tmem::CodeStats>(
      m, "CodeStats",
      "The kernel's code, read from its cubin (CompileReport.code): registers and local memory\n"
      "per thread, SASS instructions, and the LDTM/STTM counts (-1 where they were not counted;\n"
      "`disassembler` says how they were).")
      .def_ro("registers", &tmem::CodeStats::registers)
      .def_ro("local_bytes", &tmem::CodeStats::local_bytes, "spills and local arrays, per thread")
      .def_ro("instructions", &tmem::CodeStats::instructions)
      .def_ro("ldtm", &tmem::CodeStats::ldtm)
      .def_ro("sttm", &tmem::CodeStats::sttm)
      .def_ro("disassembler", &tmem::CodeStats::disassembler)
      .def("__repr__", [](const tmem::CodeStats& stats) {
        return "<tmemjit.CodeStats " + tmem::to_string(stats) + ">";
      });
  nb::class_<tmem::CompileReport>(
      m, "CompileReport",
      "How a compile_kernel call got its kernel (Kernel.report): the cache tier that answered,\n"
      "the times of a compile this call ran, the front end's reuse, the compiler's log, the\n"
      "warnings and each transfer's plan.")
      .def_prop_ro(
          "cache",
          [](const tmem::CompileReport& r) { return std::string(tmem::to_string(r.cache)); },
          "\"miss\" (this call compiled), \"memory\", \"disk\" or \"remote\"")
      .def_ro("cache_enabled", &tmem::CompileReport::cache_enabled)
      .def_prop_ro(
          "backend",
          [](const tmem::CompileReport& r) { return std::string(tmem::to_string(r.backend)); },
          "the resolved backend of the final compile")
      .def_ro("compile_ms", &tmem::CompileReport::compile_ms, "0 on a hit")
      .def_ro("key", &tmem::CompileReport::key, "the cache key, 32 hex digits")
      .def_ro("log", &tmem::CompileReport::log)
      .def_ro("warnings", &tmem::CompileReport::warnings,
              "e.g. a transfer the source never calls (also printed once per key on stderr)")
      .def_prop_ro(
          "front_end",
          [](const tmem::CompileReport& r) {
            return std::string(tmem::to_string(r.front_end_cache));
          },
          "where the parse of the source's headers came from (\"miss\": this call parsed "
          "them; \"memory\": precompiled headers of an earlier layout)")
      .def_ro("headers", &tmem::CompileReport::headers,
              "what NVRTC did with the headers: created, reused, none, or why precompiled "
              "headers were off")
      .def_ro("include_files", &tmem::CompileReport::include_files,
              "files of the source's include closure in the cache key")
      .def_ro("front_end_ms", &tmem::CompileReport::front_end_ms)
      .def_ro("ptx_compile_ms", &tmem::CompileReport::ptx_compile_ms)
      .def_prop_ro(
          "link_ms",
          [](const tmem::CompileReport&) {
            // Deprecated for one release before it goes (CHANGELOG.md): warns, and is 0.
            if (PyErr_WarnEx(PyExc_DeprecationWarning,
                             "CompileReport.link_ms is always 0 since 0.2.0 (no link stage: the "
                             "time is in front_end_ms and ptx_compile_ms) and goes in the next "
                             "release",
                             1) != 0)
              throw nb::python_error();
            return 0.0;
          },
          "deprecated: always 0 (no link stage since 0.2.0); removed in the next release")
      .def_ro("code", &tmem::CompileReport::code, "the kernel's code (CodeStats)")
      .def_ro("entry", &tmem::CompileReport::entry, "the entry's name in the cubin")
      .def_ro("tier", &tmem::CompileReport::tier,
              "the tier the returned kernel runs first: \"specialized\" or \"generic\" "
              "(Kernel.tier is the tier now)")
      .def_ro("tier_reason", &tmem::CompileReport::tier_reason,
              "why the tier asked for (specialization=) was not returned: a transfer the generic "
              "tier cannot express (named), or lazy with no cached generic tier; else empty")
      .def_prop_ro(
          "transfers",
          [](const tmem::CompileReport& r) {
            nb::list list;
            for (const auto& t : r.transfers) {
              nb::dict d;  // the keys of `tmemjit specialize --json`'s transfers
              d["name"] = t.name;
              d["op"] = t.op;
              d["regs_per_thread"] = t.regs_per_thread;
              d["instructions_per_warp"] = t.instructions_per_warp;
              d["alloc_columns"] = t.alloc_columns;
              list.append(d);
            }
            return list;
          },
          nb::for_getter(nb::sig("def transfers(self) -> list[dict[str, str | int]]")),
          "each transfer's name, op, regs_per_thread, instructions_per_warp and alloc_columns")
      .def("__repr__", [](const tmem::CompileReport& r) {
        std::string text = "<tmemjit.CompileReport " + std::string(tmem::to_string(r.cache));
        if (r.cache == tmem::CacheSource::kCompiled)
          text += ", " + std::to_string(static_cast<long long>(r.compile_ms + 0.5)) + " ms";
        return text + ", " + std::to_string(r.warnings.size()) + " warnings>";
      });
}

// ---- Kernel.launch: Python values as the kernel's parameters ----------------------------------

// A Python int as T; Error "usage" naming `what` and the value where it does not fit (nb::cast
// threw std::bad_cast, a RuntimeError, issue 30).
template <class T>
T int_that_fits(nb::handle value, const std::string& what, const std::string& range = {}) {
  T out{};
  if (!nb::try_cast<T>(value, out))
    raise(tmem::ErrorCode::kUsage,
          what + " " + tmem::quote_excerpt(nb::str(value).c_str()) + " is out of range (" +
              (range.empty() ? std::to_string(std::numeric_limits<T>::min()) + " to " +
                                   std::to_string(std::numeric_limits<T>::max())
                             : range) +
              ")");
  return out;
}

}  // namespace

tmem::Dim3 to_dim3(nb::handle value, const char* what) {
  std::vector<long long> extents;
  if (nb::isinstance<nb::int_>(value) && !nb::isinstance<nb::bool_>(value)) {
    extents.push_back(
        int_that_fits<long long>(value, std::string(what) + " extent", "1 to 2147483647"));
  } else if (nb::isinstance<nb::tuple>(value) || nb::isinstance<nb::list>(value)) {
    for (nb::handle item : value) {
      if (!nb::isinstance<nb::int_>(item) || nb::isinstance<nb::bool_>(item))
        throw nb::type_error((std::string(what) + " must be an int or a tuple of ints").c_str());
      extents.push_back(
          int_that_fits<long long>(item, std::string(what) + " extent", "1 to 2147483647"));
    }
  } else {
    throw nb::type_error((std::string(what) + " must be an int or a tuple of ints, not " +
                          nb::type_name(value.type()).c_str())
                             .c_str());
  }
  if (extents.empty() || extents.size() > 3)
    raise(tmem::ErrorCode::kUsage,
          std::string(what) + " takes one to three extents, got " + std::to_string(extents.size()));
  tmem::Dim3 dim;
  unsigned* slots[] = {&dim.x, &dim.y, &dim.z};
  for (size_t i = 0; i < extents.size(); ++i) {
    if (extents[i] < 1 || extents[i] > 0x7fffffffLL)
      raise(tmem::ErrorCode::kUsage, std::string(what) + " extent " + std::to_string(i) +
                                         " must be at least 1, got " + std::to_string(extents[i]));
    *slots[i] = static_cast<unsigned>(extents[i]);
  }
  return dim;
}

namespace {

// The bytes of one argument. A Python int or float has no C type (is 3 an int, a size_t, a
// pointer? is 0.5 a float or a double?), and guessing is how a kernel gets wrong data, so they
// are refused; typed values come as numpy scalars or ctypes, device memory through
// __cuda_array_interface__ (CuPy, Numba, PyTorch) or as ctypes.c_void_p.
std::string argument_bytes(nb::handle value, size_t index) {
  const std::string where = "argument " + std::to_string(index);
  if (nb::hasattr(value, "__cuda_array_interface__")) {
    nb::object data = nb::getattr(value, "__cuda_array_interface__")["data"];
    const auto address = int_that_fits<unsigned long long>(data[0], where + "'s address");
    return std::string(reinterpret_cast<const char*>(&address), sizeof address);
  }
  // Exact types only: numpy.float64 subclasses float and is a typed value (8 bytes).
  if (PyBool_Check(value.ptr()) || PyLong_CheckExact(value.ptr()) ||
      PyFloat_CheckExact(value.ptr()))
    throw nb::type_error((where + " is a Python " + nb::type_name(value.type()).c_str() +
                          ", which has no C type: pass numpy.float32(x), numpy.int32(x), "
                          "ctypes.c_uint(x), ... (a device address: ctypes.c_void_p(address))")
                             .c_str());
  // A host array where device memory belongs is a common slip; its bytes are no argument (and one
  // of 8 bytes would pass as a pointer).
  if (nb::hasattr(value, "ndim") && nb::hasattr(value, "shape") &&
      nb::cast<long long>(nb::getattr(value, "ndim")) > 0)
    throw nb::type_error((where + " is a host array (" + nb::type_name(value.type()).c_str() +
                          "): pass device memory (__cuda_array_interface__ or "
                          "ctypes.c_void_p(address)), or a scalar such as numpy.float32(x)")
                             .c_str());
  Py_buffer view;
  if (PyObject_GetBuffer(value.ptr(), &view, PyBUF_SIMPLE) != 0) {
    PyErr_Clear();
    throw nb::type_error((where + " (" + nb::type_name(value.type()).c_str() +
                          ") is neither device memory (__cuda_array_interface__) nor a typed "
                          "value (a numpy scalar or a ctypes value)")
                             .c_str());
  }
  std::string bytes(static_cast<const char*>(view.buf), static_cast<size_t>(view.len));
  PyBuffer_Release(&view);
  return bytes;
}

// A CUstream: None (the default stream), an int handle, or an object with __cuda_stream__
// (cuda.core's Stream, the CUDA stream protocol) or an int-like .handle.
void* to_stream(nb::handle stream) {
  if (stream.is_none()) return nullptr;
  nb::object handle;
  if (nb::hasattr(stream, "__cuda_stream__"))
    handle = nb::getattr(stream, "__cuda_stream__")()[1];
  else if (nb::isinstance<nb::int_>(stream))
    handle = nb::borrow(stream);
  else if (nb::hasattr(stream, "handle"))
    handle = nb::getattr(stream, "handle");
  else
    throw nb::type_error((std::string("stream must be None, an int handle or an object with "
                                      "__cuda_stream__, not ") +
                          nb::type_name(stream.type()).c_str())
                             .c_str());
  return reinterpret_cast<void*>(int_that_fits<uintptr_t>(nb::int_(handle), "stream handle"));
}

void bind_kernel(nb::module_& m) {
  nb::class_<PyKernel>(
      m, "Kernel",
      "A compiled kernel: the cubin (bytes), the PTX it came from and its entry point.\n"
      "Load the cubin with cuda.core (docs/python.md) or load() it into this process;\n"
      "prepare() readies it for a launcher of your own (cuda.core's launch, cuLaunchKernel).")
      .def_prop_ro(
          "name", [](const PyKernel& k) { return k.kernel.name(); }, "the entry point")
      .def_prop_ro(
          "target",
          [](const PyKernel& k) { return std::string(tmem::to_string(k.kernel.target())); })
      .def_prop_ro(
          "cubin",
          [](const PyKernel& k) {
            const std::span<const char> cubin = k.kernel.cubin();
            return nb::bytes(cubin.data(), cubin.size());
          },
          "the ELF image, as bytes")
      .def_prop_ro(
          "ptx", [](const PyKernel& k) { return std::string(k.kernel.ptx()); },
          "the PTX input (the CUDA C++ source for NVRTC-compiled kernels)")
      .def_prop_ro("loaded", [](const PyKernel& k) { return k.kernel.loaded(); })
      .def_prop_ro(
          "report",
          [](const PyKernel& k) -> std::optional<tmem::CompileReport> {
            if (k.report == nullptr) return std::nullopt;
            return *k.report;
          },
          "the CompileReport of the compile_kernel call that returned this object (None from "
          "compile_transfer)")
      .def(
          "load", [](const PyKernel& k) { without_gil([&] { return k.kernel.load(); }); },
          "Loads the module into this process's CUDA driver now; Error \"driver\" without one, "
          "\"target\"\n"
          "where the current device cannot run the target.")
      .def(
          "launch",
          [](const PyKernel& k, nb::handle grid, nb::handle block, nb::sequence args,
             unsigned shared_mem, nb::handle stream, unsigned cluster) {
            tmem::LaunchConfig config;
            config.grid = to_dim3(grid, "grid");
            config.block = to_dim3(block, "block");
            config.shared_bytes = shared_mem;
            config.stream = to_stream(stream);
            config.cluster_ctas = cluster;
            std::vector<std::string> values;
            for (nb::handle arg : args) values.push_back(argument_bytes(arg, values.size()));
            std::vector<tmem::KernelArg> typed;
            for (const std::string& value : values) typed.push_back({value.data(), value.size()});
            without_gil([&] { return k.kernel.launch(config, std::span(typed)); });
          },
          "grid"_a, "block"_a, "args"_a = nb::tuple(), nb::kw_only(), "shared_mem"_a = 0,
          "stream"_a = nb::none(), "cluster"_a = 1,
          nb::sig("def launch(self, grid: int | tuple[int, ...], block: int | tuple[int, ...], "
                  "args: collections.abc.Sequence[object] = (), *, shared_mem: int = 0, "
                  "stream: object = None, cluster: int = 1) -> None"),
          "Launches on the current CUDA context (device 0's primary context when none is), "
          "asynchronously.\n"
          "args: one per kernel parameter, in order: device memory (an object with\n"
          "__cuda_array_interface__, or ctypes.c_void_p(address)), or a typed value "
          "(numpy.float32(x),\n"
          "ctypes.c_int(x), ...); plain Python ints and floats are refused, having no C type. The\n"
          "count and each size are checked against the kernel's parameters first (Error "
          "\"usage\").\n"
          "An emulated kernel (target sm_90) gets its emulated TMEM bound for the grid. stream: "
          "None,\n"
          "an int CUstream or an object with __cuda_stream__ (cuda.core). cluster: CTAs per "
          "cluster\n"
          "along x (2 for cta_group=2).")
      .def(
          "parameter_sizes",
          [](const PyKernel& k) { return without_gil([&] { return k.kernel.parameter_sizes(); }); },
          "The size in bytes of each parameter, from the driver (loads the module).")
      .def_prop_ro(
          "tier", [](const PyKernel& k) { return std::string(k.kernel.tier()); },
          "the tier launches run now: \"generic\" (a lazy or generic compile_kernel) or "
          "\"specialized\"; a lazy kernel switches once, when its specialized kernel lands")
      .def(
          "wait_specialized",
          [](const PyKernel& k) { without_gil([&] { return k.kernel.wait_specialized(); }); },
          "Waits until a lazy kernel's specialized kernel is ready and launches use it (at once\n"
          "for every other kernel). Raises Error, that kernel's compile error, if it failed; the\n"
          "kernel then stays generic, which still runs correctly.")
      .def_prop_ro(
          "emulated", [](const PyKernel& k) { return k.kernel.emulated(); },
          "whether the kernel runs the emulated transfers (compile_kernel for target sm_90)")
      .def(
          "emulation_check",
          [](const PyKernel& k) { return without_gil([&] { return k.kernel.emulation_check(); }); },
          "Waits for the device, then the emulation's warnings of the last launch (a list of "
          "str), or\n"
          "Error for an addressing error it caught (naming the instruction and the thread).")
      .def("__repr__", [](const PyKernel& k) {
        return "<tmemjit.Kernel " + k.kernel.name() + " " +
               std::string(tmem::to_string(k.kernel.target())) + ", " +
               std::to_string(k.kernel.cubin().size()) + "-byte cubin>";
      });
}

nb::dict stats_dict() {
  const tmem::CacheStats s = tmem::cache_stats();
  nb::dict d;
  d["hits"] = s.hits;
  d["misses"] = s.misses;
  d["disk_hits"] = s.disk_hits;
  d["disk_writes"] = s.disk_writes;
  d["remote_hits"] = s.remote_hits;
  d["remote_misses"] = s.remote_misses;
  d["remote_writes"] = s.remote_writes;
  d["remote_errors"] = s.remote_errors;
  d["remote_rejected"] = s.remote_rejected;
  d["remote_lock_waits"] = s.remote_lock_waits;
  d["evictions"] = s.evictions;
  d["compile_ms"] = s.compile_ms;
  d["bytes"] = s.bytes;
  d["entries"] = s.entries;
  return d;
}

}  // namespace

void bind_jit(nb::module_& m) {
  bind_report(m);
  bind_kernel(m);
  bind_prepare(m);

  // The compile options come as options= or as keywords, each a CompileOptions field (options.h).
  const std::string transfer_signature =
      "def compile_transfer(spec: TransferSpec, *, kind: str = 'roundtrip', options: "
      "CompileOptions | None = None, " +
      option_parameters() + ") -> Kernel";
  m.def(
      "compile_transfer",
      [](const tmem::TransferSpec& spec, const std::string& kind, nb::handle options,
         const nb::kwargs& keywords) {
        const tmem::KernelKind kernel_kind = unwrap(tmem::parse_kernel_kind(kind));
        tmem::CompileOptions made;
        const tmem::CompileOptions& given =
            call_options(options, keywords, "compile_transfer", made);
        // No report: filling one on a memory hit (the key, the log) tripled the hit's cost from
        // Python; cache_stats() counts the tiers instead.
        return PyKernel{
            .kernel = without_gil([&] { return tmem::compile_transfer(spec, given, kernel_kind); }),
            .report = nullptr};
      },
      "spec"_a, nb::kw_only(), "kind"_a = "roundtrip", "options"_a = nb::none(), "keywords"_a,
      nb::sig(transfer_signature.c_str()),
      "The harness kernel `kind` (\"roundtrip\", \"store\", \"load\", \"fill\") of `spec`,\n"
      "checked, compiled with `options` (a CompileOptions) or its fields given as keywords, not\n"
      "both: for `target` by `backend` (\"auto\", \"nvptxcompiler\", \"nvjitlink\", \"ptxas\", "
      "\"driver\"),\n"
      "and cached in memory and on disk. A memory hit costs well under a microsecond. keep_dir:\n"
      "write the PTX, cubin and log of each compile there; precompile, front_end and\n"
      "specialization are compile_kernel's and change nothing here. Raises Error: the spec's\n"
      "rule errors, \"toolchain\" with the compiler log and the PTX in .details.");

  const std::string warmup_signature =
      "def warmup(specs: collections.abc.Sequence[TransferSpec], *, kind: str = 'roundtrip', "
      "options: CompileOptions | None = None, " +
      option_parameters() + ") -> None";
  m.def(
      "warmup",
      [](const std::vector<tmem::TransferSpec>& specs, const std::string& kind, nb::handle options,
         const nb::kwargs& keywords) {
        const tmem::KernelKind kernel_kind = unwrap(tmem::parse_kernel_kind(kind));
        tmem::CompileOptions made;
        const tmem::CompileOptions& given = call_options(options, keywords, "warmup", made);
        without_gil([&] { return tmem::warmup(specs, given, kernel_kind); });
      },
      "specs"_a, nb::kw_only(), "kind"_a = "roundtrip", "options"_a = nb::none(), "keywords"_a,
      nb::sig(warmup_signature.c_str()),
      "Compiles every spec into the cache on all cores, for precompiling at startup, with the\n"
      "options compile_transfer takes. Raises the error of the first failing spec with its "
      "index.");

  m.def("cache_stats", &stats_dict,
        "Counters since the process started or reset_cache_stats(): hits, misses, disk_hits,\n"
        "disk_writes, evictions, compile_ms; bytes and entries held in memory now.");
  m.def("reset_cache_stats", &tmem::reset_cache_stats, "Zeroes the counters of cache_stats().");
  m.def(
      "clear_cache", [](bool disk) { without_gil([&] { return tmem::clear_cache(disk); }); },
      "disk"_a = false, "Drops the entries held in memory and, with disk=True, those on disk.");
  m.def("set_cache_dir", &tmem::set_cache_dir, "path"_a,
        "Puts the disk cache under `path` (default $TMEMJIT_CACHE_DIR, else the XDG cache dir).");
  m.def(
      "cache_dir", [] { return tmem::cache_options().dir; },
      "The disk cache's root in effect (empty: memory only).");

  // For python/bench/cache_hit_bench.py only: the C++ cost of the same memory hit, timed in C++ in
  // this process, so the benchmark compares Python and C++ within one run.
  m.def(
      "_cxx_hit_ns",
      [](const tmem::TransferSpec& spec, int iterations) {
        const tmem::CompileOptions options;
        nb::gil_scoped_release release;
        (void)tmem::compile_transfer(spec, options);
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < iterations; ++i) {
          tmem::Result<tmem::Kernel> kernel = tmem::compile_transfer(spec, options);
          if (!kernel) return -1.0;
        }
        const std::chrono::duration<double, std::nano> elapsed =
            std::chrono::steady_clock::now() - start;
        return elapsed.count() / iterations;
      },
      "spec"_a, "iterations"_a);
}

}  // namespace tmemjit_py
