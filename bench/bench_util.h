// What the benchmark binaries share: the seed's Layout B spec text, the shape sweep, unique names
// that keep compiler caches out of cold measurements, the CUDA C++ twin of a harness kernel and
// the toolkit programs (nvcc, ptxas) as subprocesses.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "kernels/transfer_kernels.h"
#include "runtime/compile/backends.h"
#include "runtime/support/subprocess.h"
#include "tests/common/spec_fixtures.h"
#include "tmem/check.h"
#include "tmem/opcode.h"
#include "tmem/transfer.h"

namespace tmem::bench {

// The seed's Layout B store as the user writes it (tests/common/spec_fixtures.h): the cold-JIT
// input.
inline const tmemjit_test::SpecText& seed_text() {
  static const tmemjit_test::SpecText text = tmemjit_test::seed_layout_b(/*store=*/true);
  return text;
}

inline Result<TransferSpec> parse_spec(const tmemjit_test::SpecText& text) {
  std::optional<std::string_view> tmem2, imm;
  if (text.tmem2) tmem2 = *text.tmem2;
  if (text.imm) imm = *text.imm;
  return TransferSpec::from_fields(text.op, text.scope, text.tmem, text.regs, tmem2, imm);
}

// The seed's Layout B store, parsed: the spec the cache and check benchmarks time.
inline TransferSpec seed_spec() { return parse_spec(seed_text()).value(); }

// The warpgroup identity spec of a b32 store (tests/common/spec_fixtures.h identity_spec): one
// instruction per warp, num registers per thread for 32x32b (the kernel-size axis of the sweep).
inline tmemjit_test::SpecText identity_store(Shape shape, int num) {
  return tmemjit_test::identity_spec(Opcode::make(Direction::kStore, shape, num, false).value());
}

// A name suffix no earlier iteration, process or run has used: nvJitLink and the driver keep a
// cross-process ComputeCache (~/.nv/ComputeCache) keyed by the input, so every cold compile of
// every route gets a fresh entry name (the code is unchanged; only the symbol differs).
inline std::string unique_suffix() {
  static const std::uint64_t nonce = [] {
    std::random_device device;
    return (static_cast<std::uint64_t>(device()) << 32) ^ device() ^
           static_cast<std::uint64_t>(::getpid());
  }();
  static std::atomic<std::uint64_t> counter{0};
  return "_u" + std::to_string(nonce % 1000000007u) + "_" + std::to_string(counter++);
}

// `text` with the first occurrence of `from` replaced by `to` (entry renames).
inline std::string replace_first(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// The round-trip harness kernel of build_kernel(plan, kRoundtrip) as CUDA C++ with inline asm,
// what a user would write by hand for NVRTC or nvcc: warp 0 allocates, each participating thread
// reads its slots from in[thread][slot], stores them to TMEM with the plan's instructions
// (kernels::cuda_device_function), loads them back with the mirrored ones, writes
// out[thread][slot], then fence, barrier, dealloc and relinquish.
inline std::string cuda_roundtrip_source(const Plan& plan, const std::string& name) {
  auto with_direction = [&](Direction direction) {
    Plan mirrored = plan;
    mirrored.op = Opcode::make(direction, plan.op.shape(), plan.op.num(), plan.op.packed()).value();
    return mirrored;
  };
  const std::string store =
      replace_first(kernels::cuda_device_function(with_direction(Direction::kStore)),
                    "void tmem_transfer(", "void tmem_store(");
  const std::string load =
      replace_first(kernels::cuda_device_function(with_direction(Direction::kLoad)),
                    "void tmem_transfer(", "void tmem_load(");
  const kernels::LaunchShape shape = kernels::launch_shape(plan, KernelKind::kRoundtrip);
  std::vector<int> slots;
  for (const RepeatStep& step : plan.repeats)
    slots.insert(slots.end(), step.slots.begin(), step.slots.end());
  std::sort(slots.begin(), slots.end());
  slots.erase(std::unique(slots.begin(), slots.end()), slots.end());
  // uint4 moves where four aligned consecutive slots are used, as the PTX kernel's v4 moves.
  std::string copy_in, copy_out;
  for (size_t i = 0; i < slots.size();) {
    const int s = slots[i];
    if (s % 4 == 0 && shape.slots % 4 == 0 && i + 3 < slots.size() && slots[i + 3] == s + 3) {
      const std::string q = std::to_string(s / 4);
      auto r = [&](int k) { return "regs[" + std::to_string(s + k) + "]"; };
      copy_in += "    { const uint4 q = reinterpret_cast<const uint4*>(row_in)[" + q + "]; " +
                 r(0) + " = q.x; " + r(1) + " = q.y; " + r(2) + " = q.z; " + r(3) + " = q.w; }\n";
      copy_out += "    reinterpret_cast<uint4*>(row_out)[" + q + "] = make_uint4(" + r(0) + ", " +
                  r(1) + ", " + r(2) + ", " + r(3) + ");\n";
      i += 4;
    } else {
      const std::string a = std::to_string(s);
      copy_in += "    regs[" + a + "] = row_in[" + a + "];\n";
      copy_out += "    row_out[" + a + "] = regs[" + a + "];\n";
      ++i;
    }
  }
  const std::string participant = plan.scope.kind() == Scope::Kind::kWarp
                                      ? "warp == " + std::to_string(plan.scope.warp_id()) + "u"
                                      : "warp < " + std::to_string(plan.warps()) + "u";
  const std::string ncols = std::to_string(plan.alloc_columns);
  return store + load + "extern \"C\" __global__ void __launch_bounds__(" +
         std::to_string(shape.threads) + ") " + name +
         "(const unsigned int* __restrict__ in, unsigned int* __restrict__ out) {\n"
         "  __shared__ unsigned int tmem_base_address;\n"
         "  const unsigned int warp = threadIdx.x / 32;\n"
         "  if (warp == 0)\n"
         "    asm volatile(\"tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], " +
         ncols +
         ";\" :: \"r\"((unsigned int)__cvta_generic_to_shared(&tmem_base_address)) : \"memory\");\n"
         "  asm volatile(\"tcgen05.fence::before_thread_sync;\" ::: \"memory\");\n"
         "  __syncthreads();\n"
         "  asm volatile(\"tcgen05.fence::after_thread_sync;\" ::: \"memory\");\n"
         "  const unsigned int base = tmem_base_address;\n"
         "  if (" +
         participant +
         ") {\n"
         "    unsigned int regs[" +
         std::to_string(std::max(plan.regs_per_thread, 1)) +
         "];\n"
         "    const unsigned int* row_in = in + threadIdx.x * " +
         std::to_string(shape.slots) +
         "u;\n"
         "    unsigned int* row_out = out + threadIdx.x * " +
         std::to_string(shape.slots) + "u;\n" + copy_in +
         "    tmem_store(base, regs);\n"
         "    tmem_load(base, regs);\n" +
         copy_out +
         "  }\n"
         "  asm volatile(\"tcgen05.fence::before_thread_sync;\" ::: \"memory\");\n"
         "  __syncthreads();\n"
         "  asm volatile(\"tcgen05.fence::after_thread_sync;\" ::: \"memory\");\n"
         "  if (warp == 0) {\n"
         "    asm volatile(\"tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, " +
         ncols +
         ";\" :: \"r\"(base) : \"memory\");\n"
         "    asm volatile(\"tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\" ::: "
         "\"memory\");\n"
         "  }\n"
         "}\n";
}

// nvcc: $TMEMJIT_NVCC, else the toolkit's (TMEMJIT_BENCH_NVCC, from CMake).
inline std::string nvcc_path() {
  if (const char* env = std::getenv("TMEMJIT_NVCC"); env != nullptr && *env != '\0') return env;
#ifdef TMEMJIT_BENCH_NVCC
  return TMEMJIT_BENCH_NVCC;
#else
  return "nvcc";
#endif
}

// Runs a toolkit program that writes `output`, then reads the file back (the cubin), as a user's
// build step would. kToolchain with the program's output when it fails.
inline Result<std::string> run_tool(const std::vector<std::string>& argv,
                                    const std::string& output) {
  Result<ProcessOutput> run = run_process(argv);
  if (!run.ok()) return std::move(run).error();
  if (run->exit_code != 0)
    return Error(ErrorCode::kToolchain,
                 argv[0] + " failed with exit code " + std::to_string(run->exit_code), run->output);
  return read_file(output);
}

}  // namespace tmem::bench
