// tmem::Span: a view of contiguous elements (a pointer and a count), the public API's std::span.
//
// The public headers compile as C++17 as well as C++20 (hosts such as PyTorch extensions build
// with -std=c++17), while the library itself is C++20. A function taking std::span under C++20 and
// something else under C++17 would mangle differently in the two (an ODR violation and a link
// error), so the API takes this one type under every standard. It converts from what std::span
// did: a pointer and a count, a C array, any contiguous container with data() and size()
// (std::vector, std::array, std::string, and std::span under C++20), and, for read-only
// elements, a braced list. Under C++20 it is a contiguous, borrowed range, so std::span (and
// std::ranges algorithms) take it as they take std::span.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <type_traits>
#include <utility>

#if __cplusplus >= 202002L
#include <version>
#if defined(__cpp_lib_ranges)
#include <ranges>
#endif
#endif

namespace tmem {

template <class T>
class Span;

namespace detail {

template <class T>
struct IsSpan : std::false_type {};
template <class T>
struct IsSpan<Span<T>> : std::true_type {};

// Whether `Container` holds contiguous elements a Span<T> may view: it has data() and size(), and
// a pointer to its elements converts to T* as an array would (const added, never a derived class
// to its base, whose elements have another size).
template <class Container, class T, class = void>
struct ViewsAs : std::false_type {};
template <class Container, class T>
struct ViewsAs<Container, T,
               std::void_t<decltype(std::declval<Container&>().data()),
                           decltype(std::declval<Container&>().size())>>
    : std::is_convertible<std::remove_pointer_t<decltype(std::declval<Container&>().data())> (*)[],
                          T (*)[]> {};

}  // namespace detail

template <class T>
class Span {
 public:
  using element_type = T;
  using value_type = std::remove_cv_t<T>;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using pointer = T*;
  using reference = T&;
  using iterator = T*;

  constexpr Span() noexcept = default;
  constexpr Span(T* data, size_type size) noexcept : data_(data), size_(size) {}
  template <std::size_t N>
  constexpr Span(T (&array)[N]) noexcept : data_(array), size_(N) {}
  // A contiguous container. A temporary is allowed for read-only elements (it lives until the end
  // of the call that takes the Span), as std::span allows it.
  template <class Container,
            class = std::enable_if_t<
                !detail::IsSpan<std::remove_cv_t<std::remove_reference_t<Container>>>::value &&
                detail::ViewsAs<std::remove_reference_t<Container>, T>::value &&
                (std::is_const_v<T> || std::is_lvalue_reference_v<Container>)>>
  constexpr Span(Container&& container) noexcept
      : data_(container.data()), size_(static_cast<size_type>(container.size())) {}
  // Span<const T> from Span<T>.
  template <class U, class = std::enable_if_t<!std::is_same_v<U, T> &&
                                              std::is_convertible_v<U (*)[], T (*)[]>>>
  constexpr Span(Span<U> other) noexcept : data_(other.data()), size_(other.size()) {}
  // A braced list for read-only elements, e.g. Layout::row_major({8, 4}): the list lives until the
  // end of the call that takes the Span, so a Span made from one must not be kept.
  // GCC warns that the Span does not extend the list's lifetime, which is the point.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  template <class U = T, class = std::enable_if_t<std::is_const_v<U>>>
  constexpr Span(std::initializer_list<value_type> list) noexcept
      : data_(list.begin()), size_(list.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

  constexpr T* data() const noexcept { return data_; }
  constexpr size_type size() const noexcept { return size_; }
  constexpr bool empty() const noexcept { return size_ == 0; }
  constexpr T* begin() const noexcept { return data_; }
  constexpr T* end() const noexcept { return data_ + size_; }
  // Requires: index < size(); front() and back(): !empty().
  constexpr T& operator[](size_type index) const noexcept { return data_[index]; }
  constexpr T& front() const noexcept { return data_[0]; }
  constexpr T& back() const noexcept { return data_[size_ - 1]; }

 private:
  T* data_ = nullptr;
  size_type size_ = 0;
};

}  // namespace tmem

#if defined(__cpp_lib_ranges)
// A Span views memory it does not own, as std::span does: iterators from a temporary Span stay
// valid, and views (std::views::transform, ...) take it by value.
namespace std::ranges {
template <class T>
inline constexpr bool enable_borrowed_range<tmem::Span<T>> = true;
template <class T>
inline constexpr bool enable_view<tmem::Span<T>> = true;
}  // namespace std::ranges
#endif
