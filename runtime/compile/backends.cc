// The compiler backends: nvJitLink and nvPTXCompiler in-process, ptxas as a subprocess, the
// driver's JIT, NVRTC for CUDA C++.
#include "runtime/compile/backends.h"

#include <dlfcn.h>

#ifdef TMEMJIT_HAVE_NVPTXCOMPILER
#include <nvPTXCompiler.h>
#endif

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <sstream>
#include <variant>
#include <vector>

#include "runtime/compile/reproducer.h"
#include "runtime/compile/sass.h"
#include "runtime/cuda/driver.h"
#include "runtime/cuda/nvjitlink.h"
#include "runtime/cuda/nvrtc.h"
#include "runtime/ptx/cta_group_check.h"
#include "runtime/support/hash.h"
#include "runtime/support/settings.h"
#include "runtime/support/subprocess.h"
#include "runtime/support/warning.h"

namespace tmem {
namespace {

constexpr std::array<Backend, 6> kBackends = {Backend::kNvJitLink,     Backend::kPtxas,
                                              Backend::kNvrtc,         Backend::kDriver,
                                              Backend::kNvPtxCompiler, Backend::kAuto};

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : " ") + p;
  return out;
}

// The details of every compile error: what ran, with which options, what it said, and the input.
std::vector<ErrorDetail> failure_details(Backend backend, const std::vector<std::string>& options,
                                         const std::string& log, const std::string& input) {
  return {{"backend", std::string(to_string(backend))},
          {"options", join(options)},
          {"log", log.empty() ? std::string("(empty)\n") : log},
          {backend == Backend::kNvrtc ? "cuda source" : "ptx", input}};
}

// The first line of a log that mentions an error, to make the one-line message useful.
std::string first_error_line(const std::string& log) {
  std::stringstream lines(log);
  std::string line;
  while (std::getline(lines, line))
    if (line.find("error") != std::string::npos || line.find("fatal") != std::string::npos)
      return line;
  return {};
}

Error toolchain_error(const std::string& stage, std::string reason, Backend backend,
                      const std::vector<std::string>& options, const std::string& log,
                      const std::string& input) {
  if (const std::string first = first_error_line(log); !first.empty()) reason += ": " + first;
  return Error(ErrorCode::kToolchain, stage + " failed: " + reason,
               failure_details(backend, options, log, input));
}

Result<bool> check_options(const CompileOptions& options) {
  if (options.opt_level < 0 || options.opt_level > 3)
    return Error(ErrorCode::kUsage,
                 "opt_level must be 0, 1, 2 or 3, got " + std::to_string(options.opt_level));
  return true;
}

// Keeps the input (before compiling) and the results (after) under options.keep_dir, named
// keep_file_stem(stem, hash of the input and options).
class Keeper {
 public:
  Keeper(const CompileOptions& options, const std::string& input, const char* input_suffix,
         std::string_view stem = {}) {
    if (options.keep_dir.empty()) return;
    // Made here like a cache directory: `--keep DIR` on a directory not yet made is the usual
    // first use, and a bare "cannot write DIR/tmemjit_....ptx" did not say which option was wrong.
    std::error_code made;
    std::filesystem::create_directories(options.keep_dir, made);
    if (made) {
      error_ = Error(ErrorCode::kIo,
                     "cannot create keep_dir '" + options.keep_dir + "': " + made.message());
      return;
    }
    const Key128 key = KeyBuilder().str("input", input).str("options", to_string(options)).finish();
    stem_ = options.keep_dir + "/" + keep_file_stem(stem, key.hex().substr(0, 16));
    error_ = keep(write_file(stem_ + input_suffix, input));
  }

  // With NVRTC's inputs, before the compile: what rebuilds it with NVRTC alone
  // (reproducer.h). The stem is filled in here.
  void keep_reproducer(NvrtcReproducer reproducer) {
    if (stem_.empty() || !error_) return;
    reproducer.stem = stem_;
    error_ = keep(write_nvrtc_reproducer(reproducer));
  }

  // Requires: called once, after the compile; `cubin` may be empty (a failed compile).
  Result<bool> finish(const std::string& log, const std::vector<char>& cubin) {
    if (!error_) return std::move(error_);
    if (stem_.empty()) return true;
    if (auto ok = keep(write_file(stem_ + ".log", log)); !ok) return ok;
    if (cubin.empty()) return true;
    if (auto ok = keep(write_file(stem_ + ".cubin", cubin)); !ok) return ok;
    if (auto tool = sass::find_disassembler()) {
      if (auto text = sass::disassemble(*tool, cubin)) {
        if (auto ok = keep(write_file(stem_ + ".sass", *text)); !ok) return ok;
      }
    }
    return true;
  }

 private:
  // Names the option a failed write comes from: the compile itself did not fail.
  static Result<bool> keep(Result<bool> written) {
    if (written) return written;
    return Error(written.error().code(), "keep_dir: " + written.error().message());
  }

  std::string stem_;
  Result<bool> error_ = true;
};

// ---- nvJitLink --------------------------------------------------------------------------------

