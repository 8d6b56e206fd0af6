// Whole-file replacement for the cache's files (disk entries, bundles, the CLI's -o outputs): the
// bytes go to a temporary file beside the target, which is then renamed over it, so a reader in any
// process sees the old file or the whole new one, never a torn write (docs/cache.md).
#pragma once

#include <sys/types.h>

#include <span>
#include <string>
#include <string_view>

namespace tmem {

struct AtomicWrite {
  bool created = false;      // the temporary file was created (false: nothing was written)
  bool not_regular = false;  // refused: something other than a regular file is at the path
  int error = 0;             // errno of the step that failed; 0 when the file is in place
  bool ok() const noexcept { return error == 0; }
};

// Writes `name` inside the directory open as `dir_fd`: the temporary file is `name + temp_marker +
// 6 random characters`, created with O_EXCL | O_NOFOLLOW and permissions `mode`, then renamed over
// `name` with renameat (no path is resolved again, so a directory swapped for a symlink meanwhile
// is not written through). The temporary file is removed when any step fails.
AtomicWrite write_file_atomically_at(int dir_fd, const std::string& name,
                                     std::span<const char> bytes, mode_t mode,
                                     std::string_view temp_marker);

// The same for a path, whose directory is opened following symlinks (the caller named it). Where
// something other than a regular file is at `path` (a symlink, FIFO, socket, device or directory)
// nothing is written: `not_regular` is set and `error` is EEXIST.
AtomicWrite write_file_atomically(const std::string& path, std::span<const char> bytes, mode_t mode,
                                  std::string_view temp_marker);

}  // namespace tmem
