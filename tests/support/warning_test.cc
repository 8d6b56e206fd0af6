// tmem/warning.h: the library's warnings reach the handler a host program sets, and stderr with
// the "tmemjit: warning: " prefix by default (issue 31, item 5).
#include "tmem/warning.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "runtime/support/warning.h"
#include "tmem/cache.h"

namespace tmem {
namespace {

TEST(Warning, TheDefaultWritesThePrefixedLineToStderr) {
  testing::internal::CaptureStderr();
  warn("something fell back");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "tmemjit: warning: something fell back\n");
}

TEST(Warning, AHandlerReceivesTheLibrarysWarningsAndGivesThemBack) {
  std::vector<std::string> seen;
  const WarningHandler previous =
      set_warning_handler([&seen](std::string_view message) { seen.emplace_back(message); });
  EXPECT_FALSE(previous);  // the default is no handler
  ::setenv("TMEMJIT_CACHE_MAX_BYTES", "lots", 1);
  testing::internal::CaptureStderr();
  (void)cache_options_from_env();
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  ::unsetenv("TMEMJIT_CACHE_MAX_BYTES");
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].rfind("TMEMJIT_CACHE_MAX_BYTES='lots' is not a byte count", 0), 0u) << seen[0];
  EXPECT_TRUE(set_warning_handler({}));  // the one set above comes back; the default returns
  testing::internal::CaptureStderr();
  warn("back to stderr");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "tmemjit: warning: back to stderr\n");
}

}  // namespace
}  // namespace tmem
