// Golden-file comparison for generated text: a difference fails; the files change only when
// TMEMJIT_UPDATE_GOLDENS=1 is set explicitly (the test then skips, saying what it rewrote).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace tmemjit_test {

// Compares `text` with tests/golden/NAME.
inline void expect_golden(const std::string& name, const std::string& text) {
  const std::string path = std::string(TMEMJIT_SOURCE_DIR) + "/tests/golden/" + name;
  const char* update = std::getenv("TMEMJIT_UPDATE_GOLDENS");
  if (update && std::string(update) == "1") {
    std::ofstream(path) << text;
    GTEST_SKIP() << "golden " << path << " rewritten (TMEMJIT_UPDATE_GOLDENS=1)";
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing golden " << path << "; generate it with TMEMJIT_UPDATE_GOLDENS=1";
  std::stringstream golden;
  golden << in.rdbuf();
  EXPECT_EQ(text, golden.str()) << "the PTX for " << name
                                << " changed; if intended, rerun with TMEMJIT_UPDATE_GOLDENS=1";
}

}  // namespace tmemjit_test
