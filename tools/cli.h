// Shared plumbing of the tmemjit command: argument parsing, error reporting, exit codes
// (docs/design.md §CLI).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tmem/result.h"
#include "tmem/select.h"
#include "tmem/specialize.h"
#include "tmem/transfer.h"

namespace tmemjit_cli {

// Exit codes of docs/design.md §CLI.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInvalidInput = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitToolchain = 3;
inline constexpr int kExitWrongData = 4;
// Stopped by a signal, as shells report it (128 + the signal number): SIGINT, SIGTERM.
inline constexpr int kExitInterrupted = 130;
inline constexpr int kExitTerminated = 143;

// What the word after an option that takes a value may be, when it is that value.
enum class NextWord {
  kNotAnOption,  // anything but one of the command's options ("--keep --json" is refused)
  kAnything,     // anything at all: -Xnvrtc's and -Xptxas's values are the compilers' options
  kPlain,        // neither empty nor starting with '-': a bare -I would make NVRTC take its next
                 // option for the directory
};

// One option a command accepts: "--json" (a flag) or "--at" (takes a value: "--at V", "--at=V").
// The compiler flags' spellings add to that (source_args.h): `attached` ("-IDIR" as well as
// "-I DIR": the value is the rest of the word, '=' included), `equals_only` ("-std=c++17", never
// "-std c++17"), and `into` and `prefix`, which let several options share one list in the order
// given ("-I DIR" is "-Xnvrtc -IDIR").
struct OptionSpec {
  std::string name;
  bool takes_value = false;
  bool repeats = false;  // may be given several times: Args::all has every value in order
  NextWord next = NextWord::kNotAnOption;
  bool attached = false;
  bool equals_only = false;
  std::string into;    // the name Args keeps its values under; empty: `name`
  std::string prefix;  // what Args keeps is prefix + value (a flag's: prefix)
};

// The parsed command line of one command.
class Args {
 public:
  bool has(std::string_view name) const { return values_.count(std::string(name)) != 0; }
  std::optional<std::string> get(std::string_view name) const;  // the last value given
  std::vector<std::string> all(std::string_view name) const;    // every value, in order
  const std::vector<std::string>& positional() const { return positional_; }
  bool json() const { return has("--json"); }

 private:
  friend tmem::Result<Args> parse_args(std::string_view, const std::vector<std::string>&,
                                       const std::vector<OptionSpec>&);
  void add(const OptionSpec& spec, const std::string& value);
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
};

// The command line of `command` (named in errors) against every option it takes, repeatable
// ones included: no command takes options out of argv before this. "--name value",
// "--name=value" and the spellings of OptionSpec; an unknown option, a missing value or a value
// given to a flag is kUsage naming the option.
tmem::Result<Args> parse_args(std::string_view command, const std::vector<std::string>& argv,
                              const std::vector<OptionSpec>& options);

// The exit code for an error: parse/rule errors 1, usage 2, toolchain/driver/io/internal 3,
// wrong data 4.
int exit_code(const tmem::Error& error);

// Prints `error` (stderr, "error: ..." or, with json, {"ok":false,"error":{..}} on stdout) and
// returns its exit code. `extra` fields are merged into the JSON object.
int report(const tmem::Error& error, bool json,
           const nlohmann::json& extra = nlohmann::json::object());

// Prints one JSON object on stdout, every string made valid UTF-8 (tmem::valid_utf8).
void print_json(const nlohmann::json& object);

// Writes an output file (-o): a regular file (or a new one) through a temporary file beside it and
// a rename, so a failed write leaves no truncated file; a device or FIFO (/dev/stdout) in place.
// kIo naming the path and the failing step.
tmem::Status write_output_file(const std::string& path, std::string_view bytes);

// SIGINT and SIGTERM end the command with kExitInterrupted (130) and kExitTerminated (143),
// whatever it is doing (tools/signals.cc). Called first in main(), before any thread starts.
void exit_on_stop_signals();

// A command: takes the arguments after its name, returns the exit code.
using CommandFn = int (*)(const std::vector<std::string>& argv);

// The SPEC options of docs/design.md §CLI: --op --scope --tmem --regs [--tmem2 --imm] | --spec
// FILE.json.
std::vector<OptionSpec> spec_options();
// Builds the spec from those options; a missing field or a conflicting --spec is kUsage.
tmem::Result<tmem::TransferSpec> spec_from_args(const Args& args);
// The same, with the device-function options of a --spec file (tmem::parse_spec_file) over
// `defaults`; without --spec the options are `defaults`. A file that disagrees with a flag given
// (--name, --no-wait, --warp-arg, --column-arg, --cta-group) is kUsage
// (check_file_agrees_with_flags).
tmem::Result<tmem::SpecFile> spec_file_from_args(const Args& args,
                                                 const tmem::DeviceFunctionOptions& defaults);
// One rule for a spec file's device-function options against the command line's flags, the same
// in every command (README §The tmemjit command): a flag given that says otherwise than a key the
// file names is kUsage naming both; a flag the file agrees with, or a key only one of them gives,
// stands. `name` is the flag that named the function ("--name" of ptx, "--transfer" of
// specialize) and its value, when one did.
struct NameFlag {
  std::string flag;
  std::string value;
};
tmem::Status check_file_agrees_with_flags(const tmem::SpecFile& file, const Args& args,
                                          std::string_view path,
                                          const std::optional<NameFlag>& name);
// --op auto / auto.ld / auto.st: the selection (tmem/select.h) behind spec_from_args, for
// --explain and check's --register-budget.
std::optional<tmem::Direction> auto_direction(std::string_view op);
tmem::Result<tmem::Selection> selection_from_args(const Args& args,
                                                  const tmem::SelectOptions& options = {});

// --cta-group 1|2 of ptx, compile and run: the harness kernels' TMEM lifecycle, one CTA or a CTA
// pair (tmem::CompileOptions::cta_group); 1 when absent, kUsage for any other value.
tmem::Result<int> cta_group_from_args(const Args& args);

// The cache options of every command that compiles (compile, run): --no-cache (no memory and no
// disk cache for this process) and --cache-dir DIR (the disk-cache root; turns caching on even
// under TMEMJIT_DISABLE_CACHE=1). Returns `options` with both added.
std::vector<OptionSpec> with_cache_options(std::vector<OptionSpec> options);
// Applies them to the process-wide cache (tools/cmd_cache.cc); kUsage when both are given or DIR
// is empty.
tmem::Status apply_cache_args(const Args& args);

int cmd_cache(const std::vector<std::string>& argv);
int cmd_warmup(const std::vector<std::string>& argv);
int cmd_ptx(const std::vector<std::string>& argv);
int cmd_compile(const std::vector<std::string>& argv);
int cmd_check(const std::vector<std::string>& argv);
int cmd_plan(const std::vector<std::string>& argv);
int cmd_describe(const std::vector<std::string>& argv);
int cmd_image(const std::vector<std::string>& argv);
int cmd_layout(const std::vector<std::string>& argv);
int cmd_draw(const std::vector<std::string>& argv);
int cmd_run(const std::vector<std::string>& argv);
int cmd_specialize(const std::vector<std::string>& argv);
// tmemjit warmup FILE.cu ...: specialize's options, building the generic tier into the cache; a
// policy other than generic, --no-cache, caching off or a kernel without a generic tier is kUsage.
int cmd_warmup_kernel(const std::vector<std::string>& argv);

}  // namespace tmemjit_cli
