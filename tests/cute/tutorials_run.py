#!/usr/bin/env python3
"""CuTe's SM100 tutorials run on Hopper with their own host checks (CTest CuteTutorialsRun,
labels cute and emu; issue 40, item 5 (e); docs/emulation.md §Standalone modules).

Each tutorial is compiled for sm_100a and its module lowered as a standalone sm_90 cubin
(tutorials_test.lower with standalone_ctas). Its host program is then built by nvcc from the
tutorial's own source, unchanged, with the device code that nvcc would embed replaced by that
cubin: nvcc's steps (`nvcc -dryrun`) are run as they are, except that the fatbinary steps
package the lowered cubin as the sm_90a image and no PTX. The program runs under a preloaded
library (blackwell_properties.c) that reports compute capability 10.0, since the tutorials
refuse to start on anything else. Passing means the program printed its own verdict,
"Execution is successful." (its host GEMM equals the kernel's D exactly), and exited 0.

    tutorials_run.py --cli build/tools/tmemjit --cute-include DIR --nvcc NVCC [--only 01,04]

Exits 77 (a skip, with the reason) without a GPU of compute capability 9.x, or without the
wheel's tutorials; with TMEMJIT_REQUIRE naming emu, a missing GPU is a failure instead.
"""

import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile

import tutorials_test

# CTAs whose emulated state the standalone module holds: the tutorials' default problems
# (512 x 1024 x 256) launch 16 to 32 CTAs.
STANDALONE_CTAS = 64
VERDICT = "Execution is successful."


def skip(reason):
    if "emu" in os.environ.get("TMEMJIT_REQUIRE", "").split(","):
        sys.exit(f"TMEMJIT_REQUIRE=emu, but {reason}")
    print(f"skipped: {reason}")
    sys.exit(77)


def hopper_or_skip():
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        skip(f"no GPU here (nvidia-smi: {error})")
    capability = done.stdout.split("\n")[0].strip()
    if done.returncode != 0 or not capability.startswith("9."):
        skip(f"the emulation runs on compute capability 9.x; found '{capability or done.stderr}'")


def host_steps(args, directory, source, work, cubin):
    """nvcc's steps for the tutorial's program, with the lowered cubin as its only device code."""
    program = work / (source + ".exe")
    command = ([args.nvcc, "-arch=sm_100a", "-cudart", "shared"] +
               tutorials_test.nvcc_flags(args, directory) +
               [str(directory / source), "-o", str(program), "-dryrun"])
    done = subprocess.run(command, capture_output=True, text=True, cwd=work)
    if done.returncode != 0:
        sys.exit(f"{source}: nvcc -dryrun failed:\n{done.stderr[-3000:]}")
    steps = []
    for line in done.stderr.splitlines():
        if not line.startswith("#$ "):
            continue
        step = line[3:]
        assignment = re.match(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)$", step)
        if assignment:  # nvcc's own variables, written unquoted: the text after '=' as it is
            name, value = assignment.groups()
            steps.append(f"export {name}=" + "'" + value.strip().replace("'", "'\\''") + "'")
            continue
        if step.startswith("fatbinary "):
            images = re.findall(r'"?--image3=kind=(\w+),sm=(\w+),file=([^"\s]+)"?', step)
            if not images:
                sys.exit(f"{source}: a fatbinary step without images: {step}")
            step = re.sub(r'\s"?--image3=[^"\s]+"?', "", step)
            linked = " -link " in f" {step} "
            # The program's own image is the lowered module; the device link's (empty for a
            # program without relocatable code) is retagged for sm_90a like nvlink's output.
            elf = [file for kind, _, file in images if kind == "elf"]
            image = elf[0] if linked else str(cubin)
            step += f' "--image3=kind=elf,sm=90a,file={image}"'
        elif step.startswith("rm "):  # nvcc ignores a file that is not there
            step = "rm -f " + step[3:]
        elif step.startswith("nvlink "):
            step = step.replace("--arch=sm_100a", "--arch=sm_90a")
        steps.append(step)
    return program, steps


def build(args, tutorial, directory, work):
    """The tutorial's program, its device code the standalone lowered module."""
    source = tutorials_test.TUTORIALS[tutorial][0]
    cubin = tutorials_test.lower(args, tutorial, directory, work, STANDALONE_CTAS)
    program, steps = host_steps(args, directory, source, work, cubin)
    script = work / (source + ".build.sh")
    script.write_text("set -e\n" + "\n".join(steps) + "\n")
    built = subprocess.run(["bash", str(script)], capture_output=True, text=True, cwd=work)
    if built.returncode != 0:
        sys.exit(f"{source}: building the host with the lowered cubin failed:\n"
                 f"{built.stderr[-3000:]}")
    return program


def run(args, tutorial, directory, work):
    source = tutorials_test.TUTORIALS[tutorial][0]
    program = build(args, tutorial, directory, work)
    shim = work / "libblackwell_properties.so"
    if not shim.exists():
        here = pathlib.Path(__file__).resolve().parent
        # No runtime of its own: it finds the program's through RTLD_NEXT.
        made = subprocess.run([args.nvcc, "-shared", "-cudart", "none", "-Xcompiler", "-fPIC",
                               str(here / "blackwell_properties.c"), "-o", str(shim), "-ldl"],
                              capture_output=True, text=True)
        if made.returncode != 0:
            sys.exit(f"building blackwell_properties.c failed:\n{made.stderr[-3000:]}")
    environment = dict(os.environ, LD_PRELOAD=str(shim))
    ran = subprocess.run([str(program)], capture_output=True, text=True, env=environment,
                         cwd=work, timeout=600)
    tail = (ran.stdout[-1500:] + "\n" + ran.stderr[-1500:]).strip()
    if ran.returncode != 0 or VERDICT not in ran.stdout:
        sys.exit(f"{source}: exit {ran.returncode}, without '{VERDICT}':\n{tail}")
    print(f"{source}: {VERDICT} (its own host check, on the emulation)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True)
    parser.add_argument("--cute-include", required=True)
    parser.add_argument("--nvcc", default="nvcc")
    parser.add_argument("--only", default=",".join(tutorials_test.TUTORIALS))
    parser.add_argument("--build-only", action="store_true",
                        help="build the programs but do not run them (no GPU needed)")
    args = parser.parse_args()
    directory = tutorials_test.tutorials_directory(args.cute_include)
    if not args.build_only:
        hopper_or_skip()
    with tempfile.TemporaryDirectory(prefix="tmemjit-cute-run-") as work:
        for tutorial in args.only.split(","):
            if args.build_only:
                print(f"built {build(args, tutorial, directory, pathlib.Path(work)).name}")
                continue
            run(args, tutorial, directory, pathlib.Path(work))
    print("every tutorial was built" if args.build_only else
          "every tutorial passed its own check on the emulation")


if __name__ == "__main__":
    main()
