"""compile_kernel from Python on a CuTe kernel (issue 28): the warp-specialized SM100 GEMM of
tests/jit/kernels, with nothing beyond CuTe's -I and -default-device, for sm_100a and sm_100f; a
layout of another register count reuses the parse of CuTe. Skips without CuTe's headers."""

import importlib.util
import os
import pathlib

import pytest

import tmemjit
from hopper_gpu import hopper_torch, tensor_map

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
    assert report.headers.startswith("deferred"), "CuTe, before the transfers, is precompiled"
    assert report.include_files > 100
    assert report.code.local_bytes == 0
    assert report.code.ldtm in (-1, 2), report.code.disassembler
    assert report.transfers[0]["regs_per_thread"] == 64

    # 32x32b.x64 over the whole tile: 128 registers, and CuTe is not parsed again once its
    # precompiled header, made in the background, is there.
    tmemjit.wait_background_compiles()
    wider = tmemjit.compile_kernel(source, "ws_gemm_bf16", {"acc_load": _acc_load("x64")},
                                   **options).report
    assert wider.cache == "miss"
    assert wider.front_end == "memory" and wider.headers == "reused"
    assert wider.transfers[0]["regs_per_thread"] == 128
    assert wider.code.local_bytes == 0


@pytest.mark.parametrize("layout", ["x32", "x64", "16x256b"])
def test_ws_gemm_runs_end_to_end_on_hopper_through_the_emulation(layout):
    # Issue 40: the kernel's own tcgen05.mma (issued by its MMA warp), tcgen05.commit to the TMA
    # pipeline's barriers (multicast to both CTAs of the cluster) and to the epilogue's, and the
    # epilogue's specialized acc_load, all emulated in one TMEM. Small integers: every product and
    # fp32 sum is exact, so C equals the host GEMM bit for bit.
    torch, driver = hopper_torch()
    import ctypes
    torch.manual_seed(40)
    m, n, k = 256, 256, 128
    a = torch.randint(-3, 4, (m, k), device="cuda").to(torch.bfloat16)
    b = torch.randint(-3, 4, (n, k), device="cuda").to(torch.bfloat16)
    c = torch.zeros((m, n), device="cuda", dtype=torch.bfloat16)
    source = f"// python emulated, {layout}\n" + (KERNELS / "ws_gemm_sm100.cu").read_text()
    kernel = tmemjit.compile_kernel(source, "ws_gemm_bf16", {"acc_load": _acc_load(layout)},
                                    target="sm_90", path="ws_gemm_sm100.cu",
                                    nvrtc_options=["-I" + CUTE, "-default-device"])
    assert kernel.emulated
    smem = 4 * (128 * 64 * 2 + 128 * 64 * 2) + 1024  # kSmemBytes: past 48 KB, the limit is raised
    kernel.launch((m // 128, n // 128), 256,
                  [c, ctypes.c_int(m), ctypes.c_int(n), ctypes.c_int(k),
                   tensor_map(driver, a, 128), tensor_map(driver, b, 64)],
                  shared_mem=smem, cluster=2)
    torch.cuda.synchronize()
    assert kernel.emulation_check() == []
    expected = (a.float() @ b.float().T).to(torch.bfloat16)
    wrong = (c != expected).sum().item()
    assert wrong == 0, f"{wrong} of {m * n} elements differ; first rows:\n{c[:2, :8]}\n{expected[:2, :8]}"
