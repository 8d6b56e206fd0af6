// What one module-cache entry holds: the compiled image, the PTX it came from and metadata.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tmem {

// Stored whole in memory and, byte for byte, in one disk-cache file (runtime/cache/disk.h).
struct Payload {
  std::vector<char> blob;  // the cubin (or whatever image the backend produced)
  std::string text;        // the PTX the image was compiled from
  std::string meta;        // free-form metadata, e.g. the entry name and the compile log

  size_t size_bytes() const noexcept { return blob.size() + text.size() + meta.size(); }
  friend bool operator==(const Payload&, const Payload&) = default;
};

}  // namespace tmem
