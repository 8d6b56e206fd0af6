// Kernels built from Plans: PTX goldens of the seed's examples, every legal form compiled by
// nvJitLink and ptxas, the SASS holding exactly the plan's STTM/LDTM, and the CUDA C++ form.
#include "kernels/transfer_kernels.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/golden_util.h"
#include "common/spec_fixtures.h"
#include "runtime/compile/backends.h"
#include "runtime/compile/sass.h"
#include "tmem/check.h"

namespace {

using tmem::kernels::KernelKind;
using tmemjit_test::SpecText;

tmem::Plan plan_of(const SpecText& text) { return tmem::check(text.make()).value(); }

std::string roundtrip_ptx(const tmem::Plan& plan, KernelKind kind = KernelKind::kRoundtrip,
                          tmem::Target target = tmem::Target::kSm100a) {
  return tmem::ptx::print(tmem::kernels::build_kernel(plan, kind, target).value()).value();
}

using tmemjit_test::expect_golden;  // tests/common/golden_util.h

TEST(KernelsGolden, SeedLayoutB) {
  expect_golden("seed_layout_b.ptx", roundtrip_ptx(plan_of(tmemjit_test::seed_layout_b(true))));
}
TEST(KernelsGolden, SeedPack) {
  expect_golden("seed_pack.ptx", roundtrip_ptx(plan_of(tmemjit_test::seed_pack(true))));
}
TEST(KernelsGolden, SeedSplit) {
  expect_golden("seed_split.ptx", roundtrip_ptx(plan_of(tmemjit_test::seed_split(false))));
}

TEST(Kernels, EqualSpecsGiveByteIdenticalPtx) {
  const auto text = tmemjit_test::seed_layout_b(true);
  for (KernelKind kind :
       {KernelKind::kRoundtrip, KernelKind::kStore, KernelKind::kLoad, KernelKind::kFill})
    EXPECT_EQ(roundtrip_ptx(plan_of(text), kind), roundtrip_ptx(plan_of(text), kind));
}

TEST(Kernels, LifecycleIsComplete) {
  const std::string ptx = roundtrip_ptx(plan_of(tmemjit_test::seed_layout_b(true)));
  auto position = [&](const std::string& needle) { return ptx.find(needle); };
  // alloc -> fence/bar/fence -> st -> wait::st -> ld -> wait::ld -> fence/bar/fence -> dealloc ->
  // relinquish
  const char* order[] = {
      "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [tmem_base_address], 64;",
      "tcgen05.fence::before_thread_sync;",
      "bar.sync 0;",
      "tcgen05.fence::after_thread_sync;",
      "tcgen05.st.sync.aligned.32x32b.x64.b32",
      "tcgen05.wait::st.sync.aligned;",
      "tcgen05.ld.sync.aligned.32x32b.x64.b32",
      "tcgen05.wait::ld.sync.aligned;",
      "tcgen05.dealloc.cta_group::1.sync.aligned.b32",
      "tcgen05.relinquish_alloc_permit"};
  size_t last = 0;
  for (const char* step : order) {
    size_t at = ptx.find(step, last);
    ASSERT_NE(at, std::string::npos) << step << " missing or out of order";
    last = at;
  }
  EXPECT_NE(position(", 64;\n\ttcgen05.relinquish"), std::string::npos)
      << "dealloc frees the allocated 64 columns";
}

TEST(Kernels, TargetsSetTheirVersion) {
  const auto plan = plan_of(tmemjit_test::seed_layout_b(true));
  EXPECT_NE(roundtrip_ptx(plan, KernelKind::kRoundtrip, tmem::Target::kSm110a)
                .find(".version 9.0\n.target sm_110a"),
            std::string::npos);
  EXPECT_NE(roundtrip_ptx(plan, KernelKind::kRoundtrip, tmem::Target::kSm100f)
                .find(".version 8.8\n.target sm_100f"),
            std::string::npos);
}

// The legal forms of one direction, with the SASS mnemonic count each instruction produces.
std::vector<tmem::Opcode> every_store_form() {
  std::vector<tmem::Opcode> forms;
  for (tmem::Shape shape : tmem::all_shapes())
    for (int num = 1; num <= 128; num *= 2)
      for (bool pack : {false, true})
        if (auto op = tmem::Opcode::make(tmem::Direction::kStore, shape, num, pack))
          forms.push_back(*op);
  return forms;
}

TEST(KernelsCompile, EveryFormThroughNvJitLinkAndPtxasWithExactSass) {
  auto tool = tmem::sass::find_disassembler();
  int compiled = 0;
  for (const tmem::Opcode& op : every_store_form()) {
    const auto plan = plan_of(tmemjit_test::identity_spec(op));
    const std::string ptx = roundtrip_ptx(plan);
    tmem::CompileOptions options;
    options.backend = tmem::Backend::kNvJitLink;
    auto via_nvjitlink = tmem::compile_ptx(ptx, options);
    ASSERT_TRUE(via_nvjitlink.ok()) << op << ": " << via_nvjitlink.error().full_text();
    options.backend = tmem::Backend::kPtxas;
    auto via_ptxas = tmem::compile_ptx(ptx, options);
    ASSERT_TRUE(via_ptxas.ok()) << op << ": " << via_ptxas.error().full_text();
    ++compiled;
    if (!tool) continue;
    auto sass = tmem::sass::disassemble(*tool, via_nvjitlink->cubin);
    ASSERT_TRUE(sass.ok()) << sass.error().full_text();
    tmem::sass::Listing listing(*sass);
    // One STTM and one LDTM per instruction per warp; 16x32bx2 is two SASS ops (t0_t15, t16_t31).
    const int per_instruction = op.is_split() ? 2 : 1;
    EXPECT_EQ(listing.count("STTM"), plan.instructions_per_warp() * per_instruction) << op;
    EXPECT_EQ(listing.count("LDTM"), plan.instructions_per_warp() * per_instruction) << op;
    EXPECT_FALSE(listing.uses_local_memory()) << op << " spills to local memory";
  }
  EXPECT_EQ(compiled, 74);
  if (!tool)
    GTEST_SKIP() << "compiled 74 forms; SASS not checked: no disassembler ("
                 << tmem::sass::search_description() << ")";
}

// The default route's compiler (auto = nvPTXCompiler where built in): every form's warpgroup
// identity kernel, with the same exact SASS as above.
TEST(KernelsCompile, EveryFormThroughNvPtxCompilerWithExactSass) {
  if (!tmem::nvptxcompiler_built_in())
    GTEST_SKIP() << "libtmemjit was built without nvPTXCompiler (configure found no "
                    "libnvptxcompiler_static.a; see cmake/TmemjitNvPtxCompiler.cmake)";
  auto tool = tmem::sass::find_disassembler();
  tmem::CompileOptions options;
  options.backend = tmem::Backend::kNvPtxCompiler;
  int compiled = 0;
  for (const tmem::Opcode& op : every_store_form()) {
    const auto plan = plan_of(tmemjit_test::identity_spec(op));
    auto module = tmem::compile_ptx(roundtrip_ptx(plan), options);
    ASSERT_TRUE(module.ok()) << op << ": " << module.error().full_text();
    EXPECT_EQ(module->backend, tmem::Backend::kNvPtxCompiler);
    ++compiled;
    if (!tool) continue;
    tmem::sass::Listing listing(tmem::sass::disassemble(*tool, module->cubin).value());
    const int per_instruction = op.is_split() ? 2 : 1;
    EXPECT_EQ(listing.count("STTM"), plan.instructions_per_warp() * per_instruction) << op;
    EXPECT_EQ(listing.count("LDTM"), plan.instructions_per_warp() * per_instruction) << op;
    EXPECT_FALSE(listing.uses_local_memory()) << op << " spills to local memory";
  }
  EXPECT_EQ(compiled, 74);
  if (!tool)
    GTEST_SKIP() << "compiled 74 forms; SASS not checked: no disassembler ("
                 << tmem::sass::search_description() << ")";
}

TEST(KernelsCompile, HarnessKindsCompileWithTheRawPasses) {
  auto tool = tmem::sass::find_disassembler();
  const auto plan = plan_of(tmemjit_test::seed_split(true));
  for (KernelKind kind : {KernelKind::kStore, KernelKind::kLoad, KernelKind::kFill}) {
    auto module = tmem::compile_ptx(roundtrip_ptx(plan, kind), {});
    ASSERT_TRUE(module.ok()) << module.error().full_text();
    if (!tool) continue;
    tmem::sass::Listing listing(tmem::sass::disassemble(*tool, module->cubin).value());
    // The raw pass moves 32 columns (the allocation) with one 32x32b.x32 per warp.
    const int raw = 1;
    const int plan_ops = 2;  // one 16x32bx2 instruction = two SASS ops
    EXPECT_EQ(listing.count("STTM"), kind == KernelKind::kStore ? plan_ops : raw)
        << to_string(kind);
    EXPECT_EQ(listing.count("LDTM"), kind == KernelKind::kLoad ? plan_ops : raw) << to_string(kind);
  }
  if (!tool)
    GTEST_SKIP() << "SASS not checked: no disassembler (" << tmem::sass::search_description()
                 << ")";
}

TEST(KernelsCompile, CudaDeviceFunctionCompilesWithNvrtc) {
  for (const auto& text : {tmemjit_test::seed_layout_b(true), tmemjit_test::seed_pack(false),
                           tmemjit_test::seed_split(true)}) {
    const auto plan = plan_of(text);
    const std::string source =
        tmem::kernels::cuda_device_function(plan) +
        "extern \"C\" __global__ void k(unsigned int base, unsigned int* io) {\n"
        "  unsigned int regs[" +
        std::to_string(plan.regs_per_thread) +
        "];\n"
        "  for (int s = 0; s < " +
        std::to_string(plan.regs_per_thread) +
        "; ++s) regs[s] = io[s];\n"
        "  tmem_transfer(base, regs);\n"
        "  for (int s = 0; s < " +
        std::to_string(plan.regs_per_thread) + "; ++s) io[s] = regs[s];\n}\n";
    EXPECT_NE(source.find("asm volatile(\"" + plan.op.to_string()), std::string::npos);
    auto module = tmem::compile_cuda(source, "k", {});
    ASSERT_TRUE(module.ok()) << module.error().full_text() << "\n" << source;
    EXPECT_FALSE(module->cubin.empty());
  }
}

}  // namespace
