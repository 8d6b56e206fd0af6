// tmemjit ptx / tmemjit compile: every --kernel form and every --backend of docs/design.md §CLI,
// with the exit codes of a usage error (2), a toolchain or driver failure (3) and the JSON report.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/cli_util.h"
#include "common/elf.h"
#include "common/spec_fixtures.h"
#include "runtime/compile/backends.h"

namespace {

using tmemjit_test::CliResult;
using tmemjit_test::run_cli_argv;

// `tmemjit COMMAND <seed Layout B spec> EXTRA...`.
CliResult run_seed(const std::string& command, std::vector<std::string> extra, bool store = true) {
  const auto spec = tmemjit_test::seed_layout_b(store);
  std::vector<std::string> argv = {command,  "--op",    spec.op,  "--scope", spec.scope,
                                   "--tmem", spec.tmem, "--regs", spec.regs};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return run_cli_argv(argv);
}

std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("tmemjit_cli_compile_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

TEST(CliPtx, EveryKernelForm) {
  const struct {
    const char* kernel;
    const char* holds;
  } forms[] = {{"roundtrip", ".visible .entry tmem_roundtrip("},
               {"store", ".visible .entry tmem_store("},
               {"load", ".visible .entry tmem_load("},
               {"fill", ".visible .entry tmem_fill("},
               {"dump", ".visible .entry tmem_store("},
               {"func", ".visible .func tmem_transfer("},
               {"cuda", "__device__ __forceinline__ void tmem_transfer("}};
  for (const auto& form : forms) {
    SCOPED_TRACE(form.kernel);
    const CliResult r = run_seed("ptx", {"--kernel", form.kernel});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(form.holds), std::string::npos) << r.out.substr(0, 400);
  }
  // dump is the store kernel: the plan's st, then TMEM -> Raw through 32x32b.
  EXPECT_EQ(run_seed("ptx", {"--kernel", "dump"}).out, run_seed("ptx", {"--kernel", "store"}).out);
  const CliResult func = run_seed("ptx", {"--kernel", "func", "--target", "sm_103a"});
  EXPECT_NE(func.out.find(".target sm_103a"), std::string::npos);
  EXPECT_EQ(func.out.find(".entry"), std::string::npos);
}

TEST(CliPtx, UnknownKernelIsAUsageError) {
  const CliResult r = run_seed("ptx", {"--kernel", "bogus"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown kernel 'bogus'; allowed: roundtrip, store, load, fill, dump, "
                       "func, cuda"),
            std::string::npos)
      << r.err;
}

TEST(CliCompile, EveryPtxBackendWritesACubin) {
  const std::string expected_auto =
      std::string(tmem::to_string(tmem::resolve_backend(tmem::Backend::kAuto)));
  std::vector<std::pair<std::string, std::string>> backends = {
      {"auto", expected_auto}, {"nvjitlink", "nvjitlink"}, {"ptxas", "ptxas"}};
  if (tmem::nvptxcompiler_built_in()) backends.emplace_back("nvptxcompiler", "nvptxcompiler");
  for (const auto& [name, ran] : backends) {
    SCOPED_TRACE(name);
    const std::string output = temp_path(name + ".cubin");
    const CliResult r = run_seed(
        "compile", {"--backend", name, "--no-cache", "--json", "-o", output, "--kernel", "dump"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["backend"], ran);
    EXPECT_EQ(j["kernel"], "dump");
    const std::vector<char> cubin = read_bytes(output);
    EXPECT_EQ(j["cubin_bytes"], cubin.size());
    const auto sections = tmem::elf::read_sections(cubin);
    ASSERT_TRUE(sections.ok()) << sections.error().message();
    EXPECT_GT(tmem::elf::section_size(*sections, ".text.tmem_store"), 0u);
    std::filesystem::remove(output);
  }
}

TEST(CliCompile, NvPtxCompilerWithoutItIsAToolchainFailure) {
  if (tmem::nvptxcompiler_built_in())
    GTEST_SKIP() << "this libtmemjit has nvPTXCompiler; EveryPtxBackendWritesACubin covers it";
  const CliResult r = run_seed("compile", {"--backend", "nvptxcompiler", "--no-cache"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("built without nvPTXCompiler"), std::string::npos) << r.err;
}

TEST(CliCompile, DriverBackendWithoutADriverExitsThree) {
  void* handle = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle != nullptr) {
    ::dlclose(handle);
    GTEST_SKIP() << "a CUDA driver is installed; compile_backends_test's "
                    "DriverBackend.CompilesTheSeedKernelForSm100a covers the driver JIT";
  }
  const CliResult r = run_seed("compile", {"--backend", "driver", "--no-cache"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.err.rfind("error: driver jit failed: no CUDA driver: libcuda.so.1", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("options: CU_JIT_TARGET=sm_100a"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(".entry tmem_roundtrip"), std::string::npos) << "the PTX is in the story";
}

TEST(CliCompile, CudaFormThroughNvrtc) {
  const CliResult r = run_seed("compile", {"--kernel", "cuda", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["backend"], "nvrtc");
  EXPECT_EQ(run_seed("compile", {"--kernel", "cuda", "--backend", "ptxas"}).exit_code, 2);
}

// The .func is relocatable code: auto picks nvPTXCompiler (or ptxas) with -c; linking backends
// would drop it and are refused.
TEST(CliCompile, FuncIsRelocatableCode) {
  for (bool store : {true, false}) {
    SCOPED_TRACE(store ? "st" : "ld");
    const std::string output = temp_path("func.cubin");
    const CliResult r = run_seed("compile", {"--kernel", "func", "--json", "-o", output}, store);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["backend"],
              tmem::nvptxcompiler_built_in() ? "nvptxcompiler" : "ptxas");
    const auto sections = tmem::elf::read_sections(read_bytes(output));
    ASSERT_TRUE(sections.ok()) << sections.error().message();
    EXPECT_GT(tmem::elf::section_size(*sections, ".text.tmem_transfer"), 0u);
    std::filesystem::remove(output);
  }
  EXPECT_EQ(run_seed("compile", {"--kernel", "func", "--backend", "ptxas"}).exit_code, 0);
  const CliResult linked = run_seed("compile", {"--kernel", "func", "--backend", "nvjitlink"});
  EXPECT_EQ(linked.exit_code, 2);
  EXPECT_NE(linked.err.find("relocatable"), std::string::npos) << linked.err;
}

TEST(CliCompile, UnknownBackendNamesTheAllowedSet) {
  const CliResult r = run_seed("compile", {"--backend", "nvcc"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("allowed: nvjitlink, ptxas, nvrtc, driver, nvptxcompiler, auto"),
            std::string::npos)
      << r.err;
}

}  // namespace
