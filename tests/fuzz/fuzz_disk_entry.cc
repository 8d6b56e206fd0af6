// libFuzzer target: the disk-cache entry reader. Every input is tried three ways:
//  * decode_entry on the raw bytes: a Payload only for a well-formed entry of the expected key
//    (then re-encoding gives the same bytes), else a kIo Error;
//  * the bytes with magic, version, key and both checksums repaired, so the size fields and the
//    payload split are what the fuzzer controls: a Payload exactly when the sizes add up;
//  * for every 8th input, the raw bytes as the entry file of DiskCache::read in a temp directory:
//    a hit exactly when decode_entry accepts them, and an invalid file is removed.
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <span>
#include <string>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "runtime/cache/disk.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

namespace fs = std::filesystem;

constexpr tmem::Key128 kKey = tmemjit_fuzz::kDiskKey;

void put_u64(char* out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(value >> (8 * i));
}
std::uint64_t get_u64(const char* in) {
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i)
    value |= static_cast<std::uint64_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  return value;
}

// One cache directory for the whole run, removed at exit.
struct TempCache {
  TempCache() {
    std::string pattern = (fs::temp_directory_path() / "tmemjit-fuzz-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    root = pattern;
    cache = std::make_unique<tmem::DiskCache>(root, std::uint64_t{1} << 30);
    fs::create_directories(cache->entry_path(kKey).parent_path());
  }
  ~TempCache() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  fs::path root;
  std::unique_ptr<tmem::DiskCache> cache;
};

TempCache& temp_cache() {
  static TempCache instance;
  return instance;
}

void check_decoded(const tmem::Result<tmem::Payload>& decoded, std::span<const char> file) {
  if (!decoded) {
    FUZZ_CHECK(tmemjit_fuzz::is_user_error(decoded.error(), {tmem::ErrorCode::kIo}),
               tmemjit_fuzz::describe(decoded.error()));
    return;
  }
  const std::string again = tmem::encode_entry(kKey, *decoded);
  FUZZ_CHECK(
      again.size() == file.size() && std::memcmp(again.data(), file.data(), file.size()) == 0,
      "decode_entry accepted bytes that do not re-encode to themselves");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const char> raw(reinterpret_cast<const char*>(data), size);
  const auto decoded = tmem::decode_entry(kKey, raw);
  check_decoded(decoded, raw);

  // Repaired header: only the three sizes and the bytes after the header are the fuzzer's.
  std::string fixed(raw.begin(), raw.end());
  if (fixed.size() < tmem::kDiskHeaderBytes) fixed.resize(tmem::kDiskHeaderBytes, '\0');
  const std::string model = tmem::encode_entry(kKey, tmem::Payload{});
  std::memcpy(fixed.data(), model.data(), 24);  // magic, version, key
  const std::uint64_t body = fixed.size() - tmem::kDiskHeaderBytes;
  put_u64(fixed.data() + 48, XXH3_64bits(fixed.data() + tmem::kDiskHeaderBytes, body));
  put_u64(fixed.data() + 56, XXH3_64bits(fixed.data(), 56));
  const std::uint64_t blob = get_u64(fixed.data() + 24), text = get_u64(fixed.data() + 32),
                      meta = get_u64(fixed.data() + 40);
  const bool sizes_add_up = blob <= body && text <= body - blob && meta == body - blob - text;
  const auto repaired = tmem::decode_entry(kKey, fixed);
  FUZZ_CHECK(repaired.ok() == sizes_add_up, "repaired entry: sizes " + std::to_string(blob) + "+" +
                                                std::to_string(text) + "+" + std::to_string(meta) +
                                                " body " + std::to_string(body));
  check_decoded(repaired, fixed);
  if (repaired) {
    FUZZ_CHECK(repaired->blob.size() == blob && repaired->text.size() == text &&
                   repaired->meta.size() == meta,
               "repaired entry: payload sizes differ from the header");
  }

  if (size > 0 && data[size - 1] % 8 == 0) {
    TempCache& temp = temp_cache();
    const fs::path path = temp.cache->entry_path(kKey);
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out.write(raw.data(), static_cast<std::streamsize>(raw.size()));
    }
    tmem::DiskCache::ReadStatus status{};
    auto read = temp.cache->read(kKey, &status);
    FUZZ_CHECK(read.has_value() == decoded.ok(), "DiskCache::read and decode_entry disagree");
    FUZZ_CHECK(status == (decoded ? tmem::DiskCache::ReadStatus::kHit
                                  : tmem::DiskCache::ReadStatus::kInvalid),
               "DiskCache::read status");
    struct stat st {};
    FUZZ_CHECK((::stat(path.c_str(), &st) == 0) == decoded.ok(),
               "an invalid entry file must be removed, a valid one kept");
    if (read) FUZZ_CHECK(*read == *decoded, "DiskCache::read payload differs");
  }
  return 0;
}
