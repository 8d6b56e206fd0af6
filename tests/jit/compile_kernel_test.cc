// compile_kernel (docs/design.md §Specialization): a user's kernel specialized for transfers chosen
// at run time. Two transfers in one file with the plan's SASS, the front end reused across layouts
// of one register count, memory and disk hits, the errors (the user's file and line, an unknown
// entry, names), the never-called warning, PTX sources, the sm_90 emulation, and
// Kernel::from_cubin.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "common/cache_test_util.h"
#include "common/cli_util.h"
#include "common/files.h"
#include "common/nvrtc_direct.h"
#include "common/ptx_fixtures.h"
#include "common/scoped_env.h"
#include "common/spec_fixtures.h"
#include "ptx_user_kernel.h"
#include "runtime/cache/disk.h"
#include "runtime/cache/module_cache.h"
#include "runtime/compile/precompiled_headers.h"
#include "runtime/compile/sass.h"
#include "runtime/jit/entry_meta.h"
#include "runtime/jit/kernel_context.h"
#include "tmem/cache.h"
#include "tmem/check.h"
#include "tmem/compile.h"
#include "tmem/coords.h"
#include "tmem/jit.h"
#include "tmem/select.h"
#include "tmem/specialize.h"

namespace tmem {
namespace {
using testing::read_file;
using testing::ScopedEnv;

using testing::TempDir;

// A spec of examples/epilogue/layouts: one chunk of the epilogue's tile.
TransferSpec layout(const std::string& name) {
  return TransferSpec::from_json(read_file(std::string(TMEMJIT_SOURCE_DIR) +
                                           "/examples/epilogue/layouts/" + name + ".json"))
      .value();
}

NamedTransfer transfer(TransferSpec spec, std::string name, bool wait = true, bool column = false) {
  DeviceFunctionOptions options;
  options.name = std::move(name);
  options.wait = wait;
  options.column_argument = column;
  return {std::move(spec), options};
}

// st then ld of one tile through two transfers; elements placed by their NAME_coord.
// CompileReport::headers of a prefix's first compile: NVRTC alone, the PCH made in the background
// (TMEMJIT_PCH_CREATE=background, the default).
constexpr const char* kDeferred = "deferred: made in the background for the next layout";

const char* kRoundtripSource = R"(#include <tmemjit/transfers.cuh>

extern "C" __global__ void __launch_bounds__(128) roundtrip(const float* in, float* out) {
  __shared__ unsigned int base_shared;
  if (threadIdx.x / 32 == 0) tmemjit::alloc(&base_shared, 128);
  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
  const unsigned int base = base_shared;
  float regs[acc_st_regs];
#pragma unroll
  for (int s = 0; s < acc_st_regs; ++s) {
    int index[2];
    acc_st_coord(threadIdx.x, s, index);
    regs[s] = index[0] < 0 ? 0.0f : in[index[0] * 128 + index[1]];
  }
  acc_st(base, regs);
  float back[acc_ld_regs];
  acc_ld(base, back);
  acc_ld_wait();
#pragma unroll
  for (int s = 0; s < acc_ld_regs; ++s) {
    int index[2];
    acc_ld_coord(threadIdx.x, s, index);
    if (index[0] >= 0) out[index[0] * 128 + index[1]] = back[s];
  }
  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
  if (threadIdx.x / 32 == 0) tmemjit::dealloc(base, 128);
}
)";

KernelSource roundtrip_source() {
  KernelSource source;
  source.text = kRoundtripSource;
  source.entry = "roundtrip";
  return source;
}

std::vector<NamedTransfer> seed_transfers() {
  return {transfer(tmemjit_test::seed_layout_b(true).make(), "acc_st"),
          transfer(tmemjit_test::seed_layout_b(false).make(), "acc_ld", /*wait=*/false)};
}

struct Counts {
  int ldtm = -1, sttm = -1;
  bool local_memory = true;
  bool checked = false;
};
Counts sass_counts(std::span<const char> cubin) {
  Counts counts;
  const auto tool = sass::find_disassembler();
  if (!tool) return counts;
  auto text = sass::disassemble(*tool, cubin);
  EXPECT_TRUE(text.ok()) << text.error().full_text();
  if (!text) return counts;
  const sass::Listing listing(*text);
  counts.ldtm = listing.count("LDTM");
  counts.sttm = listing.count("STTM");
  counts.local_memory = listing.uses_local_memory();
  counts.checked = true;
  return counts;
}

class CompileKernel : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    saved_ = cache_options();
    set_cache_dir(dir_.path().string());
    ASSERT_TRUE(clear_cache(false).ok());
  }
  void TearDown() override { set_cache_options(saved_); }
  TempDir dir_;
  CacheOptions saved_;
};

TEST_F(CompileKernel, TwoTransfersInOneFileWithThePlansSass) {
  const auto transfers = seed_transfers();
  CompileReport report;
  auto kernel = compile_kernel(roundtrip_source(), transfers, {}, &report);
  ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
  EXPECT_EQ(kernel->name(), "roundtrip");
  EXPECT_FALSE(kernel->emulated());
  EXPECT_EQ(report.cache, CacheSource::kCompiled);
  EXPECT_EQ(report.front_end_cache, CacheSource::kCompiled);
  EXPECT_GT(report.front_end_ms, 0);
  EXPECT_TRUE(report.warnings.empty());
  ASSERT_EQ(report.transfers.size(), 2u);
  EXPECT_EQ(report.transfers[0].name, "acc_st");
  EXPECT_EQ(report.transfers[1].regs_per_thread, 64);
  EXPECT_EQ(report.key.size(), 32u);
  const Counts counts = sass_counts(kernel->cubin());
  if (!counts.checked) GTEST_SKIP() << "compiled; SASS not checked: " << sass::search_description();
  const Plan st = check(transfers[0].spec).value(), ld = check(transfers[1].spec).value();
  EXPECT_EQ(counts.sttm, st.instructions_per_warp());
  EXPECT_EQ(counts.ldtm, ld.instructions_per_warp());
  EXPECT_FALSE(counts.local_memory);
}

// The epilogue with a header before its include of the transfers: what a real kernel (CuTe,
// cuda_bf16.h) looks like to NVRTC's precompiled headers. Precompiled headers live as long as the
// process: `tag` gives each test a prefix of its own, so no test finds another's.
KernelSource epilogue_with_a_header(const std::string& tag) {
  KernelSource source;
  source.text = "// " + tag + "\n#include <cuda_bf16.h>\n" +
                read_file(std::string(TMEMJIT_SOURCE_DIR) + "/examples/epilogue/epilogue.cu");
  source.entry = "epilogue";
  source.path = "epilogue.cu";
  return source;
}

// Every layout is one NVRTC compile of the source with its transfers inline; the parse of the
// headers before the include of tmemjit/transfers.cuh is made once and reused by later layouts,
// also when the register count changes (d_x64 moves 128 registers per thread, the others 64).
// Every layout keeps its plan's LDTM/STTM count and no local memory.
TEST_F(CompileKernel, ANewLayoutReusesTheParsedHeadersAlsoWithANewRegisterCount) {
  const KernelSource source = epilogue_with_a_header("new layouts");
  const struct {
    const char* load;
    const char* store;
    CacheSource front_end;
  } layouts[] = {{"d_x32_ld", "d_x32_st", CacheSource::kCompiled},
                 {"f_16x256b_ld", "f_16x256b_st", CacheSource::kMemory},
                 {"d_x64_ld", "d_x64_st", CacheSource::kMemory}};
  for (const auto& l : layouts) {
    SCOPED_TRACE(l.load);
    const std::vector<NamedTransfer> transfers = {
        transfer(layout(l.load), "acc_load", false, true),
        transfer(layout(l.store), "acc_store", false, true)};
    CompileReport report;
    auto kernel = compile_kernel(source, transfers, {}, &report);
    ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
    EXPECT_EQ(report.cache, CacheSource::kCompiled);
    EXPECT_EQ(report.front_end_cache, l.front_end) << report.headers;
    EXPECT_EQ(report.headers, l.front_end == CacheSource::kCompiled ? kDeferred : "reused");
    wait_background_compiles();  // the precompiled header, for the next layout
    EXPECT_GT(report.front_end_ms, 0);
    EXPECT_GT(report.include_files, 0) << "cuda_bf16.h and what it includes are in the key";
    EXPECT_TRUE(report.log.empty()) << "NVRTC's PCH messages stay out of the log: " << report.log;
    const Counts counts = sass_counts(kernel->cubin());
    if (!counts.checked) continue;
    // The chunk loop loads at two places (the second is dead code where two chunks do not fit
    // in registers, and then the third place loads).
    EXPECT_EQ(counts.ldtm, 2 * check(transfers[0].spec)->instructions_per_warp());
    EXPECT_EQ(counts.sttm, check(transfers[1].spec)->instructions_per_warp());
    EXPECT_FALSE(counts.local_memory);
  }
}

// A source with nothing before the include has no headers to keep: each layout parses it all,
// and the report says so.
TEST_F(CompileKernel, ASourceWithoutHeadersSaysThereWasNothingToPrecompile) {
  KernelSource source;
  source.text = read_file(std::string(TMEMJIT_SOURCE_DIR) + "/examples/epilogue/epilogue.cu");
  source.entry = "epilogue";
  CompileReport report;
  auto kernel = compile_kernel(
      source,
      std::vector<NamedTransfer>{transfer(layout("d_x32_ld"), "acc_load", false, true),
                                 transfer(layout("d_x32_st"), "acc_store", false, true)},
      {}, &report);
  ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
  EXPECT_EQ(report.headers, "none: no header before the transfers");
  EXPECT_EQ(report.front_end_cache, CacheSource::kCompiled);
}

