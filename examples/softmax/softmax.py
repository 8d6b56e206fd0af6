"""softmax.py: the FA4-style softmax of softmax.cu from Python, as main.cc does it in C++.

For a few layouts of one chunk of S: tmemjit.select picks the load (and the store that stands in
for the MMA), tmemjit.packed_twin gives P's 16-bit store over S, tmemjit.same_owners shows that P
stays in S's threads, and tmemjit.compile_kernel compiles the kernel for sm_100a (its SASS checked
from report.code: the plan's LDTM/STTM, no local memory). Where a GPU runs it (tcgen05 on
Blackwell, the sm_90 emulation on Hopper) and CuPy is installed, it runs and compares P, the row
maxima and the row sums with numpy. A 64-row layout is refused by the kernel's static_assert.

    PYTHONPATH=<build>/python python3 examples/softmax/softmax.py [--compile-only]

Prints a PASS, FAIL or SKIP line per layout; exits 4 on wrong data, 1 on a failed compile.
"""

import os
import sys

import numpy as np

import tmemjit

ROWS, COLUMNS, TILES = 128, 128, 132  # S's columns: the problem size, given to the kernel as -D
HERE = os.path.dirname(os.path.abspath(__file__))

# name, TMEM view and register view of one chunk of S, register budget, the kernel's refusal
CANDIDATES = [
    ("32x32b.x32, chunks of 32 columns", "tensor((128,32), S[(128,32):(1@TLane,1@TCol)], f32)",
     "tensor((128,32), S[(128,32):(1@tid_in_wg,1)], f32)", 0, None),
    ("32x32b.x64, chunks of 64 columns", "tensor((128,64), S[(128,64):(1@TLane,1@TCol)], f32)",
     "tensor((128,64), S[(128,64):(1@tid_in_wg,1)], f32)", 0, None),
    ("32x32b.x16 x4, chunks of 64 columns", "tensor((128,64), S[(128,64):(1@TLane,1@TCol)], f32)",
     "tensor((128,64), S[(128,64):(1@tid_in_wg,1)], f32)", 16, None),
    # A row over four threads: the row max and sums cross threads.
    ("16x256b.x4 x2, chunks of 32 columns", "tensor((128,32), S[(128,32):(1@TLane,1@TCol)], f32)",
     "tensor((128,32), S[(4,2,2,8,4,4,2):(32@tid_in_wg,16,2,4@tid_in_wg,4,1@tid_in_wg,1)], f32)",
     0, None),
    ("Layout F 64 x 64 (16x256b), refused by the kernel", 'tmem_datapath_layout("F",64,64)',
     "tensor((64,64), S[(4,2,8,8,4,2):(32@tid_in_wg,2,4@tid_in_wg,4,1@tid_in_wg,1)], f32)", 0,
     "softmax: a chunk of S must hold all 128 rows"),
]


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


def read_back(store):
    """The load that reads back what `store` wrote: the same views, the tcgen05.ld of its shape."""
    return tmemjit.TransferSpec(op=store.op.replace("tcgen05.st.", "tcgen05.ld.", 1),
                                scope=store.scope, tmem=store.tmem, regs=store.regs)


def reference(s):
    """Each row's max, P = exp(S - max) and its sum, in float64 over S's rows."""
    rows = s.reshape(-1, COLUMNS)
    row_max = rows.max(axis=1)
    p = np.exp(rows.astype(np.float64) - row_max[:, None])
    return row_max, p, p.sum(axis=1)


