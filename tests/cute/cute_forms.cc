// CuTe atom names as opcodes and CuTe tiles as libtmemjit specs.
#include "cute/cute_forms.h"

#include <regex>
#include <string>
#include <vector>

namespace tmemjit_cute {

std::string opcode_text(const std::string& dir, const std::string& shape, int num,
                        const std::string& pack) {
  const std::string ptx_shape = shape == "32dp32b"    ? "32x32b"
                                : shape == "16dp64b"  ? "16x64b"
                                : shape == "16dp128b" ? "16x128b"
                                : shape == "16dp256b" ? "16x256b"
                                : shape == "16dp32b"  ? "16x32bx2"
                                                      : "?";
  const std::string qualifier = pack.empty() ? "" : dir == "ld" ? ".pack::16b" : ".unpack::16b";
  return "tcgen05." + dir + ".sync.aligned." + ptx_shape + ".x" + std::to_string(num) + qualifier +
         ".b32";
}

std::string opcode_text_of_atom(const std::string& atom) {
  static const std::regex name(
      R"(SM100_TMEM_(LOAD|STORE)_(32dp32b|16dp64b|16dp128b|16dp256b|16dp32b)(\d+)x(_16b)?)");
  std::smatch m;
  if (!std::regex_match(atom, m, name)) return "";
  return opcode_text(m[1] == "LOAD" ? "ld" : "st", m[2], std::stoi(m[3]), m[4]);
}

namespace {

// One digit of a tensor: extent, stride in the layout's notation, and a name for rearrange.
struct Digit {
  int extent;
  std::string stride;
  std::string name;
};

std::string tensor_text(const std::vector<Digit>& digits, const std::string& dtype,
                        const std::string& offset = "") {
  std::string shape, strides;
  for (const Digit& d : digits) {
    shape += (shape.empty() ? "" : ",") + std::to_string(d.extent);
    strides += (strides.empty() ? "" : ",") + d.stride;
  }
  return "tensor((" + shape + "), S[(" + shape + "):(" + strides + ")]" + offset + ", " + dtype +
         ")";
}

}  // namespace

tmemjit_test::SpecText tile_spec(const tmem::Opcode& op, int cols, int lanes) {
  const int rows = op.atom_rows();
  const int row_blocks = lanes / rows;
  const int width = op.atom_tmem_cols() * op.accesses();  // cells per instruction
  const int col_blocks = cols / width;
  const int regs = op.regs_per_thread();
  const int n = op.num();
  const std::string dtype = op.packed() ? "f16" : "b32";

  // Repeats: column blocks, then row blocks (the last repeat axis is the fastest).
  std::vector<Digit> tmem{{4, "32@TLane", "g"}}, reg{{4, "32@tid_in_wg", "g"}};
  std::string repeat_names;
  if (col_blocks > 1) {
    tmem.push_back({col_blocks, std::to_string(width * (op.packed() ? 2 : 1)) + "@TCol", "kc"});
    reg.push_back({col_blocks, std::to_string(row_blocks * regs), "kc"});
    repeat_names += " kc";
  }
  if (row_blocks > 1) {
    tmem.push_back({row_blocks, "16@TLane", "kh"});
    reg.push_back({row_blocks, std::to_string(regs), "kh"});
    repeat_names += " kh";
  }
  // The atom: (rows, cols) or (rows, cols, 2) per access, as tests/common/spec_fixtures.h.
  tmem.push_back({rows, "1@TLane", "r"});
  if (op.packed()) {
    tmem.push_back({op.atom_cols(), "4@TCol", "c"});
    tmem.push_back({2, "2@TCol", "h"});
  } else {
    tmem.push_back({op.atom_cols(), "1@TCol", "c"});
  }
  // The register image (docs/tcgen05-rules.md §Images) as layout digits, grouped back to (row, col)
  // by rearrange.
  std::string groups;
  switch (op.shape()) {
    case tmem::Shape::k32x32b:
      reg.insert(reg.end(), {{32, "1@tid_in_wg", "l"}, {n, "1", "c"}});
      break;
    case tmem::Shape::k16x64b:
      reg.insert(reg.end(), {{2, "1@tid_in_wg", "rh"},
                             {8, "4@tid_in_wg", "rl"},
                             {n, "1", "ch"},
                             {2, "2@tid_in_wg", "cl"}});
      groups = "(rh rl) (ch cl)";
      break;
    case tmem::Shape::k16x128b:
      reg.insert(
          reg.end(),
          {{2, "1", "rh"}, {8, "4@tid_in_wg", "rl"}, {n, "2", "ch"}, {4, "1@tid_in_wg", "cl"}});
      groups = "(rh rl) (ch cl)";
      break;
    case tmem::Shape::k16x256b:
      reg.insert(reg.end(), {{2, "2", "rh"},
                             {8, "4@tid_in_wg", "rl"},
                             {n, "4", "ch"},
                             {4, "1@tid_in_wg", "cm"},
                             {2, "1", "cl"}});
      groups = "(rh rl) (ch cm cl)";
      break;
    case tmem::Shape::k16x32bx2:
      reg.insert(reg.end(), {{2, "16@tid_in_wg", "a"}, {16, "1@tid_in_wg", "r"}, {n, "1", "c"}});
      break;
  }
  std::string regs_text = tensor_text(reg, "b32");
  if (!groups.empty()) {
    std::string names;
    for (const Digit& d : reg) names += (names.empty() ? "" : " ") + d.name;
    regs_text += ".rearrange(\"" + names + " -> g" + repeat_names + " " + groups + "\")";
  }
  tmemjit_test::SpecText spec{op.to_string(), "warpgroup", tensor_text(tmem, dtype), regs_text};
  if (op.is_split()) {
    const int imm = op.atom_tmem_cols();
    spec.tmem2 =
        tensor_text(tmem, dtype, " + " + std::to_string(imm * (op.packed() ? 2 : 1)) + "@TCol");
    spec.imm = std::to_string(imm);
  }
  return spec;
}

}  // namespace tmemjit_cute
