// A tiny ELF64 reader for cubins: section names and sizes, code size, and the per-function local
// frame size that ptxas records in .nv.info (EIATTR_FRAME_SIZE), for tests and benchmarks.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tmem/result.h"

namespace tmem::elf {

struct Section {
  std::string name;
  std::uint32_t type = 0;
  std::uint64_t flags = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

// Every section header of a little-endian ELF64 image, in file order. A truncated or non-ELF64
// image is a kParse error.
Result<std::vector<Section>> read_sections(std::span<const char> image);

// Bytes of machine code: the sum of the sizes of all .text.* sections (kernels and the device
// functions they call).
std::uint64_t code_bytes(const std::vector<Section>& sections);
// Size of the named section, 0 when absent.
std::uint64_t section_size(const std::vector<Section>& sections, const std::string& name);

// Largest per-thread local frame (bytes) over all functions, from the EIATTR_FRAME_SIZE records of
// the .nv.info sections. Non-zero means the code uses local memory (a stack or register spills).
Result<std::uint32_t> max_frame_size(std::span<const char> image);

}  // namespace tmem::elf
