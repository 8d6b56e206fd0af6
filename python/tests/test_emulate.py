"""Blackwell kernels on Hopper (issue 40, docs/emulation.md): kernels whose every tcgen05 statement
is their own, lowered by tmemjit.emulate and run on a Hopper GPU, against references computed
independently (the host's GEMM). Skips with the reason where there is no such GPU."""

import ctypes
import pathlib
import struct

import pytest

import tmemjit
from hopper_gpu import hopper_torch, tensor_map

KERNELS = pathlib.Path(__file__).resolve().parents[2] / "tests" / "jit" / "kernels"
PAIR_SMEM = 3 * (128 * 64 * 2 + 64 * 64 * 2) + 1024  # pair_gemm::kSmemBytes: past 48 KB


def _pair_gemm(strict=False, entry="pair_gemm_bf16", standalone_ctas=0):
    source = (KERNELS / "ws_gemm_2cta_sm100.cu").read_text()
    emulation = tmemjit.emulate(source, entry, path="ws_gemm_2cta_sm100.cu", strict=strict,
                                standalone_ctas=standalone_ctas)
    # Every family the 2-CTA GEMM needs, lowered (the TMA .cta_group::2 among them).
    for family in ("tcgen05.alloc", "tcgen05.mma", "tcgen05.commit", "tcgen05.ld",
                   "cp.async.bulk.tensor"):
        assert emulation.lowered.get(family, 0) > 0, (family, emulation.lowered)
    return emulation


