// code_stats: registers, local memory, instructions and LDTM/STTM of kernels with known properties
// (a local array, forced spills, tcgen05 transfers, a call the compiler did not inline), checked
// against the disassembly, ptxas -v and cuobjdump --dump-resource-usage; LDTM/STTM read from the
// encoding equal to nvdisasm's for every tcgen05.ld/st form on sm_100a and sm_103a; the arches
// outside the sm_100 family; and every malformed cubin an error naming what is wrong.
#include "tmem/code_stats.h"

#include <elf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "common/elf.h"
#include "common/ptx_fixtures.h"
#include "common/spec_fixtures.h"
#include "runtime/compile/backends.h"
#include "runtime/compile/sass.h"
#include "runtime/ptx/ir.h"
#include "runtime/support/subprocess.h"
#include "tmem/cache.h"
#include "tmem/compile.h"
#include "tmem/jit.h"
#include "tmem/opcode.h"
#include "tmem/reduction.h"
#include "tmem/target.h"

namespace tmem {
namespace {

// A 256-byte local array indexed by the thread and a parameter: ptxas must keep it in memory.
const char* const kLocalArrayPtx = R"(.version 8.6
.target sm_100a
.address_size 64
.visible .entry local_array(.param .u64 out, .param .u32 idx)
{
  .local .align 4 .b8 buf[256];
  .reg .b64 %rd<8>;
  .reg .b32 %r<8>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [idx];
  mov.u32 %r2, %tid.x;
  mov.u64 %rd2, buf;
  cvta.local.u64 %rd2, %rd2;
  and.b32 %r3, %r2, 63;
  mul.wide.u32 %rd3, %r3, 4;
  add.u64 %rd4, %rd2, %rd3;
  st.u32 [%rd4], %r2;
  and.b32 %r4, %r1, 63;
  mul.wide.u32 %rd5, %r4, 4;
  add.u64 %rd6, %rd2, %rd5;
  ld.u32 %r5, [%rd6];
  cvta.to.global.u64 %rd7, %rd1;
  st.global.u32 [%rd7], %r5;
  ret;
}
)";

// `values` volatile loads, then as many volatile stores in reverse order: volatile accesses keep
// their order, so every value is live at once and -maxrregcount below `values` must spill.
std::string many_live_values_ptx(int values) {
  std::ostringstream ptx;
  ptx << ".version 8.6\n.target sm_100a\n.address_size 64\n"
      << ".visible .entry live_values(.param .u64 in, .param .u64 out)\n{\n"
      << "  .reg .b64 %rd<4>;\n  .reg .b32 %v<" << values << ">;\n"
      << "  ld.param.u64 %rd0, [in];\n  ld.param.u64 %rd1, [out];\n"
      << "  cvta.to.global.u64 %rd2, %rd0;\n  cvta.to.global.u64 %rd3, %rd1;\n";
  for (int k = 0; k < values; ++k)
    ptx << "  ld.volatile.global.u32 %v" << k << ", [%rd2+" << 4 * k << "];\n";
  for (int k = values - 1; k >= 0; --k)
    ptx << "  st.volatile.global.u32 [%rd3+" << 4 * k << "], %v" << k << ";\n";
  ptx << "  ret;\n}\n";
  return ptx.str();
}

// `caller` calls `helper`, which has a 128-byte local array; `other` calls nothing. Compiled
// relocatable (-c), the call stays a call and the helper its own function.
const char* const kCallPtx = R"(.version 8.6
.target sm_100a
.address_size 64
.func (.reg .b32 r) helper(.reg .b32 a)
{
  .local .align 4 .b8 hb[128];
  .reg .b64 %rd<4>;
  .reg .b32 %t<4>;
  mov.u64 %rd1, hb;
  cvta.local.u64 %rd1, %rd1;
  and.b32 %t1, a, 31;
  mul.wide.u32 %rd2, %t1, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.u32 [%rd3], a;
  ld.u32 r, [%rd1+8];
  ret;
}
.visible .entry caller(.param .u64 out)
{
  .reg .b64 %rd<3>;
  .reg .b32 %r<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  call (%r2), helper, (%r1);
  cvta.to.global.u64 %rd2, %rd1;
  st.global.u32 [%rd2], %r2;
  ret;
}
.visible .entry other(.param .u64 out)
{
  .reg .b64 %rd<3>;
  .reg .b32 %r<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  cvta.to.global.u64 %rd2, %rd1;
  st.global.u32 [%rd2], %r1;
  ret;
}
)";

std::string ptx_of(const ptx::Module& module) {
  auto text = ptx::print(module);
  EXPECT_TRUE(text.ok()) << text.error().full_text();
  return text.ok() ? *text : std::string();
}

CompileOptions ptxas_options(std::vector<std::string> extra = {}) {
  CompileOptions options;
  options.backend = Backend::kPtxas;
  options.extra_options = std::move(extra);
  return options;
}

std::vector<char> compiled(const std::string& ptx, const CompileOptions& options) {
  auto module = compile_ptx(ptx, options);
  EXPECT_TRUE(module.ok()) << module.error().full_text();
  return module.ok() ? module->cubin : std::vector<char>();
}

// The instructions of `function` in the disassembly, NOPs left out; nullopt without a tool.
std::optional<int> listed_instructions(const std::vector<char>& cubin,
                                       const std::string& function) {
  const auto tool = sass::find_disassembler();
  if (!tool) return std::nullopt;
  auto text = sass::disassemble(*tool, cubin);
  EXPECT_TRUE(text.ok()) << text.error().full_text();
  if (!text.ok()) return std::nullopt;
  const auto listings = sass::listings_by_function(*text);
  const auto it = listings.find(function);
  EXPECT_NE(it, listings.end()) << function;
  if (it == listings.end()) return std::nullopt;
  return static_cast<int>(it->second.mnemonics().size()) - it->second.count("NOP");
}

