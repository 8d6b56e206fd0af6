// A host (linked to the shared library, as users link it) that ends while a compile runs
// (tests/jit/exit_test.cc; docs/reliability.md "Exit"): it returns from main with a lazy kernel's
// specialized compile in the background, or with a thread of its own inside an eager compile, and
// must exit 0 with its output intact.
//
//   exit_child lazy|thread|warmup|eager CACHE_DIR SOURCE.cu STORE.json LOAD.json
//
// warmup and eager are the parent's own steps, made here because a cache entry is keyed by the
// library build that made it (the test binary links the library statically): warmup builds the
// generic tier; eager prints where an eager compile's answer came from ("disk": the compile the
// exiting process waited for landed).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "tmem/cache.h"
#include "tmem/specialize.h"

namespace {

std::string read(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

tmem::NamedTransfer transfer(const char* path, const char* name) {
  tmem::DeviceFunctionOptions options;
  options.name = name;
  return {tmem::TransferSpec::from_json(read(path)).value(), options};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(
        stderr,
        "usage: exit_child lazy|thread|warmup|eager CACHE_DIR SOURCE.cu STORE.json LOAD.json\n");
    return 2;
  }
  const std::string mode = argv[1];
  tmem::set_cache_dir(argv[2]);
  const std::string text = read(argv[3]);
  const tmem::KernelSource source{tmem::Language::kCuda, text, "roundtrip", "roundtrip.cu"};
  const std::vector<tmem::NamedTransfer> transfers = {transfer(argv[4], "acc_st"),
                                                      transfer(argv[5], "acc_ld")};
  tmem::CompileOptions options;
  options.target = tmem::Target::kSm100a;
  if (mode == "lazy") {
    options.specialization = tmem::Specialization::kLazy;
    tmem::CompileReport report;
    auto kernel = tmem::compile_kernel(source, transfers, options, &report);
    if (!kernel.ok()) {
      std::fprintf(stderr, "%s\n", kernel.error().full_text().c_str());
      return 1;
    }
    // The exit below happens with the specialized compile in flight, not merely queued: a queued
    // one is dropped at exit, by design.
    for (int i = 0; i < 10000 && tmem::background_compiles().running == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::printf("tier=%s now=%s running=%d\n", report.tier.c_str(),
                std::string(kernel->tier()).c_str(), tmem::background_compiles().running);
    return 0;
  }
  if (mode == "warmup") {
    auto warmed = tmem::warmup_kernel(source, transfers, options);
    if (!warmed.ok()) std::fprintf(stderr, "%s\n", warmed.error().full_text().c_str());
    return warmed.ok() ? 0 : 1;
  }
  if (mode == "eager") {
    tmem::CompileReport report;
    auto kernel = tmem::compile_kernel(source, transfers, options, &report);
    if (!kernel.ok()) std::fprintf(stderr, "%s\n", kernel.error().full_text().c_str());
    std::printf("%s\n", std::string(tmem::to_string(report.cache)).c_str());
    return kernel.ok() ? 0 : 1;
  }
  if (mode == "thread") {
    // A worker of the host's own (a Python daemon thread, a pool) still inside compile_kernel.
    static std::atomic<bool> done{false};
    std::thread([source, transfers, options] {
      (void)tmem::compile_kernel(source, transfers, options);
      done = true;
    }).detach();
    // SOURCE.cu compiles for over a second (the parent makes it so): the exit below comes during
    // it.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::printf("returning done=%d\n", done.load() ? 1 : 0);
    return 0;
  }
  std::fprintf(stderr, "exit_child: unknown mode '%s'\n", mode.c_str());
  return 2;
}