const char* nvjitlink_result_name(nvJitLinkResult r) {
  switch (r) {
    case NVJITLINK_SUCCESS:
      return "success";
    case NVJITLINK_ERROR_UNRECOGNIZED_OPTION:
      return "unrecognized option";
    case NVJITLINK_ERROR_MISSING_ARCH:
      return "missing -arch";
    case NVJITLINK_ERROR_INVALID_INPUT:
      return "invalid input";
    case NVJITLINK_ERROR_PTX_COMPILE:
      return "ptx compile error";
    case NVJITLINK_ERROR_NVVM_COMPILE:
      return "nvvm compile error";
    case NVJITLINK_ERROR_INTERNAL:
      return "internal error";
    default:
      return "error";
  }
}

struct LinkHandleDeleter {
  const nvjitlink::Api* api;
  void operator()(nvJitLinkHandle* handle) const {
    if (*handle != nullptr) api->destroy(handle);
    delete handle;
  }
};

std::string nvjitlink_logs(const nvjitlink::Api& api, nvJitLinkHandle handle, bool want_error) {
  size_t size = 0;
  std::string log;
  if (want_error) {
    if (api.get_error_log_size(handle, &size) == NVJITLINK_SUCCESS && size > 1) {
      log.resize(size);
      api.get_error_log(handle, log.data());
    }
  } else if (api.get_info_log_size(handle, &size) == NVJITLINK_SUCCESS && size > 1) {
    log.resize(size);
    api.get_info_log(handle, log.data());
  }
  while (!log.empty() && log.back() == '\0') log.pop_back();
  return log;
}

// nvJitLink 13.0 keeps one buffer per nvJitLinkAddData past nvJitLinkDestroy (docs/reliability.md).
// The entry point tail-jumps into unnamed code, so this call gets a frame of its own for
// tests/sanitizers/lsan.supp to name: a handle we forget to destroy (allocated under create)
// still reports.
[[gnu::noinline]]
#if defined(__clang__)
[[clang::disable_tail_calls]]
#endif
nvJitLinkResult
nvjitlink_add_data(const nvjitlink::Api& api, nvJitLinkHandle handle, nvJitLinkInputType type,
                   std::span<const char> bytes, const char* name) {
  return api.add_data(handle, type, bytes.data(), bytes.size(), name);
}

// One nvJitLink session: create with `options`, add `inputs`, complete, and take the linked
// cubin (`want_ptx` false) or PTX. Both compile_ptx's nvJitLink backend and the LTO link of
// compile_kernel go through here, so handle ownership and log handling live in one place.
struct LinkInput {
  nvJitLinkInputType type;
  std::span<const char> bytes;
  std::string name;
};
struct LinkOutput {
  std::vector<char> bytes;
  std::string info_log;
};
struct LinkFailure {
  std::string stage;
  std::string reason;
  std::string log;
};
using LinkResult = std::variant<LinkOutput, LinkFailure>;

LinkResult nvjitlink_run(const std::vector<std::string>& options,
                         const std::vector<LinkInput>& inputs, bool want_ptx) {
  Result<const nvjitlink::Api*> loaded = nvjitlink::api();
  if (!loaded) return LinkFailure{"nvjitlink", loaded.error().message(), ""};
  const nvjitlink::Api& api = **loaded;
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  std::unique_ptr<nvJitLinkHandle, LinkHandleDeleter> handle(new nvJitLinkHandle{},
                                                             LinkHandleDeleter{&api});
  nvJitLinkResult r = api.create(handle.get(), static_cast<uint32_t>(argv.size()), argv.data());
  if (r != NVJITLINK_SUCCESS) {
    // A failed create leaves no handle to destroy or to ask for a log.
    *handle = nullptr;
    return LinkFailure{"nvjitlink create", nvjitlink_result_name(r), ""};
  }
  for (const LinkInput& input : inputs) {
    r = nvjitlink_add_data(api, *handle, input.type, input.bytes, input.name.c_str());
    if (r != NVJITLINK_SUCCESS) break;
  }
  if (r == NVJITLINK_SUCCESS) r = api.complete(*handle);
  LinkOutput out;
  out.info_log = nvjitlink_logs(api, *handle, false);
  if (r != NVJITLINK_SUCCESS) {
    std::string log = nvjitlink_logs(api, *handle, true);
    if (!out.info_log.empty()) log += (log.empty() ? "" : "\n") + out.info_log;
    return LinkFailure{"nvjitlink link", nvjitlink_result_name(r), log};
  }
  const char* what = want_ptx ? "no ptx" : "no cubin";
  const std::string stage = want_ptx ? "nvjitlink get ptx" : "nvjitlink get cubin";
  size_t size = 0;
  r = want_ptx ? api.get_linked_ptx_size(*handle, &size)
               : api.get_linked_cubin_size(*handle, &size);
  if (r != NVJITLINK_SUCCESS || size == 0) return LinkFailure{stage, what, out.info_log};
  out.bytes.resize(size);
  r = want_ptx ? api.get_linked_ptx(*handle, out.bytes.data())
               : api.get_linked_cubin(*handle, out.bytes.data());
  if (r != NVJITLINK_SUCCESS) return LinkFailure{stage, what, out.info_log};
  return out;
}

