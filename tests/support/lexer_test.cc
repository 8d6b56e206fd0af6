// The one lexer of C++ and PTX text (runtime/support/lexer.h; issue 42 item 7): each construct,
// and each edge where the scanners it replaced disagreed (unterminated comments and literals,
// splices inside // comments, raw strings holding */ and ").
#include "runtime/support/lexer.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace tmem {
namespace {

// Each token as "KIND:TEXT" ("KIND?:TEXT" when unterminated), blanks and newlines left out.
std::vector<std::string> tokens(std::string_view text,
                                SourceLanguage language = SourceLanguage::kCpp) {
  static const char* const kNames[] = {"blank", "newline", "line",   "block",     "string", "char",
                                       "raw",   "ident",   "number", "directive", "punct"};
  Lexer lexer(text, language);
  std::vector<std::string> out;
  Token token;
  while (lexer.next(token)) {
    if (token.kind == TokenKind::kBlank || token.kind == TokenKind::kNewline) continue;
    out.push_back(std::string(kNames[static_cast<int>(token.kind)]) +
                  (token.terminated ? ":" : "?:") +
                  std::string(lexer.text().substr(token.begin, token.end - token.begin)));
  }
  return out;
}
using Tokens = std::vector<std::string>;

TEST(Lexer, ReadsCommentsAndTheirUnterminatedEnds) {
  EXPECT_EQ(tokens("a // b /* c\nd"), (Tokens{"ident:a", "line:// b /* c", "ident:d"}));
  EXPECT_EQ(tokens("a /* b // \"c\n*/ d"), (Tokens{"ident:a", "block:/* b // \"c\n*/", "ident:d"}));
  EXPECT_EQ(tokens("/*/ x */"), (Tokens{"block:/*/ x */"})) << "/*/ does not close";
  EXPECT_EQ(tokens("a /* open\nb"), (Tokens{"ident:a", "block?:/* open\nb"}));
  EXPECT_EQ(tokens("//"), (Tokens{"line://"}));
}

TEST(Lexer, ReadsLiteralsWithTheirEscapesAndPrefixes) {
  EXPECT_EQ(tokens(R"(f("a\"b", '\'', '\\', "/* no */"))"),
            (Tokens{"ident:f", "punct:(", R"(string:"a\"b")", "punct:,", R"(char:'\'')", "punct:,",
                    R"(char:'\\')", "punct:,", R"(string:"/* no */")", "punct:)"}));
  EXPECT_EQ(tokens(R"(u8"a" u"b" U'c' L"d" Lx"e")"),
            (Tokens{R"(string:u8"a")", R"(string:u"b")", R"(char:U'c')", R"(string:L"d")",
                    "ident:Lx", R"(string:"e")"}));
  EXPECT_EQ(tokens("\"open // x\nnext"), (Tokens{"string?:\"open // x", "ident:next"}))
      << "a C++ literal ends with its line";
  EXPECT_EQ(tokens("'\\"), (Tokens{"char?:'\\"}));
}

TEST(Lexer, ReadsRawStringsHoldingCommentsAndQuotes) {
  EXPECT_EQ(tokens("R\"d(*/ \" /* // )\" )d\" x"),
            (Tokens{"raw:R\"d(*/ \" /* // )\" )d\"", "ident:x"}));
  EXPECT_EQ(tokens("u8R\"(a\nb)\" LR\"--(\n)--\""),
            (Tokens{"raw:u8R\"(a\nb)\"", "raw:LR\"--(\n)--\""}));
  EXPECT_EQ(tokens("R\"x(open"), (Tokens{"raw?:R\"x(open"}));
  // A malformed delimiter (over 16 characters, or a blank in it) makes no raw string.
  EXPECT_EQ(tokens("R\"seventeen_chars_x(a)seventeen_chars_x\""),
            (Tokens{"ident:R", "string:\"seventeen_chars_x(a)seventeen_chars_x\""}));
  EXPECT_EQ(tokens("R\"a b(x\ny"), (Tokens{"ident:R", "string?:\"a b(x", "ident:y"}));
  EXPECT_EQ(tokens("Rx\"a\""), (Tokens{"ident:Rx", "string:\"a\""}));
}

TEST(Lexer, ReadsNumbersWithSeparatorsAndExponents) {
  EXPECT_EQ(tokens("1'000'000 0x1p-3 .5e+3 a.b 1'"),
            (Tokens{"number:1'000'000", "number:0x1p-3", "number:.5e+3", "ident:a", "punct:.",
                    "ident:b", "number:1", "char?:'"}));
}

TEST(Lexer, SplicesLinesBeforeAnythingElse) {
  const std::string text = "#inc\\\nlude x // a \\\r\n#define y\nz";
  Lexer lexer(text, SourceLanguage::kCpp);
  EXPECT_EQ(lexer.text(), "#include x // a #define y\nz");
  EXPECT_EQ(tokens(text),
            (Tokens{"directive:#", "ident:include", "ident:x", "line:// a #define y", "ident:z"}))
      << "a splice continues a // comment";
  // Offsets map back to the text as given.
  EXPECT_EQ(lexer.original(0), 0u);
  EXPECT_EQ(lexer.original(3), 3u);    // 'c'
  EXPECT_EQ(lexer.original(4), 6u);    // 'l', after the splice
  EXPECT_EQ(lexer.original(16), 21u);  // '#', after "\\\r\n"
  EXPECT_EQ(lexer.original(lexer.text().size()), text.size());
  EXPECT_EQ(tokens("\"a\\\nb\" c"), (Tokens{"string:\"ab\"", "ident:c"}));
  EXPECT_EQ(tokens("a\\"), (Tokens{"ident:a", "punct:\\"})) << "no newline: no splice";
}