// NVRTC reuses a precompiled header without looking at in-memory headers or files edited since:
// the layout never enters it (the header stop), and an edited header gets a PCH of its own.
TEST_F(CompileKernel, PrecompiledHeadersNeverServeAnotherLayoutOrAnEditedHeader) {
  TempDir include_dir;
  ASSERT_TRUE(include_dir.ok());
  const std::string header = (include_dir.path() / "scale.h").string();
  auto write = [&](const char* text) { std::ofstream(header) << text; };
  write("#define SCALE 5.0f\n");
  KernelSource source;
  source.text = std::string("#include <scale.h>\n") + kRoundtripSource;
  source.entry = "roundtrip";
  // The kernel stores SCALE * in[] through the first transfer: the PTX shows the constant.
  const std::string scaled = "regs[s] = index[0] < 0 ? 0.0f : in[index[0] * 128 + index[1]];";
  source.text.replace(source.text.find(scaled), scaled.size(),
                      "regs[s] = index[0] < 0 ? 0.0f : SCALE * in[index[0] * 128 + index[1]];");
  CompileOptions options;
  options.nvrtc_options = {"-I" + include_dir.path().string()};
  auto compile = [&](const std::vector<NamedTransfer>& transfers, CompileReport& report) {
    auto kernel = compile_kernel(source, transfers, options, &report);
    EXPECT_TRUE(kernel.ok()) << kernel.error().full_text();
    return kernel.ok() ? std::string(kernel->ptx()) : std::string();
  };
  CompileReport first, second, edited;
  const std::string ptx_first = compile(seed_transfers(), first);
  EXPECT_EQ(first.headers, kDeferred);
  EXPECT_NE(ptx_first.find("0f40A00000"), std::string::npos) << "5.0f";
  wait_background_compiles();
  // Another layout of another register count: the header is reused, the layout is its own.
  auto other = seed_transfers();
  other[0] = transfer(layout("d_x32_st"), "acc_st");
  other[1] = transfer(layout("d_x32_ld"), "acc_ld", false);
  const std::string ptx_second = compile(other, second);
  EXPECT_EQ(second.headers, "reused");
  EXPECT_EQ(second.front_end_cache, CacheSource::kMemory);
  const Plan plan = check(other[0].spec).value();
  EXPECT_NE(ptx_second.find(plan.op.to_string()), std::string::npos) << "the new layout's store";
  // The included header edited: a new key and a new parse, never the old constant.
  write("#define SCALE 7.0f\n");
  const std::string ptx_edited = compile(seed_transfers(), edited);
  EXPECT_EQ(edited.cache, CacheSource::kCompiled) << "an edited header is a miss";
  EXPECT_NE(edited.key, first.key);
  EXPECT_EQ(edited.headers, kDeferred);
  EXPECT_NE(ptx_edited.find("0f40E00000"), std::string::npos) << "7.0f";
  EXPECT_EQ(ptx_edited.find("0f40A00000"), std::string::npos) << "5.0f is gone";
}

// Everything before the include of tmemjit/transfers.cuh is precompiled, the user's own code as
// well as their headers (docs/specialization.md, "How a layout compiles"): it keeps the user's
// file name and lines, its #include "x" searches the source's directory, and an error in it names
// the user's file and line.
TEST_F(CompileKernel, YourCodeBeforeTheTransfersIsPrecompiledWithYourLinesAndDirectory) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  testing::write_file(dir.path() / "scale.h", "#define SCALE 3.0f\n");
  const std::string prefix =
      "#include <cuda_bf16.h>\n"
      "#include \"scale.h\"\n"  // no -I: found beside the source
      "__device__ __forceinline__ float scaled(float x) { return SCALE * x; }\n"
      "static_assert(__LINE__ == 4, \"the precompiled part keeps its lines\");\n";
  KernelSource source = roundtrip_source();
  source.text = prefix + source.text;
  const std::string scaled = "regs[s] = index[0] < 0 ? 0.0f : in[index[0] * 128 + index[1]];";
  source.text.replace(source.text.find(scaled), scaled.size(),
                      "regs[s] = index[0] < 0 ? 0.0f : scaled(in[index[0] * 128 + index[1]]);\n"
                      "    static_assert(__LINE__ == 20, \"so does the rest\");");
  source.path = (dir.path() / "kernel.cu").string();
  CompileReport first, second;
  auto a = compile_kernel(source, seed_transfers(), {}, &first);
  ASSERT_TRUE(a.ok()) << a.error().full_text();
  EXPECT_EQ(first.headers, kDeferred);
  wait_background_compiles();
  EXPECT_NE(std::string(a->ptx()).find("0f40400000"), std::string::npos) << "3.0f from scale.h";
  auto other = seed_transfers();
  other[0] = transfer(layout("d_x32_st"), "acc_st");
  other[1] = transfer(layout("d_x32_ld"), "acc_ld", false);
  auto b = compile_kernel(source, other, {}, &second);
  ASSERT_TRUE(b.ok()) << b.error().full_text();
  EXPECT_EQ(second.headers, "reused");
  EXPECT_EQ(second.front_end_cache, CacheSource::kMemory);
  EXPECT_TRUE(second.log.empty()) << second.log;
  EXPECT_TRUE(second.warnings.empty()) << second.warnings[0];  // the prefix is a header

  // The include inside a namespace: a header cannot end there, so only the headers before the
  // first line are precompiled, the kernel is still right, and a warning says what is lost.
  KernelSource nested = source;
  nested.text.replace(
      nested.text.find("#include <tmemjit/transfers.cuh>"), 32,
      "namespace user {\n#include <tmemjit/transfers.cuh>\n}  using namespace user;");
  // Two lines more: the #line after the stop keeps the numbering of the text as given.
  nested.text.replace(nested.text.find("__LINE__ == 20"), 14, "__LINE__ == 22");
  CompileReport nested_report;
  auto c = compile_kernel(nested, seed_transfers(), {}, &nested_report);
  ASSERT_TRUE(c.ok()) << c.error().full_text();
  EXPECT_EQ(nested_report.headers, kDeferred);
  ASSERT_EQ(nested_report.warnings.size(), 1u);
  EXPECT_EQ(nested_report.warnings[0],
            "only the headers before the first line of code of " + source.path +
                " are precompiled: its #include <tmemjit/transfers.cuh> is inside a namespace, a "
                "block or an #if, so the code before it is parsed again for every layout "
                "(docs/specialization.md, \"How a layout compiles\")");

  // An error in the precompiled part names the user's file and line.
  KernelSource broken = source;
  broken.text.replace(broken.text.find("SCALE * x"), 9, "SCALE * y");
  auto error = compile_kernel(broken, seed_transfers());
  ASSERT_FALSE(error.ok());
  EXPECT_NE(error.error().message().find(source.path + "(3): error"), std::string::npos)
      << error.error().full_text();
}

// The precompiled headers a process keeps are bounded (TMEMJIT_PCH_BUDGET_MB): past the budget the
// least recently used is removed as another is created, and its source parses again, correctly.
TEST_F(CompileKernel, PrecompiledHeadersPastTheBudgetAreRemovedAndMadeAgain) {
  struct OnePchAtATime {
    OnePchAtATime() { PchCache::instance().set_budget_bytes(1); }
    ~OnePchAtATime() { PchCache::instance().set_budget_bytes(0); }  // the default again
  } budget;
  auto source_with = [](const std::string& tag) {
    KernelSource source = roundtrip_source();
    source.text = "// " + tag + "\n#include <cuda_bf16.h>\n" + source.text;
    return source;
  };
  const KernelSource a = source_with("budget a"), b = source_with("budget b");
  auto other = seed_transfers();
  other[0] = transfer(layout("d_x32_st"), "acc_st");
  other[1] = transfer(layout("d_x32_ld"), "acc_ld", false);
  CompileReport report;
  ASSERT_TRUE(compile_kernel(a, seed_transfers(), {}, &report).ok());
  EXPECT_EQ(report.headers, kDeferred);
  wait_background_compiles();
  ASSERT_TRUE(compile_kernel(a, other, {}, &report).ok());
  EXPECT_EQ(report.headers, "reused") << "within the budget while it is the only one";
  ASSERT_TRUE(compile_kernel(b, seed_transfers(), {}, &report).ok());
  EXPECT_EQ(report.headers, kDeferred);
  wait_background_compiles();
  // a's PCH was the least recently used: removed when b's was made, so a parses again.
  auto again = compile_kernel(a, other, {}, &report);
  ASSERT_TRUE(again.ok()) << again.error().full_text();
  EXPECT_EQ(report.cache, CacheSource::kMemory) << "the kernel itself is still cached";
  KernelSource a_new_layout = a;
  a_new_layout.text += "// another layout's text\n";
  auto fresh = compile_kernel(a_new_layout, other, {}, &report);
  ASSERT_TRUE(fresh.ok()) << fresh.error().full_text();
  EXPECT_EQ(report.headers, kDeferred) << "made again after its removal";
  const Plan plan = check(other[0].spec).value();
  EXPECT_NE(std::string(fresh->ptx()).find(plan.op.to_string()), std::string::npos);
}

// Fidelity: the epilogue specialized by compile_kernel has, instruction for instruction, the SASS
// NVRTC makes of the same source with device_function's CUDA form pasted in, for every example
// layout, with headers before the transfers (precompiled) and without. (The LTO route it replaced
// changed code outside the transfers: +19% SASS on a production GEMM, docs/specialization.md.)
TEST_F(CompileKernel, SpecializedKernelHasTheInlineFormsSassForEveryExampleLayout) {
  const auto tool = sass::find_disassembler();
  if (!tool) GTEST_SKIP() << "SASS not checked: " << sass::search_description();
  const std::string include = "#include <tmemjit/transfers.cuh>";
  KernelSource source;
  source.text = read_file(std::string(TMEMJIT_SOURCE_DIR) + "/examples/epilogue/epilogue.cu");
  source.entry = "epilogue";
  source.path = "epilogue.cu";
  auto instructions = [&](std::span<const char> cubin) {
    auto text = sass::disassemble(*tool, cubin);
    EXPECT_TRUE(text.ok()) << text.error().full_text();
    return text.ok() ? sass::Listing(*text).mnemonics() : std::vector<std::string>{};
  };
  for (const auto& [load, store, header] :
       {std::tuple{"d_x32_ld", "d_x32_st", ""}, std::tuple{"f_16x256b_ld", "f_16x256b_st", ""},
        std::tuple{"d_x64_ld", "d_x64_st", ""},
        std::tuple{"d_x32_ld", "d_x32_st", "#include <cuda_bf16.h>\n"},
        std::tuple{"d_x64_ld", "d_x64_st", "#include <cuda_bf16.h>\n"}}) {
    SCOPED_TRACE(std::string(load) + (*header ? " with a header" : ""));
    source.text =
        header + read_file(std::string(TMEMJIT_SOURCE_DIR) + "/examples/epilogue/epilogue.cu");
    const std::vector<NamedTransfer> transfers = {
        transfer(layout(load), "acc_load", false, true),
        transfer(layout(store), "acc_store", false, true)};
    auto specialized = compile_kernel(source, transfers);
    ASSERT_TRUE(specialized.ok()) << specialized.error().full_text();
    std::string inline_text = source.text;
    std::string functions;
    for (const NamedTransfer& t : transfers)
      functions += device_function(t.spec, t.options).value().source;
    inline_text.replace(inline_text.find(include), include.size(), functions);
    CompileOptions options;
    options.extra_options = {"--std=c++17", "--include-path=" + toolkit_include_dir()};
    auto by_nvrtc = compile_cuda(inline_text, "", options);
    ASSERT_TRUE(by_nvrtc.ok()) << by_nvrtc.error().full_text();
    const std::vector<std::string> ours = instructions(specialized->cubin());
    const std::vector<std::string> theirs = instructions(by_nvrtc->cubin);
    ASSERT_GT(theirs.size(), 0u);
    EXPECT_EQ(ours, theirs) << "compile_kernel " << ours.size() << " instructions, inline "
                            << theirs.size();
  }
}

