// Blackwell kernels on Hopper (docs/emulation.md §Blackwell kernels on Hopper): a kernel's own
// tcgen05 instructions lowered by tmem::emulate_ptx / emulate_cuda and the CLI's `emulate`.
//   Emulate     (label compile) what lowers, what passes through, what is refused, anywhere;
//   EmulateEmu  (label emu) a kernel of this file that allocates TMEM, issues tcgen05.mma itself,
//               commits to an mbarrier and reads D back with tcgen05.ld, run on a GPU of compute
//               capability 9.x and compared with a GEMM computed here on the host.
#include "tmem/emulate.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/cache_test_util.h"
#include "common/cli_util.h"
#include "common/files.h"
#include "emu_where.h"
#include "runtime/cuda/driver.h"
#include "runtime/jit/emulate_module.h"

namespace tmem {
namespace {

// D (128 x N, f32, TMEM) = A (128 x 16) · Bᵀ (N x 16), bf16 operands in shared memory in the
// canonical K-major layout without swizzle (docs/emulation.md §Blackwell kernels on Hopper): 8-row
// core matrices of 16 bytes per row, LBO = 128 bytes between the two core matrices along K, SBO =
// 256 bytes between 8-row groups. `repeats` MMAs: the first overwrites D, the others accumulate.
const char* kMmaKernel = R"(#include <cuda_bf16.h>
#ifndef N
#define N 64
#endif
__device__ __forceinline__ unsigned int smem(const void* p) {
  return static_cast<unsigned int>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ unsigned long long descriptor(const void* tile) {
  const unsigned long long start = (smem(tile) & 0x3FFFFu) >> 4;
  return start | (128ull >> 4) << 16 | (256ull >> 4) << 32 | 1ull << 46;
}
// Row r, column k of a K-major tile with 16 columns, in elements from its start.
__device__ __forceinline__ int canonical(int r, int k) {
  return (r / 8) * 128 + (k / 8) * 64 + (r % 8) * 8 + (k % 8);
}
extern "C" __global__ void __launch_bounds__(128)
    mma_probe(const __nv_bfloat16* a, const __nv_bfloat16* b, float* d, int repeats) {
  __shared__ __align__(128) __nv_bfloat16 sa[128 * 16];
  __shared__ __align__(128) __nv_bfloat16 sb[N * 16];
  __shared__ unsigned int tmem_base;
  __shared__ __align__(8) unsigned long long bar;
  const unsigned int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int i = threadIdx.x; i < 128 * 16; i += 128) sa[canonical(i / 16, i % 16)] = a[i];
  for (int i = threadIdx.x; i < N * 16; i += 128) sb[canonical(i / 16, i % 16)] = b[i];
  if (warp == 0) {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;"
                 :: "r"(smem(&tmem_base)), "r"(N) : "memory");
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
  }
  if (threadIdx.x == 0)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem(&bar)) : "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // the MMA reads through it
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  const unsigned int base = tmem_base;
  // kind::f16: D f32 (bits 4-5), A and B bf16 (7-9, 10-12), K-major, N >> 3, M >> 4.
  const unsigned int idesc = 1u << 4 | 1u << 7 | 1u << 10 | (N >> 3) << 17 | (128 >> 4) << 24;
  if (threadIdx.x == 0) {
    for (int r = 0; r < repeats; ++r)
      asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
                   " tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}"
                   :: "r"(base), "l"(descriptor(sa)), "l"(descriptor(sb)), "r"(idesc), "r"(r)
                   : "memory");
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];"
                 :: "r"(smem(&bar)) : "memory");
  }
  unsigned int done = 0;
  while (!done)
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n"
                 " selp.u32 %0, 1, 0, p;\n}" : "=r"(done) : "r"(smem(&bar)) : "memory");
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  for (int c = 0; c < N; c += 8) {
    unsigned int v[8];
    asm volatile("tcgen05.ld.sync.aligned.32x32b.x8.b32 {%0,%1,%2,%3,%4,%5,%6,%7}, [%8];"
                 : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]), "=r"(v[4]), "=r"(v[5]),
                   "=r"(v[6]), "=r"(v[7])
                 : "r"(base + ((warp * 32) << 16) + c));
    asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
    for (int j = 0; j < 8; ++j) d[(warp * 32 + lane) * N + c + j] = __uint_as_float(v[j]);
  }
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  if (warp == 0)
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" :: "r"(base), "r"(N)
                 : "memory");
}
)";

KernelSource mma_source() {
  KernelSource source;
  source.text = kMmaKernel;
  source.entry = "mma_probe";
  source.path = "mma_probe.cu";
  return source;
}

int count_of(const EmulationReport& report, const std::string& family) {
  for (const auto& [name, count] : report.lowered)
    if (name == family) return count;
  return 0;
}

