// Code quality of the generated kernels (issue 8): for the seed's three examples and a sweep of
// shapes, the STTM/LDTM per warp against the plan's minimum, registers per thread and spills (the
// compiler's info log, and the local frame of .nv.info), and the kernel's SASS size through the
// default route against plain ptxas (and NVRTC on the CUDA C++ twin) on the same input. Prints one
// JSON document; bench/report.py turns it into the code-quality table of docs/benchmarks.md.
#include <cstdio>
#include <regex>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "common/elf.h"
#include "runtime/compile/sass.h"

namespace {

using tmem::Backend;
using tmem::CompileOptions;
using tmemjit_test::SpecText;

struct Case {
  std::string name;
  SpecText text;
};

std::vector<Case> cases() {
  std::vector<Case> out = {{"seed Layout B (st 32x32b.x64)", tmemjit_test::seed_layout_b(true)},
                           {"seed pack (st 32x32b.x64.unpack::16b)", tmemjit_test::seed_pack(true)},
                           {"seed split (st 16x32bx2.x4)", tmemjit_test::seed_split(true)}};
  for (tmem::Shape shape : tmem::all_shapes())
    for (int num : {1, 8, 32})
      out.push_back({std::string(tmem::to_string(shape)) + ".x" + std::to_string(num),
                     tmem::bench::identity_store(shape, num)});
  return out;
}

struct Resources {
  int registers = -1;
  int spill_stores = -1;  // bytes
  int spill_loads = -1;   // bytes
};

// "Used 72 registers" and "N bytes spill stores, M bytes spill loads" of a ptxas -v info log.
Resources resources_of(const std::string& log) {
  Resources r;
  std::smatch m;
  if (std::regex_search(log, m, std::regex(R"(Used (\d+) registers)")))
    r.registers = std::stoi(m[1]);
  if (std::regex_search(log, m,
                        std::regex(R"((\d+) bytes spill stores, (\d+) bytes spill loads)"))) {
    r.spill_stores = std::stoi(m[1]);
    r.spill_loads = std::stoi(m[2]);
  }
  return r;
}

std::string quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

struct Compiled {
  bool ok = false;
  std::string error;
  Resources resources;
  std::uint64_t text_bytes = 0;  // .text.tmem_roundtrip
  std::uint32_t frame = 0;       // largest local frame (.nv.info EIATTR_FRAME_SIZE)
  int sttm = -1, ldtm = -1, instructions = -1;
};

Compiled inspect(tmem::Result<tmem::CompiledModule> module,
                 const std::optional<tmem::sass::Disassembler>& tool) {
  Compiled out;
  if (!module.ok()) {
    out.error = module.error().message();
    return out;
  }
  out.ok = true;
  out.resources = resources_of(module->log);
  if (auto sections = tmem::elf::read_sections(module->cubin); sections.ok())
    out.text_bytes = tmem::elf::section_size(*sections, ".text.tmem_roundtrip");
  if (auto frame = tmem::elf::max_frame_size(module->cubin); frame.ok()) out.frame = *frame;
  if (tool) {
    if (auto text = tmem::sass::disassemble(*tool, module->cubin); text.ok()) {
      const auto listings = tmem::sass::listings_by_function(*text);
      for (const auto& [name, listing] : listings) {
        if (name.find("tmem_roundtrip") == std::string::npos) continue;
        out.sttm = listing.count("STTM");
        out.ldtm = listing.count("LDTM");
        out.instructions = static_cast<int>(listing.mnemonics().size());
      }
    }
  }
  return out;
}

std::string json_of(const Compiled& c) {
  if (!c.ok) return "{\"ok\": false, \"error\": " + quote(c.error) + "}";
  return "{\"ok\": true, \"registers\": " + std::to_string(c.resources.registers) +
         ", \"spill_stores\": " + std::to_string(c.resources.spill_stores) +
         ", \"spill_loads\": " + std::to_string(c.resources.spill_loads) +
         ", \"frame\": " + std::to_string(c.frame) +
         ", \"text_bytes\": " + std::to_string(c.text_bytes) +
         ", \"sttm\": " + std::to_string(c.sttm) + ", \"ldtm\": " + std::to_string(c.ldtm) +
         ", \"instructions\": " + std::to_string(c.instructions) + "}";
}

}  // namespace

int main() {
  const std::optional<tmem::sass::Disassembler> tool = tmem::sass::find_disassembler();
  std::printf("{\n  \"disassembler\": %s,\n  \"default_backend\": \"%s\",\n  \"cases\": [\n",
              quote(tool ? tool->path : "none: " + tmem::sass::search_description()).c_str(),
              std::string(tmem::to_string(tmem::resolve_backend(Backend::kAuto))).c_str());
  const std::vector<Case> all = cases();
  for (size_t i = 0; i < all.size(); ++i) {
    const Case& c = all[i];
    std::string row = "    {\"name\": " + quote(c.name);
    auto spec = tmem::bench::parse_spec(c.text);
    auto plan = spec.ok() ? tmem::check(*spec) : tmem::Result<tmem::Plan>(spec.error());
    if (!plan.ok()) {
      row += ", \"error\": " + quote(plan.error().message()) + "}";
    } else {
      const std::string ptx =
          tmem::ptx::print(tmem::kernels::build_kernel(*plan, tmem::KernelKind::kRoundtrip).value())
              .value();
      // -v only adds the resource lines to the info log; the code is the same.
      CompileOptions verbose;
      verbose.extra_options = {"-v"};
      CompileOptions ptxas = verbose;
      ptxas.backend = Backend::kPtxas;
      const Compiled default_route = inspect(tmem::compile_ptx(ptx, verbose), tool);
      const Compiled plain_ptxas = inspect(tmem::compile_ptx(ptx, ptxas), tool);
      CompileOptions nvrtc_verbose;
      nvrtc_verbose.extra_options = {"--ptxas-options=-v"};
      const Compiled nvrtc =
          inspect(tmem::compile_cuda(tmem::bench::cuda_roundtrip_source(*plan, "tmem_roundtrip"),
                                     "tmem_roundtrip", nvrtc_verbose),
                  tool);
      // The plan's minimum per warp: one instruction per repeat each way; a 16x32bx2 instruction
      // is two SASS ops (docs/compile-backends.md, SASS checks).
      const int per_instruction = plan->op.is_split() ? 2 : 1;
      row += ", \"op\": " + quote(plan->op.to_string()) +
             ", \"scope\": " + quote(plan->scope.to_string()) +
             ", \"regs_per_thread\": " + std::to_string(plan->regs_per_thread) +
             ", \"plan_instructions\": " + std::to_string(plan->instructions_per_warp()) +
             ", \"min_sttm\": " + std::to_string(plan->instructions_per_warp() * per_instruction) +
             ", \"min_ldtm\": " + std::to_string(plan->instructions_per_warp() * per_instruction) +
             ", \"default\": " + json_of(default_route) + ", \"ptxas\": " + json_of(plain_ptxas) +
             ", \"nvrtc\": " + json_of(nvrtc) + "}";
    }
    std::printf("%s%s\n", row.c_str(), i + 1 < all.size() ? "," : "");
  }
  std::printf("  ]\n}\n");
  return 0;
}
