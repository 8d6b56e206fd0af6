// Recursive-descent parser of layouts and views (docs/descriptor-language.md §Grammar) with
// column-accurate errors.
//
// The grammar nests only one level (a parenthesized tuple or einops group), so the parser never
// recurses on nesting; text deeper than that fails at the first unexpected '('.
#include "runtime/descriptor/parser.h"

#include <cctype>

#include "tmem/tensor.h"

namespace tmem::detail {
namespace {

std::string allowed_axes() {
  std::string out;
  for (Axis axis : all_axes()) out += (out.empty() ? "" : ", ") + std::string(to_string(axis));
  return out;
}

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

Result<Layout> parse_layout(std::string_view text) { return DescriptorParser(text).layout_only(); }
Result<View> parse_view(std::string_view text) { return DescriptorParser(text).view_only(); }

bool DescriptorParser::fail(size_t pos, std::string message, ErrorCode code) {
  error_ = Error(code, "at column " + std::to_string(pos + 1) + ": " + std::move(message));
  error_->add_detail("column", std::to_string(pos + 1));
  return false;
}

bool DescriptorParser::fail_with(size_t pos, const Error& error) {
  // Pattern errors from rearrange already carry their own column.
  if (error.has_detail("column")) {
    error_ = error;
    return false;
  }
  return fail(pos, error.message(), error.code());
}

void DescriptorParser::skip_space() {
  while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
}

bool DescriptorParser::accept(char c) {
  if (!peek(c)) return false;
  ++pos_;
  return true;
}

std::string DescriptorParser::describe_here() {
  skip_space();
  if (pos_ >= text_.size()) return "end of input";
  const char c = text_[pos_];
  if (is_ident_start(c)) {
    size_t end = pos_;
    while (end < text_.size() && is_ident_char(text_[end]) && end - pos_ < 32) ++end;
    return "'" + std::string(text_.substr(pos_, end - pos_)) + "'";
  }
  if (std::isprint(static_cast<unsigned char>(c))) return std::string("'") + c + "'";
  return "byte " + std::to_string(static_cast<unsigned char>(c));
}

bool DescriptorParser::expect(char c, std::string_view context) {
  if (accept(c)) return true;
  return fail(pos_, "expected '" + std::string(1, c) + "' " + std::string(context) + ", found " +
                        describe_here());
}

bool DescriptorParser::integer(std::int64_t& out, std::string_view what, bool allow_negative) {
  skip_space();
  const size_t start = pos_;
  bool negative = false;
  if (allow_negative && pos_ < text_.size() && text_[pos_] == '-') {
    negative = true;
    ++pos_;
  }
  if (pos_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
    pos_ = start;
    return fail(start, "expected " + std::string(what) + ", found " + describe_here());
  }
  std::int64_t value = 0;
  bool overflow = false;
  while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
    overflow = overflow || __builtin_mul_overflow(value, 10, &value) ||
               __builtin_add_overflow(value, text_[pos_] - '0', &value);
    ++pos_;
  }
  if (overflow)
    return fail(start, "integer " +
                           std::string(text_.substr(start, std::min<size_t>(pos_ - start, 40))) +
                           " does not fit in a signed 64-bit integer");
  out = negative ? -value : value;
  return true;
}

bool DescriptorParser::identifier(std::string& out) {
  skip_space();
  if (pos_ >= text_.size() || !is_ident_start(text_[pos_])) return false;
  const size_t start = pos_;
  while (pos_ < text_.size() && is_ident_char(text_[pos_])) ++pos_;
  out = std::string(text_.substr(start, pos_ - start));
  return true;
}

bool DescriptorParser::string_literal(std::string& out, size_t& content_pos) {
  skip_space();
  if (pos_ >= text_.size() || (text_[pos_] != '"' && text_[pos_] != '\''))
    return fail(pos_, "expected a quoted string, found " + describe_here());
  const char quote = text_[pos_];
  const size_t start = pos_++;
  content_pos = pos_;
  while (pos_ < text_.size() && text_[pos_] != quote) ++pos_;
  if (pos_ >= text_.size()) return fail(start, "string is not closed");
  out = std::string(text_.substr(content_pos, pos_ - content_pos));
  ++pos_;
  return true;
}

// ---- layouts ----

bool DescriptorParser::stride(Iter& out, bool* had_axis) {
  if (!integer(out.stride, "a stride")) return false;
  out.axis = Axis::kM;
  if (had_axis) *had_axis = false;
  if (!accept('@')) return true;
  if (had_axis) *had_axis = true;
  skip_space();
  const size_t at = pos_;
  std::string name;
  if (!identifier(name)) return fail(at, "expected an axis after '@', found " + describe_here());
  auto axis = parse_axis(name);
  if (!axis) return fail(at, "unknown axis '" + name + "' (allowed: " + allowed_axes() + ")");
  out.axis = *axis;
  return true;
}

bool DescriptorParser::iters(std::vector<Iter>& out, std::string_view list) {
  out.clear();
  auto row_major = [&out] {
    std::int64_t stride = 1;
    for (size_t i = out.size(); i-- > 0;) {
      out[i].stride = stride;
      out[i].axis = Axis::kM;
      if (__builtin_mul_overflow(stride, out[i].extent, &stride)) stride = 0;  // make() rejects
    }
  };
  auto extent = [&](std::int64_t& value) { return integer(value, "an extent"); };
  if (accept('(')) {
    do {
      if (out.size() >= static_cast<size_t>(kMaxIters))
        return fail(pos_,
                    std::string(list) + " has more than " + std::to_string(kMaxIters) + " iters",
                    ErrorCode::kLimit);
      Iter iter;
      if (!extent(iter.extent)) return false;
      out.push_back(iter);
    } while (accept(','));
    if (!expect(')', "after the extents")) return false;
    if (!accept(':')) {
      row_major();
      return true;
    }
    if (!expect('(', "before the strides of a parenthesized extent list")) return false;
    for (size_t i = 0; i < out.size(); ++i) {
      bool had_axis = false;
      if (!stride(out[i], &had_axis)) return false;
      const bool last = i + 1 == out.size();
      skip_space();
      const std::string after = "after stride " + std::to_string(out[i].stride);
      if (!last && accept(',')) continue;
      if (last && accept(')')) break;
      if (last && peek(','))
        return fail(pos_, "expected ')' " + after + ": " + std::to_string(out.size()) +
                              " extents take " + std::to_string(out.size()) + " strides");
      if (!last && peek(')'))
        return fail(pos_, "expected ',' " + after + ": " + std::to_string(out.size()) +
                              " extents need " + std::to_string(out.size()) + " strides");
      const std::string options = had_axis ? "" : "'@' or ";
      return fail(pos_, "expected " + options + (last ? "')'" : "','") + " " + after);
    }
    return true;
  }
  Iter first;
  if (!extent(first.extent)) return false;
  out.push_back(first);
  if (accept(':')) return stride(out.back());
  while (accept(',')) {
    if (out.size() >= static_cast<size_t>(kMaxIters))
      return fail(pos_,
                  std::string(list) + " has more than " + std::to_string(kMaxIters) + " iters",
                  ErrorCode::kLimit);
    Iter iter;
    if (!extent(iter.extent)) return false;
    out.push_back(iter);
  }
  row_major();
  return true;
}

bool DescriptorParser::layout(std::optional<Layout>& out) {
  skip_space();
  const size_t start = pos_;
  bool wrapped = false;
  std::string name;
  const size_t name_pos = pos_;
  if (!identifier(name))
    return fail(start,
                "expected a layout 'S[...]' or 'TileLayout(S[...])', found " + describe_here());
  if (name == "TileLayout") {
    if (!expect('(', "after TileLayout")) return false;
    wrapped = true;
    skip_space();
    if (!identifier(name))
      return fail(pos_, "expected 'S[' after 'TileLayout(', found " + describe_here());
  }
  if (name != "S") return fail(name_pos, "expected 'S[' to start a layout, found '" + name + "'");
  if (!expect('[', "after 'S'")) return false;
  std::vector<Iter> shard, replica, more;
  std::vector<Offset> offsets;
  if (!iters(shard, "S[...]")) return false;
  if (!expect(']', "after the shard iters")) return false;
  while (accept('+')) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == 'R') {
      const size_t r_pos = pos_;
      std::string word;
      identifier(word);
      if (word != "R")
        return fail(r_pos, "expected 'R[' or an offset after '+', found '" + word + "'");
      if (!expect('[', "after 'R'")) return false;
      if (!iters(more, "R[...]")) return false;
      if (!expect(']', "after the replica iters")) return false;
      if (replica.size() + more.size() > static_cast<size_t>(kMaxIters))
        return fail(r_pos, "R[...] has more than " + std::to_string(kMaxIters) + " iters",
                    ErrorCode::kLimit);
      replica.insert(replica.end(), more.begin(), more.end());
      continue;
    }
    if (pos_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[pos_])))
      return fail(pos_, "expected 'R[' or an offset after '+', found " + describe_here());
    if (offsets.size() >= static_cast<size_t>(kMaxIters))
      return fail(pos_, "a layout has more than " + std::to_string(kMaxIters) + " offsets",
                  ErrorCode::kLimit);
    Iter offset;
    if (!stride(offset)) return false;
    offsets.push_back(Offset{offset.axis, offset.stride});
  }
  if (wrapped && !expect(')', "to close 'TileLayout('")) return false;
  auto made = Layout::make(std::move(shard), std::move(replica), std::move(offsets));
  if (!made) return fail_with(start, made.error());
  out.emplace(std::move(*made));
  return true;
}