// ---- cuobjdump and ptxas -v, the references
// ------------------------------------------------------

// cuobjdump: $TMEMJIT_CUOBJDUMP, PATH, beside ptxas, or the nvidia-cuda-cuobjdump wheel.
std::optional<std::string> search_cuobjdump() {
  auto executable = [](const std::string& path) {
    return !path.empty() && ::access(path.c_str(), X_OK) == 0;
  };
  if (const char* env = std::getenv("TMEMJIT_CUOBJDUMP"); env && executable(env)) return env;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':'))
      if (executable(dir + "/cuobjdump")) return dir + "/cuobjdump";
  }
  const std::string ptxas = ptxas_path();
  if (const auto slash = ptxas.rfind('/'); slash != std::string::npos)
    if (executable(ptxas.substr(0, slash) + "/cuobjdump"))
      return ptxas.substr(0, slash) + "/cuobjdump";
  auto out = run_process({"python3", "-c", "import nvidia\nfor p in nvidia.__path__: print(p)"});
  if (out && out->exit_code == 0) {
    std::stringstream lines(out->output);
    std::string dir;
    while (std::getline(lines, dir))
      for (const char* sub : {"/cu13/bin/cuobjdump", "/cuda_cuobjdump/bin/cuobjdump"})
        if (executable(dir + sub)) return dir + sub;
  }
  return std::nullopt;
}

std::optional<std::string> find_cuobjdump() {
  static const std::optional<std::string> found = search_cuobjdump();
  return found;
}

constexpr const char* kNoCuobjdump =
    "cuobjdump not found ($TMEMJIT_CUOBJDUMP, PATH, the CUDA bin directory, the "
    "nvidia-cuda-cuobjdump wheel): the comparison with --dump-resource-usage is skipped";

// cuobjdump --dump-resource-usage of `function`: {"REG": 12, "STACK": 256, "LOCAL": 0, ...}.
std::map<std::string, int> resource_usage(const std::string& tool, const std::vector<char>& cubin,
                                          const std::string& function) {
  auto dir = ScratchDir::create("tmemjit-code-stats-");
  EXPECT_TRUE(dir.ok());
  if (!dir.ok()) return {};
  const std::string file = dir->file("module.cubin");
  EXPECT_TRUE(write_file(file, cubin).ok());
  auto out = run_process({tool, "--dump-resource-usage", file});
  EXPECT_TRUE(out.ok() && out->exit_code == 0) << (out.ok() ? out->output : "");
  if (!out.ok()) return {};
  std::map<std::string, int> usage;
  std::stringstream lines(out->output);
  std::string line;
  bool ours = false;
  while (std::getline(lines, line)) {
    if (line.find("Function ") != std::string::npos) {
      ours = line.find("Function " + function + ":") != std::string::npos;
      continue;
    }
    if (!ours) continue;
    std::stringstream fields(line);
    std::string field;
    while (fields >> field)
      if (const auto colon = field.find(':'); colon != std::string::npos)
        usage[field.substr(0, colon)] = std::atoi(field.c_str() + colon + 1);
    ours = false;
  }
  return usage;
}

// ptxas -v of `entry`: "Used N registers" and the stack ("N bytes stack frame", or with calls
// "N bytes cumulative stack size").
struct PtxasReport {
  int registers = -1;
  int stack = -1;
};
PtxasReport ptxas_report(const std::string& log, const std::string& entry) {
  PtxasReport report;
  const auto at = log.find("Compiling entry function '" + entry + "'");
  if (at == std::string::npos) return report;
  const std::string rest = log.substr(at);
  if (const auto used = rest.find("Used "); used != std::string::npos)
    report.registers = std::atoi(rest.c_str() + used + 5);
  const auto frame = rest.find(" bytes stack frame");
  if (frame != std::string::npos) {
    const auto begin = rest.find_last_not_of("0123456789", frame - 1) + 1;
    report.stack = std::atoi(rest.c_str() + begin);
  }
  const auto cumulative = rest.find(" bytes cumulative stack size");
  const auto next_entry = rest.find("Compiling entry function", 1);
  if (cumulative != std::string::npos && cumulative < next_entry) {
    const auto begin = rest.find_last_not_of("0123456789", cumulative - 1) + 1;
    report.stack = std::max(report.stack, std::atoi(rest.c_str() + begin));
  }
  return report;
}

// Every figure that a reference tool gives for `entry` agrees with code_stats.
void expect_agrees_with_references(const std::vector<char>& cubin, const std::string& entry,
                                   const CodeStats& stats, const std::string& ptxas_log) {
  SCOPED_TRACE(entry);
  if (!ptxas_log.empty()) {
    const PtxasReport report = ptxas_report(ptxas_log, entry);
    EXPECT_EQ(stats.registers, report.registers) << ptxas_log;
    EXPECT_EQ(stats.local_bytes, report.stack) << ptxas_log;
  }
  if (auto listed = listed_instructions(cubin, entry)) {
    EXPECT_EQ(stats.instructions, *listed);
  }
  const auto cuobjdump = find_cuobjdump();
  if (!cuobjdump) return;
  const auto usage = resource_usage(*cuobjdump, cubin, entry);
  ASSERT_TRUE(usage.count("REG") && usage.count("STACK")) << "no resource usage for " << entry;
  EXPECT_EQ(stats.registers, usage.at("REG"));
  EXPECT_EQ(stats.local_bytes, usage.at("STACK") + (usage.count("LOCAL") ? usage.at("LOCAL") : 0));
  std::printf("[ cuobjdump ] %s: REG:%d STACK:%d LOCAL:%d | code_stats %s\n", entry.c_str(),
              usage.at("REG"), usage.at("STACK"), usage.count("LOCAL") ? usage.at("LOCAL") : 0,
              to_string(stats).c_str());
}

// ---- kernels with known properties
// ---------------------------------------------------------------

