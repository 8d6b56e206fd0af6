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

Error::Error(ErrorCode code, std::string message, std::string details)
    : code_(code), message_(std::move(message)) {
  if (!details.empty()) details_.push_back({"note", std::move(details)});
}

Error::Error(ErrorCode code, std::string message, std::vector<ErrorDetail> details)
    : code_(code), message_(std::move(message)), details_(std::move(details)) {}

std::string_view Error::detail(std::string_view key) const noexcept {
  for (const ErrorDetail& entry : details_)
    if (entry.key == key) return entry.text;
  return {};
}

bool Error::has_detail(std::string_view key) const noexcept {
  for (const ErrorDetail& entry : details_)
    if (entry.key == key) return true;
  return false;
}

Error& Error::add_detail(std::string key, std::string text) {
  details_.push_back({std::move(key), std::move(text)});
  return *this;
}

std::string Error::details() const {
  std::string text;
  for (const ErrorDetail& entry : details_) {
    if (entry.key == "column" || entry.key == "line") continue;
    if (!text.empty() && text.back() != '\n') text += '\n';
    if (entry.key == "note")
      text += entry.text;
    else if (entry.text.find('\n') != std::string::npos)
      text += entry.key + ":\n" + entry.text;
    else
      text += entry.key + ": " + entry.text;
  }
  return text;
}

std::string Error::full_text() const {
  std::string text = details();
  if (text.empty()) return message_;
  return message_ + "\n" + text;
}

}  // namespace tmem
