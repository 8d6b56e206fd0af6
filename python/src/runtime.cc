// tmemjit.Runtime: a tmem::Runtime (include/tmem/runtime.h) as a context manager. Inside
// `with runtime:` the calling thread's compiles, cache functions and background compiles use it.
#include "tmem/runtime.h"

#include <nanobind/stl/optional.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bindings.h"
#include "tmem/cache.h"

namespace tmemjit_py {
namespace {

class PyRuntime {
 public:
  explicit PyRuntime(const tmem::CacheOptions& cache)
      : runtime_(std::make_unique<tmem::Runtime>(cache)) {}
  ~PyRuntime() {
    // The destructor joins the background thread, whose job may need the GIL (a warning handler).
    nb::gil_scoped_release release;
    scopes_.clear();
    runtime_.reset();
  }

  void enter() {
    scopes_.push_back(
        Scope{std::this_thread::get_id(), std::make_unique<tmem::Runtime::Use>(*runtime_)});
  }
  void exit() {
    if (scopes_.empty() || scopes_.back().thread != std::this_thread::get_id())
      throw tmem::Error(tmem::ErrorCode::kUsage,
                        "tmemjit.Runtime: leaving a `with` block that this thread did not enter "
                        "(a runtime is current per thread)");
    scopes_.pop_back();
  }
  tmem::Runtime& runtime() { return *runtime_; }

 private:
  struct Scope {
    std::thread::id thread;
    std::unique_ptr<tmem::Runtime::Use> use;
  };
  std::unique_ptr<tmem::Runtime> runtime_;
  std::vector<Scope> scopes_;  // one per `with` entered, innermost last
};

tmem::CacheOptions cache_options_for(const std::optional<std::string>& cache_dir, bool cache) {
  tmem::CacheOptions options = tmem::cache_options_from_env();
  if (cache_dir) {
    options.dir = *cache_dir;
    options.disk = !cache_dir->empty();
  }
  if (!cache) options.enabled = false;
  return options;
}

nb::dict pending_dict(const tmem::BackgroundCompiles& now) {
  nb::dict out;
  out["queued"] = now.queued;
  out["running"] = now.running;
  return out;
}

}  // namespace

void bind_runtime(nb::module_& m) {
  nb::class_<PyRuntime>(
      m, "Runtime",
      "The state the library keeps between compiles: the module cache, the tables of loaded\n"
      "kernels, the pending tiers and their background compiler, the include closures. Code\n"
      "that names none runs under the process's default runtime; inside `with runtime:` the\n"
      "calling thread uses this one, and a background compile runs under the runtime that\n"
      "started it. shutdown() (also when the object goes) lets the running background compile\n"
      "finish and drops the queued ones (docs/architecture.md, \"The runtime\").")
      .def(
          "__init__",
          [](PyRuntime* self, std::optional<std::string> cache_dir, bool cache) {
            new (self) PyRuntime(cache_options_for(cache_dir, cache));
          },
          nb::kw_only(), "cache_dir"_a = nb::none(), "cache"_a = true,
          "A runtime whose module cache is the environment's (TMEMJIT_CACHE_DIR and the rest),\n"
          "with its disk tier in `cache_dir` when given (\"\" for memory only) and no cache at "
          "all\n"
          "when cache=False.")
      .def("__enter__",
           [](nb::handle self) {
             nb::cast<PyRuntime&>(self).enter();
             return self;
           })
      .def(
          "__exit__",
          [](PyRuntime& self, nb::handle, nb::handle, nb::handle) {
            self.exit();
            return false;
          },
          "type"_a.none(), "value"_a.none(), "traceback"_a.none())
      .def(
          "shutdown",
          [](PyRuntime& self) {
            nb::gil_scoped_release release;
            return self.runtime().shutdown();
          },
          "Ends this runtime's background work: the running compile finishes, the queued ones\n"
          "are dropped (their count is returned), and later ones are dropped at once.")
      .def(
          "wait_background_compiles",
          [](PyRuntime& self) {
            nb::gil_scoped_release release;
            self.runtime().wait_background_compiles();
          },
          "Blocks until none of this runtime's background compiles is queued or running.")
      .def(
          "background_compiles",
          [](PyRuntime& self) { return pending_dict(self.runtime().background_compiles()); },
          "This runtime's background compiles now, {'queued': n, 'running': 0 or 1}.");
}

}  // namespace tmemjit_py