TEST(CodeStats, LocalArrayIsLocalMemory) {
  auto module = compile_ptx(kLocalArrayPtx, ptxas_options({"-v"}));
  ASSERT_TRUE(module.ok()) << module.error().full_text();
  auto stats = code_stats(module->cubin, "local_array");
  ASSERT_TRUE(stats.ok()) << stats.error().full_text();
  EXPECT_EQ(stats->local_bytes, 256);  // the array, no spills
  EXPECT_GT(stats->registers, 0);
  EXPECT_GT(stats->instructions, 0);
  EXPECT_EQ(stats->ldtm, 0);
  EXPECT_EQ(stats->sttm, 0);
  EXPECT_EQ(stats->disassembler, "sass encoding (sm_100 family)");
  expect_agrees_with_references(module->cubin, "local_array", *stats, module->log);
}

TEST(CodeStats, MaxrregcountForcesSpills) {
  const std::string ptx = many_live_values_ptx(96);
  auto roomy = compile_ptx(ptx, ptxas_options({"-v"}));
  ASSERT_TRUE(roomy.ok()) << roomy.error().full_text();
  auto tight = compile_ptx(ptx, ptxas_options({"-v", "-maxrregcount=32"}));
  ASSERT_TRUE(tight.ok()) << tight.error().full_text();
  auto without = code_stats(roomy->cubin, "live_values", Disassembly::kSkip);
  auto with = code_stats(tight->cubin, "live_values", Disassembly::kSkip);
  ASSERT_TRUE(without.ok() && with.ok());
  EXPECT_EQ(without->local_bytes, 0);
  EXPECT_GT(without->registers, 96);
  EXPECT_GT(with->local_bytes, 0);  // the spills
  EXPECT_LE(with->registers, 32);
  EXPECT_GT(with->instructions, without->instructions);  // the spill stores and loads
  EXPECT_NE(tight->log.find("spill stores"), std::string::npos);
  expect_agrees_with_references(roomy->cubin, "live_values", *without, roomy->log);
  expect_agrees_with_references(tight->cubin, "live_values", *with, tight->log);
}

TEST(CodeStats, TmemTransfersAreLdtmAndSttm) {
  // Through the library's default backend, as compile_kernel compiles.
  const std::vector<char> cubin = compiled(ptx_of(testing::seed_roundtrip_kernel()), {});
  auto stats = code_stats(cubin, "tmem_roundtrip");
  ASSERT_TRUE(stats.ok()) << stats.error().full_text();
  EXPECT_EQ(stats->local_bytes, 0);
  EXPECT_GE(stats->registers, 64);  // 64 words per thread in flight
  expect_agrees_with_references(cubin, "tmem_roundtrip", *stats, "");
  EXPECT_EQ(stats->ldtm, 1);  // tcgen05.ld.32x32b.x64
  EXPECT_EQ(stats->sttm, 1);  // tcgen05.st.32x32b.x64
  EXPECT_EQ(stats->disassembler, "sass encoding (sm_100 family)");
  auto listed = code_stats(cubin, "tmem_roundtrip", Disassembly::kTool);
  ASSERT_TRUE(listed.ok()) << listed.error().full_text();
  if (!sass::find_disassembler()) {
    EXPECT_EQ(listed->ldtm, -1);
    EXPECT_EQ(listed->disassembler, sass::search_description());
    GTEST_SKIP() << "LDTM/STTM from the encoding checked; not against a disassembler: "
                 << sass::search_description();
  }
  EXPECT_EQ(listed->ldtm, 1);
  EXPECT_EQ(listed->sttm, 1);
  EXPECT_EQ(listed->disassembler, sass::find_disassembler()->path);
}

TEST(CodeStats, CountsBelongToTheirOwnEntry) {
  // One module, a kernel per opcode: each entry's counts are its own (16x32bx2 is two per access).
  std::vector<Opcode> opcodes;
  for (const char* text :
       {"tcgen05.ld.sync.aligned.32x32b.x8.b32", "tcgen05.st.sync.aligned.16x64b.x4.b32",
        "tcgen05.ld.sync.aligned.16x32bx2.x2.b32", "tcgen05.st.sync.aligned.16x256b.x1.b32"})
    opcodes.push_back(Opcode::parse(text).value());
  ptx::Module m;
  for (const Opcode& opcode : opcodes)
    testing::add_single_opcode_kernel(m, opcode, testing::kernel_name_for(opcode), 128);
  const std::vector<char> cubin = compiled(ptx_of(m), ptxas_options({"-v"}));
  for (const Opcode& opcode : opcodes) {
    const std::string entry = testing::kernel_name_for(opcode);
    SCOPED_TRACE(entry);
    auto stats = code_stats(cubin, entry);
    ASSERT_TRUE(stats.ok()) << stats.error().full_text();
    EXPECT_EQ(stats->ldtm, opcode.is_load() ? opcode.accesses() : 0);
    EXPECT_EQ(stats->sttm, opcode.is_load() ? 0 : opcode.accesses());
    EXPECT_EQ(stats->local_bytes, 0);
    expect_agrees_with_references(cubin, entry, *stats, "");
    // The disassembler lists each function of the module apart: the same counts.
    if (!sass::find_disassembler()) continue;
    auto listed = code_stats(cubin, entry, Disassembly::kTool);
    ASSERT_TRUE(listed.ok()) << listed.error().full_text();
    EXPECT_EQ(listed->ldtm, stats->ldtm);
    EXPECT_EQ(listed->sttm, stats->sttm);
  }
  if (!sass::find_disassembler())
    GTEST_SKIP() << "counts from the encoding checked; not against a disassembler: "
                 << sass::search_description();
}

