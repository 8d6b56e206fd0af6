// Coordinates on the host (tmem/coords.h): coord_table against the plan and the native image for
// every thread, register and half of every test spec; same_owners with and without a
// counterexample; packed_twin over the load layouts FA4 and DeepGEMM use, and where it refuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/spec_fixtures.h"
#include "kernels/device_function.h"
#include "tmem/check.h"
#include "tmem/coords.h"
#include "tmem/image.h"
#include "tmem/select.h"

namespace {

using tmemjit_test::SpecText;

tmem::View view_of(const std::string& text) { return tmem::View::parse(text).value(); }

tmem::TransferSpec selected(tmem::Direction direction, const tmem::Scope& scope,
                            const std::string& tmem, const std::string& regs,
                            int register_budget = 0) {
  auto selection = tmem::select(direction, scope, view_of(tmem), view_of(regs),
                                {.register_budget = register_budget});
  EXPECT_TRUE(selection.ok()) << selection.error().full_text();
  return std::move(selection).value().spec;
}

// The logical index of the register tensor's element at view coordinate `coord`.
std::vector<int> element_index(const tmem::View& view, const std::vector<std::int64_t>& coord) {
  std::int64_t flat = 0;
  for (size_t d = 0; d < coord.size(); ++d) flat = flat * view.shape()[d] + coord[d];
  std::int64_t base = view.base_index(flat);
  const auto shape = view.base().shape();
  std::vector<int> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = static_cast<int>(base % shape[d]);
    base /= shape[d];
  }
  return index;
}

// Every spec the suite walks: the seed's examples, an identity spec of every form, and 16-bit
// register views (plain .b32 and pack) chosen by select.
std::vector<tmem::TransferSpec> all_test_specs() {
  std::vector<tmem::TransferSpec> specs;
  for (bool store : {true, false}) {
    specs.push_back(tmemjit_test::seed_layout_b(store).make());
    specs.push_back(tmemjit_test::seed_pack(store).make());
    specs.push_back(tmemjit_test::seed_split(store).make());
  }
  for (tmem::Direction direction : {tmem::Direction::kStore, tmem::Direction::kLoad})
    for (tmem::Shape shape : tmem::all_shapes())
      for (int num : {1, 4, 32, 128})
        for (bool pack : {false, true}) {
          auto op = tmem::Opcode::make(direction, shape, num, pack);
          if (!op) continue;
          specs.push_back(tmemjit_test::identity_spec(*op).make());
          if (op->atom_rows() == 16 && !op->is_split())
            specs.push_back(tmemjit_test::identity_spec(*op, 16).make());
        }
  const auto wg = tmem::Scope::warpgroup();
  for (auto direction : {tmem::Direction::kStore, tmem::Direction::kLoad}) {
    specs.push_back(selected(direction, wg, "tensor((128,32), S[(128,32):(1@TLane,1@TCol)], bf16)",
                             "tensor((128,32), S[(128,32):(1@tid_in_wg,1)], bf16)"));
    specs.push_back(selected(direction, wg, "tensor((128,32), S[(128,32):(1@TLane,2@TCol)], f16)",
                             "tensor((128,32), S[(128,32):(1@tid_in_wg,1)], f16)", 8));
  }
  return specs;
}

