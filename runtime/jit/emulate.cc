// tmem::emulate_ptx and the lowering pipeline it shares with compile_kernel (emulate_module.h).
#include "tmem/emulate.h"

#include <chrono>
#include <map>
#include <memory>
#include <mutex>

#include "kernels/emulation_kernels.h"
#include "kernels/emulation_library.h"
#include "kernels/user_emulation.h"
#include "runtime/compile/backends.h"
#include "runtime/jit/emulate_module.h"
#include "runtime/jit/entry_meta.h"
#include "runtime/jit/kernel_context.h"
#include "runtime/jit/kernel_impl.h"
#include "runtime/ptx/text.h"

namespace tmem {
namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// The library's PTX for one source text: NVRTC takes seconds, and every module that uses the same
// forms needs the same functions, so a process compiles each text once.
Result<std::string> library_ptx(const kernels::EmulationLibrarySource& library,
                                const CompileOptions& options, double& ms) {
  static std::mutex mutex;
  static std::map<std::string, std::string> compiled;  // by the source text
  std::lock_guard lock(mutex);
  if (auto found = compiled.find(library.text); found != compiled.end()) return found->second;
  const auto start = std::chrono::steady_clock::now();
  CompileOptions sm90 = options;
  sm90.target = Target::kSm90;
  auto front_end =
      compile_cuda_front_end(library.text, "tmemjit_emulation.cu", library.headers, {"--std=c++17"},
                             {}, sm90, FrontEndOutput::kRelocatablePtx);
  if (!front_end.ok()) {
    Error error = std::move(front_end).error();
    return Error(ErrorCode::kInternal,
                 "emulation: the tcgen05 emulation library does not compile: " + error.message(),
                 error.details());
  }
  ms = ms_since(start);
  std::string ptx(front_end->output.begin(), front_end->output.end());
  return compiled.emplace(library.text, std::move(ptx)).first->second;
}

// A module-scope `.global` definition of `symbol` (not an .extern declaration): a line whose first
// word is a directive (`.global`, `.visible .global`, ...). An instruction that names it
// (`ld.global.u64 %rd1, [symbol];`) starts with its opcode, never with '.'.
size_t global_definition(std::string_view ptx, std::string_view symbol) {
  for (size_t at = ptx.find(symbol); at != std::string_view::npos; at = ptx.find(symbol, at + 1)) {
    const size_t line = ptx.rfind('\n', at) == std::string_view::npos ? 0 : ptx.rfind('\n', at) + 1;
    const std::string_view head = ptx.substr(line, at - line);
    const size_t first = head.find_first_not_of(" \t");
    if (first == std::string_view::npos || head[first] != '.') continue;
    if (head.find(".global ") != std::string_view::npos &&
        head.find(".extern") == std::string_view::npos)
      return line;
  }
  return std::string_view::npos;
}

}  // namespace

void keep_first_emulation_state(std::string& ptx) {
  const size_t first = global_definition(ptx, kernels::kEmuStateSymbol);
  if (first == std::string::npos) return;
  const size_t from = ptx.find('\n', first);
  if (from == std::string::npos) return;
  for (size_t line =
           global_definition(std::string_view(ptx).substr(from), kernels::kEmuStateSymbol);
       line != std::string::npos;
       line = global_definition(std::string_view(ptx).substr(from), kernels::kEmuStateSymbol)) {
    const size_t at = from + line, end = ptx.find('\n', at);
    ptx.erase(at, end == std::string::npos ? std::string::npos : end - at + 1);
  }
}

Result<EmulatedModule> emulate_module(std::string_view ptx, std::string_view path,
                                      const CompileOptions& options, int first_id,
                                      std::uint32_t standalone_ctas) {
  EmulatedModule out;
  const auto start = std::chrono::steady_clock::now();
  auto lowering =
      kernels::lower_user_ptx(ptx, path, static_cast<std::uint32_t>(first_id), standalone_ctas > 0);
  if (!lowering.ok()) return std::move(lowering).error();
  out.lower_ms = ms_since(start);
  out.instructions = std::move(lowering->instructions);
  out.lowered = std::move(lowering->families);
  out.changed = lowering->changed;
  if (!out.changed) {
    out.ptx = std::move(lowering->ptx);
    return out;
  }
  auto library =
      library_ptx(kernels::emulation_library_source(lowering->library_source, standalone_ctas),
                  options, out.library_ms);
  if (!library.ok()) return std::move(library).error();
  auto spliced = kernels::splice_emulation_library(lowering->ptx, *library);
  if (!spliced.ok()) return std::move(spliced).error();
  out.ptx = std::move(spliced).value();
  keep_first_emulation_state(out.ptx);
  return out;
}

