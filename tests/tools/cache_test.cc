// Tests of the cache through the tmemjit command: a second process gets a disk hit, --no-cache
// and --cache-dir, `cache stats|clear`, and several processes filling one directory at once.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/cache_test_util.h"
#include "common/cli_util.h"
#include "common/files.h"
#include "common/spec_fixtures.h"
#include "runtime/cache/disk.h"
#include "runtime/support/hash.h"
#include "tmem/opcode.h"

namespace tmem {
namespace {
using testing::read_file;

namespace fs = std::filesystem;
using testing::TempDir;
using tmemjit_test::run_cli;

// The seed's SPEC arguments, with the views spelled as given.
std::vector<std::string> seed_args(const tmemjit_test::SpecText& text) {
  return {"--op", text.op, "--scope", text.scope, "--tmem", text.tmem, "--regs", text.regs};
}

template <class... Extra>
tmemjit_test::CliResult compile(const tmemjit_test::SpecText& text, const Extra&... extra) {
  const std::vector<std::string> s = seed_args(text);
  return run_cli("compile", s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], extra...);
}

size_t count_of(const std::string& text, const std::string& word) {
  size_t count = 0;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++count;
  return count;
}

// Every file below <dir>/v1 decodes under the key its name spells; no temp file is left.
size_t expect_only_valid_entries(const fs::path& dir) {
  size_t entries = 0;
  for (const auto& file : fs::recursive_directory_iterator(dir / "v1")) {
    if (file.is_directory()) continue;
    const std::string name = file.path().filename().string();
    EXPECT_TRUE(name.ends_with(".bin") && name.size() == 34) << "stray file " << file.path();
    if (!name.ends_with(".bin")) continue;
    const std::optional<Key128> key =
        Key128::parse_hex(file.path().parent_path().filename().string() + name.substr(0, 30));
    EXPECT_TRUE(key.has_value()) << file.path();
    if (!key) continue;
    const Result<Payload> payload = decode_entry(*key, read_file(file.path()));
    EXPECT_TRUE(payload.ok()) << file.path() << ": "
                              << (payload.ok() ? "" : payload.error().message());
    ++entries;
  }
  return entries;
}

TEST(CliCache, SecondProcessGetsADiskHit) {
  TempDir dir;
  const std::string root = dir.path().string();
  const auto seed = tmemjit_test::seed_layout_b(true);
  auto first = compile(seed, "--cache-dir", root, "--json");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("cache: miss"), std::string::npos) << first.err;
  const nlohmann::json a = nlohmann::json::parse(first.out);
  EXPECT_EQ(a["cache"], "miss");
  EXPECT_GT(a["compile_ms"].get<double>(), 0.0);

  auto second = compile(seed, "--cache-dir", root, "--json");
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.err.find("cache: disk hit"), std::string::npos) << second.err;
  const nlohmann::json b = nlohmann::json::parse(second.out);
  EXPECT_EQ(b["cache"], "disk");
  EXPECT_EQ(b["key"], a["key"]);
  EXPECT_EQ(b["cubin_bytes"], a["cubin_bytes"]);
  EXPECT_EQ(b["compile_ms"].get<double>(), 0.0);

  // The same transfer spelled differently (spacing, an equal factorization): the same entry.
  tmemjit_test::SpecText respelled = seed;
  respelled.regs = "tensor((64,128),S[(64,2,2,32):(1@tid_in_wg,64@tid_in_wg,32,1)],f32)" +
                   tmemjit_test::kSeedRearrange;
  auto third = compile(respelled, "--cache-dir", root);
  ASSERT_EQ(third.exit_code, 0) << third.err;
  EXPECT_NE(third.err.find("cache: disk hit"), std::string::npos) << third.err;
  EXPECT_NE(third.out.find("from the cache (disk hit)"), std::string::npos) << third.out;

  // --no-cache: compiled, nothing written.
  auto off = compile(seed, "--no-cache", "--json");
  ASSERT_EQ(off.exit_code, 0) << off.err;
  EXPECT_EQ(nlohmann::json::parse(off.out)["cache"], "off");
  EXPECT_EQ(expect_only_valid_entries(dir.path()), 1u);

  auto both = compile(seed, "--no-cache", "--cache-dir", root);
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("--no-cache and --cache-dir cannot be combined"), std::string::npos)
      << both.err;
}

