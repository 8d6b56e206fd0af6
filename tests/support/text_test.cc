// tmem/text.h: the JSON nesting bound, valid UTF-8 for reported text, short quotes of user text
// (issue 30, items 4, 9 and 12).
#include "tmem/text.h"

#include <gtest/gtest.h>

#include <string>

namespace tmem {
namespace {

std::string nested(int depth, char open = '[', char close = ']') {
  return std::string(static_cast<size_t>(depth), open) +
         std::string(static_cast<size_t>(depth), close);
}

TEST(JsonDepth, TheBoundIsAcceptedAndOneMoreLevelIsRefused) {
  EXPECT_TRUE(check_json_depth(nested(kMaxJsonDepth), "x").ok());
  EXPECT_TRUE(check_json_depth("{\"op\": \"a\", \"regs\": [[1, 2], {\"k\": []}]}", "x").ok());
  const Status deep = check_json_depth(nested(kMaxJsonDepth + 1), "spec file 'a.json'");
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.error().code(), ErrorCode::kParse);
  EXPECT_EQ(deep.error().message(),
            "spec file 'a.json' nests arrays and objects deeper than 64 levels (at byte 64)");
}

TEST(JsonDepth, TheIssuesFiftyEightThousandLevelsAreRefused) {
  const std::string text = "{\"op\": " + nested(58000) + "}";
  EXPECT_FALSE(check_json_depth(text, "x").ok());
  EXPECT_FALSE(check_json_depth(nested(58000, '{', '}'), "x").ok());
}

TEST(JsonDepth, BracketsInStringsDoNotCount) {
  const std::string text =
      "{\"op\": \"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\"}";
  EXPECT_TRUE(check_json_depth(text, "x").ok());
  // Unbalanced closers or malformed text are left to the parser.
  EXPECT_TRUE(check_json_depth("]]]]}}}", "x").ok());
}

TEST(ValidUtf8, ValidTextIsUnchanged) {
  for (const std::string text : {"", "plain", "ñame", "日本語", "emoji \xF0\x9F\x98\x80", "\t\n"})
    EXPECT_EQ(valid_utf8(text), text);
}

TEST(ValidUtf8, InvalidBytesAreEscaped) {
  EXPECT_EQ(valid_utf8("\xF1"
                       "ame"),
            "\\xF1ame");                                              // Latin-1 ñ
  EXPECT_EQ(valid_utf8("a\xFF"), "a\\xFF");                           // never valid
  EXPECT_EQ(valid_utf8("\xC0\xAF"), "\\xC0\\xAF");                    // overlong '/'
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), "\\xED\\xA0\\x80");           // a surrogate
  EXPECT_EQ(valid_utf8("\xF4\x90\x80\x80"), "\\xF4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(valid_utf8("\xE6\x97"), "\\xE6\\x97");                    // truncated sequence
  EXPECT_EQ(valid_utf8("\xC3\xB1\x80"), "\xC3\xB1\\x80");             // a stray continuation byte
}

TEST(ValidUtf8, EveryByteValueGivesValidText) {
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  const std::string out = valid_utf8(all);
  EXPECT_EQ(valid_utf8(out), out);  // a fixed point: the output is valid
}

TEST(QuoteExcerpt, LongTextIsCutWithItsLength) {
  EXPECT_EQ(quote_excerpt("short"), "short");
  const std::string path(5000, 'a');
  const std::string quoted = quote_excerpt(path);
  EXPECT_EQ(quoted, std::string(kMaxQuotedBytes, 'a') + "... (5000 bytes)");
  // A multi-byte character at the cut is not split.
  const std::string wide = std::string(199, 'a') + "ñ" + std::string(100, 'b');
  EXPECT_EQ(quote_excerpt(wide), std::string(199, 'a') + "... (301 bytes)");
  EXPECT_EQ(quote_excerpt("\xFF"), "\\xFF");
}

}  // namespace
}  // namespace tmem
