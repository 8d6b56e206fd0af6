// View: digit-list re-indexing of a tensor (rearrange, view, permute, index) and its physical map.
#include "tmem/view.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <set>

#include "runtime/descriptor/parser.h"
#include "runtime/support/hash.h"

namespace tmem {
namespace {

Error invalid(std::string message) { return Error(ErrorCode::kLayout, std::move(message)); }

std::string join(std::span<const std::int64_t> values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out;
}

// Drops unit digits and fuses neighbours whose strides nest (e1:s1, e2:s2 with s1 == e2*s2).
std::vector<Digit> canonical(const std::vector<Digit>& digits) {
  std::vector<Digit> out;
  for (const Digit& digit : digits) {
    if (digit.extent == 1) continue;
    if (!out.empty() && out.back().stride == digit.extent * digit.stride) {
      out.back().extent *= digit.extent;
      out.back().stride = digit.stride;
      continue;
    }
    out.push_back(digit);
  }
  return out;
}

std::int64_t product(std::span<const Digit> digits) {
  std::int64_t out = 1;
  for (const Digit& digit : digits) out *= digit.extent;
  return out;
}

// The base offset of index `i` of a dim with these digits (the last digit lowest).
std::int64_t value_of(std::span<const Digit> digits, std::int64_t i) {
  std::int64_t out = 0;
  for (size_t k = digits.size(); k-- > 0;) {
    out += (i % digits[k].extent) * digits[k].stride;
    i /= digits[k].extent;
  }
  return out;
}

// Splits a row-major digit list into consecutive groups of the given extents. Fails (nullopt)
// when a group boundary falls inside a digit in a way no digit list can express.
// Requires: product(digits) == product(sizes).
std::optional<std::vector<std::vector<Digit>>> split(std::vector<Digit> digits,
                                                     std::span<const std::int64_t> sizes) {
  std::vector<std::vector<Digit>> out;
  size_t next = 0;
  for (std::int64_t size : sizes) {
    std::vector<Digit> group;
    std::int64_t need = size;
    while (need > 1) {
      if (next >= digits.size()) return std::nullopt;
      Digit& digit = digits[next];
      if (digit.extent <= need) {
        if (need % digit.extent != 0) return std::nullopt;
        group.push_back(digit);
        need /= digit.extent;
        ++next;
      } else {
        if (digit.extent % need != 0) return std::nullopt;
        group.push_back(Digit{need, digit.stride * (digit.extent / need)});
        digit.extent /= need;
        need = 1;
      }
    }
    out.push_back(std::move(group));
  }
  return out;
}

// One group of a rearrange side: names ("" for a unit "1" entry), or a single bare name.
struct Group {
  std::vector<std::string> names;
  bool parenthesized = false;
};

struct Pattern {
  std::vector<Group> left, right;
};

// Parses "(a b) c -> c (b a)". `column0` is the 1-based column of the pattern's first character in
// the source text, 0 when it comes from the C++ API.
Result<Pattern> parse_pattern(std::string_view text, int column0) {
  auto fail = [&](size_t pos, const std::string& what) -> Error {
    if (column0 > 0) {
      const std::string column = std::to_string(column0 + static_cast<int>(pos));
      return Error(ErrorCode::kParse, "at column " + column + ": " + what, {{"column", column}});
    }
    return Error(ErrorCode::kParse, "rearrange pattern \"" + std::string(text) +
                                        "\" at character " + std::to_string(pos + 1) + ": " + what);
  };
  Pattern pattern;
  std::vector<Group>* side = &pattern.left;
  bool seen_arrow = false;
  size_t pos = 0;
  constexpr size_t kClosed = std::string_view::npos;
  size_t open = kClosed;  // position of the '(' of the group being read
  auto is_name_start = [](char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
  };
  auto is_name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  };
  while (pos < text.size()) {
    const char c = text[pos];
    if (c == ' ' || c == '\t') {
      ++pos;
    } else if (c == '(') {
      if (open != kClosed)
        return fail(pos, "nested parentheses are not allowed in a rearrange pattern");
      open = pos;
      side->push_back(Group{{}, true});
      ++pos;
    } else if (c == ')') {
      if (open == kClosed) return fail(pos, "')' without a matching '('");
      open = kClosed;
      ++pos;
    } else if (text.compare(pos, 2, "->") == 0) {
      if (open != kClosed) return fail(open, "'(' is not closed before '->'");
      if (seen_arrow) return fail(pos, "a rearrange pattern has only one '->'");
      seen_arrow = true;
      side = &pattern.right;
      pos += 2;
    } else if (text.compare(pos, 3, "...") == 0) {
      return fail(pos, "ellipsis '...' is not supported; name every dim");
    } else if (is_name_start(c) || c == '1') {
      size_t end = pos + 1;
      if (c != '1') {
        while (end < text.size() && is_name_char(text[end])) ++end;
      } else if (end < text.size() && std::isalnum(static_cast<unsigned char>(text[end]))) {
        return fail(pos, "a rearrange axis name must start with a letter or '_'");
      }
      std::string name = c == '1' ? std::string() : std::string(text.substr(pos, end - pos));
      if (open != kClosed) {
        side->back().names.push_back(std::move(name));
      } else {
        side->push_back(Group{{std::move(name)}, false});
      }
      pos = end;
    } else {
      return fail(pos, std::string("unexpected character '") + c + "' in rearrange pattern");
    }
  }
  if (open != kClosed) return fail(open, "'(' is not closed");
  if (!seen_arrow) return fail(text.size(), "a rearrange pattern needs '->'");
  return pattern;
}

std::string pattern_text(const Pattern& pattern) {
  auto side_text = [](const std::vector<Group>& side) {
    std::string out;
    for (const Group& group : side) {
      if (!out.empty()) out += " ";
      std::string names;
      for (const std::string& name : group.names)
        names += (names.empty() ? "" : " ") + (name.empty() ? std::string("1") : name);
      out += group.parenthesized ? "(" + names + ")" : names;
    }
    return out;
  };
  return side_text(pattern.left) + " -> " + side_text(pattern.right);
}

}  // namespace

