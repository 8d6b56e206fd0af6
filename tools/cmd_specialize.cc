// tmemjit specialize: a user's kernel (CUDA C++ or PTX) specialized for transfers given as spec
// files, through compile_kernel (docs/design.md §Specialization).
#include <algorithm>
#include <cctype>
#include <iostream>
#include <iterator>
#include <optional>
#include <set>

#include "tmem/compile.h"
#include "tmem/specialize.h"
#include "tmem/text.h"
#include "tools/cli.h"
#include "tools/source_args.h"

namespace tmemjit_cli {
namespace {

constexpr std::streamsize kMaxSpecBytes = std::streamsize{1} << 20;

// --transfer N=SPEC.json: a spec file (tmem::parse_spec_file, one format for every reader) whose
// device-function options (name, wait, warp_argument, column_argument, cta_group) stand where the
// command line gives no flag and must agree with the flags it gives (check_file_agrees_with_flags:
// N is the name's flag).
tmem::Result<tmem::NamedTransfer> transfer_of(const std::string& value,
                                              const tmem::DeviceFunctionOptions& defaults,
                                              const Args& args) {
  const size_t eq = value.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == value.size())
    return tmem::Error(tmem::ErrorCode::kUsage,
                       "--transfer takes NAME=SPEC.json, not '" + value + "'");
  tmem::DeviceFunctionOptions options = defaults;
  options.name = value.substr(0, eq);
  const std::string path = value.substr(eq + 1);
  auto text = read_text(path, kMaxSpecBytes, "spec file");
  if (!text) return text.error();
  auto file = tmem::parse_spec_file(*text, options);
  if (!file)
    return tmem::Error(file.error().code(),
                       "transfer '" + options.name + "' (" + tmem::quote_excerpt(path) +
                           "): " + file.error().message(),
                       file.error().details());
  if (auto agreed =
          check_file_agrees_with_flags(*file, args, path, NameFlag{"--transfer", options.name});
      !agreed)
    return agreed.error();
  return tmem::NamedTransfer{std::move(file->spec), file->options};
}

// `text` with its comments (// to the end of the line, /* */) turned into spaces, so that a
// kernel named in a comment is not taken for one.
std::string without_comments(std::string_view text) {
  std::string out(text);
  for (size_t i = 0; i + 1 < out.size(); ++i) {
    if (out[i] == '/' && out[i + 1] == '/') {
      const size_t end = std::min(out.find('\n', i), out.size());
      std::fill(out.begin() + static_cast<std::ptrdiff_t>(i),
                out.begin() + static_cast<std::ptrdiff_t>(end), ' ');
      i = end;
    } else if (out[i] == '/' && out[i + 1] == '*') {
      const size_t close = out.find("*/", i + 2);
      const size_t end = close == std::string::npos ? out.size() : close + 2;
      for (size_t k = i; k < end; ++k)
        if (out[k] != '\n') out[k] = ' ';
      i = end - 1;
    }
  }
  return out;
}

bool word_char(char c, bool dollar) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         (dollar && c == '$');
}

// The kernels a source defines: the name after each `__global__ [__launch_bounds__(...)] void
// [__launch_bounds__(...)]` (CUDA C++) or `.entry` (PTX). A scanner, linear in the text: the
// std::regex it replaces recursed once per character and overflowed the stack on a 26.5 KB line
// (issue 30).
std::set<std::string> kernels_defined(std::string_view source, bool ptx) {
  const std::string text = without_comments(source);
  std::set<std::string> found;
  const std::string_view keyword = ptx ? ".entry" : "__global__";
  size_t at = 0;
  auto skip_space = [&] {
    while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at])) != 0) ++at;
  };
  auto take_word = [&](std::string_view word) {
    if (text.compare(at, word.size(), word) != 0) return false;
    if (at + word.size() < text.size() && word_char(text[at + word.size()], ptx)) return false;
    at += word.size();
    return true;
  };
  // The launch attributes a kernel may carry before or after `void`: __launch_bounds__(...),
  // __cluster_dims__(...), __maxnreg__(...), in any order.
  auto skip_one_attribute = [&]() -> bool {
    const size_t before = at;
    if (!take_word("__launch_bounds__") && !take_word("__cluster_dims__") &&
        !take_word("__maxnreg__"))
      return false;
    skip_space();
    // Looked for within 4 KiB only, so that many unclosed ones cost linear time.
    const size_t limit = std::min(text.size(), at + 4096);
    const size_t close =
        at < text.size() && text[at] == '('
            ? static_cast<size_t>(std::find(text.begin() + static_cast<std::ptrdiff_t>(at),
                                            text.begin() + static_cast<std::ptrdiff_t>(limit),
                                            ')') -
                                  text.begin())
            : limit;
    if (close >= limit) {
      at = before;
      return false;
    }
    at = close + 1;
    skip_space();
    return true;
  };
  auto skip_launch_bounds = [&] {
    while (skip_one_attribute()) {
    }
  };
  for (size_t hit = text.find(keyword); hit != std::string::npos;
       hit = text.find(keyword, hit + 1)) {
    if (hit > 0 && word_char(text[hit - 1], ptx)) continue;
    at = hit;
    if (!take_word(keyword)) continue;
    const size_t after_keyword = at;
    skip_space();
    if (at == after_keyword) continue;  // the keyword must be followed by a space
    if (!ptx) {
      skip_launch_bounds();
      if (!take_word("void")) continue;
      const size_t after_void = at;
      skip_space();
      if (at == after_void) continue;
      skip_launch_bounds();
    }
    const size_t name = at;
    if (at < text.size() && (word_char(text[at], ptx) && !(text[at] >= '0' && text[at] <= '9')))
      while (at < text.size() && word_char(text[at], ptx)) ++at;
    if (at > name) found.insert(text.substr(name, at - name));
  }
  return found;
}

