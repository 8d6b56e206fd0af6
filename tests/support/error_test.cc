// Error: keyed details, their text, and the device fault callers act on instead of the message.
#include <gtest/gtest.h>

#include "tmem/result.h"

namespace tmem {
namespace {

TEST(Error, AStringDetailIsOneNoteAndPrintsAsIs) {
  Error error(ErrorCode::kUsage, "bad thing", "what to do");
  ASSERT_EQ(error.detail_entries().size(), 1u);
  EXPECT_EQ(error.detail("note"), "what to do");
  EXPECT_EQ(error.details(), "what to do");
  EXPECT_EQ(error.full_text(), "bad thing\nwhat to do");
}

TEST(Error, KeyedDetailsAreFoundByKeyAndPrintedInOrder) {
  Error error(ErrorCode::kToolchain, "ptxas failed",
              {{"backend", "ptxas"}, {"log", "line 1\nline 2\n"}, {"ptx", ".version 8.8\n"}});
  EXPECT_EQ(error.detail("backend"), "ptxas");
  EXPECT_EQ(error.detail("log"), "line 1\nline 2\n");
  EXPECT_TRUE(error.has_detail("ptx"));
  EXPECT_FALSE(error.has_detail("operand"));
  EXPECT_EQ(error.detail("operand"), "");
  EXPECT_EQ(error.details(), "backend: ptxas\nlog:\nline 1\nline 2\nptx:\n.version 8.8\n");
  error.add_detail("note", "try -O0");
  EXPECT_EQ(error.detail_entries().back(), (ErrorDetail{"note", "try -O0"}));
}

TEST(Error, TheColumnIsDataTheMessageAlreadySays) {
  Error error(ErrorCode::kParse, "at column 3: unexpected ')'", {{"column", "3"}});
  EXPECT_EQ(error.detail("column"), "3");
  EXPECT_EQ(error.details(), "");
}

TEST(Error, NoDetailsMeansTheMessageAlone) {
  Error error(ErrorCode::kParse, "at column 3: unexpected ')'");
  EXPECT_TRUE(error.detail_entries().empty());
  EXPECT_EQ(error.full_text(), error.message());
}

TEST(Error, TheDeviceFaultIsDataNotText) {
  Error error(ErrorCode::kDriver, "no CUDA device: the driver reports 0 devices");
  EXPECT_EQ(error.device_fault(), DeviceFault::kNone);
  error.set_device_fault(DeviceFault::kNoDevice);
  EXPECT_EQ(error.device_fault(), DeviceFault::kNoDevice);
}

}  // namespace
}  // namespace tmem
