// XXH3-128 cache keys built from tagged, length-prefixed fields.
#include "runtime/support/hash.h"

#include <cstring>
#include <new>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace tmem {
namespace {

static_assert(sizeof(XXH3_state_t) <= 640, "KeyBuilder::state_ is too small for XXH3_state_t");
static_assert(alignof(XXH3_state_t) <= 64, "KeyBuilder::state_ is under-aligned for XXH3_state_t");

// Field kinds, part of the hash so a string "5" and an integer 5 differ.
constexpr unsigned char kString = 's';
constexpr unsigned char kInteger = 'i';
constexpr unsigned char kBytes = 'b';

void store_le64(unsigned char* out, uint64_t value) noexcept {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<unsigned char>(value >> (8 * i));
}

uint64_t load_le64(const unsigned char* in) noexcept {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= static_cast<uint64_t>(in[i]) << (8 * i);
  return value;
}

XXH3_state_t* state(unsigned char* storage) noexcept {
  return std::launder(reinterpret_cast<XXH3_state_t*>(storage));
}
const XXH3_state_t* state(const unsigned char* storage) noexcept {
  return std::launder(reinterpret_cast<const XXH3_state_t*>(storage));
}

}  // namespace

std::string Key128::hex() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text(32, '0');
  for (int i = 0; i < 16; ++i) {
    text[static_cast<size_t>(15 - i)] = kDigits[(hi >> (4 * i)) & 0xf];
    text[static_cast<size_t>(31 - i)] = kDigits[(lo >> (4 * i)) & 0xf];
  }
  return text;
}

std::optional<Key128> Key128::parse_hex(std::string_view text) noexcept {
  if (text.size() != 32) return std::nullopt;
  uint64_t halves[2] = {0, 0};
  for (size_t i = 0; i < 32; ++i) {
    const char c = text[i];
    uint64_t digit = 0;
    if (c >= '0' && c <= '9')
      digit = static_cast<uint64_t>(c - '0');
    else if (c >= 'a' && c <= 'f')
      digit = static_cast<uint64_t>(c - 'a') + 10;
    else if (c >= 'A' && c <= 'F')
      digit = static_cast<uint64_t>(c - 'A') + 10;
    else
      return std::nullopt;
    uint64_t& half = halves[i / 16];
    half = (half << 4) | digit;
  }
  return Key128{halves[1], halves[0]};
}

void Key128::to_bytes(unsigned char out[16]) const noexcept {
  store_le64(out, lo);
  store_le64(out + 8, hi);
}

Key128 Key128::from_bytes(const unsigned char in[16]) noexcept {
  return Key128{load_le64(in), load_le64(in + 8)};
}

Key128 hash128(std::span<const std::byte> bytes) noexcept {
  const XXH128_hash_t digest = XXH3_128bits(bytes.data(), bytes.size());
  return Key128{digest.low64, digest.high64};
}

KeyBuilder::KeyBuilder() noexcept {
  new (state_) XXH3_state_t;
  XXH3_INITSTATE(state(state_));
  XXH3_128bits_reset(state(state_));
}

KeyBuilder::KeyBuilder(const KeyBuilder& other) noexcept {
  new (state_) XXH3_state_t;
  XXH3_copyState(state(state_), state(other.state_));
}

KeyBuilder& KeyBuilder::operator=(const KeyBuilder& other) noexcept {
  if (this != &other) XXH3_copyState(state(state_), state(other.state_));
  return *this;
}

void KeyBuilder::raw(const void* data, size_t size) noexcept {
  if (size != 0) XXH3_128bits_update(state(state_), data, size);
}

void KeyBuilder::field(unsigned char kind, std::string_view tag, const void* data,
                       size_t size) noexcept {
  unsigned char prefix[9];
  prefix[0] = kind;
  store_le64(prefix + 1, tag.size());
  raw(prefix, sizeof prefix);
  raw(tag.data(), tag.size());
  unsigned char length[8];
  store_le64(length, size);
  raw(length, sizeof length);
  raw(data, size);
}

KeyBuilder& KeyBuilder::str(std::string_view tag, std::string_view value) noexcept {
  field(kString, tag, value.data(), value.size());
  return *this;
}

KeyBuilder& KeyBuilder::integer(std::string_view tag, int64_t value) noexcept {
  unsigned char bytes_le[8];
  store_le64(bytes_le, static_cast<uint64_t>(value));
  field(kInteger, tag, bytes_le, sizeof bytes_le);
  return *this;
}

KeyBuilder& KeyBuilder::bytes(std::string_view tag, std::span<const std::byte> value) noexcept {
  field(kBytes, tag, value.data(), value.size());
  return *this;
}

Key128 KeyBuilder::finish() const noexcept {
  const XXH128_hash_t digest = XXH3_128bits_digest(state(state_));
  return Key128{digest.low64, digest.high64};
}

WordHasher::WordHasher(uint64_t seed) noexcept {
  new (state_) XXH3_state_t;
  XXH3_INITSTATE(state(state_));
  XXH3_64bits_reset_withSeed(state(state_), seed);
}

void WordHasher::add(uint64_t word) noexcept {
  unsigned char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(word >> (8 * i));
  XXH3_64bits_update(state(state_), bytes, sizeof bytes);
}

uint64_t WordHasher::finish() const noexcept { return XXH3_64bits_digest(state(state_)); }

}  // namespace tmem
