// The include closure scan (runtime/compile/include_closure.h): quoted and angled includes,
// include_next, cycles, comments and #if 0, computed and missing includes, in-memory headers, a
// FIFO, the option parser, the cache's revalidation by signature, and its change-notification
// fast path: edits seen at once (no sleep), hits with nothing changed answered without a stat
// (counters pinned), links, hard links, chdir and fork.
#include "runtime/compile/include_closure.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "common/files.h"

namespace tmem {
namespace {

namespace fs = std::filesystem;
using Names = std::vector<std::string>;

class IncludeClosureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::path(::testing::TempDir()) / "tmemjit-closure-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr) << pattern;
    root_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }

  // root/relative, its directories made, holding `text`.
  std::string write(const std::string& relative, const std::string& text) {
    const fs::path path = root_ / relative;
    fs::create_directories(path.parent_path());
    tmem::testing::write_file(path, text);
    return path.string();
  }
  std::string path(const std::string& relative) const { return (root_ / relative).string(); }

  // A query for `source` as root/src/kernel.cu (which need not exist) over root/DIR for each dir.
  ClosureQuery query(std::string_view source, const std::vector<std::string>& dirs = {}) const {
    ClosureQuery q;
    q.source = source;
    q.source_path = path("src/kernel.cu");
    for (const std::string& dir : dirs) q.include_dirs.push_back(path(dir));
    return q;
  }

  // The closure's files relative to root.
  std::vector<std::string> relative(const std::vector<std::string>& files) const {
    std::vector<std::string> out;
    const std::string prefix = root_.string() + "/";
    for (const std::string& file : files)
      out.push_back(file.rfind(prefix, 0) == 0 ? file.substr(prefix.size()) : file);
    return out;
  }

  IncludeClosure scan(const ClosureQuery& q) {
    auto closure = scan_include_closure(q);
    EXPECT_TRUE(closure.ok()) << closure.error().full_text();
    return closure.ok() ? *closure : IncludeClosure{};
  }

  // Waits until files written so far are older than the racy window (file_signature.h
  // is_racy: 50 ms on a file system with nanosecond timestamps), so a cache trusts them.
  static void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(120)); }

  // The cache's answer, checked against an uncached scan of the files as they are now.
  std::shared_ptr<const IncludeClosure> fresh(IncludeClosureCache& cache, const ClosureQuery& q) {
    auto cached = cache.closure(q);
    EXPECT_TRUE(cached.ok()) << cached.error().full_text();
    if (!cached.ok()) return nullptr;
    const IncludeClosure now = scan(q);
    EXPECT_EQ((*cached)->digest, now.digest);
    EXPECT_EQ((*cached)->files, now.files);
    EXPECT_EQ((*cached)->missing, now.missing);
    return *cached;
  }

  // Whether a cache made now watches: inotify works here and TMEMJIT_INCLUDE_WATCH is not 0.
  static std::string why_not_watching() {
    const char* env = std::getenv("TMEMJIT_INCLUDE_WATCH");
    if (env != nullptr && std::string(env) == "0") return "TMEMJIT_INCLUDE_WATCH=0";
    const int fd = ::inotify_init1(IN_CLOEXEC);
    if (fd < 0) return std::string("no inotify: ") + std::strerror(errno);
    ::close(fd);
    return {};
  }

  // Queries until the cache answers from its watches (a scan, then a validating stat), and
  // checks that the next query is a watched hit too.
  void watched(IncludeClosureCache& cache, const ClosureQuery& q) {
    for (int i = 0; i < 3 && !::testing::Test::HasFailure(); ++i) {
      const IncludeClosureCache::Counters before = cache.counters();
      fresh(cache, q);
      if (cache.counters().watched_hits == before.watched_hits + 1) break;
    }
    const IncludeClosureCache::Counters before = cache.counters();
    fresh(cache, q);
    ASSERT_EQ(cache.counters().watched_hits, before.watched_hits + 1) << "no watched hit";
    ASSERT_EQ(cache.counters().scans, before.scans);
  }

  // Replaces `relative` as an editor does: a temporary file renamed over it.
  void write_and_rename(const std::string& relative, const std::string& text) {
    const std::string temporary = write(relative + ".tmp~", text);
    ASSERT_EQ(::rename(temporary.c_str(), path(relative).c_str()), 0);
  }

  fs::path root_;
};

TEST_F(IncludeClosureTest, FollowsNestedQuotedAndAngledIncludes) {
  write("src/local.h", "#include \"sub/b.h\"\n");
  write("src/sub/b.h", "#include \"c.h\"\n");  // b.h's own directory: src/sub
  write("src/sub/c.h", "int c;\n");
  write("inc/lib/a.h", "#include <lib/d.h>\n#include \"e.h\"\n");
  write("inc/lib/d.h", "int d;\n");
  write("inc/lib/e.h", "int e;\n");
  write("src/only_local.h", "int x;\n");
  const IncludeClosure closure =
      scan(query("#include \"local.h\"\n#include <lib/a.h>\n#include <only_local.h>\n", {"inc"}));
  EXPECT_EQ(relative(closure.files), (Names{"inc/lib/a.h", "inc/lib/d.h", "inc/lib/e.h",
                                            "src/local.h", "src/sub/b.h", "src/sub/c.h"}));
  // <x> never searches the includer's directory.
  EXPECT_EQ(closure.missing, (Names{"only_local.h"}));
  EXPECT_EQ(closure.unresolved, Names{});
}

