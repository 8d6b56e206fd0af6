// The include closure of a CUDA source: every file NVRTC's front end may read for it, found without
// the compiler (NVRTC has no -MD), and a digest of their contents for compile_kernel's cache key.
// A process-wide cache revalidates a remembered closure with one stat per file and per searched
// directory, as ccache's direct mode does.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/support/hash.h"
#include "tmem/result.h"

namespace tmem {

// What the front end is given: the source, and where it looks for what the source includes.
struct ClosureQuery {
  // The primary source text (it is hashed, never read from disk).
  std::string_view source;
  // Its name as NVRTC gets it; need not exist. `#include "x"` in the source searches its
  // directory first: the current directory for a bare name such as "kernel.cu".
  std::string source_path;
  // Searched in this order, for <x> and after the includer's own directory for "x".
  std::vector<std::string> include_dirs;
  // Read before the source, each found as `#include "F"` written in the current directory.
  std::vector<std::string> pre_includes;
  // Include names NVRTC is given as text (nvrtcCreateProgram's headers, e.g.
  // "tmemjit/transfers.cuh"): matched as written, never looked up on disk, not followed.
  std::vector<std::string> in_memory;
};

// The include search of an NVRTC option list. Recognised: -I DIR, -IDIR, -I=DIR,
// --include-path=DIR, --include-path DIR; -isystem DIR, -isystemDIR, -isystem=DIR,
// --system-include=DIR, --system-include DIR; -include F, -include=F, --pre-include=F,
// --pre-include F. Every other option is ignored.
struct IncludeSearch {
  // -I / --include-path directories in order, then -isystem / --system-include ones (system
  // directories are searched after the user's, as in GCC and EDG).
  std::vector<std::string> include_dirs;
  // -include / --pre-include files, in order.
  std::vector<std::string> pre_includes;
};
// kUsage when an option lacks its value (a trailing "-I", an empty "--include-path=").
Result<IncludeSearch> include_search_of(std::span<const std::string> nvrtc_options);

// The files a source may read, and their digest.
struct IncludeClosure {
  // The cache-key part: every file's path and content, the missing names and the unresolved
  // includes. It changes when a header's content changes, or a header appears or goes.
  Key128 digest;
  // Every file read, as opened (search directory + name), sorted: for logs and dependency lists.
  std::vector<std::string> files;
  // Include names found nowhere (NVRTC's built-in headers such as cuda_runtime.h, or an error
  // NVRTC will report), and "NAME (WHY: PATH)" for one that is not a readable regular file (a FIFO,
  // a device, no permission); sorted. Not an error: the scan over-approximates the front end.
  std::vector<std::string> missing;
  // "FILE:LINE: #include TEXT" for each include the scan cannot follow (a computed
  // `#include MACRO` whose macro no file of the closure defines, e.g. one given with -D; a
  // malformed one; one nested over 200 deep): the digest cannot see what it names, so a caller
  // may warn that edits to it go unnoticed.
  std::vector<std::string> unresolved;
};

// One scan, uncached. Every #include is followed whatever the #if around it (an extra file costs
// at most a spurious cache miss), as are __has_include operands; comments, line continuations and
// string literals are understood; #include_next resumes the search after the includer's directory;
// a computed include (`#include CUDA_STD_HEADER(tuple)`, as CUTLASS writes) is expanded with every
// definition of its macros found in the closure, each result followed; each (file, search
// position) is visited once, so cycles end. Errors: kIo when a file cannot be read, kLimit for a
// file over 64 MiB; each names the file.
Result<IncludeClosure> scan_include_closure(const ClosureQuery& query);

// Closures remembered per query (source text, path, include dirs, pre-includes, in-memory names).
// A repeated query stats every file of the remembered closure and every directory whose search
// failed there (size, mtime and ctime in ns, inode, device): when all match, the remembered
// closure is returned; else it is scanned again, re-reading only files whose signature changed.
// A file changed within the file system's timestamp granularity of its reading is never trusted
// (it is read again next time), so a same-size edit in the same tick is not missed. Thread-safe;
// scans run outside the lock (two threads may scan one query at once; the later result is kept).
class IncludeClosureCache {
 public:
  struct Counters {
    int64_t hits = 0;        // queries answered by the remembered closure after its stat check
    int64_t scans = 0;       // queries that scanned: new, or something in the closure changed
    int64_t files_read = 0;  // files read and lexed by those scans (the rest reused a signature)
  };

  IncludeClosureCache();
  ~IncludeClosureCache();
  IncludeClosureCache(const IncludeClosureCache&) = delete;
  IncludeClosureCache& operator=(const IncludeClosureCache&) = delete;

  // The closure of `query`: shared and immutable, so a hit copies no file list. Errors as
  // scan_include_closure's; an error is not remembered.
  Result<std::shared_ptr<const IncludeClosure>> closure(const ClosureQuery& query);

  Counters counters() const;
  // Forgets every closure and file (counters stay).
  void clear();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The process's cache (compile_kernel's).
IncludeClosureCache& include_closure_cache();

}  // namespace tmem