// coord_table(t, r, h) is the register view's element that the plan's instruction moves in that
// thread, register and half: walked here from the plan and the native image
// (docs/transfer-semantics.md §Rules 1-2), independently of the coordinate map, which walks the
// register view's layout.
TEST(CoordTable, EqualsThePlansElementForEveryThreadRegisterAndHalf) {
  int specs = 0, sixteen_bit = 0;
  for (const tmem::TransferSpec& spec : all_test_specs()) {
    SCOPED_TRACE(spec.to_string());
    auto plan = tmem::check(spec);
    ASSERT_TRUE(plan.ok()) << plan.error().full_text();
    auto table = tmem::coord_table(spec);
    ASSERT_TRUE(table.ok()) << table.error().full_text();
    const int halves = tmem::units_per_word(spec.regs().dtype());
    ASSERT_EQ(table->halves, halves);
    ASSERT_EQ(table->threads, 32 * plan->warps());
    ASSERT_EQ(table->registers, plan->regs_per_thread);
    ASSERT_EQ(table->rank, static_cast<int>(spec.regs().base().shape().size()));
    const std::vector<std::int64_t> shape =
        halves == 2 ? std::vector<std::int64_t>{table->threads, table->registers, 2, table->rank}
                    : std::vector<std::int64_t>{table->threads, table->registers, table->rank};
    ASSERT_EQ(table->shape(), shape);
    ASSERT_EQ(table->values.size(),
              static_cast<size_t>(table->threads) * static_cast<size_t>(table->registers) *
                  static_cast<size_t>(halves) * static_cast<size_t>(table->rank));
    const tmem::View& regs = spec.regs();
    std::vector<bool> seen(table->values.size() / static_cast<size_t>(table->rank));
    for (int g = 0; g < plan->warps(); ++g)
      for (int k = 0; k < plan->instructions_per_warp(); ++k)
        for (int lane = 0; lane < 32; ++lane)
          for (int r = 0; r < plan->op.regs_per_thread(); ++r)
            for (int h = 0; h < halves; ++h) {
              const tmem::AtomCoord at = tmem::image(plan->op, lane, r);
              std::vector<std::int64_t> coord;
              if (plan->scope.group_rank()) coord.push_back(g);
              std::int64_t rest = k;
              std::vector<std::int64_t> repeat(plan->repeat_shape.size());
              for (size_t d = plan->repeat_shape.size(); d-- > 0;) {
                repeat[d] = rest % plan->repeat_shape[d];
                rest /= plan->repeat_shape[d];
              }
              coord.insert(coord.end(), repeat.begin(), repeat.end());
              if (plan->op.is_split()) coord.push_back(at.access);
              coord.push_back(at.row);
              coord.push_back(at.col);
              if (halves == 2) coord.push_back(h);
              const std::vector<int> expected = element_index(regs, coord);
              const int thread = 32 * g + lane;
              const int slot = plan->repeats[static_cast<size_t>(k)].slots[static_cast<size_t>(r)];
              seen[(static_cast<size_t>(thread) * static_cast<size_t>(table->registers) +
                    static_cast<size_t>(slot)) *
                       static_cast<size_t>(halves) +
                   static_cast<size_t>(h)] = true;
              ASSERT_TRUE(table->used(thread, slot, h));
              for (int d = 0; d < table->rank; ++d)
                ASSERT_EQ(table->at(thread, slot, h, d), expected[static_cast<size_t>(d)])
                    << "thread " << thread << " register " << slot << " half " << h << " dim " << d;
            }
    // What the plan does not move reads -1 in every dim (ld.red's result slots among them).
    for (int t = 0; t < table->threads; ++t)
      for (int s = 0; s < table->registers; ++s)
        for (int h = 0; h < halves; ++h) {
          if (seen[(static_cast<size_t>(t) * static_cast<size_t>(table->registers) +
                    static_cast<size_t>(s)) *
                       static_cast<size_t>(halves) +
                   static_cast<size_t>(h)])
            continue;
          for (int d = 0; d < table->rank; ++d) ASSERT_EQ(table->at(t, s, h, d), -1);
        }
    ++specs;
    if (halves == 2) ++sixteen_bit;
  }
  EXPECT_GT(specs, 60);
  EXPECT_EQ(sixteen_bit, 4);
}

TEST(CoordTable, ReportsTheErrorsOfCheck) {
  SpecText bad = tmemjit_test::seed_layout_b(false);
  bad.op = "tcgen05.ld.sync.aligned.32x32b.x32.b32";
  auto table = tmem::coord_table(bad.make());
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(table.error().rule(), tmem::Rule::kShape) << table.error().message();
}

