#include "runtime/cache/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace tmem {

AtomicWrite write_file_atomically(const std::string& path, std::span<const char> bytes, mode_t mode,
                                  std::string_view temp_marker) {
  AtomicWrite result;
  std::string temp = path + std::string(temp_marker) + "XXXXXX";
  const int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) {
    result.error = errno;
    return result;
  }
  result.created = true;
  bool ok = ::fchmod(fd, mode) == 0;
  for (size_t done = 0; ok && done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<size_t>(n);
  }
  int error_number = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    error_number = errno;
  }
  if (ok && ::rename(temp.c_str(), path.c_str()) != 0) {
    ok = false;
    error_number = errno;
  }
  if (!ok) {
    ::unlink(temp.c_str());
    result.error = error_number != 0 ? error_number : EIO;
  }
  return result;
}

}  // namespace tmem
