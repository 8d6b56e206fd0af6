#!/usr/bin/env python3
"""CuTe's SM100 tutorial kernels through `tmemjit emulate` (CTest CuteTutorialsLower.NN, label cute).

Issue 40, item 5 (e): the tutorials in the installed nvidia-cutlass wheel
(examples/cute/tutorial/blackwell, beside the include directory CuTe's tests use) are compiled
here for sm_100a by nvcc, then lowered by the CLI to an sm_90 cubin. Passing means the lowering
knew every statement, and ptxas for sm_90 rejected nothing; each case also checks that the
families the tutorial uses were lowered (04 and 05 load with TMA .cta_group::2 .multicast::cluster,
docs/emulation.md §TMA .cta_group::2). Running the tutorials with their own host checks needs a
GPU and their hosts launching an sm_90 cubin: not done here.

    tutorials_test.py --cli build/tools/tmemjit --cute-include DIR --nvcc NVCC [--only 01,03,04,05]

Exits 77 (a skip, with the reason) when the wheel has no tutorials.
"""

import argparse
import json
import pathlib
import re
import subprocess
import sys
import tempfile

# The tutorials run here, each with the families whose counts must be non-zero after lowering:
# 01, the plain MMA; 03, TMA multicast across a cluster (02 is 03 without the multicast); 04, the
# 2-SM MMA with 2-SM multicast loads (05 adds an epilogue to it).
TUTORIALS = {
    "01": ("01_mma_sm100.cu", ["tcgen05.alloc", "tcgen05.mma", "tcgen05.commit", "tcgen05.ld",
                               "tcgen05.dealloc", "mbarrier wait (helps the MMA queue)"]),
    "03": ("03_mma_tma_multicast_sm100.cu", ["tcgen05.alloc", "tcgen05.mma", "tcgen05.commit",
                                             "tcgen05.ld", "mbarrier wait (helps the MMA queue)"]),
    "04": ("04_mma_tma_2sm_sm100.cu", ["tcgen05.alloc", "tcgen05.mma", "tcgen05.commit",
                                       "tcgen05.ld", "cp.async.bulk.tensor"]),
    "05": ("05_mma_tma_epi_sm100.cu", ["tcgen05.alloc", "tcgen05.mma", "tcgen05.commit",
                                       "tcgen05.ld", "cp.async.bulk.tensor"]),
}


def gemm_entry(ptx):
    """The tutorial's GEMM kernel (the module also holds CUB's fill kernels)."""
    names = re.findall(r"\.entry\s+([A-Za-z0-9_$]+)", ptx)
    gemm = [n for n in names if "gemm_device" in n]
    if len(gemm) != 1:
        sys.exit(f"expected one gemm_device kernel, found {gemm} among {len(names)}")
    return gemm[0]


def nvcc_flags(args, directory):
    """What the tutorials compile with: C++17, CuTe and CUTLASS's tools/util headers."""
    source_root = directory.parents[3]  # .../source/examples/cute/tutorial/blackwell
    return ["-std=c++17", "-w", "--expt-relaxed-constexpr", "-I" + args.cute_include,
            "-I" + str(source_root / "tools" / "util" / "include"), "-I" + str(directory)]


def lower(args, tutorial, directory, work, standalone_ctas=0):
    """Compiles the tutorial for sm_100a and lowers its module to an sm_90 cubin (standalone for
    a host that binds nothing when standalone_ctas > 0); returns the cubin's path."""
    source, families = TUTORIALS[tutorial]
    ptx = work / (source + ".ptx")
    compile_command = ([args.nvcc, "-arch=sm_100a", "-ptx"] + nvcc_flags(args, directory) +
                       [str(directory / source), "-o", str(ptx)])
    done = subprocess.run(compile_command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{source}: nvcc for sm_100a failed:\n{done.stderr[-4000:]}")
    cubin = work / (source + ".sm90.cubin")
    command = [args.cli, "emulate", str(ptx), "--entry", gemm_entry(ptx.read_text()),
               "-o", str(cubin), "--json"]
    if standalone_ctas:
        command += ["--standalone-ctas", str(standalone_ctas)]
    lowered = subprocess.run(command, capture_output=True, text=True)
    try:
        report = json.loads(lowered.stdout)
    except json.JSONDecodeError:
        sys.exit(f"{source}: tmemjit emulate printed no JSON (exit {lowered.returncode}):\n"
                 f"{lowered.stdout[-2000:]}\n{lowered.stderr[-2000:]}")
    if lowered.returncode != 0 or not report.get("ok"):
        sys.exit(f"{source}: tmemjit emulate failed: {json.dumps(report.get('error'), indent=1)}")
    missing = [f for f in families if report["lowered"].get(f, 0) == 0]
    if missing:
        sys.exit(f"{source}: families not lowered: {missing}; lowered: {report['lowered']}")
    if report["target"] != "sm_90" or cubin.read_bytes()[:4] != b"\x7fELF":
        sys.exit(f"{source}: no sm_90 cubin: target {report['target']}")
    if report["code"]["registers"] <= 0:
        sys.exit(f"{source}: no code statistics: {report.get('warnings')}")
    print(f"{source}: lowered {report['statements']} statements in {report['lower_ms']:.1f} ms "
          f"({report['lowered']}); sm_90 cubin {report['cubin_bytes']} bytes, "
          f"{report['code']['registers']} registers")
    return cubin


def tutorials_directory(cute_include):
    """The wheel's examples/cute/tutorial/blackwell beside CuTe's include directory, or exit 77."""
    directory = (pathlib.Path(cute_include).resolve().parent / "examples" / "cute" /
                 "tutorial" / "blackwell")
    if not directory.is_dir():
        print(f"skipped: no CuTe SM100 tutorials at {directory} (the nvidia-cutlass wheel has them)")
        sys.exit(77)
    return directory


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True)
    parser.add_argument("--cute-include", required=True)
    parser.add_argument("--nvcc", default="nvcc")
    parser.add_argument("--only", default=",".join(TUTORIALS))
    args = parser.parse_args()
    directory = tutorials_directory(args.cute_include)
    with tempfile.TemporaryDirectory(prefix="tmemjit-cute-tutorials-") as work:
        for tutorial in args.only.split(","):
            lower(args, tutorial, directory, pathlib.Path(work))
    print("every tutorial lowered to an sm_90 cubin")


if __name__ == "__main__":
    main()