Result<CompiledModule> nvjitlink_compile(const std::string& ptx, const CompileOptions& options) {
  const std::vector<std::string> opts = backend_options(Backend::kNvJitLink, options);
  const auto start = Clock::now();
  LinkResult linked = nvjitlink_run(
      opts, {{NVJITLINK_INPUT_PTX, std::span<const char>(ptx.data(), ptx.size()), "tmemjit.ptx"}},
      /*want_ptx=*/false);
  if (auto* failure = std::get_if<LinkFailure>(&linked))
    return toolchain_error(failure->stage, failure->reason, Backend::kNvJitLink, opts, failure->log,
                           ptx);
  auto& out = std::get<LinkOutput>(linked);
  CompiledModule module;
  module.cubin = std::move(out.bytes);
  module.compile_ms = ms_since(start);
  module.log = std::move(out.info_log);
  return module;
}

// ---- ptxas ------------------------------------------------------------------------------------

Result<CompiledModule> ptxas_compile(const std::string& ptx, const CompileOptions& options) {
  std::vector<std::string> opts = backend_options(Backend::kPtxas, options);
  auto dir = ScratchDir::create("tmemjit-ptxas-");
  if (!dir) return std::move(dir).error();
  const std::string input = dir->file("module.ptx");
  const std::string output = dir->file("module.cubin");
  if (auto ok = write_file(input, ptx); !ok) return std::move(ok).error();
  std::vector<std::string> argv = {ptxas_path()};
  argv.insert(argv.end(), opts.begin(), opts.end());
  argv.insert(argv.end(), {"-o", output, input});
  const auto start = Clock::now();
  auto run = run_process(argv);
  if (!run) return toolchain_error("ptxas", run.error().message(), Backend::kPtxas, opts, "", ptx);
  if (run->exit_code != 0)
    return toolchain_error("ptxas", "exit code " + std::to_string(run->exit_code), Backend::kPtxas,
                           opts, run->output, ptx);
  auto cubin = read_file(output);
  if (!cubin)
    return toolchain_error("ptxas", "no cubin was written", Backend::kPtxas, opts, run->output,
                           ptx);
  CompiledModule module;
  module.compile_ms = ms_since(start);
  module.cubin.assign(cubin->begin(), cubin->end());
  module.log = std::move(run->output);
  return module;
}

// ---- nvPTXCompiler ----------------------------------------------------------------------------

#ifdef TMEMJIT_HAVE_NVPTXCOMPILER
const char* nvptxcompiler_result_name(nvPTXCompileResult r) {
  switch (r) {
    case NVPTXCOMPILE_SUCCESS:
      return "success";
    case NVPTXCOMPILE_ERROR_INVALID_COMPILER_HANDLE:
      return "invalid compiler handle";
    case NVPTXCOMPILE_ERROR_INVALID_INPUT:
      return "invalid input";
    case NVPTXCOMPILE_ERROR_COMPILATION_FAILURE:
      return "compilation failure";
    case NVPTXCOMPILE_ERROR_INTERNAL:
      return "internal error";
    case NVPTXCOMPILE_ERROR_OUT_OF_MEMORY:
      return "out of memory";
    case NVPTXCOMPILE_ERROR_UNSUPPORTED_PTX_VERSION:
      return "unsupported ptx version";
    default:
      return "error";
  }
}

struct CompilerHandleDeleter {
  void operator()(nvPTXCompilerHandle* handle) const {
    if (*handle != nullptr) nvPTXCompilerDestroy(handle);
    delete handle;
  }
};

std::string nvptxcompiler_log(nvPTXCompilerHandle handle, bool want_error) {
  size_t size = 0;
  std::string log;
  const nvPTXCompileResult r = want_error ? nvPTXCompilerGetErrorLogSize(handle, &size)
                                          : nvPTXCompilerGetInfoLogSize(handle, &size);
  if (r == NVPTXCOMPILE_SUCCESS && size > 0) {
    log.resize(size + 1);
    if (want_error)
      nvPTXCompilerGetErrorLog(handle, log.data());
    else
      nvPTXCompilerGetInfoLog(handle, log.data());
  }
  while (!log.empty() && log.back() == '\0') log.pop_back();
  return log;
}

