// The cache entry's metadata reader (runtime/jit/entry_meta.h) against forged numbers and kinds
// (issue 39, N14): a value out of its field's range, or an entry of the other call's kind, is a
// damaged entry naming the field, never a conversion to another number.
#include "runtime/jit/entry_meta.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tmem {
namespace {

using json = nlohmann::json;

// An entry with every counted field present: a transfer, a checked instruction, code statistics.
KernelEntryMeta full_meta(const std::string& kind) {
  KernelEntryMeta meta;
  meta.kind = kind;
  meta.entry = "k";
  meta.target = "sm_100a";
  meta.backend = "ptxas";
  meta.transfers.push_back({"acc", "tcgen05.ld.sync.aligned.32x32b.x32.b32", 32, 2, 64});
  meta.checked.push_back({"tcgen05.ld.sync.aligned.32x32b.x32.b32", "k", 3, true, 32, 32, 64});
  meta.include_files = 2;
  meta.code = {40, 0, 120, 2, -1, "sass encoding (sm_100 family)"};
  return meta;
}

std::string with(const std::string& kind, const json::json_pointer& field, const json& value) {
  json doc = json::parse(full_meta(kind).to_json());
  doc[field] = value;
  return doc.dump();
}

TEST(EntryMeta, ARoundTripReadsEveryField) {
  for (const char* kind : {"kernel", "transfer"}) {
    const KernelEntryMeta meta = full_meta(kind);
    const Result<KernelEntryMeta> read = KernelEntryMeta::parse(meta.to_json(), kind);
    ASSERT_TRUE(read.ok()) << read.error().message();
    EXPECT_EQ(read->transfers[0].alloc_columns, 64);
    EXPECT_EQ(read->checked[0].body_index, 3);
    EXPECT_EQ(read->include_files, 2);
    EXPECT_EQ(read->code, meta.code);
  }
}

// Each counted field, each hostile value: what nlohmann's get<int>() once read as 2, INT_MIN, -5
// or -1 (issue 39, N14) is damage naming the field and the text.
TEST(EntryMeta, NumbersOutOfTheirFieldsRangeAreDamage) {
  const std::vector<std::string> fields = {"/include_files",
                                           "/code/registers",
                                           "/code/local_bytes",
                                           "/code/instructions",
                                           "/code/ldtm",
                                           "/code/sttm",
                                           "/transfers/0/regs_per_thread",
                                           "/transfers/0/instructions_per_warp",
                                           "/transfers/0/alloc_columns",
                                           "/checked/0/body_index",
                                           "/checked/0/rows",
                                           "/checked/0/columns",
                                           "/checked/0/alloc_columns"};
  const std::vector<json> values = {
      json(4294967298ULL), json(1e30),   json(-5),  json(18446744073709551615ULL),
      json(2147483648LL),  json(2.5),    json(2.0), json("2"),
      json(true),          json(nullptr)};
  for (const std::string& field : fields) {
    for (const json& value : values) {
      SCOPED_TRACE(field + " = " + value.dump());
      const Result<KernelEntryMeta> read =
          KernelEntryMeta::parse(with("kernel", json::json_pointer(field), value));
      ASSERT_FALSE(read.ok()) << "read as " << read->include_files << ", " << read->code.registers;
      EXPECT_EQ(read.error().code(), ErrorCode::kIo);
      EXPECT_EQ(read.error().message().rfind("cache entry metadata is damaged", 0), 0u)
          << read.error().message();
      const std::string name = field.substr(field.rfind('/') + 1);
      EXPECT_NE(read.error().message().find(name), std::string::npos) << read.error().message();
    }
  }
}

// The bounds themselves are not damage: INT_MAX everywhere, -1 where "not counted" means it.
TEST(EntryMeta, TheBoundsOfEachRangeRead) {
  Result<KernelEntryMeta> read =
      KernelEntryMeta::parse(with("kernel", json::json_pointer("/code/ldtm"), -1));
  ASSERT_TRUE(read.ok()) << read.error().message();
  EXPECT_EQ(read->code.ldtm, -1);
  read = KernelEntryMeta::parse(with("kernel", json::json_pointer("/code/registers"), 2147483647));
  ASSERT_TRUE(read.ok()) << read.error().message();
  EXPECT_EQ(read->code.registers, 2147483647);
  read = KernelEntryMeta::parse(with("kernel", json::json_pointer("/code/registers"), -1));
  EXPECT_FALSE(read.ok());
}

// The format is compared, not converted: 2^32 + 2 and 2.5 once passed for format 2.
TEST(EntryMeta, AFormatThatOnlyConvertsToOursIsDamage) {
  for (const json& format : {json(4294967298ULL), json(2.5), json(2.0), json("2"), json(nullptr)}) {
    SCOPED_TRACE(format.dump());
    const Result<KernelEntryMeta> read =
        KernelEntryMeta::parse(with("kernel", json::json_pointer("/format"), format));
    ASSERT_FALSE(read.ok());
    EXPECT_NE(read.error().message().find("format"), std::string::npos) << read.error().message();
  }
}

// A transfer entry is never a kernel and a kernel entry never a transfer.
TEST(EntryMeta, AnEntryOfTheOtherKindIsDamage) {
  const Result<KernelEntryMeta> as_kernel = KernelEntryMeta::parse(full_meta("transfer").to_json());
  ASSERT_FALSE(as_kernel.ok());
  EXPECT_NE(as_kernel.error().message().find("a transfer entry where a kernel entry belongs"),
            std::string::npos)
      << as_kernel.error().message();
  const Result<KernelEntryMeta> as_transfer =
      KernelEntryMeta::parse(full_meta("kernel").to_json(), "transfer");
  ASSERT_FALSE(as_transfer.ok());
  EXPECT_NE(as_transfer.error().message().find("a kernel entry where a transfer entry belongs"),
            std::string::npos)
      << as_transfer.error().message();
}

}  // namespace
}  // namespace tmem
