// Precompiled headers degrade, never fail (issue 39 item 4; docs/reliability.md, "Precompiled
// headers degrade, never fail"): a damaged or replaced PCH, a $TMPDIR too long or too small, a heap
// that cannot be mapped, settings that do not parse and folders of other PID namespaces.
#include "runtime/compile/precompiled_headers.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/cache_test_util.h"
#include "common/cli_util.h"
#include "common/files.h"
#include "common/sanitizer_util.h"
#include "common/scoped_env.h"
#include "tmem/cache.h"
#include "tmem/specialize.h"
#include "tmem/warning.h"

namespace tmem {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::ScopedEnv;
using testing::TempDir;

const std::string kExample = std::string(TMEMJIT_SOURCE_DIR) + "/examples/epilogue";

// The epilogue with a header before its transfers, under a program name of its own: NVRTC names
// the PCH file after it (TAG_0.pch), so a test finds its own.
KernelSource source_with_a_header(const std::string& tag) {
  KernelSource source;
  source.text = "#include <cuda_bf16.h>\n" + read_file(kExample + "/epilogue.cu");
  source.entry = "epilogue";
  source.path = tag + ".cu";
  return source;
}

std::vector<NamedTransfer> epilogue_transfers() {
  auto named = [](const std::string& layout, const char* name) {
    DeviceFunctionOptions options;
    options.name = name;
    options.wait = false;
    options.column_argument = true;
    return NamedTransfer{
        TransferSpec::from_json(read_file(kExample + "/layouts/" + layout + ".json")).value(),
        options};
  };
  return {named("d_x32_ld", "acc_load"), named("d_x32_st", "acc_store")};
}

// Every warning the library gives while it lives.
struct Warnings {
  Warnings() {
    saved = set_warning_handler([this](std::string_view m) { seen.emplace_back(m); });
  }
  ~Warnings() { set_warning_handler(saved); }
  std::string joined() const {
    std::string all;
    for (const std::string& w : seen) all += w + "\n";
    return all;
  }
  std::vector<std::string> seen;
  WarningHandler saved;
};

class PchDegrade : public ::testing::Test {
 protected:
  // How a failure to make or read a PCH degrades, seen in the report of the compile that makes
  // it: that compile makes it itself (the background's failure: PchBackground below).
  ScopedEnv inline_pch_{"TMEMJIT_PCH_CREATE", "inline"};

  void SetUp() override {
    ASSERT_TRUE(cache_dir_.ok());
    saved_ = cache_options();
    set_cache_dir(cache_dir_.path().string());
    ASSERT_TRUE(clear_cache(false).ok());
    PchCache::instance().restart_for_tests();  // a fresh start, under this test's environment
  }
  void TearDown() override {
    wait_background_compiles();                // no job may hold a lease across the restart
    PchCache::instance().restart_for_tests();  // nothing this test turned off reaches the next
    set_cache_options(saved_);
  }

  // Compiles `source` with a line after its transfers that only this call has: a new kernel, the
  // same header prefix (its PCH key).
  CompileReport compile(const KernelSource& source, bool expect_ok = true) {
    KernelSource variant = source;
    variant.text += "// variant " + std::to_string(++variants_) + "\n";
    CompileReport report;
    auto kernel = compile_kernel(variant, epilogue_transfers(), {}, &report);
    EXPECT_EQ(kernel.ok(), expect_ok) << (kernel.ok() ? "" : kernel.error().full_text());
    return report;
  }

  // The PCH file NVRTC made for `tag` in the process's folder, TAG_N.pch (N counts the PCHs the
  // process made); empty when there is none.
  static fs::path pch_file_of(const std::string& tag) {
    std::error_code error;
    for (const auto& slot : fs::directory_iterator(PchCache::instance().root(), error))
      for (const auto& file : fs::directory_iterator(slot.path(), error)) {
        const std::string name = file.path().filename().string();
        if (!name.starts_with(tag + "_") || !name.ends_with(".pch")) continue;
        const std::string n = name.substr(tag.size() + 1, name.size() - tag.size() - 5);
        if (!n.empty() && n.find_first_not_of("0123456789") == std::string::npos &&
            fs::is_regular_file(fs::symlink_status(file.path(), error)))
          return file.path();
      }
    return {};
  }