// ---- same_owners -------------------------------------------------------------------------------

const std::string kTileD = "tensor((128,32), S[(128,32):(1@TLane,1@TCol)], f32)";
const std::string kRowsD = "tensor((128,32), S[(128,32):(1@tid_in_wg,1)], f32)";

TEST(SameOwners, TheSeedsStoreAndLoadHoldEveryElementAlike) {
  auto owners = tmem::same_owners(tmemjit_test::seed_layout_b(true).make(),
                                  tmemjit_test::seed_layout_b(false).make());
  ASSERT_TRUE(owners.ok()) << owners.error().full_text();
  EXPECT_TRUE(owners->same) << owners->to_string();
  EXPECT_EQ(owners->common, 64 * 128);
  EXPECT_EQ(owners->only_a, 0);
  EXPECT_EQ(owners->only_b, 0);
  ASSERT_EQ(owners->pairs.size(), 64u * 128u);
  EXPECT_FALSE(owners->counterexample);
  for (const auto& pair : owners->pairs) {
    EXPECT_EQ(pair.a, pair.b);  // the same register too
  }
  EXPECT_EQ(owners->to_string(), "same owners: 8192 common elements, 0 only in a, 0 only in b");
}

TEST(SameOwners, AgreesOnThreadsWhereRegistersDiffer) {
  // The same rows in one 32x32b.x32 per warp, and in two x16 with the column halves interleaved
  // in the registers (column 16*ch + cl in register ch + 2*cl).
  const auto wg = tmem::Scope::warpgroup();
  const tmem::TransferSpec wide = selected(tmem::Direction::kLoad, wg, kTileD, kRowsD);
  const tmem::TransferSpec interleaved =
      selected(tmem::Direction::kLoad, wg, kTileD,
               "tensor((128,32), S[(128,2,16):(1@tid_in_wg,1,2)], f32)", 16);
  auto owners = tmem::same_owners(wide, interleaved);
  ASSERT_TRUE(owners.ok()) << owners.error().full_text();
  EXPECT_TRUE(owners->same) << owners->to_string();
  EXPECT_EQ(owners->common, 128 * 32);
  ASSERT_EQ(owners->pairs.size(), 128u * 32u);
  int moved = 0;
  for (const auto& pair : owners->pairs) {
    EXPECT_EQ(pair.a.thread, pair.b.thread);
    const std::int64_t column = pair.index[1];
    EXPECT_EQ(pair.a.reg, column);
    EXPECT_EQ(pair.b.reg, column / 16 + 2 * (column % 16));
    moved += pair.a.reg != pair.b.reg;
  }
  EXPECT_GT(moved, 0);
}

TEST(SameOwners, RowsInAnotherOrderGiveTheFirstCounterexample) {
  // b puts row r in thread r/64 + 2*(r%64): row 1 sits in thread 2, not thread 1.
  const auto wg = tmem::Scope::warpgroup();
  const tmem::TransferSpec a = selected(tmem::Direction::kLoad, wg, kTileD, kRowsD);
  const tmem::TransferSpec b = selected(
      tmem::Direction::kLoad, wg, "tensor((128,32), S[(2,64,32):(1@TLane,2@TLane,1@TCol)], f32)",
      "tensor((128,32), S[(2,64,32):(1@tid_in_wg,2@tid_in_wg,1)], f32)");
  auto owners = tmem::same_owners(a, b);
  ASSERT_TRUE(owners.ok()) << owners.error().full_text();
  EXPECT_FALSE(owners->same);
  EXPECT_TRUE(owners->pairs.empty());
  ASSERT_TRUE(owners->counterexample);
  const tmem::HeldElement& c = *owners->counterexample;
  EXPECT_EQ(c.index, (std::vector<std::int64_t>{1, 0}));
  EXPECT_EQ(c.a, (tmem::Holder{1, 0, 0}));
  EXPECT_EQ(c.b, (tmem::Holder{2, 0, 0}));
  EXPECT_EQ(owners->common, 128 * 32) << "every element is compared";
  EXPECT_EQ(owners->to_string(),
            "different owners: element (1,0) is in thread 1 register 0 of a but in thread 2 "
            "register 0 of b (4096 common elements, 0 only in a, 0 only in b)");
}

