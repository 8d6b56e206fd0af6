// The compiler backends: every legal opcode through nvJitLink and nvPTXCompiler, a representative
// set through ptxas and NVRTC, the driver JIT, every target, error contents, kept files, SASS
// counts and the code-size comparison.
#include "runtime/compile/backends.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/elf.h"
#include "common/ptx_fixtures.h"
#include "runtime/compile/sass.h"
#include "runtime/cuda/driver.h"
#include "runtime/ptx/ir.h"
#include "runtime/support/subprocess.h"

namespace tmem {
namespace {

constexpr int kNums[] = {1, 2, 4, 8, 16, 32, 64, 128};

std::vector<Opcode> all_legal_opcodes() {
  std::vector<Opcode> out;
  for (Shape shape : all_shapes())
    for (int num : kNums)
      for (bool pack : {false, true})
        for (Direction dir : {Direction::kLoad, Direction::kStore})
          if (auto opcode = Opcode::make(dir, shape, num, pack)) out.push_back(*opcode);
  return out;
}

// Each shape with the smallest and the largest .num, plain and packed, ld and st.
std::vector<Opcode> representative_opcodes() {
  std::vector<Opcode> out;
  for (Shape shape : all_shapes()) {
    int largest = 1;
    for (int num : kNums)
      if (Opcode::make(Direction::kLoad, shape, num, false)) largest = num;
    for (int num : {1, largest})
      for (bool pack : {false, true})
        for (Direction dir : {Direction::kLoad, Direction::kStore})
          out.push_back(Opcode::make(dir, shape, num, pack).value());
  }
  return out;
}

std::string ptx_of(const ptx::Module& module) {
  auto text = ptx::print(module);
  EXPECT_TRUE(text.ok()) << text.error().full_text();
  return text.ok() ? *text : std::string();
}

CompileOptions with_backend(Backend backend, Target target = Target::kSm100a) {
  CompileOptions options;
  options.backend = backend;
  options.target = target;
  return options;
}

// The single-opcode kernel of every legal opcode through `backend`.
struct OpcodeCubin {
  Opcode opcode;
  Result<CompiledModule> module;
};
std::vector<OpcodeCubin> opcode_cubins(Backend backend) {
  std::vector<OpcodeCubin> out;
  for (const Opcode& opcode : all_legal_opcodes())
    out.push_back({opcode, compile_ptx(ptx_of(testing::single_opcode_kernel(opcode)),
                                       with_backend(backend))});
  return out;
}

// Requires nvPTXCompiler in the library; skips with the reason otherwise.
#define TMEMJIT_REQUIRE_NVPTXCOMPILER()                                             \
  if (!nvptxcompiler_built_in())                                                    \
  GTEST_SKIP() << "libtmemjit was built without nvPTXCompiler (configure found no " \
                  "libnvptxcompiler_static.a; scripts/common.sh installs the "      \
                  "nvidia-nvptxcompiler wheel, or set TMEMJIT_NVPTXCOMPILER_ROOT)"

// Whether libcuda.so.1 can be opened (the driver backend needs it).
bool driver_present() {
  static const bool present = [] {
    void* handle = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) ::dlclose(handle);
    return handle != nullptr;
  }();
  return present;
}

// SASS counts of a cubin: tcgen05 ops and local-memory use, from the listing and the ELF.
struct SassFacts {
  int sttm = 0, ldtm = 0;
  bool local_memory = false;
  std::uint32_t frame_bytes = 0;
};
SassFacts sass_facts(const sass::Disassembler& tool, const std::vector<char>& cubin) {
  SassFacts facts;
  auto text = sass::disassemble(tool, cubin);
  EXPECT_TRUE(text.ok()) << text.error().full_text();
  if (!text) return facts;
  const sass::Listing listing(*text);
  facts.sttm = listing.count("STTM");
  facts.ldtm = listing.count("LDTM");
  facts.local_memory = listing.uses_local_memory();
  facts.frame_bytes = elf::max_frame_size(cubin).value();
  return facts;
}

// Requires a disassembler; skips with the reason otherwise.
#define TMEMJIT_REQUIRE_DISASSEMBLER(tool)     \
  const auto tool = sass::find_disassembler(); \
  if (!tool) GTEST_SKIP() << sass::search_description()

// ---- names, versions ----------------------------------------------------------------------------

TEST(Backend, NamesRoundTrip) {
  for (Backend b : all_backends()) EXPECT_EQ(parse_backend(to_string(b)).value(), b);
  auto bad = parse_backend("nvcc");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), ErrorCode::kUsage);
  EXPECT_NE(bad.error().message().find("nvjitlink, ptxas, nvrtc, driver, nvptxcompiler, auto"),
            std::string::npos);
  EXPECT_EQ(all_backends().size(), 6u);
  EXPECT_EQ(all_backends().back(), Backend::kAuto);
}

TEST(Backend, AutoIsTheDefaultAndResolvesBeforeCompiling) {
  EXPECT_EQ(CompileOptions{}.backend, Backend::kAuto);
  const Backend expected = nvptxcompiler_built_in() ? Backend::kNvPtxCompiler : Backend::kNvJitLink;
  EXPECT_EQ(resolve_backend(Backend::kAuto), expected);
  for (Backend b : all_backends()) {
    if (b != Backend::kAuto) {
      EXPECT_EQ(resolve_backend(b), b);
    }
  }
  EXPECT_EQ(backend_options(Backend::kAuto, {}), backend_options(expected, {}));
  auto module = compile_ptx(ptx_of(testing::seed_roundtrip_kernel()), {});
  ASSERT_TRUE(module.ok()) << module.error().full_text();
  EXPECT_EQ(module->backend, expected) << "the module names the backend that ran";
  RecordProperty("auto", std::string(to_string(expected)));
}

