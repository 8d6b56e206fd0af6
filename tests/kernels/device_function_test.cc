// The embeddable .func form: its golden, its ABI shape for st and ld, relocatable compiles through
// ptxas and nvPTXCompiler with the plan's SASS, a caller in the same module (whole program) and a
// caller in another module linked through nvJitLink. The contract's geometry (NAME_shape,
// NAME_columns, NAME_alloc_columns) and the names a transfer may not take.
#include "kernels/device_function.h"

#include <gtest/gtest.h>
#include <nvJitLink.h>

#include <algorithm>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "common/elf.h"
#include "common/golden_util.h"
#include "common/spec_fixtures.h"
#include "runtime/compile/backends.h"
#include "runtime/compile/sass.h"
#include "tmem/cache.h"
#include "tmem/check.h"
#include "tmem/coords.h"
#include "tmem/select.h"
#include "tmem/specialize.h"

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

// ---- geometry in the contract (issue 29 item 3) -----------------------------------------------

tmem::kernels::TransferCode code_of(const tmem::TransferSpec& spec, const std::string& name,
                                    bool column_argument = false) {
  tmem::DeviceFunctionOptions options;
  options.name = name;
  options.column_argument = column_argument;
  auto code = tmem::kernels::prepare_transfer(spec, options);
  EXPECT_TRUE(code.ok()) << code.error().full_text();
  return std::move(code).value();
}

tmem::TransferSpec load_of(const std::string& tmem, const std::string& regs,
                           const std::string& scope = "warpgroup", int budget = 0) {
  auto selection = tmem::select(tmem::Direction::kLoad, tmem::Scope::parse(scope).value(),
                                tmem::View::parse(tmem).value(), tmem::View::parse(regs).value(),
                                {.register_budget = budget});
  EXPECT_TRUE(selection.ok()) << selection.error().full_text();
  return std::move(selection).value().spec;
}

TEST(DeviceFunctionGeometry, ShapeColumnsAndAllocationBesideRegs) {
  const auto code = code_of(tmemjit_test::seed_layout_b(false).make(), "acc");
  for (tmem::Target target : {tmem::Target::kSm100a, tmem::Target::kSm90}) {
    for (const std::string& text : {tmem::kernels::cuda_transfer(code, target)}) {
      EXPECT_NE(text.find("constexpr int acc_regs = 64;\n"), std::string::npos) << text;
      EXPECT_NE(text.find("__device__ constexpr int acc_shape[2] = {64, 128};"), std::string::npos)
          << text;
      EXPECT_NE(text.find("constexpr int acc_columns = 64;"), std::string::npos);
      EXPECT_NE(text.find("constexpr int acc_alloc_columns = 64;"), std::string::npos);
    }
  }
}

TEST(DeviceFunctionGeometry, ColumnsAreWhatOneCallSpans) {
  struct Case {
    tmem::TransferSpec spec;
    int columns, alloc;
  };
  const std::string rows = "tensor((128,32), S[(128,32):(1@tid_in_wg,1)], f32)";
  const Case cases[] = {
      // FA4's chunk of S: 32 columns from column 0.
      {load_of("tensor((128,32), S[(128,32):(1@TLane,1@TCol)], f32)", rows), 32, 32},
      // The same chunk at columns 64..95 spans 32 columns, but needs 128 allocated.
      {load_of("tensor((128,32), S[(128,32):(1@TLane,1@TCol)] + 64@TCol, f32)", rows), 32, 128},
      // Eight warps: warpgroup 1 at columns 32..63.
      {load_of("tensor((2,128,32), S[(2,128,32):(32@TCol,1@TLane,1@TCol)], f32)"
               ".rearrange(\"w r c -> (w r) c\")",
               "tensor((2,128,32), S[(2,128,32):(128@tx,1@tx,1)], f32)"
               ".rearrange(\"w r c -> (w r) c\")",
               "cta:8"),
       64, 64},
      // Packed 16-bit halves: one element per cell.
      {tmemjit_test::seed_pack(false).make(), 128, 128},
  };
  for (const Case& c : cases) {
    const tmem::Plan plan = tmem::check(c.spec).value();
    EXPECT_EQ(tmem::kernels::columns_spanned(plan), c.columns) << c.spec.to_string();
    EXPECT_EQ(plan.alloc_columns, c.alloc) << c.spec.to_string();
  }
}

