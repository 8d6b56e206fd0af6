"""Hostile input through the Python API (issue 30 items 9, 12): text that is not UTF-8 in what the
library reports reaches Python as tmemjit.Error with its bytes written \\xNN, not as a RuntimeError
from the str conversion; launch values out of their C type's range are usage errors, not
RuntimeError("std::bad_cast")."""
import pathlib

import pytest

import tmemjit

HAVE_SPECIALIZE = tmemjit._tmemjit._have_specialize
EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "epilogue"


def transfers():
    def spec(name):
        return tmemjit.TransferSpec.from_json((EXAMPLE / "layouts" / name).read_text())
    return {"acc_load": tmemjit.Transfer(spec("d_x32_ld.json"), wait=False, column_argument=True),
            "acc_store": tmemjit.Transfer(spec("d_x32_st.json"), wait=False, column_argument=True)}


@pytest.mark.skipif(not HAVE_SPECIALIZE, reason="needs compile_kernel")
def test_a_compiler_log_quoting_latin1_is_a_tmemjit_error(tmp_path):
    header = tmp_path / "latin1.h"
    header.write_bytes(b"#error caf\xe9 \xff\n")  # a header in Latin-1, quoted by NVRTC's log
    source = f'#include "{header}"\n' + (EXAMPLE / "epilogue.cu").read_text()
    with pytest.raises(tmemjit.Error) as raised:
        tmemjit.compile_kernel(source, "epilogue", transfers())
    error = raised.value
    if "not found" in error.message and error.code == "toolchain" and "NVRTC" in error.message:
        pytest.skip(f"no NVRTC here: {error.message}")
    assert error.code == "toolchain", error.message
    assert "caf\\xE9" in error.message + error.details
    assert "caf\\xE9" in str(error)


class _HugeDeviceArray:
    __cuda_array_interface__ = {"data": (2**70, False), "shape": (1,), "typestr": "<f4",
                                "version": 3}


@pytest.mark.parametrize("call", [
    lambda k: k.launch(2**64, 128),
    lambda k: k.launch(-2**70, 128),
    lambda k: k.launch((1, 2**65), 128),
    lambda k: k.launch(1, (128, 2**64)),
    lambda k: k.launch(1, 128, (_HugeDeviceArray(),)),
    lambda k: k.launch(1, 128, (), stream=2**80),
    lambda k: k.launch(1, 128, (), stream=-1),
], ids=["grid", "negative-grid", "grid-tuple", "block-tuple", "address", "stream", "negative-stream"])
def test_out_of_range_launch_values_are_usage_errors(call):
    # nb::cast raised RuntimeError("std::bad_cast"); the value is checked before any device is used.
    kernel = tmemjit.compile_transfer(
        tmemjit.TransferSpec.from_json((EXAMPLE / "layouts" / "d_x32_ld.json").read_text()))
    with pytest.raises(tmemjit.Error) as raised:
        call(kernel)
    assert raised.value.code == "usage"
    assert "out of range" in raised.value.message
