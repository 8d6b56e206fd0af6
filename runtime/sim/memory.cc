// Simulated global and shared memory: bounds, alignment and write permission of every access.
#include "runtime/sim/memory.h"

namespace tmem::sim {
namespace {

constexpr std::uint64_t kFirstBuffer = 0x7f0000000000ull;  // a plausible device address
constexpr std::uint64_t kBufferSpacing = 1ull << 36;       // 64 GiB between buffers

std::string hex(std::uint64_t value) {
  static const char* digits = "0123456789abcdef";
  std::string text;
  do {
    text.insert(text.begin(), digits[value & 15]);
    value >>= 4;
  } while (value);
  return "0x" + text;
}

}  // namespace

std::uint64_t GlobalMemory::map_read_only(std::string name, std::span<const std::uint32_t> words) {
  const std::uint64_t base = kFirstBuffer + kBufferSpacing * buffers_.size();
  // The buffer is never written through this pointer: write() refuses read-only buffers.
  buffers_.push_back(
      {std::move(name), base, const_cast<std::uint32_t*>(words.data()), words.size(), false});
  return base;
}

std::uint64_t GlobalMemory::map(std::string name, std::span<std::uint32_t> words) {
  const std::uint64_t base = kFirstBuffer + kBufferSpacing * buffers_.size();
  buffers_.push_back({std::move(name), base, words.data(), words.size(), true});
  return base;
}

const GlobalMemory::Buffer* GlobalMemory::find(std::uint64_t address, int bytes,
                                               std::string& why) const {
  if (address % static_cast<std::uint64_t>(bytes) != 0) {
    why = "global address " + hex(address) + " is not aligned to the " + std::to_string(bytes) +
          "-byte access";
    return nullptr;
  }
  for (const Buffer& b : buffers_) {
    if (address < b.base || address >= b.base + kBufferSpacing) continue;
    const std::uint64_t offset = address - b.base;
    if (offset + static_cast<std::uint64_t>(bytes) > b.size * 4) {
      why = "global address " + hex(address) + " is byte " + std::to_string(offset) +
            " of buffer '" + b.name + "', which has " + std::to_string(b.size * 4) + " bytes";
      return nullptr;
    }
    return &b;
  }
  why = "global address " + hex(address) + " is in no buffer the kernel was given";
  return nullptr;
}

const std::uint32_t* GlobalMemory::read(std::uint64_t address, int bytes, std::string& why) const {
  const Buffer* b = find(address, bytes, why);
  return b ? b->words + (address - b->base) / 4 : nullptr;
}

std::uint32_t* GlobalMemory::write(std::uint64_t address, int bytes, std::string& why) {
  const Buffer* b = find(address, bytes, why);
  if (!b) return nullptr;
  if (!b->writable) {
    why = "global address " + hex(address) + " is in buffer '" + b->name +
          "', which the kernel may only read";
    return nullptr;
  }
  return b->words + (address - b->base) / 4;
}

std::uint32_t SharedMemory::add(int align, int count) {
  std::size_t bytes = words_.size() * 4;
  const auto a = static_cast<std::size_t>(align < 4 ? 4 : align);
  bytes = (bytes + a - 1) / a * a;
  words_.resize(bytes / 4 + static_cast<std::size_t>(count));
  return static_cast<std::uint32_t>(bytes);
}

SharedMemory::Word* SharedMemory::word(std::uint64_t address) {
  if (address % 4 != 0 || address / 4 >= words_.size()) return nullptr;
  return &words_[address / 4];
}

}  // namespace tmem::sim
