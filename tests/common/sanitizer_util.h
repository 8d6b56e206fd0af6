// Which sanitizer a test binary is built with (scripts/sanitize.sh), for the few tests that must
// adapt: TSan's runtime defines operator new itself, so a test cannot replace it to count
// allocations.
#pragma once

#if defined(TMEMJIT_ASAN)
// set by tests/CMakeLists.txt: the test's own code is not instrumented, the library is
#elif defined(__SANITIZE_ADDRESS__)
#define TMEMJIT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TMEMJIT_ASAN 1
#endif
#endif

#if defined(__SANITIZE_THREAD__)
#define TMEMJIT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TMEMJIT_TSAN 1
#endif
#endif
