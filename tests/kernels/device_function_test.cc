// The embeddable .func form: its golden, its ABI shape for st and ld, relocatable compiles through
// ptxas and nvPTXCompiler with the plan's SASS, a caller in the same module (whole program) and a
// caller in another module linked through nvJitLink.
#include "kernels/device_function.h"

#include <gtest/gtest.h>
#include <nvJitLink.h>

#include <memory>
#include <string>
#include <vector>

#include "common/elf.h"
#include "common/golden_util.h"
#include "common/spec_fixtures.h"
#include "runtime/compile/backends.h"
#include "runtime/compile/sass.h"
#include "tmem/check.h"

namespace {

using tmemjit_test::SpecText;

tmem::Plan plan_of(const SpecText& text) { return tmem::check(text.make()).value(); }

std::string func_ptx(const tmem::Plan& plan, tmem::Target target = tmem::Target::kSm100a) {
  auto module = tmem::kernels::build_device_function(plan, target);
  EXPECT_TRUE(module.ok()) << module.error().full_text();
  if (!module.ok()) return {};
  return tmem::ptx::print(*module).value();
}

// SASS tcgen05 ops of one function of a cubin.
struct TmemOps {
  int sttm = -1, ldtm = -1;
  bool local_memory = true;
};
TmemOps tmem_ops(const tmem::sass::Disassembler& tool, const std::vector<char>& cubin,
                 const std::string& function) {
  TmemOps ops;
  auto text = tmem::sass::disassemble(tool, cubin);
  EXPECT_TRUE(text.ok()) << text.error().full_text();
  if (!text) return ops;
  const auto listings = tmem::sass::listings_by_function(*text);
  const auto it = listings.find(function);
  EXPECT_NE(it, listings.end()) << function << " is not in the cubin";
  if (it == listings.end()) return ops;
  ops.sttm = it->second.count("STTM");
  ops.ldtm = it->second.count("LDTM");
  ops.local_memory = it->second.uses_local_memory();
  return ops;
}

TEST(DeviceFunctionGolden, SeedLayoutB) {
  tmemjit_test::expect_golden("seed_func.ptx",
                              func_ptx(plan_of(tmemjit_test::seed_layout_b(true))));
}

TEST(DeviceFunction, StoreTakesTheBaseAndOneParameterPerSlot) {
  const tmem::Plan plan = plan_of(tmemjit_test::seed_layout_b(true));
  const std::string ptx = func_ptx(plan);
  EXPECT_NE(
      ptx.find(".visible .func tmem_transfer(\n\t.param .b32 tmem_base,\n\t.param .b32 slot0,"),
      std::string::npos)
      << ptx;
  EXPECT_NE(ptx.find("\t.param .b32 slot" + std::to_string(plan.regs_per_thread - 1) + "\n)"),
            std::string::npos);
  EXPECT_NE(ptx.find("tcgen05.st.sync.aligned.32x32b.x64.b32"), std::string::npos);
  EXPECT_NE(ptx.find("tcgen05.wait::st.sync.aligned;\n\tret;\n}"), std::string::npos);
  EXPECT_EQ(ptx.find("tcgen05.alloc"), std::string::npos) << "the caller owns the allocation";
  EXPECT_EQ(ptx.find(".entry"), std::string::npos);
  EXPECT_EQ(ptx, func_ptx(plan_of(tmemjit_test::seed_layout_b(true)))) << "deterministic";
}

TEST(DeviceFunction, LoadReturnsEverySlotInOneAggregate) {
  const tmem::Plan plan = plan_of(tmemjit_test::seed_layout_b(false));
  ASSERT_TRUE(plan.op.is_load());
  const int bytes = 4 * plan.regs_per_thread;
  const std::string ptx = func_ptx(plan);
  EXPECT_NE(ptx.find(".visible .func (.param .align 4 .b8 regs[" + std::to_string(bytes) +
                     "]) tmem_transfer(\n\t.param .b32 tmem_base\n)"),
            std::string::npos)
      << ptx;
  EXPECT_NE(ptx.find("tcgen05.wait::ld.sync.aligned;\n\tst.param.b32 [regs], "), std::string::npos);
  EXPECT_NE(ptx.find("st.param.b32 [regs+" + std::to_string(bytes - 4) + "], "), std::string::npos);
}

// The 16x32bx2 seed: both directions, with the split immediate, on every target.
TEST(DeviceFunction, SplitFormBuildsForEveryTarget) {
  for (bool store : {true, false})
    for (tmem::Target target : tmem::all_targets()) {
      const std::string ptx = func_ptx(plan_of(tmemjit_test::seed_split(store)), target);
      EXPECT_NE(ptx.find(".target " + std::string(tmem::to_string(target))), std::string::npos);
      EXPECT_NE(ptx.find(", 1048584"), std::string::npos) << "imm = (16 << 16) + 8";
    }
}

// An uncalled .func survives only a relocatable compile (a whole-program one drops it), so the
// embeddable form is compiled with -c, as a user's separate compilation would. Local memory is not
// checked here: an external ABI function saves the callee-saved registers its 32x32b.x64 vector
// occupies (STL/LDL in prologue and epilogue; docs/compile-backends.md). The whole-program test
// below shows the transfer itself needs none.
void expect_relocatable_compile(tmem::Backend backend) {
  const auto tool = tmem::sass::find_disassembler();
  for (const SpecText& text :
       {tmemjit_test::seed_layout_b(true), tmemjit_test::seed_layout_b(false),
        tmemjit_test::seed_pack(true), tmemjit_test::seed_split(false)}) {
    const tmem::Plan plan = plan_of(text);
    SCOPED_TRACE(plan.op.to_string());
    tmem::CompileOptions options;
    options.backend = backend;
    options.extra_options = {"-c"};
    auto module = tmem::compile_ptx(func_ptx(plan), options);
    ASSERT_TRUE(module.ok()) << module.error().full_text();
    const auto sections = tmem::elf::read_sections(module->cubin);
    ASSERT_TRUE(sections.ok()) << sections.error().message();
    EXPECT_GT(tmem::elf::section_size(*sections, ".text.tmem_transfer"), 0u);
    if (!tool) continue;
    const TmemOps ops = tmem_ops(*tool, module->cubin, "tmem_transfer");
    const int expected = plan.instructions_per_warp() * (plan.op.is_split() ? 2 : 1);
    EXPECT_EQ(ops.sttm, plan.op.is_load() ? 0 : expected);
    EXPECT_EQ(ops.ldtm, plan.op.is_load() ? expected : 0);
  }
  if (!tool) GTEST_SKIP() << "compiled; SASS not checked: " << tmem::sass::search_description();
}

TEST(DeviceFunctionCompile, RelocatableThroughPtxas) {
  expect_relocatable_compile(tmem::Backend::kPtxas);
}

TEST(DeviceFunctionCompile, RelocatableThroughNvPtxCompiler) {
  if (!tmem::nvptxcompiler_built_in())
    GTEST_SKIP()
        << "libtmemjit was built without nvPTXCompiler (see cmake/TmemjitNvPtxCompiler.cmake)";
  expect_relocatable_compile(tmem::Backend::kNvPtxCompiler);
}

// A user's kernel that calls the .func (st): it allocates, passes its registers and frees.
// Written as text: it stands for user code, not for libtmemjit.
std::string store_caller_entry(const tmem::Plan& plan) {
  std::string call = "\t\tcall.uni tmem_transfer, (p_base";
  std::string params = "\t\t.param .b32 p_base;\n\t\tst.param.b32 [p_base], %r1;\n";
  for (int s = 0; s < plan.regs_per_thread; ++s) {
    call += ", p" + std::to_string(s);
    params += "\t\t.param .b32 p" + std::to_string(s) + ";\n\t\tst.param.b32 [p" +
              std::to_string(s) + "], %r0;\n";
  }
  return "\n.shared .align 4 .b32 base_smem[1];\n\n"
         ".visible .entry user_kernel()\n.maxntid 128, 1, 1\n{\n"
         "\t.reg .b32 %r<3>;\n\t.reg .pred %p<1>;\n"
         "\tmov.u32 %r0, %tid.x;\n\tshr.u32 %r2, %r0, 5;\n\tsetp.ne.u32 %p0, %r2, 0;\n"
         "\t@%p0 bra.uni $after_alloc;\n"
         "\ttcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [base_smem], " +
         std::to_string(plan.alloc_columns) +
         ";\n$after_alloc:\n"
         "\ttcgen05.fence::before_thread_sync;\n\tbar.sync "
         "0;\n\ttcgen05.fence::after_thread_sync;\n"
         "\tld.shared.u32 %r1, [base_smem];\n\t{\n" +
         params + call +
         ");\n\t}\n"
         "\ttcgen05.fence::before_thread_sync;\n\tbar.sync "
         "0;\n\ttcgen05.fence::after_thread_sync;\n"
         "\t@%p0 bra.uni $end;\n"
         "\ttcgen05.dealloc.cta_group::1.sync.aligned.b32 %r1, " +
         std::to_string(plan.alloc_columns) +
         ";\n\ttcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n$end:\n\tret;\n}\n";
}

struct LinkDeleter {
  void operator()(nvJitLinkHandle* handle) const {
    if (*handle != nullptr) nvJitLinkDestroy(handle);
    delete handle;
  }
};

std::string link_error_log(nvJitLinkHandle handle) {
  size_t size = 0;
  std::string log;
  if (nvJitLinkGetErrorLogSize(handle, &size) == NVJITLINK_SUCCESS && size > 1) {
    log.resize(size);
    nvJitLinkGetErrorLog(handle, log.data());
  }
  return log;
}

// The caller as a module of its own, declaring the .func extern.
std::string store_caller_module(const tmem::Plan& plan) {
  std::string decl = ".extern .func tmem_transfer(.param .b32 tmem_base";
  for (int s = 0; s < plan.regs_per_thread; ++s) decl += ", .param .b32 slot" + std::to_string(s);
  return ".version 8.6\n.target sm_100a\n.address_size 64\n\n" + decl + ");\n" +
         store_caller_entry(plan);
}

// Caller and .func in one module, compiled as a whole program: the call is internal and the
// transfer needs no local memory.
void expect_whole_program_caller(tmem::Backend backend) {
  const tmem::Plan plan = plan_of(tmemjit_test::seed_layout_b(true));
  tmem::CompileOptions options;
  options.backend = backend;
  auto module = tmem::compile_ptx(func_ptx(plan) + store_caller_entry(plan), options);
  ASSERT_TRUE(module.ok()) << module.error().full_text();
  EXPECT_EQ(tmem::elf::max_frame_size(module->cubin).value(), 0u) << "no local memory";
  const auto tool = tmem::sass::find_disassembler();
  if (!tool) GTEST_SKIP() << "compiled; SASS not checked: " << tmem::sass::search_description();
  const tmem::sass::Listing listing(tmem::sass::disassemble(*tool, module->cubin).value());
  EXPECT_EQ(listing.count("STTM"), plan.instructions_per_warp());
  EXPECT_FALSE(listing.uses_local_memory());
}

TEST(DeviceFunctionCompile, CallerInTheSameModuleThroughPtxas) {
  expect_whole_program_caller(tmem::Backend::kPtxas);
}

TEST(DeviceFunctionCompile, CallerInTheSameModuleThroughNvPtxCompiler) {
  if (!tmem::nvptxcompiler_built_in())
    GTEST_SKIP()
        << "libtmemjit was built without nvPTXCompiler (see cmake/TmemjitNvPtxCompiler.cmake)";
  expect_whole_program_caller(tmem::Backend::kNvPtxCompiler);
}

TEST(DeviceFunctionCompile, CallerInAnotherModuleLinksThroughNvJitLink) {
  const tmem::Plan plan = plan_of(tmemjit_test::seed_layout_b(true));
  const std::string func = func_ptx(plan);
  const std::string caller = store_caller_module(plan);
  std::unique_ptr<nvJitLinkHandle, LinkDeleter> handle(new nvJitLinkHandle{});
  const char* options[] = {"-arch=sm_100a"};
  ASSERT_EQ(nvJitLinkCreate(handle.get(), 1, options), NVJITLINK_SUCCESS);
  ASSERT_EQ(nvJitLinkAddData(*handle, NVJITLINK_INPUT_PTX, func.data(), func.size(), "func.ptx"),
            NVJITLINK_SUCCESS)
      << link_error_log(*handle);
  ASSERT_EQ(
      nvJitLinkAddData(*handle, NVJITLINK_INPUT_PTX, caller.data(), caller.size(), "caller.ptx"),
      NVJITLINK_SUCCESS)
      << link_error_log(*handle) << "\n"
      << caller;
  ASSERT_EQ(nvJitLinkComplete(*handle), NVJITLINK_SUCCESS) << link_error_log(*handle);
  size_t size = 0;
  ASSERT_EQ(nvJitLinkGetLinkedCubinSize(*handle, &size), NVJITLINK_SUCCESS);
  std::vector<char> cubin(size);
  ASSERT_EQ(nvJitLinkGetLinkedCubin(*handle, cubin.data()), NVJITLINK_SUCCESS);
  const auto sections = tmem::elf::read_sections(cubin);
  ASSERT_TRUE(sections.ok()) << sections.error().message();
  EXPECT_GT(tmem::elf::section_size(*sections, ".text.user_kernel"), 0u);
  const auto tool = tmem::sass::find_disassembler();
  if (!tool) GTEST_SKIP() << "linked; SASS not checked: " << tmem::sass::search_description();
  auto text = tmem::sass::disassemble(*tool, cubin);
  ASSERT_TRUE(text.ok()) << text.error().full_text();
  const tmem::sass::Listing listing(*text);
  EXPECT_EQ(listing.count("STTM"), plan.instructions_per_warp()) << "the callee's one st";
}

}  // namespace