// The toolkit's ptxas as a library: a whole-program compile, so the code equals ptxas's
// (docs/compile-backends.md), without a subprocess or temp files.
Result<CompiledModule> nvptxcompiler_compile(const std::string& ptx,
                                             const CompileOptions& options) {
  const std::vector<std::string> opts = backend_options(Backend::kNvPtxCompiler, options);
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());
  const auto start = Clock::now();
  std::unique_ptr<nvPTXCompilerHandle, CompilerHandleDeleter> handle(new nvPTXCompilerHandle{});
  nvPTXCompileResult r = nvPTXCompilerCreate(handle.get(), ptx.size(), ptx.data());
  if (r != NVPTXCOMPILE_SUCCESS) {
    *handle = nullptr;  // a failed create leaves no handle
    return toolchain_error("nvptxcompiler create", nvptxcompiler_result_name(r),
                           Backend::kNvPtxCompiler, opts, "", ptx);
  }
  r = nvPTXCompilerCompile(*handle, static_cast<int>(argv.size()), argv.data());
  const std::string info = nvptxcompiler_log(*handle, false);
  if (r != NVPTXCOMPILE_SUCCESS) {
    std::string log = nvptxcompiler_log(*handle, true);
    if (!info.empty()) log += (log.empty() ? "" : "\n") + info;
    return toolchain_error("nvptxcompiler compile", nvptxcompiler_result_name(r),
                           Backend::kNvPtxCompiler, opts, log, ptx);
  }
  size_t size = 0;
  r = nvPTXCompilerGetCompiledProgramSize(*handle, &size);
  if (r != NVPTXCOMPILE_SUCCESS || size == 0)
    return toolchain_error("nvptxcompiler get cubin",
                           r != NVPTXCOMPILE_SUCCESS ? nvptxcompiler_result_name(r) : "no cubin",
                           Backend::kNvPtxCompiler, opts, info, ptx);
  CompiledModule module;
  module.cubin.resize(size);
  r = nvPTXCompilerGetCompiledProgram(*handle, module.cubin.data());
  if (r != NVPTXCOMPILE_SUCCESS)
    return toolchain_error("nvptxcompiler get cubin", nvptxcompiler_result_name(r),
                           Backend::kNvPtxCompiler, opts, info, ptx);
  module.compile_ms = ms_since(start);
  module.log = info;
  return module;
}
#else
Result<CompiledModule> nvptxcompiler_compile(const std::string& ptx,
                                             const CompileOptions& options) {
  return toolchain_error(
      "nvptxcompiler",
      "this libtmemjit was built without nvPTXCompiler (configure found no "
      "libnvptxcompiler_static.a: see cmake/TmemjitNvPtxCompiler.cmake); use --backend auto, "
      "nvjitlink or ptxas",
      Backend::kNvPtxCompiler, backend_options(Backend::kNvPtxCompiler, options), "", ptx);
}
#endif

// ---- the driver's JIT -------------------------------------------------------------------------

// cuLink* takes no ptxas flags, only CU_JIT_* options: what it cannot honour is refused, not
// dropped, so a cubin never silently lacks e.g. the TMEM access checks that were asked for.
driver::JitOptions driver_jit_options(const CompileOptions& options) {
  driver::JitOptions jit;
  jit.target = options.target;
  // ptxas -O3 is its highest level and default, as CU_JIT_OPTIMIZATION_LEVEL 4 is the driver's.
  jit.optimization_level = options.opt_level == 3 ? 4 : options.opt_level;
  jit.line_info = options.line_info;
  return jit;
}

Result<CompiledModule> driver_compile(const std::string& ptx, const CompileOptions& options) {
  const std::vector<std::string> opts = backend_options(Backend::kDriver, options);
  if (options.tmem_access_check || !options.extra_options.empty() || !options.ptx_options.empty())
    return Error(ErrorCode::kUsage,
                 "the driver backend takes no ptxas options (cuLink has none for " +
                     std::string(options.tmem_access_check     ? "-g-tmem-access-check"
                                 : options.ptx_options.empty() ? "extra_options"
                                                               : "ptx_options") +
                     "); use --backend nvptxcompiler, ptxas or nvjitlink",
                 failure_details(Backend::kDriver, opts, "", ptx));
  const auto start = Clock::now();
  Result<driver::JitImage> image = driver::driver_jit_ptx(ptx, driver_jit_options(options));
  if (!image.ok()) {
    Error error = std::move(image).error();
    // No driver (or no device/context): say which backend needed it, keep the PTX.
    if (error.code() == ErrorCode::kDriver)
      return Error(ErrorCode::kDriver, "driver jit failed: " + error.message(),
                   failure_details(Backend::kDriver, opts, error.details(), ptx));
    return error;  // already laid out as a compile failure (runtime/cuda/driver.h)
  }
  CompiledModule module;
  module.compile_ms = ms_since(start);
  module.cubin = std::move(image->cubin);
  module.log = std::move(image->info_log);
  return module;
}

// ---- NVRTC ------------------------------------------------------------------------------------

struct ProgramDeleter {
  const nvrtc::Api* api;
  void operator()(nvrtcProgram* program) const {
    if (*program) api->destroy_program(program);
    delete program;
  }
};

std::string nvrtc_log(const nvrtc::Api& api, nvrtcProgram program) {
  size_t size = 0;
  std::string log;
  if (api.get_program_log_size(program, &size) == NVRTC_SUCCESS && size > 1) {
    log.resize(size);
    api.get_program_log(program, log.data());
  }
  while (!log.empty() && log.back() == '\0') log.pop_back();
  return log;
}

}  // namespace

// ---- public names -----------------------------------------------------------------------------

std::string_view to_string(Backend backend) noexcept {
  switch (backend) {
    case Backend::kNvJitLink:
      return "nvjitlink";
    case Backend::kPtxas:
      return "ptxas";
    case Backend::kNvrtc:
      return "nvrtc";
    case Backend::kDriver:
      return "driver";
    case Backend::kNvPtxCompiler:
      return "nvptxcompiler";
    case Backend::kAuto:
      return "auto";
  }
  return "unknown";
}

Result<Backend> parse_backend(std::string_view text) {
  for (Backend b : kBackends)
    if (to_string(b) == text) return b;
  return Error(ErrorCode::kUsage,
               "unknown backend '" + std::string(text) +
                   "'; allowed: nvjitlink, ptxas, nvrtc, driver, nvptxcompiler, auto");
}

