// Error and Result<T>: every public call that can fail on user input returns a Result.
#pragma once

#include <exception>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "tmem/export.h"
#include "tmem/rule.h"

TMEMJIT_API_BEGIN
namespace tmem {

// What went wrong, coarse enough to pick an exit code and fine enough to test against.
enum class ErrorCode {
  kParse,      // malformed text (opcode, layout, view, spec, JSON)
  kOpcode,     // a well-formed opcode that breaks an instruction rule (R1-R9)
  kLayout,     // a layout, tensor or view that is not valid
  kRule,       // a transfer that breaks a native-image rule (docs/transfer-semantics.md §Rules)
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

// Why a kDriver or kTarget error happened, for callers that act on it (skip a test, fall back
// to emulation) without reading the message.
enum class DeviceFault {
  kNone,                    // not about the device (or a load/launch failure)
  kNoDriver,                // libcuda.so.1 could not be loaded
  kNoDevice,                // the driver loaded but reports no CUDA device
  kWrongComputeCapability,  // the device cannot run the code's target
};

// One entry of an error's details, keyed by what it holds. Keys in use: "operand" (the operand
// as text), "tmem" / "regs" (which operand failed), "column" (1-based column of a parse error,
// for tools; its message says it too), "line" (1-based line of the user's source, likewise),
// "backend", "options", "log", "ptx", "cuda source", "output"
// (a helper program's), "note" (free text).
struct ErrorDetail {
  std::string key;
  std::string text;
  friend bool operator==(const ErrorDetail& a, const ErrorDetail& b) {
    return a.key == b.key && a.text == b.text;
  }
  friend bool operator!=(const ErrorDetail& a, const ErrorDetail& b) { return !(a == b); }
};

// A user-facing error: `message` is one sentence (lower-case, no final period); the details hold
// what helps fix it (the operand as text, a compiler log, the options, the PTX), each keyed.
class Error : public std::exception {
 public:
  // `details`, when not empty, becomes one entry keyed "note".
  Error(ErrorCode code, std::string message, std::string details = {});
  Error(ErrorCode code, std::string message, std::vector<ErrorDetail> details);

  ErrorCode code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }
  const char* what() const noexcept override { return message_.c_str(); }

  // Every entry, in the order added.
  const std::vector<ErrorDetail>& detail_entries() const noexcept { return details_; }
  // The text of the first entry keyed `key`; empty when there is none.
  std::string_view detail(std::string_view key) const noexcept;
  bool has_detail(std::string_view key) const noexcept;
  // Adds an entry (returns *this for chaining).
  Error& add_detail(std::string key, std::string text);

  // The rule the error breaks (tmem/rule.h): a docs/transfer-semantics.md §Rules rule for check's
  // kRule errors, a docs/tcgen05-rules.md id for opcode, target and simulator errors; Rule::kNone
  // for anything else.
  Rule rule() const noexcept { return rule_; }
  Error& set_rule(Rule rule) noexcept {
    rule_ = rule;
    return *this;
  }

  DeviceFault device_fault() const noexcept { return device_fault_; }
  Error& set_device_fault(DeviceFault fault) noexcept {
    device_fault_ = fault;
    return *this;
  }

  // The details as text, one entry after the other: "key: text" (a "note" without its key, a
  // multi-line text under a "key:" line; "column" and "line" left out, the message has them). Empty
  // when there are none.
  std::string details() const;
  // The message followed by the details on their own lines.
  std::string full_text() const;

 private:
  ErrorCode code_;
  std::string message_;
  std::vector<ErrorDetail> details_;
  DeviceFault device_fault_ = DeviceFault::kNone;
  Rule rule_ = Rule::kNone;
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
