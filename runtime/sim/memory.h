// Global and shared memory of the CPU simulator: host buffers mapped at simulated addresses, and
// the CTA's shared memory with the barrier generation of each write (to catch unsynchronized
// reads of another warp's data, such as the address tcgen05.alloc writes).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tmem::sim {

// Host buffers of u32 words seen by the kernel as global memory. Each buffer sits at its own
// simulated address, far from the others, so an access that strays from one buffer never lands
// in another.
class GlobalMemory {
 public:
  // Maps a buffer the kernel may only read, or read and write; returns its address.
  std::uint64_t map_read_only(std::string name, std::span<const std::uint32_t> words);
  std::uint64_t map(std::string name, std::span<std::uint32_t> words);

  // The word at `address` for a `bytes`-wide access (4, 8 or 16, aligned to its width). On
  // failure returns null and says why (unmapped, out of bounds, misaligned, read-only).
  const std::uint32_t* read(std::uint64_t address, int bytes, std::string& why) const;
  std::uint32_t* write(std::uint64_t address, int bytes, std::string& why);

 private:
  struct Buffer {
    std::string name;
    std::uint64_t base = 0;
    std::uint32_t* words = nullptr;
    std::size_t size = 0;
    bool writable = false;
  };
  const Buffer* find(std::uint64_t address, int bytes, std::string& why) const;
  std::vector<Buffer> buffers_;
};

// The CTA's shared memory: the module's .shared variables laid out in declaration order.
class SharedMemory {
 public:
  // Reserves `count` words aligned to `align` bytes; returns the byte address.
  std::uint32_t add(int align, int count);

  struct Word {
    std::uint32_t value = 0;
    bool written = false;
    int writer_warp = -1;
    int generation = 0;  // barriers completed before the write
  };
  // The word at byte address `address`, or null (out of range or not 4-byte aligned).
  Word* word(std::uint64_t address);
  std::uint32_t bytes() const noexcept { return static_cast<std::uint32_t>(words_.size() * 4); }

 private:
  std::vector<Word> words_;
};

}  // namespace tmem::sim
