"""run_transfer -> RunReport: the seed's examples on the CPU simulator, and device errors."""

import pytest

import seed_specs
import tmemjit


def test_seed_examples_pass_on_the_simulator(seed_spec):
    report = tmemjit.run_transfer(seed_spec, device="sim")
    assert report.passed, str(report)
    assert report.device == "sim"
    assert str(report).rstrip().splitlines()[-1].startswith("PASS")
    assert [c.name for c in report.checks] == ["raw", "roundtrip", "store", "load"]
    assert all(c.passed and c.mismatch is None for c in report.checks)
    assert report.elements == sum(c.elements for c in report.checks) > 0
    as_dict = report.to_dict()
    assert as_dict["pass"] is True and as_dict["device"] == "sim"


def test_seed_changes_the_data_not_the_verdict():
    report = tmemjit.run_transfer(seed_specs.layout_b(), device="sim", seed=42)
    assert report.passed and report.seed == 42


def test_auto_runs_somewhere():
    report = tmemjit.run_transfer(seed_specs.layout_b(store=False))
    assert report.passed, str(report)
    assert report.device in ("gpu", "emu", "sim")


def test_invalid_spec_is_the_check_error():
    spec = tmemjit.TransferSpec(op="tcgen05.st.sync.aligned.32x32b.x64.b32", scope="cta:8",
                                tmem=seed_specs.LAYOUT_B_TMEM, regs=seed_specs.LAYOUT_B_REGS)
    with pytest.raises(tmemjit.Error) as error:
        tmemjit.run_transfer(spec, device="sim")
    assert error.value.code == "rule"


def test_unknown_device():
    with pytest.raises(tmemjit.Error) as error:
        tmemjit.run_transfer(seed_specs.layout_b(), device="tpu")
    assert error.value.code == "usage"
    assert "sim" in error.value.message


def test_cta_pair_runs_on_the_simulator():
    report = tmemjit.run_transfer(seed_specs.layout_b(), device="sim", cta_group=2)
    assert report.passed, str(report)
    assert report.to_dict()["cta_group"] == 2
    with pytest.raises(tmemjit.Error) as error:
        tmemjit.run_transfer(seed_specs.layout_b(), device="sim", cta_group=3)
    assert error.value.code == "usage"


def test_ld_red_runs_on_the_simulator_with_its_reduction_checked():
    split = '.rearrange("(g l) (k c) -> g k l c", g=4, k=2)'
    spec = tmemjit.TransferSpec(
        op="tcgen05.ld.red.sync.aligned.32x32b.x8.max.abs.f32", scope="warpgroup",
        tmem="tensor((128,16), S[(128,16):(1@TLane,1@TCol)], f32)" + split,
        regs="tensor((128,16), S[(128,16):(1@tid_in_wg,1)], f32)" + split)
    assert tmemjit.check(spec).regs_per_thread == 16 + 2  # two reduction results per thread
    report = tmemjit.run_transfer(spec, device="sim")
    assert report.passed, str(report)
