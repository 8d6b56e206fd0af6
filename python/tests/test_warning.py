"""tmemjit.set_warning_handler: the library's warnings reach a Python callable (issue 31, item 5)."""

import warnings

import pytest

import seed_specs
import tmemjit
from test_specialize import CUDA_KERNEL, needs_specialize


def compile_with_an_unused_transfer(entry):
    return tmemjit.compile_kernel(CUDA_KERNEL.replace("epilogue", entry), entry,
                                  {"acc_store": seed_specs.layout_b(),
                                   "acc_unused": seed_specs.layout_b(store=False)},
                                  path=f"{entry}.cu")


@pytest.fixture
def restore_default():
    yield
    tmemjit.set_warning_handler(None)


@needs_specialize
def test_a_callable_receives_the_warning(restore_default, capfd):
    seen = []
    tmemjit.set_warning_handler(seen.append)
    compile_with_an_unused_transfer("sink_list_probe")
    assert seen == ["transfer 'acc_unused' is never called by sink_list_probe.cu or a header it includes"]
    assert "tmemjit: warning" not in capfd.readouterr().err


@needs_specialize
def test_warnings_warn_receives_the_warning(restore_default):
    tmemjit.set_warning_handler(warnings.warn)
    with pytest.warns(UserWarning, match="never called by sink_warn_probe.cu"):
        compile_with_an_unused_transfer("sink_warn_probe")


@needs_specialize
def test_a_failing_handler_does_not_fail_the_compile(restore_default):
    def refuse(message):
        raise RuntimeError(message)

    tmemjit.set_warning_handler(refuse)
    kernel = compile_with_an_unused_transfer("sink_raise_probe")
    assert kernel.report.warnings == ["transfer 'acc_unused' is never called by sink_raise_probe.cu or a header it includes"]


@needs_specialize
def test_none_restores_stderr(capfd):
    tmemjit.set_warning_handler(None)
    compile_with_an_unused_transfer("sink_default_probe")
    assert ("tmemjit: warning: transfer 'acc_unused' is never called by sink_default_probe.cu"
            " or a header it includes" in capfd.readouterr().err)