TEST(Backend, OptionsText) {
  CompileOptions options;
  EXPECT_EQ(to_string(options), "target=sm_100a backend=auto -O3");
  options.backend = Backend::kNvJitLink;
  EXPECT_EQ(to_string(options), "target=sm_100a backend=nvjitlink -O3");
  options.line_info = true;
  options.tmem_access_check = true;
  options.extra_options = {"-maxrregcount=64"};
  EXPECT_EQ(to_string(options),
            "target=sm_100a backend=nvjitlink -O3 -lineinfo -g-tmem-access-check -maxrregcount=64");
  EXPECT_EQ(backend_options(Backend::kNvJitLink, options),
            (std::vector<std::string>{"-arch=sm_100a", "-Xptxas=-O3", "-lineinfo",
                                      "-Xptxas=-g-tmem-access-check", "-maxrregcount=64"}));
  EXPECT_EQ(backend_options(Backend::kPtxas, options),
            (std::vector<std::string>{"-arch=sm_100a", "-O3", "-lineinfo", "-g-tmem-access-check",
                                      "-maxrregcount=64"}));
  // nvPTXCompiler is ptxas as a library and takes its command line.
  EXPECT_EQ(backend_options(Backend::kNvPtxCompiler, options),
            backend_options(Backend::kPtxas, options));
  // The driver JIT gets cuLink options; ptxas' -O3 (its default and highest) is the JIT's 4.
  EXPECT_EQ(backend_options(Backend::kDriver, options),
            (std::vector<std::string>{"CU_JIT_TARGET=sm_100a", "CU_JIT_OPTIMIZATION_LEVEL=4",
                                      "CU_JIT_GENERATE_LINE_INFO=1"}));
  options.opt_level = 1;
  EXPECT_EQ(backend_options(Backend::kDriver, options)[1], "CU_JIT_OPTIMIZATION_LEVEL=1");
}

TEST(Toolchain, VersionsAreReported) {
  const ToolchainVersions& v = toolchain_versions();
  EXPECT_NE(v.nvjitlink, "unavailable");
  EXPECT_NE(v.nvrtc, "unavailable");
  EXPECT_NE(v.ptxas.find("release"), std::string::npos) << v.ptxas;
  if (nvptxcompiler_built_in()) {
    EXPECT_NE(v.nvptxcompiler.find('.'), std::string::npos) << v.nvptxcompiler;
  } else {
    EXPECT_EQ(v.nvptxcompiler, "unavailable");
  }
  RecordProperty("nvptxcompiler", v.nvptxcompiler);
  RecordProperty("nvjitlink", v.nvjitlink);
  RecordProperty("nvrtc", v.nvrtc);
  RecordProperty("ptxas", v.ptxas);
}

// ---- every legal opcode -------------------------------------------------------------------------

void expect_every_legal_opcode_compiles(Backend backend) {
  int compiled = 0;
  for (const OpcodeCubin& c : opcode_cubins(backend)) {
    ASSERT_TRUE(c.module.ok()) << c.opcode.to_string() << "\n" << c.module.error().full_text();
    EXPECT_FALSE(c.module->cubin.empty());
    EXPECT_EQ(c.module->backend, backend);
    EXPECT_EQ(elf::max_frame_size(c.module->cubin).value(), 0u) << "no local memory";
    ++compiled;
  }
  // 5 shapes x 8 nums x 2 packs x 2 directions, less 16x128b.x128 and 16x256b.x64/x128 (rule R4).
  EXPECT_EQ(compiled, 148);
}

TEST(NvJitLink, EveryLegalOpcodeCompilesForSm100a) {
  expect_every_legal_opcode_compiles(Backend::kNvJitLink);
}

TEST(NvPtxCompiler, EveryLegalOpcodeCompilesForSm100a) {
  TMEMJIT_REQUIRE_NVPTXCOMPILER();
  expect_every_legal_opcode_compiles(Backend::kNvPtxCompiler);
}

// One module holding a kernel per opcode, so that one disassembly covers them all.
std::string combined_ptx(const std::vector<Opcode>& opcodes, int threads) {
  ptx::Module m;
  for (const Opcode& opcode : opcodes)
    testing::add_single_opcode_kernel(m, opcode, testing::kernel_name_for(opcode), threads);
  return ptx_of(m);
}

// Every kernel of `cubin` has exactly the opcode's SASS tcgen05 ops (one instruction per warp;
// 16x32bx2 is two ops, t0_t15 and t16_t31) and no local memory.
void expect_one_tmem_op_per_access(const sass::Disassembler& tool, const std::vector<char>& cubin,
                                   const std::vector<Opcode>& opcodes) {
  auto text = sass::disassemble(tool, cubin);
  ASSERT_TRUE(text.ok()) << text.error().full_text();
  const auto listings = sass::listings_by_function(*text);
  for (const Opcode& opcode : opcodes) {
    SCOPED_TRACE(opcode.to_string());
    const auto it = listings.find(testing::kernel_name_for(opcode));
    ASSERT_NE(it, listings.end());
    const int expected = opcode.accesses();
    EXPECT_EQ(it->second.count("STTM"), opcode.is_load() ? 0 : expected);
    EXPECT_EQ(it->second.count("LDTM"), opcode.is_load() ? expected : 0);
    EXPECT_FALSE(it->second.uses_local_memory());
  }
  EXPECT_EQ(elf::max_frame_size(cubin).value(), 0u);
}

TEST(NvJitLink, EveryLegalOpcodeHasOneTmemOpPerAccessAndNoSpills) {
  TMEMJIT_REQUIRE_DISASSEMBLER(tool);
  const std::vector<Opcode> opcodes = all_legal_opcodes();
  auto module = compile_ptx(combined_ptx(opcodes, 32), with_backend(Backend::kNvJitLink));
  ASSERT_TRUE(module.ok()) << module.error().message() << "\n"
                           << module.error().details().substr(0, 4000);
  expect_one_tmem_op_per_access(*tool, module->cubin, opcodes);
}