TEST_F(IncludeClosureTest, SearchesTheIncluderThenTheIncludeDirsInOrder) {
  write("src/own.h", "int own;\n");
  write("one/own.h", "int shadowed;\n");
  write("one/x.h", "int first;\n");
  write("two/x.h", "int second;\n");
  write("two/y.h", "int y;\n");
  fs::create_directories(root_ / "one" / "y.h");  // a directory named like the header: skipped
  const IncludeClosure closure =
      scan(query("#include \"own.h\"\n#include \"x.h\"\n#include <y.h>\n", {"one", "two"}));
  EXPECT_EQ(relative(closure.files), (Names{"one/x.h", "src/own.h", "two/y.h"}));
}

TEST_F(IncludeClosureTest, IncludeNextResumesAfterTheIncludersDirectory) {
  write("one/wrap.h", "#include_next <wrap.h>\n");
  write("two/wrap.h", "#include_next \"wrap.h\"\n");
  write("three/wrap.h", "int real;\n");
  write("four/wrap.h", "int never;\n");
  const IncludeClosure closure =
      scan(query("#include <wrap.h>\n", {"one", "two", "three", "four"}));
  EXPECT_EQ(relative(closure.files), (Names{"one/wrap.h", "three/wrap.h", "two/wrap.h"}));
  EXPECT_EQ(closure.missing, Names{});
}

TEST_F(IncludeClosureTest, CyclesEnd) {
  write("inc/a.h", "#pragma once\n#include \"b.h\"\n#include \"a.h\"\n");
  write("inc/b.h", "#include <a.h>\n#include \"../inc/b.h\"\n");
  const IncludeClosure closure = scan(query("#include <a.h>\n", {"inc"}));
  EXPECT_EQ(relative(closure.files), (Names{"inc/a.h", "inc/b.h"}));
  EXPECT_EQ(closure.unresolved, Names{});
}

TEST_F(IncludeClosureTest, ReadsDirectivesAsThePreprocessorDoes) {
  const char* headers[] = {"if0.h",   "spaced.h",    "after_comment.h", "spliced.h", "tail.h",
                           "probe.h", "after_sep.h", "after_raw.h",     "no1.h",     "no2.h",
                           "no3.h",   "no4.h",       "no5.h",           "no6.h"};
  for (const char* name : headers) write(std::string("inc/") + name, "");
  const std::string source =
      "// #include \"no1.h\"\n"
      "/* a comment\n"
      "#include \"no2.h\"\n"
      "*/\n"
      "#if 0\n"
      "#include \"if0.h\"\n"  // followed: an over-approximation is safe
      "#endif\n"
      "  #  include   \"spaced.h\"  // trailing\n"
      "/* c */ # include <after_comment.h>\n"
      "#inc\\\n"
      "lude \"spliced.h\"\n"
      "const char* s = \"#include \\\"no3.h\\\"\"; /* spans\n"
      "#include \"no5.h\" */ int t;\n"
      "const char* raw = R\"x(\n"
      "#include \"no4.h\"\n"
      ")x\";\n"
      "#include \"after_raw.h\"\n"
      "int n = 1'000'000; char q = '\"';\n"
      "#include \"after_sep.h\"\n"
      "#if __has_include(<probe.h>) && defined(__has_include)\n"
      "#endif\n"
      "int x; #include \"no6.h\"\n"
      "#include \"tail.h\"";  // no final newline
  const IncludeClosure closure = scan(query(source, {"inc"}));
  EXPECT_EQ(relative(closure.files),
            (Names{"inc/after_comment.h", "inc/after_raw.h", "inc/after_sep.h", "inc/if0.h",
                   "inc/probe.h", "inc/spaced.h", "inc/spliced.h", "inc/tail.h"}));
  EXPECT_EQ(closure.missing, Names{});
  EXPECT_EQ(closure.unresolved, Names{});
}

// The lexing edges the scan shares with every other scanner of C++ text (issue 42 item 7): an
// include the scan must not see is missing ("no*.h") only if it was wrongly followed.
TEST_F(IncludeClosureTest, LexesCommentsLiteralsAndSplicesAtTheirEdges) {
  for (const char* name : {"yes1.h", "yes2.h", "yes3.h", "yes4.h", "yes5.h", "yes6.h"})
    write(std::string("inc/") + name, "");
  const std::string source =
      "const char* open = \"unterminated\n"  // a string ends with its line
      "#include \"yes1.h\"\n"
      "// a comment spliced onto the next line \\\n"
      "#include \"no1.h\"\n"
      "const char* raw = u8R\"d(\n"  // a raw string holding */ and " and a directive
      "*/ \" /*\n"
      "#include \"no2.h\"\n"
      ")d\";\n"
      "#include \"yes2.h\"\n"
      "const char* also = LR\"(\n#include \"no3.h\"\n)\";\n"
      "#include \"yes3.h\"\n"
      "const char* not_raw = R\"seventeen_chars_x(\n"  // no raw string: an ordinary one
      "#include \"yes4.h\"\n"
      "char c = '\\''; char d = '\\\\'; int e = 0x1p-3 + 1'0;\n"
      "#include \"yes5.h\"\n"
      "// __has_include(\"no4.h\")\n"
      "#if 0 /* __has_include(\"no5.h\") */\n#endif\n"
      "#define Q \"yes6.h\" // \"no6.h\"\n"
      "#include Q\n"
      "/* unterminated\n"
      "#include \"no7.h\"\n";
  const IncludeClosure closure = scan(query(source, {"inc"}));
  EXPECT_EQ(relative(closure.files), (Names{"inc/yes1.h", "inc/yes2.h", "inc/yes3.h", "inc/yes4.h",
                                            "inc/yes5.h", "inc/yes6.h"}));
  EXPECT_EQ(closure.missing, Names{});
  EXPECT_EQ(closure.unresolved, Names{});
}

