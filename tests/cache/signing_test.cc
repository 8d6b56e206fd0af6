// Tests of entry signing (TMEMJIT_REMOTE_CACHE_SECRET), the private disk cache directory, the
// refusal of a directory other users can write, and the remote URL and options (no server needed).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <string>

#include "common/cache_test_util.h"
#include "common/files.h"
#include "runtime/cache/disk.h"
#include "runtime/cache/hmac.h"
#include "runtime/cache/module_cache.h"
#include "runtime/cache/remote.h"

namespace tmem {
namespace {
using testing::read_file;

namespace fs = std::filesystem;
using testing::TempDir;
using testing::test_key;
using testing::test_payload;

unsigned mode_of(const fs::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
}

class SigningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!EntrySigner::available()) GTEST_SKIP() << "libtmemjit was built without OpenSSL";
  }
};

TEST_F(SigningTest, HmacMatchesRfc4231) {
  // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
  EntrySigner signer("Jefe");
  const std::string data = "what do ya want for nothing?";
  const EntrySigner::Tag tag = signer.tag(data);
  static constexpr unsigned char kExpected[32] = {0x5b, 0xdc, 0xc1, 0x46, 0xbf, 0x60, 0x75, 0x4e,
                                                  0x6a, 0x04, 0x24, 0x26, 0x08, 0x95, 0x75, 0xc7,
                                                  0x5a, 0x00, 0x3f, 0x08, 0x9d, 0x27, 0x39, 0x83,
                                                  0x9d, 0xec, 0x58, 0xb9, 0x64, 0xec, 0x38, 0x43};
  EXPECT_TRUE(std::equal(tag.begin(), tag.end(), kExpected));
  const std::string good(reinterpret_cast<const char*>(tag.data()), tag.size());
  EXPECT_TRUE(signer.verify(data, good));
  std::string bad = good;
  bad[31] ^= 1;
  EXPECT_FALSE(signer.verify(data, bad));
  EXPECT_FALSE(signer.verify(data, good.substr(0, 31)));
  EXPECT_FALSE(EntrySigner("jefe").verify(data, good));
}

TEST_F(SigningTest, SignedEntriesVerifyOnlyUnderTheirSecret) {
  EntrySigner signer("s3cret");
  EntrySigner other("other");
  const Payload payload = test_payload(1, 1000);
  const std::string signed_entry = encode_entry(test_key(1), payload, &signer);
  const std::string plain = encode_entry(test_key(1), payload);
  EXPECT_EQ(signed_entry.size(), plain.size() + EntrySigner::kTagBytes);
  EXPECT_EQ(signed_entry.substr(0, 4), "TMJS");

  Result<Payload> decoded = decode_entry(test_key(1), signed_entry, &signer);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message();
  EXPECT_EQ(*decoded, payload);

  auto rejected = [](const Result<Payload>& result, const std::string& why) {
    return !result.ok() && result.error().message().find(why) != std::string::npos;
  };
  EXPECT_TRUE(rejected(decode_entry(test_key(1), signed_entry, &other), "does not verify"));
  EXPECT_TRUE(rejected(decode_entry(test_key(1), plain, &signer), "not signed"));
  EXPECT_TRUE(rejected(decode_entry(test_key(1), signed_entry), "is signed"));
  EXPECT_TRUE(rejected(decode_entry(test_key(2), signed_entry, &signer), "key"));
  // Any flipped byte (header, payload or the tag itself) breaks the signature.
  for (size_t at : {size_t{5}, size_t{30}, kDiskHeaderBytes + 10, signed_entry.size() - 1}) {
    std::string forged = signed_entry;
    forged[at] ^= 0x20;
    EXPECT_TRUE(rejected(decode_entry(test_key(1), forged, &signer), "does not verify")) << at;
  }
  // A forger who fixes every checksum still lacks the key.
  std::string refixed = encode_entry(test_key(1), test_payload(2, 1000), &other);
  EXPECT_FALSE(decode_entry(test_key(1), refixed, &signer).ok());
  EXPECT_TRUE(rejected(decode_entry(test_key(1), signed_entry.substr(0, 40), &signer), "shorter"));
}