TEST(NvPtxCompiler, EveryLegalOpcodeHasOneTmemOpPerAccessAndNoSpills) {
  TMEMJIT_REQUIRE_NVPTXCOMPILER();
  TMEMJIT_REQUIRE_DISASSEMBLER(tool);
  const std::vector<Opcode> opcodes = all_legal_opcodes();
  auto module = compile_ptx(combined_ptx(opcodes, 32), with_backend(Backend::kNvPtxCompiler));
  ASSERT_TRUE(module.ok()) << module.error().message() << "\n"
                           << module.error().details().substr(0, 4000);
  expect_one_tmem_op_per_access(*tool, module->cubin, opcodes);
}

TEST(Ptxas, RepresentativeOpcodesCompileFor128Threads) {
  for (const Opcode& opcode : representative_opcodes()) {
    SCOPED_TRACE(opcode.to_string());
    auto module = compile_ptx(ptx_of(testing::single_opcode_kernel(opcode, Target::kSm100a, 128)),
                              with_backend(Backend::kPtxas));
    ASSERT_TRUE(module.ok()) << module.error().full_text();
    EXPECT_EQ(module->backend, Backend::kPtxas);
  }
}

TEST(Ptxas, RepresentativeOpcodesHaveOneTmemOpPerAccessAndNoSpills) {
  TMEMJIT_REQUIRE_DISASSEMBLER(tool);
  const std::vector<Opcode> opcodes = representative_opcodes();
  auto module = compile_ptx(combined_ptx(opcodes, 128), with_backend(Backend::kPtxas));
  ASSERT_TRUE(module.ok()) << module.error().message();
  expect_one_tmem_op_per_access(*tool, module->cubin, opcodes);
}

// The CUDA C++ form: a kernel with the opcode in inline asm, one warp.
std::string cuda_single_opcode_kernel(const Opcode& opcode, const std::string& name) {
  const int n = opcode.regs_per_thread();
  const int ncols = testing::alloc_columns_for(opcode);
  const std::string imm =
      opcode.is_split() ? ", " + std::to_string(*testing::contiguous_split_imm(opcode)) : "";
  std::string vec, operands;
  for (int k = 0; k < n; ++k) {
    const int index = opcode.is_load() ? k : k + 1;
    vec += (k ? ", %" : "%") + std::to_string(index);
    operands += std::string(k ? ", " : "") + (opcode.is_load() ? "\"=r\"(v[" : "\"r\"(v[") +
                std::to_string(k) + "])";
  }
  std::string src =
      "extern \"C\" __global__ void __launch_bounds__(32) " + name +
      "(unsigned* out) {\n"
      "  __shared__ unsigned tmem_base;\n"
      "  unsigned v[" +
      std::to_string(n) +
      "];\n"
      "  asm volatile(\"tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], " +
      std::to_string(ncols) +
      ";\" :: \"r\"((unsigned)__cvta_generic_to_shared(&tmem_base)));\n"
      "  asm volatile(\"tcgen05.fence::before_thread_sync;\");\n"
      "  __syncthreads();\n"
      "  asm volatile(\"tcgen05.fence::after_thread_sync;\");\n"
      "  const unsigned taddr = tmem_base;\n";
  if (opcode.is_load()) {
    src += "  asm volatile(\"" + opcode.to_string() + " {" + vec + "}, [%" + std::to_string(n) +
           "]" + imm + ";\" : " + operands +
           " : \"r\"(taddr) : \"memory\");\n"
           "  asm volatile(\"tcgen05.wait::ld.sync.aligned;\" ::: \"memory\");\n"
           "  for (int k = 0; k < " +
           std::to_string(n) + "; ++k) out[threadIdx.x * " + std::to_string(n) + " + k] = v[k];\n";
  } else {
    src += "  for (int k = 0; k < " + std::to_string(n) +
           "; ++k) v[k] = threadIdx.x + k;\n"
           "  asm volatile(\"" +
           opcode.to_string() + " [%0]" + imm + ", {" + vec + "};\" :: \"r\"(taddr), " + operands +
           " : \"memory\");\n"
           "  asm volatile(\"tcgen05.wait::st.sync.aligned;\" ::: \"memory\");\n";
  }
  src +=
      "  asm volatile(\"tcgen05.fence::before_thread_sync;\");\n"
      "  __syncthreads();\n"
      "  asm volatile(\"tcgen05.fence::after_thread_sync;\");\n"
      "  asm volatile(\"tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, " +
      std::to_string(ncols) +
      ";\" :: \"r\"(taddr));\n"
      "  asm volatile(\"tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\");\n"
      "}\n";
  return src;
}

// Each shape, ld and st, x4 (16x64b packed), as CUDA C++ kernels in one NVRTC program.
struct NvrtcCase {
  std::vector<Opcode> opcodes;
  std::string first_kernel;
  Result<CompiledModule> module = Error(ErrorCode::kInternal, "not compiled");
};
const NvrtcCase& nvrtc_case() {
  static const NvrtcCase c = [] {
    NvrtcCase out;
    std::string source;
    for (Shape shape : all_shapes())
      for (Direction dir : {Direction::kLoad, Direction::kStore}) {
        out.opcodes.push_back(Opcode::make(dir, shape, 4, shape == Shape::k16x64b).value());
        source += cuda_single_opcode_kernel(out.opcodes.back(),
                                            testing::kernel_name_for(out.opcodes.back()));
      }
    out.first_kernel = testing::kernel_name_for(out.opcodes.front());
    out.module = compile_cuda(source, out.first_kernel, with_backend(Backend::kNvrtc));
    return out;
  }();
  return c;
}