TEST_F(IncludeClosureTest, NamesTheLineAnUnresolvableIncludeBeginsOn) {
  const std::string source =
      "/* two\n"
      "lines */ #include FIRST\n"
      "#inc\\\n"
      "lude \\\n"
      "  SECOND // after\n"
      "const char* s = \"a\\\n"
      "b\"; #include NOT_A_DIRECTIVE\n"
      "  #  include_next THIRD(x, \"y\") /* cut */\n"
      "#define HEADER \"with space.h\"\n"
      "#include HEADER\n";
  const IncludeClosure closure = scan(query(source));
  EXPECT_EQ(closure.missing, (Names{"with space.h"}));
  EXPECT_EQ(relative(closure.unresolved),
            (Names{"src/kernel.cu:2: #include FIRST", "src/kernel.cu:3: #include SECOND",
                   "src/kernel.cu:8: #include_next THIRD(x, \"y\")"}));
}

// Reading a __has_include operand that is no header name reads its tokens once: the lines of a
// comment in it count once (they were counted twice, and every later line was one off).
TEST_F(IncludeClosureTest, AHasIncludeOfAMacroKeepsTheLineCount) {
  const IncludeClosure closure =
      scan(query("#if __has_include(/*\n*/ MACRO)\n#endif\n#include NEXT\n"));
  EXPECT_EQ(relative(closure.unresolved), (Names{"src/kernel.cu:4: #include NEXT"}));
}

// A literal is one token to the end of its line, in a directive too: a comment marker in it cuts
// nothing, and a raw string after #define is one, whatever lines it spans.
TEST_F(IncludeClosureTest, ADirectivesLiteralsAreTheLexers) {
  write("inc/yes.h", "");
  const IncludeClosure closure =
      scan(query("#include IN_STRING \"a // b\"\n"
                 "#define RAW R\"(\n#include \"no.h\"\n)\"\n"
                 "#include \"yes.h\"\n",
                 {"inc"}));
  EXPECT_EQ(relative(closure.files), (Names{"inc/yes.h"}));
  EXPECT_EQ(relative(closure.unresolved),
            (Names{"src/kernel.cu:1: #include IN_STRING \"a // b\""}));
}

TEST_F(IncludeClosureTest, FollowsComputedIncludesThroughTheClosuresMacros) {
  // CUTLASS's CUDA_STD_HEADER: two definitions under #if, both followed.
  write("inc/config.h",
        "#if NEW_LAYOUT\n"
        "#  define STD_HEADER(h) <cccl/std/h>\n"
        "#else\n"
        "#  define STD_HEADER(h) <std/h>\n"
        "#endif\n"
        "#define STR(x) #x\n"
        "#define JOIN(a, b) a ## b\n"
        "#define LOCAL \"local.h\"\n"
        "#define ALIAS LOCAL\n"
        "#define VARIADIC(...) <__VA_ARGS__>\n");
  write("inc/cccl/std/tuple", "");
  write("inc/std/tuple", "");
  // <...> written out is a header name as it stands: no macro in it is expanded.
  write("inc/user.h",
        "#include STR(stringized.h)\n#include JOIN(<pas, ted.h>)\n#include <JOIN(no, t).h>\n");
  write("inc/stringized.h", "");
  write("inc/pasted.h", "");
  write("src/local.h", "");  // "local.h" from the source: the source's own directory
  write("inc/variadic.h", "");
  const std::string source =
      "#include <config.h>\n"
      "#include STD_HEADER(tuple)\n"
      "#include ALIAS\n"
      "#include VARIADIC(variadic.h)\n"
      "#include <user.h>\n";
  const IncludeClosure closure = scan(query(source, {"inc"}));
  EXPECT_EQ(relative(closure.files),
            (Names{"inc/cccl/std/tuple", "inc/config.h", "inc/pasted.h", "inc/std/tuple",
                   "inc/stringized.h", "inc/user.h", "inc/variadic.h", "src/local.h"}));
  EXPECT_EQ(closure.missing, (Names{"JOIN(no, t).h"}));
  EXPECT_EQ(closure.unresolved, Names{});
}