// The kernel to specialize when --entry is not given: the one __global__ function (CUDA C++) or
// .entry (PTX) the file defines.
tmem::Result<std::string> default_entry(const tmem::KernelSource& source) {
  const std::set<std::string> found =
      kernels_defined(source.text, source.language == tmem::Language::kPtx);
  if (found.size() == 1) return *found.begin();
  std::string list;
  for (const std::string& name : found) list += (list.empty() ? "" : ", ") + name;
  return tmem::Error(tmem::ErrorCode::kUsage,
                     found.empty() ? "no kernel found in " + source.path + "; name it with --entry"
                                   : source.path + " defines several kernels (" + list +
                                         "); name one with --entry");
}

// What the call is for: specialize's kernel, or warmup's generic tier, which only the cache keeps.
enum class Purpose { kSpecialize, kWarmup };

// specialize's (and warmup's) command line, checked: what compile_kernel gets.
struct SpecializeRequest {
  tmem::KernelSource source;
  std::vector<tmem::NamedTransfer> transfers;
  tmem::CompileOptions options;
  std::string target_text;  // --target as given, for the report
  std::string output;       // -o; empty: none
};

std::vector<OptionSpec> specialize_option_specs() {
  return with_compiler_flag_options(with_cache_options({{"--entry", true},
                                                        {"--target", true},
                                                        {"--backend", true},
                                                        {"-o", true},
                                                        {"--json", false},
                                                        {"--no-wait", false},
                                                        {"--warp-arg", false},
                                                        {"--column-arg", false},
                                                        {"--cta-group", true},
                                                        {"--transfer", true, true},
                                                        {"--specialization", true},
                                                        {"--front-end", true},
                                                        {"--keep", true}}));
}

// warmup builds the generic tier for the cache: a policy that builds something else, or a
// process without a cache, would compile what nothing keeps and exit 0 (issue 39, N16), where
// Python's warmup_kernel refuses.
tmem::Status check_warmup_args(const Args& args) {
  if (auto mode = args.get("--specialization"); mode && *mode != "generic")
    return tmem::Error(tmem::ErrorCode::kUsage,
                       "warmup builds the generic tier, not --specialization '" +
                           tmem::quote_excerpt(*mode) +
                           "'; tmemjit specialize compiles a kernel with that policy");
  if (args.has("--no-cache"))
    return tmem::Error(tmem::ErrorCode::kUsage,
                       "warmup builds the generic tier into the cache; with --no-cache "
                       "nothing would keep it (give --cache-dir DIR, or drop --no-cache)");
  return std::monostate{};
}

// The one source file, read, and its kernel: --entry, else the one it defines.
tmem::Result<tmem::KernelSource> kernel_source_of(const Args& args) {
  auto read = read_source(args.positional()[0]);
  if (!read) return read.error();
  tmem::KernelSource source = std::move(read).value();
  if (auto entry = args.get("--entry")) {
    source.entry = *entry;
  } else {
    auto found = default_entry(source);
    if (!found) return found.error();
    source.entry = *found;
  }
  return source;
}