// The kernel compile_kernel made of `text` has, byte for byte, the machine code (the entry's .text
// section) NVRTC itself makes of `text` with the transfers pasted in where it includes them,
// called directly with the target, the standard, the toolkit's include directory and `defines`.
void expect_text_is_nvrtcs(const std::string& text, const char* entry,
                           const std::vector<NamedTransfer>& transfers, Target target,
                           const std::vector<std::string>& defines = {}) {
  const std::string include = "#include <tmemjit/transfers.cuh>";
  CompileOptions options;
  options.target = target;
  options.nvrtc_options = defines;
  auto specialized = compile_kernel({Language::kCuda, text, entry, std::string(entry) + ".cu"},
                                    transfers, options);
  ASSERT_TRUE(specialized.ok()) << specialized.error().full_text();
  std::string inline_text = text;
  std::string functions;
  for (const NamedTransfer& t : transfers)
    functions += device_function(t.spec, t.options).value().source;
  inline_text.replace(inline_text.find(include), include.size(), functions);
  std::vector<std::string> nvrtc = {"--gpu-architecture=" + std::string(to_string(target)),
                                    "--std=c++17", "--include-path=" + toolkit_include_dir()};
  nvrtc.insert(nvrtc.end(), defines.begin(), defines.end());
  auto reference = testing::nvrtc_cubin(inline_text, nvrtc);
  ASSERT_TRUE(reference.ok()) << reference.error().full_text();
  const std::string ours = testing::text_bytes(specialized->cubin(), entry);
  const std::string theirs = testing::text_bytes(*reference, entry);
  ASSERT_GT(theirs.size(), 0u);
  EXPECT_EQ(ours.size(), theirs.size());
  EXPECT_TRUE(ours == theirs) << "the .text bytes differ";
}

// Fidelity, byte for byte (issue 39 item 10): the epilogue's .text is NVRTC's of the inline
// source, on sm_100a and sm_100f.
TEST_F(CompileKernel, SpecializedKernelsTextIsNvrtcsOfTheInlineSourceByteForByte) {
  const std::string epilogue =
      read_file(std::string(TMEMJIT_SOURCE_DIR) + "/examples/epilogue/epilogue.cu");
  for (const Target target : {Target::kSm100a, Target::kSm100f}) {
    for (const auto& [load, store] :
         {std::pair{"d_x32_ld", "d_x32_st"}, std::pair{"f_16x256b_ld", "f_16x256b_st"}}) {
      SCOPED_TRACE(std::string(to_string(target)) + " " + load);
      expect_text_is_nvrtcs(epilogue, "epilogue",
                            {transfer(layout(load), "acc_load", false, true),
                             transfer(layout(store), "acc_store", false, true)},
                            target);
    }
  }
}

// The same for the softmax example (examples/softmax): four transfers, among them the bf16 P
// store tmem::packed_twin makes, no wait, chunk columns as arguments, and a -D the kernel needs.
TEST_F(CompileKernel, SoftmaxsTextIsNvrtcsOfTheInlineSourceByteForByte) {
  const std::string softmax =
      read_file(std::string(TMEMJIT_SOURCE_DIR) + "/examples/softmax/softmax.cu");
  struct Chunk {
    const char* name;
    const char* regs;
  };
  for (const Target target : {Target::kSm100a, Target::kSm100f}) {
    for (const Chunk& chunk :
         {Chunk{"32x32b", "tensor((128,32), S[(128,32):(1@tid_in_wg,1)], f32)"},
          Chunk{"16x256b",
                "tensor((128,32), S[(4,2,2,8,4,4,2):(32@tid_in_wg,16,2,4@tid_in_wg,4,"
                "1@tid_in_wg,1)], f32)"}}) {
      SCOPED_TRACE(std::string(to_string(target)) + " " + chunk.name);
      const View tmem = View::parse("tensor((128,32), S[(128,32):(1@TLane,1@TCol)], f32)").value();
      const View regs = View::parse(chunk.regs).value();
      const TransferSpec load =
          select(Direction::kLoad, Scope::warpgroup(), tmem, regs).value().spec;
      const TransferSpec store =
          select(Direction::kStore, Scope::warpgroup(), tmem, regs).value().spec;
      const TransferSpec p_store = packed_twin(load, DType::kBF16).value();
      const Opcode p_load_op =
          Opcode::make(Direction::kLoad, p_store.op().shape(), p_store.op().num(), false).value();
      const TransferSpec p_load =
          TransferSpec::make(p_load_op, p_store.scope(), p_store.tmem(), p_store.regs()).value();
      expect_text_is_nvrtcs(
          softmax, "softmax",
          {transfer(store, "s_store", false, true), transfer(load, "s_load", false, true),
           transfer(p_store, "p_store", false, true), transfer(p_load, "p_load", false, true)},
          target, {"-DSOFTMAX_COLUMNS=128"});
    }
  }
}

// An autotuner compiles its candidate layouts from a pool of threads (the shape
// scripts/sanitize.sh runs under ThreadSanitizer): the source's front end runs once for all of
// them, each layout's kernel once, and every thread gets its layout's one module.
TEST_F(CompileKernel, ThreadsSpecializingLayoutsOfOneSourceShareOneParseOfItsHeaders) {
  // The first compile makes the header itself, so the others wait for it and reuse it (by
  // default they go on without it while it is made: the next test).
  ScopedEnv inline_pch("TMEMJIT_PCH_CREATE", "inline");
  const KernelSource source = epilogue_with_a_header("threads");
  // Three layouts: the first compile parses the headers, the others reuse that parse.
  const std::vector<std::vector<NamedTransfer>> layouts = {
      {transfer(layout("d_x32_ld"), "acc_load", false, true),
       transfer(layout("d_x32_st"), "acc_store", false, true)},
      {transfer(layout("f_16x256b_ld"), "acc_load", false, true),
       transfer(layout("f_16x256b_st"), "acc_store", false, true)},
      {transfer(layout("f_16x256b_ld"), "acc_load", false, true),
       transfer(layout("d_x32_st"), "acc_store", false, true)}};
  constexpr int kThreads = 6;
  struct Seen {
    const char* cubin = nullptr;
    CompileReport report;
    bool ok = false;
  };
  std::vector<std::vector<Seen>> seen(kThreads, std::vector<Seen>(layouts.size()));
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();  // start together
      for (size_t n = 0; n < layouts.size(); ++n) {
        const size_t i = (n + static_cast<size_t>(t)) % layouts.size();
        Seen& mine = seen[t][i];
        auto kernel = compile_kernel(source, layouts[i], {}, &mine.report);
        mine.ok = kernel.ok();
        if (kernel.ok()) mine.cubin = kernel->cubin().data();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  int kernels_compiled = 0, front_ends_compiled = 0;
  for (size_t i = 0; i < layouts.size(); ++i) {
    for (int t = 0; t < kThreads; ++t) {
      const Seen& mine = seen[t][i];
      ASSERT_TRUE(mine.ok) << "thread " << t << ", layout " << i;
      EXPECT_EQ(mine.cubin, seen[0][i].cubin) << "thread " << t << ", layout " << i;
      if (mine.report.cache != CacheSource::kCompiled) continue;
      ++kernels_compiled;
      if (mine.report.front_end_cache == CacheSource::kCompiled) ++front_ends_compiled;
    }
    EXPECT_NE(seen[0][i].cubin, seen[0][(i + 1) % layouts.size()].cubin);
  }
  EXPECT_EQ(kernels_compiled, 3);
  EXPECT_EQ(front_ends_compiled, 1);
  // What the threads built concurrently is what one thread builds alone.
  for (size_t i = 0; i < layouts.size(); ++i) {
    auto concurrent = compile_kernel(source, layouts[i]);
    ASSERT_TRUE(concurrent.ok());
    const std::vector<char> built(concurrent->cubin().begin(), concurrent->cubin().end());
    ASSERT_TRUE(clear_cache(true).ok());
    auto alone = compile_kernel(source, layouts[i]);
    ASSERT_TRUE(alone.ok()) << alone.error().full_text();
    EXPECT_TRUE(
        std::equal(built.begin(), built.end(), alone->cubin().begin(), alone->cubin().end()))
        << "layout " << i;
  }
}

// The first compile of a prefix is as fast as NVRTC alone (issue 41 item 3): it goes without
// precompiled headers while a background job makes them, and later layouts reuse them. Compiles
// that come while the job runs never wait for it; they go without them too.
TEST_F(CompileKernel, AFirstCompileLeavesMakingItsHeadersToTheBackground) {
  const KernelSource source = epilogue_with_a_header("made in the background");
  const std::vector<std::vector<NamedTransfer>> layouts = {
      {transfer(layout("d_x32_ld"), "acc_load", false, true),
       transfer(layout("d_x32_st"), "acc_store", false, true)},
      {transfer(layout("f_16x256b_ld"), "acc_load", false, true),
       transfer(layout("f_16x256b_st"), "acc_store", false, true)},
      {transfer(layout("f_16x256b_ld"), "acc_load", false, true),
       transfer(layout("d_x32_st"), "acc_store", false, true)}};
  std::vector<CompileReport> reports(2);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < reports.size(); ++i)
    threads.emplace_back([&, i] {
      auto kernel = compile_kernel(source, layouts[i], {}, &reports[i]);
      EXPECT_TRUE(kernel.ok()) << kernel.error().full_text();
    });
  for (std::thread& thread : threads) thread.join();
  int deferred = 0;
  for (const CompileReport& report : reports) {
    EXPECT_EQ(report.front_end_cache,
              report.headers == "reused" ? CacheSource::kMemory : CacheSource::kCompiled);
    if (report.headers == kDeferred)
      ++deferred;
    else
      EXPECT_EQ(report.headers, "reused") << "a thread that came after the job finished";
    EXPECT_TRUE(report.warnings.empty()) << ::testing::PrintToString(report.warnings);
  }
  EXPECT_GE(deferred, 1) << "the first compile never makes them itself";
  wait_background_compiles();
  const BackgroundCompiles idle = background_compiles();
  EXPECT_EQ(idle.queued + idle.running, 0);
  CompileReport third;
  auto kernel = compile_kernel(source, layouts[2], {}, &third);
  ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
  EXPECT_EQ(third.headers, "reused");
  EXPECT_EQ(third.front_end_cache, CacheSource::kMemory);

  // TMEMJIT_PCH_CREATE=inline: the first compile of a prefix makes them itself, as it pays.
  ScopedEnv inline_pch("TMEMJIT_PCH_CREATE", "inline");
  KernelSource other = source;
  other.text = "// made inline\n" + other.text;
  CompileReport made;
  ASSERT_TRUE(compile_kernel(other, layouts[0], {}, &made).ok());
  EXPECT_EQ(made.headers, "created");
  EXPECT_EQ(background_compiles().queued + background_compiles().running, 0);
}