  TempDir cache_dir_;
  CacheOptions saved_;
  int variants_ = 0;
};

// N09: the process's own PCH damaged or replaced between two compiles. Each is found before NVRTC
// reads it: the folder is emptied, the PCH made again, the report says what was wrong, and the
// next compile reuses the new one. Nothing is written through a link.
TEST_F(PchDegrade, ADamagedOrReplacedPchIsRemovedAndMadeAgain) {
  TempDir outside;
  ASSERT_TRUE(outside.ok());
  const fs::path victim_dir = outside.path() / "victim";
  fs::create_directories(victim_dir);
  const struct {
    const char* name;
    std::function<void(const fs::path& pch)> damage;
    const char* found;
  } cases[] = {
      {"truncated", [](const fs::path& pch) { fs::resize_file(pch, fs::file_size(pch) / 2); },
       " bytes, "},
      {"one byte flipped",
       [](const fs::path& pch) {
         const int fd = ::open(pch.c_str(), O_RDWR);
         ASSERT_GE(fd, 0);
         const off_t at = static_cast<off_t>(fs::file_size(pch) / 2);
         char byte = 0;
         ASSERT_EQ(::pread(fd, &byte, 1, at), 1);
         byte = static_cast<char>(byte ^ 0x20);
         ASSERT_EQ(::pwrite(fd, &byte, 1, at), 1);
         ::close(fd);
       },
       "was written or replaced since NVRTC made it"},
      {"a FIFO in its place",
       [](const fs::path& pch) {
         fs::remove(pch);
         ASSERT_EQ(::mkfifo(pch.c_str(), 0600), 0);
       },
       "is a FIFO, not a regular file"},
      {"a symlink to a copy in its place",
       [&](const fs::path& pch) {
         const fs::path copy = outside.path() / "copy.pch";
         fs::copy_file(pch, copy, fs::copy_options::overwrite_existing);
         fs::remove(pch);
         fs::create_symlink(copy, pch);
       },
       "is a symbolic link"},
      {"a file NVRTC did not make",
       [](const fs::path& pch) { testing::write_file(pch.parent_path() / "other.pch", "x"); },
       "holds other.pch, which NVRTC did not make there"},
      {"its folder a symlink to another folder",
       [&](const fs::path& pch) {
         const fs::path slot = pch.parent_path();
         fs::remove_all(slot);
         fs::create_directory_symlink(victim_dir, slot);
       },
       "its folder is a symbolic link, not a directory"},
  };
  int n = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string tag = "damaged_" + std::to_string(n++);
    const KernelSource source = source_with_a_header(tag);
    EXPECT_EQ(compile(source).headers, "created");
    EXPECT_EQ(compile(source).headers, "reused");
    const fs::path pch = pch_file_of(tag);
    ASSERT_FALSE(pch.empty());
    c.damage(pch);
    const CompileReport after = compile(source);
    EXPECT_EQ(after.headers, "created") << "made again";
    ASSERT_EQ(after.warnings.size(), 1u);
    EXPECT_NE(after.warnings[0].find("the precompiled header kept for this source was damaged ("),
              std::string::npos)
        << after.warnings[0];
    EXPECT_NE(after.warnings[0].find(c.found), std::string::npos) << after.warnings[0];
    EXPECT_TRUE(fs::is_directory(fs::symlink_status(pch.parent_path()))) << "a real folder again";
    EXPECT_EQ(pch_file_of(tag).parent_path(), pch.parent_path()) << "a PCH made again in it";
    const CompileReport next = compile(source);
    EXPECT_EQ(next.headers, "reused");
    EXPECT_TRUE(next.warnings.empty());
  }
  EXPECT_TRUE(fs::is_empty(victim_dir)) << "nothing written through the symlinked folder";
}

// A directory under `base` whose path is 131 characters or more: NVRTC refuses it for the heap
// file of precompiled headers (N05 below).
std::string too_long_tmpdir(const TempDir& base) {
  std::string tmpdir = base.path().string();
  while (tmpdir.size() < 131) tmpdir += "/long_directory_name";
  fs::create_directories(tmpdir);
  return tmpdir;
}