TEST(Nvrtc, RepresentativeOpcodesCompileAsCudaCxx) {
  const NvrtcCase& c = nvrtc_case();
  ASSERT_TRUE(c.module.ok()) << c.module.error().full_text();
  EXPECT_EQ(c.module->backend, Backend::kNvrtc);
  EXPECT_EQ(c.module->entry_name, c.first_kernel);
  EXPECT_EQ(elf::max_frame_size(c.module->cubin).value(), 0u);
}

TEST(Nvrtc, RepresentativeOpcodesHaveOneTmemOpPerAccessAndNoSpills) {
  TMEMJIT_REQUIRE_DISASSEMBLER(tool);
  const NvrtcCase& c = nvrtc_case();
  ASSERT_TRUE(c.module.ok()) << c.module.error().full_text();
  expect_one_tmem_op_per_access(*tool, c.module->cubin, c.opcodes);
}

// ---- targets ------------------------------------------------------------------------------------

TEST(Targets, SeedKernelCompilesForEveryTargetWithItsVersion) {
  std::vector<Backend> backends = {Backend::kNvJitLink, Backend::kPtxas};
  if (nvptxcompiler_built_in()) backends.push_back(Backend::kNvPtxCompiler);
  for (Target target : all_targets())
    for (Backend backend : backends) {
      SCOPED_TRACE(std::string(to_string(target)) + " " + std::string(to_string(backend)));
      auto module = compile_ptx(ptx_of(testing::seed_roundtrip_kernel(target)),
                                with_backend(backend, target));
      ASSERT_TRUE(module.ok()) << module.error().full_text();
      EXPECT_EQ(module->target, target);
    }
}

TEST(Targets, PtxForOneArchDoesNotCompileForAnother) {
  // sm_100a PTX cannot be compiled to sm_103a ("cannot be compiled to future architecture").
  auto module = compile_ptx(ptx_of(testing::seed_roundtrip_kernel(Target::kSm100a)),
                            with_backend(Backend::kPtxas, Target::kSm103a));
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.error().code(), ErrorCode::kToolchain);
}

// ---- failures -----------------------------------------------------------------------------------

// A kernel with a shape that only tcgen05.cp has (rule R2), which the IR refuses to express.
std::string bad_ptx() {
  ptx::Module m;
  ptx::Function& f = m.add_function(ptx::Function::Kind::kEntry, "bad_kernel");
  const ptx::Reg r = f.new_reg(ptx::RegClass::kB32);
  f.emit(ptx::Instruction::mov(ptx::Type::kU32, r, ptx::Operand::imm(0)));
  f.emit(ptx::Instruction::unchecked_raw("tcgen05.ld.sync.aligned.32x128b.x1.b32 {%r0}, [%r0]"));
  f.emit(ptx::Instruction::ret());
  return ptx_of(m);
}

void expect_full_failure(const Error& error, const std::string& stage, const std::string& input) {
  EXPECT_EQ(error.code(), ErrorCode::kToolchain);
  EXPECT_EQ(error.message().rfind(stage + " failed: ", 0), 0u) << error.message();
  EXPECT_NE(error.details().find("options: "), std::string::npos);
  EXPECT_NE(error.details().find("-arch=sm_100a"), std::string::npos);
  EXPECT_NE(error.details().find("log:\n"), std::string::npos);
  EXPECT_NE(error.details().find(input), std::string::npos) << "the input is kept in the details";
}

TEST(Errors, NvJitLinkFailureCarriesStageLogOptionsAndPtx) {
  const std::string ptx = bad_ptx();
  auto module = compile_ptx(ptx, with_backend(Backend::kNvJitLink));
  ASSERT_FALSE(module.ok());
  expect_full_failure(module.error(), "nvjitlink link", ptx);
  EXPECT_NE(module.error().details().find("32x128b"), std::string::npos) << "the log names it";
}

TEST(Errors, PtxasFailureCarriesStageLogOptionsAndPtx) {
  const std::string ptx = bad_ptx();
  auto module = compile_ptx(ptx, with_backend(Backend::kPtxas));
  ASSERT_FALSE(module.ok());
  expect_full_failure(module.error(), "ptxas", ptx);
  EXPECT_NE(module.error().message().find("error"), std::string::npos)
      << "the first error line is in the message: " << module.error().message();
}

TEST(Errors, NvrtcFailureCarriesStageLogOptionsAndSource) {
  const std::string source = "extern \"C\" __global__ void k() { this is not c++; }\n";
  auto module = compile_cuda(source, "k", with_backend(Backend::kNvrtc));
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.error().code(), ErrorCode::kToolchain);
  EXPECT_EQ(module.error().message().rfind("nvrtc compile failed: ", 0), 0u);
  EXPECT_NE(module.error().details().find("--gpu-architecture=sm_100a"), std::string::npos);
  EXPECT_NE(module.error().details().find(source), std::string::npos);
}

TEST(Errors, MissingPtxasIsAToolchainError) {
  ::setenv("TMEMJIT_PTXAS", "/nonexistent/ptxas", 1);
  auto module =
      compile_ptx(ptx_of(testing::seed_roundtrip_kernel()), with_backend(Backend::kPtxas));
  ::unsetenv("TMEMJIT_PTXAS");
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.error().code(), ErrorCode::kToolchain);
  EXPECT_NE(module.error().message().find("/nonexistent/ptxas"), std::string::npos);
}

