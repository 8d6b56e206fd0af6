"""coord_table, same_owners and packed_twin: coordinates on the host (tmem/coords.h)."""

import json

import numpy as np
import pytest

import seed_specs
import tmemjit

G4 = '.rearrange("(g r) c -> g r c", g=4)'
S_CHUNK = tmemjit.TransferSpec(
    op="tcgen05.ld.sync.aligned.32x32b.x32.b32", scope="warpgroup",
    tmem="tensor((128,32), S[(128,32):(1@TLane,1@TCol)], f32)" + G4,
    regs="tensor((128,32), S[(128,32):(1@tid_in_wg,1)], f32)" + G4)


def test_coord_table_of_layout_b():
    table = tmemjit.coord_table(seed_specs.layout_b(store=False))
    assert isinstance(table, np.ndarray) and table.dtype == np.int32
    assert table.shape == (128, 64, 2)
    # Layout B: thread i < 64 holds row i, columns 0..63; thread 64 + i row i, columns 64..127.
    threads = np.arange(128)[:, None]
    regs = np.arange(64)[None, :]
    assert (table[:, :, 0] == threads % 64).all()
    assert (table[:, :, 1] == regs + 64 * (threads // 64)).all()


def test_coord_table_names_both_halves_of_a_16_bit_register():
    selection = tmemjit.select("st", "warpgroup",
                               "tensor((128,32), S[(128,32):(1@TLane,1@TCol)], bf16)",
                               "tensor((128,32), S[(128,32):(1@tid_in_wg,1)], bf16)")
    assert selection.spec.op == "tcgen05.st.sync.aligned.32x32b.x16.b32"
    table = tmemjit.coord_table(selection.spec)
    assert table.shape == (128, 16, 2, 2)
    assert table[5, 3, 0].tolist() == [5, 6] and table[5, 3, 1].tolist() == [5, 7]


def test_unused_registers_read_minus_one():
    # ld.red: slots 16 and 17 hold the two instructions' maxima, no element of the tensor.
    rearrange = '.rearrange("(g l) (k c) -> g k l c", g=4, k=2)'
    spec = tmemjit.TransferSpec(
        op="tcgen05.ld.red.sync.aligned.32x32b.x8.max.abs.f32", scope="warpgroup",
        tmem="tensor((128,16), S[(128,16):(1@TLane,1@TCol)], f32)" + rearrange,
        regs="tensor((128,16), S[(128,16):(1@tid_in_wg,1)], f32)" + rearrange)
    table = tmemjit.coord_table(spec)
    assert table.shape == (128, 18, 2)
    assert (table[:, 16:] == -1).all() and (table[:, :16] >= 0).all()


def test_same_owners_of_the_seeds_round_trip():
    owners = tmemjit.same_owners(seed_specs.layout_b(True), seed_specs.layout_b(False))
    assert owners and owners.same and owners.counterexample is None
    assert (owners.common, owners.only_a, owners.only_b) == (8192, 0, 0)
    assert owners.indices.shape == (8192, 2) and owners.holders.shape == (8192, 2, 3)
    assert (owners.holders[:, 0] == owners.holders[:, 1]).all()
    assert str(owners) == "same owners: 8192 common elements, 0 only in a, 0 only in b"


def test_same_owners_gives_the_first_counterexample():
    other = tmemjit.select("ld", "warpgroup",
                           "tensor((128,32), S[(2,64,32):(1@TLane,2@TLane,1@TCol)], f32)",
                           "tensor((128,32), S[(2,64,32):(1@tid_in_wg,2@tid_in_wg,1)], f32)").spec
    owners = tmemjit.same_owners(S_CHUNK, other)
    assert not owners
    assert owners.counterexample == {"index": (1, 0), "a": (1, 0, 0), "b": (2, 0, 0)}
    assert owners.indices.shape == (0, 0)
    assert "element (1,0) is in thread 1 register 0 of a but in thread 2" in str(owners)


def test_same_owners_needs_one_tensor_shape():
    with pytest.raises(tmemjit.Error) as error:
        tmemjit.same_owners(S_CHUNK, seed_specs.layout_b(False))
    assert error.value.code == "layout"


def test_packed_twin_is_fa4s_p_over_s():
    p = tmemjit.packed_twin(S_CHUNK, "bf16")
    assert p.op == "tcgen05.st.sync.aligned.32x32b.x16.b32"
    assert p.regs.dtype == "bf16"
    s_table, p_table = tmemjit.coord_table(S_CHUNK), tmemjit.coord_table(p)
    # Register q of P holds S's registers 2q (low half) and 2q + 1 (high half).
    assert (p_table.reshape(128, 32, 2) == s_table).all()
    assert tmemjit.same_owners(S_CHUNK, p).same
    assert tmemjit.check(p).columns_used == 16
    # The JSON is a spec file: from_json and `tmemjit check --spec` take it.
    assert tmemjit.TransferSpec.from_json(p.to_json()) == p
    assert json.loads(p.to_json())["op"] == p.op
    assert tmemjit.packed_twin(S_CHUNK, "float16").regs.dtype == "f16"


def test_packed_twin_refuses_with_the_reason():
    with pytest.raises(tmemjit.Error) as error:
        tmemjit.packed_twin(seed_specs.layout_b(store=True), "bf16")
    assert error.value.code == "usage" and "is a store" in error.value.message
    with pytest.raises(tmemjit.Error) as error:
        tmemjit.packed_twin(S_CHUNK, "f32")
    assert error.value.code == "usage"
    with pytest.raises(tmemjit.Error) as error:
        tmemjit.packed_twin(S_CHUNK, "fp8")
    assert error.value.code == "usage" and "allowed: bf16, f16" in error.value.message
    # 16x128b: a thread's registers 0 and 1 are rows l/4 and l/4 + 8.
    load = tmemjit.TransferSpec(
        op="tcgen05.ld.sync.aligned.16x128b.x1.b32", scope="warp:0",
        tmem="tensor((16,4), S[(16,4):(1@TLane,1@TCol)], f32)",
        regs="tensor((16,4), S[(2,8,4):(1,4@laneid,1@laneid)], f32)")
    tmemjit.check(load)
    with pytest.raises(tmemjit.Error) as error:
        tmemjit.packed_twin(load, "bf16")
    assert error.value.code == "layout"
    assert "no 16-bit store holds the load's registers 0 and 1" in error.value.message