Result<Layout> DescriptorParser::layout_only() {
  if (text_.size() > kMaxTextBytes)
    return Error(ErrorCode::kLimit, "layout text is longer than 1 MiB");
  std::optional<Layout> out;
  if (!layout(out)) return *error_;
  if (!at_end()) {
    fail(pos_, "unexpected " + describe_here() + " after the layout");
    return *error_;
  }
  return std::move(*out);
}

// ---- views ----

bool DescriptorParser::dtype_value(DType& out) {
  skip_space();
  const size_t at = pos_;
  std::string name;
  if (pos_ < text_.size() && (text_[pos_] == '"' || text_[pos_] == '\'')) {
    size_t content = 0;
    if (!string_literal(name, content)) return false;
  } else if (!identifier(name)) {
    return fail(at, "expected a dtype, found " + describe_here());
  }
  auto dtype = parse_dtype(name);
  if (!dtype)
    return fail(at, "unknown dtype '" + name +
                        "' (allowed: b32, f32, u32, s32, b16, f16, bf16, float32, float16, "
                        "bfloat16, uint32, int32)");
  out = *dtype;
  return true;
}

bool DescriptorParser::tensor_call(std::optional<View>& out, size_t start) {
  if (!expect('(', "after 'tensor'")) return false;
  std::vector<std::int64_t> shape;
  std::int64_t extent = 0;
  if (accept('(')) {
    do {
      if (peek(')') && !shape.empty()) break;  // "(64,)"
      if (shape.size() >= static_cast<size_t>(kMaxIters))
        return fail(pos_, "a tensor shape has more than " + std::to_string(kMaxIters) + " extents",
                    ErrorCode::kLimit);
      if (!integer(extent, "a shape extent")) return false;
      shape.push_back(extent);
    } while (accept(','));
    if (!expect(')', "after the shape")) return false;
  } else {
    if (!integer(extent, "a shape '(d0, d1, ...)'")) return false;
    shape.push_back(extent);
  }
  if (!expect(',', "after the shape")) return false;
  std::optional<Layout> layout_value;
  if (!layout(layout_value)) return false;
  DType dtype = DType::kF32;
  if (accept(',')) {
    skip_space();
    const size_t save = pos_;
    std::string word;
    if (identifier(word) && word == "dtype" && accept('=')) {
      // dtype=f32
    } else {
      pos_ = save;
    }
    if (!dtype_value(dtype)) return false;
  }
  if (!expect(')', "to close 'tensor('")) return false;
  auto tensor = Tensor::make(std::move(shape), std::move(*layout_value), dtype);
  if (!tensor) return fail_with(start, tensor.error());
  out.emplace(View(std::move(*tensor)));
  return true;
}

