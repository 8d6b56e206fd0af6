// Settings::from_environment: every variable's default, each variable reaching its field, and a
// value that does not parse leaving the default with a warning that names it.
#include "runtime/support/settings.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/scoped_env.h"

namespace tmem {
namespace {

using testing::ScopedEnv;

// Every variable Settings reads (docs/settings.md has one row for each).
const char* const kVariables[] = {"TMEMJIT_DISABLE_CACHE",
                                  "TMEMJIT_CACHE_DIR",
                                  "XDG_CACHE_HOME",
                                  "HOME",
                                  "TMEMJIT_CACHE_MAX_BYTES",
                                  "TMEMJIT_REMOTE_CACHE",
                                  "TMEMJIT_REMOTE_CACHE_SECRET",
                                  "TMEMJIT_REMOTE_CACHE_CONNECT_TIMEOUT_MS",
                                  "TMEMJIT_REMOTE_CACHE_TIMEOUT_MS",
                                  "TMEMJIT_REMOTE_CACHE_LOCK_WAIT_MS",
                                  "TMEMJIT_REMOTE_CACHE_LOCK_TTL_MS",
                                  "TMEMJIT_REMOTE_CACHE_RETRY_MS",
                                  "TMEMJIT_PTXAS",
                                  "TMEMJIT_NVCC",
                                  "TMEMJIT_NVDISASM",
                                  "TMEMJIT_NVRTC_LIBRARY",
                                  "TMEMJIT_NVJITLINK_LIBRARY",
                                  "TMEMJIT_CUDA_INCLUDE_DIR",
                                  "CUDA_HOME",
                                  "CUDA_PATH",
                                  "PATH",
                                  "TMEMJIT_SUBPROCESS_TIMEOUT_S",
                                  "TMPDIR",
                                  "TMEMJIT_PCH",
                                  "TMEMJIT_PCH_CREATE",
                                  "TMEMJIT_PCH_BUDGET_MB",
                                  "TMEMJIT_PCH_HEAP_MB",
                                  "TMEMJIT_INCLUDE_WATCH"};

// Unsets every variable for the test's life (each restored after).
class SettingsTest : public ::testing::Test {
 protected:
  SettingsTest() {
    for (const char* name : kVariables)
      unset_.push_back(std::make_unique<ScopedEnv>(name, nullptr));
  }
  std::vector<std::unique_ptr<ScopedEnv>> unset_;
};

TEST_F(SettingsTest, UnsetVariablesGiveTheDefaults) {
  const Settings s = Settings::from_environment();
  EXPECT_FALSE(s.cache_disabled);
  EXPECT_EQ(s.cache_dir, "");
  EXPECT_EQ(s.xdg_cache_home, "");
  EXPECT_EQ(s.home, "");
  EXPECT_EQ(s.cache_max_bytes.value, uint64_t{1} << 30);
  EXPECT_EQ(s.remote_cache, "");
  EXPECT_EQ(s.remote_cache_secret, "");
  EXPECT_EQ(s.remote_cache_connect_timeout_ms.value, 100u);
  EXPECT_EQ(s.remote_cache_timeout_ms.value, 500u);
  EXPECT_EQ(s.remote_cache_lock_wait_ms.value, 15000u);
  EXPECT_EQ(s.remote_cache_lock_ttl_ms.value, 10000u);
  EXPECT_EQ(s.remote_cache_retry_ms.value, 30000u);
  for (const std::string* text :
       {&s.ptxas, &s.nvcc, &s.nvdisasm, &s.nvrtc_library, &s.nvjitlink_library, &s.cuda_include_dir,
        &s.cuda_home, &s.cuda_path, &s.path})
    EXPECT_EQ(*text, "");
  EXPECT_EQ(s.subprocess_timeout.value, std::chrono::seconds(300));
  EXPECT_EQ(s.temp_dir, "/tmp");
  EXPECT_TRUE(s.pch.value);
  EXPECT_EQ(s.pch_creation.value, PchCreation::kBackground);
  EXPECT_EQ(s.pch_budget_bytes.value, uint64_t{2048} << 20);
  EXPECT_EQ(s.pch_heap_bytes.value, uint64_t{512} << 20);
  EXPECT_TRUE(s.include_watch.value);
  EXPECT_FALSE(s.cache_max_bytes.from_environment || s.subprocess_timeout.from_environment ||
               s.pch.from_environment || s.pch_heap_bytes.from_environment);
}

// An empty value is unset: the same defaults, and no warning.
TEST_F(SettingsTest, EmptyValuesAreUnset) {
  std::vector<std::unique_ptr<ScopedEnv>> empty;
  for (const char* name : kVariables) empty.push_back(std::make_unique<ScopedEnv>(name, ""));
  const Settings s = Settings::from_environment();
  EXPECT_FALSE(s.cache_disabled);
  EXPECT_EQ(s.temp_dir, "/tmp");
  EXPECT_EQ(s.subprocess_timeout.value, std::chrono::seconds(300));
  EXPECT_TRUE(s.pch.value);
  EXPECT_TRUE(s.include_watch.value);
  for (const std::string* problem :
       {&s.cache_max_bytes.problem, &s.remote_cache_retry_ms.problem, &s.subprocess_timeout.problem,
        &s.pch.problem, &s.pch_creation.problem, &s.pch_heap_bytes.problem,
        &s.pch_budget_bytes.problem, &s.include_watch.problem})
    EXPECT_EQ(*problem, "");
}

struct Case {
  const char* name;
  const char* value;
  std::function<bool(const Settings&)> holds;  // the field shows the value
};

TEST_F(SettingsTest, EachVariableSetsItsField) {
  using std::chrono::milliseconds;
  const Case cases[] = {
      {"TMEMJIT_DISABLE_CACHE", "1", [](const Settings& s) { return s.cache_disabled; }},
      {"TMEMJIT_DISABLE_CACHE", "0", [](const Settings& s) { return !s.cache_disabled; }},
      {"TMEMJIT_CACHE_DIR", "/c", [](const Settings& s) { return s.cache_dir == "/c"; }},
      {"XDG_CACHE_HOME", "/x", [](const Settings& s) { return s.xdg_cache_home == "/x"; }},
      {"HOME", "/h", [](const Settings& s) { return s.home == "/h"; }},
      {"TMEMJIT_CACHE_MAX_BYTES", "512M",
       [](const Settings& s) { return s.cache_max_bytes.value == uint64_t{512} << 20; }},
      {"TMEMJIT_REMOTE_CACHE", "redis://h:1/2",
       [](const Settings& s) { return s.remote_cache == "redis://h:1/2"; }},
      {"TMEMJIT_REMOTE_CACHE_SECRET", "xyz",
       [](const Settings& s) { return s.remote_cache_secret == "xyz"; }},
      {"TMEMJIT_REMOTE_CACHE_CONNECT_TIMEOUT_MS", "50",
       [](const Settings& s) { return s.remote_cache_connect_timeout_ms.value == 50; }},
      {"TMEMJIT_REMOTE_CACHE_TIMEOUT_MS", "250",
       [](const Settings& s) { return s.remote_cache_timeout_ms.value == 250; }},
      {"TMEMJIT_REMOTE_CACHE_LOCK_WAIT_MS", "0",
       [](const Settings& s) { return s.remote_cache_lock_wait_ms.value == 0; }},
      {"TMEMJIT_REMOTE_CACHE_LOCK_TTL_MS", "2000",
       [](const Settings& s) { return s.remote_cache_lock_ttl_ms.value == 2000; }},
      {"TMEMJIT_REMOTE_CACHE_RETRY_MS", "999999999",
       [](const Settings& s) { return s.remote_cache_retry_ms.value == 999999999; }},
      {"TMEMJIT_PTXAS", "/p", [](const Settings& s) { return s.ptxas == "/p"; }},
      {"TMEMJIT_NVCC", "/n", [](const Settings& s) { return s.nvcc == "/n"; }},
      {"TMEMJIT_NVDISASM", "/d", [](const Settings& s) { return s.nvdisasm == "/d"; }},
      {"TMEMJIT_NVRTC_LIBRARY", "/r.so",
       [](const Settings& s) { return s.nvrtc_library == "/r.so"; }},
      {"TMEMJIT_NVJITLINK_LIBRARY", "/j.so",
       [](const Settings& s) { return s.nvjitlink_library == "/j.so"; }},
      {"TMEMJIT_CUDA_INCLUDE_DIR", "/i",
       [](const Settings& s) { return s.cuda_include_dir == "/i"; }},
      {"CUDA_HOME", "/ch", [](const Settings& s) { return s.cuda_home == "/ch"; }},
      {"CUDA_PATH", "/cp", [](const Settings& s) { return s.cuda_path == "/cp"; }},
      {"PATH", "/a:/b", [](const Settings& s) { return s.path == "/a:/b"; }},
      {"TMEMJIT_SUBPROCESS_TIMEOUT_S", "2.5",
       [](const Settings& s) { return s.subprocess_timeout.value == milliseconds(2500); }},
      {"TMPDIR", "/t", [](const Settings& s) { return s.temp_dir == "/t"; }},
      {"TMEMJIT_PCH", "0", [](const Settings& s) { return !s.pch.value; }},
      {"TMEMJIT_PCH", "1", [](const Settings& s) { return s.pch.value; }},
      {"TMEMJIT_PCH_CREATE", "inline",
       [](const Settings& s) { return s.pch_creation.value == PchCreation::kInline; }},
      {"TMEMJIT_PCH_CREATE", "background",
       [](const Settings& s) { return s.pch_creation.value == PchCreation::kBackground; }},
      {"TMEMJIT_PCH_BUDGET_MB", "1048576",
       [](const Settings& s) { return s.pch_budget_bytes.value == uint64_t{1} << 40; }},
      {"TMEMJIT_PCH_HEAP_MB", "600",
       [](const Settings& s) { return s.pch_heap_bytes.value == uint64_t{600} << 20; }},
      {"TMEMJIT_INCLUDE_WATCH", "0", [](const Settings& s) { return !s.include_watch.value; }},
  };
  std::set<std::string> named;
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.name) + "=" + c.value);
    ScopedEnv set(c.name, c.value);
    EXPECT_TRUE(c.holds(Settings::from_environment()));
    named.insert(c.name);
  }
  EXPECT_EQ(named.size(), std::size(kVariables)) << "a variable has no case here";
}

