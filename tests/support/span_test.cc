// tmem/span.h: what tmem::Span converts from and to, as the public API's std::span (issue 41,
// item 4: C++17-clean headers, one type under both standards).
#include "tmem/span.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace tmem {
namespace {

std::size_t count(Span<const std::int64_t> values) { return values.size(); }
std::int64_t sum(Span<const std::int64_t> values) {
  std::int64_t total = 0;
  for (std::int64_t value : values) total += value;
  return total;
}

struct Base {
  int a = 0;
};
struct Derived : Base {
  int b = 0;
};

TEST(Span, TakesWhatStdSpanTookAndABracedList) {
  std::vector<std::int64_t> vector = {1, 2, 3};
  const std::vector<std::int64_t>& read_only = vector;
  const std::array<std::int64_t, 2> array = {4, 5};
  std::int64_t c_array[4] = {1, 1, 1, 1};
  EXPECT_EQ(sum(vector), 6);
  EXPECT_EQ(sum(read_only), 6);
  EXPECT_EQ(sum(array), 9);
  EXPECT_EQ(sum(c_array), 4);
  EXPECT_EQ(sum({7, 8}), 15);
  EXPECT_EQ(sum({vector.data(), 2}), 3);
  EXPECT_EQ(count({}), 0u);
  EXPECT_EQ(sum(std::vector<std::int64_t>{9}), 9);  // a temporary lives through the call
  EXPECT_EQ(sum(std::span<const std::int64_t>(vector)), 6);
  EXPECT_EQ(sum(std::span<std::int64_t>(vector).first(1)), 1);
  const std::string text = "abc";
  EXPECT_EQ(Span<const char>(text).size(), 3u);
}

TEST(Span, RefusesWhatWouldBeWrong) {
  // Elements of another size (a derived class viewed as its base), dropping const, and a
  // temporary behind a Span that could write to it.
  static_assert(!std::is_convertible_v<std::vector<Derived>&, Span<const Base>>);
  static_assert(!std::is_convertible_v<Span<const int>, Span<int>>);
  static_assert(!std::is_convertible_v<const std::vector<int>&, Span<int>>);
  static_assert(!std::is_convertible_v<std::vector<int>&&, Span<int>>);
  static_assert(std::is_convertible_v<std::vector<int>&, Span<int>>);
  static_assert(std::is_convertible_v<Span<int>, Span<const int>>);
  // Passed in registers like std::span: a pointer and a count.
  static_assert(std::is_trivially_copyable_v<Span<int>>);
  static_assert(sizeof(Span<int>) == sizeof(std::span<int>));
}

TEST(Span, AccessesItsElements) {
  std::vector<int> vector = {3, 4, 5};
  Span<int> span = vector;
  EXPECT_FALSE(span.empty());
  EXPECT_EQ(span.front(), 3);
  EXPECT_EQ(span.back(), 5);
  span[1] = 40;
  EXPECT_EQ(vector[1], 40);
  EXPECT_EQ(span.data(), vector.data());
  EXPECT_EQ(span.end() - span.begin(), 3);
  EXPECT_TRUE(Span<const int>().empty());
}

TEST(Span, ConvertsToStdSpanAndIsABorrowedRangeUnderCxx20) {
  std::vector<int> vector = {1, 2, 3};
  const auto view = [&]() -> Span<const int> { return vector; };
  std::span<const int> copied = view();
  EXPECT_EQ(copied.data(), vector.data());
  EXPECT_EQ(copied.size(), 3u);
  Span<int> writable = vector;
  std::span<int> writable_copy = writable;
  EXPECT_EQ(writable_copy.size(), 3u);
  static_assert(std::ranges::contiguous_range<Span<int>>);
  static_assert(std::ranges::borrowed_range<Span<const int>>);
  static_assert(std::ranges::view<Span<const int>>);
  // An iterator into a temporary Span stays valid: the elements are the vector's.
  EXPECT_EQ(std::ranges::find(view(), 2), vector.data() + 1);
  EXPECT_TRUE(std::ranges::equal(view(), vector));
}

}  // namespace
}  // namespace tmem