def _run_pair_gemm(torch, driver, kernel, a, b, cluster=2):
    m, n = a.shape[0], b.shape[0]
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float32)
    kernel.launch((m // 128, n // 128), 256,
                  [c, ctypes.c_int(m), ctypes.c_int(n), ctypes.c_int(a.shape[1]),
                   tensor_map(driver, a, 128), tensor_map(driver, b, 64)],
                  shared_mem=PAIR_SMEM, cluster=cluster)
    torch.cuda.synchronize()
    return c


@pytest.mark.parametrize("strict", [False, True], ids=["default", "strict"])
def test_pair_gemm_equals_the_host_gemm_bit_for_bit(strict):
    # cta_group::2 end to end: each CTA's TMA (.cta_group::2) signals the leader's barrier, the
    # leader's M=256 MMA reads A and B from both CTAs and writes D into both TMEMs, commits free
    # the stages of both CTAs (multicast), each epilogue reads its own 128 lanes. Small integers:
    # every product and fp32 sum is exact. Strict mode finds no race in this correct kernel.
    torch, driver = hopper_torch()
    torch.manual_seed(41)
    m, n, k = 512, 256, 256
    a = torch.randint(-3, 4, (m, k), device="cuda").to(torch.bfloat16)
    b = torch.randint(-3, 4, (n, k), device="cuda").to(torch.bfloat16)
    emulation = _pair_gemm(strict)
    c = _run_pair_gemm(torch, driver, emulation.kernel, a, b)
    assert emulation.kernel.emulation_check() == []
    expected = a.float() @ b.float().T
    wrong = (c != expected).sum().item()
    assert wrong == 0, f"{wrong} of {m * n} differ; first rows:\n{c[:2, :8]}\n{expected[:2, :8]}"


def test_two_pairs_sharing_b_by_multicast_equal_the_host_gemm_bit_for_bit():
    # TMA .cta_group::2 .multicast::cluster: in clusters of 4, the first pair loads B into itself
    # and into the second pair; each destination's bytes complete on its own pair's leader (the
    # second pair's leader is told bytes issued by the other pair), and the stages are freed by
    # both leaders' commits. K of 6 blocks runs the 3 stages around twice.
    torch, driver = hopper_torch()
    torch.manual_seed(43)
    m, n, k = 1024, 256, 384
    a = torch.randint(-3, 4, (m, k), device="cuda").to(torch.bfloat16)
    b = torch.randint(-3, 4, (n, k), device="cuda").to(torch.bfloat16)
    emulation = _pair_gemm(entry="pair_gemm_bf16_multicast")
    c = _run_pair_gemm(torch, driver, emulation.kernel, a, b, cluster=4)
    assert emulation.kernel.emulation_check() == []
    expected = a.float() @ b.float().T
    wrong = (c != expected).sum().item()
    assert wrong == 0, f"{wrong} of {m * n} differ; first rows:\n{c[:2, :8]}\n{expected[:2, :8]}"


def test_pair_gemm_on_random_inputs_within_fp32_rounding():
    torch, driver = hopper_torch()
    torch.manual_seed(42)
    m, n, k = 256, 128, 512
    a = torch.randn((m, k), device="cuda").to(torch.bfloat16)
    b = torch.randn((n, k), device="cuda").to(torch.bfloat16)
    emulation = _pair_gemm()
    c = _run_pair_gemm(torch, driver, emulation.kernel, a, b)
    assert emulation.kernel.emulation_check() == []
    expected = a.double() @ b.double().T
    torch.testing.assert_close(c.double(), expected, rtol=1e-4, atol=1e-3)


def _probe(torch, strict, when):
    source = (KERNELS / "mma_then_read_sm100.cu").read_text()
    emulation = tmemjit.emulate(source, "mma_then_read", path="mma_then_read_sm100.cu",
                                strict=strict)
    out = torch.zeros((2, 128, 16), device="cuda", dtype=torch.float32)
    smem = 128 * 64 * 2 + 64 * 64 * 2 + 16
    emulation.kernel.launch(1, 128, [out, ctypes.c_int(when)], shared_mem=smem)
    torch.cuda.synchronize()
    return emulation.kernel, out


def _bits(tensor):
    return set(struct.unpack(f"<{tensor.numel()}I", tensor.cpu().numpy().tobytes()))


def test_strict_mode_reports_a_read_before_the_commit():
    # On hardware the MMA runs asynchronously until its commit's mbarrier: a read between the
    # two races with it. The default emulation queues the MMA, and the threads that wait on an
    # mbarrier compute it: here no thread has waited yet, so the read sees the launch's poison,
    # stale data as on hardware, without a report. Strict mode computes the MMA at issue and
    # names the read, its thread and the rule.
    torch, _ = hopper_torch()
    kernel, out = _probe(torch, strict=False, when=1)
    assert kernel.emulation_check() == []
    assert _bits(out[0]) == {0xA5A5A5A5}
    assert (out[1] == 16.0).all()
    kernel, out = _probe(torch, strict=True, when=1)
    with pytest.raises(tmemjit.Error) as error:
        kernel.emulation_check()
    assert error.value.code == "rule"
    assert "strict mode" in error.value.message and "tcgen05.ld" in error.value.message
    assert (out[1] == 16.0).all()  # the read after the wait is right in either mode


def test_strict_mode_passes_the_correct_kernel_and_fills_fresh_columns():
    torch, _ = hopper_torch()
    kernel, out = _probe(torch, strict=True, when=0)
    assert kernel.emulation_check() == []
    assert (out[1] == 16.0).all()
    # A read of a fresh allocation: all ones under strict mode (NaN as f32), the launch's poison
    # 0xA5A5A5A5 otherwise; real TMEM holds whatever its previous owner left.
    kernel, out = _probe(torch, strict=True, when=2)
    assert kernel.emulation_check() == []
    assert _bits(out[0]) == {0xFFFFFFFF}
    kernel, out = _probe(torch, strict=False, when=2)
    assert _bits(out[0]) == {0xA5A5A5A5}


def test_lowering_the_pair_gemm_needs_no_gpu():
    # The lowering and the sm_90 compile run anywhere: the TMA .cta_group::2 becomes the shadow
    # barrier's path, and ptxas for sm_90 accepts the whole module.
    # The module's other kernel loads B with .multicast::cluster: the multicast path.
    emulation = _pair_gemm()
    assert "tmemjit_emu_tma_peer_begin" in emulation.ptx
    assert "tmemjit_emu_tma_multicast_begin" in emulation.ptx
    tma = [line for line in emulation.ptx.splitlines() if "cp.async.bulk.tensor" in line]
    assert len(tma) == 4 and all(".cta_group::2 [" not in line for line in tma), tma
    assert emulation.registers > 0


def test_a_standalone_module_is_checked_and_holds_its_own_state():
    # docs/emulation.md "Standalone modules": the cubin any host can launch; no GPU needed to
    # make one. Bad counts are refused before any work, and strict mode (reported only through
    # emulation_check) cannot be combined with it.
    emulation = _pair_gemm(entry="pair_gemm_bf16_multicast", standalone_ctas=8)
    assert emulation.lowered["kernel entry (clears the standalone state)"] == 2  # both kernels
    assert "_ZN7tmemjit15standalone_tmemE" in emulation.ptx
    assert emulation.kernel.cubin[:4] == b"\x7fELF"
    source = (KERNELS / "ws_gemm_2cta_sm100.cu").read_text()
    for bad, error in ((True, TypeError), (1.5, TypeError), (-1, ValueError), (2**32, ValueError)):
        with pytest.raises(error, match="standalone_ctas"):
            tmemjit.emulate(source, "pair_gemm_bf16", standalone_ctas=bad)
    with pytest.raises(tmemjit.Error) as both:
        tmemjit.emulate(source, "pair_gemm_bf16", strict=True, standalone_ctas=8)
    assert both.value.code == "usage" and "strict mode" in both.value.message
