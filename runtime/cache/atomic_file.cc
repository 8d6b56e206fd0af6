// Temp-then-rename file writes relative to a directory descriptor (atomic_file.h).
#include "runtime/cache/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <random>

namespace tmem {
namespace {

// Six characters from [A-Za-z0-9], as mkstemp would use.
std::string random_suffix() {
  static constexpr char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937_64 engine{std::random_device{}()};
  std::string suffix(6, 'A');
  for (char& c : suffix) c = kChars[engine() % (sizeof kChars - 1)];
  return suffix;
}

}  // namespace

AtomicWrite write_file_atomically_at(int dir_fd, const std::string& name,
                                     std::span<const char> bytes, mode_t mode,
                                     std::string_view temp_marker) {
  AtomicWrite result;
  std::string temp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    temp = name + std::string(temp_marker) + random_suffix();
    fd = ::openat(dir_fd, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0 && errno != EEXIST) break;
  }
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
  int error_number = ok ? 0 : errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    error_number = errno;
  }
  if (ok && ::renameat(dir_fd, temp.c_str(), dir_fd, name.c_str()) != 0) {
    ok = false;
    error_number = errno;
  }
  if (!ok) {
    ::unlinkat(dir_fd, temp.c_str(), 0);
    result.error = error_number != 0 ? error_number : EIO;
  }
  return result;
}

AtomicWrite write_file_atomically(const std::string& path, std::span<const char> bytes, mode_t mode,
                                  std::string_view temp_marker) {
  AtomicWrite result;
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    result.not_regular = true;
    result.error = EEXIST;
    return result;
  }
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.empty()) {
    result.not_regular = true;  // "dir/": a directory
    result.error = EISDIR;
    return result;
  }
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) {
    result.error = errno;
    return result;
  }
  result = write_file_atomically_at(dir_fd, name, bytes, mode, temp_marker);
  ::close(dir_fd);
  return result;
}

}  // namespace tmem
