"""The seed document's three examples as TransferSpecs (tests/spec_fixtures.h in Python)."""

import tmemjit

REARRANGE = '.rearrange("(wh r) (wl c) -> (wl wh) r c", wh=2, r=32, wl=2)'
LAYOUT_B_TMEM = 'tmem_datapath_layout("B",64,128)' + REARRANGE
LAYOUT_B_REGS = ("tensor((64,128), S[(64, 2, 64) : (1 @ tid_in_wg, 64 @ tid_in_wg, 1)], f32)" +
                 REARRANGE)


def layout_b(store=True):
    """The seed's Layout B round trip: 32x32b.x64 at warpgroup scope."""
    return tmemjit.TransferSpec(
        op=f"tcgen05.{'st' if store else 'ld'}.sync.aligned.32x32b.x64.b32", scope="warpgroup",
        tmem=LAYOUT_B_TMEM, regs=LAYOUT_B_REGS)


def pack(store=True):
    """The seed's pack/unpack example: 16-bit TMEM halves, registers keep the b32 image."""
    op = ("tcgen05.st.sync.aligned.32x32b.x64.unpack::16b.b32" if store
          else "tcgen05.ld.sync.aligned.32x32b.x64.pack::16b.b32")
    return tmemjit.TransferSpec(
        op=op, scope="warpgroup",
        tmem='tensor((128,64,2), S[(128,64,2):(1@TLane,4@TCol,2@TCol)], f16)'
             '.rearrange("(g r) c h -> g r c h", g=4)',
        regs='tensor((128,64), S[(128,64):(1@tid_in_wg,1)], b32).rearrange("(g r) c -> g r c", g=4)')


SPLIT_MEM = ('tensor((128,16), S[(128,16):(1@TLane,1@TCol)], b32)'
             '.rearrange("(g r) c -> g r c", g=4)')


def split(store=True, imm=(16 << 16) + 8):
    """The seed's 16x32bx2 example: mem[:, :16, :4] and mem[:, 16:32, 8:12], imm (16<<16)+8."""
    return tmemjit.TransferSpec(
        op=f"tcgen05.{'st' if store else 'ld'}.sync.aligned.16x32bx2.x4.b32", scope="warpgroup",
        tmem=SPLIT_MEM + "[:, :16, :4]",
        regs='tensor((128,4), S[(128,4):(1@tid_in_wg,1)], b32)'
             '.rearrange("(g a r) c -> g a r c", g=4, a=2)',
        tmem2=SPLIT_MEM + "[:, 16:32, 8:12]", imm=imm)


# (name, factory) of every seed example, in the seed's order.
SEEDS = [("layout_b", layout_b), ("pack", pack), ("split", split)]