// Every tcgen05 target compiles through compile_kernel and compile_transfer, family targets
// (sm_100f, what DeepGEMM picks on CUDA 13) included: the PTX says the target it was asked for.
TEST_F(CompileKernel, EveryTcgen05TargetCompiles) {
  for (Target target : all_targets()) {
    SCOPED_TRACE(std::string(to_string(target)));
    CompileOptions options;
    options.target = target;
    CompileReport report;
    auto kernel = compile_kernel(roundtrip_source(), seed_transfers(), options, &report);
    ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
    EXPECT_NE(kernel->ptx().find(".target " + std::string(to_string(target))), std::string::npos);
    EXPECT_GT(report.code.instructions, 0);
    EXPECT_EQ(report.code.local_bytes, 0);
    auto harness = compile_transfer(tmemjit_test::seed_layout_b(true).make(), options);
    ASSERT_TRUE(harness.ok()) << harness.error().full_text();
  }
}

TEST_F(CompileKernel, MemoryAndDiskHits) {
  const auto transfers = seed_transfers();
  CompileReport report;
  auto first = compile_kernel(roundtrip_source(), transfers, {}, &report);
  ASSERT_TRUE(first.ok()) << first.error().full_text();
  EXPECT_EQ(report.cache, CacheSource::kCompiled);
  const std::string key = report.key;

  reset_cache_stats();
  auto again = compile_kernel(roundtrip_source(), transfers, {}, &report);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(report.cache, CacheSource::kMemory);
  EXPECT_EQ(report.key, key);
  EXPECT_EQ(report.compile_ms, 0);
  EXPECT_EQ(again->cubin().data(), first->cubin().data()) << "one handle per entry";
  EXPECT_EQ(report.transfers.size(), 2u) << "the report of a hit names the transfers too";
  EXPECT_EQ(cache_stats().hits, 1u);

  ASSERT_TRUE(clear_cache(false).ok());
  auto from_disk = compile_kernel(roundtrip_source(), transfers, {}, &report);
  ASSERT_TRUE(from_disk.ok());
  EXPECT_EQ(report.cache, CacheSource::kDisk);
  EXPECT_EQ(report.key, key);
  EXPECT_TRUE(std::equal(from_disk->cubin().begin(), from_disk->cubin().end(),
                         first->cubin().begin(), first->cubin().end()));
  EXPECT_EQ(from_disk->name(), "roundtrip");
}

TEST_F(CompileKernel, KeysSeparateWhatDiffers) {
  auto key_of = [](const KernelSource& source, const std::vector<NamedTransfer>& transfers,
                   const CompileOptions& options = {}) {
    CompileReport report;
    auto kernel = compile_kernel(source, transfers, options, &report);
    EXPECT_TRUE(kernel.ok()) << kernel.error().full_text();
    return report.key;
  };
  const std::string base = key_of(roundtrip_source(), seed_transfers());
  auto renamed = seed_transfers();
  renamed[1].options.wait = true;
  EXPECT_NE(key_of(roundtrip_source(), renamed), base);
  KernelSource edited = roundtrip_source();
  edited.text += "\n// an edit\n";
  EXPECT_NE(key_of(edited, seed_transfers()), base);
  CompileOptions o1;
  o1.opt_level = 1;
  EXPECT_NE(key_of(roundtrip_source(), seed_transfers(), o1), base);
  // Equal meaning, other spelling: one entry.
  auto respelled = seed_transfers();
  tmemjit_test::SpecText text = tmemjit_test::seed_layout_b(true);
  text.tmem = "tensor( (64,128), S[(64,2,2,32):(1@TLane,64@TLane,32@TCol,1@TCol)], f32)" +
              tmemjit_test::kSeedRearrange;
  respelled[0].spec = text.make();
  EXPECT_EQ(key_of(roundtrip_source(), respelled), base);
}

// The key's explicit list (runtime/jit/kernel_context.h): changing any one input of the build
// is another key. (cta_group was once left out: a CTA pair's kernel was served the plain one.)
TEST(CompileKernelKey, ChangingAnyInputOfTheBuildIsAnotherKey) {
  const KernelSource source = roundtrip_source();
  const std::vector<NamedTransfer> transfers = seed_transfers();
  const Key128 includes{1, 2};
  auto key = [&](const KernelSource& s, const std::vector<NamedTransfer>& t,
                 const CompileOptions& o, Key128 inc) {
    auto context = kernel_context(s, o);
    EXPECT_TRUE(context.ok()) << context.error().full_text();
    return context.ok() ? kernel_key(s, t, *context, inc).hex() : std::string();
  };
  const std::string base = key(source, transfers, {}, includes);
  std::vector<std::pair<std::string, std::string>> variants;
  auto with_source = [&](const char* what, auto&& change) {
    KernelSource s = source;
    change(s);
    variants.emplace_back(what, key(s, transfers, {}, includes));
  };
  auto with_transfer = [&](const char* what, auto&& change) {
    std::vector<NamedTransfer> t = transfers;
    change(t[1]);
    variants.emplace_back(what, key(source, t, {}, includes));
  };
  auto with_options = [&](const char* what, auto&& change) {
    CompileOptions o;
    change(o);
    variants.emplace_back(what, key(source, transfers, o, includes));
  };
  with_source("text", [](KernelSource& s) { s.text += " "; });
  with_source("entry", [](KernelSource& s) { s.entry = "other"; });
  with_source("path", [](KernelSource& s) { s.path = "other.cu"; });
  with_transfer("name", [](NamedTransfer& t) { t.options.name = "other"; });
  with_transfer("spec",
                [](NamedTransfer& t) { t.spec = tmemjit_test::seed_layout_b(true).make(); });
  with_transfer("wait", [](NamedTransfer& t) { t.options.wait = !t.options.wait; });
  with_transfer("warp_argument", [](NamedTransfer& t) { t.options.warp_argument = true; });
  with_transfer("column_argument", [](NamedTransfer& t) { t.options.column_argument = true; });
  with_transfer("cta_group", [](NamedTransfer& t) { t.options.cta_group = 2; });
  with_transfer("language", [](NamedTransfer& t) { t.options.language = Language::kPtx; });
  with_options("target", [](CompileOptions& o) { o.target = Target::kSm100f; });
  with_options("backend", [](CompileOptions& o) { o.backend = Backend::kPtxas; });
  with_options("opt_level", [](CompileOptions& o) { o.opt_level = 1; });
  with_options("line_info", [](CompileOptions& o) { o.line_info = true; });
  with_options("tmem_access_check", [](CompileOptions& o) { o.tmem_access_check = true; });
  with_options("nvrtc_options", [](CompileOptions& o) { o.nvrtc_options = {"-DX"}; });
  with_options("ptx_options", [](CompileOptions& o) { o.ptx_options = {"-maxrregcount=64"}; });
  // The older list routes -D to NVRTC: equal to nvrtc_options {"-DX"} (one build, one key).
  with_options("extra_options", [](CompileOptions& o) { o.extra_options = {"-DY"}; });
  variants.emplace_back("includes", key(source, transfers, {}, Key128{1, 3}));
  std::set<std::string> seen = {base};
  for (const auto& [what, variant] : variants) {
    EXPECT_NE(variant, base) << what << " is not in the key";
    EXPECT_TRUE(seen.insert(variant).second) << what << " collides with another variant";
  }
  // keep_dir only says where files go: the same kernel.
  CompileOptions kept;
  kept.keep_dir = "/tmp/elsewhere";
  EXPECT_EQ(key(source, transfers, kept, includes), base);
}

// An NVRTC option that takes the next element as its value (-I DIR) takes its own and nothing
// else: a bare -I last in a list once made NVRTC read the library's --std=c++17 as the directory
// (issue 39, N13). Checked when the context is made, before any compile.
TEST(KernelContextRouting, AnOptionsSeparateValueIsItsOwnOrAnError) {
  const KernelSource source = roundtrip_source();
  for (const char* flag : {"-I", "-D", "-U", "-include", "-isystem", "--include-path"}) {
    for (const auto& [list, tail] : std::vector<std::pair<const char*, std::vector<std::string>>>{
             {"nvrtc_options", {}},
             {"nvrtc_options", {"--std=c++17"}},
             {"extra_options", {}},
             {"extra_options", {"-DX"}},
             {"nvrtc_options", {""}}}) {
      std::vector<std::string> given = {"-DFIRST", flag};
      given.insert(given.end(), tail.begin(), tail.end());
      CompileOptions options;
      (std::string(list) == "nvrtc_options" ? options.nvrtc_options : options.extra_options) =
          given;
      SCOPED_TRACE(std::string(list) + ": " + flag + (tail.empty() ? "" : " " + tail[0]));
      const auto context = kernel_context(source, options);
      ASSERT_FALSE(context.ok()) << "routed as " << ::testing::PrintToString(context->nvrtc);
      EXPECT_EQ(context.error().code(), ErrorCode::kUsage);
      EXPECT_NE(context.error().message().find("the NVRTC option '" + std::string(flag) + "' in " +
                                               list + " needs a value"),
                std::string::npos)
          << context.error().message();
    }
  }
  // Two elements, each list: the flag and its own value reach NVRTC together, in order; what
  // follows goes where it belongs (the PTX compiler's option to the PTX compiler).
  CompileOptions split;
  split.extra_options = {"-I", "/opt/inc", "-maxrregcount=128"};
  split.nvrtc_options = {"-D", "X=1", "-default-device"};
  const auto context = kernel_context(source, split);
  ASSERT_TRUE(context.ok()) << context.error().full_text();
  EXPECT_EQ(context->user_nvrtc,
            (std::vector<std::string>{"-I", "/opt/inc", "-D", "X=1", "-default-device"}));
  EXPECT_EQ(context->ptx.ptx_options, std::vector<std::string>{"-maxrregcount=128"});
  // A PTX source has no NVRTC: its extra_options all go to the PTX compiler, -I or not.
  KernelSource ptx;
  ptx.language = Language::kPtx;
  ptx.text = testing::user_ptx_kernel();
  ptx.entry = "user";
  CompileOptions ptx_options;
  ptx_options.extra_options = {"-O3"};
  EXPECT_TRUE(kernel_context(ptx, ptx_options).ok());
}

