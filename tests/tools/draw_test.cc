// tmemjit draw: the pictures show what the plan's instructions do (native image of each cell).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "common/cli_util.h"
#include "common/spec_fixtures.h"

namespace {

using tmemjit_test::run_cli;

std::vector<std::string> spec_args(const tmemjit_test::SpecText& text) {
  std::vector<std::string> args = {"--op",   text.op,   "--scope", text.scope,
                                   "--tmem", text.tmem, "--regs",  text.regs};
  if (text.tmem2) args.insert(args.end(), {"--tmem2", *text.tmem2, "--imm", *text.imm});
  return args;
}

// The cell of `lane` in column `col` of the ASCII picture.
std::string ascii_cell(const std::string& picture, int lane, int col) {
  std::istringstream lines(picture);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string first;
    words >> first;
    if (first != std::to_string(lane)) continue;
    std::string cell;
    for (int c = 0; c <= col; ++c) words >> cell;
    return cell;
  }
  return "";
}

TEST(CliDraw, AsciiFollowsTheNativeImageOf16x64b) {
  auto op = tmem::Opcode::make(tmem::Direction::kStore, tmem::Shape::k16x64b, 2, false).value();
  std::vector<std::string> argv = {"draw"};
  for (auto& arg : spec_args(tmemjit_test::identity_spec(op))) argv.push_back(arg);
  argv.push_back("--ascii");
  auto r = tmemjit_test::run_cli_argv(argv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // 16x64b: lane l, register r -> row l/4 + 8*(l%2), column (l/2)%2 + 2r (PTX ISA Figure 184).
  EXPECT_EQ(ascii_cell(r.out, 0, 0), "0/0");
  EXPECT_EQ(ascii_cell(r.out, 0, 1), "2/0");
  EXPECT_EQ(ascii_cell(r.out, 8, 0), "1/0");
  EXPECT_EQ(ascii_cell(r.out, 1, 2), "4/1");
  EXPECT_EQ(ascii_cell(r.out, 32, 0), "32/0");  // warp 1's slab
  EXPECT_EQ(ascii_cell(r.out, 16, 0), ".");     // the upper half-slab stays empty
}

TEST(CliDraw, SvgOfTheSeedLayoutBHasEveryCellOnce) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("tmemjit_draw_" + std::to_string(::getpid()) + ".svg");
  std::vector<std::string> argv = {"draw"};
  for (auto& arg : spec_args(tmemjit_test::seed_layout_b(true))) argv.push_back(arg);
  argv.insert(argv.end(), {"-o", path.string()});
  auto r = tmemjit_test::run_cli_argv(argv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(path);
  std::stringstream svg;
  svg << in.rdbuf();
  std::filesystem::remove(path);
  const std::string text = svg.str();
  ASSERT_TRUE(text.starts_with("<svg")) << text.substr(0, 80);
  // 128 lanes x 64 columns, one thread/slot label each, and as many lane,column labels.
  const std::regex tmem_label(">[0-9]+/[0-9]+<"), regs_label(">[0-9]+,[0-9]+<");
  EXPECT_EQ(std::distance(std::sregex_iterator(text.begin(), text.end(), tmem_label),
                          std::sregex_iterator()),
            128 * 64);
  EXPECT_EQ(std::distance(std::sregex_iterator(text.begin(), text.end(), regs_label),
                          std::sregex_iterator()),
            128 * 64);
  EXPECT_NE(text.find(">127/63<"), std::string::npos);
  EXPECT_NE(text.find(">127,63<"), std::string::npos);
  // Four warps, four colors.
  for (const char* color : {"#aec7e8", "#ffbb78", "#98df8a", "#ff9896"})
    EXPECT_NE(text.find(color), std::string::npos);
}

TEST(CliDraw, PackedCellsShowBothHalves) {
  std::vector<std::string> argv = {"draw"};
  for (auto& arg : spec_args(tmemjit_test::seed_pack(true))) argv.push_back(arg);
  argv.insert(argv.end(), {"--ascii", "--columns", "4"});
  auto r = tmemjit_test::run_cli_argv(argv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // unpack::16b: register bits [0,16) go to the low half of column 2c, bits [16,32) to 2c+1.
  EXPECT_EQ(ascii_cell(r.out, 0, 0), "0/0l");
  EXPECT_EQ(ascii_cell(r.out, 0, 1), "0/0h");
  EXPECT_EQ(ascii_cell(r.out, 5, 2), "5/1l");
  EXPECT_NE(r.out.find("columns 4..127 not shown"), std::string::npos) << r.out;
  EXPECT_EQ(run_cli("draw", "--op", "x").exit_code, 2);
}

}  // namespace
