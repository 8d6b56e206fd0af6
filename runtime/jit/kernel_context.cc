#include "runtime/jit/kernel_context.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <unordered_set>

#include "runtime/cache/build_id.h"
#include "runtime/cache/module_cache.h"
#include "runtime/cache/options_key.h"
#include "runtime/compile/backends.h"
#include "runtime/compile/nvcc_front_end.h"
#include "runtime/jit/compile_transfer.h"
#include "runtime/support/settings.h"
#include "tmem/text.h"

namespace tmem {
namespace {

// The older extra_options list: the options that shape the C++ go to NVRTC, the rest to the PTX
// compiler (CompileOptions::extra_options).
bool is_front_end_option(const std::string& option) {
  static const char* kPrefixes[] = {"-D",
                                    "-U",
                                    "-I",
                                    "--define-macro",
                                    "--undefine-macro",
                                    "--include-path",
                                    "-std",
                                    "--std",
                                    "-include",
                                    "--pre-include",
                                    "--use_fast_math",
                                    "-use_fast_math",
                                    "--ftz",
                                    "--prec-",
                                    "--fmad",
                                    "-default-device",
                                    "--device-as-default-execution-space",
                                    "--expt-",
                                    "--extended-lambda",
                                    "-dopt",
                                    "--dopt",
                                    "-G",
                                    "--device-debug",
                                    "-isystem",
                                    "--system-include",
                                    "--diag",
                                    "-diag",
                                    "--device-int128",
                                    "-device-int128",
                                    "--pch",
                                    "-pch",
                                    "--use-pch",
                                    "--create-pch"};
  for (const char* prefix : kPrefixes)
    if (option.starts_with(prefix)) return true;
  return false;
}

// Front-end options whose value may be the next element ("-include" "F").
bool takes_separate_value(const std::string& option) {
  static const char* kFlags[] = {"-D",
                                 "-U",
                                 "-I",
                                 "-include",
                                 "--pre-include",
                                 "--include-path",
                                 "--define-macro",
                                 "--undefine-macro",
                                 "-isystem",
                                 "--system-include"};
  for (const char* flag : kFlags)
    if (option == flag) return true;
  return false;
}

// An option of takes_separate_value in `list` takes its own next element, which must be there and
// not be another option: a bare "-I" last in the list left NVRTC to take the library's next option
// (--std=c++17) as its directory (issue 39, N13).
Status check_separate_values(const std::vector<std::string>& list, const char* list_name) {
  for (size_t i = 0; i < list.size(); ++i) {
    if (!takes_separate_value(list[i])) continue;
    const bool missing = i + 1 == list.size();
    if (missing || list[i + 1].empty() || list[i + 1][0] == '-')
      return Error(ErrorCode::kUsage,
                   "compile_kernel: the NVRTC option '" + list[i] + "' in " + list_name +
                       " needs a value" +
                       (missing ? std::string(", and it is the last element")
                                : ", got '" + quote_excerpt(list[i + 1]) + "'"),
                   "give the value as the next element, or attached (" + list[i] + "VALUE)");
    ++i;
  }
  return std::monostate{};
}

// NVRTC's spelling of the PTX compiler's options: --ptxas-options=V, -Xptxas=V, or either one
// followed by V as the next element. NVRTC hands V to ptxas when it makes a cubin; compile_kernel
// asks NVRTC for PTX, so V goes to options.backend's PTX compiler, split at commas as nvcc's
// -Xptxas list is (issue 41 item 9). Returns the list without them; their values go to `ptx`.
Result<std::vector<std::string>> take_ptxas_options(const std::vector<std::string>& list,
                                                    const char* list_name,
                                                    std::vector<std::string>* ptx) {
  std::vector<std::string> rest;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string& option = list[i];
    std::string value;
    bool found = false;
    for (const std::string_view flag : {"--ptxas-options", "-Xptxas"}) {
      if (option == flag) {
        if (i + 1 == list.size() || list[i + 1].empty())
          return Error(ErrorCode::kUsage,
                       "compile_kernel: '" + option + "' in " + list_name +
                           " needs the PTX compiler's options as its value",
                       "give them attached (" + option + "=-O3,-v), or list them in ptx_options");
        value = list[++i];
        found = true;
      } else if (option.size() > flag.size() && option.starts_with(flag) &&
                 option[flag.size()] == '=') {
        value = option.substr(flag.size() + 1);
        found = true;
      }
      if (found) break;
    }
    if (!found) {
      rest.push_back(option);
      continue;
    }
    for (size_t at = 0; at <= value.size();) {
      const size_t comma = std::min(value.find(',', at), value.size());
      if (comma > at) ptx->push_back(value.substr(at, comma - at));
      at = comma + 1;
    }
  }
  return rest;
}

bool names_standard(const std::string& option) {
  return option.starts_with("-std") || option.starts_with("--std");
}

bool names_architecture(const std::string& option) {
  return option.starts_with("-arch") || option.starts_with("--gpu-architecture");
}

bool names_pch(const std::string& option) {
  return option == "-pch" || option == "--pch" || option.starts_with("--create-pch") ||
         option.starts_with("-create-pch") || option.starts_with("--use-pch") ||
         option.starts_with("-use-pch") || option.starts_with("--pch-dir") ||
         option.starts_with("-pch-dir");
}

bool has_header(const std::string& dir, const char* header) {
  struct stat info {};
  return !dir.empty() && ::stat((dir + "/" + header).c_str(), &info) == 0;
}

// The one key builder of both calls' contexts (docs/cache.md §Keys): which call compiles, the key
// format, the target, the resolved backend, the PTX compile's options field by field (key_options)
// and each list element on its own (so "a b" and "a", "b" differ), the compilers' versions,
// NVRTC's options in order and libtmemjit's build.
Key128 context_digest(std::string_view call, const KernelContext& context, bool cuda) {
  KeyBuilder key;
  key.str("context", call);
  key.integer("format", kCacheKeyFormatVersion);
  key.str("target", to_string(context.options.target));
  key.str("backend", to_string(context.options.backend));
  key_options(key, context.ptx);  // field by field (runtime/cache/options_key.h)
  const std::pair<const char*, const std::vector<std::string>*> lists[] = {
      {"extra option", &context.ptx.extra_options},
      {"ptx option", &context.ptx.ptx_options},
      {"nvrtc option", &context.nvrtc},
      {"precompile", &context.options.precompile}};
  for (const auto& [what, list] : lists) {
    key.integer(what, static_cast<int64_t>(list->size()));
    for (const std::string& option : *list) key.str(what, option);
  }
  key.str("compiler", context.nvrtc_compiles ? compiler_version(Backend::kNvrtc)
                                             : compiler_version(context.options.backend));
  key.integer("nvrtc compiles", context.nvrtc_compiles ? 1 : 0);
  if (cuda)
    key.str("front end", context.options.front_end == FrontEndCompiler::kNvcc
                             ? "nvcc " + nvcc_version()
                             : compiler_version(Backend::kNvrtc));
  key.str("library", library_build_id());
  return key.finish();
}

// Why a compiler refused the user's options: its log, or, where it wrote none (the log detail
// then reads "(empty)"), the error's message. The driver backend refuses -Xptxas before any log
// exists, and "refused the options (-O1): (empty)" gave no reason (issue 39, N20).
std::string reason_of(const Error& error) {
  std::string said(error.detail("log"));
  while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
  if (said.empty() || said == "(empty)") said = error.message();
  return said;
}

}  // namespace

