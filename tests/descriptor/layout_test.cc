// Layout, Axis and DType: TIRx semantics, canonical text, canonicalization, errors and limits.
#include "tmem/layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <sstream>

#include "tmem/dtype.h"

namespace tmem {
namespace {

Layout parse(std::string_view text) {
  auto layout = Layout::parse(text);
  EXPECT_TRUE(layout.ok()) << text << ": " << (layout.ok() ? "" : layout.error().message());
  return std::move(layout).value();
}

PhysCoord coord(std::initializer_list<std::pair<Axis, std::int64_t>> values) {
  PhysCoord out;
  for (auto [axis, value] : values) out[axis] = value;
  return out;
}

TEST(DType, NamesAliasesAndBits) {
  for (DType dtype : all_dtypes()) EXPECT_EQ(parse_dtype(to_string(dtype)), dtype);
  EXPECT_EQ(parse_dtype("float32"), DType::kF32);
  EXPECT_EQ(parse_dtype("float16"), DType::kF16);
  EXPECT_EQ(parse_dtype("bfloat16"), DType::kBF16);
  EXPECT_EQ(parse_dtype("uint32"), DType::kU32);
  EXPECT_EQ(parse_dtype("int32"), DType::kS32);
  EXPECT_FALSE(parse_dtype("f64").has_value());
  EXPECT_EQ(bits(DType::kBF16), 16);
  EXPECT_EQ(bits(DType::kS32), 32);
  EXPECT_EQ(units_per_word(DType::kF16), 2);
  EXPECT_EQ(units_per_word(DType::kB32), 1);
}

TEST(Axis, Names) {
  for (Axis axis : all_axes()) EXPECT_EQ(parse_axis(to_string(axis)), axis);
  EXPECT_EQ(all_axes().size(), static_cast<size_t>(kNumAxes));
  EXPECT_FALSE(parse_axis("lane").has_value());
}

// docs/descriptor-language.md §Semantics / TIRx documentation: (1,3) of an (8,16) tensor.
TEST(Layout, DesignReplicaExample) {
  Layout layout = parse("S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1)] + R[2:4@warpid] + 5@warpid");
  EXPECT_EQ(layout.size(), 128);
  EXPECT_EQ(layout.replica_count(), 2);
  auto set = layout.apply(1 * 16 + 3).value();
  ASSERT_EQ(set.size(), 2u);
  EXPECT_EQ(set[0], coord({{Axis::kLaneid, 5}, {Axis::kWarpid, 5}, {Axis::kM, 1}}));
  EXPECT_EQ(set[1], coord({{Axis::kLaneid, 5}, {Axis::kWarpid, 9}, {Axis::kM, 1}}));
  EXPECT_EQ(layout.axes(), axis_bit(Axis::kLaneid) | axis_bit(Axis::kWarpid) | axis_bit(Axis::kM));
}

TEST(Layout, PlainExtentsAreRowMajorOnM) {
  Layout layout = parse("S[8,4]");
  EXPECT_EQ(layout, Layout::row_major(std::vector<std::int64_t>{8, 4}).value());
  EXPECT_EQ(layout.to_string(), "S[(8,4):(4,1)]");
  PhysCoord out;
  layout.apply_flat(13, out);
  EXPECT_EQ(out, coord({{Axis::kM, 13}}));
  EXPECT_EQ(parse("S[(8,4)]"), layout);
}

TEST(Layout, LayoutBMapping) {
  Layout layout = parse("S[(64,2,64):(1@TLane,64@TLane,1@TCol)]");
  PhysCoord out;
  for (std::int64_t r = 0; r < 64; ++r) {
    for (std::int64_t c = 0; c < 128; ++c) {
      layout.apply_flat(r * 128 + c, out);
      ASSERT_EQ(out, coord({{Axis::kTLane, r + 64 * (c / 64)}, {Axis::kTCol, c % 64}}));
    }
  }
}

TEST(Layout, AcceptsTvmSpacingAndWrapper) {
  Layout compact = parse("S[(64,2,64):(1@tid_in_wg,64@tid_in_wg,1)]");
  EXPECT_EQ(parse("S[(64, 2, 64) : (1 @ tid_in_wg, 64 @ tid_in_wg, 1)]"), compact);
  EXPECT_EQ(parse("TileLayout(S[(64, 2, 64) : (1 @ tid_in_wg, 64 @ tid_in_wg, 1)])"), compact);
  EXPECT_EQ(parse("  S [ ( 64 , 2 , 64 ) : ( 1@tid_in_wg , 64@tid_in_wg , 1@m ) ]  "), compact);
  EXPECT_EQ(compact.to_string(), "S[(64,2,64):(1@tid_in_wg,64@tid_in_wg,1)]");
}

TEST(Layout, SingleIterAndOffsets) {
  Layout layout = parse("S[128:1@TLane] + 16@TLane + 3@TCol + 2@TLane");
  EXPECT_EQ(layout.to_string(), "S[128:1@TLane] + 18@TLane + 3@TCol");
  PhysCoord out;
  layout.apply_flat(5, out);
  EXPECT_EQ(out, coord({{Axis::kTLane, 23}, {Axis::kTCol, 3}}));
  EXPECT_EQ(parse("S[4:1] + 7").to_string(), "S[4:1] + 7");
}

TEST(Layout, ReplicaBlocksConcatenate) {
  Layout layout = parse("S[32:1@laneid] + R[2:1@warpid] + R[(2,1):(2@warpid,5)]");
  EXPECT_EQ(layout.replica_count(), 4);
  EXPECT_EQ(layout.to_string(), "S[32:1@laneid] + R[(2,2,1):(1@warpid,2@warpid,5)]");
  std::vector<std::int64_t> warps;
  for (const PhysCoord& r : layout.replica_offsets()) warps.push_back(r[Axis::kWarpid]);
  EXPECT_EQ(warps, (std::vector<std::int64_t>{0, 2, 1, 3}));
}

TEST(Layout, RoundTripAndHash) {
  const char* texts[] = {
      "S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1)] + R[2:4@warpid] + 5@warpid",
      "S[(64,2,64):(1@TLane,64@TLane,1@TCol)]",
      "S[(4,16,32):(32@TLane,1@TLane,1@TCol)] + 16@TLane",
      "S[(128,64):(1@tid_in_wg,1)]",
      "S[(4,32,8):(1@wid_in_wg,1@laneid,1)] + R[(2,2):(1@wgid,0@tx)]",
      "S[1:0]",
      "S[(2,3):(0,0)] + 0@TCol",
  };
  for (const char* text : texts) {
    Layout layout = parse(text);
    Layout again = parse(layout.to_string());
    EXPECT_EQ(again, layout) << text;
    EXPECT_EQ(again.hash(), layout.hash()) << text;
    EXPECT_EQ(again.to_string(), layout.to_string()) << text;
    std::ostringstream os;
    os << layout;
    EXPECT_EQ(os.str(), layout.to_string());
  }
  EXPECT_NE(parse(texts[0]).hash(), parse(texts[1]).hash());
  // The hash is part of cache keys: pinned so that it stays stable across builds.
  EXPECT_EQ(parse("S[(64,2,64):(1@TLane,64@TLane,1@TCol)]").hash(), 0xa89aeaf4bd843d0aull);
}

TEST(Layout, CanonicalizeDropsUnitsAndFuses) {
  Layout layout =
      parse("S[(2,1,4,8):(4@TLane,9,1@TLane,1@TCol)] + R[(2,1,2):(2@warpid,3,1@warpid)] + 0@TCol");
  Layout canonical = layout.canonicalize();
  EXPECT_EQ(canonical.to_string(), "S[(8,8):(1@TLane,1@TCol)] + R[4:1@warpid]");
  EXPECT_EQ(canonical.canonicalize(), canonical);
  EXPECT_TRUE(layout.equivalent(parse("S[(8,8):(1@TLane,1@TCol)] + R[(2,2):(1@warpid,2@warpid)]")));
  EXPECT_FALSE(layout == canonical);  // == is structural; equivalent() is meaning
  EXPECT_EQ(parse("S[(1,1):(5@TLane,7)]").canonicalize().to_string(), "S[1:0]");
  for (std::int64_t f = 0; f < layout.size(); ++f) {
    EXPECT_EQ(layout.apply(f).value().front(), canonical.apply(f).value().front());
  }
}

// Random layouts: parse(to_string(x)) == x, and canonicalize() keeps every element's set.
TEST(LayoutProperties, RandomRoundTripAndCanonicalize) {
  std::mt19937_64 rng(7);
  auto pick = [&](std::int64_t n) {
    return static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n));
  };
  auto random_iters = [&](std::int64_t count) {
    std::vector<Iter> iters;
    for (std::int64_t i = 0; i < count; ++i)
      iters.push_back(Iter{1 + pick(4), pick(3) == 0 ? 0 : 1 << pick(6),
                           all_axes()[static_cast<size_t>(pick(kNumAxes))]});
    // Sometimes make neighbours nest on one axis so that canonicalize() has work to do.
    if (count >= 2 && pick(2) == 0) {
      iters[0].axis = iters[1].axis;
      iters[0].stride = iters[1].extent * iters[1].stride;
    }
    return iters;
  };
  auto sorted = [](std::vector<PhysCoord> set) {
    std::sort(set.begin(), set.end(),
              [](const PhysCoord& a, const PhysCoord& b) { return a.value < b.value; });
    return set;
  };
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<Offset> offsets;
    for (std::int64_t i = 0, n = pick(3); i < n; ++i)
      offsets.push_back(Offset{all_axes()[static_cast<size_t>(pick(kNumAxes))], pick(40)});
    Layout layout = Layout::make(random_iters(1 + pick(4)), random_iters(pick(3)), offsets).value();
    Layout again = Layout::parse(layout.to_string()).value();
    ASSERT_EQ(again, layout) << layout.to_string();
    ASSERT_EQ(again.hash(), layout.hash());
    Layout canonical = layout.canonicalize();
    ASSERT_EQ(Layout::parse(canonical.to_string()).value(), canonical);
    ASSERT_EQ(canonical.size(), layout.size());
    ASSERT_TRUE(layout.equivalent(canonical));
    for (std::int64_t f = 0; f < layout.size(); ++f)
      ASSERT_EQ(sorted(layout.apply(f).value()), sorted(canonical.apply(f).value()))
          << layout.to_string() << " vs " << canonical.to_string() << " at " << f;
  }
}