View::View(Tensor base) : View(std::move(base), std::string()) { text_ = base_.to_string(); }

View::View(Tensor base, std::string text) : base_(std::move(base)), text_(std::move(text)) {
  std::vector<std::vector<Digit>> dims;
  std::int64_t stride = base_.size();
  for (std::int64_t extent : base_.shape()) {
    stride /= extent;
    dims.push_back({Digit{extent, stride}});
  }
  *this = with(std::move(dims), 0, "");
}

View View::with(std::vector<std::vector<Digit>> dims, std::int64_t offset,
                const std::string& suffix) const {
  View out = *this;
  out.shape_.clear();
  out.dims_.clear();
  out.flat_digits_.clear();
  out.size_ = 1;
  for (auto& dim : dims) {
    out.shape_.push_back(product(dim));
    out.size_ *= out.shape_.back();
    out.dims_.push_back(canonical(dim));
    for (const Digit& digit : out.dims_.back()) out.flat_digits_.push_back(digit);
  }
  out.offset_ = offset;
  out.flat_suffix_.assign(out.flat_digits_.size(), 1);
  for (size_t i = out.flat_digits_.size(); i-- > 1;)
    out.flat_suffix_[i - 1] = out.flat_suffix_[i] * out.flat_digits_[i].extent;
  out.flat_power_of_two_ = true;
  out.flat_shift_.assign(out.flat_digits_.size(), 0);
  for (size_t i = 0; i < out.flat_digits_.size(); ++i) {
    const std::int64_t extent = out.flat_digits_[i].extent, suffix = out.flat_suffix_[i];
    if (extent <= 0 || (extent & (extent - 1)) != 0 || (suffix & (suffix - 1)) != 0) {
      out.flat_power_of_two_ = false;
      break;
    }
    out.flat_shift_[i] = std::countr_zero(static_cast<std::uint64_t>(suffix));
  }
  out.text_ = text_ + suffix;
  return out;
}

Result<View> View::parse(std::string_view text) { return detail::parse_view(text); }

Result<View> View::rearrange(std::string_view pattern_source,
                             const std::vector<std::pair<std::string, std::int64_t>>& sizes) const {
  return rearrange_at(pattern_source, sizes, 0);
}

