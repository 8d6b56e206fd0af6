// Error and Result<T>: every public call that can fail on user input returns a Result.
#pragma once

#include <exception>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "tmem/export.h"

TMEMJIT_API_BEGIN
namespace tmem {

// What went wrong, coarse enough to pick an exit code and fine enough to test against.
enum class ErrorCode {
  kParse,      // malformed text (opcode, layout, view, spec, JSON)
  kOpcode,     // a well-formed opcode that breaks an instruction rule (R1-R9)
  kLayout,     // a layout, tensor or view that is not valid
  kRule,       // a transfer that breaks a native-image rule (DESIGN.md §3)
  kTarget,     // a target that cannot run the opcode
  kLimit,      // an input too large to process
  kToolchain,  // nvJitLink / NVRTC / ptxas failed or is missing
  kDriver,     // libcuda missing, or a load or launch failed
  kIo,         // file system trouble
  kWrongData,  // a run produced data that differs from the expectation
  kUsage,      // an API or command-line misuse
  kInternal,   // a bug in libtmemjit
};

// Stable lower-case name of an error code ("parse", "rule", ...), used in JSON and messages.
const char* to_string(ErrorCode code) noexcept;

// A user-facing error: `message` is one sentence (lower-case, no final period); `details` holds
// what helps fix it (the operand as text, a compiler log, the PTX).
class Error : public std::exception {
 public:
  Error(ErrorCode code, std::string message, std::string details = {})
      : code_(code), message_(std::move(message)), details_(std::move(details)) {}

  ErrorCode code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }
  const std::string& details() const noexcept { return details_; }
  const char* what() const noexcept override { return message_.c_str(); }

  // The message followed by the details on their own lines.
  std::string full_text() const;

 private:
  ErrorCode code_;
  std::string message_;
  std::string details_;
};

// A value or an Error, in the spirit of llvm::Expected. value() throws the Error when empty.
template <class T>
class [[nodiscard]] Result {
  static_assert(!std::is_same_v<T, Error>, "Result<Error> is meaningless");

 public:
  Result(T value)
      : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  const T& value() const& {
    if (!ok()) throw std::get<1>(state_);
    return std::get<0>(state_);
  }
  T& value() & {
    if (!ok()) throw std::get<1>(state_);
    return std::get<0>(state_);
  }
  T&& value() && {
    if (!ok()) throw std::get<1>(state_);
    return std::get<0>(std::move(state_));
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  // Requires: !ok().
  const Error& error() const& { return std::get<1>(state_); }
  Error&& error() && { return std::get<1>(std::move(state_)); }

 private:
  std::variant<T, Error> state_;
};

// The result of a call that returns nothing but can fail: `return Status(std::monostate{})` or an
// Error.
using Status = Result<std::monostate>;

}  // namespace tmem
TMEMJIT_API_END