TEST(SameOwners, ComparesCtaThreadsAcrossScopesAndRefusesOtherShapes) {
  // Warp 1 alone, and the same rows at warpgroup scope: thread 3 of warp:1 is thread 35.
  const tmem::TransferSpec warp1 =
      selected(tmem::Direction::kLoad, tmem::Scope::warp(1).value(),
               "tensor((128,32), S[(128,32):(1@TLane,1@TCol)], f32)[32:64, :]",
               "tensor((128,32), S[(128,32):(1@tid_in_wg,1)], f32)[32:64, :]");
  const tmem::TransferSpec all =
      selected(tmem::Direction::kLoad, tmem::Scope::warpgroup(), kTileD, kRowsD);
  auto owners = tmem::same_owners(warp1, all);
  ASSERT_TRUE(owners.ok()) << owners.error().full_text();
  EXPECT_TRUE(owners->same) << owners->to_string();
  EXPECT_EQ(owners->common, 32 * 32);
  EXPECT_EQ(owners->only_b, 96 * 32);
  EXPECT_EQ(owners->pairs.front().a.thread, 0);
  EXPECT_EQ(owners->pairs.front().b.thread, 32);
  auto other = tmem::same_owners(all, tmemjit_test::seed_layout_b(false).make());
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code(), tmem::ErrorCode::kLayout);
  EXPECT_NE(other.error().message().find("(128,32) and b's (64,128)"), std::string::npos)
      << other.error().message();
}

// ---- packed_twin -------------------------------------------------------------------------------

// Where each logical element of a transfer sits in TMEM: (lane, TCol in layout units).
std::map<std::vector<int>, std::pair<std::int64_t, std::int64_t>> tmem_places(
    const tmem::TransferSpec& spec) {
  std::map<std::vector<int>, std::pair<std::int64_t, std::int64_t>> places;
  const tmem::View& regs = spec.regs();
  std::vector<std::int64_t> coord(regs.shape().size());
  for (std::int64_t flat = 0; flat < regs.size(); ++flat) {
    std::int64_t rest = flat;
    for (size_t d = coord.size(); d-- > 0;) {
      coord[d] = rest % regs.shape()[d];
      rest /= regs.shape()[d];
    }
    tmem::PhysCoord at;
    spec.tmem().apply_flat(flat, at);
    places[element_index(regs, coord)] = {at[tmem::Axis::kTLane], at[tmem::Axis::kTCol]};
  }
  return places;
}

