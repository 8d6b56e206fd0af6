// A whole file as bytes; empty when it cannot be read (tests assert on the content).
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace tmem::testing {

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace tmem::testing