Result<View> View::rearrange_at(std::string_view pattern_source,
                                const std::vector<std::pair<std::string, std::int64_t>>& sizes,
                                int column) const {
  auto parsed = parse_pattern(pattern_source, column);
  if (!parsed) return std::move(parsed).error();
  const Pattern& pattern = *parsed;
  const std::string where = "rearrange(\"" + pattern_text(pattern) + "\")";
  if (pattern.left.size() != shape_.size())
    return invalid(where + " has " + std::to_string(pattern.left.size()) +
                   " groups on the left but the view has " + std::to_string(shape_.size()) +
                   " dims " + shape_to_string(shape_));
  if (pattern.right.size() > static_cast<size_t>(kMaxIters))
    return Error(ErrorCode::kLimit,
                 where + " makes more than " + std::to_string(kMaxIters) + " dims");
  std::map<std::string, std::int64_t> known;
  for (const auto& [name, size] : sizes) {
    if (!known.emplace(name, size).second)
      return invalid(where + " is given size " + name + " twice");
    if (size < 1)
      return invalid(where + " is given size " + name + "=" + std::to_string(size) +
                     " but sizes must be at least 1");
  }
  std::set<std::string> left_names;
  for (const Group& group : pattern.left)
    for (const std::string& name : group.names)
      if (!name.empty() && !left_names.insert(name).second)
        return invalid(where + " names '" + name + "' twice on the left");
  for (const auto& [name, size] : known)
    if (!left_names.count(name))
      return invalid(where + " is given size " + name + "=" + std::to_string(size) +
                     " but the left side has no axis '" + name + "'");
  std::map<std::string, std::vector<Digit>> digits_of;
  for (size_t d = 0; d < pattern.left.size(); ++d) {
    const Group& group = pattern.left[d];
    std::vector<std::int64_t> extents(group.names.size(), 1);
    std::optional<size_t> unknown;
    std::int64_t known_product = 1;
    for (size_t k = 0; k < group.names.size(); ++k) {
      const std::string& name = group.names[k];
      if (name.empty()) continue;
      auto it = known.find(name);
      if (it == known.end()) {
        if (unknown)
          return invalid(where + " cannot infer both '" + group.names[*unknown] + "' and '" + name +
                         "' in left group " + std::to_string(d) + "; give one as a keyword");
        unknown = k;
        continue;
      }
      extents[k] = it->second;
      if (__builtin_mul_overflow(known_product, it->second, &known_product))
        known_product = std::numeric_limits<std::int64_t>::max();
    }
    const std::int64_t extent = shape_[d];
    if (unknown) {
      if (extent % known_product != 0)
        return invalid(where + ": dim " + std::to_string(d) + " has extent " +
                       std::to_string(extent) + ", not a multiple of " +
                       std::to_string(known_product) + ", so '" + group.names[*unknown] +
                       "' cannot be inferred");
      extents[*unknown] = extent / known_product;
    } else if (known_product != extent) {
      return invalid(where + ": left group " + std::to_string(d) + " has size " +
                     std::to_string(known_product) + " but dim " + std::to_string(d) +
                     " has extent " + std::to_string(extent));
    }
    auto parts = split(dims_[d], extents);
    if (!parts) return invalid(where + " cannot split dim " + std::to_string(d) + " exactly");
    for (size_t k = 0; k < group.names.size(); ++k)
      if (!group.names[k].empty()) digits_of[group.names[k]] = std::move((*parts)[k]);
  }
  std::set<std::string> right_names;
  std::vector<std::vector<Digit>> dims;
  for (const Group& group : pattern.right) {
    std::vector<Digit> dim;
    for (const std::string& name : group.names) {
      if (name.empty()) continue;
      if (!left_names.count(name))
        return invalid(where + " names '" + name + "' on the right but not on the left");
      if (!right_names.insert(name).second)
        return invalid(where + " names '" + name + "' twice on the right");
      const auto& digits = digits_of[name];
      dim.insert(dim.end(), digits.begin(), digits.end());
    }
    dims.push_back(std::move(dim));
  }
  for (const std::string& name : left_names)
    if (!right_names.count(name))
      return invalid(where + " names '" + name + "' on the left but not on the right");
  std::string suffix = ".rearrange(\"" + pattern_text(pattern) + "\"";
  for (const auto& [name, size] : sizes) suffix += ", " + name + "=" + std::to_string(size);
  return with(std::move(dims), offset_, suffix + ")");
}

