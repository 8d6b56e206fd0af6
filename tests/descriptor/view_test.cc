// Tensor, the TIRx layout factories and View: einops rearrange, view, permute, indexing, apply,
// canonical text, property tests and one negative test per error message.
#include "tmem/view.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <sstream>

#include "tmem/tensor.h"

namespace tmem {
namespace {

constexpr const char* kSeedPattern = "(wh r) (wl c) -> (wl wh) r c";
const std::vector<std::pair<std::string, std::int64_t>> kSeedSizes = {
    {"wh", 2}, {"r", 32}, {"wl", 2}};

View parse(std::string_view text) {
  auto view = View::parse(text);
  EXPECT_TRUE(view.ok()) << text << ": " << (view.ok() ? "" : view.error().message());
  return std::move(view).value();
}

PhysCoord at(const View& view, std::vector<std::int64_t> coord) {
  auto set = view.apply(coord);
  EXPECT_TRUE(set.ok()) << (set.ok() ? "" : set.error().message());
  return set.value().front();
}

PhysCoord coord(std::initializer_list<std::pair<Axis, std::int64_t>> values) {
  PhysCoord out;
  for (auto [axis, value] : values) out[axis] = value;
  return out;
}

// Calls fn(coord) for every coordinate of `shape` in row-major order.
template <class Fn>
void for_each_coord(std::span<const std::int64_t> shape, Fn fn) {
  std::int64_t size = 1;
  for (std::int64_t extent : shape) size *= extent;
  std::vector<std::int64_t> coord(shape.size());
  for (std::int64_t flat = 0; flat < size; ++flat) {
    std::int64_t rest = flat;
    for (size_t d = shape.size(); d-- > 0;) {
      coord[d] = rest % shape[d];
      rest /= shape[d];
    }
    fn(flat, coord);
  }
}

// ---- Tensor and factories ----

TEST(Tensor, MakeAndText) {
  Tensor tensor =
      Tensor::make({64, 128}, Layout::parse("S[(64,2,64):(1@TLane,64@TLane,1@TCol)]").value())
          .value();
  EXPECT_EQ(tensor.to_string(), "tensor((64,128), S[(64,2,64):(1@TLane,64@TLane,1@TCol)], f32)");
  EXPECT_EQ(tensor.size(), 8192);
  Tensor one = Tensor::make({64}, Layout::parse("S[64:1@laneid]").value(), DType::kBF16).value();
  EXPECT_EQ(one.to_string(), "tensor((64,), S[64:1@laneid], bf16)");
  EXPECT_EQ(parse(one.to_string()).base(), one);
  std::ostringstream os;
  os << tensor;
  EXPECT_EQ(os.str(), tensor.to_string());
  EXPECT_NE(tensor.hash(), one.hash());
}

TEST(Tensor, Errors) {
  Layout layout = Layout::parse("S[64:1]").value();
  EXPECT_EQ(Tensor::make({8, 4}, layout).error().message(),
            "tensor shape (8,4) has 32 elements but layout S[64:1] has 64");
  EXPECT_EQ(Tensor::make({}, layout).error().message(), "a tensor shape needs at least one extent");
  EXPECT_EQ(Tensor::make({0, 64}, layout).error().message(),
            "tensor shape (0,64) has extent 0 in dim 0 but extents must be at least 1");
  auto big = Tensor::make({1 << 21, 1 << 20}, layout);
  EXPECT_EQ(big.error().code(), ErrorCode::kLimit);
  EXPECT_EQ(big.error().message(), "tensor shape (2097152,1048576) has more than 2^40 elements");
  EXPECT_EQ(Tensor::make(std::vector<std::int64_t>(65, 1), layout).error().code(),
            ErrorCode::kLimit);
}

// Expected (TLane, TCol) of logical (r, c) for each letter (docs/descriptor-language.md §Factories
// table).
PhysCoord datapath_expect(char letter, std::int64_t cols, std::int64_t sub_slab, std::int64_t r,
                          std::int64_t c) {
  switch (letter) {
    case 'A':
    case 'D':
      return coord({{Axis::kTLane, r}, {Axis::kTCol, c}});
    case 'B':
    case 'E':
      return coord({{Axis::kTLane, r + 64 * (c / (cols / 2))}, {Axis::kTCol, c % (cols / 2)}});
    case 'C':
    case 'F':
      return coord({{Axis::kTLane, 32 * (r / 16) + 16 * sub_slab + r % 16}, {Axis::kTCol, c}});
    default:
      return coord({{Axis::kTLane, r + 32 * (c / (cols / 4))}, {Axis::kTCol, c % (cols / 4)}});
  }
}

TEST(Factories, EveryDatapathLetter) {
  struct Case {
    char letter;
    std::int64_t rows;
    std::int64_t sub_slab;
  };
  const Case cases[] = {{'A', 128, 0}, {'B', 64, 0}, {'C', 64, 0}, {'C', 64, 1}, {'D', 128, 0},
                        {'E', 64, 0},  {'F', 64, 0}, {'F', 64, 1}, {'G', 32, 0}};
  for (const Case& test : cases) {
    for (std::int64_t cols : {8, 64, 128}) {
      Tensor tensor =
          tmem_datapath_layout(std::string(1, test.letter), test.rows, cols, test.sub_slab).value();
      View view(tensor);
      std::string text = "tmem_datapath_layout(\"" + std::string(1, test.letter) + "\", " +
                         std::to_string(test.rows) + ", " + std::to_string(cols) +
                         (test.sub_slab ? ", sub_slab=1" : "") + ")";
      View parsed = parse(text);
      EXPECT_EQ(parsed, view);
      EXPECT_EQ(parsed.to_string(), text);
      for (std::int64_t r = 0; r < test.rows; ++r)
        for (std::int64_t c = 0; c < cols; ++c)
          ASSERT_EQ(at(parsed, {r, c}), datapath_expect(test.letter, cols, test.sub_slab, r, c))
              << text << " at " << r << "," << c;
    }
  }
  EXPECT_EQ(tmem_datapath_layout("B", 64, 128)->layout().to_string(),
            "S[(64,2,64):(1@TLane,64@TLane,1@TCol)]");
  EXPECT_EQ(tmem_datapath_layout("F", 64, 32, 1)->layout().to_string(),
            "S[(4,16,32):(32@TLane,1@TLane,1@TCol)] + 16@TLane");
}

TEST(Factories, DatapathErrors) {
  const std::pair<Result<Tensor>, const char*> cases[] = {
      {tmem_datapath_layout("H", 64, 64),
       "unknown datapath layout letter \"H\" (allowed: A, B, C, D, E, F, G)"},
      {tmem_datapath_layout("AB", 64, 64),
       "unknown datapath layout letter \"AB\" (allowed: A, B, C, D, E, F, G)"},
      {tmem_datapath_layout("A", 64, 64), "tmem_datapath_layout(\"A\") needs rows 128, not 64"},
      {tmem_datapath_layout("G", 64, 64), "tmem_datapath_layout(\"G\") needs rows 32, not 64"},
      {tmem_datapath_layout("B", 64, 0), "tmem_datapath_layout(\"B\") needs cols >= 1, not 0"},
      {tmem_datapath_layout("F", 64, 64, 2),
       "tmem_datapath_layout(\"F\") needs sub_slab 0 or 1, not 2"},
      {tmem_datapath_layout("A", 128, 64, 1),
       "tmem_datapath_layout(\"A\") takes no sub_slab because it spans both 16-lane sub-slabs"},
      {tmem_datapath_layout("E", 64, 64, 1),
       "tmem_datapath_layout(\"E\") takes no sub_slab because it folds column halves across "
       "64-lane halves"},
      {tmem_datapath_layout("G", 32, 64, 1),
       "tmem_datapath_layout(\"G\") takes no sub_slab because it spans all 32 lanes of a slab"},
      {tmem_datapath_layout("B", 64, 65), "tmem_datapath_layout(\"B\") needs even cols, not 65"},
      {tmem_datapath_layout("G", 32, 66),
       "tmem_datapath_layout(\"G\") needs cols a multiple of 4, not 66"},
      {wg_local_layout(64, 129),
       "wg_local_layout needs rows in [1, 128] (threads of a warpgroup), not 129"},
      {wg_local_layout(0), "wg_local_layout needs cols >= 1, not 0"},
  };
  for (const auto& [result, message] : cases) {
    ASSERT_FALSE(result.ok()) << message;
    EXPECT_EQ(result.error().code(), ErrorCode::kLayout);
    EXPECT_EQ(result.error().message(), message);
  }
}

TEST(Factories, WgLocalLayout) {
  View view = parse("wg_local_layout(64)");
  EXPECT_EQ(view.base().layout().to_string(), "S[(128,64):(1@tid_in_wg,1)]");
  EXPECT_EQ(at(view, {5, 7}), coord({{Axis::kTidInWg, 5}, {Axis::kM, 7}}));
  View rows = parse("wg_local_layout(16, rows=32, dtype=bf16)");
  EXPECT_EQ(rows.to_string(), "wg_local_layout(16, rows=32, dtype=bf16)");
  EXPECT_EQ(std::vector<std::int64_t>(rows.shape().begin(), rows.shape().end()),
            (std::vector<std::int64_t>{32, 16}));
  EXPECT_EQ(rows.dtype(), DType::kBF16);
}

// ---- View ----

// The seed's Layout B round trip: element (g, r, c) of the (4,32,64) view sits at lane 32g + r,
// column c, and is owned by thread 32g + r, slot c.
TEST(View, SeedRearrange) {
  View tmem_view = parse(
      "tmem_datapath_layout(\"B\",64,128).rearrange(\"(wh r) (wl c) -> (wl wh) r c\", wh=2, r=32, "
      "wl=2)");
  View regs_view = parse(
      "tensor((64,128), S[(64, 2, 64) : (1 @ tid_in_wg, 64 @ tid_in_wg, 1)], f32)"
      ".rearrange(\"(wh r) (wl c) -> (wl wh) r c\", wh=2, r=32, wl=2)");
  EXPECT_EQ(
      tmem_view.to_string(),
      "tmem_datapath_layout(\"B\", 64, 128).rearrange(\"(wh r) (wl c) -> (wl wh) r c\", wh=2, "
      "r=32, wl=2)");
  for (const View* view : {&tmem_view, &regs_view}) {
    ASSERT_EQ(std::vector<std::int64_t>(view->shape().begin(), view->shape().end()),
              (std::vector<std::int64_t>{4, 32, 64}));
    EXPECT_EQ(view->size(), 8192);
  }
  PhysCoord fast;
  for_each_coord(tmem_view.shape(), [&](std::int64_t flat, const std::vector<std::int64_t>& x) {
    const std::int64_t g = x[0], r = x[1], c = x[2];
    ASSERT_EQ(at(tmem_view, x), coord({{Axis::kTLane, 32 * g + r}, {Axis::kTCol, c}}));
    tmem_view.apply_flat(flat, fast);
    ASSERT_EQ(fast, coord({{Axis::kTLane, 32 * g + r}, {Axis::kTCol, c}}));
    ASSERT_EQ(at(regs_view, x), coord({{Axis::kTidInWg, 32 * g + r}, {Axis::kM, c}}));
  });
  // Through the C++ API, the same view.
  View api =
      View(tmem_datapath_layout("B", 64, 128).value()).rearrange(kSeedPattern, kSeedSizes).value();
  EXPECT_EQ(api, tmem_view);
  EXPECT_EQ(api.hash(), tmem_view.hash());
}

TEST(View, LayoutBIdentityView) {
  View view = parse("tensor((64,128), S[(64,2,64):(1@TLane,64@TLane,1@TCol)], f32)");
  for (std::int64_t r : {0, 17, 63})
    for (std::int64_t c : {0, 5, 63, 64, 127})
      EXPECT_EQ(at(view, {r, c}),
                coord({{Axis::kTLane, r + 64 * (c / 64)}, {Axis::kTCol, c % 64}}));
}

TEST(View, ReplicaExampleThroughAView) {
  View view = parse(
      "tensor((8,16), S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1)] + R[2:4@warpid] + 5@warpid, "
      "b32)");
  auto set = view.apply(std::vector<std::int64_t>{1, 3}).value();
  ASSERT_EQ(set.size(), 2u);
  EXPECT_EQ(set[0], coord({{Axis::kLaneid, 5}, {Axis::kWarpid, 5}, {Axis::kM, 1}}));
  EXPECT_EQ(set[1], coord({{Axis::kLaneid, 5}, {Axis::kWarpid, 9}, {Axis::kM, 1}}));
  EXPECT_EQ(view.replica_offsets().size(), 2u);
}

TEST(View, SixteenBitUnitsAreRaw) {
  // bf16: TCol counts 16-bit halves; unit u is half u%2 of 32-bit cell u/2
  // (docs/descriptor-language.md §Units).
  View view = parse("tensor((32,16,2), S[(32,16,2):(1@TLane,4@TCol,2@TCol)], bf16)");
  EXPECT_EQ(at(view, {3, 5, 1}), coord({{Axis::kTLane, 3}, {Axis::kTCol, 22}}));
  EXPECT_EQ(units_per_word(view.dtype()), 2);
}

TEST(View, ReshapePermuteIndexChained) {
  View base = parse("tensor((8,16), S[(8,16):(1@TLane,1@TCol)], f32)");
  View reshaped = base.view(std::vector<std::int64_t>{2, 4, 16}).value();
  EXPECT_EQ(at(reshaped, {1, 2, 3}), coord({{Axis::kTLane, 6}, {Axis::kTCol, 3}}));
  View inferred = base.view(std::vector<std::int64_t>{-1, 32}).value();
  EXPECT_EQ(inferred.shape()[0], 4);
  View permuted = base.permute(std::vector<std::int64_t>{1, 0}).value();
  EXPECT_EQ(at(permuted, {3, 6}), coord({{Axis::kTLane, 6}, {Axis::kTCol, 3}}));
  View sliced = parse("tensor((8,16), S[(8,16):(1@TLane,1@TCol)], f32)[2:6, 4]");
  ASSERT_EQ(sliced.ndim(), 1);
  EXPECT_EQ(sliced.shape()[0], 4);
  EXPECT_EQ(at(sliced, {1}), coord({{Axis::kTLane, 3}, {Axis::kTCol, 4}}));
  View chained = parse(
      "tensor((8,16), S[(8,16):(1@TLane,1@TCol)], f32).permute(1, 0)[1:3].view(2, 2, 4)"
      ".rearrange('a b (x y) -> (b a) y x', x=2)[:, 1:]");
  EXPECT_EQ(std::vector<std::int64_t>(chained.shape().begin(), chained.shape().end()),
            (std::vector<std::int64_t>{4, 1, 2}));
  // (ba, y, x) with ba = 2b + a, y = 1 + y', column = 1 + a, view dims (2,2,4) over (col, row) of
  // the sliced (2,8): index (a, b, 2x + y) -> flat a*8 + b*4 + 2x + y of (2 cols, 8 rows).
  for_each_coord(chained.shape(), [&](std::int64_t, const std::vector<std::int64_t>& x) {
    const std::int64_t b = x[0] / 2, a = x[0] % 2, y = x[1] + 1, xx = x[2];
    const std::int64_t row = b * 4 + 2 * xx + y;
    ASSERT_EQ(at(chained, x), coord({{Axis::kTLane, row}, {Axis::kTCol, 1 + a}}));
  });
  EXPECT_EQ(parse(chained.to_string()), chained);
}

TEST(View, SplitAccessSlices) {
  // The seed's 16x32bx2 example: mem[:, :16, :4] and mem[:, 16:32, 8:12] of a (4,32,16) view.
  const std::string mem =
      "tensor((128,16), S[(128,16):(1@TLane,1@TCol)], f32).rearrange('(w l) c -> w l c', w=4)";
  View low = parse(mem + "[:, :16, :4]");
  View high = parse(mem + "[:, 16:32, 8:12]");
  EXPECT_EQ(at(low, {2, 3, 1}), coord({{Axis::kTLane, 67}, {Axis::kTCol, 1}}));
  EXPECT_EQ(at(high, {2, 3, 1}), coord({{Axis::kTLane, 83}, {Axis::kTCol, 9}}));
  EXPECT_EQ(high.to_string(), mem.substr(0, mem.find(".rearrange")) +
                                  ".rearrange(\"(w l) c -> w l c\", w=4)[:, 16:32, 8:12]");
}

TEST(View, ReshapeAcrossDims) {
  View view = parse("tensor((2,3), S[(2,3):(1@TLane,1@TCol)], f32).view(3, 2)");
  EXPECT_EQ(at(view, {2, 1}), coord({{Axis::kTLane, 1}, {Axis::kTCol, 2}}));
  View rows = parse("tensor((4,6), S[(4,6):(1@TLane,1@TCol)], f32)[1:3].view(4, 3)");
  EXPECT_EQ(at(rows, {3, 2}), coord({{Axis::kTLane, 2}, {Axis::kTCol, 5}}));
}

TEST(View, RangesOnMergedDims) {
  View merged = parse("tensor((4,8), S[(4,8):(1@TLane,1@TCol)], f32).view(32)");
  View aligned = parse("tensor((4,8), S[(4,8):(1@TLane,1@TCol)], f32).view(32)[8:24]");
  EXPECT_EQ(aligned.shape()[0], 16);
  for (std::int64_t i = 0; i < 16; ++i) EXPECT_EQ(at(aligned, {i}), at(merged, {8 + i}));
  View inner = parse("tensor((4,8), S[(4,8):(1@TLane,1@TCol)], f32).view(32)[9:13]");
  for (std::int64_t i = 0; i < 4; ++i) EXPECT_EQ(at(inner, {i}), at(merged, {9 + i}));
}

TEST(View, UnitAxesInRearrange) {
  View view = parse("tensor((4,8), S[(4,8):(1@TLane,1@TCol)], f32).rearrange('a b -> a 1 b ()')");
  EXPECT_EQ(std::vector<std::int64_t>(view.shape().begin(), view.shape().end()),
            (std::vector<std::int64_t>{4, 1, 8, 1}));
  View back = view.rearrange("a 1 b () -> a b").value();
  EXPECT_EQ(back, View(parse("tensor((4,8), S[(4,8):(1@TLane,1@TCol)], f32)").base()));
}

// ---- properties ----

const char* kViews[] = {
    "tmem_datapath_layout(\"B\", 64, 128).rearrange(\"(wh r) (wl c) -> (wl wh) r c\", wh=2, r=32, "
    "wl=2)",
    "tmem_datapath_layout(\"F\", 64, 32, sub_slab=1)",
    "tmem_datapath_layout(\"G\", 32, 64, dtype=bf16)[4:20, 8:]",
    "wg_local_layout(32, rows=64).permute(1, 0).view(4, 8, 64)",
    "tensor((8,16), S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1)] + R[2:4@warpid] + 5@warpid, "
    "b32)[1]",
    "tensor((128,), S[128:1@TLane], s32).view(4, 32)[3]",
    "tensor((64,), S[64:1@laneid], bf16)",
};

TEST(ViewProperties, ParsePrintIsIdentity) {
  for (const char* text : kViews) {
    View view = parse(text);
    View again = parse(view.to_string());
    EXPECT_EQ(again, view) << text;
    EXPECT_EQ(again.to_string(), view.to_string()) << text;
    EXPECT_EQ(again.hash(), view.hash()) << text;
  }
  // Spacing and quote style normalize to one text.
  EXPECT_EQ(
      parse(" tmem_datapath_layout( 'B' ,64,128 ) . rearrange ( '(wh r)   (wl c)->(wl wh) r c' , "
            "wh = 2 , r = 32 , wl = 2 ) ")
          .to_string(),
      kViews[0]);
}

TEST(ViewProperties, ElementCountIsPreserved) {
  View base = parse("tensor((8,16,4), S[(8,16,4):(1@TLane,4@TCol,1@TCol)], f32)");
  const std::int64_t n = base.size();
  EXPECT_EQ(base.rearrange("a (b c) d -> (d a) c b", {{"b", 4}}).value().size(), n);
  EXPECT_EQ(base.view(std::vector<std::int64_t>{4, 2, 64}).value().size(), n);
  EXPECT_EQ(base.permute(std::vector<std::int64_t>{2, 0, 1}).value().size(), n);
  EXPECT_EQ(parse(kViews[0]).size(), parse("tmem_datapath_layout(\"B\", 64, 128)").size());
}

// rearrange followed by its inverse is the identity map, on every element.
TEST(ViewProperties, RearrangeInverseIsIdentity) {
  struct Pair {
    const char* forward;
    std::vector<std::pair<std::string, std::int64_t>> sizes;
    const char* inverse;
    std::vector<std::pair<std::string, std::int64_t>> inverse_sizes;
  };
  const Pair pairs[] = {
      {kSeedPattern, kSeedSizes, "(wl wh) r c -> (wh r) (wl c)", {{"wl", 2}}},
      {"a b -> b a", {}, "b a -> a b", {}},
      {"(a b) c -> c (b a)", {{"a", 4}}, "c (b a) -> (a b) c", {{"a", 4}}},
      {"a (b c) -> (c a) b", {{"c", 8}}, "(c a) b -> a (b c)", {{"c", 8}}},
  };
  View base = parse("tmem_datapath_layout(\"B\", 64, 128)");
  for (const Pair& pair : pairs) {
    View forward = base.rearrange(pair.forward, pair.sizes).value();
    View back = forward.rearrange(pair.inverse, pair.inverse_sizes).value();
    EXPECT_EQ(back, base) << pair.forward;
    EXPECT_EQ(back.hash(), base.hash()) << pair.forward;
    PhysCoord x, y;
    for (std::int64_t flat = 0; flat < base.size(); ++flat) {
      back.apply_flat(flat, x);
      base.apply_flat(flat, y);
      ASSERT_EQ(x, y) << pair.forward << " at " << flat;
    }
  }
}

// A reference model: the base flat index of every element, row-major, with its shape.
struct Reference {
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> index;

