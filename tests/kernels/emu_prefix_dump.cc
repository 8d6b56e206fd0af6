// Writes the text the emulation library is compiled after (kernels::cuda_lifecycle for sm_90:
// tmemjit::emu_state, emu::resolve, ...) to the file named by argv[1], for the device harness
// tests/kernels/emu_mma_device_test.cu, which nvcc compiles against it.
#include <cstdio>
#include <fstream>

#include "kernels/device_function.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: emu_prefix_dump OUT.cuh\n");
    return 2;
  }
  std::ofstream out(argv[1], std::ios::binary | std::ios::trunc);
  out << tmem::kernels::cuda_lifecycle(tmem::Target::kSm90, /*extern_state=*/false, 2);
  return out ? 0 : 1;
}