TEST(CliCache, StatsAndClear) {
  TempDir dir;
  const std::string root = dir.path().string();
  ASSERT_EQ(compile(tmemjit_test::seed_layout_b(true), "--cache-dir", root).exit_code, 0);
  ASSERT_EQ(compile(tmemjit_test::seed_layout_b(false), "--cache-dir", root).exit_code, 0);

  auto stats = run_cli("cache", "stats", "--cache-dir", root, "--json");
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  const nlohmann::json json = nlohmann::json::parse(stats.out);
  EXPECT_EQ(json["ok"], true);
  EXPECT_EQ(json["disk"]["dir"], (dir.path() / "v1").string());
  EXPECT_EQ(json["disk"]["entries"], 2);
  EXPECT_GT(json["disk"]["bytes"].get<uint64_t>(), 2 * kDiskHeaderBytes);
  EXPECT_EQ(json["memory"]["hits"], 0);  // counters are per process

  auto text = run_cli("cache", "stats", "--cache-dir", root);
  ASSERT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("entries: 2"), std::string::npos) << text.out;

  auto cleared = run_cli("cache", "clear", "--cache-dir", root);
  ASSERT_EQ(cleared.exit_code, 0) << cleared.err;
  EXPECT_NE(cleared.out.find("removed 2 entries"), std::string::npos) << cleared.out;
  auto again = compile(tmemjit_test::seed_layout_b(true), "--cache-dir", root);
  EXPECT_NE(again.err.find("cache: miss"), std::string::npos) << again.err;

  EXPECT_EQ(run_cli("cache").exit_code, 2);
  EXPECT_EQ(run_cli("cache", "purge").exit_code, 2);
  EXPECT_EQ(run_cli("cache", "stats", "extra").exit_code, 2);
}

TEST(CliCache, UnwritableDirectoryStillCompilesWithOneWarning) {
  TempDir dir;
  std::ofstream(dir.path() / "a-file") << "not a directory";
  auto result = compile(tmemjit_test::seed_layout_b(true), "--cache-dir",
                        (dir.path() / "a-file" / "cache").string());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  size_t warnings = 0;
  for (size_t at = result.err.find("warning:"); at != std::string::npos;
       at = result.err.find("warning:", at + 1))
    ++warnings;
  EXPECT_EQ(warnings, 1u) << result.err;
  EXPECT_NE(result.err.find("cache: miss"), std::string::npos) << result.err;
}