TEST(CodeStats, CalleesCount) {
  // Relocatable: the helper stays a function of its own, with its frame, which the caller needs.
  auto module = compile_ptx(kCallPtx, ptxas_options({"-c"}));
  ASSERT_TRUE(module.ok()) << module.error().full_text();
  auto caller = code_stats(module->cubin, "caller", Disassembly::kSkip);
  auto other = code_stats(module->cubin, "other", Disassembly::kSkip);
  auto helper = code_stats(module->cubin, "helper", Disassembly::kSkip);
  ASSERT_TRUE(caller.ok() && other.ok() && helper.ok());
  EXPECT_EQ(helper->local_bytes, 128);
  EXPECT_EQ(caller->local_bytes, 128);  // the helper's frame, through the call graph
  EXPECT_EQ(other->local_bytes, 0);
  // The caller's instructions are its own and the helper's.
  const auto own = listed_instructions(module->cubin, "caller");
  const auto helpers = listed_instructions(module->cubin, "helper");
  if (own && helpers) {
    EXPECT_EQ(caller->instructions, *own + *helpers);
    EXPECT_EQ(helper->instructions, *helpers);
  }
  // Whole-program: inlined, the caller's own frame.
  auto whole = compile_ptx(kCallPtx, ptxas_options({"-v"}));
  ASSERT_TRUE(whole.ok());
  auto inlined = code_stats(whole->cubin, "caller");
  ASSERT_TRUE(inlined.ok());
  EXPECT_EQ(inlined->local_bytes, 128);
  expect_agrees_with_references(whole->cubin, "caller", *inlined, whole->log);
  expect_agrees_with_references(whole->cubin, "other", code_stats(whole->cubin, "other").value(),
                                whole->log);
}

// A kernel that prints calls vprintf, which the driver resolves at load: an undefined symbol in
// the cubin with no code of its own, left out of the counts (a CuTe tutorial's kernel prints).
TEST(CodeStats, AnExternalFunctionHasNoCodeToCount) {
  const char* const ptx = R"(.version 8.6
.target sm_100a
.address_size 64
.extern .func (.param .b32 status) vprintf (.param .b64 format, .param .b64 args);
.global .align 1 .b8 text[4] = {104, 105, 10, 0};
.visible .entry prints()
{
  .reg .b64 %rd<3>;
  .reg .b32 %r<2>;
  mov.u64 %rd1, text;
  cvta.global.u64 %rd2, %rd1;
  {
  .param .b64 format;
  st.param.b64 [format], %rd2;
  .param .b64 args;
  st.param.b64 [args], 0;
  .param .b32 status;
  call.uni (status), vprintf, (format, args);
  ld.param.b32 %r1, [status];
  }
  ret;
}
)";
  auto module = compile_ptx(ptx, ptxas_options());
  ASSERT_TRUE(module.ok()) << module.error().full_text();
  auto stats = code_stats(module->cubin, "prints", Disassembly::kSkip);
  ASSERT_TRUE(stats.ok()) << stats.error().full_text();
  EXPECT_GT(stats->registers, 0);
  EXPECT_GT(stats->instructions, 0);
}

TEST(CodeStats, SkippedDisassemblySaysSo) {
  auto stats =
      code_stats(compiled(kLocalArrayPtx, ptxas_options()), "local_array", Disassembly::kSkip);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->ldtm, -1);
  EXPECT_EQ(stats->sttm, -1);
  EXPECT_EQ(stats->disassembler, "not asked");
  EXPECT_EQ(to_string(*stats).find("ldtm=? sttm=? (not asked)"),
            to_string(*stats).size() - std::strlen("ldtm=? sttm=? (not asked)"));
}

TEST(CodeStats, CuobjdumpComparison) {
  // The figures the report quotes, beside cuobjdump's, for the kernels above.
  const auto cuobjdump = find_cuobjdump();
  if (!cuobjdump) GTEST_SKIP() << kNoCuobjdump;
  const std::vector<char> cubin = compiled(ptx_of(testing::seed_roundtrip_kernel()), {});
  expect_agrees_with_references(cubin, "tmem_roundtrip",
                                code_stats(cubin, "tmem_roundtrip").value(), "");
}

// ---- ELF surgery
// ---------------------------------------------------------------------------------

Elf64_Ehdr header_of(const std::vector<char>& cubin) {
  Elf64_Ehdr header;
  std::memcpy(&header, cubin.data(), sizeof header);
  return header;
}

// The index of the section named `name`.
size_t section_index(const std::vector<char>& cubin, const std::string& name) {
  const Elf64_Ehdr h = header_of(cubin);
  Elf64_Shdr names;
  std::memcpy(&names, cubin.data() + h.e_shoff + h.e_shstrndx * h.e_shentsize, sizeof names);
  for (size_t k = 0; k < h.e_shnum; ++k) {
    Elf64_Shdr s;
    std::memcpy(&s, cubin.data() + h.e_shoff + k * h.e_shentsize, sizeof s);
    if (name == cubin.data() + names.sh_offset + s.sh_name) return k;
  }
  ADD_FAILURE() << "no section " << name;
  return 0;
}

Elf64_Shdr* section_header(std::vector<char>& cubin, size_t index) {
  const Elf64_Ehdr h = header_of(cubin);
  return reinterpret_cast<Elf64_Shdr*>(cubin.data() + h.e_shoff + index * h.e_shentsize);
}

// ---- LDTM/STTM from the encoding: every form, other arches, the opcode field
// ---------------------------------------

constexpr const char* kEncodingCounted = "sass encoding (sm_100 family)";

// Every .redOp{.abs}{.NaN}.type; make_load_reduce refuses the combinations rule R14 forbids.
std::vector<Reduction> every_reduction() {
  std::vector<Reduction> all;
  for (ReductionOp op : {ReductionOp::kMin, ReductionOp::kMax})
    for (ReductionType type : {ReductionType::kF32, ReductionType::kU32, ReductionType::kS32})
      for (bool abs : {false, true})
        for (bool nan : {false, true}) all.push_back({op, type, abs, nan});
  return all;
}

