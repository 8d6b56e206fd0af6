// A user program built against the installed package: find_package(tmemjit) + tmem::tmemjit.
#include <tmem/check.h>
#include <tmem/specialize.h>

#include <iostream>
int main() {
  auto op = tmem::Opcode::parse("tcgen05.ld.sync.aligned.32x32b.x64.b32");
  std::cout << op->regs_per_thread() << "\n";
  // Kernel specialization is exported too: the device function of a warpgroup identity load.
  auto spec = tmem::TransferSpec::from_fields(
      "tcgen05.ld.sync.aligned.32x32b.x64.b32", "warpgroup",
      "tensor((4,32,64), S[(4,32,64):(32@TLane,1@TLane,1@TCol)], b32)",
      "tensor((4,32,64), S[(4,32,64):(32@tid_in_wg,1@tid_in_wg,1)], b32)");
  auto function = tmem::device_function(spec.value());
  if (!function || function->regs_per_thread != 64 ||
      function->source.find("void tmem_transfer(") == std::string::npos)
    return 1;
  return op->regs_per_thread() == 64 ? 0 : 1;
}