// The twin's contract, checked independently of packed_twin's own checks.
void expect_twin(const tmem::TransferSpec& load, const std::string& op, tmem::DType dtype) {
  SCOPED_TRACE(load.to_string());
  auto twin = tmem::packed_twin(load, dtype);
  ASSERT_TRUE(twin.ok()) << twin.error().full_text();
  EXPECT_EQ(twin->op().to_string(), op);
  EXPECT_EQ(twin->regs().dtype(), dtype);
  EXPECT_EQ(twin->tmem().dtype(), dtype);
  EXPECT_EQ(twin->scope(), load.scope());
  auto plan = tmem::check(*twin);
  ASSERT_TRUE(plan.ok()) << plan.error().full_text();
  const tmem::Plan s_plan = tmem::check(load).value();
  // Register q of the twin holds the load's registers 2q and 2q + 1, in the same thread.
  const tmem::CoordTable s = tmem::coord_table(load).value();
  const tmem::CoordTable p = tmem::coord_table(*twin).value();
  EXPECT_EQ(p.registers, (s.registers + 1) / 2);
  for (int t = 0; t < s.threads; ++t)
    for (int r = 0; r < s.registers; ++r)
      for (int d = 0; d < s.rank; ++d)
        ASSERT_EQ(p.at(t, r / 2, r % 2, d), s.at(t, r, 0, d))
            << "thread " << t << " register " << r;
  auto owners = tmem::same_owners(load, *twin);
  ASSERT_TRUE(owners.ok());
  EXPECT_TRUE(owners->same) << owners->to_string();
  EXPECT_EQ(owners->only_a, 0);
  EXPECT_EQ(owners->only_b, 0);
  // Over S: each element in S's lane, S's 32-bit column c becoming 16-bit unit c + c0, so P's
  // cells are the first half of S's columns.
  int c0 = 512;
  for (const auto& step : s_plan.repeats) c0 = std::min(c0, step.column);
  c0 -= c0 % 2;
  const auto s_places = tmem_places(load), p_places = tmem_places(*twin);
  ASSERT_EQ(s_places.size(), p_places.size());
  for (const auto& [index, place] : s_places) {
    const auto& twin_place = p_places.at(index);
    ASSERT_EQ(twin_place.first, place.first) << "the lane of the element";
    ASSERT_EQ(twin_place.second, place.second + c0) << "16-bit unit = 32-bit column + c0";
  }
  EXPECT_LE(plan->columns_used, s_plan.columns_used);
  // The twin round-trips through its JSON, as `tmemjit twin` prints it.
  auto json = tmem::TransferSpec::from_json(twin->to_json());
  ASSERT_TRUE(json.ok()) << json.error().full_text();
  EXPECT_EQ(*json, *twin);
}

TEST(PackedTwin, FA4sChunkedS_32x32bGivesHalfTheNum) {
  const auto wg = tmem::Scope::warpgroup();
  // One 128x32 chunk of S in one instruction.
  expect_twin(selected(tmem::Direction::kLoad, wg, kTileD, kRowsD),
              "tcgen05.st.sync.aligned.32x32b.x16.b32", tmem::DType::kBF16);
  // A 128x128 S in four 32x32b.x32 per warp (a register budget of 32): P in x64, one per warp.
  expect_twin(
      selected(tmem::Direction::kLoad, wg, "tensor((128,128), S[(128,128):(1@TLane,1@TCol)], f32)",
               "tensor((128,128), S[(128,128):(1@tid_in_wg,1)], f32)", 32),
      "tcgen05.st.sync.aligned.32x32b.x64.b32", tmem::DType::kF16);
  // S at columns 64..95 (a second stage): P at cells 64..79.
  expect_twin(selected(tmem::Direction::kLoad, wg,
                       "tensor((128,32), S[(128,32):(1@TLane,1@TCol)] + 64@TCol, f32)", kRowsD),
              "tcgen05.st.sync.aligned.32x32b.x16.b32", tmem::DType::kBF16);
}

TEST(PackedTwin, TheSeedsLayoutB) {
  expect_twin(tmemjit_test::seed_layout_b(false).make(), "tcgen05.st.sync.aligned.32x32b.x32.b32",
              tmem::DType::kBF16);
}

TEST(PackedTwin, SixteenRowLoads_16x256bGives16x128b) {
  for (int num : {1, 8, 16}) {
    auto op = tmem::Opcode::make(tmem::Direction::kLoad, tmem::Shape::k16x256b, num, false);
    ASSERT_TRUE(op.ok());
    expect_twin(tmemjit_test::identity_spec(*op).make(),
                "tcgen05.st.sync.aligned.16x128b.x" + std::to_string(num) + ".b32",
                tmem::DType::kBF16);
  }
  // Layout F (M=64) with the 16x256b register image, as select picks it.
  expect_twin(
      selected(
          tmem::Direction::kLoad, tmem::Scope::warpgroup(), "tmem_datapath_layout(\"F\",64,64)",
          "tensor((64,64), S[(4,2,8,8,4,2):(32@tid_in_wg,2,4@tid_in_wg,4,1@tid_in_wg,1)], f32)"),
      "tcgen05.st.sync.aligned.16x128b.x8.b32", tmem::DType::kBF16);
}