TEST(DeviceFunctionGeometry, TheNewNamesAreTransferSymbols) {
  const auto symbols = tmem::kernels::transfer_symbols("acc");
  for (const char* name : {"acc_shape", "acc_columns", "acc_alloc_columns"})
    EXPECT_NE(std::ranges::find(symbols, name), symbols.end()) << name;
}

// A kernel that assumes its layout: a chunk loop unrolled on acc_columns, a static_assert on the
// tile's width. NVRTC compiles it for a layout that fits, with one LDTM per chunk and no local
// memory; for one that does not, the compile fails with the kernel's own message.
std::string chunk_kernel(const std::string& transfer) {
  return tmem::kernels::cuda_lifecycle(tmem::Target::kSm100a) + transfer + R"(
static_assert(s_chunk_shape[1] == 32, "this epilogue takes 32-column chunks of S");
static_assert(4 * s_chunk_columns <= 512, "four chunks fit TMEM");
extern "C" __global__ void __launch_bounds__(128) row_max(float* out) {
  __shared__ unsigned int base_shared;
  if (threadIdx.x / 32 == 0) tmemjit::alloc(&base_shared, 4 * s_chunk_columns);
  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
  float best = -1e30f;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    float s[s_chunk_regs];
    s_chunk(base_shared, s, j * s_chunk_columns);
    s_chunk_wait();
#pragma unroll
    for (int r = 0; r < s_chunk_regs; ++r) best = fmaxf(best, s[r]);
  }
  out[threadIdx.x] = best * s_chunk_shape[threadIdx.x % 2];
  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
  if (threadIdx.x / 32 == 0) tmemjit::dealloc(base_shared, 4 * s_chunk_columns);
}
)";
}

TEST(DeviceFunctionGeometry, AKernelUnrollsOnTheConstantsAndStaticAssertsItsLayout) {
  const std::string rows = "tensor((128,32), S[(128,32):(1@tid_in_wg,1)], f32)";
  const auto fits = code_of(load_of("tensor((128,32), S[(128,32):(1@TLane,1@TCol)], f32)", rows),
                            "s_chunk", true);
  tmem::CompileOptions options;
  auto module = tmem::compile_cuda(
      chunk_kernel(tmem::kernels::cuda_transfer(fits, tmem::Target::kSm100a)), "row_max", options);
  ASSERT_TRUE(module.ok()) << module.error().full_text();
  EXPECT_EQ(tmem::elf::max_frame_size(module->cubin).value(), 0u) << "no local memory";
  // A 64-column layout: the kernel says so at compile time.
  const auto wide = code_of(load_of("tensor((128,64), S[(128,64):(1@TLane,1@TCol)], f32)",
                                    "tensor((128,64), S[(128,64):(1@tid_in_wg,1)], f32)"),
                            "s_chunk", true);
  auto misfit = tmem::compile_cuda(
      chunk_kernel(tmem::kernels::cuda_transfer(wide, tmem::Target::kSm100a)), "row_max", options);
  ASSERT_FALSE(misfit.ok());
  EXPECT_NE(misfit.error().full_text().find("this epilogue takes 32-column chunks of S"),
            std::string::npos)
      << misfit.error().full_text();
  const auto tool = tmem::sass::find_disassembler();
  if (!tool) GTEST_SKIP() << "compiled; SASS not checked: " << tmem::sass::search_description();
  const tmem::sass::Listing listing(tmem::sass::disassemble(*tool, module->cubin).value());
  EXPECT_EQ(listing.count("LDTM"), 4) << "one per chunk, unrolled";
  EXPECT_FALSE(listing.uses_local_memory());
}

