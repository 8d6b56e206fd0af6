// The include closure's scan (include_closure.h): from the source, every #include followed
// through the search the front end makes, each file's directives read once (and reused from a
// memo while its signature holds), computed includes expanded with the closure's macros. What it
// found and what stat said of every path it looked at come back together, for the cache to
// revalidate by.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <shared_mutex>
#include <string>
#include <unordered_map>

#include "runtime/compile/file_signature.h"
#include "runtime/compile/include_closure.h"
#include "runtime/compile/include_directives.h"
#include "tmem/result.h"

namespace tmem::closure {

// A file read by an earlier scan, reused while its signature holds.
struct MemoFile {
  Signature signature;
  int64_t read_ns = 0;  // the start of the scan that read it: racy against this
  std::shared_ptr<const FileFacts> facts;
};

// The files scans have read, shared by the scans of one cache.
struct FileMemo {
  mutable std::shared_mutex mutex;
  std::unordered_map<std::string, MemoFile> files;
};

// A closure and what proves it still holds.
struct ScannedClosure {
  IncludeClosure closure;
  std::map<std::string, Signature> probes;  // every path stat said something of
  // Every candidate path a failed search tried: a file appearing at one changes the closure.
  std::set<std::string> absent;
  // Whether a probe may change unseen by its signature: the next query scans again.
  bool racy = false;
};

// One scan of `query`, reading through `memo` (null: none). `files_read` grows by the files read
// and lexed (the rest reused the memo), error or not. Errors as scan_include_closure's.
Result<ScannedClosure> scan_closure(const ClosureQuery& query, FileMemo* memo, int64_t& files_read);

// `name` in `dir`, as the front end forms it (no normalization: "dir/../x" stays, so a symlinked
// dir resolves as the kernel resolves it).
std::string join(const std::string& dir, const std::string& name);

}  // namespace tmem::closure
