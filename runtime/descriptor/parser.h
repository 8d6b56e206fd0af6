// The recursive-descent parser of the descriptor language (docs/descriptor-language.md §Grammar),
// shared by Layout::parse and View::parse. Errors are ErrorCode::kParse "at column N: ..."
// (1-based) for malformed text, and kLayout / kLimit with the same prefix for well-formed text that
// describes no valid value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tmem/layout.h"
#include "tmem/result.h"
#include "tmem/view.h"

namespace tmem::detail {

// Input limits: longer text is kLimit; a view chain of more operations is kLimit.
inline constexpr size_t kMaxTextBytes = size_t{1} << 20;
inline constexpr int kMaxChain = 256;

Result<Layout> parse_layout(std::string_view text);
Result<View> parse_view(std::string_view text);

class DescriptorParser {
 public:
  explicit DescriptorParser(std::string_view text) : text_(text) {}

  Result<Layout> layout_only();
  Result<View> view_only();

 private:
  // A failure carries its Error; parse functions return false and leave it in error_.
  bool fail(size_t pos, std::string message, ErrorCode code = ErrorCode::kParse);
  bool fail_with(size_t pos, const Error& error);  // prefixes a semantic error with its column
  void skip_space();
  bool at_end() {
    skip_space();
    return pos_ >= text_.size();
  }
  bool peek(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool accept(char c);
  bool expect(char c, std::string_view context);
  std::string describe_here();  // "'x'" or "end of input"
  bool integer(std::int64_t& out, std::string_view what, bool allow_negative = false);
  bool identifier(std::string& out);
  bool string_literal(std::string& out, size_t& content_pos);

  bool layout(std::optional<Layout>& out);
  bool iters(std::vector<Iter>& out, std::string_view list);
  bool stride(Iter& out, bool* had_axis = nullptr);
  bool dtype_value(DType& out);
  bool base(std::optional<View>& out);
  bool tensor_call(std::optional<View>& out, size_t start);
  // The keyword arguments after a factory's positional ones: `, key=N` (at most the one integer
  // keyword `int_key`) and `, dtype=T`, in any order.
  bool keyword_args(const std::string& int_key, std::optional<std::int64_t>& int_value,
                    DType& dtype);
  bool datapath_call(std::optional<View>& out, size_t start);
  bool wg_local_call(std::optional<View>& out, size_t start);
  bool method(std::optional<View>& view);
  bool index(std::optional<View>& view);

  std::string_view text_;
  size_t pos_ = 0;
  std::optional<Error> error_;
};

}  // namespace tmem::detail
