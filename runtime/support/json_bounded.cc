// The JSON nesting bound every reader checks before parsing (tmem/text.h).
#include <string>

#include "tmem/text.h"

namespace tmem {

Status check_json_depth(std::string_view text, std::string_view what) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;  // the escaped character cannot end the string
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        return Error(ErrorCode::kParse,
                     std::string(what) + " nests arrays and objects deeper than " +
                         std::to_string(kMaxJsonDepth) + " levels (at byte " + std::to_string(i) +
                         ")",
                     "a spec nests one level; the bound is docs/reliability.md's");
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::monostate{};
}

}  // namespace tmem