// The same kernel through compile_kernel, as users write it: `#include <tmemjit/transfers.cuh>`
// and the layout chosen at run time; the misfit is refused with the kernel's own message.
TEST(DeviceFunctionGeometry, CompileKernelGivesTheConstantsToTheUsersKernel) {
  const tmem::CacheOptions saved = tmem::cache_options();
  tmem::CacheOptions off = saved;
  off.enabled = false;
  tmem::set_cache_options(off);
  std::string source = chunk_kernel("");
  const std::string lifecycle = tmem::kernels::cuda_lifecycle(tmem::Target::kSm100a);
  source = "#include <tmemjit/transfers.cuh>\n" + source.substr(lifecycle.size());
  auto compile = [&](const std::string& tmem, const std::string& regs) {
    tmem::DeviceFunctionOptions options;
    options.name = "s_chunk";
    options.column_argument = true;
    const tmem::NamedTransfer transfers[] = {{load_of(tmem, regs), options}};
    return tmem::compile_kernel(tmem::KernelSource{tmem::Language::kCuda, source, "row_max"},
                                transfers);
  };
  auto fits = compile("tensor((128,32), S[(128,32):(1@TLane,1@TCol)], f32)",
                      "tensor((128,32), S[(128,32):(1@tid_in_wg,1)], f32)");
  auto misfit = compile("tensor((128,64), S[(128,64):(1@TLane,1@TCol)], f32)",
                        "tensor((128,64), S[(128,64):(1@tid_in_wg,1)], f32)");
  tmem::set_cache_options(saved);
  ASSERT_TRUE(fits.ok()) << fits.error().full_text();
  ASSERT_FALSE(misfit.ok());
  EXPECT_NE(misfit.error().full_text().find("this epilogue takes 32-column chunks of S"),
            std::string::npos)
      << misfit.error().full_text();
  const auto tool = tmem::sass::find_disassembler();
  if (!tool) GTEST_SKIP() << "compiled; SASS not checked: " << tmem::sass::search_description();
  const tmem::sass::Listing listing(tmem::sass::disassemble(*tool, fits->cubin()).value());
  EXPECT_EQ(listing.count("LDTM"), 4) << "one per chunk, unrolled";
  EXPECT_FALSE(listing.uses_local_memory());
}

// ---- N_coord names both halves of a 16-bit register (issue 29 item 1) --------------------------

std::int64_t evaluate(const tmem::kernels::CoordTerms& terms, int thread, int slot) {
  std::int64_t value = terms.constant;
  for (size_t b = 0; b < terms.thread_bits.size(); ++b)
    if (thread >> b & 1) value += terms.thread_bits[b];
  for (size_t b = 0; b < terms.slot_bits.size(); ++b)
    if (slot >> b & 1) value += terms.slot_bits[b];
  return value;
}

std::vector<tmem::TransferSpec> sixteen_bit_specs() {
  const auto wg = tmem::Scope::warpgroup();
  std::vector<tmem::TransferSpec> specs;
  for (auto direction : {tmem::Direction::kStore, tmem::Direction::kLoad})
    for (const char* tmem : {"tensor((128,32), S[(128,32):(1@TLane,1@TCol)], bf16)",
                             "tensor((128,32), S[(128,32):(1@TLane,2@TCol)], bf16)"}) {
      auto selection = tmem::select(
          direction, wg, tmem::View::parse(tmem).value(),
          tmem::View::parse("tensor((128,32), S[(128,32):(1@tid_in_wg,1)], bf16)").value());
      EXPECT_TRUE(selection.ok()) << selection.error().full_text();
      specs.push_back(selection->spec);
    }
  // FA4's P of a 16x256b load (Layout F): the 16x128b twin.
  specs.push_back(
      tmem::packed_twin(load_of("tmem_datapath_layout(\"F\",64,64)",
                                "tensor((64,64), S[(4,2,8,8,4,2):(32@tid_in_wg,2,4@tid_in_wg,4,"
                                "1@tid_in_wg,1)], f32)"),
                        tmem::DType::kBF16)
          .value());
  return specs;
}

TEST(DeviceFunctionCoord16Bit, TheHighHalfHasAClosedFormEqualToTheTable) {
  for (const tmem::TransferSpec& spec : sixteen_bit_specs()) {
    SCOPED_TRACE(spec.to_string());
    const auto code = code_of(spec, "p");
    const tmem::kernels::CoordMap& map = code.coord;
    ASSERT_EQ(map.halves, 2);
    ASSERT_TRUE(map.high.expressible);
    ASSERT_TRUE(map.high.additive);
    const tmem::CoordTable table = tmem::coord_table(spec).value();
    int checked = 0;
    for (int t = 0; t < map.threads; ++t)
      for (int s = 0; s < map.slots; ++s) {
        if (!map.slot_used(s)) continue;
        for (int d = 0; d < map.rank; ++d) {
          ASSERT_EQ(evaluate(map.dims[static_cast<size_t>(d)], t, s), table.at(t, s, 0, d));
          ASSERT_EQ(evaluate(map.high.dims[static_cast<size_t>(d)], t, s), table.at(t, s, 1, d));
        }
        ++checked;
      }
    EXPECT_GT(checked, 0);
    const std::string half_head =
        "void p_coord(unsigned int thread, int slot, int half, int (&index)[2])";
    EXPECT_NE(tmem::kernels::cuda_transfer(code, tmem::Target::kSm100a).find(half_head),
              std::string::npos);
  }
  // 32-bit views have no half overload.
  const auto b32 = code_of(tmemjit_test::seed_layout_b(false).make(), "acc");
  EXPECT_EQ(tmem::kernels::cuda_transfer(b32, tmem::Target::kSm100a).find("int half"),
            std::string::npos);
}

