// HMAC-SHA256 through OpenSSL's one-shot HMAC(), compared with CRYPTO_memcmp.
#include "runtime/cache/hmac.h"

#include <climits>
#include <cstring>
#include <stdexcept>

#ifdef TMEMJIT_HAVE_OPENSSL
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#endif

namespace tmem {

bool EntrySigner::available() noexcept {
#ifdef TMEMJIT_HAVE_OPENSSL
  return true;
#else
  return false;
#endif
}

EntrySigner::EntrySigner(std::string secret) : secret_(std::move(secret)) {
  if (!available() || secret_.empty() || secret_.size() > INT_MAX)
    throw std::logic_error("EntrySigner needs OpenSSL and a non-empty secret");
}

EntrySigner::~EntrySigner() {
  // Best effort: do not leave the key in freed memory.
  volatile char* bytes = secret_.data();
  for (size_t i = 0; i < secret_.size(); ++i) bytes[i] = 0;
}

EntrySigner::Tag EntrySigner::tag(std::span<const char> bytes) const {
  Tag out{};
#ifdef TMEMJIT_HAVE_OPENSSL
  unsigned int length = 0;
  // The key is the secret as given; HMAC hashes keys longer than SHA-256's block itself.
  const unsigned char* made =
      HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()),
           reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), out.data(), &length);
  if (made == nullptr || length != kTagBytes) out.fill(0);  // never verifies against a real tag
#else
  (void)bytes;
#endif
  return out;
}

bool EntrySigner::verify(std::span<const char> bytes, std::span<const char> tag_bytes) const {
  if (tag_bytes.size() != kTagBytes) return false;
  const Tag expected = tag(bytes);
#ifdef TMEMJIT_HAVE_OPENSSL
  return CRYPTO_memcmp(expected.data(), tag_bytes.data(), kTagBytes) == 0;
#else
  (void)expected;
  return false;
#endif
}

}  // namespace tmem