// N05: NVRTC refuses a $TMPDIR of 127 characters or more ("name of directory for temporary files
// is too long") for the heap file of precompiled headers. The compile runs again without them,
// the report says why and names $TMPDIR, and later compiles of the process go without them at once.
TEST_F(PchDegrade, ATmpdirNvrtcCannotUseCompilesWithoutThem) {
  TempDir base;
  ASSERT_TRUE(base.ok());
  const std::string tmpdir = too_long_tmpdir(base);
  ScopedEnv env("TMPDIR", tmpdir.c_str());
  PchCache::instance().restart_for_tests();
  const KernelSource source = source_with_a_header("long_tmpdir");
  const CompileReport first = compile(source);
  EXPECT_EQ(first.headers.rfind("off: NVRTC failed with precompiled headers: ", 0), 0u)
      << first.headers;
  EXPECT_NE(first.headers.find("name of directory for temporary files is too long"),
            std::string::npos)
      << first.headers;
  EXPECT_NE(first.headers.find("$TMPDIR is " + std::to_string(tmpdir.size()) + " characters long"),
            std::string::npos)
      << first.headers;
  EXPECT_TRUE(first.headers.ends_with("(compiled without precompiled headers)")) << first.headers;
  const CompileReport second = compile(source);
  EXPECT_EQ(second.headers.rfind("off: NVRTC failed with precompiled headers earlier in this "
                                 "process: ",
                                 0),
            0u)
      << second.headers;
}

// The same $TMPDIR with the PCH made in the background (the default): the first compile goes
// without one and passes; the job that fails to make it turns them off with a warning that says
// why, and later compiles say they are off.
class PchBackground : public PchDegrade {
 protected:
  ScopedEnv background_{"TMEMJIT_PCH_CREATE", "background"};  // after the base's "inline"
};

TEST_F(PchBackground, AJobThatCannotMakeThePchTurnsThemOffWithAWarning) {
  TempDir base;
  ASSERT_TRUE(base.ok());
  const std::string tmpdir = too_long_tmpdir(base);
  ScopedEnv env("TMPDIR", tmpdir.c_str());
  PchCache::instance().restart_for_tests();
  Warnings warnings;
  const KernelSource source = source_with_a_header("long_tmpdir_background");
  EXPECT_EQ(compile(source).headers, "deferred: made in the background for the next layout");
  wait_background_compiles();
  EXPECT_NE(
      warnings.joined().find("making the precompiled header of long_tmpdir_background.cu in the "
                             "background "
                             "failed, so later compiles of this process go without them: "
                             "NVRTC failed with precompiled headers: "),
      std::string::npos)
      << warnings.joined();
  EXPECT_NE(warnings.joined().find("name of directory for temporary files is too long"),
            std::string::npos)
      << warnings.joined();
  const CompileReport second = compile(source);
  EXPECT_EQ(second.headers.rfind("off: NVRTC failed with precompiled headers earlier in this "
                                 "process: ",
                                 0),
            0u)
      << second.headers;
}

// A compile error of the user's own is reported as it is, once the compile without precompiled
// headers failed as well (its options hold no --pch), and does not turn them off.
TEST_F(PchDegrade, TheUsersOwnErrorIsReportedAndLeavesThemOn) {
  KernelSource broken = source_with_a_header("users_error");
  broken.text += "\nint this_is_not_cuda = ;\n";
  CompileReport report;
  auto kernel = compile_kernel(broken, epilogue_transfers(), {}, &report);
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.error().message().find("users_error.cu("), std::string::npos)
      << kernel.error().full_text();
  EXPECT_EQ(std::string(kernel.error().detail("options")).find("--pch"), std::string::npos)
      << "the error of the compile without precompiled headers";
  EXPECT_EQ(compile(source_with_a_header("users_error")).headers, "created");
}

// N08: a setting that does not parse is a warning naming the variable; the default is used (the
// parse of each value: tests/support/settings_test.cc).
TEST_F(PchDegrade, SettingsThatDoNotParseWarnNamingTheVariable) {
  // Through a compile: each variable named once, and precompiled headers made with the defaults.
  ScopedEnv heap("TMEMJIT_PCH_HEAP_MB", "abc");
  ScopedEnv budget("TMEMJIT_PCH_BUDGET_MB", "-1");
  ScopedEnv on("TMEMJIT_PCH", "yes");
  PchCache::instance().restart_for_tests();
  Warnings warnings;
  EXPECT_EQ(compile(source_with_a_header("bad_settings")).headers, "created");
  const std::string all = warnings.joined();
  EXPECT_NE(all.find("TMEMJIT_PCH_HEAP_MB=abc is not a whole number"), std::string::npos) << all;
  EXPECT_NE(all.find("TMEMJIT_PCH_BUDGET_MB=-1 is not a whole number"), std::string::npos) << all;
  EXPECT_NE(all.find("TMEMJIT_PCH=yes is neither 0 (off) nor 1 (on)"), std::string::npos) << all;
}