TEST(Errors, NvPtxCompilerFailureCarriesStageLogOptionsAndPtx) {
  TMEMJIT_REQUIRE_NVPTXCOMPILER();
  const std::string ptx = bad_ptx();
  auto module = compile_ptx(ptx, with_backend(Backend::kNvPtxCompiler));
  ASSERT_FALSE(module.ok());
  expect_full_failure(module.error(), "nvptxcompiler compile", ptx);
  EXPECT_NE(module.error().details().find("32x128b"), std::string::npos) << "the log names it";
  EXPECT_NE(module.error().message().find("error"), std::string::npos) << module.error().message();
}

TEST(Errors, NvPtxCompilerNotBuiltInIsAToolchainError) {
  if (nvptxcompiler_built_in())
    GTEST_SKIP() << "this libtmemjit has nvPTXCompiler; NvPtxCompiler.* and "
                    "Errors.NvPtxCompilerFailureCarriesStageLogOptionsAndPtx cover it";
  auto module =
      compile_ptx(ptx_of(testing::seed_roundtrip_kernel()), with_backend(Backend::kNvPtxCompiler));
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.error().code(), ErrorCode::kToolchain);
  EXPECT_EQ(module.error().message().rfind("nvptxcompiler failed: this libtmemjit was built "
                                           "without nvPTXCompiler",
                                           0),
            0u)
      << module.error().message();
}

// ---- the driver's JIT
// -----------------------------------------------------------------------------

TEST(DriverBackend, WithoutADriverTheErrorSaysSo) {
  if (driver_present())
    GTEST_SKIP() << "a CUDA driver is installed; DriverBackend.CompilesTheSeedKernelForSm100a "
                    "runs instead";
  const std::string ptx = ptx_of(testing::seed_roundtrip_kernel());
  auto module = compile_ptx(ptx, with_backend(Backend::kDriver));
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.error().code(), ErrorCode::kDriver);
  EXPECT_EQ(module.error().message().rfind(
                "driver jit failed: no CUDA driver: libcuda.so.1 could not be loaded (", 0),
            0u)
      << module.error().message();
  EXPECT_NE(module.error().details().find("backend: driver\noptions: CU_JIT_TARGET=sm_100a "
                                          "CU_JIT_OPTIMIZATION_LEVEL=4\n"),
            std::string::npos)
      << module.error().details();
  EXPECT_NE(module.error().details().find(ptx), std::string::npos) << "the PTX is kept";
}

TEST(DriverBackend, RefusesPtxasOptionsItCannotPass) {
  CompileOptions options = with_backend(Backend::kDriver);
  options.tmem_access_check = true;
  auto module = compile_ptx(ptx_of(testing::seed_roundtrip_kernel()), options);
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.error().code(), ErrorCode::kUsage);
  EXPECT_NE(module.error().message().find("-g-tmem-access-check"), std::string::npos)
      << module.error().message();
  options.tmem_access_check = false;
  options.extra_options = {"-maxrregcount=64"};
  module = compile_ptx(ptx_of(testing::seed_roundtrip_kernel()), options);
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.error().code(), ErrorCode::kUsage);
}

// The driver JIT compiles for any target it knows, whatever the device: cuLinkCreate gets
// CU_JIT_TARGET, so an sm_90 machine can build sm_100a code. A driver older than the target (or
// one whose JIT refuses it) is reported by the skip with the driver's own words.
TEST(DriverBackend, CompilesTheSeedKernelForSm100a) {
  if (!driver_present()) GTEST_SKIP() << "no CUDA driver (libcuda.so.1) on this machine";
  if (Status ready = driver::ensure_driver(); !ready.ok()) GTEST_SKIP() << ready.error().message();
  if (Result<int> device = driver::current_device(); !device.ok())
    GTEST_SKIP() << "no usable device for a JIT context: " << device.error().message();
  const std::string ptx = ptx_of(testing::seed_roundtrip_kernel());
  auto module = compile_ptx(ptx, with_backend(Backend::kDriver));
  if (!module.ok() && module.error().code() == ErrorCode::kToolchain &&
      (module.error().message().find("cuLinkCreate: ") != std::string::npos ||
       module.error().message().find("UNSUPPORTED_PTX_VERSION") != std::string::npos ||
       module.error().message().find("JIT_COMPILER_NOT_FOUND") != std::string::npos))
    GTEST_SKIP() << "the driver's JIT refuses sm_100a (driver "
                 << (driver::driver_version().ok() ? *driver::driver_version() : 0)
                 << "): " << module.error().message();
  ASSERT_TRUE(module.ok()) << module.error().full_text();
  EXPECT_EQ(module->backend, Backend::kDriver);
  const auto sections = elf::read_sections(module->cubin);
  ASSERT_TRUE(sections.ok()) << sections.error().message();
  EXPECT_GT(elf::section_size(*sections, ".text.tmem_roundtrip"), 0u);
  EXPECT_EQ(elf::max_frame_size(module->cubin).value(), 0u);
  RecordProperty("driver_kernel_text",
                 static_cast<int>(elf::section_size(*sections, ".text.tmem_roundtrip")));
  std::printf(
      "driver jit: cubin %zu B, .text.tmem_roundtrip %llu B, %.1f ms\n", module->cubin.size(),
      (unsigned long long)elf::section_size(*sections, ".text.tmem_roundtrip"), module->compile_ms);
  const auto tool = sass::find_disassembler();
  if (!tool) GTEST_SKIP() << "compiled; SASS not checked: " << sass::search_description();
  const SassFacts facts = sass_facts(*tool, module->cubin);
  EXPECT_EQ(facts.sttm, 1);
  EXPECT_EQ(facts.ldtm, 1);
  EXPECT_FALSE(facts.local_memory);
}

TEST(Errors, NvrtcBackendTakesCudaNotPtxAndOptLevelIsChecked) {
  auto module =
      compile_ptx(ptx_of(testing::seed_roundtrip_kernel()), with_backend(Backend::kNvrtc));
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.error().code(), ErrorCode::kUsage);
  CompileOptions options;
  options.opt_level = 4;
  auto bad = compile_ptx(ptx_of(testing::seed_roundtrip_kernel()), options);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), ErrorCode::kUsage);
}