TEST(Lexer, ADirectiveIsAHashThatBeginsALogicalLine) {
  EXPECT_EQ(tokens("  # x\n/* a\n b */ #y\nz #w\n#"),
            (Tokens{"directive:#", "ident:x", "block:/* a\n b */", "directive:#", "ident:y",
                    "ident:z", "punct:#", "ident:w", "directive:#"}));
  Lexer lexer("#define S \"s\"\nf(\"t\");", SourceLanguage::kCpp);
  Token token;
  std::vector<bool> in_directive;
  while (lexer.next(token))
    if (token.kind == TokenKind::kString) in_directive.push_back(lexer.in_directive());
  EXPECT_EQ(in_directive, (std::vector<bool>{true, false}));
}

TEST(Lexer, PtxHasNoSplicesCharactersRawStringsOrDirectives) {
  const SourceLanguage ptx = SourceLanguage::kPtx;
  EXPECT_EQ(tokens("// a \\\n#b 'c' R\"(d)\"", ptx),
            (Tokens{"line:// a \\", "punct:#", "ident:b", "punct:'", "ident:c", "punct:'",
                    "ident:R", "string:\"(d)\""}));
  EXPECT_EQ(tokens("\"a\n// b\" c", ptx), (Tokens{"string:\"a\n// b\"", "ident:c"}))
      << "a PTX string runs on over lines";
  EXPECT_EQ(tokens("\"open\nx", ptx), (Tokens{"string?:\"open\nx"}));
}

TEST(Lexer, PeekAndSeekLeaveTheLineAsItWas) {
  Lexer lexer("#include <a.h> // x\n#", SourceLanguage::kCpp);
  Token token;
  ASSERT_TRUE(lexer.next(token));
  EXPECT_EQ(token.kind, TokenKind::kDirective);
  ASSERT_TRUE(lexer.peek(token));
  EXPECT_EQ(token.kind, TokenKind::kIdentifier);
  EXPECT_EQ(lexer.offset(), 1u) << "peek does not move on";
  lexer.seek(lexer.text().find('>') + 1);  // a caller that read the header name itself
  ASSERT_TRUE(lexer.next(token));
  EXPECT_EQ(token.kind, TokenKind::kBlank);
  ASSERT_TRUE(lexer.next(token));
  EXPECT_EQ(token.kind, TokenKind::kLineComment);
  ASSERT_TRUE(lexer.next(token));
  ASSERT_TRUE(lexer.next(token));
  EXPECT_EQ(token.kind, TokenKind::kDirective);
  EXPECT_FALSE(lexer.next(token));
  EXPECT_FALSE(lexer.peek(token));
}

TEST(BlankComments, BlanksCommentsKeepingOffsetsAndNewlines) {
  EXPECT_EQ(blank_comments("a /* b\nc */ d // e\nf", SourceLanguage::kCpp),
            "a     \n     d     \nf");
  EXPECT_EQ(blank_comments("a // b \\\nc\nd", SourceLanguage::kCpp), "a       \n \nd")
      << "the spliced line is the comment's, its backslash blanked too";
  EXPECT_EQ(blank_comments("x = \"// no\"; /* open", SourceLanguage::kCpp),
            "x = \"// no\";        ");
  EXPECT_EQ(blank_comments("a // b \\\nc", SourceLanguage::kPtx), "a       \nc");
}

TEST(BlankComments, BlanksLiteralsOutsideDirectivesOnRequest) {
  const LiteralText blanked = LiteralText::kBlankedOutsideDirectives;
  EXPECT_EQ(blank_comments("f(\"ab\", 'c', u8\"d\\\"e\", \"open\n", SourceLanguage::kCpp, blanked),
            "f(\"  \", ' ', u8\"    \", \"    \n");
  EXPECT_EQ(blank_comments("s = R\"x(a\n\"b)x\";", SourceLanguage::kCpp, blanked),
            "s = R\"   \n    \";");
  EXPECT_EQ(blank_comments("#include \"a.h\" // c\n  # define S 'x' \"y\"\nf(\"z\")",
                           SourceLanguage::kCpp, blanked),
            "#include \"a.h\"     \n  # define S 'x' \"y\"\nf(\" \")");
  EXPECT_EQ(blank_comments("f(\"a\\\nb\")", SourceLanguage::kCpp, blanked), "f(\"  \n \")")
      << "a splice inside a literal: blanked, its newline kept";
  EXPECT_EQ(blank_comments("\"a\" 'b'", SourceLanguage::kPtx, blanked), "\" \" 'b'");
}

}  // namespace
}  // namespace tmem
