// What stat says of a path (file_signature.h).
#include "runtime/compile/file_signature.h"

#include <errno.h>
#include <time.h>

#include <algorithm>

namespace tmem::closure {

Signature signature_of(const struct stat& st) {
  Signature sig;
  sig.size = st.st_size;
  sig.mtime_ns = int64_t{st.st_mtim.tv_sec} * kNsPerSecond + st.st_mtim.tv_nsec;
  sig.ctime_ns = int64_t{st.st_ctim.tv_sec} * kNsPerSecond + st.st_ctim.tv_nsec;
  sig.inode = st.st_ino;
  sig.device = st.st_dev;
  sig.mode = st.st_mode;
  return sig;
}

Signature stat_path(const std::string& path) {
  struct stat st;
  if (::stat(path.empty() ? "." : path.c_str(), &st) != 0) {
    Signature sig;
    sig.error = errno;
    return sig;
  }
  return signature_of(st);
}

int64_t now_ns() {
  timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * kNsPerSecond + ts.tv_nsec;
}

bool is_racy(const Signature& sig, int64_t since_ns) {
  if (sig.error != 0) return false;
  const bool whole_seconds = sig.mtime_ns % kNsPerSecond == 0 && sig.ctime_ns % kNsPerSecond == 0;
  const int64_t window = whole_seconds ? 2 * kNsPerSecond : 50000000;
  return std::max(sig.mtime_ns, sig.ctime_ns) >= since_ns - window;
}

}  // namespace tmem::closure
