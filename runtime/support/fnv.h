// FNV-1a over 64-bit words: the stable, platform-independent hash of descriptor value types.
#pragma once

#include <cstdint>

namespace tmem::detail {

// Feeds each word byte by byte (little-endian order), so hashes match across runs and platforms.
inline void fnv1a_mix(std::uint64_t& h, std::uint64_t word) noexcept {
  for (int i = 0; i < 8; ++i) {
    h ^= (word >> (8 * i)) & 0xff;
    h *= 0x100000001b3ull;
  }
}

}  // namespace tmem::detail
