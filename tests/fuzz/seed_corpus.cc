// Writes the fuzzers' seed corpora from the inputs the unit tests and the docs use: every opcode
// form, the layouts and views of docs/descriptor-language.md, the seed document's specs and the
// identity spec of every form (tests/common/spec_fixtures.h), and valid disk-cache entries.
// Usage: fuzz_seed_corpus DIR  (writes DIR/<target>/<name>; the tree holds tests/fuzz/corpus).
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/spec_fixtures.h"
#include "runtime/cache/disk.h"
#include "tests/fuzz/fuzz_util.h"
#include "tmem/opcode.h"
#include "tmem/transfer.h"

namespace {

namespace fs = std::filesystem;

void write(const fs::path& dir, const std::string& name, const std::string& bytes) {
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << bytes;
}

std::vector<tmem::Opcode> every_form() {
  std::vector<tmem::Opcode> out;
  for (auto direction : {tmem::Direction::kLoad, tmem::Direction::kStore})
    for (tmem::Shape shape : tmem::all_shapes())
      for (int num = 1; num <= 128; num *= 2)
        for (bool pack : {false, true})
          if (auto op = tmem::Opcode::make(direction, shape, num, pack)) out.push_back(*op);
  return out;
}

std::string file_name(std::string text) {
  for (char& c : text)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const fs::path root = argv[1];
  using tmemjit_test::SpecText;

  for (const tmem::Opcode& op : every_form())
    write(root / "opcode", file_name(op.to_string()), op.to_string());
  write(root / "opcode", "missing_aligned", "tcgen05.ld.sync.16x64b.x2.b32");
  write(root / "opcode", "cp_shape", "tcgen05.st.sync.aligned.128x256b.x1.b32");

  const std::vector<std::string> layouts = {
      "S[(64, 2, 64) : (1 @ tid_in_wg, 64 @ tid_in_wg, 1)]",
      "S[8,4]",
      "S[(8,4)]",
      "S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1)] + R[2:4@warpid] + 5@warpid",
      "S[(32,16,2):(1@TLane,4@TCol,2@TCol)]",
      "S[(128,64):(1@TLane,1@TCol)]",
      "S[(64,2,64):(1@TLane,64@TLane,1@TCol)] + R[2:4@warpid] + 3",
      "S[(4,16,32):(32@TLane,1@TLane,1@TCol)] + 16@TLane",
      "TileLayout(S[(32,4,8):(1@TLane,32@TLane,1@TCol)])",
      "S[64:1] + R[(2,2):(1@wid_in_wg,2@wgid)] + 1@tx + 2@m",
  };
  for (size_t i = 0; i < layouts.size(); ++i)
    write(root / "layout", "doc_" + std::to_string(i), layouts[i]);
  // Findings (docs/reliability.md), kept as seeds so every run starts next to them.
  write(root / "layout", "finding_fuse_overflow", "S[(2,2):(1,4611686018427387904)]");
  write(root / "view", "finding_index_int64_max", "wg_local_layout(4)[9223372036854775807]");
  write(root / "spec", "finding_json_imm_unsigned.json",
        R"json({"op": "tcgen05.ld.sync.aligned.16x32bx2.x1.b32", "scope": "warpgroup", )json"
        R"json("tmem": "wg_local_layout(1)", "regs": "wg_local_layout(1)", )json"
        R"json("tmem2": "wg_local_layout(1)", "imm": 18446744073709551615})json");

  std::vector<std::string> views = {
      "tmem_datapath_layout(\"B\",64,128).rearrange(\"(wh r) (wl c) -> (wl wh) r c\", wh=2, r=32, "
      "wl=2)",
      "tensor((32,16,2), S[(32,16,2):(1@TLane,4@TCol,2@TCol)], bf16)",
      "tmem_datapath_layout(\"F\", 64, 32, sub_slab=1)",
      "tmem_datapath_layout(\"G\", 32, 16, dtype=f16)",
      "wg_local_layout(64, rows=64, dtype=b32)",
      "tensor((8,16), S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1)] + R[2:4@warpid] + 5@warpid)",
      "tensor((128,16), S[(128,16):(1@TLane,1@TCol)], b32).rearrange(\"(g r) c -> g r c\", g=4)[:, "
      "16:32, 8:12]",
      "wg_local_layout(32).view(4, 32, -1).permute(1, 0, 2)[3, :, 1:]",
  };
  const std::vector<SpecText> seeds = {
      tmemjit_test::seed_layout_b(true), tmemjit_test::seed_layout_b(false),
      tmemjit_test::seed_pack(true),     tmemjit_test::seed_pack(false),
      tmemjit_test::seed_split(true),    tmemjit_test::seed_split(false)};
  for (const SpecText& seed : seeds) {
    views.push_back(seed.tmem);
    views.push_back(seed.regs);
  }
  for (size_t i = 0; i < views.size(); ++i)
    write(root / "view", "doc_" + std::to_string(i), views[i]);

  int spec_count = 0;
  auto add_spec = [&](const tmem::TransferSpec& spec, bool for_spec_target) {
    const std::string name = "spec_" + std::to_string(spec_count++);
    write(root / "check", name, spec.to_string());
    if (!for_spec_target) return;
    write(root / "spec", name + ".txt", spec.to_string());
    write(root / "spec", name + ".json", spec.to_json());
  };
  for (const SpecText& seed : seeds) add_spec(seed.make(), true);
  for (const tmem::Opcode& op : every_form()) {
    add_spec(tmemjit_test::identity_spec(op).make(), op.num() == 1);
    if (op.atom_rows() == 16 && op.num() <= 2)
      add_spec(tmemjit_test::identity_spec(op, 16).make(), false);
  }
  // The raw-field form of fuzz_check: a 0x00 byte, then FuzzedDataProvider bytes.
  for (int i = 0; i < 4; ++i) {
    std::string bytes(1, '\0');
    for (int k = 0; k < 96; ++k) bytes += static_cast<char>((k * 37 + i * 11) & 0xff);
    write(root / "check", "fields_" + std::to_string(i), bytes);
  }

  // fuzz_differential: seed and case index of tests/exec/differential_test.cc's first cases.
  for (std::uint64_t index = 0; index < 6; ++index) {
    std::string bytes(16, '\0');
    const std::uint64_t seed = 20261201;
    std::memcpy(bytes.data(), &seed, 8);
    std::memcpy(bytes.data() + 8, &index, 8);
    write(root / "differential", "case_" + std::to_string(index), bytes);
  }

  const std::vector<tmem::Payload> payloads = {
      {},
      {{'\x7f', 'E', 'L', 'F'}, ".version 8.8\n.target sm_100a\n", "entry=roundtrip"},
      {std::vector<char>(300, '\x5a'), std::string(40, 'p'), ""},
  };
  for (size_t i = 0; i < payloads.size(); ++i) {
    const std::string entry = tmem::encode_entry(tmemjit_fuzz::kDiskKey, payloads[i]);
    write(root / "disk_entry", "entry_" + std::to_string(i), entry);
    write(root / "disk_entry", "truncated_" + std::to_string(i), entry.substr(0, entry.size() - 1));
  }
  write(root / "disk_entry", "other_key", tmem::encode_entry(tmem::Key128{1, 2}, payloads[1]));
  return 0;
}
