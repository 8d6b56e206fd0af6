// The include closure scanner and its process-wide cache (include_closure.h).
#include "runtime/compile/include_closure.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "runtime/support/lexer.h"

namespace tmem {
namespace {

constexpr int64_t kMaxFileBytes = int64_t{64} << 20;  // one header; CUTLASS's largest is 0.3 MiB
constexpr int kMaxDepth = 200;                        // #include nesting, GCC's limit
constexpr size_t kMaxClosures = 1024;                 // remembered queries before a reset
constexpr size_t kMaxFiles = size_t{1} << 16;         // remembered files before a reset
constexpr size_t kMaxAlternatives = 16;    // header names one computed include may expand to
constexpr size_t kMaxExpansionDepth = 16;  // macros within macros, for a computed include

// ---- signatures --------------------------------------------------------------------------------

// What stat says of a path, enough to notice a change without reading it. `error` is the errno of
// a failed stat (the path is absent, or not reachable), 0 otherwise.
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

constexpr int64_t kNsPerSecond = 1000000000;

Signature signature_of(const struct stat& st) {
  Signature sig;
  sig.size = st.st_size;
  sig.mtime_ns = int64_t{st.st_mtim.tv_sec} * kNsPerSecond + st.st_mtim.tv_nsec;
  sig.ctime_ns = int64_t{st.st_ctim.tv_sec} * kNsPerSecond + st.st_ctim.tv_nsec;
  sig.inode = st.st_ino;
  sig.device = st.st_dev;
  sig.mode = st.st_mode;
  return sig;
}

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

Signature stat_path(const std::string& path) {
  struct stat st;
  if (::stat(path.empty() ? "." : path.c_str(), &st) != 0) {
    Signature sig;
    sig.error = errno;
    return sig;
  }
  return signature_of(st);
}

int64_t now_ns() {
  timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * kNsPerSecond + ts.tv_nsec;
}

// Whether a change after `since_ns` could leave `sig` as it is (git's "racy" entries): file
// timestamps come from a coarse clock, so a write in the same tick as the last one keeps mtime and
// ctime, and a same-size edit would go unseen. A tick is at most 10 ms (HZ=100); timestamps without
// nanoseconds suggest a file system that keeps whole seconds (FAT: two). Such a signature is not
// trusted: the file is read again next time.
bool is_racy(const Signature& sig, int64_t since_ns) {
  if (sig.error != 0) return false;
  const bool whole_seconds = sig.mtime_ns % kNsPerSecond == 0 && sig.ctime_ns % kNsPerSecond == 0;
  const int64_t window = whole_seconds ? 2 * kNsPerSecond : 50000000;
  return std::max(sig.mtime_ns, sig.ctime_ns) >= since_ns - window;
}

// ---- paths -------------------------------------------------------------------------------------

// The directory part of `path`: "" (the current directory) for a bare name.
std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {};
  return slash == 0 ? std::string("/") : path.substr(0, slash);
}

// `name` in `dir`, as the front end forms it (no normalization: "dir/../x" stays, so a symlinked
// dir resolves as the kernel resolves it).
std::string join(const std::string& dir, const std::string& name) {
  if (dir.empty() || name.front() == '/') return name;
  if (dir.back() == '/') return dir + name;
  return dir + "/" + name;
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

// ---- the directives ----------------------------------------------------------------------------

// One #include (or __has_include operand) the scan follows.
struct Include {
  std::string name;     // between the delimiters
  int line = 0;         // 1-based, in the file as written
  bool angled = false;  // <name>: the include dirs only
  bool next = false;    // #include_next: the search resumes after the includer's directory
};

// `#include TOKENS` (or #include_next): resolved, when it can be, by expanding TOKENS with the
// macros defined in the closure.
struct Computed {
  int line = 0;
  bool next = false;
  std::string tokens;  // as written, comments cut: "CUDA_STD_HEADER(tuple)"
};

// A #define, kept for computed includes.
struct Macro {
  std::string name;
  bool function_like = false;
  std::vector<std::string> params;  // "__VA_ARGS__" for "..."
  std::vector<std::string> body;    // tokens
};

// What a file's text says, kept per file version.
struct FileFacts {
  Key128 content;
  std::vector<Include> includes;
  std::vector<Computed> computed;
  std::vector<Macro> macros;
};

std::vector<std::string> directive_tokens(std::string_view text);

bool is_comment(TokenKind kind) {
  return kind == TokenKind::kLineComment || kind == TokenKind::kBlockComment;
}

// Finds the includes and macros of a text: only a '#' that begins a logical line (the lexer's
// kDirective) starts a directive, and its operands are read here, the lexer resuming after them.
class DirectiveReader {
 public:
  DirectiveReader(std::string_view text, FileFacts& facts)
      : written_(text), lexer_(text, SourceLanguage::kCpp), t_(lexer_.text()), facts_(facts) {}

  void run() {
    Token token;
    while (lexer_.next(token)) {
      if (token.kind == TokenKind::kDirective) {
        directive(token.end);
      } else if (token.kind == TokenKind::kIdentifier) {
        const std::string_view word = t_.substr(token.begin, token.end - token.begin);
        if (word == "__has_include" || word == "__has_include_next")
          has_include(token.end, word == "__has_include_next");
      }
    }
  }

 private:
  char peek(size_t ahead) const { return i_ + ahead < t_.size() ? t_[i_ + ahead] : '\0'; }

  // The 1-based line, in the text as written, that the line of the lexer's text holding i_
  // begins on (a directive's line, whatever splices it spans).
  int line_number() {
    const size_t newline = i_ == 0 ? std::string_view::npos : t_.rfind('\n', i_ - 1);
    const size_t begin = newline == std::string_view::npos ? 0 : lexer_.original(newline) + 1;
    if (begin < counted_) counted_ = lines_ = 0;  // never expected: directives come in order
    lines_ += static_cast<int>(std::count(written_.begin() + static_cast<ptrdiff_t>(counted_),
                                          written_.begin() + static_cast<ptrdiff_t>(begin), '\n'));
    counted_ = begin;
    return lines_ + 1;
  }

  // Past blanks and comments that do not end the line.
  void skip_horizontal() {
    lexer_.seek(i_);
    Token token;
    while (lexer_.peek(token) &&
           (token.kind == TokenKind::kBlank || token.kind == TokenKind::kBlockComment))
      lexer_.seek(token.end);
    i_ = lexer_.offset();
  }
  // The identifier at i_, moved past; empty when none starts there.
  std::string_view identifier() {
    lexer_.seek(i_);
    Token token;
    if (!lexer_.peek(token) || token.kind != TokenKind::kIdentifier) return {};
    i_ = token.end;
    return t_.substr(token.begin, token.end - token.begin);
  }
  // "name" or <name> on this line, from its opening delimiter: a header name, not a literal
  // (no escapes in it), so read here.
  bool header_name(Include& include) {
    const char close = t_[i_] == '<' ? '>' : '"';
    const size_t end = t_.find_first_of(close == '>' ? ">\n" : "\"\n", i_ + 1);
    if (end == std::string_view::npos || t_[end] != close || end == i_ + 1) return false;
    include.angled = close == '>';
    include.name.assign(t_.substr(i_ + 1, end - i_ - 1));
    i_ = end + 1;
    return true;
  }
  // The rest of the line from i_ for a message or a macro body: cut at its first comment, blanks
  // trimmed.
  std::string rest_of_line() {
    const size_t line_end = std::min(t_.find('\n', i_), t_.size());
    size_t end = i_;
    lexer_.seek(i_);
    Token token;
    while (lexer_.peek(token) && token.begin < line_end && !is_comment(token.kind)) {
      end = std::min(token.end, line_end);
      lexer_.seek(token.end);
    }
    std::string_view rest = t_.substr(i_, end - i_);
    while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t' || rest.back() == '\r'))
      rest.remove_suffix(1);
    return std::string(rest);
  }
  // The ')' closing a parameter list opening at i_, on this line; npos when there is none.
  size_t closing_parenthesis() {
    lexer_.seek(i_ + 1);
    Token token;
    while (lexer_.peek(token) && token.kind != TokenKind::kNewline) {
      if (token.kind == TokenKind::kPunctuation && t_[token.begin] == ')') return token.begin;
      lexer_.seek(token.end);
    }
    return std::string_view::npos;
  }

  // After a line's '#'. The rest of the line is lexed as usual afterwards, so a __has_include in
  // an #if is seen there.
  void directive(size_t after_hash) {
    i_ = after_hash;
    skip_horizontal();
    const std::string_view word = identifier();
    if (word == "define") {
      define();
    } else if (word == "include" || word == "include_next") {  // #import: Objective-C only
      include(word == "include_next");
    }
    lexer_.seek(i_);
  }
  void include(bool next) {
    Include include;
    include.line = line_number();
    include.next = next;
    skip_horizontal();
    if (i_ < t_.size() && (t_[i_] == '"' || t_[i_] == '<') && header_name(include)) {
      facts_.includes.push_back(std::move(include));
      return;
    }
    facts_.computed.push_back(Computed{include.line, include.next, rest_of_line()});
  }
  // #define NAME BODY or NAME(PARAMS) BODY, from after "define".
  void define() {
    skip_horizontal();
    Macro macro;
    macro.name.assign(identifier());
    if (macro.name.empty()) return;
    if (peek(0) == '(') {  // no blank before '(': function-like
      macro.function_like = true;
      const size_t close = closing_parenthesis();
      if (close == std::string_view::npos) return;
      std::string previous = ",";
      for (std::string& param : directive_tokens(t_.substr(i_ + 1, close - i_ - 1))) {
        // "..." is __VA_ARGS__; after a name (GNU's "args...") the name stands for the rest.
        if (param != "," && (param != "..." || previous == ","))
          macro.params.push_back(param == "..." ? "__VA_ARGS__" : param);
        previous = std::move(param);
      }
      i_ = close + 1;
    }
    macro.body = directive_tokens(rest_of_line());
    if (!macro.body.empty() && macro.body.size() <= 64) facts_.macros.push_back(std::move(macro));
  }
  // __has_include("x") / (<x>): followed as an include (what it finds may change the code). An
  // operand that is not a header name (a macro, or `defined(__has_include)`) is left alone.
  void has_include(size_t after, bool next) {
    i_ = after;
    const int line = line_number();
    skip_horizontal();
    if (peek(0) == '(') {
      ++i_;
      skip_horizontal();
      Include include;
      include.line = line;
      include.next = next;
      if (i_ < t_.size() && (t_[i_] == '"' || t_[i_] == '<') && header_name(include)) {
        facts_.includes.push_back(std::move(include));
        lexer_.seek(i_);
        return;
      }
    }
    lexer_.seek(after);
  }

  std::string_view written_;  // the text as written, for line numbers
  Lexer lexer_;
  std::string_view t_;  // the lexer's text: splices removed
  FileFacts& facts_;
  size_t i_ = 0;
  size_t counted_ = 0;  // line_number(): newlines of written_ before counted_ ...
  int lines_ = 0;       // ... are lines_
};

FileFacts read_directives(std::string_view text) {
  FileFacts facts;
  facts.content = hash128(std::as_bytes(std::span(text.data(), text.size())));
  DirectiveReader(text, facts).run();
  return facts;
}

std::vector<std::string> directive_tokens(std::string_view text) {
  std::vector<std::string> out;
  Lexer lexer(text, SourceLanguage::kCpp);
  const std::string_view t = lexer.text();
  Token token;
  while (lexer.next(token)) {
    if (token.kind == TokenKind::kBlank || token.kind == TokenKind::kNewline ||
        is_comment(token.kind))
      continue;
    size_t end = token.end;
    if (t.substr(token.begin, 2) == "##") end = token.begin + 2;
    if (t.substr(token.begin, 3) == "...") end = token.begin + 3;
    out.emplace_back(t.substr(token.begin, end - token.begin));
    lexer.seek(end);
  }
  return out;
}

// ---- the scan ----------------------------------------------------------------------------------

// A file read by an earlier scan, reused while its signature holds.
struct MemoFile {
  Signature signature;
  int64_t read_ns = 0;  // the start of the scan that read it: racy against this
  std::shared_ptr<const FileFacts> facts;
};

struct FileMemo {
  mutable std::shared_mutex mutex;
  std::unordered_map<std::string, MemoFile> files;
};

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
  const std::map<std::string, Signature>& probes() const { return probes_; }
  // Every candidate path a failed search tried: a file appearing at one changes the closure.
  const std::set<std::string>& absent() const { return absent_; }
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
  using Tokens = std::vector<std::string>;

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
      for (; merged < seen_.size(); ++merged)
        for (const Macro& macro : seen_[merged]->macros) macros_.emplace(macro.name, &macro);
      std::vector<Pending> batch = std::move(pending_), waiting;
      pending_.clear();
      bool progress = false;
      for (Pending& pending : batch) {
        const std::vector<Include> names = header_names(pending.computed);
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

  // The header names a computed include's tokens may expand to.
  std::vector<Include> header_names(const Computed& computed) const {
    std::vector<std::string> hidden;
    std::vector<Include> out;
    for (const Tokens& tokens : expand(directive_tokens(computed.tokens), hidden)) {
      Include include;
      include.line = computed.line;
      include.next = computed.next;
      if (tokens.empty()) continue;
      const std::string& first = tokens.front();
      if (first.size() > 2 && first.front() == '"' && first.back() == '"') {
        include.name = first.substr(1, first.size() - 2);
      } else if (first == "<") {
        // The tokens up to '>' make the name; a header name has no blanks worth keeping.
        size_t i = 1;
        for (; i < tokens.size() && tokens[i] != ">"; ++i) include.name += tokens[i];
        if (i == tokens.size()) continue;
        include.angled = true;
      }
      if (include.name.empty()) continue;
      const bool seen = std::any_of(out.begin(), out.end(), [&](const Include& other) {
        return other.name == include.name && other.angled == include.angled;
      });
      if (!seen) out.push_back(std::move(include));
    }
    return out;
  }

  // Every expansion of `in` over the known definitions (one alternative per definition of each
  // macro, at most kMaxAlternatives in all). `hidden`: macros being expanded, not expanded again
  // (C++ [cpp.rescan]).
  std::vector<Tokens> expand(const Tokens& in, std::vector<std::string>& hidden) const {
    std::vector<Tokens> out(1);
    for (size_t i = 0; i < in.size(); ++i) {
      const std::string& token = in[i];
      auto [first, last] = macros_.equal_range(token);
      if (hidden.size() >= kMaxExpansionDepth ||
          std::find(hidden.begin(), hidden.end(), token) != hidden.end())
        first = last;
      // The arguments, when a '(' follows: split at top-level commas.
      std::vector<Tokens> args;
      size_t close = i;
      if (first != last && i + 1 < in.size() && in[i + 1] == "(") {
        int nesting = 0;
        args.emplace_back();
        for (size_t j = i + 2; j < in.size(); ++j) {
          if (in[j] == ")" && nesting == 0) {
            close = j;
            break;
          }
          if (in[j] == "(") ++nesting;
          if (in[j] == ")") --nesting;
          if (in[j] == "," && nesting == 0) {
            args.emplace_back();
          } else {
            args.back().push_back(in[j]);
          }
        }
      }
      std::vector<Tokens> expansions;
      bool took_args = false;
      for (auto it = first; it != last && expansions.size() < kMaxAlternatives; ++it) {
        const Macro& macro = *it->second;
        if (macro.function_like && close == i) continue;  // a function-like name without '('
        hidden.push_back(token);
        for (Tokens& expansion :
             expand(macro.function_like ? substitute(macro, args) : macro.body, hidden))
          expansions.push_back(std::move(expansion));
        hidden.pop_back();
        took_args = took_args || macro.function_like;
      }
      if (expansions.empty()) {
        for (Tokens& alternative : out) alternative.push_back(token);
        continue;
      }
      if (took_args) i = close;
      std::vector<Tokens> product;
      for (const Tokens& alternative : out)
        for (const Tokens& expansion : expansions) {
          if (product.size() == kMaxAlternatives) break;
          product.push_back(alternative);
          product.back().insert(product.back().end(), expansion.begin(), expansion.end());
        }
      out = std::move(product);
    }
    return out;
  }

  // A function-like macro's body with its parameters replaced: #p as a string literal, a ## b
  // joined (the header name joins its tokens anyway).
  static Tokens substitute(const Macro& macro, const std::vector<Tokens>& args) {
    auto argument = [&](const std::string& token) -> const Tokens* {
      for (size_t k = 0; k < macro.params.size(); ++k) {
        if (macro.params[k] != token) continue;
        static const Tokens kNone;
        return k < args.size() ? &args[k] : &kNone;
      }
      return nullptr;
    };
    Tokens out;
    for (size_t j = 0; j < macro.body.size(); ++j) {
      const std::string& token = macro.body[j];
      if (token == "##") continue;
      if (token == "#" && j + 1 < macro.body.size()) {
        if (const Tokens* arg = argument(macro.body[j + 1])) {
          std::string text = "\"";
          for (const std::string& part : *arg) text += part;
          out.push_back(text + "\"");
          ++j;
          continue;
        }
      }
      if (const Tokens* arg = argument(token)) {
        out.insert(out.end(), arg->begin(), arg->end());
        if (token == "__VA_ARGS__")  // the variadic rest, commas restored
          for (size_t k = macro.params.size(); k < args.size(); ++k) {
            out.push_back(",");
            out.insert(out.end(), args[k].begin(), args[k].end());
          }
        continue;
      }
      out.push_back(token);
    }
    return out;
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
  std::unordered_multimap<std::string_view, const Macro*> macros_;  // views of Macro::name
  int64_t files_read_ = 0;
};

}  // namespace

// ---- options -----------------------------------------------------------------------------------

Result<IncludeSearch> include_search_of(std::span<const std::string> nvrtc_options) {
  struct Form {
    std::string_view flag;
    bool joined;  // the value may follow the flag directly (-IDIR)
    int into;     // 0: include dirs, 1: system dirs, 2: pre-includes
  };
  static constexpr Form kForms[] = {
      {"--include-path", false, 0},   {"-I", true, 0},
      {"--system-include", false, 1}, {"-isystem", true, 1},
      {"--pre-include", false, 2},    {"-include", false, 2},
      {"--define-macro", false, 3},   {"-D", true, 3},
  };
  std::vector<std::string> lists[4];
  for (size_t i = 0; i < nvrtc_options.size(); ++i) {
    const std::string& option = nvrtc_options[i];
    for (const Form& form : kForms) {
      if (option.rfind(form.flag, 0) != 0) continue;
      std::string_view rest = std::string_view(option).substr(form.flag.size());
      if (!rest.empty() && rest.front() != '=' && !form.joined) continue;  // another option
      std::string value;
      if (rest.empty()) {
        if (i + 1 == nvrtc_options.size())
          return Error(ErrorCode::kUsage, "nvrtc option '" + option + "' needs a value after it",
                       form.into == 2   ? "a file to pre-include"
                       : form.into == 3 ? "a macro, NAME or NAME=VALUE"
                                        : "an include directory");
        value = nvrtc_options[++i];
      } else {
        if (rest.front() == '=') rest.remove_prefix(1);
        value = std::string(rest);
      }
      if (value.empty())
        return Error(ErrorCode::kUsage, "nvrtc option '" + option + "' has an empty value",
                     form.into == 2   ? "a file to pre-include"
                     : form.into == 3 ? "a macro, NAME or NAME=VALUE"
                                      : "an include directory");
      lists[form.into].push_back(std::move(value));
      break;
    }
  }
  IncludeSearch search;
  search.include_dirs = std::move(lists[0]);
  search.include_dirs.insert(search.include_dirs.end(), lists[1].begin(), lists[1].end());
  search.pre_includes = std::move(lists[2]);
  search.defines = std::move(lists[3]);
  return search;
}

Key128 closure_stamps_now(const IncludeClosure& closure) {
  return stamps_of(closure.files, stat_path);
}

Result<IncludeClosure> scan_include_closure(const ClosureQuery& query) {
  Scanner scanner(query, nullptr);
  if (Status done = scanner.run(); !done.ok()) return std::move(done).error();
  return scanner.closure();
}

// ---- change notification -----------------------------------------------------------------------

namespace {

// What a watch reports: a change to an entry's content, attributes or name, and the watched
// inode's own removal or move. IN_Q_OVERFLOW, IN_IGNORED and IN_UNMOUNT come unasked.
constexpr uint32_t kWatchMask = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM |
                                IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF;
constexpr int kMaxLinks = 40;         // symbolic links followed in one path, the kernel's limit
constexpr size_t kFirstSweep = 1024;  // watches held before unused ones are removed

// One watched inode (a directory, or a file with other hard links) and the names in it that some
// closure's paths go through.
struct Watch {
  std::atomic<uint64_t> generation{0};    // bumped by each event on a name that matters
  std::unordered_set<std::string> names;  // under Watcher::mutex_
  bool trusted = true;                    // on a file system whose changes this kernel sees
};

// A closure's watches as they stood when it was last known to hold: it still holds while none
// has moved on.
struct Snapshot {
  std::vector<std::pair<std::shared_ptr<Watch>, uint64_t>> watches;
  uint64_t epoch = 0;     // Watcher::epoch() then
  bool relative = false;  // some path resolves from the current directory: chdir moves it
  uint64_t cwd_device = 0, cwd_inode = 0;
};

// File systems whose files may change without this kernel's knowing (another machine, a user-space
// server): their watches are not trusted (statfs(2) f_type).
bool is_remote(uint32_t type) {
  static constexpr uint32_t kRemote[] = {
      0x6969,      // NFS
      0x517B,      // SMB
      0xFF534D42,  // CIFS
      0xFE534D42,  // SMB2
      0x73757245,  // Coda
      0x5346414F,  // AFS
      0x6B414653,  // kAFS
      0x01021997,  // 9p
      0x00C36400,  // Ceph
      0x65735546,  // FUSE (sshfs, virtiofs, gcsfuse, ...)
      0x0BD00BD0,  // Lustre
      0x47504653,  // GPFS
      0x01161970,  // GFS2
      0x7461636F,  // OCFS2
      0x19830326,  // BeeGFS
      0x20030528,  // OrangeFS
      0x564C,      // NCP
  };
  return std::find(std::begin(kRemote), std::end(kRemote), type) != std::end(kRemote);
}

// The process's inotify descriptor and what each of its watches is for. Events are drained under
// mutex_ and applied before it is released, so a query that drains after another thread's drain
// sees that thread's events applied.
class Watcher {
 public:
  // Null where inotify is unavailable.
  static Watcher* instance() {
    static Watcher* const watcher = [] {
      const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
      if (fd < 0) return static_cast<Watcher*>(nullptr);
      forking_ = new Watcher(fd);  // never deleted: queries may run during exit
      // A child shares the descriptor's queue: reading it would steal the parent's events. The
      // child makes its own at its next query; mutex_ is held across fork so it is sane there.
      ::pthread_atfork([] { forking_->mutex_.lock(); }, [] { forking_->mutex_.unlock(); },
                       [] {
                         forking_->forked_ = true;
                         forking_->mutex_.unlock();
                       });
      return forking_;
    }();
    return watcher;
  }

  uint64_t epoch() const { return epoch_.load(std::memory_order_acquire); }

  // Applies every queued event: one read(2) returning EAGAIN when nothing changed.
  void drain() {
    std::lock_guard lock(mutex_);
    if (!ready()) return;
    alignas(inotify_event) char buffer[16384];
    for (;;) {
      const ssize_t got = ::read(fd_, buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0 && errno == EAGAIN) return;
      if (got <= 0) {  // never expected: trust no watch from now on
        broken_.store(true, std::memory_order_release);
        epoch_.fetch_add(1, std::memory_order_acq_rel);
        return;
      }
      for (ssize_t at = 0; at < got;) {
        const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
        at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
        apply(*event);
      }
    }
  }

  // Whether no watch of `snapshot` saw an event since it was taken. Call after drain().
  bool holds(const Snapshot& snapshot) const {
    if (broken_.load(std::memory_order_acquire) || snapshot.epoch != epoch()) return false;
    for (const auto& [watch, generation] : snapshot.watches)
      if (watch->generation.load(std::memory_order_acquire) != generation) return false;
    if (snapshot.relative) {
      struct stat st;
      if (::stat(".", &st) != 0 || st.st_dev != snapshot.cwd_device ||
          st.st_ino != snapshot.cwd_inode)
        return false;
    }
    return true;
  }

  // Watches `path` (a directory, or with `directory` false a file) for events on `name` in it
  // ("": the inode itself). `watch` is this walk's watch of `path`: when null, the watch is added
  // and its generation returned through `added`. False when it cannot be watched or trusted.
  bool watch(const std::string& path, const std::string& name, bool directory,
             std::shared_ptr<Watch>& watch, std::optional<uint64_t>& added) {
    std::lock_guard lock(mutex_);
    if (!ready()) return false;
    if (watch == nullptr) {
      if (by_wd_.size() >= sweep_at_) sweep();
      const char* at = path.empty() ? "." : path.c_str();
      const int wd = ::inotify_add_watch(fd_, at, kWatchMask | (directory ? IN_ONLYDIR : 0));
      if (wd < 0) return false;
      std::shared_ptr<Watch>& slot = by_wd_[wd];
      if (slot == nullptr) {
        slot = std::make_shared<Watch>();
        struct statfs fs;
        slot->trusted = ::statfs(at, &fs) == 0 && !is_remote(static_cast<uint32_t>(fs.f_type));
      }
      watch = slot;
      added = slot->generation.load(std::memory_order_acquire);
    }
    if (!watch->trusted) return false;
    watch->names.insert(name);
    return true;
  }

 private:
  explicit Watcher(int fd) : fd_(fd) {}

  // Under mutex_: whether fd_ may be used, after making a forked child its own.
  bool ready() {
    if (forked_) {
      forked_ = false;
      ::close(fd_);  // the parent's stays open in the parent
      fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
      for (auto& [wd, watch] : by_wd_) watch->generation.fetch_add(1, std::memory_order_acq_rel);
      by_wd_.clear();
      epoch_.fetch_add(1, std::memory_order_acq_rel);
      if (fd_ < 0) broken_.store(true, std::memory_order_release);
    }
    return !broken_.load(std::memory_order_relaxed);
  }

  // Under mutex_.
  void apply(const inotify_event& event) {
    if ((event.mask & IN_Q_OVERFLOW) != 0) {  // events were lost: nothing is known clean
      epoch_.fetch_add(1, std::memory_order_acq_rel);
      return;
    }
    auto it = by_wd_.find(event.wd);
    if (it == by_wd_.end()) return;  // removed by sweep()
    Watch& watch = *it->second;
    // An event with no name is the watched inode's own (moved, deleted, chmod, written).
    if (event.len == 0 || event.name[0] == '\0' || watch.names.count(event.name) != 0)
      watch.generation.fetch_add(1, std::memory_order_acq_rel);
    if ((event.mask & IN_IGNORED) != 0) {  // the inode is gone or unmounted: the watch with it
      watch.generation.fetch_add(1, std::memory_order_acq_rel);
      by_wd_.erase(it);
    }
  }

  // Under mutex_: removes the watches no closure and no walk holds any more.
  void sweep() {
    for (auto it = by_wd_.begin(); it != by_wd_.end();) {
      if (it->second.use_count() == 1) {
        ::inotify_rm_watch(fd_, it->first);
        it = by_wd_.erase(it);
      } else {
        ++it;
      }
    }
    sweep_at_ = std::max(kFirstSweep, 2 * by_wd_.size());
  }

  static inline Watcher* forking_ = nullptr;  // instance(), for the fork handlers
  std::mutex mutex_;
  int fd_;
  bool forked_ = false;  // set in a forked child, under mutex_
  std::atomic<bool> broken_{false};
  std::atomic<uint64_t> epoch_{1};
  std::unordered_map<int, std::shared_ptr<Watch>> by_wd_;  // under mutex_
  size_t sweep_at_ = kFirstSweep;
};

// `path` as (its directory as written, its last name); the name is empty where the last component
// is "." or ".." or the path ends in '/': then the whole path is the directory.
std::pair<std::string, std::string> split_watched(const std::string& path) {
  const size_t slash = path.rfind('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.empty() || name == "." || name == "..") return {path, ""};
  return {slash == std::string::npos ? ""
          : slash == 0               ? "/"
                                     : path.substr(0, slash),
          std::move(name)};
}

// The watches over the paths of one or two closures, each set before the lookup it guards: walks
// each path as the kernel resolves it (symbolic links followed), watching each directory it looks
// a name up in for that name, so a change anywhere on the way after the lookup is an event.
class Walk {
 public:
  explicit Walk(Watcher& watcher) : watcher_(watcher), epoch_(watcher.epoch()) {}
  ~Walk() {
    for (auto& [path, dir] : directories_at_)
      if (dir.fd >= 0) ::close(dir.fd);
  }
  Walk(const Walk&) = delete;
  Walk& operator=(const Walk&) = delete;

  // Watches the paths `dir`/NAME for each of `names` ("": `dir` itself, walked whole).
  void add(const std::string& dir, const std::vector<std::string>& names) {
    if (failed_) return;
    if (std::find(names.begin(), names.end(), "") != names.end()) walk(dir, 0, false);
    const std::optional<std::string>& resolved = directory(dir, 0);
    if (!resolved || failed_) return;
    Directory& at = directories_at_[*resolved];
    for (const std::string& name : names) {
      bool not_directory = false;
      if (!name.empty()) step(*resolved, at, name, 0, not_directory);
      if (failed_) return;
    }
  }
  // A watch could not be set or trusted: the closure takes the stat path.
  bool failed() const { return failed_; }
  // (directory, name) pairs watched so far.
  int64_t points() const { return points_; }

  std::shared_ptr<const Snapshot> snapshot() const {
    if (failed_) return nullptr;
    auto out = std::make_shared<Snapshot>();
    out->watches = captured_;
    out->epoch = epoch_;
    out->relative = relative_;
    out->cwd_device = cwd_device_;
    out->cwd_inode = cwd_inode_;
    return out;
  }

 private:
  enum class Kind { kMissing, kDirectory, kOther, kLink };
  struct Entry {
    Kind kind = Kind::kMissing;
    std::optional<std::string> target;  // a link's resolution, symlink-free
  };
  // A symlink-free directory (or a hard-linked file) this walk watches.
  struct Directory {
    std::shared_ptr<Watch> watch;
    int fd = -1;  // O_PATH, opened once watched; -1: whole paths are looked up
    bool opened = false;
    bool parent_watched = false;
    std::unordered_map<std::string, Entry> entries;  // name -> what lstat said, once watched
  };

  // `path` symlink-free (in `cur`'s terms: "" is the current directory), or none when it does not
  // resolve to an existing file or directory. A path's directory is walked once per Walk.
  std::optional<std::string> resolve(const std::string& path, int links) {
    const auto [dir, name] = split_watched(path);
    if (name.empty()) return walk(dir, links, false);
    const std::optional<std::string> resolved = directory(dir, links);
    if (!resolved) return std::nullopt;
    bool not_directory = false;
    return step(*resolved, directories_at_[*resolved], name, links, not_directory);
  }

  // `dir` (as a path spells it) symlink-free, or none when it is not a directory; walked once.
  const std::optional<std::string>& directory(const std::string& dir, int links) {
    auto it = directories_.find(dir);
    if (it != directories_.end()) return it->second;
    std::optional<std::string> resolved = walk(dir, links, true);
    return directories_.insert_or_assign(dir, std::move(resolved)).first->second;
  }

  // Every component of `path` in turn; with `directory`, none unless it ends in a directory.
  std::optional<std::string> walk(std::string_view path, int links, bool directory) {
    std::string cur = !path.empty() && path.front() == '/' ? "/" : "";
    if (cur.empty()) note_relative();
    bool not_directory = false;
    size_t begin = 0;
    while (begin < path.size() && !failed_) {
      const size_t slash = std::min(path.find('/', begin), path.size());
      const std::string_view part = path.substr(begin, slash - begin);
      begin = slash + 1;
      if (part.empty() || part == ".") continue;
      if (not_directory) return std::nullopt;
      if (part == "..") {
        Directory& dir = directories_at_[cur];
        if (!dir.parent_watched) {  // a move of `cur` (its own event) changes what ".." is
          dir.parent_watched = true;
          watch(cur, dir, "..", true);
        }
        cur = parent_of(cur);
        continue;
      }
      std::optional<std::string> next =
          step(cur, directories_at_[cur], std::string(part), links, not_directory);
      if (!next) return std::nullopt;
      cur = std::move(*next);
    }
    if (failed_ || (directory && not_directory)) return std::nullopt;
    return cur;
  }

  // `name` looked up in the symlink-free directory `cur`, watched first.
  std::optional<std::string> step(const std::string& cur, Directory& dir, const std::string& name,
                                  int links, bool& not_directory) {
    auto it = dir.entries.find(name);
    if (it == dir.entries.end()) {
      watch(cur, dir, name, true);
      if (failed_) return std::nullopt;
      Entry entry = look_up(cur, dir, name, links);
      it = dir.entries.insert_or_assign(name, std::move(entry)).first;
    }
    not_directory = it->second.kind == Kind::kOther;
    switch (it->second.kind) {
      case Kind::kMissing:
        return std::nullopt;
      case Kind::kLink:
        return it->second.target;
      default:
        return join_name(cur, name);
    }
  }

  static std::string join_name(const std::string& dir, const std::string& name) {
    return dir.empty() ? name : dir == "/" ? "/" + name : dir + "/" + name;
  }

  static std::string parent_of(const std::string& dir) {
    if (dir.empty()) return "..";
    if (dir == ".." || (dir.size() > 2 && dir.compare(dir.size() - 3, 3, "/..") == 0))
      return dir + "/..";
    const size_t slash = dir.rfind('/');
    if (slash == std::string::npos) return "";
    return slash == 0 ? std::string("/") : dir.substr(0, slash);
  }

  // What lstat says of `name` in `cur`, through the directory's descriptor (one component looked
  // up, not the whole path).
  Entry look_up(const std::string& cur, Directory& dir, const std::string& name, int links) {
    if (!dir.opened) {
      dir.opened = true;
      dir.fd = ::open(cur.empty() ? "." : cur.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    }
    const std::string path = join_name(cur, name);
    const int at = dir.fd >= 0 ? dir.fd : AT_FDCWD;
    const char* const name_at = dir.fd >= 0 ? name.c_str() : path.c_str();
    Entry entry;
    struct stat st;
    if (::fstatat(at, name_at, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      // Absent, or not searchable: a name appearing, or a chmod of a directory on the way, is
      // an event of a watch already set. Anything else is not understood here.
      if (errno != ENOENT && errno != ENOTDIR && errno != EACCES) failed_ = true;
    } else if (S_ISLNK(st.st_mode)) {
      entry.kind = Kind::kLink;
      std::string target(static_cast<size_t>(std::max<off_t>(st.st_size, 0)) + 256, '\0');
      const ssize_t got = ::readlinkat(at, name_at, target.data(), target.size());
      if (links >= kMaxLinks || got <= 0 || static_cast<size_t>(got) == target.size()) {
        failed_ = true;  // a loop, or a link changing under us: not worth understanding
      } else {
        target.resize(static_cast<size_t>(got));
        if (target.front() != '/' && !cur.empty()) target = (cur == "/" ? cur : cur + "/") + target;
        entry.target = resolve(target, links + 1);
      }
    } else if (S_ISDIR(st.st_mode)) {
      entry.kind = Kind::kDirectory;
    } else {
      entry.kind = Kind::kOther;
      // Written through another of its names, a file's change reaches only that name's
      // directory: watch the file itself.
      if (S_ISREG(st.st_mode) && st.st_nlink > 1) watch(path, directories_at_[path], "", false);
    }
    return entry;
  }

  void watch(const std::string& path, Directory& dir, const std::string& name, bool directory) {
    if (failed_) return;
    ++points_;
    std::optional<uint64_t> added;
    if (!watcher_.watch(path, name, directory, dir.watch, added)) {
      failed_ = true;
      return;
    }
    if (added) captured_.emplace_back(dir.watch, *added);
  }

  void note_relative() {
    if (relative_) return;
    relative_ = true;
    struct stat st;
    if (::stat(".", &st) != 0) {
      failed_ = true;
      return;
    }
    cwd_device_ = st.st_dev;
    cwd_inode_ = st.st_ino;
  }

  Watcher& watcher_;
  uint64_t epoch_;
  bool failed_ = false;
  bool relative_ = false;
  uint64_t cwd_device_ = 0, cwd_inode_ = 0;
  // A directory as a path spells it -> symlink-free, none when it does not resolve.
  std::unordered_map<std::string, std::optional<std::string>> directories_;
  // Symlink-free path -> what is watched there; its elements stay put as it grows.
  std::unordered_map<std::string, Directory> directories_at_;
  int64_t points_ = 0;  // (directory, name) pairs watched
  std::vector<std::pair<std::shared_ptr<Watch>, uint64_t>> captured_;
};

}  // namespace

// ---- the cache ---------------------------------------------------------------------------------

namespace {

// A closure's probes under one directory. A hit opens each directory once (O_PATH) and stats its
// entries relative to it: a one-component lookup each instead of a walk of the whole path, which
// takes a third off a hit on CuTe's closure (bench/include_closure_bench.cc). Opened afresh on
// each hit, the directory is what its path names now, so the answer is stat's on the full path.
struct ProbeGroup {
  std::string dir;  // "": entries are whole paths, looked up from the current directory
  std::vector<std::pair<std::string, Signature>> entries;  // name in dir, what stat said
};

// A remembered closure and the signatures that vouch for it.
struct Remembered {
  std::shared_ptr<const IncludeClosure> closure;
  std::vector<ProbeGroup> groups;
  bool racy = false;  // some probe changed too recently to trust: scan next time
  // Every path stat said something of, and every candidate a failed search tried, by directory
  // as written (split_watched): what a Walk watches.
  std::map<std::string, std::vector<std::string>> watched;
};

std::vector<ProbeGroup> group_by_directory(const std::map<std::string, Signature>& probes) {
  std::map<std::string, ProbeGroup> groups;
  for (const auto& [path, sig] : probes) {
    const size_t slash = path.rfind('/');
    std::string dir, name = path;
    if (slash != std::string::npos && slash + 1 < path.size()) {
      dir = slash == 0 ? std::string("/") : path.substr(0, slash);
      name = path.substr(slash + 1);
    }
    ProbeGroup& group = groups[dir];
    group.dir = dir;
    group.entries.emplace_back(std::move(name), sig);
  }
  std::vector<ProbeGroup> out;
  for (auto& [dir, group] : groups) out.push_back(std::move(group));
  return out;
}

bool entry_holds(int dir_fd, const std::string& name, const Signature& sig) {
  struct stat st;
  Signature now;
  if (::fstatat(dir_fd, name.c_str(), &st, 0) != 0) {
    now.error = errno;
  } else {
    now = signature_of(st);
  }
  return now == sig;
}

bool group_holds(const ProbeGroup& group) {
  if (group.dir.empty()) {
    for (const auto& [name, sig] : group.entries)
      if (!entry_holds(AT_FDCWD, name, sig)) return false;
    return true;
  }
  const int dir_fd = ::open(group.dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) {  // gone, not a directory, or no descriptor left: the whole paths answer
    for (const auto& [name, sig] : group.entries)
      if (!(stat_path(join(group.dir, name)) == sig)) return false;
    return true;
  }
  bool holds = true;
  for (const auto& [name, sig] : group.entries) {
    if (!entry_holds(dir_fd, name, sig)) {
      holds = false;
      break;
    }
  }
  ::close(dir_fd);
  return holds;
}

Key128 query_key(const ClosureQuery& query) {
  KeyBuilder key;
  key.str("source", query.source);
  key.str("path", query.source_path);
  key.integer("include dirs", static_cast<int64_t>(query.include_dirs.size()));
  for (const std::string& dir : query.include_dirs) key.str("dir", dir);
  key.integer("pre-includes", static_cast<int64_t>(query.pre_includes.size()));
  for (const std::string& name : query.pre_includes) key.str("pre-include", name);
  std::vector<std::string> in_memory = query.in_memory;  // a set: order is not the caller's point
  std::sort(in_memory.begin(), in_memory.end());
  for (const std::string& name : in_memory) key.str("in memory", name);
  key.integer("defines", static_cast<int64_t>(query.defines.size()));
  for (const std::string& define : query.defines) key.str("define", define);
  return key.finish();
}

bool still_holds(const Remembered& remembered) {
  if (remembered.racy) return false;
  return std::all_of(remembered.groups.begin(), remembered.groups.end(), group_holds);
}

// A remembered closure and, when its watches vouch for it, their snapshot.
struct Cached {
  std::shared_ptr<const Remembered> remembered;
  std::shared_ptr<const Snapshot> snapshot;  // null: validate by stat (new, or changed since)
  bool unwatchable = false;                  // a watch failed: the stat path, until it changes
};

bool watch_wanted(IncludeClosureCache::ChangeWatch watch) {
  if (watch == IncludeClosureCache::ChangeWatch::kOff) return false;
  const char* env = std::getenv("TMEMJIT_INCLUDE_WATCH");
  return env == nullptr || std::string_view(env) != "0";
}

}  // namespace

struct IncludeClosureCache::State {
  mutable std::shared_mutex mutex;
  std::unordered_map<Key128, Cached, Key128Hash> closures;
  FileMemo memo;
  Watcher* watcher = nullptr;  // null: the stat path only
  std::atomic<int64_t> hits{0}, watched_hits{0}, scans{0}, files_read{0};

  // Records that `remembered`, still the one cached for `key`, holds as `snapshot` says (null: it
  // cannot be watched).
  void vouch(const Key128& key, const std::shared_ptr<const Remembered>& remembered,
             std::shared_ptr<const Snapshot> snapshot) {
    std::unique_lock lock(mutex);
    auto it = closures.find(key);
    if (it == closures.end() || it->second.remembered != remembered) return;
    it->second.unwatchable = snapshot == nullptr;
    it->second.snapshot = std::move(snapshot);
  }
};

IncludeClosureCache::IncludeClosureCache(ChangeWatch watch) : state_(std::make_unique<State>()) {
  if (watch_wanted(watch)) state_->watcher = Watcher::instance();
}
IncludeClosureCache::~IncludeClosureCache() = default;

Result<std::shared_ptr<const IncludeClosure>> IncludeClosureCache::closure(
    const ClosureQuery& query) {
  const Key128 key = query_key(query);
  Watcher* const watcher = state_->watcher;
  // Every event queued before this query began is applied before any snapshot is trusted.
  if (watcher != nullptr) watcher->drain();
  std::shared_ptr<const Remembered> remembered;
  bool unwatchable = true;
  {
    std::shared_lock lock(state_->mutex);
    auto it = state_->closures.find(key);
    if (it != state_->closures.end()) {
      const Cached& cached = it->second;
      if (cached.snapshot != nullptr && watcher != nullptr && watcher->holds(*cached.snapshot)) {
        state_->hits.fetch_add(1, std::memory_order_relaxed);
        state_->watched_hits.fetch_add(1, std::memory_order_relaxed);
        return cached.remembered->closure;
      }
      remembered = cached.remembered;
      unwatchable = cached.unwatchable;
    }
  }
  // Watches first, then the stats: a change after a stat is an event.
  std::optional<Walk> walk;
  if (watcher != nullptr && remembered != nullptr && !unwatchable) {
    walk.emplace(*watcher);
    for (const auto& [dir, names] : remembered->watched) walk->add(dir, names);
  }
  if (remembered != nullptr && still_holds(*remembered)) {
    state_->hits.fetch_add(1, std::memory_order_relaxed);
    if (walk) state_->vouch(key, remembered, walk->snapshot());
    return remembered->closure;
  }
  Scanner scanner(query, &state_->memo);
  state_->scans.fetch_add(1, std::memory_order_relaxed);
  const Status done = scanner.run();
  state_->files_read.fetch_add(scanner.files_read(), std::memory_order_relaxed);
  if (!done.ok()) return done.error();
  auto fresh = std::make_shared<Remembered>();
  fresh->closure = std::make_shared<const IncludeClosure>(scanner.closure());
  fresh->groups = group_by_directory(scanner.probes());
  fresh->racy = scanner.racy();
  for (const auto& [path, sig] : scanner.probes()) {
    auto [dir, name] = split_watched(path);
    fresh->watched[std::move(dir)].push_back(std::move(name));
  }
  for (const std::string& path : scanner.absent()) {
    auto [dir, name] = split_watched(path);
    fresh->watched[std::move(dir)].push_back(std::move(name));
  }
  Cached cached{fresh, nullptr, false};
  if (walk && !walk->failed()) {
    // The scan read under the old closure's watches: when they cover every path of the new one
    // (an edit that moved no include), a change since they were set is an event, so the new
    // closure is clean as of then, its timestamps racy or not. Else a stat validates it next time.
    const int64_t before = walk->points();
    for (const auto& [dir, names] : fresh->watched) walk->add(dir, names);
    if (walk->points() == before) cached.snapshot = walk->snapshot();
  }
  std::unique_lock lock(state_->mutex);
  if (state_->closures.size() >= kMaxClosures) state_->closures.clear();
  state_->closures[key] = std::move(cached);
  return fresh->closure;
}

IncludeClosureCache::Counters IncludeClosureCache::counters() const {
  Counters out;
  out.hits = state_->hits.load(std::memory_order_relaxed);
  out.watched_hits = state_->watched_hits.load(std::memory_order_relaxed);
  out.scans = state_->scans.load(std::memory_order_relaxed);
  out.files_read = state_->files_read.load(std::memory_order_relaxed);
  return out;
}

void IncludeClosureCache::clear() {
  std::unique_lock lock(state_->mutex);
  state_->closures.clear();
  std::unique_lock memo_lock(state_->memo.mutex);
  state_->memo.files.clear();
}

IncludeClosureCache& include_closure_cache() {
  static IncludeClosureCache cache;
  return cache;
}

}  // namespace tmem