Result<View> View::view(Span<const std::int64_t> new_shape) const {
  const std::string where = "view(" + join(new_shape) + ")";
  if (new_shape.empty()) return invalid(where + " needs at least one extent");
  if (new_shape.size() > static_cast<size_t>(kMaxIters))
    return Error(ErrorCode::kLimit,
                 where + " has more than " + std::to_string(kMaxIters) + " extents");
  std::vector<std::int64_t> shape(new_shape.begin(), new_shape.end());
  std::optional<size_t> unknown;
  std::int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1 && !unknown) {
      unknown = i;
      continue;
    }
    if (shape[i] < 1)
      return invalid(where + " has extent " + std::to_string(shape[i]) +
                     "; extents must be at least 1 (one may be -1)");
    if (__builtin_mul_overflow(known, shape[i], &known) || known > kMaxElements)
      return invalid(where + " has more elements than the view's " + std::to_string(size_));
  }
  if (unknown) {
    if (size_ % known != 0)
      return invalid(where + " cannot infer -1: " + std::to_string(size_) +
                     " elements are not a multiple of " + std::to_string(known));
    shape[*unknown] = size_ / known;
    known = size_;
  }
  if (known != size_)
    return invalid(where + " has " + std::to_string(known) + " elements but the view " +
                   shape_to_string(shape_) + " has " + std::to_string(size_));
  // Fuse across dims too: (2,3) viewed as (3,2) needs the digits of both dims as one.
  auto parts = split(canonical(flat_digits_), shape);
  if (!parts)
    return invalid(where + " cannot be expressed exactly on view shape " + shape_to_string(shape_) +
                   "; reshape before slicing or permuting");
  return with(std::move(*parts), offset_, ".view(" + join(shape) + ")");
}

Result<View> View::permute(Span<const std::int64_t> order) const {
  const std::string where = "permute(" + join(order) + ")";
  if (order.size() != shape_.size())
    return invalid(where + " has " + std::to_string(order.size()) + " entries but the view has " +
                   std::to_string(shape_.size()) + " dims");
  std::vector<bool> seen(shape_.size(), false);
  std::vector<std::vector<Digit>> dims;
  for (std::int64_t d : order) {
    if (d < 0 || d >= static_cast<std::int64_t>(shape_.size()))
      return invalid(where + " names dim " + std::to_string(d) + " but the view has " +
                     std::to_string(shape_.size()) + " dims");
    if (seen[static_cast<size_t>(d)])
      return invalid(where + " names dim " + std::to_string(d) + " twice");
    seen[static_cast<size_t>(d)] = true;
    dims.push_back(dims_[static_cast<size_t>(d)]);
  }
  return with(std::move(dims), offset_, ".permute(" + join(order) + ")");
}

