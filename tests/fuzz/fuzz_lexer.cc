// libFuzzer target: the one lexer of C++ and PTX text (runtime/support/lexer.h; issue 42 item 7)
// on arbitrary bytes. The tokens tile the text without a gap or an empty token, peek agrees with
// next, offsets map back into the text as given in order, and blank_comments keeps every offset
// and newline, changing characters only into spaces.
//
// Input: one byte of mode (bit 0: PTX, else C++; bit 1: literals blanked outside directives),
// then the text.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/support/lexer.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const tmem::SourceLanguage language =
      (data[0] & 1) != 0 ? tmem::SourceLanguage::kPtx : tmem::SourceLanguage::kCpp;
  const tmem::LiteralText literals =
      (data[0] & 2) != 0 ? tmem::LiteralText::kBlankedOutsideDirectives : tmem::LiteralText::kKept;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);

  tmem::Lexer lexer(text, language);
  const std::string_view lexed = lexer.text();
  FUZZ_CHECK(lexed.size() <= text.size(), std::string(lexed));
  FUZZ_CHECK(lexer.original(lexed.size()) == text.size(), std::string(lexed));
  size_t at = 0, previous_original = 0;
  tmem::Token peeked, token;
  while (lexer.peek(peeked)) {
    FUZZ_CHECK(lexer.next(token), "peek saw a token next did not");
    FUZZ_CHECK(peeked.begin == token.begin && peeked.end == token.end && peeked.kind == token.kind,
               "peek and next disagree at " + std::to_string(token.begin));
    FUZZ_CHECK(token.begin == at && token.end > token.begin && token.end <= lexed.size(),
               "a gap or an empty token at " + std::to_string(at));
    const size_t original = lexer.original(token.begin);
    FUZZ_CHECK(original >= previous_original && original < text.size(),
               "offsets out of order at " + std::to_string(token.begin));
    FUZZ_CHECK(text[original] == lexed[token.begin], "original() maps to another character");
    previous_original = original;
    at = token.end;
  }
  FUZZ_CHECK(at == lexed.size(), "the tokens end before the text");
  FUZZ_CHECK(!lexer.next(token), "next after the end");

  const std::string blanked = tmem::blank_comments(text, language, literals);
  FUZZ_CHECK(blanked.size() == text.size(), blanked);
  for (size_t i = 0; i < text.size(); ++i)
    FUZZ_CHECK(blanked[i] == text[i] || (blanked[i] == ' ' && text[i] != '\n'),
               "blank_comments changed offset " + std::to_string(i) + " into a non-space");
  return 0;
}