def from_bf16(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def main():
    compile_only = "--compile-only" in sys.argv[1:]
    with open(os.path.join(HERE, "softmax.cu")) as f:
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
    options = {"nvrtc_options": [f"-DSOFTMAX_COLUMNS={COLUMNS}"], "path": "softmax.cu"}

    # S: a few thousand distinct values in [-8, 8), exact in fp32.
    i = np.arange(TILES * ROWS * COLUMNS, dtype=np.uint64)
    host_s = (((i * 2654435761) % (1 << 32)) % 4096).astype(np.float32) / 256 - 8
    ref_max, ref_p, ref_sum = reference(host_s)

    failures = 0
    for name, tmem_view, regs_view, budget, refusal in CANDIDATES:
        print(name)
        load = tmemjit.select("ld", "warpgroup", tmem_view, regs_view, register_budget=budget)
        store = tmemjit.select("st", "warpgroup", tmem_view, regs_view, register_budget=budget)
        twin = tmemjit.packed_twin(load.spec, "bf16")  # P over S
        owners = tmemjit.same_owners(load.spec, twin)
        print(f"  S: {load.spec.op} x{load.plan.instructions_per_warp}; P: {twin.op}\n  {owners}")
        if not owners.same:
            print(f"FAIL {name}: P is not held by S's threads")
            failures += 1
            continue

        def named(spec):  # the kernel waits itself, and steps its chunks by NAME_columns
            return tmemjit.Transfer(spec, wait=False, column_argument=True)

        transfers = {"s_store": named(store.spec), "s_load": named(load.spec),
                     "p_store": named(twin), "p_load": named(read_back(twin))}
        try:
            kernel = tmemjit.compile_kernel(source, "softmax", transfers, target="sm_100a",
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
        # The SASS: every transfer's instructions once per chunk and pass, no local memory.
        report = kernel.report
        ipw = [t["instructions_per_warp"] for t in report.transfers]
        chunks = COLUMNS // load.spec.regs.base.shape[1]  # the register tensor's (rows, columns)
        ldtm, sttm = chunks * (2 * ipw[1] + ipw[3]), chunks * (ipw[0] + ipw[2])
        code = report.code
        print(f"  sm_100a: registers={code.registers} local_bytes={code.local_bytes} "
              f"instructions={code.instructions} ldtm={code.ldtm} sttm={code.sttm} "
              f"(expected ldtm={ldtm} sttm={sttm}, local_bytes=0)")
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
            kernel = tmemjit.compile_kernel(source, "softmax", transfers, target=run_target,
                                            **options)
        s = cupy.asarray(host_s)
        p = cupy.full(host_s.size, 0xFFFF, dtype=cupy.uint16)  # NaN where nothing lands
        row_max = cupy.zeros(TILES * ROWS, dtype=cupy.float32)
        row_sum = cupy.zeros(TILES * ROWS, dtype=cupy.float32)
        kernel.launch(TILES, ROWS, [s, p, row_max, row_sum])
        cupy.cuda.runtime.deviceSynchronize()
        for warning in kernel.emulation_check():
            print(f"  emulation: {warning}")
        got_p = from_bf16(cupy.asnumpy(p)).reshape(ref_p.shape)
        # bf16 keeps 8 significant bits: within one unit of the last place of the exact value.
        wrong = int(np.count_nonzero(~(np.abs(got_p - ref_p) <= ref_p / 128)))
        got_max, got_sum = cupy.asnumpy(row_max), cupy.asnumpy(row_sum)
        wrong += int(np.count_nonzero(got_max != ref_max))
        wrong += int(np.count_nonzero(~(np.abs(got_sum - ref_sum) <= 1e-4 * ref_sum)))
        if wrong:
            bad = np.argwhere(~(np.abs(got_p - ref_p) <= ref_p / 128))
            if len(bad):
                r, c = bad[0]
                print(f"  P: first mismatch at row {r}, column {c}: {got_p[r, c]}, "
                      f"expected {ref_p[r, c]}")
            print(f"FAIL {name}: {wrong} values differ from the host reference")
            failures += 1
        else:
            print(f"PASS {name}: P, row maxima and row sums of {TILES} tiles match numpy")
    if failures:
        print(f"FAIL: {failures} layout{'' if failures == 1 else 's'}")
        return 4
    print("PASS" if cupy is not None else f"SKIP runs: {skip} (every layout compiled for sm_100a)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