TEST_F(SigningTest, DiskCacheWithASignerWritesAndReadsOnlySignedEntries) {
  TempDir dir;
  auto signer = std::make_shared<const EntrySigner>("k");
  DiskCache cache(dir.path(), uint64_t{1} << 30, signer);
  ASSERT_TRUE(cache.write(test_key(1), test_payload(1)).written);
  EXPECT_EQ(read_file(cache.entry_path(test_key(1))).substr(0, 4), "TMJS");
  EXPECT_TRUE(cache.read(test_key(1)).has_value());
  EXPECT_TRUE(cache.peek(test_key(1)).ok());

  // An unsigned entry in its place is invalid (and removed, so that a compile replaces it).
  DiskCache plain(dir.path(), uint64_t{1} << 30);
  ASSERT_TRUE(plain.write(test_key(2), test_payload(2)).written);
  DiskCache::ReadStatus status{};
  EXPECT_FALSE(cache.read(test_key(2), &status).has_value());
  EXPECT_EQ(status, DiskCache::ReadStatus::kInvalid);
  EXPECT_FALSE(fs::exists(cache.entry_path(test_key(2))));
  // And the unsigned reader does not take signed entries.
  EXPECT_FALSE(plain.read(test_key(1)).has_value());
}

TEST(DiskPrivacy, NewDirectoriesArePrivateAndFilesNotWritableByOthers) {
  TempDir dir;
  const fs::path root = dir.path() / "a" / "b" / "cache";
  DiskCache cache(root, uint64_t{1} << 30);
  ASSERT_TRUE(cache.write(test_key(1), test_payload(1)).written);
  EXPECT_EQ(mode_of(dir.path() / "a"), 0700u);
  EXPECT_EQ(mode_of(root), 0700u);
  EXPECT_EQ(mode_of(cache.version_dir()), 0700u);
  EXPECT_EQ(mode_of(cache.entry_path(test_key(1)).parent_path()), 0700u);
  EXPECT_EQ(mode_of(cache.entry_path(test_key(1))), 0600u);
  EXPECT_FALSE(others_can_write(root).has_value());
}

TEST(DiskPrivacy, OthersCanWriteSaysWhy) {
  TempDir dir;
  EXPECT_FALSE(others_can_write(dir.path()).has_value());
  EXPECT_FALSE(others_can_write(dir.path() / "absent").has_value());
  ASSERT_EQ(::chmod(dir.path().c_str(), 0777), 0);
  ASSERT_TRUE(others_can_write(dir.path()).has_value());
  EXPECT_NE(others_can_write(dir.path())->find("writable by every user (mode 0777)"),
            std::string::npos);
  ASSERT_EQ(::chmod(dir.path().c_str(), 0770), 0);
  EXPECT_NE(others_can_write(dir.path())->find("writable by its group"), std::string::npos);
  ASSERT_EQ(::chmod(dir.path().c_str(), 01777), 0);  // sticky like /tmp: others still add files
  EXPECT_TRUE(others_can_write(dir.path()).has_value());
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
  EXPECT_FALSE(others_can_write(dir.path()).has_value());
}

// A directory other users can write is skipped (one warning) without a secret, and used with one;
// then its new directories keep the group's access and entries are signed.
TEST(DiskPrivacy, ASharedDirectoryIsUsedOnlyWithASecret) {
  TempDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0777), 0);
  ModuleCache::reset_warnings_for_testing();
  ::testing::internal::CaptureStderr();
  ModuleCache open(CacheOptions{true, true, dir.path().string(), uint64_t{1} << 30});
  std::atomic<int> calls{0};
  auto compile = [&] {
    ++calls;
    return Result<Payload>(test_payload(1));
  };
  ASSERT_TRUE(open.get_or_compile(test_key(1), compile).ok());
  ModuleCache again(CacheOptions{true, true, dir.path().string(), uint64_t{1} << 30});
  ASSERT_TRUE(again.get_or_compile(test_key(1), compile).ok());
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(open.disk(), nullptr);
  EXPECT_NE(open.disk_note().find("writable by every user"), std::string::npos);
  EXPECT_EQ(calls.load(), 2);  // memory only: nothing planted could be read either
  EXPECT_TRUE(fs::is_empty(dir.path()));
  size_t warnings = 0;
  for (size_t at = err.find("tmemjit: warning:"); at != std::string::npos;
       at = err.find("tmemjit: warning:", at + 1))
    ++warnings;
  EXPECT_EQ(warnings, 1u) << err;
  EXPECT_NE(err.find("TMEMJIT_REMOTE_CACHE_SECRET"), std::string::npos) << err;

  if (!EntrySigner::available()) return;
  CacheOptions with_secret{true, true, dir.path().string(), uint64_t{1} << 30};
  with_secret.secret = "team secret";
  ModuleCache shared(with_secret);
  ASSERT_NE(shared.disk(), nullptr);
  ASSERT_TRUE(shared.get_or_compile(test_key(1), compile).ok());
  EXPECT_EQ(read_file(shared.disk()->entry_path(test_key(1))).substr(0, 4), "TMJS");
  EXPECT_EQ(mode_of(shared.disk()->version_dir()), 0777u);  // the group (here: all) shares it
  ModuleCache reader(with_secret);
  ModuleCache::Lookup lookup{};
  ASSERT_TRUE(reader.get_or_compile(test_key(1), compile, &lookup).ok());
  EXPECT_EQ(lookup, ModuleCache::Lookup::kDiskHit);
}