// Four processes at once, each compiling the same six specs in its own order into one directory.
TEST(CliCache, SeveralProcessesFillingOneDirectoryLeaveOnlyValidEntries) {
  TempDir dir;
  std::vector<std::string> files;
  for (const char* name :
       {"tcgen05.st.sync.aligned.32x32b.x1.b32", "tcgen05.ld.sync.aligned.32x32b.x2.b32",
        "tcgen05.st.sync.aligned.16x64b.x1.b32", "tcgen05.ld.sync.aligned.16x128b.x1.b32",
        "tcgen05.st.sync.aligned.16x256b.x1.b32", "tcgen05.ld.sync.aligned.16x32bx2.x1.b32"}) {
    const TransferSpec spec = tmemjit_test::identity_spec(Opcode::parse(name).value()).make();
    files.push_back((dir.path() / ("spec" + std::to_string(files.size()) + ".json")).string());
    std::ofstream(files.back()) << spec.to_json();
  }
  const std::string cache = (dir.path() / "cache").string();
  std::string script;
  for (int p = 0; p < 4; ++p) {
    script += "(rc=0; for i in";
    for (size_t n = 0; n < files.size(); ++n)
      script += " " + std::to_string((n + static_cast<size_t>(p) * 5) % files.size());
    script += "; do " + tmemjit_test::shell_quote(TMEMJIT_CLI_PATH) + " compile --cache-dir " +
              tmemjit_test::shell_quote(cache) + " --spec " +
              tmemjit_test::shell_quote(dir.path().string()) + "/spec$i.json >/dev/null 2>>" +
              tmemjit_test::shell_quote(dir.path().string()) + "/err" + std::to_string(p) +
              " || rc=1; done; exit $rc) & ";
  }
  script += "fail=0; for job in $(jobs -p); do wait $job || fail=1; done; exit $fail";
  const int status = std::system(("bash -c " + tmemjit_test::shell_quote(script)).c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << read_file(dir.path() / "err0") << read_file(dir.path() / "err1");
  EXPECT_EQ(expect_only_valid_entries(cache), files.size());
  // One cache line per compile; which process missed and which hit the disk depends on timing,
  // but each entry was compiled by at least one of them.
  size_t lines = 0, misses = 0;
  for (int p = 0; p < 4; ++p) {
    const std::string err = read_file(dir.path() / ("err" + std::to_string(p)));
    for (size_t at = err.find("cache: "); at != std::string::npos; at = err.find("cache: ", at + 1))
      ++lines;
    for (size_t at = err.find("cache: miss"); at != std::string::npos;
         at = err.find("cache: miss", at + 1))
      ++misses;
    EXPECT_EQ(err.find("error"), std::string::npos) << err;
  }
  EXPECT_EQ(lines, 4 * files.size());
  EXPECT_GE(misses, files.size());
}

// Issue 9: a full disk. RLIMIT_FSIZE (SIGXFSZ ignored) makes every write past 4 KiB fail the way
// ENOSPC does; the entry write fails, the compile still succeeds from memory with one warning, and
// no partial file is left behind.
TEST(CliCache, AFullDiskDegradesToMemoryWithOneWarning) {
  TempDir dir;
  const std::vector<std::string> s = seed_args(tmemjit_test::seed_layout_b(true));
  std::string command = "trap '' XFSZ; ulimit -f 4; " +
                        tmemjit_test::shell_quote(TMEMJIT_CLI_PATH) + " compile --cache-dir " +
                        tmemjit_test::shell_quote((dir.path() / "cache").string());
  for (const std::string& arg : s) command += " " + tmemjit_test::shell_quote(arg);
  command += " >/dev/null 2>" + tmemjit_test::shell_quote((dir.path() / "err").string());
  const int status = std::system(("bash -c " + tmemjit_test::shell_quote(command)).c_str());
  const std::string err = read_file(dir.path() / "err");
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << err;
  EXPECT_EQ(count_of(err, "warning: disk cache disabled"), 1u) << err;
  EXPECT_NE(err.find("caching in memory only"), std::string::npos) << err;
  size_t files = 0;
  for (const auto& file : fs::recursive_directory_iterator(dir.path() / "cache"))
    files += file.is_regular_file();
  EXPECT_EQ(files, 0u) << "a failed write left a file behind";
}

// The six specs of the multi-process tests, one JSON file each in `dir`.
std::vector<std::string> write_six_specs(const fs::path& dir) {
  std::vector<std::string> files;
  for (const char* name :
       {"tcgen05.st.sync.aligned.32x32b.x1.b32", "tcgen05.ld.sync.aligned.32x32b.x2.b32",
        "tcgen05.st.sync.aligned.16x64b.x1.b32", "tcgen05.ld.sync.aligned.16x128b.x1.b32",
        "tcgen05.st.sync.aligned.16x256b.x1.b32", "tcgen05.ld.sync.aligned.16x32bx2.x1.b32"}) {
    const TransferSpec spec = tmemjit_test::identity_spec(Opcode::parse(name).value()).make();
    files.push_back((dir / ("spec" + std::to_string(files.size()) + ".json")).string());
    std::ofstream(files.back()) << spec.to_json();
  }
  return files;
}

// Issue 9: eight processes fill one directory under a size cap small enough that they evict each
// other's entries while writing. Every process succeeds and what is left decodes.
TEST(CliCache, EightProcessesFillingAndEvictingLeaveOnlyValidEntries) {
  TempDir dir;
  const std::vector<std::string> files = write_six_specs(dir.path());
  const std::string cache = (dir.path() / "cache").string();
  std::string script;
  for (int p = 0; p < 8; ++p) {
    script += "(rc=0; for i in 0 1 2 3 4 5 " + std::to_string(p % 6) +
              "; do TMEMJIT_CACHE_MAX_BYTES=30000 " + tmemjit_test::shell_quote(TMEMJIT_CLI_PATH) +
              " compile --cache-dir " + tmemjit_test::shell_quote(cache) + " --spec " +
              tmemjit_test::shell_quote(dir.path().string()) + "/spec$(( (i + " +
              std::to_string(p) + ") % 6 )).json >/dev/null 2>>" +
              tmemjit_test::shell_quote(dir.path().string()) + "/err" + std::to_string(p) +
              " || rc=1; done; exit $rc) & ";
  }
  script += "fail=0; for job in $(jobs -p); do wait $job || fail=1; done; exit $fail";
  const int status = std::system(("bash -c " + tmemjit_test::shell_quote(script)).c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << read_file(dir.path() / "err0");
  for (int p = 0; p < 8; ++p) {
    const std::string err = read_file(dir.path() / ("err" + std::to_string(p)));
    EXPECT_EQ(err.find("error"), std::string::npos) << err;
  }
  // Entries are 10-16 KB: a 30,000-byte cap keeps at most a few of the six. Two writers that
  // evict at once may each remove the other's newest entry (each keeps only its own), so the
  // concurrent phase can end with none; a writer alone keeps what it just wrote.
  expect_only_valid_entries(cache);
  const std::string last = "TMEMJIT_CACHE_MAX_BYTES=30000 " +
                           tmemjit_test::shell_quote(TMEMJIT_CLI_PATH) + " compile --cache-dir " +
                           tmemjit_test::shell_quote(cache) + " --spec " +
                           tmemjit_test::shell_quote(files[0]) + " >/dev/null";
  ASSERT_EQ(std::system(("bash -c " + tmemjit_test::shell_quote(last)).c_str()), 0);
  const size_t left = expect_only_valid_entries(cache);
  EXPECT_GE(left, 1u);
  EXPECT_LT(left, files.size());
}

// Issue 9: writers killed with SIGKILL at any moment (while compiling, while writing the temp
// file, around the rename) leave no corrupt entry: what is left decodes, and every spec still
// compiles from that directory.
TEST(CliCache, KilledWritersLeaveNoCorruptEntry) {
  TempDir dir;
  const std::vector<std::string> files = write_six_specs(dir.path());
  const std::string cache = (dir.path() / "cache").string();
  std::string script;
  for (int round = 0; round < 6; ++round) {
    for (int p = 0; p < 3; ++p) {
      script += tmemjit_test::shell_quote(TMEMJIT_CLI_PATH) + " compile --cache-dir " +
                tmemjit_test::shell_quote(cache) + " --spec " +
                tmemjit_test::shell_quote(files[static_cast<size_t>((round + p) % 6)]) +
                " >/dev/null 2>&1 & pid" + std::to_string(p) + "=$!; ";
    }
    // Kill at 20 to 95 ms: a process loads in about 30 ms and compiles in 20-40, so the kills land
    // before, during and after the compile and the write.
    script += "sleep 0.0" + std::to_string(20 + round * 15) +
              "; kill -9 $pid0 $pid1 $pid2 2>/dev/null; wait 2>/dev/null; ";
  }
  script += "exit 0";
  const int status = std::system(("bash -c " + tmemjit_test::shell_quote(script)).c_str());
  ASSERT_TRUE(WIFEXITED(status)) << status;
  // Entries that exist are whole; a killed writer's temp file is not an entry (eviction scans
  // remove stale ones later).
  size_t entries = 0;
  if (fs::exists(fs::path(cache) / "v1")) {
    for (const auto& file : fs::recursive_directory_iterator(fs::path(cache) / "v1")) {
      const std::string name = file.path().filename().string();
      if (file.is_directory() || !name.ends_with(".bin")) continue;
      const std::optional<Key128> key =
          Key128::parse_hex(file.path().parent_path().filename().string() + name.substr(0, 30));
      ASSERT_TRUE(key.has_value()) << file.path();
      EXPECT_TRUE(decode_entry(*key, read_file(file.path())).ok()) << file.path();
      ++entries;
    }
  }
  // And the directory still serves: each spec compiles (from disk or afresh) without an error.
  for (const std::string& file : files) {
    auto r = run_cli("compile", "--cache-dir", cache, "--spec", file);
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  std::printf("killed-writer rounds left %zu whole entries\n", entries);
}

}  // namespace
}  // namespace tmem
