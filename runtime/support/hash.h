// Cache keys: 128-bit XXH3 digests built from tagged, length-prefixed fields (docs/design.md
// §Codegen).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tmem {

// A 128-bit key. Printed as 32 lower-case hex digits, high half first (XXH3's canonical order).
struct Key128 {
  uint64_t lo = 0;
  uint64_t hi = 0;

  friend bool operator==(const Key128&, const Key128&) = default;
  std::string hex() const;
  // The inverse of hex(): exactly 32 hex digits (either case), else nullopt.
  static std::optional<Key128> parse_hex(std::string_view text) noexcept;
  // The 16 bytes lo then hi, each little-endian: the form stored in disk-cache headers.
  void to_bytes(unsigned char out[16]) const noexcept;
  static Key128 from_bytes(const unsigned char in[16]) noexcept;
};

// For unordered containers: the key is already a uniform hash, so its low half is enough.
struct Key128Hash {
  size_t operator()(const Key128& key) const noexcept { return static_cast<size_t>(key.lo); }
};

// One-shot XXH3-128 of raw bytes, without KeyBuilder's field framing: for fixed-layout records
// whose every byte has one meaning (e.g. compile_transfer's key of digests,
// runtime/compile_transfer).
Key128 hash128(std::span<const std::byte> bytes) noexcept;

// Feeds fields into one streaming XXH3-128 state. Every field is written as
// (kind, tag length, tag, value length, value), so field boundaries are part of the hash:
// str("a", "ab").str("b", "c") differs from str("a", "a").str("b", "bc"), and a field's tag
// keeps equal values under different names apart.
class KeyBuilder {
 public:
  KeyBuilder() noexcept;
  KeyBuilder(const KeyBuilder&) noexcept;
  KeyBuilder& operator=(const KeyBuilder&) noexcept;

  KeyBuilder& str(std::string_view tag, std::string_view value) noexcept;
  KeyBuilder& integer(std::string_view tag, int64_t value) noexcept;
  KeyBuilder& bytes(std::string_view tag, std::span<const std::byte> value) noexcept;

  // The digest of every field fed so far; the builder stays usable (more fields may follow).
  Key128 finish() const noexcept;

 private:
  void field(unsigned char kind, std::string_view tag, const void* data, size_t size) noexcept;
  void raw(const void* data, size_t size) noexcept;

  // Storage for an XXH3_state_t (576 bytes, 64-byte aligned in xxHash 0.8); hash.cc checks the
  // size so the xxHash header stays out of this one.
  alignas(64) unsigned char state_[640];
};

// The stable 64-bit hash of a descriptor value type (Layout::hash, Tensor::hash, View::hash):
// XXH3-64 of a sequence of 64-bit words, each fed little-endian, so hashes match across runs and
// platforms.
class WordHasher {
 public:
  explicit WordHasher(uint64_t seed) noexcept;
  WordHasher(const WordHasher&) = delete;
  WordHasher& operator=(const WordHasher&) = delete;

  void add(uint64_t word) noexcept;
  uint64_t finish() const noexcept;

 private:
  alignas(64) unsigned char state_[640];  // an XXH3_state_t, as in KeyBuilder
};

}  // namespace tmem
