"""TransferSpec, View and Opcode as Python values: keywords, ==, hash, repr, JSON, pickle."""

import pickle

import pytest

import seed_specs
import tmemjit


def test_spec_takes_keywords_only():
    with pytest.raises(TypeError):
        tmemjit.TransferSpec("tcgen05.st.sync.aligned.32x32b.x64.b32", "warpgroup",
                             seed_specs.LAYOUT_B_TMEM, seed_specs.LAYOUT_B_REGS)


def test_spec_fields(seed_spec):
    assert seed_spec.op == seed_spec.opcode.__str__()
    assert seed_spec.scope == "warpgroup"
    assert isinstance(seed_spec.tmem, tmemjit.View)
    assert isinstance(seed_spec.regs, tmemjit.View)
    if seed_spec.opcode.shape == "16x32bx2":
        assert seed_spec.imm == (16 << 16) + 8
        assert isinstance(seed_spec.tmem2, tmemjit.View)
    else:
        assert seed_spec.imm is None and seed_spec.tmem2 is None


def test_repr_evaluates_to_an_equal_spec(seed_spec):
    again = eval(repr(seed_spec), {"TransferSpec": tmemjit.TransferSpec})
    assert again == seed_spec
    assert hash(again) == hash(seed_spec)
    assert repr(again) == repr(seed_spec)


def test_json_and_text_round_trip(seed_spec):
    assert tmemjit.TransferSpec.from_json(seed_spec.to_json()) == seed_spec
    assert tmemjit.TransferSpec.parse(str(seed_spec)) == seed_spec


def test_pickle_round_trip(seed_spec):
    assert pickle.loads(pickle.dumps(seed_spec)) == seed_spec


def test_equal_specs_share_hash_and_dict_slot():
    spaced = seed_specs.layout_b()
    tight = tmemjit.TransferSpec(
        op="tcgen05.st.sync.aligned.32x32b.x64.b32", scope="warpgroup",
        tmem=seed_specs.LAYOUT_B_TMEM,
        regs=seed_specs.LAYOUT_B_REGS.replace(" ", "").replace('"(whr)(wlc)->(wlwh)rc"',
                                                               '"(wh r) (wl c) -> (wl wh) r c"'))
    assert spaced == tight and hash(spaced) == hash(tight)
    assert spaced.fingerprint == tight.fingerprint and len(spaced.fingerprint) == 32
    assert len({spaced, tight, seed_specs.layout_b(store=False)}) == 2
    assert spaced != seed_specs.layout_b(store=False)
    assert spaced != "not a spec"


def test_views_may_be_view_objects():
    tmem = tmemjit.View.parse(seed_specs.LAYOUT_B_TMEM)
    spec = tmemjit.TransferSpec(op="tcgen05.st.sync.aligned.32x32b.x64.b32", scope="warpgroup",
                                tmem=tmem, regs=seed_specs.LAYOUT_B_REGS)
    assert spec == seed_specs.layout_b()


def test_view_parse_shape_dtype_and_repr():
    view = tmemjit.View.parse(seed_specs.LAYOUT_B_TMEM)
    assert view.shape == (4, 32, 64)
    assert view.ndim == 3 and view.size == 64 * 128 and view.dtype == "f32"
    assert eval(repr(view), {"View": tmemjit.View}) == view
    assert tmemjit.View.parse(str(view)) == view
    assert pickle.loads(pickle.dumps(view)) == view
    assert view.base == tmemjit.View.parse('tmem_datapath_layout("B",64,128)')


def test_view_methods_match_the_descriptor_language():
    base = tmemjit.View.parse('tmem_datapath_layout("B",64,128)')
    assert base.rearrange("(wh r) (wl c) -> (wl wh) r c", wh=2, r=32, wl=2) == \
        tmemjit.View.parse(seed_specs.LAYOUT_B_TMEM)
    assert base.view([2, 32, 128]).shape == (2, 32, 128)
    assert base.permute([1, 0]).shape == (128, 64)
    assert base[3].shape == (128,)
    assert base[-1] == base[63]
    assert base[:, 8:16].shape == (64, 8)
    assert base[:, 120:1000].shape == (64, 8)  # clamped, as Python slices are


def test_view_apply_follows_the_design_example():
    # docs/descriptor-language.md §Semantics: (1,3) maps to {laneid 5, warpid 5, m 1}, plus the replica warpid 9.
    view = tmemjit.View.parse(
        "tensor((8,16), S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1)] + R[2:4@warpid] + 5@warpid, f32)")
    assert view.apply([1, 3]) == [{"m": 1, "warpid": 5, "laneid": 5},
                                  {"m": 1, "warpid": 9, "laneid": 5}]


def test_view_index_errors():
    view = tmemjit.View.parse('tmem_datapath_layout("B",64,128)')
    with pytest.raises(tmemjit.Error) as error:
        view[0, 0, 0]
    assert error.value.code == "layout"
    with pytest.raises(tmemjit.Error) as error:
        view[::2]
    assert error.value.code == "usage"
    with pytest.raises(TypeError):
        view["a"]


def test_opcode():
    op = tmemjit.Opcode.parse("tcgen05.ld.sync.aligned.16x256b.x4.b32")
    assert (op.direction, op.shape, op.num, op.packed) == ("ld", "16x256b", 4, False)
    assert op.regs_per_thread == 16 and op.atom_rows == 16
    assert eval(repr(op), {"Opcode": tmemjit.Opcode}) == op
    assert hash(op) == hash(tmemjit.Opcode.parse(str(op)))