TEST_F(IncludeClosureTest, RecordsAnUnresolvableComputedIncludeWithItsLine) {
  // FROM_COMMAND_LINE would come from a -D option: no file defines it.
  write("inc/x.h", "#define SELF SELF\n#include SELF /* why */\n");
  const std::string source =
      "#define H \\\n"
      "  FROM_COMMAND_LINE\n"
      "#include <x.h>\n"
      "#include_next H\n";
  const IncludeClosure closure = scan(query(source, {"inc"}));
  EXPECT_EQ(relative(closure.files), (Names{"inc/x.h"}));
  EXPECT_EQ(relative(closure.unresolved),
            (Names{"inc/x.h:2: #include SELF", "src/kernel.cu:4: #include_next H"}));
}

TEST_F(IncludeClosureTest, RecordsMissingHeadersAndTheirArrivalChangesTheDigest) {
  ClosureQuery q = query("#include <cuda_runtime.h>\n#include \"later.h\"\n", {"inc"});
  fs::create_directories(root_ / "inc");
  const IncludeClosure before = scan(q);
  EXPECT_EQ(before.files, Names{});
  EXPECT_EQ(before.missing, (Names{"cuda_runtime.h", "later.h"}));
  write("inc/later.h", "");
  const IncludeClosure after = scan(q);
  EXPECT_EQ(relative(after.files), (Names{"inc/later.h"}));
  EXPECT_EQ(after.missing, (Names{"cuda_runtime.h"}));
  EXPECT_NE(before.digest, after.digest);
  EXPECT_EQ(scan(q).digest, after.digest);  // deterministic
}

TEST_F(IncludeClosureTest, SkipsInMemoryHeaders) {
  write("inc/tmemjit/transfers.cuh", "#include \"stale.h\"\n");
  ClosureQuery q =
      query("#include <tmemjit/transfers.cuh>\n#include \"tmemjit/transfers.cuh\"\n", {"inc"});
  EXPECT_EQ(relative(scan(q).files), (Names{"inc/tmemjit/transfers.cuh"}));
  q.in_memory = {"tmemjit/transfers.cuh"};
  const IncludeClosure closure = scan(q);
  EXPECT_EQ(closure.files, Names{});
  EXPECT_EQ(closure.missing, Names{});
}

TEST_F(IncludeClosureTest, PreIncludesComeFirst) {
  write("inc/pre.h", "#include \"pre_dep.h\"\n");
  write("inc/pre_dep.h", "");
  ClosureQuery q = query("", {"inc"});
  q.pre_includes = {"pre.h", path("inc/pre_dep.h")};
  EXPECT_EQ(relative(scan(q).files), (Names{"inc/pre.h", "inc/pre_dep.h"}));
}

TEST_F(IncludeClosureTest, AFifoOrADeviceIsMissingNotRead) {
  fs::create_directories(root_ / "inc");
  ASSERT_EQ(::mkfifo(path("inc/pipe.h").c_str(), 0600), 0);
  // A FIFO without a writer blocks open(O_RDONLY) forever; the scan must not open it.
  const IncludeClosure closure =
      scan(query("#include \"pipe.h\"\n#include \"/dev/null\"\n", {"inc"}));
  EXPECT_EQ(closure.files, Names{});
  EXPECT_EQ(closure.missing, (Names{"/dev/null (not a regular file: /dev/null)",
                                    "pipe.h (not a regular file: " + path("inc/pipe.h") + ")"}));
}

TEST_F(IncludeClosureTest, RefusesAHugeHeaderNamingIt) {
  const std::string huge = write("inc/huge.h", "");
  ASSERT_EQ(::truncate(huge.c_str(), (int64_t{64} << 20) + 1), 0);  // sparse: no disk used
  auto closure = scan_include_closure(query("#include \"huge.h\"\n", {"inc"}));
  ASSERT_FALSE(closure.ok());
  EXPECT_EQ(closure.error().code(), ErrorCode::kLimit);
  EXPECT_NE(closure.error().message().find(huge), std::string::npos) << closure.error().message();
}

