// Tests of the XXH3-128 cache keys: field boundaries, tags, kinds, hex round trips.
#include "runtime/support/hash.h"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <initializer_list>
#include <set>
#include <string>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace tmem {
namespace {

TEST(KeyBuilder, EqualFieldsGiveEqualKeys) {
  const Key128 a = KeyBuilder().str("spec", "x").integer("format", 1).finish();
  const Key128 b = KeyBuilder().str("spec", "x").integer("format", 1).finish();
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.hex(), b.hex());
}

TEST(KeyBuilder, FieldBoundariesAreHashed) {
  // "ab" + "c" must differ from "a" + "bc": each field is length-prefixed.
  const Key128 a = KeyBuilder().str("f", "ab").str("f", "c").finish();
  const Key128 b = KeyBuilder().str("f", "a").str("f", "bc").finish();
  EXPECT_NE(a, b);
  // The same bytes as one field differ from two fields.
  EXPECT_NE(KeyBuilder().str("f", "abc").finish(), a);
}

TEST(KeyBuilder, TagsAndKindsAreHashed) {
  EXPECT_NE(KeyBuilder().str("spec", "x").finish(), KeyBuilder().str("target", "x").finish());
  EXPECT_NE(KeyBuilder().str("n", "5").finish(), KeyBuilder().integer("n", 5).finish());
  const std::array<std::byte, 1> five = {std::byte{'5'}};
  EXPECT_NE(KeyBuilder().str("n", "5").finish(), KeyBuilder().bytes("n", five).finish());
  // Tag/value boundary: ("ab", "c") differs from ("a", "bc").
  EXPECT_NE(KeyBuilder().str("ab", "c").finish(), KeyBuilder().str("a", "bc").finish());
}

TEST(KeyBuilder, EveryFieldChangesTheKey) {
  std::set<std::string> seen;
  for (int64_t value : std::initializer_list<int64_t>{0, 1, -1, 2, 1000, INT64_MIN, INT64_MAX})
    EXPECT_TRUE(seen.insert(KeyBuilder().integer("v", value).finish().hex()).second) << value;
  EXPECT_TRUE(seen.insert(KeyBuilder().finish().hex()).second);
  EXPECT_TRUE(seen.insert(KeyBuilder().str("v", "").finish().hex()).second);
}

TEST(KeyBuilder, FinishKeepsTheBuilderUsableAndCopiesAreIndependent) {
  KeyBuilder builder;
  builder.str("a", "1");
  KeyBuilder copy = builder;
  const Key128 first = builder.finish();
  EXPECT_EQ(builder.finish(), first);
  builder.str("b", "2");
  EXPECT_NE(builder.finish(), first);
  EXPECT_EQ(copy.finish(), first);
  copy = builder;
  EXPECT_EQ(copy.finish(), builder.finish());
}

TEST(KeyBuilder, MatchesOneShotXxh3OverTheFieldEncoding) {
  // The documented encoding: kind, tag length (u64 LE), tag, value length (u64 LE), value.
  std::string encoded;
  auto le64 = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) encoded.push_back(static_cast<char>(v >> (8 * i)));
  };
  encoded.push_back('s');
  le64(4);
  encoded += "spec";
  le64(3);
  encoded += "abc";
  const XXH128_hash_t expected = XXH3_128bits(encoded.data(), encoded.size());
  const Key128 key = KeyBuilder().str("spec", "abc").finish();
  EXPECT_EQ(key.lo, expected.low64);
  EXPECT_EQ(key.hi, expected.high64);
}

TEST(Key128, HexIsHighHalfFirstAndRoundTrips) {
  const Key128 key{0x0123456789abcdefULL, 0xfedcba9876543210ULL};
  EXPECT_EQ(key.hex(), "fedcba98765432100123456789abcdef");
  EXPECT_EQ(Key128::parse_hex(key.hex()), key);
  EXPECT_EQ(Key128::parse_hex("FEDCBA98765432100123456789ABCDEF"), key);
  EXPECT_FALSE(Key128::parse_hex("fedcba98765432100123456789abcde").has_value());
  EXPECT_FALSE(Key128::parse_hex("fedcba98765432100123456789abcdeg").has_value());
  EXPECT_EQ(Key128{}.hex(), std::string(32, '0'));
}

TEST(Key128, BytesRoundTrip) {
  const Key128 key = KeyBuilder().str("x", "y").finish();
  unsigned char bytes[16];
  key.to_bytes(bytes);
  EXPECT_EQ(Key128::from_bytes(bytes), key);
  EXPECT_EQ(bytes[0], static_cast<unsigned char>(key.lo & 0xff));
  EXPECT_EQ(bytes[15], static_cast<unsigned char>(key.hi >> 56));
}

}  // namespace
}  // namespace tmem

namespace tmem {
namespace {

uint64_t hash_words(uint64_t seed, std::initializer_list<uint64_t> words) {
  WordHasher hasher(seed);
  for (uint64_t word : words) hasher.add(word);
  return hasher.finish();
}

TEST(WordHasher, EqualWordsGiveEqualHashes) {
  EXPECT_EQ(hash_words(1, {1, 2, 3}), hash_words(1, {1, 2, 3}));
}

TEST(WordHasher, OrderSeedAndEveryBitCount) {
  const uint64_t base = hash_words(1, {1, 2, 3});
  EXPECT_NE(base, hash_words(1, {3, 2, 1}));
  EXPECT_NE(base, hash_words(2, {1, 2, 3}));
  EXPECT_NE(base, hash_words(1, {1, 2, 3 | (uint64_t{1} << 63)}));
  EXPECT_NE(base, hash_words(1, {1, 2}));
}

}  // namespace
}  // namespace tmem
