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