TEST(Emulate, AKernelsOwnTcgen05IsLoweredAndCompilesForSm90) {
  auto emulated = emulate_cuda(mma_source());
  ASSERT_TRUE(emulated.ok()) << emulated.error().full_text();
  const EmulationReport& report = emulated->report;
  EXPECT_TRUE(report.changed);
  // PTX statements: NVRTC unrolls the loops of MMAs and loads.
  EXPECT_GE(count_of(report, "tcgen05.mma"), 1);
  EXPECT_EQ(count_of(report, "tcgen05.commit"), 1);
  EXPECT_EQ(count_of(report, "tcgen05.alloc"), 1);
  EXPECT_EQ(count_of(report, "tcgen05.dealloc"), 1);
  EXPECT_GE(count_of(report, "tcgen05.ld"), 1);
  EXPECT_GE(count_of(report, "tcgen05.fence"), 4);
  EXPECT_TRUE(emulated->kernel.emulated());
  EXPECT_EQ(emulated->kernel.target(), Target::kSm90);
  EXPECT_EQ(emulated->kernel.name(), "mma_probe");
  EXPECT_NE(emulated->ptx.find(".target sm_90\n"), std::string::npos);
  EXPECT_GT(report.code.registers, 0);
  EXPECT_GT(emulated->kernel.cubin().size(), 0u);
}

// A module made of several units (the user's, the library's) defines the emulation state once;
// every instruction that reads it stays. An `ld.global` of it was once taken for a definition and
// erased, leaving its register undefined: every emulated user kernel faulted on Hopper.
TEST(Emulate, OneStateDefinitionIsKeptAndEveryReadOfIt) {
  const std::string definition = ".global .align 8 .b8 _ZN7tmemjit9emu_stateE[16];\n";
  const std::string reads =
      "\tld.global.u64 \t%rd1, [_ZN7tmemjit9emu_stateE];\n"
      "\tld.global.u64 \t%rd2, [_ZN7tmemjit9emu_stateE+8];\n";
  std::string ptx = definition + ".visible .entry k()\n{\n" + reads + "}\n" + definition +
                    ".visible .global .align 8 .b8 _ZN7tmemjit9emu_stateE[16];\n";
  keep_first_emulation_state(ptx);
  EXPECT_EQ(ptx, definition + ".visible .entry k()\n{\n" + reads + "}\n");
}

TEST(Emulate, AModuleWithoutTcgen05IsOnlyRetargeted) {
  const std::string ptx =
      ".version 8.6\n.target sm_100a\n.address_size 64\n"
      ".visible .entry plain(.param .u64 out)\n{\n"
      "\t.reg .b64 %rd<2>;\n\tld.param.u64 %rd1, [out];\n\tret;\n}\n";
  auto emulated = emulate_ptx(ptx);
  ASSERT_TRUE(emulated.ok()) << emulated.error().full_text();
  EXPECT_FALSE(emulated->report.changed);
  EXPECT_TRUE(emulated->report.lowered.empty());
  EXPECT_FALSE(emulated->kernel.emulated());  // nothing to bind at launch
  EXPECT_NE(emulated->ptx.find(".target sm_90"), std::string::npos);
}

TEST(Emulate, BadInputIsAUsageErrorNamingIt) {
  auto empty = emulate_ptx("");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().code(), ErrorCode::kUsage);
  const std::string two =
      ".version 8.6\n.target sm_100a\n.address_size 64\n"
      ".visible .entry first()\n{\n\tret;\n}\n"
      ".visible .entry second()\n{\n\tret;\n}\n";
  auto ambiguous = emulate_ptx(two);
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_NE(ambiguous.error().message().find("first, second"), std::string::npos)
      << ambiguous.error().message();
  EmulateOptions named;
  named.entry = "third";
  auto missing = emulate_ptx(two, named);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message().find("no kernel 'third'"), std::string::npos);
  // A form the emulation does not do yet: refused with the statement and its line.
  const std::string ws =
      ".version 8.6\n.target sm_100a\n.address_size 64\n"
      ".visible .entry k()\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n"
      "\t.reg .pred %p<2>;\n"
      "\ttcgen05.mma.ws.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %p1;\n"
      "\tret;\n}\n";
  auto refused = emulate_ptx(ws);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kUsage);
  EXPECT_NE(refused.error().message().find("line 9"), std::string::npos)
      << refused.error().message();
  EXPECT_NE(refused.error().message().find("tcgen05.mma.ws"), std::string::npos);
}