std::string_view to_string(FrontEndCompiler compiler) noexcept {
  return compiler == FrontEndCompiler::kNvcc ? "nvcc" : "nvrtc";
}

Result<FrontEndCompiler> parse_front_end(std::string_view text) {
  if (text == "nvrtc") return FrontEndCompiler::kNvrtc;
  if (text == "nvcc") return FrontEndCompiler::kNvcc;
  return Error(ErrorCode::kUsage,
               "unknown front end '" + std::string(text) + "'; allowed: nvrtc, nvcc");
}

bool nvptxcompiler_built_in() noexcept {
#ifdef TMEMJIT_HAVE_NVPTXCOMPILER
  return true;
#else
  return false;
#endif
}

Backend resolve_backend(Backend backend) noexcept {
  // Whole-program and in-process where possible: nvJitLink's relocatable code is larger
  // (docs/compile-backends.md, "Code size").
  if (backend == Backend::kAuto)
    backend = nvptxcompiler_built_in() ? Backend::kNvPtxCompiler : Backend::kNvJitLink;
  if (backend != Backend::kNvJitLink) return backend;
  // ptxas compiles the same PTX to the same kind of cubin, so a missing libnvJitLink costs a
  // subprocess per compile, not the compile (docs/reliability.md); one warning per process.
  static const bool available = [] {
    Result<const nvjitlink::Api*> api = nvjitlink::api();
    if (!api)
      warn(api.error().message() + "; compiling with ptxas (" + ptxas_path() +
           ") instead (set TMEMJIT_NVJITLINK_LIBRARY to its path to use nvJitLink)");
    return api.ok();
  }();
  return available ? Backend::kNvJitLink : Backend::kPtxas;
}

Span<const Backend> all_backends() noexcept { return kBackends; }

std::string to_string(const CompileOptions& options) {
  std::string text = "target=" + std::string(to_string(options.target)) +
                     " backend=" + std::string(to_string(options.backend)) + " -O" +
                     std::to_string(options.opt_level);
  if (options.line_info) text += " -lineinfo";
  if (options.tmem_access_check) text += " -g-tmem-access-check";
  if (options.cta_group != 1) text += " cta_group=" + std::to_string(options.cta_group);
  for (const std::string& extra : options.extra_options) text += " " + extra;
  for (const std::string& option : options.nvrtc_options) text += " nvrtc:" + option;
  for (const std::string& header : options.precompile) text += " precompile:" + header;
  if (options.front_end != FrontEndCompiler::kNvrtc)
    text += " front_end=" + std::string(to_string(options.front_end));
  for (const std::string& option : options.ptx_options) text += " ptx:" + option;
  return text;
}

std::vector<std::string> backend_options(Backend backend, const CompileOptions& options) {
  const std::string arch(to_string(options.target));
  const std::string level = std::to_string(options.opt_level);
  std::vector<std::string> opts;
  switch (resolve_backend(backend)) {
    case Backend::kAuto:  // resolved above
    case Backend::kNvJitLink:
      // nvJitLink's own -O is for LTO (0 or 3 only); the PTX compile level goes to ptxas.
      opts = {"-arch=" + arch, "-Xptxas=-O" + level};
      if (options.line_info) opts.push_back("-lineinfo");
      if (options.tmem_access_check) opts.push_back("-Xptxas=-g-tmem-access-check");
      break;
    case Backend::kPtxas:
    case Backend::kNvPtxCompiler:  // ptxas as a library: the same command line
      opts = {"-arch=" + arch, "-O" + level};
      if (options.line_info) opts.push_back("-lineinfo");
      if (options.tmem_access_check) opts.push_back("-g-tmem-access-check");
      break;
    case Backend::kDriver:
      // The driver JIT takes no ptxas flags; compile_ptx refuses the options it cannot honour.
      return driver::jit_option_text(driver_jit_options(options));
    case Backend::kNvrtc:
      opts = {"--gpu-architecture=" + arch, "--ptxas-options=-O" + level};
      if (options.line_info) opts.push_back("--generate-line-info");
      if (options.tmem_access_check) opts.push_back("--ptxas-options=-g-tmem-access-check");
      break;
  }
  opts.insert(opts.end(), options.extra_options.begin(), options.extra_options.end());
  // ptx_options are ptxas's own: nvJitLink and NVRTC take them through their ptxas pass-through.
  const Backend resolved = resolve_backend(backend);
  if (resolved == Backend::kNvrtc)
    opts.insert(opts.end(), options.nvrtc_options.begin(), options.nvrtc_options.end());
  const std::string prefix = resolved == Backend::kNvrtc       ? "--ptxas-options="
                             : resolved == Backend::kNvJitLink ? "-Xptxas="
                                                               : "";
  for (const std::string& option : options.ptx_options) opts.push_back(prefix + option);
  return opts;
}

std::string ptxas_path() {
  if (std::string chosen = Settings::from_environment().ptxas; !chosen.empty()) return chosen;
#ifdef TMEMJIT_PTXAS_PATH
  return TMEMJIT_PTXAS_PATH;
#else
  return "ptxas";
#endif
}