// N10: a folder's owner is proven by the lock it holds, not by its PID (a process in another PID
// namespace is invisible to kill()). Only folders whose lock can be taken, and old folders without
// one whose PID is not running, are removed; a link is never followed.
TEST_F(PchDegrade, OnlyFoldersWhoseLockCanBeTakenAreRemoved) {
  TempDir parent;
  ASSERT_TRUE(parent.ok());
  // A PID above pid_max names no process here, as a live one of another namespace looks.
  long pid_max = 4194304;
  std::ifstream("/proc/sys/kernel/pid_max") >> pid_max;
  const std::string stem = parent.path().string() + "/tmemjit-pch-" + std::to_string(pid_max + 1);
  auto make = [](const std::string& root, bool with_lock) {
    fs::create_directories(root + "/0123456789abcdef0123456789abcdef");
    testing::write_file(root + "/0123456789abcdef0123456789abcdef/x_0.pch", "pch");
    if (with_lock) testing::write_file(root + "/lock", "");
  };
  make(stem + "-alive", true);
  make(stem + "-gone", true);
  make(stem + "-old", false);
  make(stem + "-new", false);
  const timespec two_hours_ago[2] = {{::time(nullptr) - 7200, 0}, {::time(nullptr) - 7200, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (stem + "-old").c_str(), two_hours_ago, 0), 0);
  TempDir victim;
  ASSERT_TRUE(victim.ok());
  make(victim.path().string() + "/root", true);
  fs::create_directory_symlink(victim.path() / "root", stem + "-link");
  // The live owner, in another namespace as far as kill() can tell, holds its lock.
  const int held = ::open((stem + "-alive/lock").c_str(), O_RDONLY);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX), 0);

  remove_gone_pch_roots(parent.path().string());
  EXPECT_TRUE(fs::exists(stem + "-alive/0123456789abcdef0123456789abcdef/x_0.pch"));
  EXPECT_FALSE(fs::exists(stem + "-gone"));
  EXPECT_FALSE(fs::exists(stem + "-old")) << "no lock, an hour old, its PID not running";
  EXPECT_TRUE(fs::exists(stem + "-new")) << "no lock yet: being made";
  EXPECT_TRUE(fs::exists(victim.path() / "root/0123456789abcdef0123456789abcdef/x_0.pch"));
  ::close(held);  // its owner ends
  remove_gone_pch_roots(parent.path().string());
  EXPECT_FALSE(fs::exists(stem + "-alive"));

  // This process's own folder, with its PID in the name: kept while the process holds the lock.
  ASSERT_EQ(compile(source_with_a_header("own_folder")).headers, "created");
  const std::string root = PchCache::instance().root();
  ASSERT_FALSE(root.empty());
  remove_gone_pch_roots(fs::path(root).parent_path().string());
  EXPECT_TRUE(fs::exists(root + "/lock"));
  EXPECT_EQ(compile(source_with_a_header("own_folder")).headers, "reused");
}

// ---- $TMPDIR without room, and a heap the machine cannot map: the tmemjit command in a process
// of its own (a SIGBUS cannot be caught, and the limits must not reach this one) ---------------

struct Specialized {
  int exit_code = -1;
  nlohmann::json json;
  std::string err;
};

// `tmemjit specialize` of the epilogue with a header, as the last command of a shell script that
// runs `setup` first (a mount, a ulimit, variables), in a mount namespace of its own when asked.
Specialized specialize_in_shell(const std::string& setup, bool own_mounts, const fs::path& work) {
  using tmemjit_test::shell_quote;
  fs::remove_all(work / "cache");  // the kernel's report is cached with it
  testing::write_file(work / "with_header.cu",
                      "#include <cuda_bf16.h>\n" + read_file(kExample + "/epilogue.cu"));
  const std::string command =
      setup + " && exec " + shell_quote(TMEMJIT_CLI_PATH) + " specialize " +
      shell_quote((work / "with_header.cu").string()) + " --transfer " +
      shell_quote("acc_load=" + kExample + "/layouts/d_x32_ld.json") + " --transfer " +
      shell_quote("acc_store=" + kExample + "/layouts/d_x32_st.json") +
      " --no-wait --column-arg --json --cache-dir " + shell_quote((work / "cache").string());
  const std::string out = (work / "out.json").string(), err = (work / "err.txt").string();
  const std::string script = std::string(own_mounts ? "unshare -Urm " : "") + "sh -c " +
                             shell_quote(command) + " >" + shell_quote(out) + " 2>" +
                             shell_quote(err);
  const int status = std::system(script.c_str());
  Specialized result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.err = read_file(err);
  result.json = nlohmann::json::parse(read_file(out), nullptr, /*allow_exceptions=*/false);
  return result;
}