// P over S in a kernel: S loaded as f32, P = S packed to bf16x2 and stored with the twin; each
// thread names both halves of P's registers with p_coord(thread, q, half, index). NVRTC compiles
// it with no local memory.
TEST(DeviceFunctionCoord16Bit, AKernelNamesBothHalves) {
  const auto s_spec = load_of("tensor((128,32), S[(128,32):(1@TLane,1@TCol)], f32)",
                              "tensor((128,32), S[(128,32):(1@tid_in_wg,1)], f32)");
  const auto s_code = code_of(s_spec, "s_load");
  const auto p_code = code_of(tmem::packed_twin(s_spec, tmem::DType::kBF16).value(), "p_store");
  const std::string kernel = tmem::kernels::cuda_lifecycle(tmem::Target::kSm100a) +
                             tmem::kernels::cuda_transfer(s_code, tmem::Target::kSm100a) +
                             tmem::kernels::cuda_transfer(p_code, tmem::Target::kSm100a) + R"(
static_assert(2 * p_store_regs == s_load_regs, "P packs two of S's registers into one");
extern "C" __global__ void __launch_bounds__(128) softmax_p(int* where) {
  __shared__ unsigned int base_shared;
  if (threadIdx.x / 32 == 0) tmemjit::alloc(&base_shared, s_load_alloc_columns);
  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
  float s[s_load_regs];
  s_load(base_shared, s);
  unsigned int p[p_store_regs];
#pragma unroll
  for (int q = 0; q < p_store_regs; ++q) {
    unsigned int lo, hi;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(*reinterpret_cast<unsigned short*>(&lo)) : "f"(s[2 * q]));
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(*reinterpret_cast<unsigned short*>(&hi)) : "f"(s[2 * q + 1]));
    p[q] = (lo & 0xFFFFu) | (hi << 16);
    int low[2], high[2];
    p_store_coord(threadIdx.x, q, 0, low);
    p_store_coord(threadIdx.x, q, 1, high);
    where[(threadIdx.x * p_store_regs + q) * 4 + 0] = low[1];
    where[(threadIdx.x * p_store_regs + q) * 4 + 1] = high[1];
  }
  p_store(base_shared, p);
  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
  if (threadIdx.x / 32 == 0) tmemjit::dealloc(base_shared, s_load_alloc_columns);
}
)";
  tmem::CompileOptions options;
  auto module = tmem::compile_cuda(kernel, "softmax_p", options);
  ASSERT_TRUE(module.ok()) << module.error().full_text();
  const auto tool = tmem::sass::find_disassembler();
  if (!tool) GTEST_SKIP() << "compiled; SASS not checked: " << tmem::sass::search_description();
  const tmem::sass::Listing listing(tmem::sass::disassemble(*tool, module->cubin).value());
  EXPECT_EQ(listing.count("LDTM"), 1);
  EXPECT_EQ(listing.count("STTM"), 1);
  EXPECT_FALSE(listing.uses_local_memory());
}

// ---- reserved names (issue 30 item 12) ---------------------------------------------------------

TEST(DeviceFunctionNames, TypesNamespacesAndTheGeneratedCodesIdentifiersAreRefused) {
  for (const char* name : {"uint32_t", "int32_t", "size_t", "std", "float", "float4", "uint2",
                           "dim3", "cute", "tmem_base", "regs", "warp", "column", "thread", "slot",
                           "index", "bits_", "taddr_", "emu"}) {
    const tmem::Status status = tmem::kernels::check_identifier(name);
    ASSERT_FALSE(status.ok()) << name;
    EXPECT_EQ(status.error().code(), tmem::ErrorCode::kUsage);
    EXPECT_EQ(status.error().message().rfind("transfer name '" + std::string(name) + "' ", 0), 0u)
        << status.error().message();
  }
  EXPECT_NE(tmem::kernels::check_identifier("regs").error().message().find("generated code"),
            std::string::npos);
  EXPECT_NE(tmem::kernels::check_identifier("uint32_t").error().message().find("type or namespace"),
            std::string::npos);
  for (const char* name : {"acc", "s_chunk", "float5", "regs2", "p_store", "threads"})
    EXPECT_TRUE(tmem::kernels::check_identifier(name).ok()) << name;
}

