// EntrySigner: HMAC-SHA256 (OpenSSL's libcrypto) over cache entries, keyed by
// TMEMJIT_REMOTE_CACHE_SECRET, so that a shared store cannot hand this process code it did not
// sign.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string>

namespace tmem {

class EntrySigner {
 public:
  static constexpr size_t kTagBytes = 32;  // HMAC-SHA256
  using Tag = std::array<unsigned char, kTagBytes>;

  // False when libtmemjit was built without OpenSSL (TMEMJIT_HAVE_OPENSSL unset): then nothing can
  // be signed, and callers must treat a configured secret as "fail closed" (docs/cache.md).
  static bool available() noexcept;

  // Requires: available() and a non-empty secret.
  explicit EntrySigner(std::string secret);
  EntrySigner(const EntrySigner&) = delete;
  EntrySigner& operator=(const EntrySigner&) = delete;
  ~EntrySigner();

  Tag tag(std::span<const char> bytes) const;
  // Constant-time comparison of tag(bytes) with `tag`.
  bool verify(std::span<const char> bytes, std::span<const char> tag) const;

 private:
  std::string secret_;
};

}  // namespace tmem