// Every row of the opcode table that `target` accepts: ld and st of each shape, .num and pack,
// and ld.red of each shape, .num and reduction where the target has it (rule R14).
std::vector<Opcode> every_form(Target target) {
  std::vector<Opcode> forms;
  for (Direction direction : {Direction::kLoad, Direction::kStore})
    for (Shape shape : all_shapes())
      for (int num = 1; num <= 128; num *= 2)
        for (bool pack : {false, true})
          if (auto op = Opcode::make(direction, shape, num, pack)) forms.push_back(*op);
  for (Shape shape : all_shapes())
    for (int num = 1; num <= 128; num *= 2)
      for (const Reduction& reduction : every_reduction())
        if (auto op = Opcode::make_load_reduce(shape, num, reduction); op && op->supports(target))
          forms.push_back(*op);
  return forms;
}

// The code of one kernel: its entry's .text section.
std::vector<char> text_of(const std::vector<char>& cubin, const std::string& entry) {
  auto sections = elf::read_sections(cubin);
  EXPECT_TRUE(sections.ok());
  if (!sections.ok()) return {};
  for (const elf::Section& section : *sections)
    if (section.name == ".text." + entry)
      return std::vector<char>(cubin.begin() + static_cast<long>(section.offset),
                               cubin.begin() + static_cast<long>(section.offset + section.size));
  ADD_FAILURE() << "no .text." << entry;
  return {};
}

// One instruction of nvdisasm's listing: its index (address / 16) and mnemonic, guard left out.
struct ListedInstruction {
  size_t index = 0;
  std::string mnemonic;  // "LDTM.16dp64bit.x2"
};

// nvdisasm -b of raw code (the .text sections of many kernels end to end): one subprocess for
// all of them, where a cubin each would cost ~0.4 s of CPU apiece. The opcodes nvdisasm rejects
// fail the test (it then lists nothing).
std::vector<ListedInstruction> disassemble_raw(const std::string& nvdisasm,
                                               const std::vector<char>& code, Target target) {
  auto dir = ScratchDir::create("tmemjit-code-stats-raw-");
  EXPECT_TRUE(dir.ok());
  if (!dir.ok()) return {};
  const std::string file = dir->file("code.bin");
  EXPECT_TRUE(write_file(file, code).ok());
  std::string arch = "SM" + std::string(to_string(target)).substr(3);  // sm_100a -> SM100a
  auto out = run_process({nvdisasm, "-b", arch, file}, std::chrono::minutes(5));
  EXPECT_TRUE(out.ok() && out->exit_code == 0) << (out.ok() ? out->output.substr(0, 2000) : "");
  if (!out.ok()) return {};
  std::vector<ListedInstruction> listed;
  std::stringstream lines(out->output);
  std::string line;
  while (std::getline(lines, line)) {
    const auto open = line.find("/*");
    const auto close = line.find("*/", open == std::string::npos ? 0 : open);
    if (open == std::string::npos || close == std::string::npos) continue;
    const std::string address = line.substr(open + 2, close - open - 2);
    if (address.empty() || address.find_first_not_of("0123456789abcdef") != std::string::npos)
      continue;
    std::stringstream tokens(line.substr(close + 2));
    std::string mnemonic;
    tokens >> mnemonic;
    if (!mnemonic.empty() && mnemonic[0] == '@') tokens >> mnemonic;  // the guard predicate
    listed.push_back({std::stoul(address, nullptr, 16) / 16, mnemonic});
  }
  return listed;
}

// What one kernel's counts were checked against.
struct FormCheck {
  std::string form;  // the opcode, for the failure message
  size_t first = 0;  // its instructions in the raw code: [first, first + count)
  size_t count = 0;
  CodeStats stats;  // code_stats by the encoding
};