bool DescriptorParser::datapath_call(std::optional<View>& out, size_t start) {
  if (!expect('(', "after 'tmem_datapath_layout'")) return false;
  std::string letter;
  size_t content = 0;
  if (!string_literal(letter, content)) return false;
  std::int64_t rows = 0, cols = 0, sub_slab = 0;
  DType dtype = DType::kF32;
  if (!expect(',', "after the letter") || !integer(rows, "rows") || !expect(',', "after rows") ||
      !integer(cols, "cols"))
    return false;
  std::optional<std::int64_t> sub_slab_value;
  if (!keyword_args("sub_slab", sub_slab_value, dtype)) return false;
  const bool has_sub_slab = sub_slab_value.has_value();
  if (has_sub_slab) sub_slab = *sub_slab_value;
  if (!expect(')', "to close 'tmem_datapath_layout('")) return false;
  auto tensor = tmem_datapath_layout(letter, rows, cols, sub_slab, dtype);
  if (!tensor) return fail_with(start, tensor.error());
  std::string text = "tmem_datapath_layout(\"" + letter + "\", " + std::to_string(rows) + ", " +
                     std::to_string(cols);
  if (has_sub_slab) text += ", sub_slab=" + std::to_string(sub_slab);
  if (dtype != DType::kF32) text += ", dtype=" + std::string(to_string(dtype));
  out.emplace(View(std::move(*tensor), text + ")"));
  return true;
}

