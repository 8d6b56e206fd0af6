// The include closure's scan (include_scan.h).
#include "runtime/compile/include_scan.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <span>
#include <unordered_set>
#include <utility>
#include <vector>

#include "runtime/compile/computed_include.h"

namespace tmem::closure {
namespace {

constexpr int64_t kMaxFileBytes = int64_t{64} << 20;  // one header; CUTLASS's largest is 0.3 MiB
constexpr int kMaxDepth = 200;                        // #include nesting, GCC's limit
constexpr size_t kMaxFiles = size_t{1} << 16;         // remembered files before a reset

// The directory part of `path`: "" (the current directory) for a bare name.
std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {};
  return slash == 0 ? std::string("/") : path.substr(0, slash);
}

// "a/./b//c/../d" as "a/b/d": the key under which a file is visited once (the opened path keeps
// its spelling). Only ever compared, never opened.
std::string lexically_normal(const std::string& path) {
  if (path.find("/.") == std::string::npos && path.find("//") == std::string::npos &&
      path.rfind("./", 0) != 0)
    return path;
  const bool absolute = !path.empty() && path.front() == '/';
  std::vector<std::string_view> parts;
  std::string_view rest(path);
  while (!rest.empty()) {
    const size_t slash = rest.find('/');
    const std::string_view part = rest.substr(0, slash);
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
    if (part.empty() || part == ".") continue;
    if (part == ".." && !parts.empty() && parts.back() != "..") {
      parts.pop_back();
    } else if (part != ".." || !absolute) {
      parts.push_back(part);
    }
  }
  std::string out = absolute ? "/" : "";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += '/';
    out += parts[i];
  }
  return out.empty() ? std::string(".") : out;
}

// Errors a file's own state explains (recorded as missing); others are the system's (kIo).
bool is_system_error(int error) {
  return error == EMFILE || error == ENFILE || error == ENOMEM || error == EIO || error == ENOBUFS;
}

class Scanner {
 public:
  Scanner(const ClosureQuery& query, FileMemo* memo)
      : query_(query),
        memo_(memo),
        in_memory_(query.in_memory.begin(), query.in_memory.end()),
        start_ns_(now_ns()) {}

  Status run() {
    const std::string primary = query_.source_path.empty() ? "<source>" : query_.source_path;
    // Pre-includes first, as the front end reads them: each as `#include "F"` in the current
    // directory.
    for (const std::string& name : query_.pre_includes) {
      if (name.empty()) continue;
      auto facts = std::make_shared<FileFacts>();
      facts->includes.push_back(Include{name, 0, false, false});
      if (Status done = follow(std::move(facts), "<pre-include>", "", -1, 0); !done.ok())
        return done;
    }
    // The command line's macros, as the front end defines them before the first line.
    std::string defines;
    for (const std::string& define : query_.defines) {
      const size_t equals = define.find('=');
      defines += "#define " +
                 (equals == std::string::npos
                      ? define + " 1"
                      : define.substr(0, equals) + " " + define.substr(equals + 1)) +
                 "\n";
    }
    if (!defines.empty())
      seen_.push_back(std::make_shared<const FileFacts>(read_directives(defines)));
    if (Status done = follow(std::make_shared<const FileFacts>(read_directives(query_.source)),
                             primary, directory_of(query_.source_path), -1, 0);
        !done.ok())
      return done;
    return resolve_computed();
  }