TEST(PackedTwin, WarpAndCtaScopes) {
  // Warp 1 alone (its lane slab 32..63).
  expect_twin(selected(tmem::Direction::kLoad, tmem::Scope::warp(1).value(),
                       "tensor((32,16), S[(32,16):(1@TLane,1@TCol)] + 32@TLane, f32)",
                       "tensor((32,16), S[(32,16):(1@laneid,1)], f32)"),
              "tcgen05.st.sync.aligned.32x32b.x8.b32", tmem::DType::kBF16);
  // Eight warps: warpgroup 1 shares the lanes of warpgroup 0 at columns 32..63.
  expect_twin(selected(tmem::Direction::kLoad, tmem::Scope::cta(8).value(),
                       "tensor((2,128,32), S[(2,128,32):(32@TCol,1@TLane,1@TCol)], f32)"
                       ".rearrange(\"w r c -> (w r) c\")",
                       "tensor((2,128,32), S[(2,128,32):(128@tx,1@tx,1)], f32)"
                       ".rearrange(\"w r c -> (w r) c\")"),
              "tcgen05.st.sync.aligned.32x32b.x16.b32", tmem::DType::kBF16);
}

TEST(PackedTwin, RefusesLoadsWhosePairsNoRegisterHolds) {
  for (tmem::Shape shape : {tmem::Shape::k16x128b, tmem::Shape::k16x64b}) {
    auto op = tmem::Opcode::make(tmem::Direction::kLoad, shape, 4, false);
    ASSERT_TRUE(op.ok());
    auto twin = tmem::packed_twin(tmemjit_test::identity_spec(*op).make(), tmem::DType::kBF16);
    ASSERT_FALSE(twin.ok()) << op->to_string();
    EXPECT_EQ(twin.error().code(), tmem::ErrorCode::kLayout);
    EXPECT_NE(twin.error().message().find("no 16-bit store holds the load's registers 0 and 1"),
              std::string::npos)
        << twin.error().message();
    EXPECT_NE(twin.error().message().find("thread 0 loads element"), std::string::npos)
        << twin.error().message();
  }
}

TEST(PackedTwin, RefusesWhatIsNotA32BitPlainLoad) {
  auto expect_usage = [](const tmem::TransferSpec& spec, tmem::DType dtype,
                         const std::string& why) {
    auto twin = tmem::packed_twin(spec, dtype);
    ASSERT_FALSE(twin.ok());
    EXPECT_EQ(twin.error().code(), tmem::ErrorCode::kUsage) << twin.error().message();
    EXPECT_NE(twin.error().message().find(why), std::string::npos) << twin.error().message();
  };
  expect_usage(tmemjit_test::seed_layout_b(true).make(), tmem::DType::kBF16, "is a store");
  expect_usage(tmemjit_test::seed_layout_b(false).make(), tmem::DType::kF32, "allowed: bf16, f16");
  expect_usage(tmemjit_test::seed_pack(false).make(), tmem::DType::kBF16, "plain load");
  expect_usage(tmemjit_test::seed_split(false).make(), tmem::DType::kBF16, "plain load");
}

}  // namespace

