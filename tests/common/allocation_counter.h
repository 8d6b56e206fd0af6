// Counts this thread's operator new calls, to pin "a hit does no allocation". Include it from
// exactly one source file of a test binary: it replaces the global operator new/delete there.
// GCC flags free() of operator new's memory wherever it inlines these; both sides are malloc/free.
// TSan's runtime owns operator new, so under TSan nothing is replaced and allocation tests skip.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>

#include "common/sanitizer_util.h"

namespace tmemjit_test {
inline thread_local std::size_t t_allocations = 0;
}  // namespace tmemjit_test

#ifndef TMEMJIT_TSAN
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t size) {
  ++tmemjit_test::t_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  ++tmemjit_test::t_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// The nothrow forms too (std::stable_sort's temporary buffer uses them): otherwise their memory
// comes from the runtime's operator new and goes back through the free() below.
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  ++tmemjit_test::t_allocations;
  return std::malloc(size == 0 ? 1 : size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  ++tmemjit_test::t_allocations;
  return std::malloc(size == 0 ? 1 : size);
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
#endif