// The parsed fields say that a valid value came from the environment (PchCache's messages tell a
// heap the user chose from the default).
TEST_F(SettingsTest, AValidValueIsFromTheEnvironment) {
  ScopedEnv heap("TMEMJIT_PCH_HEAP_MB", "512");
  ScopedEnv ms("TMEMJIT_REMOTE_CACHE_TIMEOUT_MS", "500");
  const Settings s = Settings::from_environment();
  EXPECT_TRUE(s.pch_heap_bytes.from_environment);
  EXPECT_TRUE(s.remote_cache_timeout_ms.from_environment);
  EXPECT_FALSE(s.pch_budget_bytes.from_environment);
}

// A value that does not parse is the default, not from the environment, with the warning the
// reader emits: each names the variable, the value and what is used instead.
TEST_F(SettingsTest, ABadValueIsTheDefaultWithAProblem) {
  struct Bad {
    const char* name;
    const char* value;
    std::function<const std::string&(const Settings&)> problem;
    std::function<bool(const Settings&)> is_default;
    const char* says;
  };
  const Bad bad[] = {
      {"TMEMJIT_CACHE_MAX_BYTES", "lots",
       [](const Settings& s) -> const std::string& { return s.cache_max_bytes.problem; },
       [](const Settings& s) { return s.cache_max_bytes.value == uint64_t{1} << 30; },
       "TMEMJIT_CACHE_MAX_BYTES='lots' is not a byte count (like 1073741824 or 512M); using "
       "1073741824"},
      {"TMEMJIT_REMOTE_CACHE_RETRY_MS", "bad",
       [](const Settings& s) -> const std::string& { return s.remote_cache_retry_ms.problem; },
       [](const Settings& s) { return s.remote_cache_retry_ms.value == 30000; },
       "TMEMJIT_REMOTE_CACHE_RETRY_MS='bad' is not a number of milliseconds; using 30000"},
      {"TMEMJIT_REMOTE_CACHE_TIMEOUT_MS", "1234567890",  // 10 digits: past the bound
       [](const Settings& s) -> const std::string& { return s.remote_cache_timeout_ms.problem; },
       [](const Settings& s) { return s.remote_cache_timeout_ms.value == 500; },
       "TMEMJIT_REMOTE_CACHE_TIMEOUT_MS='1234567890' is not a number of milliseconds; using 500"},
      {"TMEMJIT_SUBPROCESS_TIMEOUT_S", "soon",
       [](const Settings& s) -> const std::string& { return s.subprocess_timeout.problem; },
       [](const Settings& s) { return s.subprocess_timeout.value == std::chrono::seconds(300); },
       "TMEMJIT_SUBPROCESS_TIMEOUT_S=soon is not a number of seconds above 0 and below 1000000; "
       "the default of 300 is used"},
      {"TMEMJIT_SUBPROCESS_TIMEOUT_S", "0",
       [](const Settings& s) -> const std::string& { return s.subprocess_timeout.problem; },
       [](const Settings& s) { return s.subprocess_timeout.value == std::chrono::seconds(300); },
       "TMEMJIT_SUBPROCESS_TIMEOUT_S=0 is not a number of seconds above 0 and below 1000000; "
       "the default of 300 is used"},
      {"TMEMJIT_PCH", "yes", [](const Settings& s) -> const std::string& { return s.pch.problem; },
       [](const Settings& s) { return s.pch.value; },
       "TMEMJIT_PCH=yes is neither 0 (off) nor 1 (on); precompiled headers stay on"},
      {"TMEMJIT_PCH_CREATE", "later",
       [](const Settings& s) -> const std::string& { return s.pch_creation.problem; },
       [](const Settings& s) { return s.pch_creation.value == PchCreation::kBackground; },
       "TMEMJIT_PCH_CREATE=later is neither background nor inline; precompiled headers are made "
       "in the background"},
      {"TMEMJIT_INCLUDE_WATCH", "off",
       [](const Settings& s) -> const std::string& { return s.include_watch.problem; },
       [](const Settings& s) { return s.include_watch.value; },
       "TMEMJIT_INCLUDE_WATCH=off is neither 0 (off) nor 1 (on); the include watch stays on"},
      {"TMEMJIT_PCH_BUDGET_MB", "-1",
       [](const Settings& s) -> const std::string& { return s.pch_budget_bytes.problem; },
       [](const Settings& s) { return s.pch_budget_bytes.value == uint64_t{2048} << 20; },
       "TMEMJIT_PCH_BUDGET_MB=-1 is not a whole number of megabytes from 1 to 1048576; the "
       "default of 2048 is used"},
  };
  for (const Bad& b : bad) {
    SCOPED_TRACE(std::string(b.name) + "=" + b.value);
    ScopedEnv set(b.name, b.value);
    const Settings s = Settings::from_environment();
    EXPECT_EQ(b.problem(s), b.says);
    EXPECT_TRUE(b.is_default(s));
  }
}

