"""Benchmark: a Blackwell GEMM emulated on Hopper against cuBLAS on the same GPU (issue 40, item 6).

--kernel ws (the default): the warp-specialized SM100 BF16 GEMM of
tests/jit/kernels/ws_gemm_sm100.cu (TMA warp, MMA warp issuing tcgen05.mma, commits to mbarriers,
the epilogue's acc_load) compiled by compile_kernel for sm_90 (needs CuTe's headers: the
nvidia-cutlass wheel). --kernel pair: the 2-CTA GEMM of ws_gemm_2cta_sm100.cu (TMA .cta_group::2,
the pair's M=256 MMA, its own tcgen05.ld; fp32 C) lowered by tmemjit.emulate. Either way its
tcgen05 statements run as emulation code, timed with CUDA events at each size against
torch.matmul (cuBLAS) in the same process. Reports per size the emulated time, the cuBLAS time,
their ratio and the tcgen05.mma instructions emulated per second; the compile once. Needs torch,
cuda-python and a GPU of compute capability 9.x.

    PYTHONPATH=<build>/python python3 python/bench/emulated_gemm_bench.py [--kernel pair] \\
        [--sizes 512,1024,2048]
"""

import argparse
import ctypes
import json
import os
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python" / "tests"))

import tmemjit  # noqa: E402
from hopper_gpu import tensor_map  # noqa: E402
from test_ws_gemm import CUTE, KERNELS, _acc_load  # noqa: E402

SMEM = 4 * (128 * 64 * 2 + 128 * 64 * 2) + 1024  # the kernel's kSmemBytes


def time_ms(torch, launch, repeats):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    launch()  # warm: module load, first-touch
    torch.cuda.synchronize()
    start.record()
    for _ in range(repeats):
        launch()
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) / repeats


PAIR_SMEM = 3 * (128 * 64 * 2 + 64 * 64 * 2) + 1024  # pair_gemm::kSmemBytes


def build(kind, layout):
    """The kernel, its dynamic shared memory, C's dtype, and MMAs per (m, n, k) tile of 128."""
    if kind == "pair":
        source = (KERNELS / "ws_gemm_2cta_sm100.cu").read_text()
        kernel = tmemjit.emulate(source, "pair_gemm_bf16", path="ws_gemm_2cta_sm100.cu").kernel
        return kernel, PAIR_SMEM, "float32", 0.5  # one M=256 MMA covers two 128-row tiles
    if not CUTE:
        sys.exit("CuTe's headers not found (pip install nvidia-cutlass==4.2.0.0)")
    source = (KERNELS / "ws_gemm_sm100.cu").read_text()
    kernel = tmemjit.compile_kernel(source, "ws_gemm_bf16", {"acc_load": _acc_load(layout)},
                                    target="sm_90", path="ws_gemm_sm100.cu",
                                    nvrtc_options=["-I" + CUTE, "-default-device"])
    return kernel, SMEM, "bfloat16", 1.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="512,1024,2048")
    parser.add_argument("--layout", default="x32")
    parser.add_argument("--kernel", choices=("ws", "pair"), default="ws")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    import torch
    from cuda.bindings import driver
    start = time.perf_counter()
    kernel, smem, c_type, mma_per_tile = build(args.kernel, args.layout)
    out = {"device": torch.cuda.get_device_name(0), "kernel": args.kernel, "layout": args.layout,
           "compile_s": time.perf_counter() - start, "sizes": []}
    for size in (int(s) for s in args.sizes.split(",")):
        m = n = k = size
        a = torch.randint(-3, 4, (m, k), device="cuda").to(torch.bfloat16)
        b = torch.randint(-3, 4, (n, k), device="cuda").to(torch.bfloat16)
        c = torch.zeros((m, n), device="cuda", dtype=getattr(torch, c_type))
        maps = [tensor_map(driver, a, 128), tensor_map(driver, b, 64)]
        arguments = [c, ctypes.c_int(m), ctypes.c_int(n), ctypes.c_int(k)] + maps

        def emulated():
            kernel.launch((m // 128, n // 128), 256, arguments, shared_mem=smem, cluster=2)

        emulated_ms = time_ms(torch, emulated, 1)
        exact = bool(torch.equal(c, (a.float() @ b.float().T).to(c.dtype)))
        cublas_ms = time_ms(torch, lambda: torch.matmul(a, b.T), 20)
        mmas = (m // 128) * (n // 128) * (k // 16) * mma_per_tile
        out["sizes"].append({"size": size, "emulated_ms": emulated_ms, "cublas_ms": cublas_ms,
                             "ratio": emulated_ms / cublas_ms, "exact": exact,
                             "mma_per_s": mmas / (emulated_ms / 1000)})
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"{out['device']}: {args.kernel}, compile {out['compile_s']:.1f} s")
        for row in out["sizes"]:
            print(f"  {row['size']}^3: emulated {row['emulated_ms']:.1f} ms, cuBLAS "
                  f"{row['cublas_ms']:.3f} ms, ratio {row['ratio']:.0f}x, "
                  f"{row['mma_per_s']:.0f} MMA/s, exact {row['exact']}")
    return 0 if all(row["exact"] for row in out["sizes"]) else 1


if __name__ == "__main__":
    sys.exit(main())