  // The closure and what proves it still holds.
  IncludeClosure closure() const {
    IncludeClosure out;
    KeyBuilder key;
    key.str("closure", "tmemjit/include-closure/1");
    unsigned char bytes[16];
    for (const auto& [path, content] : files_) {
      out.files.push_back(path);
      key.str("file", path);
      content.to_bytes(bytes);
      key.bytes("content", std::as_bytes(std::span(bytes)));
    }
    out.missing.assign(missing_.begin(), missing_.end());
    for (const std::string& name : out.missing) key.str("missing", name);
    out.unresolved.assign(unresolved_.begin(), unresolved_.end());
    for (const std::string& text : out.unresolved) key.str("unresolved", text);
    out.digest = key.finish();
    out.stamps = stamps_of(out.files, [&](const std::string& path) {
      const auto probe = probes_.find(path);
      return probe != probes_.end() ? probe->second : stat_path(path);
    });
    return out;
  }
  // What stat said of every path, and every candidate path a failed search tried (read once:
  // moved out).
  std::map<std::string, Signature> take_probes() { return std::move(probes_); }
  std::set<std::string> take_absent() { return std::move(absent_); }
  // Whether a probe may change unseen by its signature: the next query scans again.
  bool racy() const {
    return std::any_of(probes_.begin(), probes_.end(),
                       [&](const auto& probe) { return is_racy(probe.second, start_ns_); });
  }
  int64_t files_read() const { return files_read_; }

 private:
  struct Resolution {
    bool skipped = false;  // an in-memory header
    std::string path;      // empty: not found (see missing)
    int index = -1;        // the include dir it was found in; -1: the includer's own directory
    Signature signature;
    std::string missing;
  };

  // A computed include waiting for the macros that name its header.
  struct Pending {
    Computed computed;
    std::string path, dir;  // the includer's
    int index = -1;
    int depth = 0;
  };

  // The includes of a file at `path` found in search position `index`, recursively; its computed
  // includes wait for resolve_computed.
  Status follow(std::shared_ptr<const FileFacts> facts, const std::string& path,
                const std::string& dir, int index, int depth) {
    for (const Computed& computed : facts->computed)
      pending_.push_back(Pending{computed, path, dir, index, depth});
    seen_.push_back(facts);
    for (const Include& include : facts->includes)
      if (Status done = follow_include(include, path, dir, index, depth); !done.ok()) return done;
    return std::monostate{};
  }

  Status follow_include(const Include& include, const std::string& path, const std::string& dir,
                        int index, int depth) {
    const Resolution& found = resolve(include, dir, index);
    if (found.skipped) return std::monostate{};
    if (found.path.empty()) {
      missing_.insert(found.missing);
      return std::monostate{};
    }
    if (depth + 1 > kMaxDepth) {
      unresolved_.insert(path + ":" + std::to_string(include.line) + ": #include " + include.name +
                         " nested over " + std::to_string(kMaxDepth) + " deep");
      return std::monostate{};
    }
    if (!visited_.insert(lexically_normal(found.path) + '\n' + std::to_string(found.index)).second)
      return std::monostate{};
    // `found` lives in resolved_, whose elements stay put while it grows.
    auto read = load(found.path, found.signature, include.name);
    if (!read.ok()) return std::move(read).error();
    if (*read == nullptr) return std::monostate{};  // recorded as missing
    return follow(std::move(*read), found.path, directory_of(found.path), found.index, depth + 1);
  }

  // Follows each computed include whose tokens expand to a header name with the macros defined
  // anywhere in the closure: every definition, whatever the #if around it, so
  // `#include CUDA_STD_HEADER(tuple)` follows each of CUTLASS's two spellings. Files reached that
  // way bring more macros and computed includes: repeated until nothing changes. What never
  // expands to a header name (a macro defined with -D only, say) is unresolved.
  Status resolve_computed() {
    size_t merged = 0;  // seen_[0, merged) have their macros in macros_
    while (!pending_.empty()) {
      const size_t before = merged;
      for (; merged < seen_.size(); ++merged) macros_.add(*seen_[merged]);
      std::vector<Pending> batch = std::move(pending_), waiting;
      pending_.clear();
      bool progress = false;
      for (Pending& pending : batch) {
        const std::vector<Include> names = macros_.header_names(pending.computed);
        if (names.empty()) {
          waiting.push_back(std::move(pending));
          continue;
        }
        progress = true;
        for (const Include& include : names)
          if (Status done =
                  follow_include(include, pending.path, pending.dir, pending.index, pending.depth);
              !done.ok())
            return done;
      }
      pending_.insert(pending_.end(), std::make_move_iterator(waiting.begin()),
                      std::make_move_iterator(waiting.end()));
      if (!progress && merged == before) break;
    }
    for (const Pending& pending : pending_)
      unresolved_.insert(pending.path + ":" + std::to_string(pending.computed.line) +
                         (pending.computed.next ? ": #include_next " : ": #include ") +
                         pending.computed.tokens);
    pending_.clear();
    return std::monostate{};
  }