// ---- options ------------------------------------------------------------------------------------

std::map<std::string, std::uintmax_t> files_in(const std::filesystem::path& dir) {
  std::map<std::string, std::uintmax_t> out;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    out[entry.path().extension().string()] = entry.file_size();
  return out;
}

TEST(Options, KeepDirHoldsPtxCubinLogAndSass) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tmemjit-keep-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  CompileOptions options;
  options.keep_dir = dir.string();
  auto module = compile_ptx(ptx_of(testing::seed_roundtrip_kernel()), options);
  ASSERT_TRUE(module.ok()) << module.error().full_text();
  auto files = files_in(dir);
  EXPECT_EQ(files[".ptx"], module->ptx.size());
  EXPECT_EQ(files[".cubin"], module->cubin.size());
  EXPECT_TRUE(files.count(".log"));
  EXPECT_EQ(files.count(".sass"), sass::find_disassembler() ? 1u : 0u);

  // A failing compile keeps its PTX and the log (with the details).
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string ptx = bad_ptx();
  ASSERT_FALSE(compile_ptx(ptx, options).ok());
  files = files_in(dir);
  EXPECT_EQ(files[".ptx"], ptx.size());
  EXPECT_TRUE(files.count(".log"));
  EXPECT_FALSE(files.count(".cubin"));
  std::filesystem::remove_all(dir);
}

TEST(Options, KeepDirIsMadeWhenMissingAndNamedWhenItCannotBe) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("tmemjit-keep-new-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  CompileOptions options;
  options.keep_dir = (root / "nested" / "dir").string();
  auto module = compile_ptx(ptx_of(testing::seed_roundtrip_kernel()), options);
  ASSERT_TRUE(module.ok()) << module.error().full_text();
  EXPECT_TRUE(files_in(options.keep_dir).count(".cubin"));

  // A regular file where the directory belongs: the error names the option and the path.
  const std::string blocker = (root / "file").string();
  ASSERT_TRUE(write_file(blocker, std::string("x")).ok());
  options.keep_dir = blocker + "/dir";
  auto blocked = compile_ptx(ptx_of(testing::seed_roundtrip_kernel()), options);
  ASSERT_FALSE(blocked.ok());
  EXPECT_EQ(blocked.error().code(), ErrorCode::kIo);
  EXPECT_NE(blocked.error().message().find("cannot create keep_dir '" + options.keep_dir + "'"),
            std::string::npos)
      << blocked.error().message();
  std::filesystem::remove_all(root);
}

TEST(Options, TmemAccessCheckAddsGuardrailCode) {
  for (Backend backend : {Backend::kNvJitLink, Backend::kPtxas}) {
    SCOPED_TRACE(std::string(to_string(backend)));
    CompileOptions options = with_backend(backend);
    const std::string ptx = ptx_of(testing::seed_roundtrip_kernel());
    auto plain = compile_ptx(ptx, options);
    options.tmem_access_check = true;
    auto checked = compile_ptx(ptx, options);
    ASSERT_TRUE(plain.ok() && checked.ok());
    const auto plain_code = elf::code_bytes(elf::read_sections(plain->cubin).value());
    const auto checked_code = elf::code_bytes(elf::read_sections(checked->cubin).value());
    EXPECT_GT(checked_code, plain_code);
  }
}

// ---- the seed kernel: size comparison and SASS
// ----------------------------------------------------

// The cuda C++ twin of testing::seed_roundtrip_kernel(), for the NVRTC route.
std::string cuda_seed_roundtrip() {
  std::string st_regs, ld_regs, st_ops, ld_ops;
  for (int k = 0; k < 64; ++k) {
    st_regs += (k ? ", %" : "%") + std::to_string(k + 1);
    ld_regs += (k ? ", %" : "%") + std::to_string(k);
    st_ops += std::string(k ? ", " : "") + "\"r\"(v[" + std::to_string(k) + "])";
    ld_ops += std::string(k ? ", " : "") + "\"=r\"(v[" + std::to_string(k) + "])";
  }
  const Opcode st = Opcode::parse("tcgen05.st.sync.aligned.32x32b.x64.b32").value();
  const Opcode ld = Opcode::parse("tcgen05.ld.sync.aligned.32x32b.x64.b32").value();
  return "extern \"C\" __global__ void __launch_bounds__(128) tmem_roundtrip(const uint4* in, "
         "uint4* out) {\n"
         "  __shared__ unsigned tmem_base;\n"
         "  const unsigned warp = threadIdx.x >> 5;\n"
         "  if (warp == 0) asm volatile(\"tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 "
         "[%0], 64;\" "
         ":: \"r\"((unsigned)__cvta_generic_to_shared(&tmem_base)));\n"
         "  asm volatile(\"tcgen05.fence::before_thread_sync;\");\n"
         "  __syncthreads();\n"
         "  asm volatile(\"tcgen05.fence::after_thread_sync;\");\n"
         "  const unsigned taddr = tmem_base + ((warp & 3) << 21);\n"
         "  unsigned v[64];\n"
         "  for (int k = 0; k < 16; ++k) { uint4 q = in[threadIdx.x * 16 + k]; v[4*k] = q.x; "
         "v[4*k+1] = q.y; v[4*k+2] = q.z; v[4*k+3] = q.w; }\n"
         "  asm volatile(\"" +
         st.to_string() + " [%0], {" + st_regs + "};\" :: \"r\"(taddr), " + st_ops +
         " : \"memory\");\n"
         "  asm volatile(\"tcgen05.wait::st.sync.aligned;\" ::: \"memory\");\n"
         "  asm volatile(\"" +
         ld.to_string() + " {" + ld_regs + "}, [%64];\" : " + ld_ops +
         " : \"r\"(taddr) : \"memory\");\n"
         "  asm volatile(\"tcgen05.wait::ld.sync.aligned;\" ::: \"memory\");\n"
         "  for (int k = 0; k < 16; ++k) out[threadIdx.x * 16 + k] = make_uint4(v[4*k], v[4*k+1], "
         "v[4*k+2], v[4*k+3]);\n"
         "  asm volatile(\"tcgen05.fence::before_thread_sync;\");\n"
         "  __syncthreads();\n"
         "  asm volatile(\"tcgen05.fence::after_thread_sync;\");\n"
         "  if (warp == 0) {\n"
         "    asm volatile(\"tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 64;\" :: "
         "\"r\"(tmem_base));\n"
         "    asm volatile(\"tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\");\n"
         "  }\n"
         "}\n";
}