// --target, --backend, --front-end, --keep, --specialization and the compiler flags.
tmem::Result<tmem::CompileOptions> compile_options_of(const Args& args, Purpose purpose) {
  tmem::CompileOptions options;
  auto target = tmem::parse_target(args.get("--target").value_or("sm_100a"));  // sm_90: emulated
  if (!target) return tmem::Error(tmem::ErrorCode::kUsage, target.error().message());
  options.target = *target;
  if (auto backend = args.get("--backend")) {
    auto parsed = tmem::parse_backend(*backend);
    if (!parsed) return parsed.error();
    options.backend = *parsed;
  }
  if (auto front_end = args.get("--front-end")) {
    auto parsed = tmem::parse_front_end(*front_end);
    if (!parsed) return parsed.error();
    options.front_end = *parsed;
  }
  if (auto keep = args.get("--keep")) options.keep_dir = *keep;
  if (auto mode = args.get("--specialization")) {
    auto parsed = tmem::parse_specialization(*mode);
    if (!parsed) return parsed.error();
    options.specialization = *parsed;
  }
  if (purpose == Purpose::kWarmup) options.specialization = tmem::Specialization::kGeneric;
  options.nvrtc_options = args.all("-Xnvrtc");
  options.precompile = args.all("--precompile");
  options.ptx_options = args.all("-Xptxas");
  return options;
}

// Each --transfer NAME=SPEC.json, the device-function flags its defaults.
tmem::Result<std::vector<tmem::NamedTransfer>> transfers_of(const Args& args,
                                                            tmem::Language language) {
  tmem::DeviceFunctionOptions defaults;
  defaults.language = language;
  defaults.wait = !args.has("--no-wait");
  defaults.warp_argument = args.has("--warp-arg");
  defaults.column_argument = args.has("--column-arg");
  auto cta_group = cta_group_from_args(args);
  if (!cta_group) return cta_group.error();
  defaults.cta_group = *cta_group;
  std::vector<tmem::NamedTransfer> transfers;
  for (const std::string& value : args.all("--transfer")) {
    auto transfer = transfer_of(value, defaults, args);
    if (!transfer) return transfer.error();
    transfers.push_back(std::move(transfer).value());
  }
  return transfers;
}

// The request of a parsed command line, in the order its errors are reported. Applies the cache
// options to the process's cache on the way, as every command that compiles does.
tmem::Result<SpecializeRequest> specialize_request(const Args& args, Purpose purpose) {
  if (purpose == Purpose::kWarmup)
    if (tmem::Status refused = check_warmup_args(args); !refused.ok()) return refused.error();
  if (args.positional().size() != 1)
    return tmem::Error(
        tmem::ErrorCode::kUsage,
        args.positional().empty()
            ? "specialize needs the kernel's source file (FILE.cu or FILE.ptx)"
            : "specialize takes one source file, got '" + args.positional()[1] + "' too");
  if (auto applied = apply_cache_args(args); !applied) return applied.error();
  SpecializeRequest request;
  auto source = kernel_source_of(args);
  if (!source) return source.error();
  request.source = std::move(source).value();
  auto options = compile_options_of(args, purpose);
  if (!options) return options.error();
  request.options = std::move(options).value();
  request.target_text = args.get("--target").value_or("sm_100a");
  auto transfers = transfers_of(args, request.source.language);
  if (!transfers) return transfers.error();
  request.transfers = std::move(transfers).value();
  request.output = args.get("-o").value_or("");
  return request;
}

// A refusal as report() prints it: the error, and the fields its JSON object adds.
struct Refusal {
  tmem::Error error;
  nlohmann::json fields = nlohmann::json::object();
};

// What a warmup must have built: the generic tier, into a cache that keeps it.
std::optional<Refusal> check_warmed_up(const tmem::Kernel& kernel,
                                       const tmem::CompileReport& info) {
  if (kernel.tier() != "generic")
    return Refusal{tmem::Error(tmem::ErrorCode::kUsage,
                               "warmup: no generic tier for this kernel: " + info.tier_reason),
                   {{"tier", std::string(kernel.tier())}}};
  if (!info.cache_enabled)
    return Refusal{tmem::Error(tmem::ErrorCode::kUsage,
                               "warmup: caching is off (TMEMJIT_DISABLE_CACHE), so nothing keeps "
                               "the generic tier it built; give --cache-dir DIR")};
  return std::nullopt;
}

// -o: the specialized kernel's cubin. The generic tier's cubin reads its layout from __constant__
// descriptors that only a tmem::Kernel launch writes: the file would be the same for every layout
// of the signature (issue 39 N22). Lazy's specialized kernel is on its way: -o waits for it.
std::optional<Refusal> write_cubin(const SpecializeRequest& request, tmem::Kernel& kernel) {
  if (kernel.tier() == "generic" && request.options.specialization == tmem::Specialization::kLazy)
    if (tmem::Status ready = kernel.wait_specialized(); !ready.ok()) return Refusal{ready.error()};
  if (kernel.tier() == "generic")
    return Refusal{
        tmem::Error(tmem::ErrorCode::kUsage,
                    "-o: this is the generic tier, whose cubin reads the layout from "
                    "__constant__ tmemjit_desc_* that only a tmem::Kernel launch writes; "
                    "the file would be the same for every layout of its signature",
                    "write the layout's own kernel with --specialization eager"),
        {{"tier", std::string(kernel.tier())}}};
  if (auto written = write_output_file(
          request.output, std::string_view(kernel.cubin().data(), kernel.cubin().size()));
      !written)
    return Refusal{written.error()};
  return std::nullopt;
}

