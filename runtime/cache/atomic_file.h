// Whole-file replacement for the cache's files (disk entries, bundles): the bytes go to a
// temporary file beside the target, which is then renamed over it, so a reader in any process
// sees the old file or the whole new one, never a torn write (docs/cache.md).
#pragma once

#include <sys/types.h>

#include <span>
#include <string>
#include <string_view>

namespace tmem {

struct AtomicWrite {
  bool created = false;  // the temporary file was created (false: nothing was written)
  int error = 0;         // errno of the step that failed; 0 when the file is in place
  bool ok() const noexcept { return error == 0; }
};

// The temporary file is `path + temp_marker + "XXXXXX"` with permissions `mode`; it is removed
// when any step fails.
AtomicWrite write_file_atomically(const std::string& path, std::span<const char> bytes, mode_t mode,
                                  std::string_view temp_marker);

}  // namespace tmem