TEST_F(IncludeClosureTest, TheCacheRevalidatesBySignature) {
  write("inc/top.h", "#include \"mid.h\"\n");
  write("inc/mid.h", "#include <leaf.h>\n");
  const std::string leaf = write("inc/leaf.h", "int leaf = 1;\n");
  settle();
  // The stat path: what every query does with TMEMJIT_INCLUDE_WATCH=0.
  IncludeClosureCache cache(IncludeClosureCache::ChangeWatch::kOff);
  const ClosureQuery q = query("#include <top.h>\n", {"inc"});
  auto first = cache.closure(q);
  ASSERT_TRUE(first.ok()) << first.error().full_text();
  EXPECT_EQ(relative((*first)->files), (Names{"inc/leaf.h", "inc/mid.h", "inc/top.h"}));
  EXPECT_EQ(cache.counters().scans, 1);
  EXPECT_EQ(cache.counters().files_read, 3);

  auto second = cache.closure(q);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, *first);  // the same remembered closure, nothing copied
  EXPECT_EQ(cache.counters().hits, 1);
  EXPECT_EQ(cache.counters().scans, 1);

  // Touched, content unchanged: the signature differs, so it scans again (reading only the
  // touched file), and the digest stays.
  const timespec past[2] = {{1000000000, 0}, {1000000000, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, leaf.c_str(), past, 0), 0);
  settle();
  auto touched = cache.closure(q);
  ASSERT_TRUE(touched.ok());
  EXPECT_EQ((*touched)->digest, (*first)->digest);
  EXPECT_EQ(cache.counters().scans, 2);
  EXPECT_EQ(cache.counters().files_read, 4);

  // Edited, same size, at once (within the racy window): a new digest now and on every query
  // until the file settles, then hits again.
  tmem::testing::write_file(leaf, "int leaf = 2;\n");
  auto edited = cache.closure(q);
  ASSERT_TRUE(edited.ok());
  EXPECT_NE((*edited)->digest, (*first)->digest);
  tmem::testing::write_file(leaf, "int leaf = 3;\n");
  auto again = cache.closure(q);
  ASSERT_TRUE(again.ok());
  EXPECT_NE((*again)->digest, (*edited)->digest);
  settle();
  const IncludeClosureCache::Counters before = cache.counters();
  ASSERT_TRUE(cache.closure(q).ok());  // scans once more: the last scan saw a racy file
  auto settled = cache.closure(q);
  ASSERT_TRUE(settled.ok());
  EXPECT_EQ((*settled)->digest, (*again)->digest);
  EXPECT_EQ(cache.counters().hits, before.hits + 1);
  EXPECT_EQ(cache.counters().scans, before.scans + 1);
  EXPECT_EQ(cache.counters().watched_hits, 0);
}

TEST_F(IncludeClosureTest, AWatchedHitStatsNothingWhenNothingChanged) {
  if (const std::string why = why_not_watching(); !why.empty()) GTEST_SKIP() << why;
  write("inc/top.h", "#include \"mid.h\"\n#include <absent.h>\n");
  write("inc/mid.h", "#include <leaf.h>\n");
  write("inc/leaf.h", "int leaf = 1;\n");
  settle();
  IncludeClosureCache cache;
  const ClosureQuery q = query("#include <top.h>\n", {"inc"});
  auto first = fresh(cache, q);   // scans, then watches from the next query on
  auto second = fresh(cache, q);  // sets the watches, then validates by stat
  EXPECT_EQ(second, first);
  EXPECT_EQ(cache.counters().scans, 1);
  EXPECT_EQ(cache.counters().hits, 1);
  EXPECT_EQ(cache.counters().watched_hits, 0);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(fresh(cache, q), first);
  EXPECT_EQ(cache.counters().scans, 1);
  EXPECT_EQ(cache.counters().hits, 11);
  EXPECT_EQ(cache.counters().watched_hits, 10);
  // A file no path of the closure names, written in one of its directories: still no stat.
  write("inc/unrelated.txt", "x");
  write("src/notes.txt", "x");
  EXPECT_EQ(fresh(cache, q), first);
  EXPECT_EQ(cache.counters().watched_hits, 11);
}

TEST_F(IncludeClosureTest, AWatchedCacheSeesEachSameSizeEditAtOnce) {
  if (const std::string why = why_not_watching(); !why.empty()) GTEST_SKIP() << why;
  write("inc/top.h", "#include \"mid.h\"\n");
  write("inc/mid.h", "#include <leaf.h>\n");
  const std::string leaf = write("inc/leaf.h", "int leaf = 0;\n");
  IncludeClosureCache cache;
  const ClosureQuery q = query("#include <top.h>\n", {"inc"});
  watched(cache, q);
  // Edits in the same clock tick keep size and timestamps: only the event tells them apart.
  Key128 last = fresh(cache, q)->digest;
  for (int i = 1; i <= 20; ++i) {
    tmem::testing::write_file(leaf, "int leaf = " + std::to_string(i % 10) + ";\n");
    const int64_t scans = cache.counters().scans;
    const Key128 now = fresh(cache, q)->digest;
    EXPECT_NE(now, last) << "edit " << i;
    EXPECT_EQ(cache.counters().scans, scans + 1);
    last = now;
  }
  // The scan after an edit ran under watches that cover the closure: the next hit stats nothing,
  // however recent the edit.
  const IncludeClosureCache::Counters before = cache.counters();
  EXPECT_EQ(fresh(cache, q)->digest, last);
  EXPECT_EQ(cache.counters().watched_hits, before.watched_hits + 1);
}

TEST_F(IncludeClosureTest, AWatchedCacheSeesAHeaderAppearEarlierInTheSearch) {
  if (const std::string why = why_not_watching(); !why.empty()) GTEST_SKIP() << why;
  write("two/x.h", "int second;\n");
  write("one/keep.h", "");
  fs::create_directories(root_ / "src");
  IncludeClosureCache cache;
  // "zero" does not exist yet: its creation is seen in root.
  const ClosureQuery q = query("#include <x.h>\n#include \"y.h\"\n", {"zero", "one", "two"});
  watched(cache, q);
  write("one/x.h", "int first;\n");
  EXPECT_EQ(relative(fresh(cache, q)->files), (Names{"one/x.h"}));
  write("src/y.h", "");
  EXPECT_EQ(relative(fresh(cache, q)->files), (Names{"one/x.h", "src/y.h"}));
  watched(cache, q);
  write("zero/x.h", "int zeroth;\n");
  EXPECT_EQ(relative(fresh(cache, q)->files), (Names{"src/y.h", "zero/x.h"}));
  watched(cache, q);
  fs::remove(root_ / "zero" / "x.h");
  EXPECT_EQ(relative(fresh(cache, q)->files), (Names{"one/x.h", "src/y.h"}));
}