// NVRTC's long spelling of -default-device shapes the C++ as the short one does: routed to NVRTC
// from the older list, not to the PTX compiler, which refused it (issue 39, N20).
TEST(KernelContextRouting, DefaultDeviceInEitherSpellingGoesToNvrtc) {
  for (const char* option : {"-default-device", "--device-as-default-execution-space"}) {
    CompileOptions options;
    options.extra_options = {option};
    const auto context = kernel_context(roundtrip_source(), options);
    ASSERT_TRUE(context.ok()) << context.error().full_text();
    EXPECT_EQ(context->user_nvrtc, std::vector<std::string>{option});
    EXPECT_TRUE(context->ptx.ptx_options.empty());
  }
}

// NVRTC's own spelling of the PTX compiler's options, in either list, goes where NVRTC would
// send it: the PTX compiler, split at commas; the rest of the list is routed as before. Without a
// value it is a usage error naming ptx_options (issue 41 item 9).
TEST(KernelContextRouting, PtxasOptionsInNvrtcsSpellingGoToThePtxCompiler) {
  CompileOptions options;
  options.extra_options = {"--ptxas-options=-O3,-v", "-DX=1", "-Xptxas", "-maxrregcount=64"};
  options.nvrtc_options = {"-Xptxas=--allow-expensive-optimizations=true", "-DY=2"};
  options.ptx_options = {"-lineinfo"};
  const auto context = kernel_context(roundtrip_source(), options);
  ASSERT_TRUE(context.ok()) << context.error().full_text();
  EXPECT_EQ(context->user_nvrtc, (std::vector<std::string>{"-DX=1", "-DY=2"}));
  EXPECT_EQ(context->ptx.ptx_options,
            (std::vector<std::string>{"-O3", "-v", "-maxrregcount=64",
                                      "--allow-expensive-optimizations=true", "-lineinfo"}));
  // The options themselves are the PTX compiler's: it accepts them.
  EXPECT_TRUE(check_user_options(roundtrip_source(), *context).ok());
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--ptxas-options"}, std::vector<std::string>{"-Xptxas", ""}}) {
    CompileOptions refused;
    refused.extra_options = bad;
    const auto error = kernel_context(roundtrip_source(), refused);
    ASSERT_FALSE(error.ok());
    EXPECT_EQ(error.error().code(), ErrorCode::kUsage);
    EXPECT_NE(error.error().message().find("needs the PTX compiler's options as its value"),
              std::string::npos)
        << error.error().message();
    EXPECT_NE(error.error().full_text().find("ptx_options"), std::string::npos);
  }
}

// A compiler that refuses an option before writing a log (the driver backend takes no ptxas
// options) gives its reason, not "(empty)" (issue 39, N20).
TEST(KernelContextRouting, ARefusalWithoutALogSaysWhy) {
  KernelSource source;
  source.language = Language::kPtx;
  source.text = testing::user_ptx_kernel();
  source.entry = "user";
  CompileOptions options;
  options.backend = Backend::kDriver;
  options.ptx_options = {"-O1"};
  const auto context = kernel_context(source, options);
  ASSERT_TRUE(context.ok()) << context.error().full_text();
  const Status checked = check_user_options(source, *context);
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.error().code(), ErrorCode::kUsage);
  EXPECT_EQ(checked.error().message().find("(empty)"), std::string::npos)
      << checked.error().message();
  EXPECT_NE(checked.error().message().find("refused the options (-O1): the driver backend takes "
                                           "no ptxas options"),
            std::string::npos)
      << checked.error().message();
}

// Options with a home: nvrtc_options reach NVRTC (options the PTX compiler does not know among
// them), ptx_options the PTX compiler, a wrong one fails before any compile with the compiler's
// own words, and the defaults yield (a standard of the user's, without NVRTC's warning).
TEST_F(CompileKernel, OptionsReachTheirCompilerAndAWrongOneFailsFirst) {
  CompileOptions options;
  options.nvrtc_options = {"--device-int128", "--diag-suppress=177", "-std=c++20", "-include",
                           "cuda_bf16.h"};
  options.ptx_options = {"-maxrregcount=128"};
  CompileReport report;
  auto kernel = compile_kernel(roundtrip_source(), seed_transfers(), options, &report);
  ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
  EXPECT_EQ(report.log.find("warning"), std::string::npos) << report.log;
  EXPECT_GT(report.include_files, 0) << "-include cuda_bf16.h is read: its closure is in the key";

  CompileOptions bad_nvrtc;
  bad_nvrtc.nvrtc_options = {"--no-such-nvrtc-option"};
  auto refused = compile_kernel(roundtrip_source(), seed_transfers(), bad_nvrtc, &report);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kUsage) << refused.error().full_text();
  EXPECT_NE(refused.error().message().find("NVRTC refused the options (--no-such-nvrtc-option)"),
            std::string::npos)
      << refused.error().message();
  EXPECT_EQ(report.front_end_ms, 0) << "nothing compiled";

  CompileOptions bad_ptx;
  bad_ptx.ptx_options = {"--no-such-ptxas-option"};
  refused = compile_kernel(roundtrip_source(), seed_transfers(), bad_ptx, &report);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kUsage) << refused.error().full_text();
  EXPECT_NE(refused.error().message().find("refused the options (--no-such-ptxas-option)"),
            std::string::npos)
      << refused.error().message();
  EXPECT_EQ(report.front_end_ms, 0) << "the front end never ran";

  CompileOptions arch;
  arch.nvrtc_options = {"-arch=sm_90"};
  refused = compile_kernel(roundtrip_source(), seed_transfers(), arch);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("the target is CompileOptions::target"),
            std::string::npos);

  // The older single list: "-include F" as two elements stays one NVRTC option, and the rest
  // still reaches the PTX compiler.
  CompileOptions legacy;
  legacy.extra_options = {"-include", "cuda_bf16.h", "-maxrregcount=128"};
  kernel = compile_kernel(roundtrip_source(), seed_transfers(), legacy, &report);
  ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
}

TEST_F(CompileKernel, CompilerErrorsNameTheUsersFileAndLine) {
  KernelSource source = roundtrip_source();
  source.path = "my_epilogue.cu";
  source.text.replace(source.text.find("  acc_st(base, regs);"), 21, "  acc_st(base, regs) oops;");
  const int line = 17;  // of kRoundtripSource
  auto kernel = compile_kernel(source, seed_transfers());
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.error().code(), ErrorCode::kToolchain);
  EXPECT_NE(kernel.error().message().find("my_epilogue.cu(" + std::to_string(line) + "): error"),
            std::string::npos)
      << kernel.error().full_text();
  // The log quotes the lines in error; the user's own file is named, not echoed back.
  EXPECT_EQ(kernel.error().detail("cuda source"), "my_epilogue.cu (not repeated)");

  // A call with a column argument the transfer was not generated with: the hint says how it was.
  source = roundtrip_source();
  source.text.replace(source.text.find("acc_ld(base, back);"), 19, "acc_ld(base, back, 0u);");
  kernel = compile_kernel(source, seed_transfers());
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.error().detail("hint"),
            "acc_ld was generated as acc_ld(tmem_base, regs): warp_argument and column_argument "
            "add those parameters (tmemjit specialize --warp-arg / --column-arg, or the keys in "
            "the spec file)")
      << kernel.error().full_text();
}

// An entry whose metadata does not parse (a forged kind, a number out of range) is a miss: the
// kernel is compiled again and replaces it, on disk too (issue 39).
TEST_F(CompileKernel, AnEntryWithDamagedMetadataIsCompiledAgainAndReplaced) {
  CompileReport first;
  ASSERT_TRUE(compile_kernel(roundtrip_source(), seed_transfers(), {}, &first).ok());
  const auto key = Key128::parse_hex(first.key);
  ASSERT_TRUE(key.has_value()) << first.key;
  auto disk = module_cache().disk();
  ASSERT_NE(disk, nullptr);
  std::optional<Payload> entry = disk->read(*key);
  ASSERT_TRUE(entry.has_value());
  const size_t kind = entry->meta.find("\"kind\":\"kernel\"");
  ASSERT_NE(kind, std::string::npos) << entry->meta;
  entry->meta.replace(kind, 15, "\"kind\":\"transfer\"");
  ASSERT_TRUE(disk->write(*key, *entry).written);
  ASSERT_TRUE(clear_cache(false).ok());  // memory only: the next call reads the disk entry
  CompileReport again;
  auto kernel = compile_kernel(roundtrip_source(), seed_transfers(), {}, &again);
  ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
  EXPECT_EQ(again.cache, CacheSource::kCompiled);
  ASSERT_EQ(again.warnings.size(), 1u);
  EXPECT_NE(again.warnings[0].find("unusable metadata"), std::string::npos) << again.warnings[0];
  ASSERT_TRUE(clear_cache(false).ok());
  CompileReport third;
  ASSERT_TRUE(compile_kernel(roundtrip_source(), seed_transfers(), {}, &third).ok());
  EXPECT_EQ(third.cache, CacheSource::kDisk);  // the replacement
  EXPECT_TRUE(third.warnings.empty());
}

// The include left out: NVRTC says only that the transfer is undefined (issue 39 N20).
TEST_F(CompileKernel, ASourceWithoutTheTransfersIncludeIsToldToIncludeIt) {
  KernelSource source = roundtrip_source();
  const size_t include = source.text.find("#include <tmemjit/transfers.cuh>");
  ASSERT_NE(include, std::string::npos);
  source.text.erase(include, std::string("#include <tmemjit/transfers.cuh>").size());
  auto kernel = compile_kernel(source, seed_transfers());
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.error().detail("hint").find("does not #include <tmemjit/transfers.cuh>"),
            std::string_view::npos)
      << kernel.error().full_text();
}

TEST_F(CompileKernel, ATransferTheSourceUsesButTheCallLeavesOutIsNamed) {
  // Misspelt: the source's acc_ld_regs, acc_ld_coord, ... belong to a transfer the call lacks.
  auto transfers = seed_transfers();
  transfers[1].options.name = "acc_load";
  auto kernel = compile_kernel(roundtrip_source(), transfers);
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.error().detail("hint"),
            "the source uses transfers this call does not give (acc_ld; it gives acc_load, "
            "acc_st): each transfer NAME defines NAME, NAME_regs, NAME_is_load, NAME_wait and "
            "NAME_coord; give each one a spec (tmemjit specialize --transfer acc_ld=SPEC.json)")
      << kernel.error().full_text();
  // None given: both named, in order.
  kernel = compile_kernel(roundtrip_source(), std::vector<NamedTransfer>{});
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.error().detail("hint").find("(acc_ld, acc_st; it gives none)"),
            std::string_view::npos)
      << kernel.error().full_text();
  // An undefined name of the user's own is no transfer: no hint.
  KernelSource source = roundtrip_source();
  source.text.replace(source.text.find("  acc_st(base, regs);"), 21,
                      "  acc_st(base, regs); oops();");
  kernel = compile_kernel(source, seed_transfers());
  ASSERT_FALSE(kernel.ok());
  EXPECT_FALSE(kernel.error().has_detail("hint")) << kernel.error().full_text();
}