// Every tcgen05.ld/st form (ld.red where the target has it) in a round-trip kernel compiled by
// compile_transfer: the LDTM/STTM the encoding counts are those nvdisasm lists, kernel by kernel.
// Each target's kernels are disassembled in one nvdisasm call, raw; the first kernel of each kind
// is also compared with kTool on its whole cubin, which ties the raw listing to the ELF one.
TEST(CodeStats, EncodingCountsAreTheDisassemblersForEveryForm) {
  const auto tool = sass::find_disassembler();
  if (!tool) GTEST_SKIP() << sass::search_description();
  if (tool->is_cuobjdump)
    GTEST_SKIP() << "needs nvdisasm, which reads raw code (-b); found only " << tool->path;
  auto cache_dir = ScratchDir::create("tmemjit-code-stats-cache-");
  ASSERT_TRUE(cache_dir.ok());
  const CacheOptions saved = cache_options();
  CacheOptions cache = saved;
  cache.enabled = true;
  cache.disk = true;
  cache.dir = cache_dir->path();
  set_cache_options(cache);
  struct Restore {
    CacheOptions saved;
    ~Restore() {
      (void)clear_cache(false);
      set_cache_options(saved);
    }
  } restore{saved};

  for (Target target : {Target::kSm100a, Target::kSm103a}) {
    SCOPED_TRACE(std::string(to_string(target)));
    const std::vector<Opcode> forms = every_form(target);
    std::vector<TransferSpec> specs;
    for (const Opcode& form : forms) specs.push_back(tmemjit_test::identity_spec(form).make());
    CompileOptions options;
    options.target = target;
    const Status compiled_all = warmup(specs, options);  // on every core
    ASSERT_TRUE(compiled_all.ok()) << compiled_all.error().full_text();

    std::vector<char> code;
    std::vector<FormCheck> checks;
    std::set<std::string> kinds_tied;  // "ld", "st", "ld.red": compared with kTool once each
    int loads = 0, stores = 0, reductions = 0;
    for (size_t k = 0; k < forms.size(); ++k) {
      const Opcode& form = forms[k];
      SCOPED_TRACE(form.to_string());
      auto kernel = compile_transfer(specs[k], options);  // a memory hit
      ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
      const std::vector<char> cubin(kernel->cubin().begin(), kernel->cubin().end());
      const std::string entry(kernel->name());
      auto stats = code_stats(cubin, entry);
      ASSERT_TRUE(stats.ok()) << stats.error().full_text();
      EXPECT_EQ(stats->disassembler, kEncodingCounted);
      // A round trip stores and loads: neither count is vacuously 0 == 0.
      EXPECT_GT(stats->ldtm, 0);
      EXPECT_GT(stats->sttm, 0);
      const std::string kind = form.reduces() ? "ld.red" : form.is_load() ? "ld" : "st";
      (form.reduces() ? reductions : form.is_load() ? loads : stores) += 1;
      if (kinds_tied.insert(kind).second) {
        auto listed = code_stats(cubin, entry, Disassembly::kTool);
        ASSERT_TRUE(listed.ok()) << listed.error().full_text();
        EXPECT_EQ(listed->disassembler, tool->path);
        EXPECT_EQ(listed->ldtm, stats->ldtm);
        EXPECT_EQ(listed->sttm, stats->sttm);
      }
      const std::vector<char> text = text_of(cubin, entry);
      ASSERT_EQ(text.size() % 16, 0u);
      checks.push_back({form.to_string(), code.size() / 16, text.size() / 16, *stats});
      code.insert(code.end(), text.begin(), text.end());
    }

    const std::vector<ListedInstruction> listed = disassemble_raw(tool->path, code, target);
    ASSERT_EQ(listed.size(), code.size() / 16) << "nvdisasm listed other than every instruction";
    for (size_t i = 0; i < listed.size(); ++i) ASSERT_EQ(listed[i].index, i);
    std::set<std::string> variants;  // LDTM/STTM with their modifiers, as nvdisasm spells them
    int ldtm_total = 0, sttm_total = 0;
    for (const FormCheck& check : checks) {
      int ldtm = 0, sttm = 0;
      for (size_t i = check.first; i < check.first + check.count; ++i) {
        const std::string& mnemonic = listed[i].mnemonic;
        const std::string base = mnemonic.substr(0, mnemonic.find('.'));
        if (base == "LDTM") ++ldtm;
        if (base == "STTM") ++sttm;
        if (base == "LDTM" || base == "STTM") variants.insert(mnemonic);
      }
      EXPECT_EQ(check.stats.ldtm, ldtm) << check.form;
      EXPECT_EQ(check.stats.sttm, sttm) << check.form;
      ldtm_total += ldtm;
      sttm_total += sttm;
    }
    std::printf(
        "[ forms ] %s: %zu kernels (%d ld, %d st, %d ld.red), %zu instructions, %d LDTM "
        "and %d STTM (%zu distinct spellings): the encoding's counts are nvdisasm's\n",
        std::string(to_string(target)).c_str(), forms.size(), loads, stores, reductions,
        code.size() / 16, ldtm_total, sttm_total, variants.size());
  }
}