// A standalone module (docs/emulation.md §Standalone modules): its state bound from the start to
// arrays of its own, each kernel clearing its CTA's status first; strict mode, which reports only
// through emulation_check(), is refused with it; the CLI takes a positive count only.
TEST(Emulate, AStandaloneModuleOwnsItsStateAndEachKernelClearsItFirst) {
  EmulateOptions options;
  options.standalone_ctas = 3;
  auto emulated = emulate_cuda(mma_source(), options);
  ASSERT_TRUE(emulated.ok()) << emulated.error().full_text();
  const std::string& ptx = emulated->ptx;
  EXPECT_NE(ptx.find("_ZN7tmemjit15standalone_tmemE[" + std::to_string(3 * 65536 * 4) + "]"),
            std::string::npos);
  EXPECT_NE(ptx.find("_ZN7tmemjit9emu_stateE[3] = {generic(_ZN7tmemjit15standalone_tmemE), "
                     "generic(_ZN7tmemjit17standalone_statusE), 0}"),
            std::string::npos)
      << ptx.substr(0, 4000);
  const size_t entry = ptx.find(".entry mma_probe");
  ASSERT_NE(entry, std::string::npos);
  const size_t body = ptx.find('{', entry);
  EXPECT_EQ(ptx.find("call tmemjit_emu_standalone_enter", body),
            ptx.find("{ call tmemjit_emu_standalone_enter, (); }", body) + 2)
      << "the kernel's first statement";
  bool counted = false;
  for (const auto& [family, n] : emulated->report.lowered)
    counted |= family == "kernel entry (clears the standalone state)" && n == 1;
  EXPECT_TRUE(counted);
  auto plain = emulate_cuda(mma_source());
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->ptx.find("standalone"), std::string::npos) << "off by default";

  options.strict = true;
  auto both = emulate_cuda(mma_source(), options);
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.error().code(), ErrorCode::kUsage);
  EXPECT_NE(both.error().message().find("strict mode"), std::string::npos);

  testing::TempDir dir;
  const std::string source = (dir.path() / "mma_probe.cu").string();
  testing::write_file(source, kMmaKernel);
  for (const char* bad : {"0", "-1", "many", "4x"}) {
    auto run = tmemjit_test::run_cli("emulate", source, "--standalone-ctas", bad);
    EXPECT_EQ(run.exit_code, 2) << bad << ": " << run.err;
    EXPECT_NE(run.err.find("--standalone-ctas takes"), std::string::npos) << run.err;
  }
  auto run = tmemjit_test::run_cli("emulate", source, "--standalone-ctas", "2", "--json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("\"standalone_ctas\": 2"), std::string::npos) << run.out;
}

TEST(Emulate, TheCliReportsWhatItLoweredAndWritesTheCubin) {
  testing::TempDir dir;
  const std::string source = (dir.path() / "mma_probe.cu").string();
  testing::write_file(source, kMmaKernel);
  const std::string cubin = (dir.path() / "mma_probe.cubin").string();
  auto run = tmemjit_test::run_cli("emulate", source, "-o", cubin, "--json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("\"tcgen05.mma\": "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("\"entry\": \"mma_probe\""), std::string::npos) << run.out;
  EXPECT_EQ(testing::read_file(cubin).rfind("\x7f"
                                            "ELF",
                                            0),
            0u);
  const std::string lowered = (dir.path() / "lowered.ptx").string();
  auto ptx = tmemjit_test::run_cli("emulate", source, "-o", lowered);
  ASSERT_EQ(ptx.exit_code, 0) << ptx.err;
  EXPECT_NE(ptx.out.find("statements lowered"), std::string::npos) << ptx.out;
  EXPECT_NE(testing::read_file(lowered).find(".target sm_90"), std::string::npos);
  auto flags = tmemjit_test::run_cli("emulate", lowered, "-DX=1");
  EXPECT_EQ(flags.exit_code, 2) << flags.err;
  EXPECT_NE(flags.err.find("option of the CUDA front end"), std::string::npos) << flags.err;
}

// ---- on a GPU (label emu) ----

class EmulateEmu : public ::testing::Test {
 protected:
  void SetUp() override {
    where_ = where_to_run();
    if (!where_.skip.empty()) GTEST_SKIP() << where_.skip;
    if (where_.target != Target::kSm90)
      GTEST_SKIP() << "a tcgen05 device runs the kernel itself (label device)";
  }
  Where where_;
};

std::uint16_t bf16(float value) {  // exact for the small integers used here
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, 4);
  return static_cast<std::uint16_t>(bits >> 16);
}

