// Transfer specs used across suites: the seed document's examples and warpgroup identity specs.
#pragma once

#include <optional>
#include <string>

#include "tmem/opcode.h"
#include "tmem/transfer.h"

namespace tmemjit_test {

// The textual fields of a spec, as the CLI takes them.
struct SpecText {
  std::string op, scope, tmem, regs;
  std::optional<std::string> tmem2, imm;

  tmem::TransferSpec make() const {
    std::optional<std::string_view> t2, im;
    if (tmem2) t2 = *tmem2;
    if (imm) im = *imm;
    return tmem::TransferSpec::from_fields(op, scope, tmem, regs, t2, im).value();
  }
};

inline const std::string kSeedRearrange =
    ".rearrange(\"(wh r) (wl c) -> (wl wh) r c\", wh=2, r=32, wl=2)";

// The seed's Layout B round trip (st or ld with 32x32b.x64 at warpgroup scope).
inline SpecText seed_layout_b(bool store) {
  return {std::string("tcgen05.") + (store ? "st" : "ld") + ".sync.aligned.32x32b.x64.b32",
          "warpgroup", "tmem_datapath_layout(\"B\",64,128)" + kSeedRearrange,
          "tensor((64,128), S[(64, 2, 64) : (1 @ tid_in_wg, 64 @ tid_in_wg, 1)], f32)" +
              kSeedRearrange};
}

// The seed's pack/unpack example: 16-bit TMEM halves at column stride 4 and half stride 2
// (16-bit units), registers keep the b32 image.
inline SpecText seed_pack(bool store) {
  return {
      std::string("tcgen05.") + (store ? "st.sync.aligned.32x32b.x64.unpack::16b.b32"
                                       : "ld.sync.aligned.32x32b.x64.pack::16b.b32"),
      "warpgroup",
      "tensor((128,64,2), S[(128,64,2):(1@TLane,4@TCol,2@TCol)], f16).rearrange(\"(g r) c h -> g r "
      "c h\", g=4)",
      "tensor((128,64), S[(128,64):(1@tid_in_wg,1)], b32).rearrange(\"(g r) c -> g r c\", g=4)"};
}

// The seed's 16x32bx2 example: mem[:, :16, :4] and mem[:, 16:32, 8:12], imm = (16<<16)+8.
inline SpecText seed_split(bool store, long imm = (16L << 16) + 8) {
  const std::string mem =
      "tensor((128,16), S[(128,16):(1@TLane,1@TCol)], b32).rearrange(\"(g r) c -> g r c\", g=4)";
  return {std::string("tcgen05.") + (store ? "st" : "ld") + ".sync.aligned.16x32bx2.x4.b32",
          "warpgroup",
          mem + "[:, :16, :4]",
          "tensor((128,4), S[(128,4):(1@tid_in_wg,1)], b32).rearrange(\"(g a r) c -> g a r c\", "
          "g=4, a=2)",
          mem + "[:, 16:32, 8:12]",
          std::to_string(imm)};
}

// A tcgen05.ld.red of 32x32b.x8 shape at warpgroup scope over a 128x16 f32 tile: two
// instructions per warp, the register view's 16 slots, then the reduction results in slots 16
// and 17. `op` is the whole opcode (its reduction and type).
inline SpecText ld_red_accumulator(const std::string& op) {
  const std::string rearrange = ".rearrange(\"(g l) (k c) -> g k l c\", g=4, k=2)";
  return {op, "warpgroup", "tensor((128,16), S[(128,16):(1@TLane,1@TCol)], f32)" + rearrange,
          "tensor((128,16), S[(128,16):(1@tid_in_wg,1)], f32)" + rearrange};
}

// A warpgroup spec whose register view is the opcode's own native image (the inverse formulas of
// docs/tcgen05-rules.md §Images written as layout digits) and whose TMEM view is each warp's slab
// from column 0. `lane_offset` (0 or 16) picks the half-slab of 16-row shapes.
inline SpecText identity_spec(const tmem::Opcode& op, int lane_offset = 0) {
  const std::string n = std::to_string(op.num());
  const std::string cols = std::to_string(op.atom_cols());
  std::string regs;
  switch (op.shape()) {
    case tmem::Shape::k32x32b:
      regs = "tensor((4,32," + n + "), S[(4,32," + n + "):(32@tid_in_wg,1@tid_in_wg,1)], b32)";
      break;
    case tmem::Shape::k16x64b:  // lane = 4*(L%8) + 2*(C%2) + L/8, reg = C/2
      regs = "tensor((4,2,8," + n + ",2), S[(4,2,8," + n +
             ",2):(32@tid_in_wg,1@tid_in_wg,4@tid_in_wg,1,2@tid_in_wg)], b32)"
             ".rearrange(\"g rh rl ch cl -> g (rh rl) (ch cl)\")";
      break;
    case tmem::Shape::k16x128b:  // lane = 4*(L%8) + C%4, reg = L/8 + 2*(C/4)
      regs = "tensor((4,2,8," + n + ",4), S[(4,2,8," + n +
             ",4):(32@tid_in_wg,1,4@tid_in_wg,2,1@tid_in_wg)], b32)"
             ".rearrange(\"g rh rl ch cl -> g (rh rl) (ch cl)\")";
      break;
    case tmem::Shape::k16x256b:  // lane = 4*(L%8) + (C/2)%4, reg = C%2 + 2*(L/8) + 4*(C/8)
      regs = "tensor((4,2,8," + n + ",4,2), S[(4,2,8," + n +
             ",4,2):(32@tid_in_wg,2,4@tid_in_wg,4,1@tid_in_wg,1)], b32)"
             ".rearrange(\"g rh rl ch cm cl -> g (rh rl) (ch cm cl)\")";
      break;
    case tmem::Shape::k16x32bx2:  // lane = 16*access + L, reg = C
      regs = "tensor((4,2,16," + n + "), S[(4,2,16," + n +
             "):(32@tid_in_wg,16@tid_in_wg,1@tid_in_wg,1)], b32)";
      break;
  }
  const std::string rows = std::to_string(op.atom_rows());
  const std::string offset = lane_offset ? " + " + std::to_string(lane_offset) + "@TLane" : "";
  std::string tmem, tmem2;
  if (op.packed()) {
    tmem = "tensor((4," + rows + "," + cols + ",2), S[(4," + rows + "," + cols +
           ",2):(32@TLane,1@TLane,4@TCol,2@TCol)]" + offset + ", f16)";
  } else {
    tmem = "tensor((4," + rows + "," + cols + "), S[(4," + rows + "," + cols +
           "):(32@TLane,1@TLane,1@TCol)]" + offset + ", b32)";
  }
  SpecText spec{op.to_string(), "warpgroup", tmem, regs};
  if (op.is_split()) {
    // The second access: 16 lanes down, right after the first access's columns.
    const int width = op.atom_tmem_cols();
    const std::string dtype = op.packed() ? "f16" : "b32";
    const std::string col_units = std::to_string(op.packed() ? 2 * width : width);
    if (op.packed())
      spec.tmem2 = "tensor((4,16," + cols + ",2), S[(4,16," + cols +
                   ",2):(32@TLane,1@TLane,4@TCol,2@TCol)] + 16@TLane + " + col_units +
                   "@TCol, f16)";
    else
      spec.tmem2 = "tensor((4,16," + cols + "), S[(4,16," + cols +
                   "):(32@TLane,1@TLane,1@TCol)] + 16@TLane + " + col_units + "@TCol, b32)";
    spec.imm = std::to_string((16L << 16) + width);
  }
  return spec;
}

}  // namespace tmemjit_test
