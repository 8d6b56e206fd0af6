// Tests of cache bundles: the file format, validation of every byte, identity checks (another
// library build, toolkit or signing imports nothing and says why), and `tmemjit cache
// export|import` making the first compile in another cache directory a disk hit.
#include "runtime/cache/bundle.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/cache_test_util.h"
#include "common/cli_util.h"
#include "common/files.h"
#include "common/spec_fixtures.h"
#include "runtime/cache/module_cache.h"

namespace tmem {
namespace {
using testing::read_file;
using testing::write_file;

namespace fs = std::filesystem;
using testing::TempDir;
using testing::test_key;
using testing::test_payload;

BundleIdentity identity(bool signed_entries = false) {
  BundleIdentity id;
  id.library = "build-id 0123";
  id.toolkit = "nvjitlink 13.0; nvptxcompiler 13.0; nvrtc 13.0; ptxas release 13.0";
  id.key_format = kCacheKeyFormatVersion;
  id.signed_entries = signed_entries;
  return id;
}

TEST(Bundle, EncodeDecodeRoundTrip) {
  const std::vector<std::string> entries = {encode_entry(test_key(1), test_payload(1)),
                                            encode_entry(test_key(2), test_payload(2, 5000))};
  const std::string bytes = encode_bundle(identity(), entries);
  Result<DecodedBundle> decoded = decode_bundle(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message();
  EXPECT_EQ(decoded->identity.to_text(), identity().to_text());
  ASSERT_EQ(decoded->entries.size(), 2u);
  EXPECT_EQ(std::string(decoded->entries[1].data(), decoded->entries[1].size()), entries[1]);
  EXPECT_TRUE(identity_mismatch(decoded->identity, identity()).empty());
  EXPECT_TRUE(decode_bundle(encode_bundle(identity(), {})).ok());  // an empty cache
}

TEST(Bundle, EveryDamageIsCaught) {
  const std::string bytes = encode_bundle(
      identity(), std::vector<std::string>{encode_entry(test_key(1), test_payload(1))});
  // Truncated anywhere, or any byte flipped: the checksum (or the magic, or the size) says so.
  for (size_t keep = 0; keep < bytes.size(); keep += 37)
    EXPECT_FALSE(decode_bundle(std::string_view(bytes).substr(0, keep)).ok()) << keep;
  for (size_t at = 0; at < bytes.size(); at += 41) {
    std::string flipped = bytes;
    flipped[at] ^= 0x08;
    EXPECT_FALSE(decode_bundle(flipped).ok()) << at;
  }
  Result<DecodedBundle> short_file = decode_bundle(bytes.substr(0, bytes.size() - 1));
  ASSERT_FALSE(short_file.ok());
  EXPECT_NE(short_file.error().message().find("checksum"), std::string::npos);
}

TEST(Bundle, AnotherBuildToolkitOrSigningImportsNothingAndSaysWhy) {
  BundleIdentity other_build = identity();
  other_build.library = "build-id 9999";
  EXPECT_NE(identity_mismatch(other_build, identity()).find("another libtmemjit build"),
            std::string::npos);
  BundleIdentity other_toolkit = identity();
  other_toolkit.toolkit = "nvjitlink 12.9";
  EXPECT_NE(identity_mismatch(other_toolkit, identity()).find("another CUDA toolkit"),
            std::string::npos);
  BundleIdentity other_format = identity();
  other_format.key_format += 1;
  EXPECT_NE(identity_mismatch(other_format, identity()).find("keys of format"), std::string::npos);
  EXPECT_NE(identity_mismatch(identity(true), identity(false)).find("signed"), std::string::npos);
  EXPECT_NE(identity_mismatch(identity(false), identity(true)).find("not signed"),
            std::string::npos);

  // Through import_bundle: nothing reaches the disk cache.
  TempDir dir;
  const fs::path path = dir.path() / "other.tmjb";
  write_file(path, encode_bundle(other_build, std::vector<std::string>{
                                                  encode_entry(test_key(1), test_payload(1))}));
  DiskCache disk(dir.path() / "cache", uint64_t{1} << 30);
  Result<BundleSummary> imported = import_bundle(disk, path.string(), identity());
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.error().code(), ErrorCode::kUsage);
  EXPECT_NE(imported.error().message().find("imports nothing"), std::string::npos);
  EXPECT_NE(imported.error().message().find("build-id 9999"), std::string::npos);
  EXPECT_EQ(disk.usage().entries, 0u);
}

// A bundle whose checksum is right but whose one entry is bad (a forger recomputed the checksum)
// imports nothing: every entry is validated before any is written.
TEST(Bundle, OneBadEntryImportsNothing) {
  std::string bad_entry = encode_entry(test_key(2), test_payload(2));
  bad_entry[kDiskHeaderBytes + 1] ^= 1;  // payload checksum now wrong
  const std::vector<std::string> entries = {encode_entry(test_key(1), test_payload(1)), bad_entry};
  TempDir dir;
  const fs::path path = dir.path() / "b.tmjb";
  write_file(path, encode_bundle(identity(), entries));
  DiskCache disk(dir.path() / "cache", uint64_t{1} << 30);
  Result<BundleSummary> imported = import_bundle(disk, path.string(), identity());
  ASSERT_FALSE(imported.ok());
  EXPECT_NE(imported.error().message().find("entry 1 of 2"), std::string::npos)
      << imported.error().message();
  EXPECT_EQ(disk.usage().entries, 0u);
  // Not a regular file, or absent.
  EXPECT_FALSE(import_bundle(disk, "/dev/zero", identity()).ok());
  EXPECT_FALSE(import_bundle(disk, (dir.path() / "absent").string(), identity()).ok());
}

TEST(Bundle, ExportThenImportCopiesEveryValidEntry) {
  TempDir dir;
  DiskCache from(dir.path() / "from", uint64_t{1} << 30);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(from.write(test_key(i), test_payload(i)).written);
  write_file(from.entry_path(test_key(4)), "garbage");  // left out, counted
  const std::string path = (dir.path() / "all.tmjb").string();
  Result<BundleSummary> exported = export_bundle(from, path, identity());
  ASSERT_TRUE(exported.ok()) << exported.error().message();
  EXPECT_EQ(exported->entries, 4u);
  EXPECT_EQ(exported->skipped, 1u);
  EXPECT_EQ(exported->bytes, fs::file_size(path));

  DiskCache to(dir.path() / "to", uint64_t{1} << 30);
  Result<BundleSummary> imported = import_bundle(to, path, identity());
  ASSERT_TRUE(imported.ok()) << imported.error().message();
  EXPECT_EQ(imported->entries, 4u);
  for (int i = 0; i < 4; ++i) {
    std::optional<Payload> payload = to.read(test_key(i));
    ASSERT_TRUE(payload.has_value()) << i;
    EXPECT_EQ(*payload, test_payload(i));
  }
  // Signed caches: the bundle carries signed entries, which only the same secret imports.
  if (!EntrySigner::available()) return;
  auto signer = std::make_shared<const EntrySigner>("ship it");
  DiskCache signed_from(dir.path() / "sfrom", uint64_t{1} << 30, signer);
  ASSERT_TRUE(signed_from.write(test_key(7), test_payload(7)).written);
  const std::string signed_path = (dir.path() / "signed.tmjb").string();
  ASSERT_TRUE(export_bundle(signed_from, signed_path, identity(true)).ok());
  DiskCache signed_to(dir.path() / "sto", uint64_t{1} << 30, signer);
  ASSERT_TRUE(import_bundle(signed_to, signed_path, identity(true)).ok());
  EXPECT_TRUE(signed_to.read(test_key(7)).has_value());
  auto forger = std::make_shared<const EntrySigner>("guess");
  DiskCache forged_to(dir.path() / "fto", uint64_t{1} << 30, forger);
  Result<BundleSummary> forged = import_bundle(forged_to, signed_path, identity(true));
  ASSERT_FALSE(forged.ok());
  EXPECT_NE(forged.error().message().find("does not verify"), std::string::npos);
}

// The "done when": a bundle exported in one cache directory makes the first compile in
// another a disk hit; a damaged bundle imports nothing.
TEST(CliBundle, ExportedBundleMakesTheFirstCompileElsewhereADiskHit) {
  TempDir dir;
  const std::string a = (dir.path() / "a").string(), b = (dir.path() / "b").string();
  const std::string bundle = (dir.path() / "app.tmjb").string();
  const tmemjit_test::SpecText seed = tmemjit_test::seed_layout_b(true);
  auto compile = [&](const std::string& cache) {
    return tmemjit_test::run_cli("compile", "--op", seed.op, "--scope", seed.scope, "--tmem",
                                 seed.tmem, "--regs", seed.regs, "--cache-dir", cache);
  };
  ASSERT_EQ(compile(a).exit_code, 0);
  const auto exported =
      tmemjit_test::run_cli("cache", "export", bundle, "--cache-dir", a, "--json");
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_EQ(nlohmann::json::parse(exported.out)["entries"], 1);

  std::string damaged = read_file(bundle);
  damaged[damaged.size() / 2] ^= 1;
  write_file(dir.path() / "damaged.tmjb", damaged);
  const auto refused = tmemjit_test::run_cli(
      "cache", "import", (dir.path() / "damaged.tmjb").string(), "--cache-dir", b);
  EXPECT_EQ(refused.exit_code, 3);
  EXPECT_NE(refused.err.find("imports nothing"), std::string::npos) << refused.err;

  const auto imported = tmemjit_test::run_cli("cache", "import", bundle, "--cache-dir", b);
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_NE(imported.out.find("imported 1 entries"), std::string::npos) << imported.out;
  const auto hit = compile(b);
  ASSERT_EQ(hit.exit_code, 0) << hit.err;
  EXPECT_NE(hit.err.find("cache: disk hit"), std::string::npos) << hit.err;

  EXPECT_EQ(tmemjit_test::run_cli("cache", "export").exit_code, 2);
  EXPECT_EQ(tmemjit_test::run_cli("cache", "import", bundle, "extra").exit_code, 2);
}

// warmup reports bad lines by number and compiles the good ones.
TEST(CliWarmup, ReportsErrorsByLineAndCompilesTheRest) {
  TempDir dir;
  const std::string good =
      tmemjit_test::identity_spec(Opcode::make(Direction::kStore, Shape::k32x32b, 1, false).value())
          .make()
          .to_json();
  nlohmann::json fill = nlohmann::json::parse(good);
  fill["kernel"] = "fill";
  fill["target"] = "sm_103a";
  const fs::path list = dir.path() / "list.jsonl";
  write_file(list, "# a comment\n" + good + "\n\n{not json\n" + fill.dump() +
                       "\n{\"op\": \"tcgen05.st.sync.aligned.32x32b.x1.b32\"}\n" + good + "\n");
  const auto run = tmemjit_test::run_cli("warmup", "--specs", list.string(), "--cache-dir",
                                         (dir.path() / "c").string(), "--json");
  EXPECT_EQ(run.exit_code, 1);
  const nlohmann::json json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["specs"], 5);
  EXPECT_EQ(json["failed"], 2);
  EXPECT_EQ(json["compiled"], 2);
  EXPECT_EQ(json["memory_hits"], 1);  // line 7 repeats line 2
  EXPECT_EQ(json["errors"][0]["line"], 4);
  EXPECT_EQ(json["errors"][1]["line"], 6);
  EXPECT_EQ(json["errors"][1]["code"], "parse");

  const auto text = tmemjit_test::run_cli("warmup", "--specs", list.string(), "--cache-dir",
                                          (dir.path() / "c").string());
  EXPECT_NE(text.err.find(list.string() + ":4: error: parse"), std::string::npos) << text.err;
  EXPECT_NE(text.out.find("2 disk hits"), std::string::npos) << text.out;
  EXPECT_EQ(tmemjit_test::run_cli("warmup").exit_code, 2);
  EXPECT_EQ(tmemjit_test::run_cli("warmup", "--specs", "/nonexistent.jsonl").exit_code, 2);
  EXPECT_EQ(tmemjit_test::run_cli("warmup", "--specs", list.string(), "--kernel", "cuda").exit_code,
            2);
}

}  // namespace
}  // namespace tmem
