// Searches the headers of an include closure for a name (closure_search.h).
#include "runtime/compile/closure_search.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <optional>
#include <string>

#include "kernels/specialized_source.h"

namespace tmem {
namespace {

constexpr off_t kMaxFileBytes = off_t{64} << 20;

// The file's text if it is still a regular file of at most kMaxFileBytes (the scan saw one, but
// it may have been replaced since by a FIFO, which must not block this read).
std::optional<std::string> regular_file_text(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > kMaxFileBytes)
    return std::nullopt;
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t filled = 0;
  while (filled < text.size()) {
    const ssize_t got = ::read(fd, text.data() + filled, text.size() - filled);
    if (got <= 0) break;  // shrunk since fstat, or an error: what was read is searched
    filled += static_cast<size_t>(got);
  }
  text.resize(filled);
  return text;
}

}  // namespace

bool closure_mentions_identifier(const IncludeClosure& closure, std::string_view name) {
  for (const std::string& path : closure.files)
    if (const std::optional<std::string> text = regular_file_text(path))
      if (kernels::mentions_identifier(*text, name)) return true;
  return false;
}

}  // namespace tmem
