// Stage 1 of a compile_kernel miss: the specialized source (source_stage.h).
#include "runtime/jit/source_stage.h"

#include <utility>

#include "kernels/device_function.h"
#include "runtime/jit/kernel_context.h"

namespace tmem {

Result<SpecializedSource> specialize_source(const Request& request,
                                            std::span<const kernels::GenericTransfer> generic) {
  auto prepared = kernels::prepare_transfers(request.transfers);
  if (!prepared.ok()) return std::move(prepared).error();
  if (Status ok = check_user_options(request.source, request.context); !ok.ok())
    return std::move(ok).error();
  SpecializedSource out;
  out.request = &request;
  out.prepared = std::move(prepared).value();
  out.generic = !generic.empty();
  const Target target = request.context.options.target;
  // Kept files are named after the entry and the transfers' opcodes (CompileOptions::keep_dir).
  out.keep_stem = request.source.entry;
  for (const kernels::TransferCode& code : out.prepared.codes)
    out.keep_stem += "-" + std::string(to_string(code.plan.op.shape())) + ".x" +
                     std::to_string(code.plan.op.num());
  if (out.generic) out.keep_stem = request.source.entry + "-generic";
  if (request.source.language == Language::kCuda)
    out.transfers_header =
        out.generic ? kernels::generic_transfers_header(generic, out.prepared.cta_group, target)
                    : kernels::transfers_header(out.prepared, target);
  if (target == Target::kSm90)
    for (const kernels::TransferCode& code : out.prepared.codes)
      for (std::string& instruction : kernels::emulated_instructions(code))
        out.instructions.push_back(std::move(instruction));
  return out;
}

}  // namespace tmem