// N08: the heap's megabytes are digits only, from 1 to 65536 (strtoull would take "-1" as 2^64 - 1
// and " 5" or "5MB" in part).
TEST_F(SettingsTest, PchMegabytesAreWholeNumbersInRange) {
  const char* bad[] = {"abc", "-1",  "0",   "73786976294838206464" /* 2^66 */, "65537", " 5",
                       "5MB", "1e3", "0x10"};
  for (const char* value : bad) {
    SCOPED_TRACE(value);
    ScopedEnv env("TMEMJIT_PCH_HEAP_MB", value);
    const Parsed<uint64_t> heap = Settings::from_environment().pch_heap_bytes;
    EXPECT_EQ(heap.value, 512u << 20);
    EXPECT_FALSE(heap.from_environment);
    EXPECT_EQ(heap.problem, std::string("TMEMJIT_PCH_HEAP_MB=") + value +
                                " is not a whole number of megabytes from 1 to 65536; the "
                                "default of 512 is used");
  }
  for (const char* value : {"1", "600", "65536"}) {
    ScopedEnv env("TMEMJIT_PCH_HEAP_MB", value);
    const Parsed<uint64_t> heap = Settings::from_environment().pch_heap_bytes;
    EXPECT_EQ(heap.value, std::strtoull(value, nullptr, 10) << 20);
    EXPECT_TRUE(heap.problem.empty()) << heap.problem;
  }
}

