// jit_transfer: JIT-compiles the TMEM <-> register transfer between two tiles given on the command
// line and runs it on the best device available. What an application does with libtmemjit:
//   1. describe both operands as views (the descriptor language of docs/descriptor-language.md);
//   2. let tmem::select pick the tcgen05 form (or build a TransferSpec with a named opcode);
//   3. tmem::compile_transfer: checked, synthesized, compiled and cached by layout;
//   4. launch the Kernel yourself, or tmem::run_transfer to move random data and verify it.
#include <cstdio>
#include <cstring>
#include <string>

#include "tmem/jit.h"
#include "tmem/run.h"
#include "tmem/select.h"

namespace {

int usage(const char* program) {
  std::fprintf(stderr,
               "usage: %s TMEM_TILE REGISTER_TILE [--scope S] [--device auto|gpu|emu|sim]\n"
               "example:\n  %s 'tmem_datapath_layout(\"B\",64,128)' \\\n"
               "     'tensor((64,128), S[(64,2,64):(1@tid_in_wg,64@tid_in_wg,1)], f32)'\n",
               program, program);
  return 2;
}

int fail(const tmem::Error& error) {
  std::fprintf(stderr, "error: %s\n%s\n", error.message().c_str(), error.details().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || std::strcmp(argv[1], "--help") == 0) return usage(argv[0]);
  std::string scope_text = "warpgroup", device_text = "auto";
  for (int i = 3; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--scope") == 0)
      scope_text = argv[i + 1];
    else if (std::strcmp(argv[i], "--device") == 0)
      device_text = argv[i + 1];
    else
      return usage(argv[0]);
  }
  auto tmem_tile = tmem::View::parse(argv[1]);
  if (!tmem_tile) return fail(tmem_tile.error());
  auto regs_tile = tmem::View::parse(argv[2]);
  if (!regs_tile) return fail(regs_tile.error());
  auto scope = tmem::Scope::parse(scope_text);
  if (!scope) return fail(scope.error());
  auto device = tmem::parse_device(device_text);
  if (!device) return fail(device.error());

  // The store direction: registers -> TMEM; run_transfer also reads it back with the matching ld.
  auto selection = tmem::select(tmem::Direction::kStore, *scope, *tmem_tile, *regs_tile);
  if (!selection) return fail(selection.error());
  std::printf("selected %s: %d instruction(s) per warp, %d registers per thread\n",
              selection->spec.op().to_string().c_str(), selection->plan.instructions_per_warp(),
              selection->plan.regs_per_thread);

  auto kernel = tmem::compile_transfer(selection->spec);  // cached in memory and on disk
  if (!kernel) return fail(kernel.error());
  std::printf("compiled %s for %s: %zu bytes of cubin\n", kernel->name().c_str(),
              std::string(tmem::to_string(kernel->target())).c_str(), kernel->cubin().size());

  auto report = tmem::run_transfer(selection->spec, tmem::RunOptions{.device = *device});
  if (!report) return fail(report.error());
  std::printf("%s", report->to_string().c_str());
  return report->passed() ? 0 : 4;
}
