// The include closure of a CUDA source: every file NVRTC's front end may read for it, found without
// the compiler (NVRTC has no -MD), and a digest of their contents for compile_kernel's cache key.
// A process-wide cache answers a repeated query from change notifications (inotify) when nothing
// it depends on changed, else revalidates the remembered closure with one stat per file and per
// searched directory, as ccache's direct mode does.
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
  // Macros of the command line ("NAME" or "NAME=VALUE", as -D takes them): computed includes
  // expand with them as with the closure's own #defines (`#include HDR` with -DHDR="mark.h").
  std::vector<std::string> defines;
};

// The include search of an NVRTC option list. Recognised: -I DIR, -IDIR, -I=DIR,
// --include-path=DIR, --include-path DIR; -isystem DIR, -isystemDIR, -isystem=DIR,
// --system-include=DIR, --system-include DIR; -include F, -include=F, --pre-include=F,
// --pre-include F; -D NAME[=V], -DNAME[=V], --define-macro=NAME[=V], --define-macro NAME[=V].
// Every other option is ignored.
struct IncludeSearch {
  // -I / --include-path directories in order, then -isystem / --system-include ones (system
  // directories are searched after the user's, as in GCC and EDG).
  std::vector<std::string> include_dirs;
  // -include / --pre-include files, in order.
  std::vector<std::string> pre_includes;
  // -D / --define-macro values, in order.
  std::vector<std::string> defines;
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
  // The signatures (inode, size, modification and change times) of `files` as the scan found
  // them: closure_stamps_now() differs once any of them is written, replaced or removed, so a
  // compile can tell that a header changed while it ran (issue 39 N03).
  Key128 stamps;
};

// The stamps of `closure`'s files now (IncludeClosure::stamps when none changed).
Key128 closure_stamps_now(const IncludeClosure& closure);

// One scan, uncached. Every #include is followed whatever the #if around it (an extra file costs
// at most a spurious cache miss), as are __has_include operands; comments, line continuations and
// string literals are understood; #include_next resumes the search after the includer's directory;
// a computed include (`#include CUDA_STD_HEADER(tuple)`, as CUTLASS writes) is expanded with every
// definition of its macros found in the closure, each result followed; each (file, search
// position) is visited once, so cycles end. Errors: kIo when a file cannot be read, kLimit for a
// file over 64 MiB; each names the file.
Result<IncludeClosure> scan_include_closure(const ClosureQuery& query);

// Closures remembered per query (source text, path, include dirs, pre-includes, in-memory names).
//
// The stat path: a repeated query stats every file of the remembered closure and every directory
// whose search failed there (size, mtime and ctime in ns, inode, device): when all match, the
// remembered closure is returned; else it is scanned again, re-reading only files whose signature
// changed. A file changed within the file system's timestamp granularity of its reading is never
// trusted (it is read again next time), so a same-size edit in the same tick is not missed.
//
// The watched path (Linux, on by default): one process-wide inotify descriptor watches every
// directory the remembered closures depend on: the directory of each file, each directory a failed
// search looked in, and every directory on the way there, symbolic links followed (so swapping a
// link such as /usr/local/cuda, a directory rename or a deletion above a header is seen), with the
// names that matter in each (a file hard-linked elsewhere is watched itself: an edit through its
// other name reaches no watch of this directory). Each query first drains the descriptor (one
// non-blocking read when nothing changed); the kernel queues an event before the write, rename or
// unlink that causes it returns, so a query that starts after an edit sees it. A closure none of
// whose watches saw an event since its last validation is returned with no stat (`watched_hits`);
// one that did, or that is new, is validated by the stat path with its watches set first (a change
// after the stat is then an event), and becomes clean. A scan repeated under watches that covered
// every path it reads is clean at once, without the timestamp-granularity wait. A lost event
// (IN_Q_OVERFLOW), a read error or a fork (the child makes its own descriptor: reading the
// inherited one would steal the parent's events) makes every closure revalidate by stat. With
// relative paths (a bare source name, pre-includes, relative -I) a hit also stats "." once: a chdir
// moves them.
//
// Falls back to the stat path for a closure whose watches cannot be set (no inotify, ENOSPC from
// fs.inotify.max_user_watches, permissions) or that reaches a network or cluster file system (NFS,
// SMB, FUSE, Ceph, Lustre, GPFS, 9p, ...): inotify sees only changes made through this machine's
// kernel, so an edit made on another machine would go unseen. Set TMEMJIT_INCLUDE_WATCH=0 (read
// when a cache is made; the process's cache at its first use) for any other place where files
// change without this kernel (a file system the list misses, a mount made over a directory of a
// closure): every query then takes the stat path.
//
// Thread-safe; scans run outside the lock (two threads may scan one query at once; the later
// result is kept).
class IncludeClosureCache {
 public:
  struct Counters {
    int64_t hits = 0;          // queries answered by the remembered closure, without a scan
    int64_t watched_hits = 0;  // those of the hits answered with no stat of the closure's files
    int64_t scans = 0;         // queries that scanned: new, or something in the closure changed
    int64_t files_read = 0;    // files read and lexed by those scans (the rest reused a signature)
  };
  enum class ChangeWatch {
    kAuto,  // inotify unless TMEMJIT_INCLUDE_WATCH=0 or unavailable
    kOff,   // the stat path on every query
  };

  explicit IncludeClosureCache(ChangeWatch watch = ChangeWatch::kAuto);
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

// The calling thread's tmem::Runtime's cache (compile_kernel's); defined by the runtime that owns
// it (runtime/jit/runtime_state.cc).
IncludeClosureCache& include_closure_cache();

}  // namespace tmem
