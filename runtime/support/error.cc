// Error codes and their text.
#include "tmem/result.h"

namespace tmem {

const char* to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::kParse:
      return "parse";
    case ErrorCode::kOpcode:
      return "opcode";
    case ErrorCode::kLayout:
      return "layout";
    case ErrorCode::kRule:
      return "rule";
    case ErrorCode::kTarget:
      return "target";
    case ErrorCode::kLimit:
      return "limit";
    case ErrorCode::kToolchain:
      return "toolchain";
    case ErrorCode::kDriver:
      return "driver";
    case ErrorCode::kIo:
      return "io";
    case ErrorCode::kWrongData:
      return "wrong_data";
    case ErrorCode::kUsage:
      return "usage";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "internal";
}

std::string Error::full_text() const {
  if (details_.empty()) return message_;
  return message_ + "\n" + details_;
}

}  // namespace tmem