TEST(Layout, MakeChecks) {
  EXPECT_EQ(Layout::make({}).error().message(), "a layout needs at least one shard iter");
  EXPECT_EQ(Layout::make({{0, 1, Axis::kM}}).error().message(),
            "S[...] iter 0 has extent 0 but extents must be at least 1");
  EXPECT_EQ(Layout::make({{4, -1, Axis::kM}}).error().message(),
            "S[...] iter 0 has negative stride -1");
  EXPECT_EQ(Layout::make({{4, 1, Axis::kM}}, {}, {{Axis::kTCol, -2}}).error().message(),
            "offset -2@TCol is negative");
  EXPECT_EQ(parse("S[4:1]").apply(4).error().message(),
            "index 4 is outside the layout's 4 elements");
}

struct BadLayout {
  const char* text;
  ErrorCode code;
  const char* message;
};

// One case per parse and semantic error message of the layout grammar.
TEST(Layout, ParseErrorsPointAtTheColumn) {
  const BadLayout cases[] = {
      {"", ErrorCode::kParse,
       "at column 1: expected a layout 'S[...]' or 'TileLayout(S[...])', found end of input"},
      {"Q[4:1]", ErrorCode::kParse, "at column 1: expected 'S[' to start a layout, found 'Q'"},
      {"S(4:1)", ErrorCode::kParse, "at column 2: expected '[' after 'S', found '('"},
      {"TileLayout S[4:1]", ErrorCode::kParse,
       "at column 12: expected '(' after TileLayout, found 'S'"},
      {"TileLayout(4)", ErrorCode::kParse,
       "at column 12: expected 'S[' after 'TileLayout(', found '4'"},
      {"TileLayout(S[4:1]", ErrorCode::kParse,
       "at column 18: expected ')' to close 'TileLayout(', found end of input"},
      {"S[(64,2,64):(1@TLane 64@TLane,1@TCol)]", ErrorCode::kParse,
       "at column 22: expected ',' after stride 1"},
      {"S[(64,2,64):(1 64@TLane,1@TCol)]", ErrorCode::kParse,
       "at column 16: expected '@' or ',' after stride 1"},
      {"S[(2,64):(1@TLane,64 x)]", ErrorCode::kParse,
       "at column 22: expected '@' or ')' after stride 64"},
      {"S[(2,64):(1@TLane)]", ErrorCode::kParse,
       "at column 18: expected ',' after stride 1: 2 extents need 2 strides"},
      {"S[(2,64):(1@TLane,1,1)]", ErrorCode::kParse,
       "at column 20: expected ')' after stride 1: 2 extents take 2 strides"},
      {"S[(2,64:(1,1)]", ErrorCode::kParse,
       "at column 8: expected ')' after the extents, found ':'"},
      {"S[(2,64):1,1]", ErrorCode::kParse,
       "at column 10: expected '(' before the strides of a parenthesized extent list, found '1'"},
      {"S[(2,x):(1,1)]", ErrorCode::kParse, "at column 6: expected an extent, found 'x'"},
      {"S[4:]", ErrorCode::kParse, "at column 5: expected a stride, found ']'"},
      {"S[4:1@]", ErrorCode::kParse, "at column 7: expected an axis after '@', found ']'"},
      {"S[4:1@lane]", ErrorCode::kParse,
       "at column 7: unknown axis 'lane' (allowed: TLane, TCol, m, tx, warpid, laneid, wgid, "
       "tid_in_wg, wid_in_wg)"},
      {"S[4:1", ErrorCode::kParse,
       "at column 6: expected ']' after the shard iters, found end of input"},
      {"S[4:1] + Q", ErrorCode::kParse,
       "at column 10: expected 'R[' or an offset after '+', found 'Q'"},
      {"S[4:1] + Rx[2:1]", ErrorCode::kParse,
       "at column 10: expected 'R[' or an offset after '+', found 'Rx'"},
      {"S[4:1] + R(2:1)", ErrorCode::kParse, "at column 11: expected '[' after 'R', found '('"},
      {"S[4:1] + R[2:1", ErrorCode::kParse,
       "at column 15: expected ']' after the replica iters, found end of input"},
      {"S[4:1] x", ErrorCode::kParse, "at column 8: unexpected 'x' after the layout"},
      {"S[99999999999999999999:1]", ErrorCode::kParse,
       "at column 3: integer 99999999999999999999 does not fit in a signed 64-bit integer"},
      {"S[(0,4):(1,1)]", ErrorCode::kLayout,
       "at column 1: S[...] iter 0 has extent 0 but extents must be at least 1"},
      {"S[(1048576,1048576,2):(1,1,1)]", ErrorCode::kLimit,
       "at column 1: S[...] of the layout is too large (more than 1099511627776 elements or "
       "coordinates beyond int64)"},
      {"S[4:1] + R[(256,512):(1,1)]", ErrorCode::kLimit,
       "at column 1: R[...] of the layout is too large (more than 65536 elements or coordinates "
       "beyond int64)"},
      {"S[4:4611686018427387904@TCol]", ErrorCode::kLimit,
       "at column 1: S[...] of the layout is too large (more than 1099511627776 elements or "
       "coordinates beyond int64)"},
      {"S[4:1] + 9223372036854775807 + 1", ErrorCode::kLimit,
       "at column 1: the offsets of the layout overflow int64"},
  };
  for (const BadLayout& bad : cases) {
    auto layout = Layout::parse(bad.text);
    ASSERT_FALSE(layout.ok()) << bad.text;
    EXPECT_EQ(layout.error().code(), bad.code) << bad.text;
    EXPECT_EQ(layout.error().message(), bad.message) << bad.text;
  }
}

TEST(Layout, HostileInputIsAnErrorNotACrash) {
  std::string deep = "S[" + std::string(100000, '(') + "4:1]";
  auto nested = Layout::parse(deep);
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(nested.error().code(), ErrorCode::kParse);
  std::string many = "S[(";
  for (int i = 0; i < 100; ++i) many += "1,";
  many += "1):(0)]";
  EXPECT_EQ(Layout::parse(many).error().code(), ErrorCode::kLimit);
  EXPECT_EQ(Layout::parse(std::string(2 << 20, ' ')).error().code(), ErrorCode::kLimit);
  EXPECT_EQ(Layout::parse(std::string("S[4:1]\0", 7)).error().code(), ErrorCode::kParse);
}

}  // namespace
}  // namespace tmem