  // Where the front end finds `include` from a file in `dir` found at search position `index`.
  const Resolution& resolve(const Include& include, const std::string& dir, int index) {
    const bool absolute = include.name.front() == '/';
    // include_next in a file found outside the include dirs acts as include (GCC does so).
    const bool resume = include.next && index >= 0 && !absolute;
    const bool own_dir = !include.angled && !resume && !absolute;
    std::string key(1, static_cast<char>('0' + (include.angled ? 1 : 0) + (resume ? 2 : 0)));
    if (own_dir) key += dir;
    if (resume) key += std::to_string(index);
    key += '\n';
    key += include.name;
    auto [at, inserted] = resolved_.try_emplace(std::move(key));
    Resolution& out = at->second;
    if (!inserted) return out;
    if (in_memory_.count(include.name) != 0) {
      out.skipped = true;
      return out;
    }
    std::vector<std::pair<std::string, int>> candidates;
    if (absolute) {
      candidates.emplace_back(include.name, -1);
    } else {
      if (own_dir) candidates.emplace_back(join(dir, include.name), -1);
      const size_t first = resume ? static_cast<size_t>(index) + 1 : 0;
      for (size_t i = first; i < query_.include_dirs.size(); ++i)
        candidates.emplace_back(join(query_.include_dirs[i], include.name), static_cast<int>(i));
    }
    for (auto& [path, position] : candidates) {
      const Signature sig = stat_path(path);
      if (sig.error == 0 && S_ISREG(sig.mode)) {
        out.path = std::move(path);
        out.index = position;
        out.signature = sig;
        return out;
      }
      if (sig.error == ENOENT || sig.error == ENOTDIR || (sig.error == 0 && S_ISDIR(sig.mode))) {
        // Not here: a file that appears later changes the directory it would appear in (or
        // the first missing directory on its path appears).
        note_probe(directory_of(path));
        absent_.insert(path);
        continue;
      }
      probes_[path] = sig;
      out.missing =
          include.name + " (" +
          (sig.error == 0 ? std::string("not a regular file") : std::strerror(sig.error)) + ": " +
          path + ")";
      return out;
    }
    out.missing = include.name;
    return out;
  }

  void note_probe(const std::string& dir) {
    const std::string& key = dir.empty() ? std::string(".") : dir;
    if (probes_.count(key) == 0) probes_.emplace(key, stat_path(key));
  }