TEST_F(CompileKernel, UnknownEntryListsTheEntriesFound) {
  KernelSource source = roundtrip_source();
  source.text += "\n__global__ void second(int* x) { *x = 1; }\n";
  source.entry = "rundtrip";
  auto kernel = compile_kernel(source, seed_transfers());
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.error().code(), ErrorCode::kUsage);
  EXPECT_NE(kernel.error().message().find("no kernel 'rundtrip' in kernel.cu"), std::string::npos)
      << kernel.error().message();
  EXPECT_NE(kernel.error().message().find("roundtrip"), std::string::npos);
  EXPECT_NE(kernel.error().message().find("second (_Z6secondPi)"), std::string::npos)
      << kernel.error().message();
  source.entry = "second";  // a C++ name: found by its plain name
  auto found = compile_kernel(source, seed_transfers());
  ASSERT_TRUE(found.ok()) << found.error().full_text();
  EXPECT_EQ(found->name(), "_Z6secondPi");
}

TEST_F(CompileKernel, NIsLoadLetsTheKernelRefuseATransferOfTheWrongDirection) {
  // A store spec where the kernel loads compiles to a store of registers never set; the kernel's
  // static_assert on N_is_load turns that into a compile error naming the mix-up.
  KernelSource source = roundtrip_source();
  source.text.insert(source.text.find("extern \"C\""),
                     "static_assert(acc_ld_is_load && !acc_st_is_load, \"acc_ld must load, acc_st "
                     "store\");\n");
  ASSERT_TRUE(compile_kernel(source, seed_transfers()).ok());
  auto swapped = seed_transfers();
  std::swap(swapped[0].spec, swapped[1].spec);
  auto kernel = compile_kernel(source, swapped);
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.error().message().find("acc_ld must load, acc_st store"), std::string::npos)
      << kernel.error().full_text();
}

TEST_F(CompileKernel, NameExpressionsNameTemplateKernels) {
  KernelSource source = roundtrip_source();
  source.text +=
      "\ntemplate <int N> __global__ void fill(int* x) { *x = N; }\n"
      "template __global__ void fill<3>(int*);\n";
  source.entry = "fill<3>";
  auto kernel = compile_kernel(source, seed_transfers());
  ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
  EXPECT_EQ(kernel->name(), "_Z4fillILi3EEvPi");

  // An expression NVRTC cannot resolve is the caller's mistake, named as such.
  source.entry = "fil<3>";
  auto unknown = compile_kernel(source, seed_transfers());
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code(), ErrorCode::kUsage);
  EXPECT_NE(unknown.error().message().find(
                "entry 'fil<3>' is not a name expression of a __global__ function in kernel.cu "
                "(identifier \"fil\" is undefined)"),
            std::string::npos)
      << unknown.error().full_text();
  // With an error of the source's own, the compiler's log about the source comes first.
  source.text.replace(source.text.find("*x = N;"), 7, "*x = N oops;");
  source.entry = "fill<3>";
  auto broken = compile_kernel(source, seed_transfers());
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.error().code(), ErrorCode::kToolchain) << broken.error().full_text();
  EXPECT_NE(broken.error().message().find("kernel.cu("), std::string::npos)
      << broken.error().full_text();
}

TEST_F(CompileKernel, NamesAreCheckedAndUnique) {
  auto twice = seed_transfers();
  twice[1].options.name = "acc_st";
  auto kernel = compile_kernel(roundtrip_source(), twice);
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.error().code(), ErrorCode::kUsage);
  EXPECT_NE(kernel.error().message().find("two transfers are named 'acc_st'"), std::string::npos)
      << kernel.error().message();

  auto clash = seed_transfers();
  clash[0].options.name = "acc";
  clash[1].options.name = "acc_wait";
  kernel = compile_kernel(roundtrip_source(), clash);
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.error().message().find("defines 'acc_wait'"), std::string::npos)
      << kernel.error().message();
  clash[1].options.name = "acc_is_load";  // the constant of transfer "acc"
  kernel = compile_kernel(roundtrip_source(), clash);
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.error().message().find("defines 'acc_is_load'"), std::string::npos)
      << kernel.error().message();

  auto bad = seed_transfers();
  bad[0].options.name = "acc-st";
  kernel = compile_kernel(roundtrip_source(), bad);
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.error().code(), ErrorCode::kUsage);
  EXPECT_EQ(kernel.error().message().rfind("transfer name 'acc-st' ", 0), 0u);

  KernelSource empty = roundtrip_source();
  empty.text.clear();
  EXPECT_EQ(compile_kernel(empty, seed_transfers()).error().code(), ErrorCode::kUsage);
  CompileOptions nvrtc;
  nvrtc.backend = Backend::kNvrtc;
  EXPECT_EQ(compile_kernel(roundtrip_source(), seed_transfers(), nvrtc).error().code(),
            ErrorCode::kUsage);
}

TEST_F(CompileKernel, ATransferTheSourceNeverCallsIsAWarning) {
  auto transfers = seed_transfers();
  transfers.push_back(transfer(tmemjit_test::seed_pack(false).make(), "unused"));
  CompileReport report;
  auto kernel = compile_kernel(roundtrip_source(), transfers, {}, &report);
  ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_EQ(report.warnings[0],
            "transfer 'unused' is never called by kernel.cu or a header it includes");
  // A hit reports it too.
  ASSERT_TRUE(compile_kernel(roundtrip_source(), transfers, {}, &report).ok());
  EXPECT_EQ(report.cache, CacheSource::kMemory);
  EXPECT_EQ(report.warnings.size(), 1u);
}

// A header-only library calls its transfers from a header the source includes (issue 41 item
// 7): that is a call, no warning; a transfer no file of the closure names still gets one.
TEST_F(CompileKernel, ATransferCalledFromAnIncludedHeaderIsCalled) {
  TempDir include_dir;
  ASSERT_TRUE(include_dir.ok());
  std::ofstream(include_dir.path() / "calls.h")
      << "#include <tmemjit/transfers.cuh>\n"
         "__device__ __forceinline__ void store_tile(unsigned int base, float (&r)[acc_st_regs]) "
         "{\n"
         "  acc_st(base, r);\n"
         "}\n";
  KernelSource source = roundtrip_source();
  const std::string include = "#include <tmemjit/transfers.cuh>";
  source.text.replace(source.text.find(include), include.size(), "#include <calls.h>");
  const std::string call = "acc_st(base, regs);";
  source.text.replace(source.text.find(call), call.size(), "store_tile(base, regs);");
  ASSERT_EQ(source.text.find("acc_st("), std::string::npos);
  CompileOptions options;
  options.nvrtc_options = {"-I" + include_dir.path().string()};
  CompileReport report;
  auto never_called = [&] {
    std::vector<std::string> found;
    for (const std::string& warning : report.warnings)
      if (warning.find("is never called") != std::string::npos) found.push_back(warning);
    return found;
  };
  auto kernel = compile_kernel(source, seed_transfers(), options, &report);
  ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
  EXPECT_TRUE(never_called().empty()) << ::testing::PrintToString(report.warnings);
  auto transfers = seed_transfers();
  transfers.push_back(transfer(tmemjit_test::seed_pack(false).make(), "unused"));
  ASSERT_TRUE(compile_kernel(source, transfers, options, &report).ok());
  EXPECT_EQ(never_called(),
            std::vector<std::string>{
                "transfer 'unused' is never called by kernel.cu or a header it includes"});
}

// The user's own NVRTC precompiled-header options are replaced by the library's, with a warning
// (issue 41 item 2): NVRTC reuses its own precompiled header without checking in-memory headers,
// so where the transfers are included through a header it could hold one layout's transfers and
// serve them to the next. Each layout's kernel has its own transfers.
TEST_F(CompileKernel, TheUsersOwnPchOptionsAreReplacedSoNoLayoutServesAnother) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::filesystem::create_directories(dir.path() / "pch");
  std::ofstream(dir.path() / "epi_transfers.h") << "#include <tmemjit/transfers.cuh>\n";
  KernelSource source = epilogue_with_a_header("own pch");
  const std::string include = "#include <tmemjit/transfers.cuh>";
  source.text.replace(source.text.find(include), include.size(), "#include <epi_transfers.h>");
  CompileOptions options;
  options.nvrtc_options = {"-I" + dir.path().string(), "--pch",
                           "--pch-dir=" + (dir.path() / "pch").string()};
  for (const auto& [load, store, op] : {std::tuple{"d_x32_ld", "d_x32_st", "32x32b.x32"},
                                        std::tuple{"f_16x256b_ld", "f_16x256b_st", "16x256b.x8"}}) {
    SCOPED_TRACE(load);
    CompileReport report;
    const std::vector<NamedTransfer> transfers = {
        transfer(layout(load), "acc_load", false, true),
        transfer(layout(store), "acc_store", false, true)};
    auto kernel = compile_kernel(source, transfers, options, &report);
    ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
    EXPECT_NE(std::string(kernel->ptx()).find(op), std::string::npos) << "not its own transfers";
    // The library's own stop goes before the header that reaches the transfers, which brings
    // nothing else: nothing is parsed again, and the one warning is about the options.
    ASSERT_EQ(report.warnings.size(), 1u) << ::testing::PrintToString(report.warnings);
    EXPECT_NE(report.warnings[0].find("your NVRTC precompiled-header options (--pch --pch-dir="),
              std::string::npos)
        << report.warnings[0];
    EXPECT_NE(report.warnings[0].find("are replaced by the library's own"), std::string::npos);
  }
  // Nothing of NVRTC's own was made there: the options never reached it.
  EXPECT_TRUE(std::filesystem::is_empty(dir.path() / "pch"));
}

