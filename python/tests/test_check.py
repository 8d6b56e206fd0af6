"""check() -> Plan and select() -> Selection on the seed's examples."""

import pytest

import seed_specs
import tmemjit

SUMMARY_KEYS = {"op", "scope", "warps", "repeats", "instructions_per_warp", "regs_per_thread",
                "alloc_columns"}


def test_seed_examples_check(seed_spec):
    plan = tmemjit.check(seed_spec)
    assert plan.op == seed_spec.op
    assert plan.scope == "warpgroup" and plan.warps == 4
    assert plan.instructions_per_warp == plan.repeats == len(plan.steps) >= 1
    assert 32 <= plan.alloc_columns <= 512
    assert plan.regs_per_thread >= 1
    full = plan.to_dict()
    assert SUMMARY_KEYS <= full.keys()
    for key in SUMMARY_KEYS:
        assert full[key] == getattr(plan, key)
    assert len(full["steps"]) == len(plan.steps)
    assert "steps" not in plan.to_dict(full=False)
    assert "ok" not in full
    assert plan.op in str(plan)


def test_layout_b_plan():
    plan = tmemjit.check(seed_specs.layout_b())
    assert (plan.instructions_per_warp, plan.regs_per_thread, plan.alloc_columns) == (1, 64, 64)
    assert plan.steps[0].slots == list(range(64))
    assert plan.address(1, 0) == 32 << 16


def test_split_plan_keeps_the_immediate():
    assert tmemjit.check(seed_specs.split()).imm == (16 << 16) + 8


def test_rule_error_names_the_rule_and_prints_the_operand():
    spec = tmemjit.TransferSpec(op="tcgen05.st.sync.aligned.32x32b.x64.b32", scope="cta:8",
                                tmem=seed_specs.LAYOUT_B_TMEM, regs=seed_specs.LAYOUT_B_REGS)
    with pytest.raises(tmemjit.Error) as error:
        tmemjit.check(spec)
    assert error.value.code == "rule"
    assert "group axis" in error.value.message
    assert "tmem_datapath_layout" in error.value.details


def test_select_picks_layout_b_store():
    selection = tmemjit.select("st", "warpgroup", 'tmem_datapath_layout("B",64,128)',
                               "tensor((64,128), S[(64,2,64):(1@tid_in_wg,64@tid_in_wg,1)], f32)")
    assert selection.spec.op == "tcgen05.st.sync.aligned.32x32b.x64.b32"
    assert selection.plan == tmemjit.check(selection.spec)
    chosen = [c for c in selection.candidates if c.verdict.startswith("chosen")]
    assert [c.op for c in chosen] == [selection.spec.op]
    assert all(c.verdict for c in selection.candidates)
    assert any(not c.legal for c in selection.candidates)
    assert selection.explain().count("\n") + 1 >= len(selection.candidates)


def test_select_takes_views_and_load():
    tile = tmemjit.View.parse('tmem_datapath_layout("D",128,32)')
    regs = tmemjit.View.parse("tensor((128,32), S[(128,32):(1@tid_in_wg,1)], f32)")
    selection = tmemjit.select("ld", "warpgroup", tile, regs)
    assert selection.spec.opcode.direction == "ld"


def test_select_takes_a_register_budget_per_call():
    # Triton sizes each TMEM message from its partition's register limit: under a budget of 32 the
    # same tile moves in twice as many 32x32b.x32 instructions, as many registers per thread.
    tile = ('tmem_datapath_layout("B",64,128)',
            "tensor((64,128), S[(64,2,64):(1@tid_in_wg,64@tid_in_wg,1)], f32)")
    widest = tmemjit.select("st", "warpgroup", *tile)
    budgeted = tmemjit.select("st", "warpgroup", *tile, register_budget=32)
    assert budgeted.spec.op == "tcgen05.st.sync.aligned.32x32b.x32.b32"
    assert budgeted.plan.instructions_per_warp == 2 * widest.plan.instructions_per_warp
    assert budgeted.plan.regs_per_thread == widest.plan.regs_per_thread
    assert tmemjit.select("st", "warpgroup", *tile, register_budget=0).spec == widest.spec
    for bad in (-1, 129):
        with pytest.raises(tmemjit.Error) as error:
            tmemjit.select("st", "warpgroup", *tile, register_budget=bad)
        assert error.value.code == "usage" and "128" in error.value.message


def test_select_without_a_fit_explains_each_candidate():
    with pytest.raises(tmemjit.Error) as error:
        tmemjit.select("st", "warpgroup", 'tmem_datapath_layout("B",64,128)',
                       "tensor((64,128), S[(64,128):(1,1@tid_in_wg)], f32)")
    assert error.value.code == "rule"
    assert "32x32b" in error.value.details


def test_select_direction_is_checked():
    with pytest.raises(tmemjit.Error) as error:
        tmemjit.select("sideways", "warpgroup", 'tmem_datapath_layout("B",64,128)',
                       'tmem_datapath_layout("B",64,128)')
    assert error.value.code == "usage"