TEST_F(IncludeClosureTest, AScanReachingAnUnwatchedPathIsValidatedByStatOnce) {
  if (const std::string why = why_not_watching(); !why.empty()) GTEST_SKIP() << why;
  write("inc/top.h", "int top;\n");
  write("other/new.h", "int fresh;\n");
  settle();
  IncludeClosureCache cache;
  const ClosureQuery q = query("#include <top.h>\n", {"inc"});
  watched(cache, q);
  // The rescan reads other/new.h before any watch covers it: an edit between that read and the
  // watch would be lost, so the next query checks by stat before trusting the watches.
  write_and_rename("inc/top.h", "#include \"../other/new.h\"\n");
  settle();
  EXPECT_EQ(relative(fresh(cache, q)->files), (Names{"inc/../other/new.h", "inc/top.h"}));
  const IncludeClosureCache::Counters before = cache.counters();
  fresh(cache, q);
  EXPECT_EQ(cache.counters().hits, before.hits + 1);
  EXPECT_EQ(cache.counters().watched_hits, before.watched_hits);  // stat-checked
  fresh(cache, q);
  EXPECT_EQ(cache.counters().watched_hits, before.watched_hits + 1);
  // An edit under watches that covered the whole closure: the rescan is trusted at once.
  write_and_rename("other/new.h", "int newer;\n");
  fresh(cache, q);
  const IncludeClosureCache::Counters after_edit = cache.counters();
  fresh(cache, q);
  EXPECT_EQ(cache.counters().watched_hits, after_edit.watched_hits + 1);
}

TEST_F(IncludeClosureTest, AWatchedCacheSeesARenameOverAFile) {
  if (const std::string why = why_not_watching(); !why.empty()) GTEST_SKIP() << why;
  write("inc/top.h", "#include \"leaf.h\"\n");
  write("inc/leaf.h", "int leaf = 1;\n");
  IncludeClosureCache cache;
  const ClosureQuery q = query("#include <top.h>\n", {"inc"});
  watched(cache, q);
  const Key128 before = fresh(cache, q)->digest;
  write_and_rename("inc/leaf.h", "int leaf = 2;\n");
  EXPECT_NE(fresh(cache, q)->digest, before);
  watched(cache, q);
  write_and_rename("inc/top.h", "#include \"other.h\"\n");  // a new include
  EXPECT_EQ(fresh(cache, q)->missing, (Names{"other.h"}));
  watched(cache, q);
  write_and_rename("inc/other.h", "");
  EXPECT_EQ(relative(fresh(cache, q)->files), (Names{"inc/other.h", "inc/top.h"}));
}

TEST_F(IncludeClosureTest, AWatchedCacheSeesADirectoryDeletedAndMadeAgain) {
  if (const std::string why = why_not_watching(); !why.empty()) GTEST_SKIP() << why;
  write("inc/top.h", "#include \"sub/deep/leaf.h\"\n");
  write("inc/sub/deep/leaf.h", "int leaf = 1;\n");
  IncludeClosureCache cache;
  const ClosureQuery q = query("#include <top.h>\n", {"inc"});
  watched(cache, q);
  fs::remove_all(root_ / "inc" / "sub");
  EXPECT_EQ(fresh(cache, q)->missing, (Names{"sub/deep/leaf.h"}));
  watched(cache, q);
  write("inc/sub/deep/leaf.h", "int leaf = 2;\n");
  EXPECT_EQ(relative(fresh(cache, q)->files), (Names{"inc/sub/deep/leaf.h", "inc/top.h"}));
  watched(cache, q);
  // The directory renamed away and another put in its place.
  write("inc/sub2/deep/leaf.h", "int leaf = 3;\n");
  fs::rename(root_ / "inc" / "sub", root_ / "inc" / "old");
  fs::rename(root_ / "inc" / "sub2", root_ / "inc" / "sub");
  fresh(cache, q);
  watched(cache, q);
  tmem::testing::write_file(path("inc/sub/deep/leaf.h"), "int leaf = 4;\n");
  fresh(cache, q);
}

