// tmem::Device: where a transfer's harness kernels run (docs/design.md §Pipeline: real tcgen05 on a
// Blackwell GPU, emulation on another GPU, or the CPU simulator).
#pragma once

#include <string_view>

#include "tmem/export.h"
#include "tmem/result.h"

TMEMJIT_API_BEGIN
namespace tmem {

enum class Device {
  kAuto,  // a Blackwell GPU, else emulation on another GPU, else the simulator
  kGpu,   // the real tcgen05 kernel on a GPU of compute capability 10.x/11.x
  kEmu,   // the kernel lowered to sm_90 PTX, TMEM emulated in global memory, on any GPU >= 9.0
  kSim,   // the CPU simulator (tmem::sim): no GPU needed
};
std::string_view to_string(Device device) noexcept;  // "auto", "gpu", "emu", "sim"
Result<Device> parse_device(std::string_view text);  // names the allowed set on failure

}  // namespace tmem
TMEMJIT_API_END
