"""compile_kernel from Python on a CuTe kernel (issue 28): the warp-specialized SM100 GEMM of
tests/jit/kernels, with nothing beyond CuTe's -I and -default-device, for sm_100a and sm_100f; a
layout of another register count reuses the parse of CuTe. Skips without CuTe's headers."""

import importlib.util
import os
import pathlib

import pytest

import tmemjit

KERNELS = pathlib.Path(__file__).resolve().parents[2] / "tests" / "jit" / "kernels"


def _cute_dir():
    """CuTe's include directory: $TMEMJIT_CUTE_INCLUDE, else the nvidia-cutlass wheel's."""
    candidates = [os.environ.get("TMEMJIT_CUTE_INCLUDE", "")]
    spec = importlib.util.find_spec("cutlass_library")  # found without importing it
    if spec is not None and spec.origin:
        candidates.append(os.path.join(os.path.dirname(spec.origin), "source", "include"))
    for candidate in candidates:
        if candidate and os.path.exists(os.path.join(candidate, "cute", "tensor.hpp")):
            return candidate
    return ""


CUTE = _cute_dir()
pytestmark = [
    pytest.mark.skipif(not tmemjit._tmemjit._have_specialize,
                       reason="this libtmemjit has no include/tmem/specialize.h (compile_kernel)"),
    pytest.mark.skipif(not CUTE, reason="CuTe headers not found: pip install "
                       "nvidia-cutlass==4.2.0.0 or set TMEMJIT_CUTE_INCLUDE"),
]


def _acc_load(layout):
    """acc_load as the kernel calls it: acc_load(tmem_base, regs, warp, column), then the wait."""
    text = (KERNELS / "ws_gemm_layouts" / f"{layout}.json").read_text()
    return tmemjit.Transfer(tmemjit.TransferSpec.from_json(text), wait=False, warp_argument=True,
                            column_argument=True)


@pytest.mark.parametrize("target", ["sm_100a", "sm_100f"])
def test_ws_gemm_compiles_with_cutes_include_and_default_device(target):
    # A first line of its own: precompiled headers live as long as the process.
    source = f"// python, {target}\n" + (KERNELS / "ws_gemm_sm100.cu").read_text()
    options = dict(nvrtc_options=["-I" + CUTE, "-default-device"], target=target,
                   path="ws_gemm_sm100.cu")
    kernel = tmemjit.compile_kernel(source, "ws_gemm_bf16", {"acc_load": _acc_load("x32")},
                                    **options)
    report = kernel.report
    assert kernel.cubin[:4] == b"\x7fELF" and kernel.name == "ws_gemm_bf16"
    assert report.cache == "miss" and report.warnings == []
    assert report.headers == "created", "CuTe, before the transfers, is precompiled"
    assert report.include_files > 100
    assert report.code.local_bytes == 0
    assert report.code.ldtm in (-1, 2), report.code.disassembler
    assert report.transfers[0]["regs_per_thread"] == 64

    # 32x32b.x64 over the whole tile: 128 registers, and CuTe is not parsed again.
    wider = tmemjit.compile_kernel(source, "ws_gemm_bf16", {"acc_load": _acc_load("x64")},
                                   **options).report
    assert wider.cache == "miss"
    assert wider.front_end == "memory" and wider.headers == "reused"
    assert wider.transfers[0]["regs_per_thread"] == 128
    assert wider.code.local_bytes == 0