std::string keep_file_stem(std::string_view stem, std::string_view hash) {
  std::string out;
  for (const char c : stem.substr(0, std::min(stem.size(), kKeepStemChars))) {
    const bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                       c == '_' || c == '.' || c == '-';
    out += plain ? c : '_';
  }
  // A leading '.' would hide the files and a leading '-' read as an option in a shell.
  if (!out.empty() && (out[0] == '.' || out[0] == '-')) out[0] = '_';
  if (out.empty()) out = "tmemjit";
  return out + "_" + std::string(hash);
}

Result<CompiledModule> compile_ptx(const std::string& ptx, const CompileOptions& options) {
  return compile_ptx(ptx, options, {});
}

Result<CompiledModule> compile_ptx(const std::string& ptx, const CompileOptions& options,
                                   std::string_view keep_stem) {
  if (auto ok = check_options(options); !ok) return std::move(ok).error();
  // R27 before ptxas: it checks per function only, not a kernel's calls into a ::2 helper.
  if (Status mixed = ptx::check_cta_groups(ptx); !mixed.ok()) return std::move(mixed).error();
  const Backend backend = resolve_backend(options.backend);
  Keeper keeper(options, ptx, ".ptx", keep_stem);
  Result<CompiledModule> result = Error(ErrorCode::kInternal, "no backend ran");
  switch (backend) {
    case Backend::kNvJitLink:
      result = nvjitlink_compile(ptx, options);
      break;
    case Backend::kNvPtxCompiler:
      result = nvptxcompiler_compile(ptx, options);
      break;
    case Backend::kPtxas:
      result = ptxas_compile(ptx, options);
      break;
    case Backend::kDriver:
      result = driver_compile(ptx, options);
      break;
    case Backend::kNvrtc:
      return Error(ErrorCode::kUsage,
                   "the nvrtc backend compiles CUDA C++, not PTX; use compile_cuda or another "
                   "backend (auto, nvptxcompiler, nvjitlink, ptxas, driver)");
    case Backend::kAuto:  // resolved above
      break;
  }
  if (!result) {
    (void)keeper.finish(result.error().details(), {});
    return result;
  }
  result->ptx = ptx;
  result->backend = backend;
  result->target = options.target;
  if (auto kept = keeper.finish(result->log, result->cubin); !kept) return std::move(kept).error();
  return result;
}

Result<CompiledModule> compile_cuda(const std::string& cuda_source, const std::string& kernel_name,
                                    const CompileOptions& options) {
  if (auto ok = check_options(options); !ok) return std::move(ok).error();
  Keeper keeper(options, cuda_source, ".cu");
  const std::vector<std::string> opts = backend_options(Backend::kNvrtc, options);
  auto fail = [&](const std::string& stage, const std::string& reason,
                  const std::string& log) -> Error {
    Error error = toolchain_error(stage, reason, Backend::kNvrtc, opts, log, cuda_source);
    (void)keeper.finish(error.details(), {});
    return error;
  };
  Result<const nvrtc::Api*> loaded = nvrtc::api();
  if (!loaded) return fail("nvrtc", loaded.error().message(), "");
  const nvrtc::Api& api = **loaded;
  const auto start = Clock::now();
  std::unique_ptr<nvrtcProgram, ProgramDeleter> program(new nvrtcProgram{}, ProgramDeleter{&api});
  nvrtcResult r =
      api.create_program(program.get(), cuda_source.c_str(), "tmemjit.cu", 0, nullptr, nullptr);
  if (r != NVRTC_SUCCESS) {
    *program = nullptr;
    return fail("nvrtc create", api.get_error_string(r), "");
  }
  if (!kernel_name.empty()) {
    r = api.add_name_expression(*program, kernel_name.c_str());
    if (r != NVRTC_SUCCESS) return fail("nvrtc add name", api.get_error_string(r), "");
  }
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());
  r = api.compile_program(*program, static_cast<int>(argv.size()), argv.data());
  const std::string log = nvrtc_log(api, *program);
  if (r != NVRTC_SUCCESS) return fail("nvrtc compile", api.get_error_string(r), log);
  CompiledModule module;
  size_t size = 0;
  r = api.get_cubin_size(*program, &size);
  if (r != NVRTC_SUCCESS || size == 0)
    return fail("nvrtc get cubin",
                r != NVRTC_SUCCESS ? api.get_error_string(r)
                                   : "no cubin "
                                     "(is the architecture a real sm_ target?)",
                log);
  module.cubin.resize(size);
  r = api.get_cubin(*program, module.cubin.data());
  if (r != NVRTC_SUCCESS) return fail("nvrtc get cubin", api.get_error_string(r), log);
  if (!kernel_name.empty()) {
    const char* lowered = nullptr;
    r = api.get_lowered_name(*program, kernel_name.c_str(), &lowered);
    if (r != NVRTC_SUCCESS || lowered == nullptr)
      return fail("nvrtc lowered name", "'" + kernel_name + "' is not a __global__ function", log);
    module.entry_name = lowered;
  }
  module.compile_ms = ms_since(start);
  module.ptx = cuda_source;
  module.log = log;
  module.backend = Backend::kNvrtc;
  module.target = options.target;
  if (auto kept = keeper.finish(module.log, module.cubin); !kept) return std::move(kept).error();
  return module;
}