  // The facts of a regular file: remembered when its signature is, else read. Null when it
  // cannot be read for a reason of its own (recorded as missing).
  Result<std::shared_ptr<const FileFacts>> load(const std::string& path, const Signature& stat_sig,
                                                const std::string& name) {
    if (memo_ != nullptr) {
      std::shared_lock lock(memo_->mutex);
      auto it = memo_->files.find(path);
      if (it != memo_->files.end() && it->second.signature == stat_sig &&
          !is_racy(stat_sig, it->second.read_ns)) {
        probes_[path] = stat_sig;
        files_[path] = it->second.facts->content;
        return it->second.facts;
      }
    }
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
      const int error = errno;
      if (is_system_error(error))
        return Error(ErrorCode::kIo, "cannot open header '" + path + "': " + std::strerror(error));
      Signature sig;
      sig.error = error;
      probes_[path] = sig;
      missing_.insert(name + " (" + std::strerror(error) + ": " + path + ")");
      return std::shared_ptr<const FileFacts>();
    }
    struct Closer {
      int fd;
      ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st;
    if (::fstat(fd, &st) != 0)
      return Error(ErrorCode::kIo, "cannot stat header '" + path + "': " + std::strerror(errno));
    const Signature sig = signature_of(st);
    probes_[path] = sig;
    if (!S_ISREG(st.st_mode)) {  // replaced since the stat
      missing_.insert(name + " (not a regular file: " + path + ")");
      return std::shared_ptr<const FileFacts>();
    }
    if (st.st_size > kMaxFileBytes)
      return Error(ErrorCode::kLimit, "header '" + path + "' is " + std::to_string(st.st_size) +
                                          " bytes, over the 64 MiB an include scan reads");
    std::string text;
    text.resize(static_cast<size_t>(st.st_size));
    size_t filled = 0;
    for (;;) {
      if (filled == text.size()) {  // grown since fstat: read on, within the limit
        if (static_cast<int64_t>(text.size()) > kMaxFileBytes)
          return Error(ErrorCode::kLimit,
                       "header '" + path + "' grew over the 64 MiB an include scan reads");
        text.resize(text.size() + 4096);
      }
      const ssize_t got = ::read(fd, text.data() + filled, text.size() - filled);
      if (got < 0) {
        if (errno == EINTR) continue;
        return Error(ErrorCode::kIo, "cannot read header '" + path + "': " + std::strerror(errno));
      }
      if (got == 0) break;
      filled += static_cast<size_t>(got);
    }
    text.resize(filled);
    auto facts = std::make_shared<const FileFacts>(read_directives(text));
    ++files_read_;
    files_[path] = facts->content;
    if (memo_ != nullptr) {
      std::unique_lock lock(memo_->mutex);
      if (memo_->files.size() >= kMaxFiles) memo_->files.clear();
      memo_->files[path] = MemoFile{sig, start_ns_, facts};
    }
    return facts;
  }

  const ClosureQuery& query_;
  FileMemo* memo_;
  std::unordered_set<std::string> in_memory_;
  int64_t start_ns_;
  std::unordered_map<std::string, Resolution> resolved_;
  std::unordered_set<std::string> visited_;
  std::map<std::string, Key128> files_;
  std::map<std::string, Signature> probes_;  // path -> what stat said
  std::set<std::string> absent_;
  std::set<std::string> missing_;
  std::set<std::string> unresolved_;
  std::vector<Pending> pending_;
  std::vector<std::shared_ptr<const FileFacts>> seen_;  // every file followed, for its macros
  MacroTable macros_;
  int64_t files_read_ = 0;
};

}  // namespace

std::string join(const std::string& dir, const std::string& name) {
  if (dir.empty() || name.front() == '/') return name;
  if (dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

Result<ScannedClosure> scan_closure(const ClosureQuery& query, FileMemo* memo,
                                    int64_t& files_read) {
  Scanner scanner(query, memo);
  const Status done = scanner.run();
  files_read += scanner.files_read();
  if (!done.ok()) return done.error();
  ScannedClosure out;
  out.closure = scanner.closure();
  out.racy = scanner.racy();
  out.probes = scanner.take_probes();
  out.absent = scanner.take_absent();
  return out;
}

}  // namespace tmem::closure

namespace tmem {

Key128 closure_stamps_now(const IncludeClosure& closure) {
  return closure::stamps_of(closure.files, closure::stat_path);
}

Result<IncludeClosure> scan_include_closure(const ClosureQuery& query) {
  int64_t files_read = 0;
  auto scanned = closure::scan_closure(query, nullptr, files_read);
  if (!scanned.ok()) return std::move(scanned).error();
  return std::move(scanned->closure);
}

}  // namespace tmem
