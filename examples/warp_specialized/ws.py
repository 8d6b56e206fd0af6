"""ws.py: the DeepGEMM-style warp-specialized epilogue of epilogue_ws.cu from Python, as main.cc
does it in C++.

For a few layouts of one chunk of the 128 x BLOCK_N accumulator, tmemjit.select picks the load and
tmemjit.compile_kernel compiles the kernel with warp_argument (epilogue warps 4-7 pass their rank
in the warpgroup) and column_argument (chunk loops step by acc_load_columns) for sm_100a, its SASS
checked from report.code (the plan's LDTM/STTM, no local memory). Where a GPU runs it (tcgen05 on
Blackwell, the sm_90 emulation on Hopper) and CuPy is installed, it runs and compares
D = bf16(accumulator) with numpy, bit for bit. A chunk wider than a 64-column row of the swizzled
tile is refused by the kernel's static_assert.

    PYTHONPATH=<build>/python python3 examples/warp_specialized/ws.py [--compile-only]

Prints a PASS, FAIL or SKIP line per layout; exits 4 on wrong data, 1 on a failed compile.
"""

import os
import sys

import numpy as np

import tmemjit

ROWS, COLUMNS, TILES, THREADS = 128, 256, 132, 256  # BLOCK_N: given to the kernel as -D
HERE = os.path.dirname(os.path.abspath(__file__))

# name, TMEM view and register view of one chunk of the accumulator, register budget, refusal
CANDIDATES = [
    ("32x32b.x8 (DeepGEMM's), chunks of 8 columns",
     "tensor((128,8), S[(128,8):(1@TLane,1@TCol)], f32)",
     "tensor((128,8), S[(128,8):(1@tid_in_wg,1)], f32)", 0, None),
    ("32x32b.x32, chunks of 32 columns", "tensor((128,32), S[(128,32):(1@TLane,1@TCol)], f32)",
     "tensor((128,32), S[(128,32):(1@tid_in_wg,1)], f32)", 0, None),
    ("32x32b.x16 x2, chunks of 32 columns", "tensor((128,32), S[(128,32):(1@TLane,1@TCol)], f32)",
     "tensor((128,32), S[(128,32):(1@tid_in_wg,1)], f32)", 16, None),
    # DeepGEMM's swap-AB form: a row over four threads.
    ("16x256b.x2 x2, chunks of 16 columns", "tensor((128,16), S[(128,16):(1@TLane,1@TCol)], f32)",
     "tensor((128,16), S[(4,2,2,8,2,4,2):(32@tid_in_wg,8,2,4@tid_in_wg,4,1@tid_in_wg,1)], f32)",
     0, None),
    ("32x32b.x128, chunks of 128 columns, refused by the kernel",
     "tensor((128,128), S[(128,128):(1@TLane,1@TCol)], f32)",
     "tensor((128,128), S[(128,128):(1@tid_in_wg,1)], f32)", 0,
     "epilogue_ws: a chunk's columns must divide the 64 columns"),
]
# The producer's fill (the MMA's stand-in): 32 columns a chunk.
FILL = ("tensor((128,32), S[(128,32):(1@TLane,1@TCol)], f32)",
        "tensor((128,32), S[(128,32):(1@tid_in_wg,1)], f32)")


def run_device(compile_only):
    """(cupy, compute capability) where the kernels can run here, or (None, why not)."""
    if compile_only:
        return None, "--compile-only"
    try:
        import cupy
    except ImportError as error:
        return None, f"CuPy is not installed (pip install cupy-cuda13x): {error}"
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            return None, "no CUDA device here"
        major, minor = divmod(int(cupy.cuda.Device(0).compute_capability), 10)  # "90"
    except cupy.cuda.runtime.CUDARuntimeError as error:
        return None, f"no CUDA device here ({error})"
    if major < 9:
        return None, (f"device 0 has compute capability {major}.{minor}; the emulation needs 9.0 "
                      f"or later")
    return cupy, 10 * major + minor