// The identifiers of C++ source outside string literals and comments.
std::set<std::string> identifiers_of(const std::string& source) {
  std::string code;
  bool in_string = false, in_comment = false;
  for (size_t i = 0; i < source.size(); ++i) {
    const char c = source[i];
    if (in_comment) {
      if (c == '\n') in_comment = false, code += c;
      continue;
    }
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      code += ' ';
      continue;
    }
    if (c == '/' && i + 1 < source.size() && source[i + 1] == '/') {
      in_comment = true;
      continue;
    }
    if (c == '"') in_string = true;
    code += c;
  }
  std::set<std::string> out;
  static const std::regex kWord("[A-Za-z_][A-Za-z0-9_]*");
  for (auto it = std::sregex_iterator(code.begin(), code.end(), kWord);
       it != std::sregex_iterator(); ++it) {
    const auto at = static_cast<size_t>(it->position());
    if (at > 0 && code[at - 1] >= '0' && code[at - 1] <= '9') continue;  // 64u, 0xFFFFu
    out.insert(it->str());
  }
  return out;
}

// Every identifier the generated code uses, in every form (both targets, the compile_kernel
// sides, the emulated PTX functions, a CTA pair's lifecycle), is a transfer symbol of the name,
// a keyword or built-in, or a name check_identifier refuses: so no name a user may choose can
// collide with it.
TEST(DeviceFunctionNames, EveryIdentifierOfTheGeneratedCodeIsRefusedAsAName) {
  std::vector<tmem::kernels::TransferCode> codes;
  for (bool store : {true, false}) {
    codes.push_back(code_of(tmemjit_test::seed_layout_b(store).make(), "acc", true));
    codes.push_back(code_of(tmemjit_test::seed_pack(store).make(), "acc"));
  }
  codes.push_back(code_of(sixteen_bit_specs().front(), "acc"));
  codes.push_back(code_of(tmem::TransferSpec::from_fields(
                              "tcgen05.ld.red.sync.aligned.32x32b.x8.max.abs.f32", "warpgroup",
                              "tensor((128,16), S[(128,16):(1@TLane,1@TCol)], f32)"
                              ".rearrange(\"(g l) (k c) -> g k l c\", g=4, k=2)",
                              "tensor((128,16), S[(128,16):(1@tid_in_wg,1)], f32)"
                              ".rearrange(\"(g l) (k c) -> g k l c\", g=4, k=2)")
                              .value(),
                          "acc"));
  std::string sources;
  for (auto& code : codes) {
    code.options.warp_argument = true;
    for (tmem::Target target : {tmem::Target::kSm100a, tmem::Target::kSm90}) {
      sources += tmem::kernels::cuda_transfer(code, target);
      for (int group : {1, 2}) sources += tmem::kernels::cuda_lifecycle(target, false, group);
    }
    sources += tmem::kernels::cuda_emulated_ptx_functions({&code});
  }
  const auto symbols = tmem::kernels::transfer_symbols("acc");
  // What C++ and CUDA define, and the emulated PTX form's aggregates (named after the transfer).
  const std::set<std::string> language = {"acc_regs_t",
                                          "acc_coord_t",
                                          "asm",
                                          "volatile",
                                          "unsigned",
                                          "int",
                                          "float",
                                          "bool",
                                          "const",
                                          "constexpr",
                                          "static_cast",
                                          "reinterpret_cast",
                                          "long",
                                          "void",
                                          "return",
                                          "if",
                                          "for",
                                          "else",
                                          "switch",
                                          "case",
                                          "break",
                                          "default",
                                          "true",
                                          "false",
                                          "namespace",
                                          "struct",
                                          "extern",
                                          "inline",
                                          "static_assert",
                                          "nullptr",
                                          "threadIdx",
                                          "blockIdx",
                                          "blockDim",
                                          "gridDim",
                                          "x",
                                          "y",
                                          "z",
                                          "define",
                                          "ifndef",
                                          "endif",
                                          "TMEMJIT_LIFECYCLE_DEFINED",
                                          "memory",
                                          "attribute",
                                          "always_inline"};
  std::vector<std::string> unrefused;
  for (const std::string& word : identifiers_of(sources)) {
    if (word.rfind("__", 0) == 0 || word.rfind("tmemjit", 0) == 0) continue;
    if (std::ranges::find(symbols, word) != symbols.end() || language.count(word)) continue;
    if (tmem::kernels::check_identifier(word).ok()) unrefused.push_back(word);
  }
  EXPECT_TRUE(unrefused.empty()) << ::testing::PrintToString(unrefused);
}

}  // namespace