const std::string& toolkit_include_dir() {
  static const std::string dir = [] {
    const Settings settings = Settings::from_environment();
    if (has_header(settings.cuda_include_dir, "cuda_runtime.h")) return settings.cuda_include_dir;
    for (const std::string& home : {settings.cuda_home, settings.cuda_path})
      if (!home.empty() && has_header(home + "/include", "cuda_runtime.h"))
        return home + "/include";
#ifdef TMEMJIT_CUDA_INCLUDE_DIR
    std::string built = TMEMJIT_CUDA_INCLUDE_DIR;
    if (const size_t semicolon = built.find(';'); semicolon != std::string::npos)
      built.resize(semicolon);
    if (has_header(built, "cuda_runtime.h")) return built;
#endif
    return std::string();
  }();
  return dir;
}

Result<KernelContext> kernel_context(const KernelSource& source, const CompileOptions& given) {
  if (given.backend == Backend::kNvrtc)
    return Error(ErrorCode::kUsage,
                 "compile_kernel runs NVRTC's front end itself and compiles the PTX with "
                 "options.backend; backend nvrtc names no PTX compiler",
                 "use auto, nvptxcompiler, nvjitlink, ptxas or driver");
  const bool cuda = source.language == Language::kCuda;
  KernelContext context;
  context.options = given;
  context.options.backend = resolve_backend(given.backend);
  context.nvrtc_compiles = cuda && given.backend == Backend::kAuto;
  context.ptx = context.options;
  context.ptx.extra_options.clear();
  context.ptx.nvrtc_options.clear();
  // The older list: front-end options (with a separate value, two elements) to NVRTC, the rest
  // to the PTX compiler before ptx_options.
  std::vector<std::string> ptx_options, routed_to_ptx;
  Result<std::vector<std::string>> extra =
      take_ptxas_options(given.extra_options, "extra_options", &routed_to_ptx);
  if (!extra.ok()) return std::move(extra).error();
  Result<std::vector<std::string>> nvrtc =
      take_ptxas_options(given.nvrtc_options, "nvrtc_options", &routed_to_ptx);
  if (!nvrtc.ok()) return std::move(nvrtc).error();
  if (cuda) {
    if (Status checked = check_separate_values(*extra, "extra_options"); !checked.ok())
      return std::move(checked).error();
    if (Status checked = check_separate_values(*nvrtc, "nvrtc_options"); !checked.ok())
      return std::move(checked).error();
  }
  for (size_t i = 0; i < extra->size(); ++i) {
    const std::string& option = (*extra)[i];
    if (cuda && is_front_end_option(option)) {
      context.user_nvrtc.push_back(option);
      if (takes_separate_value(option) && i + 1 < extra->size())
        context.user_nvrtc.push_back((*extra)[++i]);
    } else {
      ptx_options.push_back(option);
    }
  }
  ptx_options.insert(ptx_options.end(), routed_to_ptx.begin(), routed_to_ptx.end());
  ptx_options.insert(ptx_options.end(), given.ptx_options.begin(), given.ptx_options.end());
  context.ptx.ptx_options = std::move(ptx_options);
  context.user_nvrtc.insert(context.user_nvrtc.end(), nvrtc->begin(), nvrtc->end());
  if (!cuda && !context.user_nvrtc.empty())
    return Error(ErrorCode::kUsage,
                 "compile_kernel: nvrtc_options apply to CUDA sources; " + source.path +
                     " is PTX (its first option: " + context.user_nvrtc.front() + ")",
                 "give the PTX compiler's options in ptx_options");
  // (nvcc has no precompiled headers of NVRTC's kind: its options stay nvcc's to judge.)
  if (cuda && given.front_end == FrontEndCompiler::kNvrtc) {
    std::vector<std::string> kept;
    for (std::string& option : context.user_nvrtc)
      (names_pch(option) ? context.replaced_pch : kept).push_back(std::move(option));
    context.user_nvrtc = std::move(kept);
  }
  bool standard = false;
  for (const std::string& option : context.user_nvrtc) {
    if (option.empty())
      return Error(ErrorCode::kUsage, "compile_kernel: an empty NVRTC option",
                   "each element of nvrtc_options is one option or one option's value");
    if (names_architecture(option))
      return Error(ErrorCode::kUsage,
                   "compile_kernel: the NVRTC option '" + option +
                       "' names an architecture; the target is CompileOptions::target",
                   "tmemjit specialize --target, Python target=");
    standard = standard || names_standard(option);
  }
  for (const std::string& header : given.precompile)
    if (header.empty() || header.find_first_of("<>\"\n\r") != std::string::npos ||
        header.find('\0') != std::string::npos)
      return Error(ErrorCode::kUsage,
                   "CompileOptions::precompile: '" + quote_excerpt(header) +
                       "' is not a header name as #include <...> takes it",
                   "one name per element, without <> or quotes (e.g. cute/tensor.hpp)");
  if (!cuda && !given.precompile.empty())
    return Error(ErrorCode::kUsage,
                 "CompileOptions::precompile applies to CUDA sources; " + source.path + " is PTX",
                 "leave it empty for a PTX source");
  for (const std::string& option : context.ptx.ptx_options)
    if (option.empty())
      return Error(ErrorCode::kUsage, "compile_kernel: an empty PTX compiler option",
                   "each element of ptx_options is one option");
  if (cuda) {
    // Yours first, then the defaults yours do not replace: your -I directories are searched
    // before the toolkit's, and a standard of yours leaves ours out (NVRTC warns on two).
    context.nvrtc = context.user_nvrtc;
    if (!standard) context.nvrtc.push_back("--std=c++17");
    const std::string& include = toolkit_include_dir();
    if (!include.empty()) {
      context.nvrtc.push_back("--include-path=" + include);
      // CUDA 13 keeps libcu++ (<cuda/std/...>, which CuTe includes) under include/cccl. Looked up
      // once, as the toolkit's directory is: a memory hit makes no system call for it.
      static const bool has_cccl = has_header(include + "/cccl", "cuda/std/version");
      if (has_cccl) context.nvrtc.push_back("--include-path=" + include + "/cccl");
    }
  }
  context.digest = context_digest("compile-kernel", context, cuda);
  return context;
}

