"""Hostile input through the Python API (issue 30 item 9): text that is not UTF-8 in what the
library reports reaches Python as tmemjit.Error with its bytes written \\xNN, not as a RuntimeError
from the str conversion."""
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