// mma_probe's operands: A (128 x 16) and B (kN x 16) of small integers, (i * mul % mod) - mod / 2
// (bf16 products and f32 sums of them are exact), on the host and the device, and D's check.
struct MmaOperands {
  static constexpr int kN = 64;
  std::vector<float> a = std::vector<float>(128 * 16), b = std::vector<float>(kN * 16);
  driver::DeviceBuffer da, db, dd;
  MmaOperands(int a_mul, int a_mod, int b_mul, int b_mod) {
    for (size_t i = 0; i < a.size(); ++i)
      a[i] = static_cast<float>(int(i) * a_mul % a_mod - a_mod / 2);
    for (size_t i = 0; i < b.size(); ++i)
      b[i] = static_cast<float>(int(i) * b_mul % b_mod - b_mod / 2);
  }
  void upload() {
    std::vector<std::uint16_t> a16(a.size()), b16(b.size());
    for (size_t i = 0; i < a.size(); ++i) a16[i] = bf16(a[i]);
    for (size_t i = 0; i < b.size(); ++i) b16[i] = bf16(b[i]);
    da = driver::DeviceBuffer::alloc(a16.size() * 2).value();
    db = driver::DeviceBuffer::alloc(b16.size() * 2).value();
    dd = driver::DeviceBuffer::alloc(128 * kN * 4).value();
    ASSERT_TRUE(da.upload(a16.data(), a16.size() * 2).ok());
    ASSERT_TRUE(db.upload(b16.data(), b16.size() * 2).ok());
  }
  // D read back from dd equals repeats · A · Bᵀ, element by element.
  void expect_d(int repeats) const {
    std::vector<float> d(128 * kN);
    ASSERT_TRUE(dd.download(d.data(), d.size() * 4).ok());
    for (int m = 0; m < 128; ++m)
      for (int n = 0; n < kN; ++n) {
        float sum = 0;
        for (int k = 0; k < 16; ++k) sum += a[size_t(m * 16 + k)] * b[size_t(n * 16 + k)];
        ASSERT_EQ(d[size_t(m * kN + n)], static_cast<float>(repeats) * sum)
            << "D(" << m << ", " << n << ") after " << repeats << " MMA(s)";
      }
  }
};

TEST_F(EmulateEmu, OwnMmaKernelEqualsTheHostGemmBitForBit) {
  auto emulated = emulate_cuda(mma_source());
  ASSERT_TRUE(emulated.ok()) << emulated.error().full_text();
  MmaOperands x(7, 9, 5, 7);
  ASSERT_NO_FATAL_FAILURE(x.upload());
  for (int repeats : {1, 3}) {
    ASSERT_TRUE(x.dd.fill(0).ok());
    void* args[] = {x.da.arg(), x.db.arg(), x.dd.arg(), &repeats};
    LaunchConfig config;
    config.block = {128, 1, 1};
    Status launched = emulated->kernel.launch(config, args);
    ASSERT_TRUE(launched.ok()) << launched.error().full_text();
    ASSERT_TRUE(driver::synchronize().ok());
    auto check = emulated->kernel.emulation_check();
    ASSERT_TRUE(check.ok()) << check.error().full_text();
    EXPECT_TRUE(check->empty()) << (*check)[0];
    ASSERT_NO_FATAL_FAILURE(x.expect_d(repeats));
  }
}

// A host that knows nothing of the emulation: the standalone cubin loaded and launched through
// the driver alone, three times (each launch's CTAs clear the status the last one left), once as
// a cluster of 2 CTAs (the entry's cluster barrier; both compute the same D).
TEST_F(EmulateEmu, AStandaloneCubinRunsUnderAHostThatBindsNothing) {
  EmulateOptions options;
  options.standalone_ctas = 2;
  auto emulated = emulate_cuda(mma_source(), options);
  ASSERT_TRUE(emulated.ok()) << emulated.error().full_text();
  auto library = driver::LoadedLibrary::load(emulated->kernel.cubin(), Target::kSm90);
  ASSERT_TRUE(library.ok()) << library.error().full_text();
  auto kernel = library->kernel("mma_probe");
  ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
  MmaOperands x(3, 7, 5, 9);
  ASSERT_NO_FATAL_FAILURE(x.upload());
  for (int repeats : {2, 1, 3}) {
    ASSERT_TRUE(x.dd.fill(0).ok());
    void* args[] = {x.da.arg(), x.db.arg(), x.dd.arg(), &repeats};
    Status launched = repeats == 1 ? driver::launch_cluster(*kernel, Target::kSm90, {2, 1, 1},
                                                            {128, 1, 1}, 2, 0, nullptr, args)
                                   : driver::launch(*kernel, Target::kSm90, {1, 1, 1}, {128, 1, 1},
                                                    0, nullptr, args);
    ASSERT_TRUE(launched.ok()) << launched.error().full_text();
    ASSERT_TRUE(driver::synchronize().ok());
    ASSERT_NO_FATAL_FAILURE(x.expect_d(repeats));
  }
}

}  // namespace
}  // namespace tmem
