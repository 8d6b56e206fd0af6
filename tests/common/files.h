// Whole files as bytes, for tests that plant or inspect cache entries, bundles and sources.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace tmem::testing {

// Empty when the file cannot be read (tests assert on the content).
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Replaces the file's content with `bytes`.
inline void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace tmem::testing