// `ptx` (.version 8.6, .target sm_100a) compiled by ptxas for `arch`, whichever arches the
// library targets.
std::vector<char> ptxas_cubin(std::string ptx, const std::string& arch) {
  ptx.replace(ptx.find("sm_100a"), 7, arch);
  ptx.replace(ptx.find(".version 8.6"), 12, ".version 8.8");  // sm_120 needs 8.7
  auto dir = ScratchDir::create("tmemjit-code-stats-arch-");
  EXPECT_TRUE(dir.ok());
  if (!dir.ok()) return {};
  EXPECT_TRUE(write_file(dir->file("k.ptx"), ptx).ok());
  auto out =
      run_process({ptxas_path(), "-arch=" + arch, dir->file("k.ptx"), "-o", dir->file("k.cubin")});
  EXPECT_TRUE(out.ok() && out->exit_code == 0) << (out.ok() ? out->output : "");
  std::ifstream in(dir->file("k.cubin"), std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(CodeStats, ArchesWithoutTmemCountNone) {
  // No tcgen05 exists before the sm_100 family, nor on sm_120/121 (PTX ISA §9.7.16): 0 and 0,
  // without reading the code; where a disassembler reads the arch, it lists none either.
  for (const char* arch : {"sm_80", "sm_90a", "sm_120"}) {
    SCOPED_TRACE(arch);
    const std::vector<char> cubin = ptxas_cubin(kLocalArrayPtx, arch);
    ASSERT_FALSE(cubin.empty());
    auto stats = code_stats(cubin, "local_array");
    ASSERT_TRUE(stats.ok()) << stats.error().full_text();
    EXPECT_EQ(stats->ldtm, 0);
    EXPECT_EQ(stats->sttm, 0);
    std::string sm = arch;
    if (sm.back() == 'a') sm.pop_back();  // e_flags leaves the suffix out
    EXPECT_EQ(stats->disassembler,
              "none on " + sm + ": tcgen05 exists only on sm_100, sm_101, sm_103 and sm_110");
    EXPECT_EQ(stats->local_bytes, 256);
    expect_agrees_with_references(cubin, "local_array", *stats, "");
    if (!sass::find_disassembler()) continue;
    auto listed = code_stats(cubin, "local_array", Disassembly::kTool);
    ASSERT_TRUE(listed.ok());
    if (listed->ldtm < 0) continue;  // a disassembler older than the arch: its message says so
    EXPECT_EQ(listed->ldtm, 0);
    EXPECT_EQ(listed->sttm, 0);
  }
}

TEST(CodeStats, SmVersionIsReadByTheAbisLayout) {
  // EI_ABIVERSION 8 (CUDA 12.8 on) keeps the SM in e_flags bits 8..15, 7 in bits 0..7; the arches
  // of the sm_100 family are read, the others named.
  const std::vector<char> good = compiled(ptx_of(testing::seed_roundtrip_kernel()), {});
  ASSERT_EQ(static_cast<unsigned char>(good[EI_ABIVERSION]), 8);
  EXPECT_EQ((header_of(good).e_flags >> 8) & 0xff, 100u);
  auto with = [&](std::uint8_t abi, std::uint32_t flags) {
    std::vector<char> cubin = good;
    cubin[EI_ABIVERSION] = static_cast<char>(abi);
    reinterpret_cast<Elf64_Ehdr*>(cubin.data())->e_flags = flags;
    return code_stats(cubin, "tmem_roundtrip").value();
  };
  for (std::uint32_t sm : {100u, 101u, 103u, 110u}) {
    const CodeStats v2 = with(8, (header_of(good).e_flags & ~0xff00u) | sm << 8);
    const CodeStats v1 = with(7, sm);
    for (const CodeStats& stats : {v2, v1}) {
      EXPECT_EQ(stats.disassembler, kEncodingCounted) << sm;
      EXPECT_EQ(stats.ldtm, 1);
      EXPECT_EQ(stats.sttm, 1);
    }
  }
  const std::string none =
      "none on sm_90: tcgen05 exists only on sm_100, sm_101, sm_103 and sm_110";
  EXPECT_EQ(with(7, 90).disassembler, none);
  EXPECT_EQ(with(7, 90).ldtm, 0);
  // The SM of the other layout is not read: V1 bits 0..7 of a V2 header say 2, not 100.
  EXPECT_EQ(with(7, header_of(good).e_flags).ldtm, 0);
  for (const auto& [abi, flags, why] : {std::tuple<int, std::uint32_t, std::string>{
                                            8, 130u << 8, "the LDTM/STTM encoding of sm_130"},
                                        {8, 107u << 8, "the LDTM/STTM encoding of sm_107"},
                                        {9, 100u << 8, "the SM version of ELF ABI version 9"}}) {
    const CodeStats stats = with(static_cast<std::uint8_t>(abi), flags);
    EXPECT_EQ(stats.ldtm, -1) << why;
    EXPECT_EQ(stats.sttm, -1) << why;
    EXPECT_EQ(stats.disassembler, why + " is not known here; Disassembly::kTool reads the code");
    EXPECT_GT(stats.instructions, 0);  // the ELF figures do not depend on the arch
  }
}

TEST(CodeStats, OpcodeIsTheLow12Bits) {
  // The guard predicate (bits 12..15) leaves an LDTM an LDTM, for the encoding and the
  // disassembler alike; bits 9..11 are the opcode's too (0x9ee LDTM, 0x5ee LDTM.STAT, and 0x3ee
  // neither).
  std::vector<char> good = compiled(ptx_of(testing::seed_roundtrip_kernel()), {});
  const Elf64_Shdr header = *section_header(good, section_index(good, ".text.tmem_roundtrip"));
  std::optional<std::uint64_t> ldtm_at;
  for (std::uint64_t at = 0; at < header.sh_size; at += 16) {
    std::uint64_t low = 0;
    std::memcpy(&low, good.data() + header.sh_offset + at, sizeof low);
    if ((low & 0xfff) == 0x9ee) ldtm_at = header.sh_offset + at;
  }
  ASSERT_TRUE(ldtm_at);
  auto patched = [&](std::uint64_t clear, std::uint64_t set) {
    std::vector<char> cubin = good;
    std::uint64_t low = 0;
    std::memcpy(&low, cubin.data() + *ldtm_at, sizeof low);
    low = (low & ~clear) | set;
    std::memcpy(cubin.data() + *ldtm_at, &low, sizeof low);
    return cubin;
  };
  const std::vector<char> guarded = patched(0xf000, 0x1000);  // @UP1
  EXPECT_EQ(code_stats(guarded, "tmem_roundtrip")->ldtm, 1);
  if (sass::find_disassembler()) {
    EXPECT_EQ(code_stats(guarded, "tmem_roundtrip", Disassembly::kTool)->ldtm, 1);
  }
  const auto other = code_stats(patched(0xe00, 0x200), "tmem_roundtrip");  // opcode 0x3ee
  EXPECT_EQ(other->ldtm, 0);
  EXPECT_EQ(other->sttm, 1);
}

// ---- malformed cubins
// ----------------------------------------------------------------------------

std::vector<char> small_cubin() { return compiled(kLocalArrayPtx, ptxas_options()); }

Error error_of(const std::vector<char>& cubin, const std::string& entry = "local_array") {
  auto stats = code_stats(cubin, entry, Disassembly::kSkip);
  EXPECT_FALSE(stats.ok());
  if (stats.ok()) return Error(ErrorCode::kInternal, "accepted");
  EXPECT_EQ(stats.error().code(), ErrorCode::kUsage) << stats.error().message();
  return stats.error();
}

#define EXPECT_MESSAGE_HAS(error, text) \
  EXPECT_NE((error).message().find(text), std::string::npos) << (error).message()

TEST(CodeStats, NoSuchEntryNamesTheKernels) {
  const Error error = error_of(small_cubin(), "missing_kernel");
  EXPECT_MESSAGE_HAS(error, "no function 'missing_kernel' in the cubin; its kernels: local_array");
}

TEST(CodeStats, WrongHeadersAreNamed) {
  const std::vector<char> good = small_cubin();
  ASSERT_FALSE(good.empty());
  EXPECT_MESSAGE_HAS(error_of({}), "fewer than an ELF64 header");
  std::vector<char> bad = good;
  bad[1] = 'X';
  EXPECT_MESSAGE_HAS(error_of(bad), "no ELF magic");
  bad = good;
  bad[EI_CLASS] = ELFCLASS32;
  EXPECT_MESSAGE_HAS(error_of(bad), "not a 64-bit little-endian ELF");
  bad = good;
  reinterpret_cast<Elf64_Ehdr*>(bad.data())->e_machine = EM_X86_64;
  EXPECT_MESSAGE_HAS(error_of(bad), "not EM_CUDA");
  bad = good;
  reinterpret_cast<Elf64_Ehdr*>(bad.data())->e_shoff = good.size() - 8;
  EXPECT_MESSAGE_HAS(error_of(bad), "the section header table");
  bad = good;
  reinterpret_cast<Elf64_Ehdr*>(bad.data())->e_shstrndx = 0xfff0;
  EXPECT_MESSAGE_HAS(error_of(bad), "section name table index");
  bad = good;
  reinterpret_cast<Elf64_Ehdr*>(bad.data())->e_shentsize = 8;
  EXPECT_MESSAGE_HAS(error_of(bad), "section header entries of 8 bytes");
}

TEST(CodeStats, SectionsOutsideTheImageAreNamed) {
  const std::vector<char> good = small_cubin();
  std::vector<char> bad = good;
  const size_t text = section_index(bad, ".text.local_array");
  section_header(bad, text)->sh_offset = good.size() - 16;
  EXPECT_MESSAGE_HAS(error_of(bad), "section " + std::to_string(text) + " (offset");
  EXPECT_MESSAGE_HAS(error_of(bad), "lies outside the image of " + std::to_string(good.size()));
  bad = good;
  section_header(bad, text)->sh_size = ~std::uint64_t{0};  // offset + size wraps around
  EXPECT_MESSAGE_HAS(error_of(bad), "lies outside the image");
  bad = good;
  section_header(bad, text)->sh_size -= 8;
  EXPECT_MESSAGE_HAS(error_of(bad), "not a whole number of 16-byte instructions");
  bad = good;
  section_header(bad, text)->sh_flags &= ~std::uint64_t{SHF_EXECINSTR};
  EXPECT_MESSAGE_HAS(error_of(bad), "which is not code");
  bad = good;
  section_header(bad, section_index(bad, ".symtab"))->sh_entsize = 4;
  EXPECT_MESSAGE_HAS(error_of(bad), "fewer than 24");
  bad = good;
  section_header(bad, section_index(bad, ".symtab"))->sh_type = SHT_PROGBITS;
  EXPECT_MESSAGE_HAS(error_of(bad), "no symbol table");
  bad = good;
  section_header(bad, section_index(bad, ".symtab"))->sh_link = 0;
  EXPECT_MESSAGE_HAS(error_of(bad), "which is not a string table");
  bad = good;
  section_header(bad, text)->sh_name = 0x7fffffff;
  EXPECT_MESSAGE_HAS(error_of(bad), "the name of section " + std::to_string(text));
}

TEST(CodeStats, MalformedInfoRecordsAreNamed) {
  std::vector<char> bad = small_cubin();
  const Elf64_Shdr info = *section_header(bad, section_index(bad, ".nv.info"));
  ASSERT_EQ(bad[info.sh_offset], 0x04);  // an EIFMT_SVAL record first
  const std::uint16_t huge = 0xfff0;
  std::memcpy(bad.data() + info.sh_offset + 2, &huge, sizeof huge);
  EXPECT_MESSAGE_HAS(error_of(bad), "'.nv.info': the record at offset 0 (attribute 0x");
  EXPECT_MESSAGE_HAS(error_of(bad), "runs past the section's end");
  bad = small_cubin();
  section_header(bad, section_index(bad, ".nv.info"))->sh_size = 2;
  EXPECT_MESSAGE_HAS(error_of(bad), "ends inside a record header at offset 0");
  bad = small_cubin();
  section_header(bad, section_index(bad, ".nv.callgraph"))->sh_size -= 4;
  EXPECT_MESSAGE_HAS(error_of(bad), "not a whole number of 8-byte caller/callee pairs");
}

TEST(CodeStats, EveryTruncationAndByteFlipIsAnErrorOrAnAnswer) {
  // The fuzz target's property over a real cubin: truncated anywhere, or any header byte changed,
  // the reader answers or names what is wrong (ASan builds check that it reads nothing outside).
  // LDTM/STTM from the encoding, as the fuzz target counts them: no subprocess.
  const std::vector<char> good = small_cubin();
  const auto reference = code_stats(good, "local_array").value();
  ASSERT_EQ(reference.disassembler, kEncodingCounted);
  const Elf64_Ehdr h = header_of(good);
  // The program headers come after the section headers; without them the figures are the same.
  const std::uint64_t read_part = h.e_shoff + std::uint64_t{h.e_shnum} * h.e_shentsize;
  for (size_t size = 0; size < good.size(); size += (size < 128 ? 1 : 37)) {
    const std::vector<char> cut(good.begin(), good.begin() + static_cast<long>(size));
    auto stats = code_stats(cut, "local_array");
    if (size >= read_part) {
      EXPECT_EQ(stats.value(), reference);
      continue;
    }
    ASSERT_FALSE(stats.ok()) << "truncated to " << size;
    EXPECT_EQ(stats.error().code(), ErrorCode::kUsage);
  }
  for (size_t at = 0; at < good.size(); ++at) {
    const bool header =
        at < sizeof(Elf64_Ehdr) ||
        (at >= h.e_shoff && at < h.e_shoff + std::uint64_t{h.e_shnum} * h.e_shentsize);
    if (!header && at % 7 != 0) continue;
    for (const int flip : {0x01, 0x80, 0xff}) {
      std::vector<char> bad = good;
      bad[at] = static_cast<char>(bad[at] ^ flip);
      auto stats = code_stats(bad, "local_array");
      if (!stats.ok()) {
        EXPECT_EQ(stats.error().code(), ErrorCode::kUsage) << at;
        continue;
      }
      EXPECT_EQ(stats->ldtm < 0, stats->sttm < 0) << at;
      EXPECT_LE(stats->ldtm + stats->sttm, stats->instructions) << at;
    }
  }
  EXPECT_EQ(code_stats(good, "local_array").value(), reference);
}

}  // namespace
}  // namespace tmem