TEST_F(IncludeClosureTest, AWatchedCacheSeesALinkSwappedAboveTheFiles) {
  if (const std::string why = why_not_watching(); !why.empty()) GTEST_SKIP() << why;
  // cur -> alt -> v1, as /usr/local/cuda -> /etc/alternatives/cuda -> /usr/local/cuda-12.8.
  write("v1/inc/x.h", "int version = 1;\n");
  write("v2/inc/x.h", "int version = 2;\n");
  ASSERT_EQ(::symlink("v1", path("alt").c_str()), 0);
  ASSERT_EQ(::symlink(path("alt").c_str(), path("cur").c_str()), 0);
  IncludeClosureCache cache;
  const ClosureQuery q = query("#include <x.h>\n", {"cur/inc"});
  watched(cache, q);
  const Key128 before = fresh(cache, q)->digest;
  ASSERT_EQ(::symlink("v2", path("alt.new").c_str()), 0);  // as `ln -sfn v2 alt` does
  ASSERT_EQ(::rename(path("alt.new").c_str(), path("alt").c_str()), 0);
  EXPECT_NE(fresh(cache, q)->digest, before);
  watched(cache, q);
  tmem::testing::write_file(path("v2/inc/x.h"), "int version = 3;\n");  // through the target
  fresh(cache, q);
  watched(cache, q);
  tmem::testing::write_file(path("v1/inc/x.h"), "int version = 4;\n");  // no longer read
  const IncludeClosureCache::Counters before_edit = cache.counters();
  fresh(cache, q);
  EXPECT_EQ(cache.counters().watched_hits, before_edit.watched_hits + 1);
}

TEST_F(IncludeClosureTest, AWatchedCacheSeesAnEditThroughAnotherHardLink) {
  if (const std::string why = why_not_watching(); !why.empty()) GTEST_SKIP() << why;
  write("inc/leaf.h", "int leaf = 1;\n");
  fs::create_directories(root_ / "elsewhere");
  ASSERT_EQ(::link(path("inc/leaf.h").c_str(), path("elsewhere/alias.h").c_str()), 0);
  IncludeClosureCache cache;
  const ClosureQuery q = query("#include <leaf.h>\n", {"inc"});
  watched(cache, q);
  const Key128 before = fresh(cache, q)->digest;
  tmem::testing::write_file(path("elsewhere/alias.h"), "int leaf = 2;\n");  // in place
  EXPECT_NE(fresh(cache, q)->digest, before);
}

TEST_F(IncludeClosureTest, AWatchedCacheSeesTheCurrentDirectoryChange) {
  if (const std::string why = why_not_watching(); !why.empty()) GTEST_SKIP() << why;
  write("a/inc/x.h", "int a;\n");
  write("b/inc/x.h", "int b;\n");
  std::string saved(4096, '\0');
  ASSERT_NE(::getcwd(saved.data(), saved.size()), nullptr);
  saved.resize(std::strlen(saved.c_str()));
  ClosureQuery q;
  q.source = "#include <x.h>\n#include \"local.h\"\n";
  q.source_path = "kernel.cu";
  q.include_dirs = {"inc"};
  IncludeClosureCache cache;
  ASSERT_EQ(::chdir(path("a").c_str()), 0);
  watched(cache, q);
  const Key128 in_a = fresh(cache, q)->digest;
  ASSERT_EQ(::chdir(path("b").c_str()), 0);
  EXPECT_NE(fresh(cache, q)->digest, in_a);
  watched(cache, q);
  write("b/local.h", "");  // beside the source, in the current directory
  EXPECT_EQ(fresh(cache, q)->files, (Names{"inc/x.h", "local.h"}));
  ASSERT_EQ(::chdir(saved.c_str()), 0);
}

TEST_F(IncludeClosureTest, AForkedChildWatchesOnItsOwn) {
  if (const std::string why = why_not_watching(); !why.empty()) GTEST_SKIP() << why;
  write("inc/leaf.h", "int leaf = 1;\n");
  IncludeClosureCache cache;
  const ClosureQuery q = query("#include <leaf.h>\n", {"inc"});
  watched(cache, q);
  const Key128 before = fresh(cache, q)->digest;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child edits and queries: it must see its edit, and must not take the parent's event.
    tmem::testing::write_file(path("inc/leaf.h"), "int leaf = 2;\n");
    auto seen = cache.closure(q);
    const bool fresh_in_child =
        seen.ok() && (*seen)->digest == scan(q).digest && (*seen)->digest != before;
    ::_exit(fresh_in_child ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child saw a stale closure";
  EXPECT_NE(fresh(cache, q)->digest, before);
  watched(cache, q);
}

TEST_F(IncludeClosureTest, AWatchedCacheSeesEditsWhileOtherThreadsQuery) {
  if (const std::string why = why_not_watching(); !why.empty()) GTEST_SKIP() << why;
  write("inc/top.h", "#include \"leaf.h\"\n");
  const std::string leaf = write("inc/leaf.h", "int leaf = 0;\n");
  IncludeClosureCache cache;
  const ClosureQuery q = query("#include <top.h>\n", {"inc"});
  std::atomic<bool> done{false};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t)
    readers.emplace_back([&] {
      while (!done.load()) ASSERT_TRUE(cache.closure(q).ok());
    });
  for (int i = 1; i <= 50; ++i) {
    tmem::testing::write_file(leaf, "int leaf = " + std::to_string(i % 10) + ";\n");
    fresh(cache, q);  // this thread's query starts after the edit: it sees it
  }
  done = true;
  for (std::thread& reader : readers) reader.join();
  EXPECT_GT(cache.counters().watched_hits, 0);
}

