// A transfer ready for code generation (kernels/device_function.h): the checks on its name, the
// symbols it defines, prepare_transfer, and what the transfers of one kernel share. Its forms are
// built elsewhere: coord_map.cc (NAME_coord's index map), device_function_ptx.cc (the .funcs as
// PTX IR), device_function_cuda.cc (the CUDA C++ text).
#include "kernels/device_function.h"

#include <algorithm>
#include <set>

#include "tmem/check.h"
#include "tmem/text.h"

namespace tmem::kernels {
namespace {

// The C++ keywords (and alternative tokens) a name may not be.
bool is_cpp_keyword(std::string_view name) {
  static const std::set<std::string_view> kKeywords = {
      "alignas",       "alignof",     "and",
      "and_eq",        "asm",         "auto",
      "bitand",        "bitor",       "bool",
      "break",         "case",        "catch",
      "char",          "char8_t",     "char16_t",
      "char32_t",      "class",       "compl",
      "concept",       "const",       "consteval",
      "constexpr",     "constinit",   "const_cast",
      "continue",      "co_await",    "co_return",
      "co_yield",      "decltype",    "default",
      "delete",        "do",          "double",
      "dynamic_cast",  "else",        "enum",
      "explicit",      "export",      "extern",
      "false",         "float",       "for",
      "friend",        "goto",        "if",
      "inline",        "int",         "long",
      "mutable",       "namespace",   "new",
      "noexcept",      "not",         "not_eq",
      "nullptr",       "operator",    "or",
      "or_eq",         "private",     "protected",
      "public",        "register",    "reinterpret_cast",
      "requires",      "return",      "short",
      "signed",        "sizeof",      "static",
      "static_assert", "static_cast", "struct",
      "switch",        "template",    "this",
      "thread_local",  "throw",       "true",
      "try",           "typedef",     "typeid",
      "typename",      "union",       "unsigned",
      "using",         "virtual",     "void",
      "volatile",      "wchar_t",     "while",
      "xor",           "xor_eq",      "main",
      "threadIdx",     "blockIdx",    "blockDim",
      "gridDim",       "warpSize"};
  return kKeywords.count(name) != 0;
}

// Types and namespaces a kernel's source names: a transfer function of that name would hide them
// (issue 30 item 12: `uint32_t` as a name compiled into an error inside the user's kernel).
bool is_kernel_type_name(std::string_view name) {
  static const std::set<std::string_view> kNames = {"int8_t",       "int16_t",
                                                    "int32_t",      "int64_t",
                                                    "uint8_t",      "uint16_t",
                                                    "uint32_t",     "uint64_t",
                                                    "size_t",       "ptrdiff_t",
                                                    "intptr_t",     "uintptr_t",
                                                    "nullptr_t",    "max_align_t",
                                                    "std",          "cuda",
                                                    "cub",          "thrust",
                                                    "cute",         "cutlass",
                                                    "nvcuda",       "cooperative_groups",
                                                    "dim3",         "half",
                                                    "half2",        "nv_bfloat16",
                                                    "nv_bfloat162", "cudaError_t",
                                                    "cudaStream_t", "CUtensorMap",
                                                    "float_t",      "double_t"};
  if (kNames.count(name)) return true;
  // CUDA's vector types: char1 .. ulonglong4, float1 .. double4.
  static constexpr std::string_view kVectorBases[] = {"char",     "uchar",     "short", "ushort",
                                                      "int",      "uint",      "long",  "ulong",
                                                      "longlong", "ulonglong", "float", "double"};
  if (name.size() < 2 || name.back() < '1' || name.back() > '4') return false;
  const std::string_view base = name.substr(0, name.size() - 1);
  return std::ranges::find(kVectorBases, base) != std::end(kVectorBases);
}

}  // namespace

std::string device_function_name() { return "tmem_transfer"; }

Status check_identifier(std::string_view name, std::string_view what) {
  auto fail = [&](const std::string& why) {
    return Error(ErrorCode::kUsage, std::string(what) + " '" + quote_excerpt(name) + "' " + why,
                 "a name is a C identifier: letters, digits and '_', not starting with a digit; "
                 "not a C++ keyword, not starting with '__' or 'tmemjit' (reserved), not a type "
                 "or namespace of a kernel's (uint32_t, size_t, std, float4, ...) and not an "
                 "identifier of the generated code (tmem_base, regs, warp, column, thread, "
                 "slot, index, ...)");
  };
  if (name.empty()) return fail("is empty");
  if (name.size() > 200) return fail("is longer than 200 characters");
  if (name[0] >= '0' && name[0] <= '9') return fail("starts with a digit");
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return fail(std::string("is not a C identifier: it contains '") + c + "'");
  if (is_cpp_keyword(name)) return fail("is a C++ keyword or a CUDA built-in");
  if (name.rfind("__", 0) == 0) return fail("starts with '__', which C++ reserves");
  if (name.rfind("tmemjit", 0) == 0)
    return fail("starts with 'tmemjit', which libtmemjit reserves");
  if (is_kernel_type_name(name))
    return fail(
        "names a type or namespace kernels use (a function of that name would hide it in the "
        "kernel's source)");
  // s0, s1, ...: the slot parameters of the emulated PTX form's stores.
  const bool slot_parameter =
      name.size() > 1 && name[0] == 's' &&
      std::ranges::all_of(name.substr(1), [](char c) { return c >= '0' && c <= '9'; });
  if (slot_parameter ||
      std::ranges::find(generated_identifiers(), name) != generated_identifiers().end())
    return fail(
        "is an identifier of the generated code (a parameter, local or helper of its "
        "functions), which the transfer's name would shadow or be shadowed by");
  return std::monostate{};
}

std::vector<std::string> transfer_symbols(const std::string& name) {
  return {name,
          name + "_regs",
          name + "_is_load",
          name + "_wait",
          name + "_coord",
          name + "_redval",
          name + "_redvals",
          name + "_shape",
          name + "_columns",
          name + "_alloc_columns"};
}

std::span<const std::string_view> generated_identifiers() noexcept {
  static constexpr std::string_view kNames[] = {
      // the parameters of the contract's functions
      "tmem_base", "regs", "warp", "column", "thread", "slot", "index",
      // the locals of the generated bodies
      "warp_", "taddr_", "tm_", "l_", "a_", "ok_", "w_", "s_", "acc_", "v_", "bits_", "c_", "r_",
      "s", "i", "r", "tmem", "dst", "generic", "slab", "lane", "event", "id", "address", "rows",
      "width", "old", "smem_result", "smem_address", "columns", "flags", "first_", "last_",
      "pending_",
      // the namespaces, types and helpers it names
      "emu", "detail", "EmuState", "emu_state", "alloc", "dealloc", "fence_before_sync",
      "fence_after_sync", "cluster_sync", "record", "resolve", "wait", "cta", "status"};
  return kNames;
}

int columns_spanned(const Plan& plan) noexcept {
  if (plan.repeats.empty()) return 0;
  int first = plan.columns_used;
  for (int g = 0; g < plan.warps(); ++g)
    for (int k = 0; k < plan.instructions_per_warp(); ++k)
      first = std::min(first, static_cast<int>(plan.address(g, k) & 0xFFFFu));
  return plan.columns_used - first;
}

Result<TransferCode> prepare_transfer(const TransferSpec& spec,
                                      const DeviceFunctionOptions& options, CoordDetail detail) {
  if (Status ok = check_identifier(options.name); !ok.ok()) return std::move(ok).error();
  Result<Plan> plan = check(spec);
  if (!plan.ok()) return std::move(plan).error();
  Result<CoordMap> coord = coord_map(spec, *plan, detail);
  if (!coord.ok()) return std::move(coord).error();
  return TransferCode{std::move(plan).value(), std::move(coord).value(), options,
                      spec.regs().dtype() == DType::kF32};
}

Result<int> lifecycle_cta_group(std::span<const TransferCode> codes) {
  int group = 0;
  const TransferCode* first = nullptr;
  for (const TransferCode& code : codes) {
    const int mine = code.options.cta_group;
    if (mine != 1 && mine != 2)
      return Error(ErrorCode::kUsage, "transfer '" + code.options.name + "': cta_group " +
                                          std::to_string(mine) +
                                          "; allowed: 1 (one CTA), 2 (a CTA pair)");
    if (first && mine != group)
      return Error(ErrorCode::kRule,
                   "transfers '" + first->options.name + "' (cta_group " + std::to_string(group) +
                       ") and '" + code.options.name + "' (cta_group " + std::to_string(mine) +
                       ") share one kernel's TMEM lifecycle; all tcgen05 instructions of a "
                       "kernel use one .cta_group")
          .set_rule(Rule::kOneCtaGroupPerKernel);
    if (!first) {
      first = &code;
      group = mine;
    }
  }
  return first ? group : 1;
}

std::vector<std::string> emulated_instructions(const TransferCode& code) {
  std::vector<std::string> out;
  const int count = code.plan.instructions_per_warp();
  for (int k = 0; k < count; ++k)
    out.push_back(code.plan.op.to_string() + " of " + code.options.name + " (instruction " +
                  std::to_string(k + 1) + " of " + std::to_string(count) + ")");
  return out;
}

}  // namespace tmem::kernels
