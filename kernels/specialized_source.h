// What compile_kernel compiles for a user's kernel (docs/specialization.md): the transfers
// prepared once, the header `#include <tmemjit/transfers.cuh>` receives (every transfer inline, as
// device_function's CUDA form), the user's source with a header stop before that include (so
// NVRTC's precompiled headers never hold a layout), and the .funcs a PTX source gets.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/device_function.h"
#include "tmem/device_function.h"
#include "tmem/result.h"
#include "tmem/target.h"

namespace tmem::kernels {

// The transfers of one kernel, checked, with their coordinate maps and the one lifecycle they
// share (one .cta_group per kernel, R27).
struct PreparedTransfers {
  std::vector<TransferCode> codes;
  int cta_group = 1;
  std::vector<DeviceFunctionOptions> options() const;
};

// kUsage for a bad or repeated name, or two transfers defining one symbol; no check() runs.
Status check_transfer_names(std::span<const NamedTransfer> transfers);
// check() of each spec (its errors prefixed with the transfer's name), the coordinate maps and the
// shared cta_group.
// `detail`: kForm when only NAME_coord's closed form is needed (the generic tier's descriptors).
Result<PreparedTransfers> prepare_transfers(std::span<const NamedTransfer> transfers,
                                            CoordDetail detail = CoordDetail::kTable);

// The name the user's source includes.
inline constexpr std::string_view kTransfersHeader = "tmemjit/transfers.cuh";

// The start of tmemjit/transfers.cuh (both tiers): a first comment line of `title`, the uint32_t
// the contract's signatures name, and the lifecycle.
std::string transfers_header_prelude(std::string_view title, int cta_group, Target target);
// The text of tmemjit/transfers.cuh for `target`: the lifecycle, then every transfer's functions
// inline (the emulated forms for sm_90).
std::string transfers_header(const PreparedTransfers& prepared, Target target);

// The user's CUDA source as NVRTC compiles it.
struct CudaUnit {
  std::string text;    // the source file NVRTC gets
  std::string prefix;  // the user's text before the stop: what a precompiled header may hold
  // The prefix as an in-memory header that `text` includes first (name, text), so that NVRTC
  // precompiles all of it, the user's own code as well as their includes; empty where the prefix
  // cannot stand alone as a header (below).
  std::string prefix_header_name;
  std::string prefix_header;
  bool header_stop = false;  // false: the source does not include the header itself
  // #include directives after the transfers' include (all of them without a header stop): what
  // every layout parses again unless CompileOptions::precompile names it.
  int includes_after = 0;
  // Why the prefix is not a header although it holds code of the user's (which is then parsed
  // again for every layout); empty otherwise.
  std::string inline_stop_reason;
};
// `source` (named `path` for NVRTC) split at its first `#include <tmemjit/transfers.cuh>` (or
// "...") outside comments. NVRTC ends a precompiled header at the first token of the source file
// and never checks in-memory headers when it reuses one, so the layout must come after that point.
// The prefix becomes a header that `#line 1 "path"` names as the user's file (lines, __FILE__ and
// diagnostics unchanged) and the source file is `#include` of it, the stop ";", `#line N`, then
// the rest.
// Where the prefix leaves an #if or a brace open (the include sits inside a namespace or a
// conditional), or `path` cannot be spelled in a #line, the stop is an empty declaration ";" and
// `#line N` before the include instead: only the headers included before the first token are
// precompiled then.
// With `precompile` (CompileOptions::precompile), the prefix header starts with an `#include <H>`
// of each, and exists wherever the source includes the transfers (also through a header, or not
// at the top level): the source file is then that header's `#include`, the stop ";", `#line 1`,
// and the source as it would be compiled without them.
// `reaching`: where the source does not include the transfers' header itself, the offset of the
// line of the main file's #include whose include closure reaches it (compile_kernel finds it with
// the include scan; npos: none): the stop goes before that line, as before the header's own
// include (docs/specialization.md "Header-only libraries").
CudaUnit cuda_unit(std::string_view source, std::string_view path,
                   std::span<const std::string> precompile = {},
                   size_t reaching = std::string_view::npos);

// The main file's #include directives outside comments, in order: each line's offset and text.
struct IncludeDirective {
  size_t offset = 0;
  std::string line;
};
std::vector<IncludeDirective> include_directives(std::string_view source);
// `#include <H>` for each of `headers`, one per line.
std::string include_lines(std::span<const std::string> headers);

// Whether `name` appears as an identifier in `source` outside comments (the warning that a
// transfer is never called).
bool mentions_identifier(std::string_view source, std::string_view name);

// The PTX form's .funcs for a tcgen05 target: the transfers, their waits and index maps, and the
// lifecycle.
Result<std::string> ptx_functions(const PreparedTransfers& prepared, Target target);

}  // namespace tmem::kernels