TEST_F(IncludeClosureTest, WithWatchingOffEveryQueryStatsAndSeesEdits) {
  write("inc/top.h", "#include \"leaf.h\"\n");
  const std::string leaf = write("inc/leaf.h", "int leaf = 0;\n");
  settle();
  const char* saved = std::getenv("TMEMJIT_INCLUDE_WATCH");
  const std::string saved_value = saved != nullptr ? saved : "";
  ASSERT_EQ(::setenv("TMEMJIT_INCLUDE_WATCH", "0", 1), 0);
  IncludeClosureCache cache;  // reads the variable now
  if (saved != nullptr) {
    ::setenv("TMEMJIT_INCLUDE_WATCH", saved_value.c_str(), 1);
  } else {
    ::unsetenv("TMEMJIT_INCLUDE_WATCH");
  }
  const ClosureQuery q = query("#include <top.h>\n", {"inc"});
  for (int i = 0; i < 5; ++i) fresh(cache, q);
  EXPECT_EQ(cache.counters().scans, 1);
  EXPECT_EQ(cache.counters().hits, 4);
  EXPECT_EQ(cache.counters().watched_hits, 0);
  Key128 last = fresh(cache, q)->digest;
  for (int i = 1; i <= 5; ++i) {
    tmem::testing::write_file(leaf, "int leaf = " + std::to_string(i) + ";\n");
    const Key128 now = fresh(cache, q)->digest;
    EXPECT_NE(now, last);
    last = now;
  }
  write_and_rename("inc/leaf.h", "int leaf = 9;\n");
  EXPECT_NE(fresh(cache, q)->digest, last);
  EXPECT_EQ(cache.counters().watched_hits, 0);
}

TEST_F(IncludeClosureTest, TheCacheSeesAHeaderAppearOrGo) {
  write("two/x.h", "int second;\n");
  write("one/keep.h", "");
  fs::create_directories(root_ / "src");
  settle();
  IncludeClosureCache cache;
  const ClosureQuery q = query("#include <x.h>\n#include \"y.h\"\n", {"one", "two"});
  auto before = cache.closure(q);
  ASSERT_TRUE(before.ok()) << before.error().full_text();
  EXPECT_EQ(relative((*before)->files), (Names{"two/x.h"}));
  ASSERT_TRUE(cache.closure(q).ok());
  EXPECT_EQ(cache.counters().hits, 1);

  // A header earlier in the search shadows x.h; y.h appears beside the source.
  write("one/x.h", "int first;\n");
  auto shadowed = cache.closure(q);
  ASSERT_TRUE(shadowed.ok());
  EXPECT_EQ(relative((*shadowed)->files), (Names{"one/x.h"}));
  EXPECT_NE((*shadowed)->digest, (*before)->digest);
  write("src/y.h", "");
  auto appeared = cache.closure(q);
  ASSERT_TRUE(appeared.ok());
  EXPECT_EQ(relative((*appeared)->files), (Names{"one/x.h", "src/y.h"}));
  EXPECT_EQ((*appeared)->missing, Names{});

  fs::remove(root_ / "one" / "x.h");
  auto gone = cache.closure(q);
  ASSERT_TRUE(gone.ok());
  EXPECT_EQ(relative((*gone)->files), (Names{"src/y.h", "two/x.h"}));

  fs::remove_all(root_ / "src");  // a whole directory of the closure
  auto dir_gone = cache.closure(q);
  ASSERT_TRUE(dir_gone.ok());
  EXPECT_EQ(relative((*dir_gone)->files), (Names{"two/x.h"}));
  EXPECT_EQ((*dir_gone)->missing, (Names{"y.h"}));
}

TEST_F(IncludeClosureTest, TheProcessCacheIsOne) {
  EXPECT_EQ(&include_closure_cache(), &include_closure_cache());
}

TEST(IncludeSearchOf, ReadsEveryFormInNvrtcsOrder) {
  const std::vector<std::string> options = {"-Ia",
                                            "--std=c++17",
                                            "-I",
                                            "b",
                                            "--include-path=c",
                                            "-isystem",
                                            "s1",
                                            "--include-path",
                                            "d",
                                            "--system-include=s2",
                                            "-include",
                                            "p1.h",
                                            "--pre-include=p2.h",
                                            "-I=e",
                                            "-DINCLUDE=1",
                                            "--system-include",
                                            "s3",
                                            "--pre-include",
                                            "p3.h",
                                            "-isystems4"};
  auto search = include_search_of(options);
  ASSERT_TRUE(search.ok()) << search.error().full_text();
  EXPECT_EQ(search->include_dirs, (Names{"a", "b", "c", "d", "e", "s1", "s2", "s3", "s4"}));
  EXPECT_EQ(search->pre_includes, (Names{"p1.h", "p2.h", "p3.h"}));
}

TEST(IncludeSearchOf, RefusesAMissingValue) {
  for (const std::vector<std::string>& options :
       {std::vector<std::string>{"-I"}, {"-include"}, {"--include-path="}, {"-DX", "-isystem"}}) {
    auto search = include_search_of(options);
    ASSERT_FALSE(search.ok());
    EXPECT_EQ(search.error().code(), ErrorCode::kUsage);
    EXPECT_NE(search.error().message().find(options.back()), std::string::npos)
        << search.error().message();
  }
}

}  // namespace
}  // namespace tmem