void print_specialized_json(const SpecializeRequest& request, const tmem::Kernel& kernel,
                            const tmem::CompileReport& info) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& t : info.transfers)
    list.push_back({{"name", t.name},
                    {"op", t.op},
                    {"regs_per_thread", t.regs_per_thread},
                    {"instructions_per_warp", t.instructions_per_warp},
                    {"alloc_columns", t.alloc_columns}});
  print_json({{"ok", true},
              {"entry", kernel.name()},
              {"language", std::string(tmem::to_string(request.source.language))},
              {"target", request.target_text},
              {"backend", std::string(tmem::to_string(info.backend))},
              {"emulated", kernel.emulated()},
              {"cache", std::string(tmem::to_string(info.cache))},
              {"front_end", std::string(tmem::to_string(info.front_end_cache))},
              {"front_end_ms", info.front_end_ms},
              {"link_ms", 0.0},  // deprecated, always 0: removed in the next release
              {"headers", info.headers},
              {"include_files", info.include_files},
              {"code",
               {{"registers", info.code.registers},
                {"local_bytes", info.code.local_bytes},
                {"instructions", info.code.instructions},
                {"ldtm", info.code.ldtm},
                {"sttm", info.code.sttm},
                {"disassembler", info.code.disassembler}}},
              {"ptx_compile_ms", info.ptx_compile_ms},
              {"compile_ms", info.compile_ms},
              {"cubin_bytes", kernel.cubin().size()},
              {"tier", std::string(kernel.tier())},
              {"tier_reason", info.tier_reason},
              {"key", info.key},
              {"transfers", list},
              {"warnings", info.warnings},
              {"output", request.output}});
}

void print_specialized_text(const SpecializeRequest& request, const tmem::Kernel& kernel,
                            const tmem::CompileReport& info) {
  const std::string& output = request.output;
  std::cout << "specialized " << kernel.name() << " (" << request.source.path << ") for "
            << request.target_text << " with " << tmem::to_string(info.backend) << ": "
            << kernel.cubin().size() << " bytes of cubin";
  if (info.cache != tmem::CacheSource::kCompiled)
    std::cout << " from the cache (" << tmem::to_string(info.cache) << ")";
  else {
    std::cout << " in " << info.compile_ms << " ms (front end: ";
    std::cout << info.front_end_ms << " ms, headers "  // as compile_ms prints
              << info.headers << ")";
  }
  std::cout << (output.empty() ? "" : " -> " + output) << "\n";
  if (kernel.tier() != "specialized" || !info.tier_reason.empty())
    std::cout << "  tier: " << kernel.tier()
              << (info.tier_reason.empty() ? "" : " (" + info.tier_reason + ")") << "\n";
  for (const auto& t : info.transfers)
    std::cout << "  " << t.name << ": " << t.op << ", " << t.regs_per_thread
              << " registers per thread, " << t.instructions_per_warp << " instructions per warp, "
              << t.alloc_columns << " columns\n";
  if (!info.log.empty()) std::cerr << info.log << "\n";
}

int specialize(const std::vector<std::string>& argv, Purpose purpose) {
  auto args = parse_args(purpose == Purpose::kWarmup ? "warmup" : "specialize", argv,
                         specialize_option_specs());
  if (!args) return report(args.error(), false);
  const bool json = args->json();
  auto request = specialize_request(*args, purpose);
  if (!request) return report(request.error(), json);

  tmem::CompileReport info;
  auto kernel = tmem::compile_kernel(request->source, request->transfers, request->options, &info);
  if (!kernel)
    return report(kernel.error(), json, {{"cache", std::string(tmem::to_string(info.cache))}});
  std::optional<Refusal> refused;
  if (purpose == Purpose::kWarmup) refused = check_warmed_up(*kernel, info);
  if (!refused && !request->output.empty()) refused = write_cubin(*request, *kernel);
  if (refused) return report(refused->error, json, refused->fields);
  if (json)
    print_specialized_json(*request, *kernel, info);
  else
    print_specialized_text(*request, *kernel, info);
  return kExitOk;
}

}  // namespace

int cmd_specialize(const std::vector<std::string>& argv) {
  return specialize(argv, Purpose::kSpecialize);
}

int cmd_warmup_kernel(const std::vector<std::string>& argv) {
  return specialize(argv, Purpose::kWarmup);
}

}  // namespace tmemjit_cli