// What automatic PCH did in the compile of `program`: NVRTC's status, and its "creating" or
// "using precompiled header file" message, which is taken out of the log (it is not the user's).
namespace {
void read_pch_use(const nvrtc::Api& api, nvrtcProgram program, CudaFrontEnd& out) {
  if (!api.has_pch()) return;
  out.pch = PchUse::kNone;
  std::string kept;
  size_t begin = 0;
  while (begin < out.log.size()) {
    size_t end = out.log.find('\n', begin);
    end = end == std::string::npos ? out.log.size() : end + 1;
    const std::string_view line = std::string_view(out.log).substr(begin, end - begin);
    if (line.find("using precompiled header file") != std::string_view::npos)
      out.pch = PchUse::kReused;
    else if (line.find("creating precompiled header file") == std::string_view::npos)
      kept += line;
    begin = end;
  }
  // A blank line is what remains of a log that held only those messages.
  if (kept.find_first_not_of(" \n\r\t") == std::string::npos) kept.clear();
  out.log = std::move(kept);
  const nvrtcResult status = api.get_pch_create_status(program);
  if (status == NVRTC_SUCCESS) {
    out.pch = PchUse::kCreated;
  } else if (status == NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED) {
    out.pch = PchUse::kHeapExhausted;
    (void)api.get_pch_heap_size_required(program, &out.pch_heap_required);
  }
}
}  // namespace

Result<CudaFrontEnd> compile_cuda_front_end(
    const std::string& cuda_source, const std::string& program_name,
    const std::vector<std::pair<std::string, std::string>>& headers,
    const std::vector<std::string>& nvrtc_options, const std::vector<std::string>& name_expressions,
    const CompileOptions& options, FrontEndOutput output, std::string_view keep_stem) {
  if (auto ok = check_options(options); !ok) return std::move(ok).error();
  const bool cubin = output == FrontEndOutput::kCubin;
  std::string arch(to_string(options.target));
  if (!cubin && arch.starts_with("sm_")) arch = "compute_" + arch.substr(3);
  std::vector<std::string> opts = {"--gpu-architecture=" + arch};
  if (output == FrontEndOutput::kRelocatablePtx) opts.push_back("--relocatable-device-code=true");
  if (options.line_info) opts.push_back("--generate-line-info");
  if (cubin) {
    opts.push_back("--ptxas-options=-O" + std::to_string(options.opt_level));
    if (options.tmem_access_check) opts.push_back("--ptxas-options=-g-tmem-access-check");
    for (const std::string& option : options.ptx_options)
      opts.push_back("--ptxas-options=" + option);
  }
  opts.insert(opts.end(), nvrtc_options.begin(), nvrtc_options.end());
  std::optional<Keeper> keeper;
  if (cubin) keeper.emplace(options, cuda_source, ".cu", keep_stem);
  auto fail = [&](const std::string& stage, const std::string& reason,
                  const std::string& log) -> Error {
    Error error = toolchain_error(stage, reason, Backend::kNvrtc, opts, log, cuda_source);
    if (keeper) (void)keeper->finish(error.details(), {});
    return error;
  };
  Result<const nvrtc::Api*> loaded = nvrtc::api();
  if (!loaded) return fail("nvrtc", loaded.error().message(), "");
  const nvrtc::Api& api = **loaded;
  if (keeper) {
    Dl_info where{};
    const bool found = ::dladdr(reinterpret_cast<void*>(api.compile_program), &where) != 0 &&
                       where.dli_fname != nullptr;
    keeper->keep_reproducer({{},
                             program_name,
                             headers,
                             opts,
                             name_expressions,
                             found ? std::string(where.dli_fname) : std::string()});
  }
  const auto start = Clock::now();
  std::vector<const char*> header_texts, header_names;
  for (const auto& [name, text] : headers) {
    header_names.push_back(name.c_str());
    header_texts.push_back(text.c_str());
  }
  std::unique_ptr<nvrtcProgram, ProgramDeleter> program(new nvrtcProgram{}, ProgramDeleter{&api});
  nvrtcResult r = api.create_program(program.get(), cuda_source.c_str(), program_name.c_str(),
                                     static_cast<int>(headers.size()), header_texts.data(),
                                     header_names.data());
  if (r != NVRTC_SUCCESS) {
    *program = nullptr;
    return fail("nvrtc create", api.get_error_string(r), "");
  }
  for (const std::string& expression : name_expressions) {
    r = api.add_name_expression(*program, expression.c_str());
    if (r != NVRTC_SUCCESS) return fail("nvrtc add name", api.get_error_string(r), "");
  }
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());
  r = api.compile_program(*program, static_cast<int>(argv.size()), argv.data());
  CudaFrontEnd out;
  out.log = nvrtc_log(api, *program);
  if (std::find(opts.begin(), opts.end(), "--pch") != opts.end()) read_pch_use(api, *program, out);
  if (r != NVRTC_SUCCESS) return fail("nvrtc compile", api.get_error_string(r), out.log);
  size_t size = 0;
  r = api.get_ptx_size(*program, &size);
  if (r != NVRTC_SUCCESS || size == 0)
    return fail("nvrtc get ptx", r != NVRTC_SUCCESS ? api.get_error_string(r) : "empty output",
                out.log);
  out.output.resize(size);
  r = api.get_ptx(*program, out.output.data());
  if (r != NVRTC_SUCCESS) return fail("nvrtc get ptx", api.get_error_string(r), out.log);
  while (!out.output.empty() && out.output.back() == '\0') out.output.pop_back();
  if (cubin) {
    r = api.get_cubin_size(*program, &size);
    if (r != NVRTC_SUCCESS || size == 0)
      return fail("nvrtc get cubin", r != NVRTC_SUCCESS ? api.get_error_string(r) : "no cubin",
                  out.log);
    out.cubin.resize(size);
    r = api.get_cubin(*program, out.cubin.data());
    if (r != NVRTC_SUCCESS) return fail("nvrtc get cubin", api.get_error_string(r), out.log);
  }
  for (const std::string& expression : name_expressions) {
    const char* lowered = nullptr;
    r = api.get_lowered_name(*program, expression.c_str(), &lowered);
    if (r != NVRTC_SUCCESS || lowered == nullptr)
      return fail("nvrtc lowered name", "'" + expression + "' is not a __global__ function",
                  out.log);
    out.lowered_names.emplace_back(lowered);
  }
  out.compile_ms = ms_since(start);
  if (keeper)
    if (auto kept = keeper->finish(out.log, out.cubin); !kept) return std::move(kept).error();
  return out;
}

