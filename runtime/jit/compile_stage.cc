// Stage 3 of a compile_kernel miss: the compiled kernel (compile_stage.h).
#include "runtime/jit/compile_stage.h"

#include <string>
#include <utility>
#include <vector>

#include "runtime/compile/backends.h"
#include "runtime/compile/log_hints.h"
#include "runtime/jit/kernel_context.h"
#include "tmem/code_stats.h"

namespace tmem {
namespace {

// The PTX compile of the front end's module by the backend, a PTX source's log lines mapped back
// to its file.
Result<CompiledModule> compile_module(const SpecializedSource& source, const FrontEnd& front) {
  const KernelSource& user = source.request->source;
  auto compiled = compile_ptx(front.ptx, source.request->context.ptx, source.keep_stem);
  if (compiled.ok() || user.language != Language::kPtx) return compiled;
  // ptxas counts lines of the combined module: name the user's file and line instead.
  Error error = std::move(compiled).error();
  std::string message =
      user_log(error.message(), user.path, front.inserted_after, front.inserted_lines);
  while (!message.empty() && message.back() == '\n') message.pop_back();
  return Error(error.code(), message,
               user_log(error.details(), user.path, front.inserted_after, front.inserted_lines));
}

}  // namespace

Result<CompiledKernel> compile_front_end(const SpecializedSource& source, FrontEnd front) {
  const KernelContext& context = source.request->context;
  CompiledKernel out;
  KernelEntryMeta& meta = out.meta;
  meta.target = std::string(to_string(context.options.target));
  meta.emulated = context.options.target == Target::kSm90;
  meta.include_files = source.request->includes.files;
  meta.entry = std::move(front.entry);
  meta.headers = std::move(front.headers);
  meta.log = std::move(front.log);
  meta.warnings = std::move(front.warnings);
  out.headers_reused = front.headers_reused;
  out.front_end_ms = front.ms;
  std::vector<char> cubin = std::move(front.cubin);
  if (cubin.empty()) {  // a PTX source, sm_90, or a backend named for a CUDA one
    auto compiled = compile_module(source, front);
    if (!compiled.ok()) return std::move(compiled).error();
    out.ptx_compile_ms = compiled->compile_ms;
    meta.backend = std::string(to_string(compiled->backend));
    if (!compiled->log.empty()) meta.log += (meta.log.empty() ? "" : "\n") + compiled->log;
    cubin = std::move(compiled->cubin);
  } else {  // the front end compiled to the cubin itself (nvcc through the toolkit's ptxas)
    meta.backend = std::string(to_string(
        context.options.front_end == FrontEndCompiler::kNvcc ? Backend::kPtxas : Backend::kNvrtc));
  }
  for (const kernels::TransferCode& code : source.prepared.codes)
    meta.transfers.push_back({code.options.name, code.plan.op.to_string(),
                              code.plan.regs_per_thread, code.plan.instructions_per_warp(),
                              code.plan.alloc_columns});
  meta.instructions = std::move(front.instructions);
  if (auto code = code_stats(cubin, meta.entry); code.ok())
    meta.code = std::move(code).value();
  else
    meta.warnings.push_back("no code statistics: " + code.error().message());
  out.payload.blob = std::move(cubin);
  out.payload.text = std::move(front.ptx);
  out.payload.meta = meta.to_json();
  return out;
}

}  // namespace tmem