Status check_user_options(const KernelSource& source, const KernelContext& context) {
  if (context.user_nvrtc.empty() && context.ptx.ptx_options.empty()) return std::monostate{};
  static std::mutex mutex;
  static std::unordered_set<Key128, Key128Hash> checked;
  {
    std::lock_guard lock(mutex);
    if (checked.contains(context.digest)) return std::monostate{};
  }
  // nvcc's options are checked by its compile, whose error quotes nvcc (a second nvcc run per
  // context would cost a second of process start).
  if (source.language == Language::kCuda && !context.user_nvrtc.empty() &&
      context.options.front_end == FrontEndCompiler::kNvrtc) {
    auto empty = compile_cuda_front_end("", "tmemjit_option_check.cu", {}, context.nvrtc, {},
                                        context.options, FrontEndOutput::kPtx);
    if (!empty.ok()) {
      const std::string said = reason_of(empty.error());
      std::string given;
      for (const std::string& option : context.user_nvrtc)
        given += (given.empty() ? "" : " ") + option;
      return Error(ErrorCode::kUsage,
                   "compile_kernel: NVRTC refused the options (" + given + "): " + said,
                   std::vector<ErrorDetail>{{"options", given},
                                            {"note",
                                             "nvrtc_options go to NVRTC, ptx_options to "
                                             "the PTX compiler (-Xnvrtc, -Xptxas)"}});
    }
  }
  if (!context.ptx.ptx_options.empty()) {
    const PtxVersion version = min_ptx_version(context.options.target);
    const std::string module = ".version " + version.to_string() + "\n.target " +
                               std::string(to_string(context.options.target)) +
                               "\n.address_size 64\n";
    auto empty = compile_ptx(module, context.ptx);
    if (!empty.ok()) {
      std::string given;
      for (const std::string& option : context.ptx.ptx_options)
        given += (given.empty() ? "" : " ") + option;
      const std::string said = reason_of(empty.error());
      return Error(ErrorCode::kUsage,
                   "compile_kernel: the PTX compiler (" +
                       std::string(to_string(context.options.backend)) + ") refused the options (" +
                       given + "): " + said,
                   std::vector<ErrorDetail>{{"options", given},
                                            {"note",
                                             "ptx_options go to the PTX compiler, "
                                             "nvrtc_options to NVRTC (-Xptxas, -Xnvrtc)"}});
    }
  }
  std::lock_guard lock(mutex);
  checked.insert(context.digest);
  return std::monostate{};
}