def to_bf16(values):
    """fp32 to bf16 bits, rounding to nearest even (what __float2bfloat16_rn does; no NaN here)."""
    bits = values.view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def main():
    compile_only = "--compile-only" in sys.argv[1:]
    with open(os.path.join(HERE, "epilogue_ws.cu")) as f:
        source = f.read()
    cupy, cc = run_device(compile_only)
    skip = cc if cupy is None else None
    run_target = None
    if cupy is not None:
        run_target = f"sm_{cc}a" if cc >= 100 else "sm_90"
        print(f"running on compute capability {cc // 10}.{cc % 10} "
              f"({'tcgen05' if cc >= 100 else 'the sm_90 emulation'})")
    else:
        print(f"compiling for sm_100a only: {skip}")
    options = {"nvrtc_options": [f"-DWS_COLUMNS={COLUMNS}"], "path": "epilogue_ws.cu"}

    # The accumulator: values with more significant bits than bf16 keeps, so rounding is exercised.
    i = np.arange(TILES * ROWS * COLUMNS, dtype=np.uint64)
    host_acc = (((i * 2654435761) % (1 << 32)) % 65536).astype(np.float32) / 64 - 512
    expected = to_bf16(host_acc)

    fill = tmemjit.select("st", "warpgroup", *FILL).spec
    failures = 0
    for name, tmem_view, regs_view, budget, refusal in CANDIDATES:
        print(name)
        load = tmemjit.select("ld", "warpgroup", tmem_view, regs_view, register_budget=budget)
        # The warp's rank in its warpgroup from a uniform register; chunks step by NAME_columns.
        transfers = {
            "acc_fill": tmemjit.Transfer(fill, warp_argument=True, column_argument=True),
            "acc_load": tmemjit.Transfer(load.spec, warp_argument=True, column_argument=True)}
        try:
            kernel = tmemjit.compile_kernel(source, "epilogue_ws", transfers, target="sm_100a",
                                            **options)
        except tmemjit.Error as error:
            if refusal is not None and refusal in str(error.details) + error.message:
                print(f"PASS {name}: refused at compile time by the kernel's static_assert")
                continue
            print(f"FAIL {name}: {error.message}\n{error.details}")
            return 1
        if refusal is not None:
            print(f"FAIL {name}: expected the kernel's static_assert")
            failures += 1
            continue
        # The SASS: each chunk's instructions once, no local memory.
        report = kernel.report
        ipw = [t["instructions_per_warp"] for t in report.transfers]
        sttm = COLUMNS // fill.regs.base.shape[1] * ipw[0]
        ldtm = COLUMNS // load.spec.regs.base.shape[1] * ipw[1]
        code = report.code
        print(f"  {load.spec.op} x{ipw[1]}; sm_100a: registers={code.registers} "
              f"local_bytes={code.local_bytes} instructions={code.instructions} ldtm={code.ldtm} "
              f"sttm={code.sttm} (expected ldtm={ldtm} sttm={sttm}, local_bytes=0)")
        if code.local_bytes != 0 or (code.ldtm >= 0 and (code.ldtm, code.sttm) != (ldtm, sttm)):
            print(f"FAIL {name}: the sm_100a code is not the plan's")
            failures += 1
            continue
        if code.ldtm < 0:
            print(f"  LDTM/STTM not counted: {code.disassembler}")
        if cupy is None:
            print(f"SKIP {name}: compiled for sm_100a, its SASS the plan's; not run: "
                  f"{skip}")
            continue

        if run_target != "sm_100a":
            kernel = tmemjit.compile_kernel(source, "epilogue_ws", transfers, target=run_target,
                                            **options)
        acc = cupy.asarray(host_acc)
        d = cupy.full(host_acc.size, 0xFFFF, dtype=cupy.uint16)  # NaN where nothing lands
        kernel.launch(TILES, THREADS, [acc, d])
        cupy.cuda.runtime.deviceSynchronize()
        for warning in kernel.emulation_check():
            print(f"  emulation: {warning}")
        got = cupy.asnumpy(d)
        wrong = np.flatnonzero(got != expected)
        if len(wrong):
            e = int(wrong[0])
            print(f"  first mismatch at tile {e // (ROWS * COLUMNS)}, row {e // COLUMNS % ROWS}, "
                  f"column {e % COLUMNS}: {got[e]:#06x}, expected {expected[e]:#06x}")
            print(f"FAIL {name}: {len(wrong)} of {got.size} elements differ")
            failures += 1
        else:
            print(f"PASS {name}: D of {TILES} tiles equals bf16(accumulator) bit for bit")
    if failures:
        print(f"FAIL: {failures} layout{'' if failures == 1 else 's'}")
        return 4
    print("PASS" if cupy is not None else f"SKIP runs: {skip} (every layout compiled for sm_100a)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
