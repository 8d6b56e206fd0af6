// tmemjit: the command-line face of libtmemjit (docs/design.md §CLI).
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "tmem/result.h"
#include "tmem/specialize.h"
#include "tools/cli.h"

namespace tmemjit_cli {
int cmd_coords(const std::vector<std::string>& argv);   // tools/cmd_coords.cc
int cmd_twin(const std::vector<std::string>& argv);     // tools/cmd_twin.cc
int cmd_emulate(const std::vector<std::string>& argv);  // tools/cmd_emulate.cc
}  // namespace tmemjit_cli

namespace {

struct CommandEntry {
  std::string_view name;
  tmemjit_cli::CommandFn run;
  std::string_view synopsis;
};

constexpr CommandEntry kCommands[] = {
    {"describe", tmemjit_cli::cmd_describe, "describe OPCODE [--json]"},
    {"image", tmemjit_cli::cmd_image, "image OPCODE [--json]"},
    {"check", tmemjit_cli::cmd_check, "check SPEC [--json]"},
    {"plan", tmemjit_cli::cmd_plan, "plan SPEC [--json]"},
    {"ptx", tmemjit_cli::cmd_ptx,
     "ptx SPEC [--kernel roundtrip|store|load|fill|dump|func|cuda] [--target T] [--cta-group 1|2]\n"
     "                 [--name N] [--no-wait] [--warp-arg] [--column-arg]   (func, cuda)"},
    {"compile", tmemjit_cli::cmd_compile,
     "compile SPEC [--kernel K] [--backend auto|nvptxcompiler|nvjitlink|ptxas|nvrtc|driver]\n"
     "                 [--target T] [-o FILE] [--keep DIR] [--cta-group 1|2]\n"
     "                 [-Xptxas OPT]... [-Xnvrtc OPT]... [--no-cache | --cache-dir DIR]"},
    {"draw", tmemjit_cli::cmd_draw, "draw SPEC [-o FILE.svg] [--ascii] [--columns N]"},
    {"layout", tmemjit_cli::cmd_layout, "layout VIEW [--at i,j,...] [--json]"},
    {"coords", tmemjit_cli::cmd_coords, "coords SPEC [--json]"},
    {"twin", tmemjit_cli::cmd_twin, "twin SPEC --dtype bf16|f16"},
    {"cache", tmemjit_cli::cmd_cache,
     "cache stats|clear|export BUNDLE|import BUNDLE [--cache-dir DIR] [--json]"},
    {"warmup", tmemjit_cli::cmd_warmup,
     "warmup --specs FILE.jsonl [--kernel K] [--target T] [--backend B] [--jobs N]\n"
     "                 [--no-cache | --cache-dir DIR] [--json]\n"
     "       warmup FILE.cu --transfer N=SPEC.json [...]: the kernel's generic tier, as\n"
     "                 specialize --specialization generic (the options of specialize)"},
    {"specialize", tmemjit_cli::cmd_specialize,
     "specialize FILE.cu|FILE.ptx --transfer N=SPEC.json [--transfer ...] [--entry E]\n"
     "                 [--target T|sm_90] [--backend B] [-o OUT.cubin] [--json]\n"
     "                 [--no-wait] [--warp-arg] [--column-arg] [--cta-group 1|2]\n"
     "                 [-I DIR] [-D NAME[=V]] [-std=c++NN] [-default-device]\n"
     "                 [-Xnvrtc OPT]... [-Xptxas OPT]... [--precompile HEADER]... [--keep DIR]\n"
     "                 [--specialization eager|lazy|generic] [--front-end nvrtc|nvcc]\n"
     "                 [--no-cache | --cache-dir DIR]"},
    {"emulate", tmemjit_cli::cmd_emulate,
     "emulate FILE.ptx|FILE.cu [--entry E] [-o OUT.cubin|OUT.ptx] [--json]\n"
     "                 [--target T] [--backend B] [-I DIR] [-D NAME[=V]] [-Xnvrtc OPT]...\n"
     "                 [-Xptxas OPT]... [--keep DIR] [--standalone-ctas N]\n"
     "                 (a tcgen05 module lowered for Hopper)"},
    {"run", tmemjit_cli::cmd_run,
     "run SPEC [--device auto|gpu|emu|sim] [--seed N] [--cta-group 1|2] [--json]\n"
     "                 [--no-cache | --cache-dir DIR]"},
};

void print_footer(std::ostream& os, bool with_spec) {
  if (with_spec)
    os << "\nSPEC := --op OPCODE --scope warp:W|warpgroup|cta:NW --tmem VIEW --regs VIEW\n"
          "        [--tmem2 VIEW --imm N] | --spec FILE.json\n";
  os << "\nexit codes: 0 ok, 1 invalid input, 2 usage, 3 toolchain or driver failure, 4 wrong "
        "data,\n130 interrupted (SIGINT), 143 terminated (SIGTERM)\n";
}

int usage(std::ostream& os, int code) {
  os << "usage: tmemjit COMMAND [ARGS]\n\ncommands:\n";
  for (const auto& command : kCommands) os << "  tmemjit " << command.synopsis << "\n";
  print_footer(os, true);
  return code;
}

// `tmemjit COMMAND --help`: that command's synopsis, as git and nvcc answer it, rather than an
// "unknown option" error listing the options without their values.
int command_usage(const CommandEntry& command) {
  std::cout << "usage: tmemjit " << command.synopsis << "\n";
  print_footer(std::cout, command.synopsis.find("SPEC") != std::string_view::npos);
  return 0;
}

// What a command started in the background (a lazy call's specialized kernel, the generic tier it
// promised for the next layout) lands in the cache before the process ends: a command line has no
// later to finish it in (docs/specialization.md §Tiers). The output is flushed first, so a signal
// during the wait loses none of it.
int finish(int code) {
  std::cout.flush();
  std::fflush(stdout);
  const tmem::BackgroundCompiles pending = tmem::background_compiles();
  if (pending.queued + pending.running > 0) {
    if (::isatty(STDERR_FILENO))
      std::cerr << "tmemjit: finishing " << pending.queued + pending.running
                << " background compile(s) into the cache (Ctrl-C drops them)\n";
    tmem::wait_background_compiles();
  }
  return code;
}

bool asks_for_help(const std::vector<std::string>& words) {
  for (const auto& word : words)
    if (word == "--help" || word == "-h") return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  tmemjit_cli::exit_on_stop_signals();
  if (argc < 2) return usage(std::cerr, tmemjit_cli::kExitUsage);
  std::string_view name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") return usage(std::cout, 0);
  std::vector<std::string> rest(argv + 2, argv + argc);
  for (const auto& command : kCommands) {
    if (command.name != name) continue;
    if (asks_for_help(rest)) return command_usage(command);
    try {
      return finish(command.run(rest));
    } catch (const tmem::Error& error) {
      return finish(tmemjit_cli::report(error, false));
    } catch (const std::exception& error) {
      std::cerr << "error: internal: " << error.what() << "\n";
      return tmemjit_cli::kExitToolchain;
    }
  }
  std::cerr << "error: unknown command '" << name << "'\n";
  return usage(std::cerr, tmemjit_cli::kExitUsage);
}