// The environment is read at each call, never kept: a setenv is seen by the next read.
TEST_F(SettingsTest, EachReadSeesTheEnvironmentOfNow) {
  EXPECT_EQ(Settings::from_environment().ptxas, "");
  ScopedEnv set("TMEMJIT_PTXAS", "/now");
  EXPECT_EQ(Settings::from_environment().ptxas, "/now");
}

TEST(ParseByteCount, SuffixesAndBounds) {
  EXPECT_EQ(parse_byte_count("0"), 0u);
  EXPECT_EQ(parse_byte_count("1048576"), 1048576u);
  EXPECT_EQ(parse_byte_count("4k"), 4096u);
  EXPECT_EQ(parse_byte_count("2G"), uint64_t{2} << 30);
  EXPECT_EQ(parse_byte_count("3MB"), uint64_t{3} << 20);
  EXPECT_FALSE(parse_byte_count("").has_value());
  EXPECT_FALSE(parse_byte_count("M").has_value());
  EXPECT_FALSE(parse_byte_count("12Q").has_value());
  EXPECT_FALSE(parse_byte_count("1G2").has_value());
  EXPECT_FALSE(parse_byte_count("99999999999999999999").has_value());
  EXPECT_FALSE(parse_byte_count("99999999999T").has_value());
}

}  // namespace
}  // namespace tmem