Result<View> View::index(Span<const Slice> slices) const {
  if (slices.empty()) return invalid("an index needs at least one entry");
  if (slices.size() > shape_.size())
    return invalid("index has " + std::to_string(slices.size()) + " entries but the view has " +
                   std::to_string(shape_.size()) + " dims " + shape_to_string(shape_));
  std::vector<std::vector<Digit>> dims;
  std::int64_t offset = offset_;
  std::string suffix = "[";
  for (size_t d = 0; d < shape_.size(); ++d) {
    const std::int64_t extent = shape_[d];
    if (d >= slices.size()) {
      dims.push_back(dims_[d]);
      continue;
    }
    const Slice& slice = slices[d];
    suffix += d ? ", " : "";
    if (!slice.keep) {
      if (slice.begin < 0 || slice.begin >= extent)
        return invalid("index " + std::to_string(slice.begin) + " is out of range for dim " +
                       std::to_string(d) + " of extent " + std::to_string(extent));
      offset += value_of(dims_[d], slice.begin);
      suffix += std::to_string(slice.begin);
      continue;
    }
    const bool whole_end = slice.end == Slice::kToEnd;
    const std::int64_t end = whole_end ? extent : slice.end;
    if (slice.begin < 0 || end > extent || slice.begin >= end)
      return invalid("range " + std::to_string(slice.begin) + ":" + std::to_string(end) +
                     " is not a non-empty range inside dim " + std::to_string(d) + " of extent " +
                     std::to_string(extent));
    suffix += (slice.begin ? std::to_string(slice.begin) : "") + ":" +
              (whole_end ? "" : std::to_string(end));
    // Keep the low digits whole while the range is aligned to them; the first digit the range
    // fits inside becomes the new top digit; any other range is not a digit list.
    const std::vector<Digit>& digits = dims_[d];
    std::vector<Digit> kept;
    std::int64_t begin = slice.begin;
    std::int64_t length = end - slice.begin;
    for (size_t k = digits.size(); k-- > 0 && length > 1;) {
      const Digit& digit = digits[k];
      if (begin % digit.extent + length <= digit.extent) {
        kept.insert(kept.begin(), Digit{length, digit.stride});
        length = 1;
      } else if (begin % digit.extent == 0 && length % digit.extent == 0) {
        kept.insert(kept.begin(), digit);
        begin /= digit.extent;
        length /= digit.extent;
      } else {
        return invalid("range " + std::to_string(slice.begin) + ":" + std::to_string(end) +
                       " of dim " + std::to_string(d) + " cannot be represented exactly on a dim " +
                       "merged from extents not aligned to it");
      }
    }
    offset += value_of(digits, slice.begin);
    dims.push_back(std::move(kept));
  }
  if (dims.empty())
    return invalid("index " + suffix +
                   "] drops every dim of the view; keep one with a range i:i+1");
  return with(std::move(dims), offset, suffix + "]");
}

std::int64_t View::base_index(std::int64_t flat) const noexcept {
  std::int64_t out = offset_;
  if (flat_power_of_two_ && flat >= 0) {
    for (size_t i = 0; i < flat_digits_.size(); ++i)
      out += ((flat >> flat_shift_[i]) & (flat_digits_[i].extent - 1)) * flat_digits_[i].stride;
    return out;
  }
  for (size_t i = 0; i < flat_digits_.size(); ++i)
    out += (flat / flat_suffix_[i]) % flat_digits_[i].extent * flat_digits_[i].stride;
  return out;
}

Result<std::vector<PhysCoord>> View::apply(Span<const std::int64_t> coord) const {
  if (coord.size() != shape_.size())
    return invalid("coordinate (" + join(coord) + ") has " + std::to_string(coord.size()) +
                   " entries but the view has " + std::to_string(shape_.size()) + " dims " +
                   shape_to_string(shape_));
  std::int64_t flat = 0;
  for (size_t d = 0; d < coord.size(); ++d) {
    if (coord[d] < 0 || coord[d] >= shape_[d])
      return invalid("coordinate (" + join(coord) + ") is outside view shape " +
                     shape_to_string(shape_) + " in dim " + std::to_string(d));
    flat = flat * shape_[d] + coord[d];
  }
  PhysCoord base;
  apply_flat(flat, base);
  std::vector<PhysCoord> out(replica_offsets().begin(), replica_offsets().end());
  for (PhysCoord& c : out) c += base;
  return out;
}

std::uint64_t View::hash() const noexcept {
  WordHasher hasher(0x56696577ull);  // "View"
  auto mix = [&hasher](std::uint64_t word) { hasher.add(word); };
  mix(base_.hash());
  mix(shape_.size());
  for (std::int64_t extent : shape_) mix(static_cast<std::uint64_t>(extent));
  mix(static_cast<std::uint64_t>(offset_));
  for (const auto& dim : dims_) {
    mix(dim.size());
    for (const Digit& digit : dim) {
      mix(static_cast<std::uint64_t>(digit.extent));
      mix(static_cast<std::uint64_t>(digit.stride));
    }
  }
  return hasher.finish();
}

std::ostream& operator<<(std::ostream& os, const View& view) { return os << view.to_string(); }

}  // namespace tmem