  static std::int64_t count(const std::vector<std::int64_t>& shape) {
    return std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
  }
  Reference permute(const std::vector<std::int64_t>& order) const {
    Reference out;
    for (std::int64_t d : order) out.shape.push_back(shape[static_cast<size_t>(d)]);
    out.index.resize(index.size());
    for_each_coord(out.shape, [&](std::int64_t flat, const std::vector<std::int64_t>& x) {
      std::vector<std::int64_t> src(shape.size());
      for (size_t i = 0; i < order.size(); ++i) src[static_cast<size_t>(order[i])] = x[i];
      std::int64_t from = 0;
      for (size_t d = 0; d < shape.size(); ++d) from = from * shape[d] + src[d];
      out.index[static_cast<size_t>(flat)] = index[static_cast<size_t>(from)];
    });
    return out;
  }
  Reference slice(const std::vector<Slice>& slices) const {
    Reference out;
    std::vector<std::int64_t> begin(shape.size(), 0), extent = shape;
    for (size_t d = 0; d < slices.size(); ++d) {
      begin[d] = slices[d].begin;
      extent[d] = (slices[d].end == Slice::kToEnd ? shape[d] : slices[d].end) - slices[d].begin;
      if (!slices[d].keep) extent[d] = 1;
    }
    for (size_t d = 0; d < shape.size(); ++d)
      if (d >= slices.size() || slices[d].keep) out.shape.push_back(extent[d]);
    for_each_coord(extent, [&](std::int64_t, const std::vector<std::int64_t>& x) {
      std::int64_t from = 0;
      for (size_t d = 0; d < shape.size(); ++d) from = from * shape[d] + begin[d] + x[d];
      out.index.push_back(index[static_cast<size_t>(from)]);
    });
    return out;
  }
};

std::vector<std::int64_t> divisors(std::int64_t n) {
  std::vector<std::int64_t> out;
  for (std::int64_t d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

// Random chains of every operation against the reference model: the same base index for every
// element, a re-parsable text, an equal hash, a preserved element count.
TEST(ViewProperties, RandomChainsMatchTheReference) {
  std::mt19937_64 rng(20261130);
  auto pick = [&](std::int64_t n) {
    return static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n));
  };
  const std::int64_t extents[] = {1, 2, 3, 4, 6, 8, 12};
  int checked = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<std::int64_t> shape;
    for (std::int64_t d = 0, rank = 1 + pick(3); d < rank; ++d) shape.push_back(extents[pick(7)]);
    auto layout = Layout::row_major(shape).value();
    View view(Tensor::make(shape, layout).value());
    Reference ref{shape, {}};
    ref.index.resize(static_cast<size_t>(Reference::count(shape)));
    std::iota(ref.index.begin(), ref.index.end(), 0);
    for (int step = 0; step < 5; ++step) {
      const std::int64_t n = view.ndim();
      std::optional<View> next;
      Reference next_ref;
      switch (pick(4)) {
        case 0: {  // permute
          std::vector<std::int64_t> order(static_cast<size_t>(n));
          std::iota(order.begin(), order.end(), 0);
          std::shuffle(order.begin(), order.end(), rng);
          next = view.permute(order).value();
          next_ref = ref.permute(order);
          break;
        }
        case 1: {  // view: factor the element count into 1..3 extents
          std::vector<std::int64_t> target;
          std::int64_t rest = view.size();
          for (int k = 0, parts = 1 + static_cast<int>(pick(3)); k + 1 < parts; ++k) {
            auto ds = divisors(rest);
            target.push_back(ds[static_cast<size_t>(pick(static_cast<std::int64_t>(ds.size())))]);
            rest /= target.back();
          }
          target.push_back(rest);
          auto result = view.view(target);
          if (!result) {
            EXPECT_EQ(result.error().code(), ErrorCode::kLayout);
            // A contiguous run of the base can always be reshaped.
            bool contiguous = true;
            for (size_t i = 1; i < ref.index.size(); ++i)
              contiguous = contiguous && ref.index[i] == ref.index[i - 1] + 1;
            EXPECT_FALSE(contiguous) << view.to_string() << " -> " << result.error().message();
            continue;
          }
          next = *result;
          next_ref = Reference{target, ref.index};
          break;
        }
        case 2: {  // index
          std::vector<Slice> slices;
          for (std::int64_t d = 0, k = 1 + pick(n); d < k; ++d) {
            const std::int64_t extent = view.shape()[static_cast<size_t>(d)];
            const std::int64_t kind = pick(3);
            if (kind == 0) {
              slices.push_back(Slice::at(pick(extent)));
            } else if (kind == 1) {
              const std::int64_t begin = pick(extent);
              slices.push_back(Slice::range(begin, begin + 1 + pick(extent - begin)));
            } else {
              slices.push_back(Slice::all());
            }
          }
          auto result = view.index(slices);
          if (!result) {
            EXPECT_EQ(result.error().code(), ErrorCode::kLayout);
            continue;
          }
          next = *result;
          next_ref = ref.slice(slices);
          break;
        }
        default: {  // rearrange: split each dim in two, permute the names, merge neighbours
          std::string left, names_text;
          std::vector<std::pair<std::string, std::int64_t>> sizes;
          std::vector<std::string> names;
          std::vector<std::int64_t> split_shape;
          for (std::int64_t d = 0; d < n; ++d) {
            const std::int64_t extent = view.shape()[static_cast<size_t>(d)];
            auto ds = divisors(extent);
            const std::int64_t hi =
                ds[static_cast<size_t>(pick(static_cast<std::int64_t>(ds.size())))];
            const std::string a = "a" + std::to_string(d), b = "b" + std::to_string(d);
            left += "(" + a + " " + b + ") ";
            sizes.emplace_back(a, hi);
            names.push_back(a);
            names.push_back(b);
            split_shape.push_back(hi);
            split_shape.push_back(extent / hi);
          }
          std::vector<std::int64_t> order(names.size());
          std::iota(order.begin(), order.end(), 0);
          std::shuffle(order.begin(), order.end(), rng);
          std::string right;
          std::vector<std::int64_t> merged;
          for (size_t i = 0; i < order.size();) {
            const size_t width =
                std::min<size_t>(order.size() - i, 1 + static_cast<size_t>(pick(2)));
            right += "(";
            std::int64_t extent = 1;
            for (size_t k = 0; k < width; ++k) {
              right += (k ? " " : "") + names[static_cast<size_t>(order[i + k])];
              extent *= split_shape[static_cast<size_t>(order[i + k])];
            }
            right += ") ";
            merged.push_back(extent);
            i += width;
          }
          auto result = view.rearrange(left + "-> " + right, sizes);
          if (!result) {
            EXPECT_EQ(result.error().code(), ErrorCode::kLayout) << result.error().message();
            bool contiguous = true;
            for (size_t i = 1; i < ref.index.size(); ++i)
              contiguous = contiguous && ref.index[i] == ref.index[i - 1] + 1;
            EXPECT_FALSE(contiguous) << view.to_string() << " -> " << result.error().message();
            continue;
          }
          next = *result;
          Reference split_ref{split_shape, ref.index};
          next_ref = split_ref.permute(order);
          next_ref.shape = merged;
          break;
        }
      }
      ASSERT_EQ(std::vector<std::int64_t>(next->shape().begin(), next->shape().end()),
                next_ref.shape)
          << next->to_string();
      for (std::int64_t flat = 0; flat < next->size(); ++flat)
        ASSERT_EQ(next->base_index(flat), next_ref.index[static_cast<size_t>(flat)])
            << next->to_string() << " at " << flat;
      View again = parse(next->to_string());
      ASSERT_EQ(again, *next) << next->to_string();
      ASSERT_EQ(again.hash(), next->hash());
      view = *next;
      ref = next_ref;
      ++checked;
    }
  }
  EXPECT_GT(checked, 800);
}

TEST(View, ApplyErrors) {
  View view = parse("tmem_datapath_layout(\"D\", 128, 64)");
  EXPECT_EQ(view.apply(std::vector<std::int64_t>{1}).error().message(),
            "coordinate (1) has 1 entries but the view has 2 dims (128,64)");
  EXPECT_EQ(view.apply(std::vector<std::int64_t>{1, 64}).error().message(),
            "coordinate (1, 64) is outside view shape (128,64) in dim 1");
}

struct BadView {
  const char* text;
  ErrorCode code;
  const char* message;
};

// One case per parse and semantic error message of the view grammar and the view operations.
TEST(View, ErrorsPointAtTheColumn) {
  const BadView cases[] = {
      {"", ErrorCode::kParse,
       "at column 1: expected 'tensor(', 'tmem_datapath_layout(' or 'wg_local_layout(', found end "
       "of input"},
      {"layout(1)", ErrorCode::kParse,
       "at column 1: expected 'tensor(', 'tmem_datapath_layout(' or 'wg_local_layout(', found "
       "'layout'"},
      {"S[64:1@TLane]", ErrorCode::kParse,
       "at column 1: a layout alone is not a view; give it a shape as tensor((d0, d1, ...), "
       "S[...], dtype)"},
      {"tensor[", ErrorCode::kParse, "at column 7: expected '(' after 'tensor', found '['"},
      {"tensor((64,x), S[64:1])", ErrorCode::kParse,
       "at column 12: expected a shape extent, found 'x'"},
      {"tensor((64 S[64:1])", ErrorCode::kParse,
       "at column 12: expected ')' after the shape, found 'S'"},
      {"tensor(x, S[64:1])", ErrorCode::kParse,
       "at column 8: expected a shape '(d0, d1, ...)', found 'x'"},
      {"tensor((64,) S[64:1])", ErrorCode::kParse,
       "at column 14: expected ',' after the shape, found 'S'"},
      {"tensor((64,), S[64:1], f64)", ErrorCode::kParse,
       "at column 24: unknown dtype 'f64' (allowed: b32, f32, u32, s32, b16, f16, bf16, float32, "
       "float16, bfloat16, uint32, int32)"},
      {"tensor((64,), S[64:1], 7)", ErrorCode::kParse, "at column 24: expected a dtype, found '7'"},
      {"tensor((64,), S[64:1] f32)", ErrorCode::kParse,
       "at column 23: expected ')' to close 'tensor(', found 'f32'"},
      {"tensor((64,), S[32:1])", ErrorCode::kLayout,
       "at column 1: tensor shape (64,) has 64 elements but layout S[32:1] has 32"},
      {"tmem_datapath_layout(B, 64, 128)", ErrorCode::kParse,
       "at column 22: expected a quoted string, found 'B'"},
      {"tmem_datapath_layout(\"B, 64, 128)", ErrorCode::kParse,
       "at column 22: string is not closed"},
      {"tmem_datapath_layout(\"B\" 64, 128)", ErrorCode::kParse,
       "at column 26: expected ',' after the letter, found '6'"},
      {"tmem_datapath_layout(\"B\", 64, 128, slab=1)", ErrorCode::kParse,
       "at column 36: expected 'sub_slab=' or 'dtype=', found 'slab'"},
      {"tmem_datapath_layout(\"B\", 64, 128, sub_slab 1)", ErrorCode::kParse,
       "at column 45: expected '=' after 'sub_slab', found '1'"},
      {"tmem_datapath_layout(\"B\", 64, 128", ErrorCode::kParse,
       "at column 34: expected ')' to close 'tmem_datapath_layout(', found end of input"},
      {"  tmem_datapath_layout(\"Z\", 64, 128)", ErrorCode::kLayout,
       "at column 3: unknown datapath layout letter \"Z\" (allowed: A, B, C, D, E, F, G)"},
      {"tmem_datapath_layout(\"F\", 64, 128, sub_slab=-1)", ErrorCode::kLayout,
       "at column 1: tmem_datapath_layout(\"F\") needs sub_slab 0 or 1, not -1"},
      {"wg_local_layout(64, cols=3)", ErrorCode::kParse,
       "at column 21: expected 'rows=' or 'dtype=', found 'cols'"},
      {"wg_local_layout(64, rows=0)", ErrorCode::kLayout,
       "at column 1: wg_local_layout needs rows in [1, 128] (threads of a warpgroup), not 0"},
      {"wg_local_layout(64) x", ErrorCode::kParse,
       "at column 21: expected '.method(...)', '[index]' or end of input after the view, found "
       "'x'"},
      {"wg_local_layout(64).reshape(2)", ErrorCode::kParse,
       "at column 21: expected a method 'rearrange', 'view' or 'permute' after '.', found "
       "'reshape'"},
      {"wg_local_layout(64).view 2", ErrorCode::kParse,
       "at column 26: expected '(' after 'view', found '2'"},
      {"wg_local_layout(64).view(2,)", ErrorCode::kParse,
       "at column 28: expected an extent, found ')'"},
      {"wg_local_layout(64).permute(1 0)", ErrorCode::kParse,
       "at column 31: expected ')' to close 'permute(', found '0'"},
      {"wg_local_layout(64).rearrange(a b -> b a)", ErrorCode::kParse,
       "at column 31: expected a quoted string, found 'a'"},
      {"wg_local_layout(64).rearrange('a b -> b a', 3)", ErrorCode::kParse,
       "at column 45: expected a size 'name=INT', found '3'"},
      {"wg_local_layout(64).rearrange('a b -> b a', a 3)", ErrorCode::kParse,
       "at column 47: expected '=' after size name 'a', found '3'"},
      {"wg_local_layout(64).rearrange('a b -> b a', a=x)", ErrorCode::kParse,
       "at column 47: expected the size of 'a', found 'x'"},
      {"wg_local_layout(64).rearrange('a b -> b a' a=2)", ErrorCode::kParse,
       "at column 44: expected ')' to close 'rearrange(', found 'a'"},
      {"wg_local_layout(64).rearrange('((a) b -> b a')", ErrorCode::kParse,
       "at column 33: nested parentheses are not allowed in a rearrange pattern"},
      {"wg_local_layout(64).rearrange('a b) -> b a')", ErrorCode::kParse,
       "at column 35: ')' without a matching '('"},
      {"wg_local_layout(64).rearrange('(a b -> b a')", ErrorCode::kParse,
       "at column 32: '(' is not closed before '->'"},
      {"wg_local_layout(64).rearrange('a b -> b -> a')", ErrorCode::kParse,
       "at column 41: a rearrange pattern has only one '->'"},
      {"wg_local_layout(64).rearrange('a ... -> a ...')", ErrorCode::kParse,
       "at column 34: ellipsis '...' is not supported; name every dim"},
      {"wg_local_layout(64).rearrange('a 1b -> a b')", ErrorCode::kParse,
       "at column 34: a rearrange axis name must start with a letter or '_'"},
      {"wg_local_layout(64).rearrange('a b -> (b a')", ErrorCode::kParse,
       "at column 39: '(' is not closed"},
      {"wg_local_layout(64).rearrange('a b')", ErrorCode::kParse,
       "at column 35: a rearrange pattern needs '->'"},
      {"wg_local_layout(64).rearrange('a b -> b+a')", ErrorCode::kParse,
       "at column 40: unexpected character '+' in rearrange pattern"},
      {"wg_local_layout(64).rearrange('a b c -> a b c')", ErrorCode::kLayout,
       "at column 21: rearrange(\"a b c -> a b c\") has 3 groups on the left but the view has 2 "
       "dims (128,64)"},
      {"wg_local_layout(64).rearrange('a b -> a b', a=2, a=2)", ErrorCode::kLayout,
       "at column 21: rearrange(\"a b -> a b\") is given size a twice"},
      {"wg_local_layout(64).rearrange('a b -> a b', a=0)", ErrorCode::kLayout,
       "at column 21: rearrange(\"a b -> a b\") is given size a=0 but sizes must be at least 1"},
      {"wg_local_layout(64).rearrange('a a -> a', a=2)", ErrorCode::kLayout,
       "at column 21: rearrange(\"a a -> a\") names 'a' twice on the left"},
      {"wg_local_layout(64).rearrange('a b -> a b', z=2)", ErrorCode::kLayout,
       "at column 21: rearrange(\"a b -> a b\") is given size z=2 but the left side has no axis "
       "'z'"},
      {"wg_local_layout(64).rearrange('(a b) c -> a b c')", ErrorCode::kLayout,
       "at column 21: rearrange(\"(a b) c -> a b c\") cannot infer both 'a' and 'b' in left group "
       "0; "
       "give one as a keyword"},
      {"wg_local_layout(64).rearrange('(a b) c -> a b c', a=3)", ErrorCode::kLayout,
       "at column 21: rearrange(\"(a b) c -> a b c\"): dim 0 has extent 128, not a multiple of 3, "
       "so "
       "'b' cannot be inferred"},
      {"wg_local_layout(64).rearrange('(a b) c -> a b c', a=4, b=4)", ErrorCode::kLayout,
       "at column 21: rearrange(\"(a b) c -> a b c\"): left group 0 has size 16 but dim 0 has "
       "extent 128"},
      {"tensor((2,3), S[6:1]).permute(1,0).view(6).rearrange('(a b) -> a b', a=2)",
       ErrorCode::kLayout, "at column 44: rearrange(\"(a b) -> a b\") cannot split dim 0 exactly"},
      {"wg_local_layout(64).rearrange('a b -> a z')", ErrorCode::kLayout,
       "at column 21: rearrange(\"a b -> a z\") names 'z' on the right but not on the left"},
      {"wg_local_layout(64).rearrange('a b -> a b a')", ErrorCode::kLayout,
       "at column 21: rearrange(\"a b -> a b a\") names 'a' twice on the right"},
      {"wg_local_layout(64).rearrange('a b -> a')", ErrorCode::kLayout,
       "at column 21: rearrange(\"a b -> a\") names 'b' on the left but not on the right"},
      {"wg_local_layout(64).view(3, -1)", ErrorCode::kLayout,
       "at column 21: view(3, -1) cannot infer -1: 8192 elements are not a multiple of 3"},
      {"wg_local_layout(64).view(0, 8192)", ErrorCode::kLayout,
       "at column 21: view(0, 8192) has extent 0; extents must be at least 1 (one may be -1)"},
      {"wg_local_layout(64).view(64, 64)", ErrorCode::kLayout,
       "at column 21: view(64, 64) has 4096 elements but the view (128,64) has 8192"},
      {"tensor((2,3), S[6:1]).permute(1,0).view(2,3)", ErrorCode::kLayout,
       "at column 36: view(2, 3) cannot be expressed exactly on view shape (3,2); reshape before "
       "slicing or permuting"},
      {"wg_local_layout(64).permute(0)", ErrorCode::kLayout,
       "at column 21: permute(0) has 1 entries but the view has 2 dims"},
      {"wg_local_layout(64).permute(0, 2)", ErrorCode::kLayout,
       "at column 21: permute(0, 2) names dim 2 but the view has 2 dims"},
      {"wg_local_layout(64).permute(1, 1)", ErrorCode::kLayout,
       "at column 21: permute(1, 1) names dim 1 twice"},
      {"wg_local_layout(64)[1, 2, 3]", ErrorCode::kLayout,
       "at column 20: index has 3 entries but the view has 2 dims (128,64)"},
      {"wg_local_layout(64)[128]", ErrorCode::kLayout,
       "at column 20: index 128 is out of range for dim 0 of extent 128"},
      {"wg_local_layout(64)[:, 8:4]", ErrorCode::kLayout,
       "at column 20: range 8:4 is not a non-empty range inside dim 1 of extent 64"},
      {"wg_local_layout(64)[:, :65]", ErrorCode::kLayout,
       "at column 20: range 0:65 is not a non-empty range inside dim 1 of extent 64"},
      {"tensor((4,4), S[16:1]).permute(1,0).view(16)[2:6]", ErrorCode::kLayout,
       "at column 45: range 2:6 of dim 0 cannot be represented exactly on a dim merged from "
       "extents "
       "not aligned to it"},
      {"wg_local_layout(64)[1, 2]", ErrorCode::kLayout,
       "at column 20: index [1, 2] drops every dim of the view; keep one with a range i:i+1"},
      {"wg_local_layout(64)[x]", ErrorCode::kParse,
       "at column 21: expected an index, a range 'a:b' or ':', found 'x'"},
      {"wg_local_layout(64)[1:x]", ErrorCode::kParse,
       "at column 23: expected ']' to close the index, found 'x'"},
      {"wg_local_layout(64)[1", ErrorCode::kParse,
       "at column 22: expected ']' to close the index, found end of input"},
  };
  for (const BadView& bad : cases) {
    auto view = View::parse(bad.text);
    ASSERT_FALSE(view.ok()) << bad.text;
    EXPECT_EQ(view.error().code(), bad.code) << bad.text;
    EXPECT_EQ(view.error().message(), bad.message) << bad.text;
  }
}

TEST(View, ApiErrorsNameThePattern) {
  View view = parse("wg_local_layout(64)");
  auto bad = view.rearrange("a b -> b a)");
  EXPECT_EQ(bad.error().code(), ErrorCode::kParse);
  EXPECT_EQ(bad.error().message(),
            "rearrange pattern \"a b -> b a)\" at character 11: ')' without a matching '('");
  EXPECT_EQ(view.index(std::vector<Slice>{}).error().message(),
            "an index needs at least one entry");
  EXPECT_EQ(view.view(std::vector<std::int64_t>{}).error().message(),
            "view() needs at least one extent");
}

// One case per limit message (ErrorCode::kLimit).
TEST(View, LimitMessages) {
  auto repeat = [](const std::string& item, int n, const std::string& sep) {
    std::string out;
    for (int i = 0; i < n; ++i) out += (i ? sep : "") + item;
    return out;
  };
  const std::pair<std::string, std::string> cases[] = {
      {"tensor((" + repeat("1", 65, ",") + "), S[1:1])",
       "at column 137: a tensor shape has more than 64 extents"},
      {"tensor((1,), S[1:1] + R[(" + repeat("1", 40, ",") + "):(" + repeat("0", 40, ",") +
           ")] + R[(" + repeat("1", 40, ",") + "):(" + repeat("0", 40, ",") + ")])",
       "at column 192: R[...] has more than 64 iters"},
      {"tensor((1,), S[1:1] + " + repeat("0", 65, " + ") + ")",
       "at column 279: a layout has more than 64 offsets"},
      {"wg_local_layout(1, rows=1).view(" + repeat("1", 65, ",") + ")",
       "at column 161: view has more than 64 arguments"},
      {"wg_local_layout(1, rows=1)[" + repeat(":", 65, ",") + "]",
       "at column 156: an index has more than 64 entries"},
      {"wg_local_layout(1, rows=1).rearrange('a b -> a b " + repeat("1", 63, " ") + "')",
       "at column 28: rearrange(\"a b -> a b " + repeat("1", 63, " ") +
           "\") makes more than 64 dims"},
      {"tensor((" + std::string(1 << 20, ' ') + "1,), S[1:1])", "view text is longer than 1 MiB"},
  };
  for (const auto& [text, message] : cases) {
    auto view = View::parse(text);
    ASSERT_FALSE(view.ok()) << text;
    EXPECT_EQ(view.error().code(), ErrorCode::kLimit) << text;
    EXPECT_EQ(view.error().message(), message) << text.substr(0, 200);
  }
  View one = parse("wg_local_layout(1, rows=1)");
  EXPECT_EQ(one.view(std::vector<std::int64_t>(65, 1)).error().message(),
            "view(" + repeat("1", 65, ", ") + ") has more than 64 extents");
  EXPECT_EQ(Layout::make(std::vector<Iter>(65, Iter{1, 0, Axis::kM})).error().message(),
            "a layout has more than 64 iters in one list");
  EXPECT_EQ(Layout::row_major(std::vector<std::int64_t>{1 << 21, 1 << 20}).error().message(),
            "row-major layout with more than 2^40 elements");
  EXPECT_EQ(Layout::row_major(std::vector<std::int64_t>{4, 0}).error().message(),
            "row-major layout with extent 0");
  EXPECT_EQ(parse("wg_local_layout(64)")
                .view(std::vector<std::int64_t>{1 << 21, 1 << 20})
                .error()
                .message(),
            "view(2097152, 1048576) has more elements than the view's 8192");
}

TEST(View, HostileInput) {
  std::string chain = "wg_local_layout(64)";
  for (int i = 0; i < 300; ++i) chain += ".permute(1,0)";
  auto view = View::parse(chain);
  ASSERT_FALSE(view.ok());
  EXPECT_EQ(view.error().code(), ErrorCode::kLimit);
  EXPECT_EQ(View::parse("wg_local_layout(99999999999999999999999)").error().code(),
            ErrorCode::kParse);
  EXPECT_EQ(View::parse("wg_local_layout(" + std::string(100000, '(') + ")").error().code(),
            ErrorCode::kParse);
  EXPECT_EQ(View::parse("tensor((1099511627776,2), S[(1099511627776,2):(1,1)])").error().code(),
            ErrorCode::kLimit);
}

}  // namespace
}  // namespace tmem
