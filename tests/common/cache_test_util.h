// Helpers shared by the cache tests: temporary directories and entry payloads.
#pragma once

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <system_error>

#include "runtime/cache/module_cache.h"
#include "runtime/cache/payload.h"
#include "runtime/support/hash.h"

namespace tmem::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents on destruction.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") +
                          "/tmemjit-cache-test-XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    // Give back write permission first, in case a test made a directory read-only.
    for (auto it = std::filesystem::recursive_directory_iterator(path_, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
      if (it->is_directory(ec)) ::chmod(it->path().c_str(), 0755);
    ::chmod(path_.c_str(), 0755);
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  bool ok() const { return !path_.empty(); }

 private:
  std::filesystem::path path_;
};

inline Key128 test_key(int i) { return KeyBuilder().str("test", "cache").integer("i", i).finish(); }

// A payload of exactly `bytes` bytes (blob, text and meta all present) that encodes `i`.
inline Payload test_payload(int i, size_t bytes = 300) {
  Payload payload;
  payload.meta = "entry=k" + std::to_string(i);
  payload.text = "// ptx " + std::to_string(i) + "\n";
  const size_t used = payload.meta.size() + payload.text.size();
  const size_t blob = bytes > used ? bytes - used : 0;
  payload.blob.resize(blob);
  for (size_t b = 0; b < blob; ++b)
    payload.blob[b] = static_cast<char>((b * 31 + static_cast<size_t>(i)) & 0xff);
  return payload;
}

// Stores an entry under `key` whose metadata is `meta` (and whose cubin is one byte), as a damaged
// or foreign entry would be found: true when the cache took it.
inline bool plant_entry(const Key128& key, std::string meta) {
  return module_cache()
      .get_or_compile(key,
                      [&]() -> Result<Payload> {
                        Payload payload;
                        payload.blob = {'x'};
                        payload.meta = std::move(meta);
                        return payload;
                      })
      .ok();
}

}  // namespace tmem::testing