Key128 kernel_key(const KernelSource& source, std::span<const NamedTransfer> transfers,
                  const KernelContext& context, const Key128& includes) {
  KeyBuilder key;
  key.str("domain", "tmemjit/kernel");
  key.integer("context.lo", static_cast<int64_t>(context.digest.lo));
  key.integer("context.hi", static_cast<int64_t>(context.digest.hi));
  key.str("language", to_string(source.language));
  key.str("path", source.path);
  key.str("entry", source.entry);
  key.str("source", source.text);
  key.integer("includes.lo", static_cast<int64_t>(includes.lo));
  key.integer("includes.hi", static_cast<int64_t>(includes.hi));
  key.integer("transfers", static_cast<int64_t>(transfers.size()));
  for (const NamedTransfer& t : transfers) {
    const SpecFingerprint fingerprint = t.spec.fingerprint();
    key.str("name", t.options.name);
    key.integer("spec.lo", static_cast<int64_t>(fingerprint.lo));
    key.integer("spec.hi", static_cast<int64_t>(fingerprint.hi));
    key.integer("wait", t.options.wait ? 1 : 0);
    key.integer("warp_argument", t.options.warp_argument ? 1 : 0);
    key.integer("column_argument", t.options.column_argument ? 1 : 0);
    key.integer("cta_group", t.options.cta_group);
    key.str("language", to_string(t.options.language));
  }
  return key.finish();
}

Result<KernelContext> transfer_context(const CompileOptions& given) {
  if (given.backend == Backend::kNvrtc)
    return Error(ErrorCode::kUsage,
                 "compile_transfer compiles the harness kernels as PTX; backend nvrtc compiles "
                 "CUDA C++ (kernels::cuda_device_function)",
                 "use nvjitlink, nvptxcompiler, ptxas, driver or auto");
  KernelContext context;
  context.options = given;
  context.options.backend = resolve_backend(given.backend);
  // The harness kernels are PTX: every list goes to the PTX compile as given.
  context.ptx = context.options;
  context.nvrtc = given.nvrtc_options;
  context.digest = context_digest("compile-transfer", context, /*cuda=*/false);
  return context;
}

}  // namespace tmem
