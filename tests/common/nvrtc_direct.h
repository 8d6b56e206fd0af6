// NVRTC called directly (no library code between the test and nvrtcCompileProgram but the loader),
// and the bytes of one function's machine code in a cubin: the fidelity tests' reference.
#pragma once

#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "common/elf.h"
#include "runtime/cuda/nvrtc.h"
#include "tmem/result.h"

namespace tmem::testing {

// The cubin NVRTC makes of `source` with exactly `options`, or its log as a kToolchain error.
inline Result<std::vector<char>> nvrtc_cubin(const std::string& source,
                                             const std::vector<std::string>& options) {
  auto api = nvrtc::api();
  if (!api.ok()) return std::move(api).error();
  const nvrtc::Api& nv = **api;
  nvrtcProgram program = nullptr;
  if (nv.create_program(&program, source.c_str(), "reference.cu", 0, nullptr, nullptr) !=
      NVRTC_SUCCESS)
    return Error(ErrorCode::kToolchain, "nvrtcCreateProgram failed");
  std::vector<const char*> argv;
  for (const std::string& option : options) argv.push_back(option.c_str());
  const nvrtcResult compiled =
      nv.compile_program(program, static_cast<int>(argv.size()), argv.data());
  std::vector<char> cubin;
  std::string log;
  size_t size = 0;
  if (nv.get_program_log_size(program, &size) == NVRTC_SUCCESS && size > 1) {
    log.resize(size);
    nv.get_program_log(program, log.data());
  }
  if (compiled == NVRTC_SUCCESS && nv.get_cubin_size(program, &size) == NVRTC_SUCCESS) {
    cubin.resize(size);
    nv.get_cubin(program, cubin.data());
  }
  nv.destroy_program(&program);
  if (cubin.empty()) return Error(ErrorCode::kToolchain, "NVRTC failed", log);
  return cubin;
}

// The bytes of section `.text.<function>`, empty when the cubin has none.
inline std::string text_bytes(std::span<const char> cubin, const std::string& function) {
  auto sections = elf::read_sections(cubin);
  if (!sections.ok()) return {};
  for (const elf::Section& section : *sections)
    if (section.name == ".text." + function && section.offset + section.size <= cubin.size())
      return std::string(cubin.data() + section.offset, section.size);
  return {};
}

}  // namespace tmem::testing