bool DescriptorParser::keyword_args(const std::string& int_key,
                                    std::optional<std::int64_t>& int_value, DType& dtype) {
  while (accept(',')) {
    skip_space();
    const size_t at = pos_;
    std::string key;
    if (!identifier(key) || (key != int_key && key != "dtype"))
      return fail(at, "expected '" + int_key + "=' or 'dtype=', found " +
                          (key.empty() ? describe_here() : "'" + key + "'"));
    if (!expect('=', "after '" + key + "'")) return false;
    if (key == int_key) {
      std::int64_t value = 0;
      if (!integer(value, "the " + int_key + " value", true)) return false;
      int_value = value;
    } else if (!dtype_value(dtype)) {
      return false;
    }
  }
  return true;
}

bool DescriptorParser::wg_local_call(std::optional<View>& out, size_t start) {
  if (!expect('(', "after 'wg_local_layout'")) return false;
  std::int64_t cols = 0;
  std::optional<std::int64_t> rows;
  DType dtype = DType::kF32;
  if (!integer(cols, "cols")) return false;
  if (!keyword_args("rows", rows, dtype)) return false;
  if (!expect(')', "to close 'wg_local_layout('")) return false;
  auto tensor = wg_local_layout(cols, rows, dtype);
  if (!tensor) return fail_with(start, tensor.error());
  std::string text = "wg_local_layout(" + std::to_string(cols);
  if (rows) text += ", rows=" + std::to_string(*rows);
  if (dtype != DType::kF32) text += ", dtype=" + std::string(to_string(dtype));
  out.emplace(View(std::move(*tensor), text + ")"));
  return true;
}

bool DescriptorParser::base(std::optional<View>& out) {
  skip_space();
  const size_t start = pos_;
  std::string name;
  if (identifier(name)) {
    if (name == "tensor") return tensor_call(out, start);
    if (name == "tmem_datapath_layout") return datapath_call(out, start);
    if (name == "wg_local_layout") return wg_local_call(out, start);
    if (name == "S" || name == "TileLayout")
      return fail(start, "a layout alone is not a view; give it a shape as tensor((d0, d1, ...), " +
                             name + (name == "S" ? "[...]" : "(...)") + ", dtype)");
  }
  return fail(start, "expected 'tensor(', 'tmem_datapath_layout(' or 'wg_local_layout(', found " +
                         (name.empty() ? describe_here() : "'" + name + "'"));
}

