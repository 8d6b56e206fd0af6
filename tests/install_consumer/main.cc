// A user program built against the installed package: find_package(tmemjit) + tmem::tmemjit.
#include <tmem/check.h>

#include <iostream>
int main() {
  auto op = tmem::Opcode::parse("tcgen05.ld.sync.aligned.32x32b.x64.b32");
  std::cout << op->regs_per_thread() << "\n";
  return op->regs_per_thread() == 64 ? 0 : 1;
}