// A header-only library's header that calls the transfers, included after CUDA's bf16 header (issue
// 41 item 1): with no edit and no option, the precompiled headers stop before the main file's
// line whose include closure reaches the transfers, so a new layout reuses the parse of what is
// above it.
TEST_F(CompileKernel, TheStopGoesBeforeTheIncludeThatReachesTheTransfers) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::ofstream(dir.path() / "epi_calls.h") << "#pragma once\n#include <tmemjit/transfers.cuh>\n";
  KernelSource source = epilogue_with_a_header("reached through a header");
  const std::string include = "#include <tmemjit/transfers.cuh>";
  ASSERT_NE(source.text.find("#include <cuda_bf16.h>"), std::string::npos);
  source.text.replace(source.text.find(include), include.size(), "#include <epi_calls.h>");
  CompileOptions options;
  options.nvrtc_options = {"-I" + dir.path().string()};
  const struct {
    const char *load, *store, *op, *headers;
  } layouts[] = {{"d_x32_ld", "d_x32_st", "32x32b.x32", kDeferred},
                 {"f_16x256b_ld", "f_16x256b_st", "16x256b.x8", "reused"}};
  for (const auto& l : layouts) {
    SCOPED_TRACE(l.load);
    CompileReport report;
    auto kernel = compile_kernel(source,
                                 {transfer(layout(l.load), "acc_load", false, true),
                                  transfer(layout(l.store), "acc_store", false, true)},
                                 options, &report);
    ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
    EXPECT_EQ(report.headers, l.headers);
    EXPECT_TRUE(report.warnings.empty()) << ::testing::PrintToString(report.warnings);
    EXPECT_NE(std::string(kernel->ptx()).find(l.op), std::string::npos) << "not its transfers";
    wait_background_compiles();
  }
}

// A header-only library (issue 41 item 1): the transfers are included by the library's own header,
// with CUDA's bf16 header. Without a word the library parses every header again for each layout,
// and says so with the fix; with CompileOptions::precompile naming the header that does not
// reach the transfers, a new layout reuses its parse. A named header that reaches the transfers
// is refused: its parse would hold a layout.
TEST_F(CompileKernel, PrecompileNamesTheHeadersOfAHeaderOnlyLibrary) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::ofstream(dir.path() / "epi_lib.h")
      << "#include <cuda_bf16.h>\n#include <tmemjit/transfers.cuh>\n";
  KernelSource source = epilogue_with_a_header("header-only library");
  const std::string include = "#include <tmemjit/transfers.cuh>";
  source.text.replace(source.text.find(include), include.size(), "#include <epi_lib.h>");
  source.text.replace(source.text.find("#include <cuda_bf16.h>\n"), 23, "");
  CompileOptions options;
  options.nvrtc_options = {"-I" + dir.path().string()};
  auto transfers_of = [](const char* load, const char* store) {
    return std::vector<NamedTransfer>{transfer(layout(load), "acc_load", false, true),
                                      transfer(layout(store), "acc_store", false, true)};
  };
  CompileReport report;
  ASSERT_TRUE(compile_kernel(source, transfers_of("d_x32_ld", "d_x32_st"), options, &report).ok());
  // The stop goes before the library's header, the first line: nothing before it to precompile.
  EXPECT_EQ(report.headers, "none: no header before the transfers");
  ASSERT_EQ(report.warnings.size(), 1u) << ::testing::PrintToString(report.warnings);
  EXPECT_NE(report.warnings[0].find("reaches <tmemjit/transfers.cuh> through '#include "
                                    "<epi_lib.h>', so the headers included from there on are "
                                    "parsed again for every layout: name the ones to parse once "
                                    "in CompileOptions::precompile"),
            std::string::npos)
      << report.warnings[0];

  options.precompile = {"cuda_bf16.h"};
  const struct {
    const char *load, *store, *op, *headers;
  } layouts[] = {{"d_x32_ld", "d_x32_st", "32x32b.x32", kDeferred},
                 {"f_16x256b_ld", "f_16x256b_st", "16x256b.x8", "reused"}};
  for (const auto& l : layouts) {
    SCOPED_TRACE(l.load);
    auto kernel = compile_kernel(source, transfers_of(l.load, l.store), options, &report);
    ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
    EXPECT_EQ(report.cache, CacheSource::kCompiled);
    EXPECT_EQ(report.headers, l.headers);
    EXPECT_TRUE(report.warnings.empty()) << ::testing::PrintToString(report.warnings);
    EXPECT_NE(std::string(kernel->ptx()).find(l.op), std::string::npos) << "not its transfers";
    wait_background_compiles();
  }

  // A name is what #include <...> takes: brackets, quotes or an empty name are kUsage.
  for (const char* bad : {"<cuda_bf16.h>", "\"cuda_bf16.h\"", ""}) {
    options.precompile = {bad};
    auto wrong = compile_kernel(source, transfers_of("d_x32_ld", "d_x32_st"), options);
    ASSERT_FALSE(wrong.ok()) << bad;
    EXPECT_EQ(wrong.error().code(), ErrorCode::kUsage);
    EXPECT_NE(wrong.error().message().find("is not a header name"), std::string::npos)
        << wrong.error().message();
  }
  options.precompile = {"epi_lib.h"};
  auto refused = compile_kernel(source, transfers_of("d_x64_ld", "d_x64_st"), options);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kUsage);
  EXPECT_NE(refused.error().message().find("a header named there includes "
                                           "<tmemjit/transfers.cuh>"),
            std::string::npos)
      << refused.error().message();
}

// keep_dir keeps what rebuilds the compile with NVRTC alone (issue 41 item 8): the source NVRTC
// got, every in-memory header (the generated transfers, the precompiled prefix), the options and
// a script; run with nothing of the library, it makes the same cubin. A layout's second compile
// reuses the precompiled headers; its reproducer needs none of them.
TEST_F(CompileKernel, AKeptCompileRebuildsWithNvrtcAloneToTheSameCubin) {
  TempDir keep;
  ASSERT_TRUE(keep.ok());
  const KernelSource source = epilogue_with_a_header("reproducer");
  for (const char* load : {"d_x32_ld", "f_16x256b_ld"}) {
    SCOPED_TRACE(load);
    const std::string store = std::string(load).replace(std::string(load).size() - 2, 2, "st");
    CompileOptions options;
    options.keep_dir = (keep.path() / load).string();
    const std::vector<NamedTransfer> transfers = {
        transfer(layout(load), "acc_load", false, true),
        transfer(layout(store), "acc_store", false, true)};
    auto kernel = compile_kernel(source, transfers, options);
    ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
    std::vector<std::filesystem::path> scripts;
    for (const auto& entry : std::filesystem::directory_iterator(options.keep_dir))
      if (entry.path().string().ends_with(".rebuild.py")) scripts.push_back(entry.path());
    ASSERT_EQ(scripts.size(), 1u);
    const std::string recipe =
        read_file(scripts[0].string().substr(0, scripts[0].string().size() - 11) + ".nvrtc.json");
    EXPECT_NE(recipe.find("tmemjit/transfers.cuh"), std::string::npos) << recipe;
    EXPECT_NE(recipe.find("tmemjit-prefix.cuh"), std::string::npos) << recipe;
    EXPECT_EQ(recipe.find("--pch"), std::string::npos) << recipe;
    const std::filesystem::path rebuilt = keep.path() / (std::string(load) + ".cubin");
    const std::string command = "python3 " + tmemjit_test::shell_quote(scripts[0].string()) + " " +
                                tmemjit_test::shell_quote(rebuilt.string()) + " >" +
                                tmemjit_test::shell_quote((keep.path() / "out").string()) + " 2>&1";
    ASSERT_EQ(std::system(command.c_str()), 0) << read_file(keep.path() / "out");
    const std::string ours(kernel->cubin().data(), kernel->cubin().size());
    EXPECT_TRUE(read_file(rebuilt) == ours) << "the rebuilt cubin differs";
  }
}

// Names found only as parts of other words ("st" in "acc_st", "ld" in "acc_ld") or in comments
// are not calls: the warning is given (it was missing for such names), and a PTX `.entry` inside a
// comment is not taken as a kernel.
TEST_F(CompileKernel, NamesInsideOtherWordsOrCommentsAreNotCallsOrEntries) {
  auto transfers = seed_transfers();
  transfers.push_back(transfer(tmemjit_test::seed_pack(false).make(), "st"));
  KernelSource source = roundtrip_source();
  source.text = "// st(base, regs) is not called here\n" + source.text;
  CompileReport report;
  auto kernel = compile_kernel(source, transfers, {}, &report);
  ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_EQ(report.warnings[0],
            "transfer 'st' is never called by kernel.cu or a header it includes");

  KernelSource ptx;
  ptx.language = Language::kPtx;
  ptx.text = "// .visible .entry commented_out()\n" + testing::user_ptx_kernel();
  ptx.entry = "commented_out";
  std::vector<NamedTransfer> ptx_transfers = {
      transfer(tmemjit_test::seed_layout_b(false).make(), "acc_ld")};
  ptx_transfers[0].options.language = Language::kPtx;
  auto refused = compile_kernel(ptx, ptx_transfers);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kUsage);
  EXPECT_NE(refused.error().message().find("the __global__ functions found: user"),
            std::string::npos)
      << refused.error().message();
}

TEST_F(CompileKernel, RuleErrorsNameTheTransfer) {
  auto transfers = seed_transfers();
  tmemjit_test::SpecText text = tmemjit_test::seed_layout_b(false);
  text.op = "tcgen05.ld.sync.aligned.32x32b.x32.b32";
  transfers[1].spec = text.make();
  auto kernel = compile_kernel(roundtrip_source(), transfers);
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.error().code(), check(transfers[1].spec).error().code());
  EXPECT_EQ(kernel.error().message().rfind("transfer 'acc_ld': ", 0), 0u);
}

// Entry metadata is typed JSON: one that does not parse (a damaged or foreign entry under the
// right key) is a clear kIo error naming what is wrong, never an exception or a crash. (Free
// text parsed with std::stoi once aborted a C++ program here.)
TEST_F(CompileKernel, MetadataThatDoesNotParseIsAMissCompiledAgain) {
  KernelSource source;
  source.language = Language::kPtx;
  source.text = testing::user_ptx_kernel();
  source.entry = "user";
  source.path = "kernel.ptx";
  std::vector<NamedTransfer> transfers = {
      transfer(tmemjit_test::seed_layout_b(false).make(), "acc_ld")};
  transfers[0].options.language = Language::kPtx;
  auto context = kernel_context(source, {});
  ASSERT_TRUE(context.ok());
  const Key128 key = kernel_key(source, transfers, *context, Key128{});
  // A whole compile_transfer entry under this key is damage too (issue 39, N14): served, it would
  // launch a harness kernel with the user's arguments. Damage is a miss: compiled again.
  KernelEntryMeta transfer_meta;
  transfer_meta.kind = "transfer";
  transfer_meta.entry = "user";
  for (const std::string& meta :
       {std::string("entry=user\nlog:\n"), std::string("{\"format\": 1, \"kind\": \"kernel\"}"),
        std::string("{\"format\": 99}"), std::string("[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]"),
        transfer_meta.to_json()}) {
    SCOPED_TRACE(meta);
    ASSERT_TRUE(clear_cache(true).ok());
    ASSERT_TRUE(testing::plant_entry(key, meta));
    CompileReport report;
    auto kernel = compile_kernel(source, transfers, {}, &report);
    ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
    EXPECT_EQ(report.cache, CacheSource::kCompiled);
    ASSERT_EQ(report.warnings.size(), 1u);
    EXPECT_NE(report.warnings[0].find("cache entry metadata is damaged"), std::string::npos)
        << report.warnings[0];
  }
  ASSERT_TRUE(clear_cache(true).ok());
}