// The generic tier's descriptors take NAME_coord's closed form from a few elements when the
// register view permutes bits (kernels::CoordDetail::kForm, docs/specialization.md §Tiers): the
// same weights the fit to the whole table gives, for every spec the suite walks and the
// epilogue's layouts; views that are not bit permutations get the table.
TEST(CoordForm, TheFormFromAFewElementsEqualsTheFitToTheTable) {
  std::vector<tmem::TransferSpec> specs = all_test_specs();
  for (const char* name : {"d_x32_ld", "d_x64_st", "f_16x256b_ld", "f_16x256b_st"}) {
    std::ifstream in(std::string(TMEMJIT_SOURCE_DIR) + "/examples/epilogue/layouts/" + name +
                     ".json");
    std::stringstream text;
    text << in.rdbuf();
    specs.push_back(tmem::TransferSpec::from_json(text.str()).value());
  }
  int permutations = 0;
  for (const tmem::TransferSpec& spec : specs) {
    SCOPED_TRACE(spec.op().to_string() + " " + spec.regs().to_string());
    const tmem::Plan plan = tmem::check(spec).value();
    auto table = tmem::kernels::coord_map(spec, plan, tmem::kernels::CoordDetail::kTable);
    auto form = tmem::kernels::coord_map(spec, plan, tmem::kernels::CoordDetail::kForm);
    ASSERT_TRUE(table.ok() && form.ok());
    if (!form->table.empty()) continue;  // not a bit permutation: the table was built
    ++permutations;
    ASSERT_TRUE(table->additive);
    ASSERT_EQ(form->dims.size(), table->dims.size());
    for (size_t d = 0; d < table->dims.size(); ++d) {
      EXPECT_EQ(form->dims[d].constant, table->dims[d].constant) << "dim " << d;
      EXPECT_EQ(form->dims[d].thread_bits, table->dims[d].thread_bits) << "dim " << d;
      EXPECT_EQ(form->dims[d].slot_bits, table->dims[d].slot_bits) << "dim " << d;
    }
    if (table->halves == 2) {
      ASSERT_TRUE(table->high.additive);
      for (size_t d = 0; d < table->high.dims.size(); ++d) {
        EXPECT_EQ(form->high.dims[d].constant, table->high.dims[d].constant) << "high dim " << d;
        EXPECT_EQ(form->high.dims[d].thread_bits, table->high.dims[d].thread_bits);
        EXPECT_EQ(form->high.dims[d].slot_bits, table->high.dims[d].slot_bits);
      }
    }
  }
  EXPECT_GT(permutations, static_cast<int>(specs.size()) / 2);
}

// Which specs take the closed form from a few elements (the register view permutes bits) and
// which the table, pinned spec by spec: those all_test_specs walks, in its order, then views that
// are not permutations of bits (a reduction's result slots after the view, 48 columns).
TEST(CoordForm, WhichViewsPermuteBitsIsPinned) {
  std::vector<tmem::TransferSpec> specs = all_test_specs();
  specs.push_back(
      tmemjit_test::ld_red_accumulator("tcgen05.ld.red.sync.aligned.32x32b.x8.min.f32").make());
  const std::string rearrange = ".rearrange(\"(g l) (k c) -> g k l c\", g=4, k=3)";
  for (const char* op : {"st", "ld"})
    specs.push_back(tmemjit_test::SpecText{
        std::string("tcgen05.") + op + ".sync.aligned.32x32b.x16.b32", "warpgroup",
        "tensor((128,48), S[(128,48):(1@TLane,1@TCol)], f32)" + rearrange,
        "tensor((128,48), S[(128,48):(1@tid_in_wg,1)], f32)" + rearrange}
                        .make());
  std::string permutes;
  for (const tmem::TransferSpec& spec : specs) {
    const tmem::Plan plan = tmem::check(spec).value();
    auto form = tmem::kernels::coord_map(spec, plan, tmem::kernels::CoordDetail::kForm);
    ASSERT_TRUE(form.ok());
    permutes += form->table.empty() ? '1' : '0';
  }
  // Every spec all_test_specs walks (122) permutes bits; the three after it do not.
  EXPECT_EQ(permutes, std::string(122, '1') + "000");
}
