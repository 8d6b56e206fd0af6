// Image agreement: the thread→value layouts of CuTe's SM100 TMEM atoms (cute_images, built from
// their Copy_Traits) against tmem::image / tmem::tmem_cells, for every form both define.
#include <gtest/gtest.h>

#include <array>
#include <cctype>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cute/cute_forms.h"
#include "tmem/image.h"
#include "tmem/opcode.h"

namespace {

using tmemjit_cute::cute_missing;

// One register of one lane: TMEM lane and column bit of its bits 0-15 and 16-31.
struct RegisterImage {
  int lane, reg, row0, bit0, row1, bit1;
};
struct AtomImage {
  int regs = 0;
  std::vector<RegisterImage> entries;
};

// cute_images' output, by atom name (read once per process).
const std::map<std::string, AtomImage>& cute_images() {
  static const std::map<std::string, AtomImage> images = [] {
    std::map<std::string, AtomImage> out;
#ifdef TMEMJIT_CUTE_IMAGES
    std::ifstream in(TMEMJIT_CUTE_IMAGES);
    AtomImage* atom = nullptr;
    for (std::string line; std::getline(in, line);) {
      std::istringstream fields(line);
      if (line.rfind("atom ", 0) == 0) {
        std::string word, name;
        fields >> word >> name;
        atom = &out[name];
        fields >> atom->regs;
      } else if (atom != nullptr) {
        RegisterImage r{};
        fields >> r.lane >> r.reg >> r.row0 >> r.bit0 >> r.row1 >> r.bit1;
        atom->entries.push_back(r);
      }
    }
#endif
    return out;
  }();
  return images;
}

// What CuTe's record for (lane, reg) must say if it agrees with libtmemjit: cells of the second
// 16x32bx2 access shifted by CuTe's column-only immediate (one access's cells).
RegisterImage expected(const tmem::Opcode& op, int lane, int reg) {
  std::array<tmem::TmemCell, 2> cells;
  const int count = tmem::tmem_cells(op, lane, reg, cells);
  const int imm = op.is_split() ? op.atom_tmem_cols() : 0;
  auto bit = [&](const tmem::TmemCell& c) { return 32 * (c.col + c.access * imm); };
  if (count == 1) return {lane, reg, cells[0].row, bit(cells[0]), cells[0].row, bit(cells[0]) + 16};
  return {lane, reg, cells[0].row, bit(cells[0]), cells[1].row, bit(cells[1])};
}

std::string describe(const RegisterImage& r) {
  return "lane " + std::to_string(r.lane) + " register " + std::to_string(r.reg) +
         ": bits 0-15 at (lane " + std::to_string(r.row0) + ", column bit " +
         std::to_string(r.bit0) + "), bits 16-31 at (lane " + std::to_string(r.row1) +
         ", column bit " + std::to_string(r.bit1) + ")";
}

class CuteImage : public testing::Test {
 protected:
  void SetUp() override {
    if (std::optional<std::string> reason = cute_missing()) GTEST_SKIP() << *reason;
    ASSERT_FALSE(cute_images().empty()) << "no atoms read from the cute_images output";
  }
};

TEST_F(CuteImage, EveryCuteAtomIsALibtmemjitForm) {
  EXPECT_EQ(cute_images().size(), 148u) << "CUTLASS 4.2 defines 74 load and 74 store atoms";
  for (const auto& [name, atom] : cute_images()) {
    const std::string text = tmemjit_cute::opcode_text_of_atom(name);
    ASSERT_FALSE(text.empty()) << "unexpected atom name " << name;
    tmem::Result<tmem::Opcode> op = tmem::Opcode::parse(text);
    ASSERT_TRUE(op.ok()) << name << " as " << text << ": " << op.error().message();
    EXPECT_EQ(atom.regs, op->regs_per_thread()) << name;
  }
}

// libtmemjit's forms with a b32 CuTe twin: every shape, num and pack/unpack libtmemjit accepts
// appears among CuTe's atoms, and the other way round (checked above).
TEST_F(CuteImage, EveryLibtmemjitFormHasACuteAtom) {
  std::set<std::string> cute;
  for (const auto& [name, atom] : cute_images())
    cute.insert(tmemjit_cute::opcode_text_of_atom(name));
  int forms = 0;
  for (tmem::Direction direction : {tmem::Direction::kLoad, tmem::Direction::kStore})
    for (tmem::Shape shape : tmem::all_shapes())
      for (int num = 1; num <= 128; num *= 2)
        for (bool pack : {false, true}) {
          tmem::Result<tmem::Opcode> op = tmem::Opcode::make(direction, shape, num, pack);
          if (!op.ok()) continue;
          ++forms;
          EXPECT_TRUE(cute.count(op->to_string())) << op->to_string() << " has no CuTe atom";
        }
  EXPECT_EQ(forms, 148);
}

// Per shape and direction: every atom's every lane and register, both 16-bit halves.
class CuteImageByShape : public CuteImage,
                         public testing::WithParamInterface<std::tuple<std::string, std::string>> {
};

TEST_P(CuteImageByShape, AgreesWithImage) {
  const auto& [dir, shape] = GetParam();
  const std::string prefix =
      std::string("SM100_TMEM_") + (dir == "ld" ? "LOAD_" : "STORE_") + shape;
  int atoms = 0;
  for (const auto& [name, atom] : cute_images()) {
    // The num follows the shape directly.
    if (name.rfind(prefix, 0) != 0 ||
        !std::isdigit(static_cast<unsigned char>(name[prefix.size()])))
      continue;
    ++atoms;
    const tmem::Opcode op = tmem::Opcode::parse(tmemjit_cute::opcode_text_of_atom(name)).value();
    ASSERT_EQ(atom.entries.size(), static_cast<size_t>(32 * op.regs_per_thread())) << name;
    int disagreements = 0;
    for (const RegisterImage& got : atom.entries) {
      const RegisterImage want = expected(op, got.lane, got.reg);
      if (got.row0 == want.row0 && got.bit0 == want.bit0 && got.row1 == want.row1 &&
          got.bit1 == want.bit1)
        continue;
      if (++disagreements <= 5)
        ADD_FAILURE() << name << " (" << op.to_string() << ")\n  CuTe:       " << describe(got)
                      << "\n  libtmemjit: " << describe(want);
    }
    EXPECT_EQ(disagreements, 0) << name;
  }
  EXPECT_GT(atoms, 0) << "no CuTe atom starts with " << prefix;
}

INSTANTIATE_TEST_SUITE_P(AllAtoms, CuteImageByShape,
                         testing::Combine(testing::Values("ld", "st"),
                                          testing::Values("32dp32b", "16dp64b", "16dp128b",
                                                          "16dp256b", "16dp32b")),
                         [](const testing::TestParamInfo<CuteImageByShape::ParamType>& p) {
                           return std::get<0>(p.param) + "_" + std::get<1>(p.param);
                         });

}  // namespace