TEST_F(CompileKernel, PtxSourceCallsTheGeneratedFuncs) {
  KernelSource source;
  source.language = Language::kPtx;
  source.text = testing::user_ptx_kernel();
  source.entry = "user";
  std::vector<NamedTransfer> transfers = {
      transfer(tmemjit_test::seed_layout_b(false).make(), "acc_ld")};
  transfers[0].options.language = Language::kPtx;
  CompileReport report;
  auto kernel = compile_kernel(source, transfers, {}, &report);
  ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
  EXPECT_EQ(kernel->name(), "user");
  EXPECT_EQ(report.front_end_cache, CacheSource::kCompiled);
  EXPECT_EQ(report.front_end_ms, 0) << "PTX has no front end";
  const Counts counts = sass_counts(kernel->cubin());
  if (counts.checked) {
    EXPECT_EQ(counts.ldtm, 1);
    EXPECT_FALSE(counts.local_memory);
  }
  // An error on line 12 of the user's file is reported there, not in the combined module.
  source.text = testing::user_ptx_kernel("\tbogus.u32 %r7, %r7;\n");
  auto broken = compile_kernel(source, transfers);
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.error().code(), ErrorCode::kToolchain);
  EXPECT_NE(broken.error().full_text().find("kernel.ptx, line 12"), std::string::npos)
      << broken.error().full_text();
}

TEST_F(CompileKernel, EmulationTargetCompilesTheSameSourceForSm90) {
  CompileOptions options;
  options.target = Target::kSm90;
  CompileReport report;
  auto kernel = compile_kernel(roundtrip_source(), seed_transfers(), options, &report);
  ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
  EXPECT_TRUE(kernel->emulated());
  EXPECT_EQ(kernel->target(), Target::kSm90);
  EXPECT_EQ(std::string(kernel->ptx()).find("tcgen05."), std::string::npos);
  EXPECT_NE(std::string(kernel->ptx()).find("_ZN7tmemjit9emu_stateE"), std::string::npos);
  EXPECT_TRUE(report.warnings.empty()) << report.warnings[0];
  // A transfer the emulated source never calls is a warning there too.
  auto transfers = seed_transfers();
  transfers.push_back(transfer(tmemjit_test::seed_pack(false).make(), "unused"));
  ASSERT_TRUE(compile_kernel(roundtrip_source(), transfers, options, &report).ok());
  ASSERT_EQ(report.warnings.size(), 1u);
}

// A PTX kernel whose calls a code generator lowered from C++ declarations of the ABI: the real
// .funcs link into it for sm_100a, and the emulated ones for sm_90.
TEST_F(CompileKernel, PtxSourceFromDeclaredAbiCompilesForTheRealAndTheEmulatedTarget) {
  auto ptx = testing::ptx_roundtrip_kernel(64);
  ASSERT_TRUE(ptx.ok()) << ptx.error().full_text();
  KernelSource source{Language::kPtx, *ptx, "roundtrip", "roundtrip.ptx"};
  const std::vector<NamedTransfer> transfers = seed_transfers();
  auto real = compile_kernel(source, transfers);
  ASSERT_TRUE(real.ok()) << real.error().full_text();
  EXPECT_FALSE(real->emulated());
  const Counts counts = sass_counts(real->cubin());
  if (counts.checked) {
    EXPECT_EQ(counts.sttm, 1);  // 32x32b.x64: one instruction per warp each way
    EXPECT_EQ(counts.ldtm, 1);
  }
  CompileOptions options;
  options.target = Target::kSm90;
  CompileReport report;
  auto emulated = compile_kernel(source, transfers, options, &report);
  ASSERT_TRUE(emulated.ok()) << emulated.error().full_text();
  EXPECT_TRUE(emulated->emulated());
  EXPECT_EQ(emulated->target(), Target::kSm90);
  const std::string text(emulated->ptx());
  EXPECT_EQ(text.find("tcgen05."), std::string::npos);
  EXPECT_NE(text.find("_ZN7tmemjit9emu_stateE"), std::string::npos);
  EXPECT_NE(text.find(".target sm_90"), std::string::npos);
  EXPECT_TRUE(report.warnings.empty()) << report.warnings[0];
}

// The user's own tcgen05 instructions are lowered with the generated functions into one module and
// one emulated TMEM (docs/emulation.md §Blackwell kernels on Hopper); one the emulation refuses is
// a usage error naming it and its line.
TEST_F(CompileKernel, PtxSourceWithItsOwnTcgen05IsLoweredForSm90) {
  KernelSource source;
  source.language = Language::kPtx;
  source.entry = "user";
  std::vector<NamedTransfer> transfers = {
      transfer(tmemjit_test::seed_layout_b(false).make(), "acc_ld")};
  CompileOptions options;
  options.target = Target::kSm90;
  source.text = testing::user_ptx_kernel("\t// tcgen05.ld is what acc_ld issues on Blackwell\n");
  auto commented = compile_kernel(source, transfers, options);
  ASSERT_TRUE(commented.ok()) << commented.error().full_text();
  source.text = testing::user_ptx_kernel("\ttcgen05.fence::before_thread_sync;\n");
  auto own = compile_kernel(source, transfers, options);
  ASSERT_TRUE(own.ok()) << own.error().full_text();
  EXPECT_TRUE(own->emulated());
  // Lowered in place, the statement named in a comment (kernels/user_emulation.h).
  EXPECT_EQ(std::string(own->ptx()).find("\ttcgen05.fence"), std::string::npos);
  EXPECT_NE(std::string(own->ptx()).find("tcgen05.fence::before_thread_sync */"),
            std::string::npos);
  source.text = testing::user_ptx_kernel("\ttcgen05.shift.cta_group::1.down.sync [%r1];\n");
  auto unknown = compile_kernel(source, transfers, options);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code(), ErrorCode::kUsage) << unknown.error().full_text();
  EXPECT_EQ(unknown.error().detail("line"), "12") << unknown.error().full_text();
  // The same source is fine for a tcgen05 target.
  source.text = testing::user_ptx_kernel("\ttcgen05.fence::before_thread_sync;\n");
  EXPECT_TRUE(compile_kernel(source, transfers).ok());
}

TEST(KernelFromCubin, TakesCodeCompiledElsewhere) {
  auto compiled = compile_transfer(tmemjit_test::seed_layout_b(true).make());
  ASSERT_TRUE(compiled.ok()) << compiled.error().full_text();
  auto kernel = Kernel::from_cubin(compiled->cubin(), "tmem_roundtrip", Target::kSm100a);
  ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
  EXPECT_EQ(kernel->name(), "tmem_roundtrip");
  EXPECT_EQ(kernel->cubin().size(), compiled->cubin().size());
  EXPECT_NE(kernel->cubin().data(), compiled->cubin().data()) << "copied";
  EXPECT_FALSE(kernel->emulated());
  auto wrong = Kernel::from_cubin(compiled->cubin(), "tmem_load", Target::kSm100a);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().code(), ErrorCode::kUsage);
  EXPECT_NE(wrong.error().message().find("it has: tmem_roundtrip"), std::string::npos)
      << wrong.error().message();
  EXPECT_EQ(Kernel::from_cubin({}, "x", Target::kSm100a).error().code(), ErrorCode::kUsage);
  EXPECT_EQ(Kernel::from_cubin(compiled->cubin(), "", Target::kSm100a).error().code(),
            ErrorCode::kUsage);
}

TEST(CompileTransferReport, SaysWhichTierAnswered) {
  TempDir dir;
  const CacheOptions saved = cache_options();
  set_cache_dir(dir.path().string());
  ASSERT_TRUE(clear_cache(false).ok());
  const TransferSpec spec = tmemjit_test::seed_layout_b(true).make();
  CompileReport report;
  ASSERT_TRUE(compile_transfer(spec, {}, KernelKind::kStore, &report).ok());
  EXPECT_EQ(report.cache, CacheSource::kCompiled);
  EXPECT_TRUE(report.cache_enabled);
  EXPECT_GT(report.compile_ms, 0);
  EXPECT_EQ(report.entry, "tmem_store");
  ASSERT_TRUE(compile_transfer(spec, {}, KernelKind::kStore, &report).ok());
  EXPECT_EQ(report.cache, CacheSource::kMemory);
  ASSERT_TRUE(clear_cache(false).ok());
  ASSERT_TRUE(compile_transfer(spec, {}, KernelKind::kStore, &report).ok());
  EXPECT_EQ(report.cache, CacheSource::kDisk);
  EXPECT_EQ(to_string(CacheSource::kCompiled), "miss");
  EXPECT_EQ(to_string(CacheSource::kRemote), "remote");
  auto ptx = transfer_ptx(spec, KernelKind::kStore);
  ASSERT_TRUE(ptx.ok());
  EXPECT_EQ(*ptx, std::string(compile_transfer(spec, {}, KernelKind::kStore)->ptx()));
  set_cache_options(saved);
}

}  // namespace
}  // namespace tmem

namespace tmem {
namespace {

// User text in compile_kernel's messages is quoted up to a bound (issue 30, item 12): a 100 KB
// path or transfer name gives a message of a few hundred bytes that says how long it was.
TEST(CompileKernelMessages, LongPathsAndNamesAreQuotedAsExcerpts) {
  KernelSource source;
  source.path = std::string(100000, 'p') + ".cu";
  source.entry = "k";
  auto empty = compile_kernel(source, {});
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().code(), ErrorCode::kUsage);
  EXPECT_LT(empty.error().message().size(), 600u) << empty.error().message().size();
  EXPECT_NE(empty.error().message().find("100003 bytes"), std::string::npos);
  source.path = "k.cu";
  source.text = "extern \"C\" __global__ void k() {}\n";
  DeviceFunctionOptions options;
  options.name = std::string(100000, 'n');
  const std::vector<NamedTransfer> named = {{tmemjit_test::seed_layout_b(true).make(), options}};
  auto long_name = compile_kernel(source, named);
  ASSERT_FALSE(long_name.ok());
  EXPECT_EQ(long_name.error().code(), ErrorCode::kUsage);
  EXPECT_LT(long_name.error().message().size(), 600u);
  EXPECT_NE(long_name.error().message().find("longer than 200 characters"), std::string::npos);
}

}  // namespace
}  // namespace tmem