struct Sizes {
  std::size_t cubin = 0;
  std::uint64_t code = 0;    // all .text.* sections
  std::uint64_t kernel = 0;  // .text.tmem_roundtrip
  double ms = 0;
};
Sizes sizes_of(const CompiledModule& module) {
  const auto sections = elf::read_sections(module.cubin).value();
  return {module.cubin.size(), elf::code_bytes(sections),
          elf::section_size(sections, ".text.tmem_roundtrip"), module.compile_ms};
}

TEST(SeedKernel, SizesPerRoute) {
  const std::string ptx = ptx_of(testing::seed_roundtrip_kernel());
  // Each backend's first compile in this process is its cold time (library initialisation
  // included); the second is warm.
  auto jit = compile_ptx(ptx, with_backend(Backend::kNvJitLink));
  auto jit_warm = compile_ptx(ptx, with_backend(Backend::kNvJitLink));
  auto ptxas = compile_ptx(ptx, with_backend(Backend::kPtxas));
  auto nvrtc = compile_cuda(cuda_seed_roundtrip(), "tmem_roundtrip", with_backend(Backend::kNvrtc));
  ASSERT_TRUE(jit.ok() && jit_warm.ok()) << jit.error().full_text();
  ASSERT_TRUE(ptxas.ok()) << ptxas.error().full_text();
  ASSERT_TRUE(nvrtc.ok()) << nvrtc.error().full_text();
  const Sizes j = sizes_of(*jit), p = sizes_of(*ptxas), n = sizes_of(*nvrtc);
  std::printf("route          cubin  code  kernel .text  cold ms  warm ms\n");
  std::printf("nvjitlink      %5zu  %4llu  %4llu         %7.1f  %7.1f\n", j.cubin,
              (unsigned long long)j.code, (unsigned long long)j.kernel, j.ms, jit_warm->compile_ms);
  std::printf("ptxas          %5zu  %4llu  %4llu         %7.1f\n", p.cubin,
              (unsigned long long)p.code, (unsigned long long)p.kernel, p.ms);
  std::printf("nvrtc (C++)    %5zu  %4llu  %4llu         %7.1f\n", n.cubin,
              (unsigned long long)n.code, (unsigned long long)n.kernel, n.ms);
  RecordProperty("nvjitlink_code", static_cast<int>(j.code));
  RecordProperty("ptxas_code", static_cast<int>(p.code));
  RecordProperty("nvrtc_code", static_cast<int>(n.code));
  // The whole-program routes agree; nvJitLink compiles PTX as relocatable code, which keeps the
  // tcgen05 alloc/dealloc guardrail traps as separate weak functions (docs/compile-backends.md).
  EXPECT_EQ(n.kernel, p.kernel);
  EXPECT_GE(j.kernel, p.kernel);
  if (nvptxcompiler_built_in()) {
    auto nvptx = compile_ptx(ptx, with_backend(Backend::kNvPtxCompiler));
    auto nvptx_warm = compile_ptx(ptx, with_backend(Backend::kNvPtxCompiler));
    ASSERT_TRUE(nvptx.ok() && nvptx_warm.ok()) << nvptx.error().full_text();
    const Sizes c = sizes_of(*nvptx);
    std::printf("nvptxcompiler  %5zu  %4llu  %4llu         %7.1f  %7.1f\n", c.cubin,
                (unsigned long long)c.code, (unsigned long long)c.kernel, c.ms,
                nvptx_warm->compile_ms);
    RecordProperty("nvptxcompiler_code", static_cast<int>(c.code));
    EXPECT_EQ(c.kernel, p.kernel) << "nvPTXCompiler is ptxas in-process: the same code";
    EXPECT_EQ(c.code, p.code);
  }
  // The default route (auto) is at least as compact as plain ptxas (issue 5).
  auto fallback = compile_ptx(ptx, {});
  ASSERT_TRUE(fallback.ok()) << fallback.error().full_text();
  const Sizes d = sizes_of(*fallback);
  std::printf("default (%s) kernel .text %llu B\n",
              std::string(to_string(fallback->backend)).c_str(), (unsigned long long)d.kernel);
  if (!nvptxcompiler_built_in())
    GTEST_SKIP() << "built without nvPTXCompiler, the default route is nvjitlink: " << d.kernel
                 << " B of kernel code against ptxas' " << p.kernel
                 << " B (docs/compile-backends.md); the compactness check needs nvPTXCompiler";
  EXPECT_LE(d.kernel, p.kernel);
  EXPECT_LE(d.code, p.code);
}

