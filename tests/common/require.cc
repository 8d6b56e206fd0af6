// TMEMJIT_REQUIRE: skips that become failures (docs/reliability.md "Skips"). The device, emulation,
// CuTe and SASS suites skip with the reason wherever their GPU or tool is missing; on a machine
// that has them (the H200 runs, CI with nvdisasm) a skip means an install or a driver went wrong,
// so TMEMJIT_REQUIRE=emu,device,sass,cute turns each such skip into a failure that quotes it.
//
// A skipped test fails when its CTest label (TMEMJIT_TEST_LABEL, set by tmemjit_label_tests) is
// listed, or when `sass` is listed and the skip says the SASS was not checked. Linked into every
// test executable by tmemjit_add_test.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <sstream>
#include <string>

namespace {

std::set<std::string> listed(const char* text) {
  std::set<std::string> out;
  std::stringstream in(text != nullptr ? text : "");
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.insert(item);
  return out;
}

class RequireListener : public ::testing::EmptyTestEventListener {
 public:
  RequireListener()
      : required_(listed(std::getenv("TMEMJIT_REQUIRE"))),
        label_(std::getenv("TMEMJIT_TEST_LABEL") != nullptr ? std::getenv("TMEMJIT_TEST_LABEL")
                                                            : "") {}

  void OnTestEnd(const ::testing::TestInfo& info) override {
    const ::testing::TestResult* result = info.result();
    if (required_.empty() || result == nullptr || !result->Skipped()) return;
    std::string why;
    for (int i = 0; i < result->total_part_count(); ++i)
      if (result->GetTestPartResult(i).skipped()) why += result->GetTestPartResult(i).message();
    const bool sass =
        required_.count("sass") != 0 && (why.find("SASS not checked") != std::string::npos ||
                                         why.find("disassembler") != std::string::npos);
    if (required_.count(label_) != 0 || sass)
      ADD_FAILURE() << "skipped, but TMEMJIT_REQUIRE=" << std::getenv("TMEMJIT_REQUIRE")
                    << " requires it" << (sass ? " (sass)" : " (label " + label_ + ")") << ": "
                    << why;
  }

 private:
  std::set<std::string> required_;
  std::string label_;
};

const bool kRegistered = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new RequireListener);
  return true;
}();

}  // namespace
