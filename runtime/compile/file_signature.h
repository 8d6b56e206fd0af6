// What stat says of a path, enough to notice that a file changed without reading it: the include
// closure's scan records one per file it reads and per place a search failed, and its cache
// compares them on each query (include_closure.h).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/support/hash.h"

namespace tmem::closure {

constexpr int64_t kNsPerSecond = 1000000000;

// `error` is the errno of a failed stat (the path is absent, or not reachable), 0 otherwise.
struct Signature {
  int64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  uint64_t inode = 0;
  uint64_t device = 0;
  uint32_t mode = 0;
  int error = 0;
  friend bool operator==(const Signature&, const Signature&) = default;
};

Signature signature_of(const struct stat& st);
// stat(2) of `path` ("" is the current directory), symbolic links followed.
Signature stat_path(const std::string& path);
// The wall clock, as file timestamps count it.
int64_t now_ns();

// Whether a change after `since_ns` could leave `sig` as it is (git's "racy" entries): file
// timestamps come from a coarse clock, so a write in the same tick as the last one keeps mtime and
// ctime, and a same-size edit would go unseen. A tick is at most 10 ms (HZ=100); timestamps without
// nanoseconds suggest a file system that keeps whole seconds (FAT: two). Such a signature is not
// trusted: the file is read again next time.
bool is_racy(const Signature& sig, int64_t since_ns);

// The stamps of `files` (IncludeClosure::stamps), each signature from `signature(path)`.
template <class SignatureOf>
Key128 stamps_of(const std::vector<std::string>& files, SignatureOf&& signature) {
  KeyBuilder key;
  for (const std::string& path : files) {
    const Signature sig = signature(path);
    key.str("file", path);
    key.integer("size", sig.size);
    key.integer("mtime", sig.mtime_ns);
    key.integer("ctime", sig.ctime_ns);
    key.integer("inode", static_cast<int64_t>(sig.inode));
    key.integer("device", static_cast<int64_t>(sig.device));
    key.integer("error", sig.error);
  }
  return key.finish();
}

}  // namespace tmem::closure