// Without a secret, an entry file that belongs to another user was planted: it is not served.
TEST(DiskPrivacy, AnotherUsersEntryFileIsNotServed) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  TempDir dir;
  DiskCache cache(dir.path(), uint64_t{1} << 30);
  ASSERT_TRUE(cache.write(test_key(1), test_payload(1)).written);
  ASSERT_EQ(::chown(cache.entry_path(test_key(1)).c_str(), 65534, 65534), 0);  // nobody
  Result<Payload> peeked = cache.peek(test_key(1));
  ASSERT_FALSE(peeked.ok());
  EXPECT_NE(peeked.error().message().find("belongs to another user"), std::string::npos);
  EXPECT_FALSE(cache.read(test_key(1)).has_value());
}

TEST(RemoteOptions, RedisUrls) {
  auto ok = [](const char* text) { return parse_redis_url(text).value(); };
  RedisEndpoint e = ok("redis://10.0.0.5:6380/3");
  EXPECT_EQ(e.host, "10.0.0.5");
  EXPECT_EQ(e.port, 6380);
  EXPECT_EQ(e.db, 3);
  EXPECT_EQ(e.url(), "redis://10.0.0.5:6380/3");
  e = ok("redis://cache.internal");
  EXPECT_EQ(e.port, 6379);
  EXPECT_EQ(e.db, 0);
  e = ok("redis://:pa:ss@h:1/");
  EXPECT_EQ(e.user, "");
  EXPECT_EQ(e.password, "pa:ss");
  EXPECT_EQ(e.url(), "redis://h:1/0");  // never the password
  e = ok("redis://alice:pw@[::1]:7000/2");
  EXPECT_EQ(e.user, "alice");
  EXPECT_EQ(e.host, "::1");
  EXPECT_EQ(e.url(), "redis://[::1]:7000/2");
  for (const char* bad :
       {"", "redis:/h:1", "http://h:1", "redis://", "redis://:1", "redis://h:", "redis://h:0",
        "redis://h:65536", "redis://h:1x", "redis://h:1/x", "redis://h:1/1?x=1", "redis://user@h:1",
        "redis://[::1", "redis://[::1]x"}) {
    Result<RedisEndpoint> parsed = parse_redis_url(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.error().code(), ErrorCode::kUsage);
    EXPECT_NE(parsed.error().details().find("redis://HOST:PORT[/DB]"), std::string::npos);
  }
}

TEST(RemoteOptions, FromEnvironment) {
  struct Env {
    const char* name;
    const char* value;
  };
  const Env env[] = {{"TMEMJIT_REMOTE_CACHE", "redis://127.0.0.1:1/2"},
                     {"TMEMJIT_REMOTE_CACHE_SECRET", "xyz"},
                     {"TMEMJIT_REMOTE_CACHE_CONNECT_TIMEOUT_MS", "50"},
                     {"TMEMJIT_REMOTE_CACHE_TIMEOUT_MS", "250"},
                     {"TMEMJIT_REMOTE_CACHE_LOCK_WAIT_MS", "1000"},
                     {"TMEMJIT_REMOTE_CACHE_LOCK_TTL_MS", "2000"},
                     {"TMEMJIT_REMOTE_CACHE_RETRY_MS", "bad"}};
  for (const Env& e : env) ::setenv(e.name, e.value, 1);
  ::testing::internal::CaptureStderr();
  const CacheOptions options = cache_options_from_env();
  const std::string err = ::testing::internal::GetCapturedStderr();
  for (const Env& e : env) ::unsetenv(e.name);
  EXPECT_EQ(options.remote, "redis://127.0.0.1:1/2");
  EXPECT_EQ(options.secret, "xyz");
  EXPECT_EQ(options.remote_connect_timeout_ms, 50u);
  EXPECT_EQ(options.remote_timeout_ms, 250u);
  EXPECT_EQ(options.remote_lock_wait_ms, 1000u);
  EXPECT_EQ(options.remote_lock_ttl_ms, 2000u);
  EXPECT_EQ(options.remote_retry_ms, 30000u);
  EXPECT_NE(err.find("TMEMJIT_REMOTE_CACHE_RETRY_MS='bad'"), std::string::npos) << err;
  EXPECT_TRUE(cache_options_from_env().remote.empty());
}

}  // namespace
}  // namespace tmem