TEST(SeedKernel, SassHasOneSttmOneLdtmAndNoSpillsOnEveryRoute) {
  TMEMJIT_REQUIRE_DISASSEMBLER(tool);
  const std::string ptx = ptx_of(testing::seed_roundtrip_kernel());
  std::vector<Result<CompiledModule>> modules;
  modules.push_back(compile_ptx(ptx, with_backend(Backend::kNvJitLink)));
  modules.push_back(compile_ptx(ptx, with_backend(Backend::kPtxas)));
  modules.push_back(compile_cuda(cuda_seed_roundtrip(), "", with_backend(Backend::kNvrtc)));
  if (nvptxcompiler_built_in())
    modules.push_back(compile_ptx(ptx, with_backend(Backend::kNvPtxCompiler)));
  for (const auto& module : modules) {
    ASSERT_TRUE(module.ok()) << module.error().full_text();
    SCOPED_TRACE(std::string(to_string(module->backend)));
    const SassFacts facts = sass_facts(*tool, module->cubin);
    EXPECT_EQ(facts.sttm, 1);  // one tcgen05.st per warp in the plan
    EXPECT_EQ(facts.ldtm, 1);
    EXPECT_FALSE(facts.local_memory);
    EXPECT_EQ(facts.frame_bytes, 0u);
  }
}

// ---- ELF and SASS helpers -----------------------------------------------------------------------

TEST(Elf, ReadsCubinSectionsAndRejectsGarbage) {
  auto module =
      compile_ptx(ptx_of(testing::seed_roundtrip_kernel()), with_backend(Backend::kPtxas));
  ASSERT_TRUE(module.ok());
  auto sections = elf::read_sections(module->cubin);
  ASSERT_TRUE(sections.ok()) << sections.error().message();
  EXPECT_GT(elf::section_size(*sections, ".text.tmem_roundtrip"), 0u);
  EXPECT_GT(elf::section_size(*sections, ".nv.info.tmem_roundtrip"), 0u);
  EXPECT_EQ(elf::section_size(*sections, ".no.such.section"), 0u);
  const std::vector<char> garbage = {'n', 'o', 't', ' ', 'e', 'l', 'f'};
  auto bad = elf::read_sections(garbage);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), ErrorCode::kParse);
  std::vector<char> truncated(module->cubin.begin(), module->cubin.begin() + 80);
  EXPECT_FALSE(elf::read_sections(truncated).ok());
}

// A kernel that must keep a dynamically indexed array in local memory.
std::string local_memory_ptx() {
  ptx::Module m;
  ptx::Function& f = m.add_function(ptx::Function::Kind::kEntry, "uses_stack");
  const std::string& out = f.add_param(ptx::Type::kU64, "uses_stack_out");
  const std::vector<ptx::Reg> r = f.new_regs(ptx::RegClass::kB32, 5);
  const ptx::Reg p = f.new_reg(ptx::RegClass::kB64);
  f.emit(ptx::Instruction::unchecked_raw(".local .align 4 .b32 buf[16]"));
  f.emit(ptx::Instruction::ld_param(ptx::Type::kU64, p, out));
  f.emit(
      ptx::Instruction::mov(ptx::Type::kU32, r[0], ptx::Operand::special(ptx::SpecialReg::kTidX)));
  f.emit(ptx::Instruction::bit_and(ptx::Type::kB32, r[1], r[0], ptx::Operand::imm(15)));
  f.emit(ptx::Instruction::shl(ptx::Type::kB32, r[1], r[1], ptx::Operand::imm(2)));
  f.emit(ptx::Instruction::unchecked_raw("mov.u32 %r2, buf"));
  f.emit(ptx::Instruction::add(ptx::Type::kU32, r[3], r[2], r[1]));
  f.emit(ptx::Instruction::unchecked_raw("st.local.u32 [%r3], %r0"));
  f.emit(ptx::Instruction::unchecked_raw("ld.local.u32 %r4, [buf+4]"));
  f.emit(ptx::Instruction::unchecked_raw("cvta.to.global.u64 %rd0, %rd0"));
  f.emit(ptx::Instruction::st_global(ptx::Operand::addr(p), {r[4]}));
  f.emit(ptx::Instruction::ret());
  return ptx_of(m);
}

TEST(Elf, FrameSizeSeesLocalMemory) {
  auto module = compile_ptx(local_memory_ptx(), with_backend(Backend::kPtxas));
  ASSERT_TRUE(module.ok()) << module.error().full_text();
  EXPECT_GE(elf::max_frame_size(module->cubin).value(), 64u);
  const auto tool = sass::find_disassembler();
  if (!tool) GTEST_SKIP() << "frame size checked; SASS not: " << sass::search_description();
  EXPECT_TRUE(sass::Listing(sass::disassemble(*tool, module->cubin).value()).uses_local_memory());
}

TEST(Sass, ListingCountsMnemonicsWithoutGuards) {
  const sass::Listing listing(
      "        /*0000*/                   LDC R1, c[0x0][0x37c] ;\n"
      "        /*0050*/               @P0 BRA `(.L_x_0) ;\n"
      "        /*04a0*/                   STTM.x64 tmem[UR4], R28 ;\n"
      "        /*04b0*/              @!P1 LDTM.16dp32bit_t0_t15.x4 R4, tmem[UR8] ;\n"
      "        /*04c0*/                   LDTM.16dp32bit_t16_t31.x4 R8, tmem[UR8+0x4] ;\n"
      "        /*04d0*/                   STL.64 [R1], R2 ;\n"
      "        /*0000*/ \t.byte\t0x04, 0x2f\n"
      "  // STTM in a comment\n");
  EXPECT_EQ(listing.mnemonics().size(), 6u);
  EXPECT_EQ(listing.count("STTM"), 1);
  EXPECT_EQ(listing.count("LDTM"), 2);
  EXPECT_EQ(listing.count("LDT"), 0);
  EXPECT_TRUE(listing.uses_local_memory());
}

}  // namespace
}  // namespace tmem
