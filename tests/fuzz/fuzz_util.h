// Shared by the libFuzzer targets: property checks that abort with a message, so libFuzzer keeps
// the input as a crash artifact, and the error codes each public entry point may return.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>

#include "runtime/support/hash.h"
#include "tmem/result.h"

namespace tmemjit_fuzz {

// The key fuzz_disk_entry reads entries under (seed_corpus.cc writes its seeds with it).
inline constexpr tmem::Key128 kDiskKey{0x0123456789abcdefULL, 0xfedcba9876543210ULL};

[[noreturn]] inline void property_failed(const char* condition, const char* file, int line,
                                         const std::string& details) {
  std::fprintf(stderr, "%s:%d: fuzz property failed: %s\n%s\n", file, line, condition,
               details.c_str());
  std::abort();
}

// An Error from user input: one of `allowed`, never kInternal, with a non-empty message.
inline bool is_user_error(const tmem::Error& error,
                          std::initializer_list<tmem::ErrorCode> allowed) {
  if (error.message().empty()) return false;
  for (tmem::ErrorCode code : allowed)
    if (error.code() == code) return true;
  return false;
}

inline std::string describe(const tmem::Error& error) {
  return std::string(tmem::to_string(error.code())) + ": " + error.message();
}

}  // namespace tmemjit_fuzz

#define FUZZ_CHECK(condition, details)                                                            \
  do {                                                                                            \
    if (!(condition)) ::tmemjit_fuzz::property_failed(#condition, __FILE__, __LINE__, (details)); \
  } while (0)