const ToolchainVersions& toolchain_versions() {
  static std::once_flag once;
  static ToolchainVersions versions;
  std::call_once(once, [] {
    unsigned major = 0, minor = 0;
    versions.nvjitlink = "unavailable";
    if (auto api = nvjitlink::api(); api && (*api)->version(&major, &minor) == NVJITLINK_SUCCESS)
      versions.nvjitlink = std::to_string(major) + "." + std::to_string(minor);
    int rmajor = 0, rminor = 0;
    versions.nvrtc = "unavailable";
    if (auto api = nvrtc::api(); api && (*api)->version(&rmajor, &rminor) == NVRTC_SUCCESS)
      versions.nvrtc = std::to_string(rmajor) + "." + std::to_string(rminor);
    versions.nvptxcompiler = "unavailable";
#ifdef TMEMJIT_HAVE_NVPTXCOMPILER
    unsigned pmajor = 0, pminor = 0;
    if (nvPTXCompilerGetVersion(&pmajor, &pminor) == NVPTXCOMPILE_SUCCESS)
      versions.nvptxcompiler = std::to_string(pmajor) + "." + std::to_string(pminor);
#endif
    versions.ptxas = "unavailable";
    if (auto run = run_process({ptxas_path(), "--version"}); run && run->exit_code == 0) {
      std::stringstream lines(run->output);
      std::string line;
      while (std::getline(lines, line))
        if (line.find("release") != std::string::npos) versions.ptxas = line;
    }
  });
  return versions;
}

namespace {

std::string version_text(std::string_view backend, std::optional<std::string> version) {
  return std::string(backend) + " " + (version ? *version : std::string("unavailable"));
}

}  // namespace

const std::string& compiler_version(Backend backend) {
  switch (resolve_backend(backend)) {
    case Backend::kNvJitLink: {
      static const std::string version = [] {
        unsigned major = 0, minor = 0;
        auto api = nvjitlink::api();
        return version_text("nvjitlink",
                            api && (*api)->version(&major, &minor) == NVJITLINK_SUCCESS
                                ? std::optional(std::to_string(major) + "." + std::to_string(minor))
                                : std::nullopt);
      }();
      return version;
    }
    case Backend::kNvrtc: {
      static const std::string version = [] {
        int major = 0, minor = 0;
        auto api = nvrtc::api();
        return version_text("nvrtc",
                            api && (*api)->version(&major, &minor) == NVRTC_SUCCESS
                                ? std::optional(std::to_string(major) + "." + std::to_string(minor))
                                : std::nullopt);
      }();
      return version;
    }
    case Backend::kPtxas: {
      static const std::string version = "ptxas " + toolchain_versions().ptxas;
      return version;
    }
    case Backend::kDriver: {
      static const std::string version = [] {
        Result<int> driver = driver::driver_version();
        return version_text("driver",
                            driver.ok() ? std::optional(std::to_string(*driver)) : std::nullopt);
      }();
      return version;
    }
    case Backend::kNvPtxCompiler: {
      static const std::string version = [] {
#ifdef TMEMJIT_HAVE_NVPTXCOMPILER
        unsigned major = 0, minor = 0;
        return version_text("nvptxcompiler",
                            nvPTXCompilerGetVersion(&major, &minor) == NVPTXCOMPILE_SUCCESS
                                ? std::optional(std::to_string(major) + "." + std::to_string(minor))
                                : std::nullopt);
#else
        return version_text("nvptxcompiler", std::nullopt);
#endif
      }();
      return version;
    }
    case Backend::kAuto:
      break;
  }
  static const std::string unknown = "unknown backend";  // resolve_backend never yields kAuto
  return unknown;
}

}  // namespace tmem