bool DescriptorParser::method(std::optional<View>& view) {
  skip_space();
  const size_t start = pos_;
  std::string name;
  if (!identifier(name) || (name != "rearrange" && name != "view" && name != "permute"))
    return fail(start, "expected a method 'rearrange', 'view' or 'permute' after '.', found " +
                           (name.empty() ? describe_here() : "'" + name + "'"));
  if (!expect('(', "after '" + name + "'")) return false;
  if (name == "rearrange") {
    std::string pattern;
    size_t content = 0;
    if (!string_literal(pattern, content)) return false;
    std::vector<std::pair<std::string, std::int64_t>> sizes;
    while (accept(',')) {
      skip_space();
      std::string key;
      if (!identifier(key))
        return fail(pos_, "expected a size 'name=INT', found " + describe_here());
      if (!expect('=', "after size name '" + key + "'")) return false;
      std::int64_t value = 0;
      if (!integer(value, "the size of '" + key + "'")) return false;
      sizes.emplace_back(std::move(key), value);
    }
    if (!expect(')', "to close 'rearrange('")) return false;
    auto next = view->rearrange_at(pattern, sizes, static_cast<int>(content) + 1);
    if (!next) return fail_with(start, next.error());
    view.emplace(std::move(*next));
    return true;
  }
  std::vector<std::int64_t> values;
  do {
    if (values.size() >= static_cast<size_t>(kMaxIters))
      return fail(pos_, name + " has more than " + std::to_string(kMaxIters) + " arguments",
                  ErrorCode::kLimit);
    std::int64_t value = 0;
    if (!integer(value, name == "view" ? "an extent" : "a dim number", name == "view"))
      return false;
    values.push_back(value);
  } while (accept(','));
  if (!expect(')', "to close '" + name + "('")) return false;
  auto next = name == "view" ? view->view(values) : view->permute(values);
  if (!next) return fail_with(start, next.error());
  view.emplace(std::move(*next));
  return true;
}

bool DescriptorParser::index(std::optional<View>& view) {
  const size_t start = pos_ - 1;
  std::vector<Slice> slices;
  do {
    if (slices.size() >= static_cast<size_t>(kMaxIters))
      return fail(pos_, "an index has more than " + std::to_string(kMaxIters) + " entries",
                  ErrorCode::kLimit);
    Slice slice = Slice::all();
    std::int64_t value = 0;
    if (accept(':')) {
      skip_space();
      if (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        if (!integer(value, "a range end")) return false;
        slice.end = value;
      }
    } else {
      if (!integer(value, "an index, a range 'a:b' or ':'")) return false;
      if (accept(':')) {
        slice.begin = value;
        skip_space();
        if (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
          if (!integer(value, "a range end")) return false;
          slice.end = value;
        }
      } else {
        slice = Slice::at(value);
      }
    }
    slices.push_back(slice);
  } while (accept(','));
  if (!expect(']', "to close the index")) return false;
  auto next = view->index(slices);
  if (!next) return fail_with(start, next.error());
  view.emplace(std::move(*next));
  return true;
}

Result<View> DescriptorParser::view_only() {
  if (text_.size() > kMaxTextBytes)
    return Error(ErrorCode::kLimit, "view text is longer than 1 MiB");
  std::optional<View> view;
  if (!base(view)) return *error_;
  int chain = 0;
  while (!at_end()) {
    if (++chain > kMaxChain) {
      fail(pos_, "a view chains more than " + std::to_string(kMaxChain) + " operations",
           ErrorCode::kLimit);
      return *error_;
    }
    if (accept('.')) {
      if (!method(view)) return *error_;
    } else if (accept('[')) {
      if (!index(view)) return *error_;
    } else {
      fail(pos_, "expected '.method(...)', '[index]' or end of input after the view, found " +
                     describe_here());
      return *error_;
    }
  }
  return std::move(*view);
}

}  // namespace tmem::detail