Result<EmulatedKernel> emulate_ptx(std::string_view ptx, const EmulateOptions& options) {
  const std::string path = options.path.empty() ? "kernel.ptx" : options.path;
  if (ptx.empty()) return Error(ErrorCode::kUsage, "emulate_ptx: " + path + " is empty");
  if (options.strict && options.standalone_ctas > 0)
    return Error(ErrorCode::kUsage,
                 "emulate_ptx: strict mode reports through Kernel::emulation_check(), which the "
                 "host of a standalone module does not call; choose one",
                 "EmulateOptions::strict or EmulateOptions::standalone_ctas");
  CompileOptions sm90 = options.compile;
  sm90.target = Target::kSm90;
  const std::vector<std::string> entries = ptx::entry_names(ptx);
  std::string entry;
  if (options.entry.empty()) {
    if (entries.size() != 1) {
      std::string list;
      for (const std::string& name : entries) list += (list.empty() ? "" : ", ") + name;
      return Error(ErrorCode::kUsage,
                   "emulate_ptx: " + path + " has " + std::to_string(entries.size()) +
                       " kernels (" + (list.empty() ? "none" : list) + "); name the one to launch",
                   "EmulateOptions::entry, or --entry NAME");
    }
    entry = entries.front();
  } else {
    entry = ptx::find_entry(entries, options.entry);
    if (entry.empty()) {
      std::string list;
      for (const std::string& name : entries) list += (list.empty() ? "" : ", ") + name;
      return Error(ErrorCode::kUsage, "emulate_ptx: no kernel '" + options.entry + "' in " + path +
                                          "; its kernels: " + (list.empty() ? "none" : list));
    }
  }
  auto module = emulate_module(ptx, path, sm90, 1, options.standalone_ctas);
  if (!module.ok()) return std::move(module).error();
  EmulatedKernel out;
  out.report.lowered = module->lowered;
  out.report.changed = module->changed;
  out.report.lower_ms = module->lower_ms;
  out.report.library_ms = module->library_ms;
  const auto start = std::chrono::steady_clock::now();
  auto compiled = compile_ptx(module->ptx, sm90);
  if (!compiled.ok()) {
    Error error = std::move(compiled).error();
    return Error(
        error.code(),
        "emulate_ptx: the lowered " + path + " does not compile for sm_90: " + error.message(),
        error.details());
  }
  out.report.ptx_compile_ms = ms_since(start);
  if (auto code = code_stats(compiled->cubin, entry); code.ok())
    out.report.code = std::move(code).value();
  else
    out.report.warnings.push_back("no code statistics: " + code.error().message());
  auto payload = std::make_shared<Payload>();
  payload->blob = std::move(compiled->cubin);
  payload->text = module->ptx;
  Kernel::Impl::Binding binding = Kernel::Impl::Native{};
  if (module->changed) binding = Kernel::Impl::Emulated{module->instructions, options.strict};
  auto impl = std::make_shared<Kernel::Impl>(entry, Target::kSm90, std::move(payload),
                                             std::move(binding), nullptr, /*ptx_fallback=*/true);
  out.kernel = Kernel(std::move(impl));
  out.ptx = std::move(module->ptx);
  return out;
}

Result<EmulatedKernel> emulate_cuda(const KernelSource& source, const EmulateOptions& options) {
  const std::string path = source.path.empty() ? "kernel.cu" : source.path;
  if (source.language != Language::kCuda)
    return Error(ErrorCode::kUsage, "emulate_cuda: " + path +
                                        " is not CUDA C++; emulate_ptx "
                                        "takes PTX");
  if (source.text.empty()) return Error(ErrorCode::kUsage, "emulate_cuda: " + path + " is empty");
  CompileOptions front = options.compile;
  if (front.target == Target::kSm90) front.target = Target::kSm100a;
  auto context = kernel_context(source, front);
  if (!context.ok()) return std::move(context).error();
  std::vector<std::string> names;
  if (!source.entry.empty()) names.push_back(source.entry);
  auto compiled = compile_cuda_front_end(source.text, path, {}, context->nvrtc, names,
                                         context->options, FrontEndOutput::kPtx);
  if (!compiled.ok()) return std::move(compiled).error();
  EmulateOptions lowered = options;
  lowered.path = path;
  lowered.entry = compiled->lowered_names.empty() ? source.entry : compiled->lowered_names[0];
  return emulate_ptx(std::string_view(compiled->output.data(), compiled->output.size()), lowered);
}

}  // namespace tmem
