"""cuda_core_launch.py: a lazy (tiered) kernel launched by cuda.core's launch, not Kernel.launch.

compile_kernel(specialization="lazy") answers a new layout at once with the generic tier, which
reads its layout from a __constant__ descriptor, and compiles the specialized kernel in the
background (tiered_epilogue.py). Kernel.launch writes that descriptor itself; a launcher of your
own does not know of it. Kernel.prepare() writes what the tier that runs now needs into the
module in the current CUDA context and returns that tier's entry: cuda.core's
Kernel.from_handle(prepared.kernel) and launch() then run it (docs/specialization.md, "Launching
with your own launcher"). Once the specialized kernel takes over (Kernel.wait_specialized), a
new prepare() hands over that one. Each launch's output is checked element by element.

On a Blackwell GPU it runs tcgen05; on a Hopper GPU the same source compiles for sm_90 with the
emulated transfers (prepare(grid) binds the emulated TMEM); elsewhere, or with --compile-only, it
compiles for sm_100a, shows Kernel.binding() and says why it skips the runs.

    PYTHONPATH=<build>/python python3 examples/launch_anywhere/cuda_core_launch.py [--compile-only]

Prints PASS, FAIL or SKIP lines; exits 4 on wrong data, 1 on an error.
"""

import sys

import numpy as np

import tiered_epilogue as epilogue
import tmemjit


def cuda_core_device(compile_only):
    """(cuda.core, its Device 0 made current, compute capability) where the kernel can run
    here, or (None, None, why not)."""
    if compile_only:
        return None, None, "--compile-only"
    try:
        import cuda.core as core
        core.Device  # cuda.core >= 0.4 exports at the top level
    except (ImportError, AttributeError):
        try:
            import cuda.core.experimental as core
        except ImportError as error:
            return None, None, f"cuda.core is not installed (pip install cuda-core[cu13]): {error}"
    if not hasattr(core.Kernel, "from_handle"):
        return None, None, "this cuda.core has no Kernel.from_handle (cuda-core 0.3 or later has)"
    try:
        device = core.Device(0)
        device.set_current()
    except Exception as error:  # no driver, no device: cuda.core's own exception types vary
        return None, None, f"no CUDA device for cuda.core: {type(error).__name__}: {error}"
    major, minor = device.compute_capability
    if major < 9:
        return None, None, (f"device 0 has compute capability {major}.{minor}; the emulation "
                            f"needs 9.0 or later")
    return core, device, 10 * major + minor


def run(core, device, kernel):
    """Launches the kernel through cuda.core on each tier it reaches; False on wrong data."""
    from cuda.bindings import driver as cu

    def ok(result):
        if result[0] != cu.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"CUDA driver call failed: {result[0]}")
        return result[1] if len(result) > 1 else None

    acc, bias, expected = epilogue.data()
    buffers = [ok(cu.cuMemAlloc(size)) for size in (acc.nbytes, bias.nbytes, expected.nbytes)]
    d_acc, d_bias, d_out = buffers
    stream = device.create_stream()
    correct = True
    try:
        ok(cu.cuMemcpyHtoD(d_acc, acc.ctypes.data, acc.nbytes))
        ok(cu.cuMemcpyHtoD(d_bias, bias.ctypes.data, bias.nbytes))
        ok(cu.cuCtxSynchronize())  # the copies have landed before a launch on `stream`
        config = core.LaunchConfig(grid=epilogue.TILES, block=128)
        # cuda.core passes a Python int as a pointer, numpy scalars as their C types.
        args = epilogue.arguments(int(d_acc), int(d_bias), int(d_out))
        for _ in ("first", "after the switch"):
            ok(cu.cuMemsetD8(d_out, 0, expected.nbytes))
            ok(cu.cuCtxSynchronize())
            # What Kernel.launch would do first, into the module of the tier that runs now: its
            # layout descriptor (generic), its emulated TMEM for the grid (sm_90). The grid
            # matters to the emulation only.
            prepared = kernel.prepare(epilogue.TILES)
            launchable = core.Kernel.from_handle(prepared.kernel)
            core.launch(stream, config, launchable, *args)
            stream.sync()
            got = np.empty_like(expected)
            ok(cu.cuMemcpyDtoH(got.ctypes.data, d_out, got.nbytes))
            correct = epilogue.check(kernel, prepared.tier, got, expected) and correct
            if prepared.tier == "specialized":
                break
            # The specialized kernel takes over once its background compile lands; a new
            # prepare() hands it over.
            kernel.wait_specialized()
        if prepared.tier != "specialized":
            print("FAIL the specialized kernel never took over")
            correct = False
    finally:
        for buffer in buffers:
            ok(cu.cuMemFree(buffer))
    return correct


def main():
    compile_only = "--compile-only" in sys.argv[1:]
    core, device, cc = cuda_core_device(compile_only)
    if core is None:
        print(f"compiling for sm_100a only: {cc}")
        target = "sm_100a"
    else:
        target = f"sm_{cc}a" if cc >= 100 else "sm_90"
        print(f"running on {device.name}, compute capability {cc // 10}.{cc % 10} "
              f"({'tcgen05' if cc >= 100 else 'the sm_90 emulation'})")
    try:
        kernel = epilogue.compile_lazy(target)
    except (tmemjit.Error, RuntimeError) as error:
        print(f"FAIL {error}")
        return 1
    if core is None:
        if not epilogue.check_bindings(kernel):
            return 1
        print(f"SKIP runs: {cc} (compiled for sm_100a: the generic tier, then the specialized "
              f"kernel)")
        return 0
    if not run(core, device, kernel):
        return 4
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