// N02: a $TMPDIR with less room than NVRTC's PCH heap, which NVRTC keeps in a file there, died of
// SIGBUS (6 MiB tmpfs), or failed every compile when the PCH file itself did not fit (12 MiB,
// with a heap set small enough to start). Both compile without precompiled headers and say why:
// the report, when the room is missing before the compile; the background job that fails to
// write the PCH, in a warning (the compile it was made for went without one).
TEST(PchDegradeProcess, ATmpdirWithoutRoomCompilesWithoutThem) {
  TempDir work;
  ASSERT_TRUE(work.ok());
  fs::create_directories(work.path() / "tmp");
  const std::string probe = "unshare -Urm sh -c 'mount -t tmpfs -o size=1m tmpfs " +
                            (work.path() / "tmp").string() + "' >/dev/null 2>&1";
  if (std::system(probe.c_str()) != 0)
    GTEST_SKIP() << "this machine does not let a user mount a tmpfs in a namespace (unshare -Urm)";
  const struct {
    const char* size;
    const char* heap_mb;  // TMEMJIT_PCH_HEAP_MB; empty for the default
    const char* says;
    bool warned;  // said by the background job's warning, not the report
  } cases[] = {
      {"6m", "", "MiB free, less than NVRTC's PCH heap of 512 MiB", false},
      {"12m", "8", "error while writing PCH file: No space left on device", true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.size);
    const std::string tmp = tmemjit_test::shell_quote((work.path() / "tmp").string());
    const Specialized r = specialize_in_shell(
        "mount -t tmpfs -o size=" + std::string(c.size) + " tmpfs " + tmp + " && export TMPDIR=" +
            tmp + (*c.heap_mb ? std::string(" TMEMJIT_PCH_HEAP_MB=") + c.heap_mb : ""),
        /*own_mounts=*/true, work.path());
    ASSERT_EQ(r.exit_code, 0) << r.err << " (135 is SIGBUS)";
    const std::string headers = r.json.value("headers", "");
    if (c.warned) {
      EXPECT_EQ(headers, "deferred: made in the background for the next layout");
      EXPECT_NE(r.err.find("making the precompiled header of"), std::string::npos) << r.err;
      EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    } else {
      EXPECT_EQ(headers.rfind("off: ", 0), 0u) << headers;
      EXPECT_NE(headers.find(c.says), std::string::npos) << headers;
    }
  }
}

// N08: a heap the machine cannot map (here: over the process's address-space limit) fails the
// compile with precompiled headers. Made in the background, the job's warning names
// TMEMJIT_PCH_HEAP_MB; made inline, the compile runs again without and its report names it.
TEST(PchDegradeProcess, AHeapThatCannotBeMappedIsNamed) {
#if defined(TMEMJIT_ASAN)
  GTEST_SKIP() << "the command is built with ASan, whose shadow memory (terabytes of address "
                  "space) `ulimit -v` forbids; the plain build runs this test";
#endif
  TempDir work;
  ASSERT_TRUE(work.ok());
  const Specialized r = specialize_in_shell("ulimit -v 6000000 && export TMEMJIT_PCH_HEAP_MB=16384",
                                            /*own_mounts=*/false, work.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json.value("headers", ""), "deferred: made in the background for the next layout");
  EXPECT_NE(r.err.find("making the precompiled header of"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("TMEMJIT_PCH_HEAP_MB"), std::string::npos) << r.err;
  const Specialized inline_made = specialize_in_shell(
      "ulimit -v 6000000 && export TMEMJIT_PCH_HEAP_MB=16384 TMEMJIT_PCH_CREATE=inline",
      /*own_mounts=*/false, work.path());
  ASSERT_EQ(inline_made.exit_code, 0) << inline_made.err;
  const std::string headers = inline_made.json.value("headers", "");
  EXPECT_EQ(headers.rfind("off: ", 0), 0u) << headers;
  EXPECT_NE(headers.find("TMEMJIT_PCH_HEAP_MB"), std::string::npos) << headers;
}

}  // namespace
}  // namespace tmem
