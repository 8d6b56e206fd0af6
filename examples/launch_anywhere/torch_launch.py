"""torch_launch.py: a lazy (tiered) kernel on PyTorch tensors, launched with cuLaunchKernel.

What a PyTorch extension does with a kernel of its own: it takes the tensors' device addresses
and launches on PyTorch's current stream, through the driver (cuda.bindings here; C++
cuLaunchKernel in an extension alike). The kernel is compile_kernel's lazy answer for a new
layout: the generic tier first, the specialized kernel once its background compile lands
(tiered_epilogue.py). Kernel.prepare() writes what the tier that runs now needs before it runs
(the generic tier's layout descriptor; on Hopper, the emulated TMEM for the grid) and returns its
CUfunction (docs/specialization.md, "Launching with your own launcher"). `epilogue(acc, bias)`
below is that launcher: prepare, then cuLaunchKernel; every output is checked against PyTorch's
own alpha * acc + beta * bias.

On a Blackwell GPU it runs tcgen05; on a Hopper GPU the sm_90 emulation; elsewhere, or with
--compile-only, it compiles for sm_100a and says why it skips the runs.

    PYTHONPATH=<build>/python python3 examples/launch_anywhere/torch_launch.py [--compile-only]

Prints PASS, FAIL or SKIP lines; exits 4 on wrong data, 1 on an error.
"""

import ctypes
import sys

import tiered_epilogue as epilogue
import tmemjit


def torch_device(compile_only):
    """(torch, compute capability) where the kernel can run here, or (None, why not)."""
    if compile_only:
        return None, "--compile-only"
    try:
        import torch
    except ImportError as error:
        return None, f"PyTorch is not installed (pip install torch): {error}"
    try:
        from cuda.bindings import driver  # noqa: F401
    except ImportError as error:
        return None, f"cuda.bindings is not installed (pip install cuda-bindings): {error}"
    if not torch.cuda.is_available():
        return None, "PyTorch sees no CUDA device here"
    major, minor = torch.cuda.get_device_capability(0)
    if major < 9:
        return None, (f"device 0 has compute capability {major}.{minor}; the emulation needs "
                      f"9.0 or later")
    return torch, 10 * major + minor


def launcher(torch, kernel):
    """epilogue(acc, bias) -> out on PyTorch's current stream: the launch an extension makes."""
    from cuda.bindings import driver as cu

    rows, chunk = epilogue.chunk_shape()

    def epilogue_op(acc, bias):
        assert acc.is_cuda and acc.dtype == torch.float32 and acc.is_contiguous()
        assert acc.numel() == epilogue.TILES * rows * epilogue.COLUMNS
        out = torch.empty_like(acc)
        # Before every launch: the tier that runs now, bound in the current context.
        prepared = kernel.prepare(epilogue.TILES)
        # cuLaunchKernel's kernelParams: one pointer to each parameter's value, in C types
        # (the kernel's: three float pointers, alpha, beta, rows, columns, chunk_columns,
        # alloc_columns).
        values = [ctypes.c_void_p(tensor.data_ptr()) for tensor in (acc, bias, out)]
        values += [ctypes.c_float(epilogue.ALPHA), ctypes.c_float(epilogue.BETA),
                   ctypes.c_int(rows), ctypes.c_int(epilogue.COLUMNS), ctypes.c_int(chunk),
                   ctypes.c_uint(epilogue.COLUMNS)]
        params = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
        stream = cu.CUstream(torch.cuda.current_stream().cuda_stream)
        result, = cu.cuLaunchKernel(cu.CUfunction(prepared.function), epilogue.TILES, 1, 1,
                                    128, 1, 1, 0, stream, ctypes.addressof(params), 0)
        if result != cu.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"cuLaunchKernel failed: {result}")
        return out, prepared.tier

    return epilogue_op


def run(torch, kernel):
    """Runs the launcher on each tier the kernel reaches; False on wrong data."""
    acc_host, bias_host, _ = epilogue.data()
    acc = torch.from_numpy(acc_host).cuda()
    bias = torch.from_numpy(bias_host).cuda()
    # PyTorch's own answer, in float32 as the kernel computes it.
    expected = (epilogue.ALPHA * acc.view(-1, epilogue.COLUMNS) + epilogue.BETA * bias).view(-1)
    expected = expected.cpu().numpy()
    op = launcher(torch, kernel)
    correct, tier = True, None
    for _ in ("first", "after the switch"):
        out, tier = op(acc, bias)
        torch.cuda.synchronize()
        correct = epilogue.check(kernel, tier, out.cpu().numpy(), expected) and correct
        if tier == "specialized":
            break
        kernel.wait_specialized()  # the specialized kernel takes over; the next launch runs it
    if tier != "specialized":
        print("FAIL the specialized kernel never took over")
        correct = False
    return correct


def main():
    compile_only = "--compile-only" in sys.argv[1:]
    torch, cc = torch_device(compile_only)
    if torch is None:
        print(f"compiling for sm_100a only: {cc}")
        target = "sm_100a"
    else:
        target = f"sm_{cc}a" if cc >= 100 else "sm_90"
        torch.zeros(1, device="cuda")  # PyTorch makes device 0's primary context current
        print(f"running on {torch.cuda.get_device_name(0)}, compute capability "
              f"{cc // 10}.{cc % 10} ({'tcgen05' if cc >= 100 else 'the sm_90 emulation'})")
    try:
        kernel = epilogue.compile_lazy(target)
    except (tmemjit.Error, RuntimeError) as error:
        print(f"FAIL {error}")
        return 1
    if torch is None:
        if not epilogue.check_bindings(kernel):
            return 1
        print(f"SKIP runs: {cc} (compiled for sm_100a: the generic tier, then the specialized "
              f"kernel)")
        return 0
    if not run(torch, kernel):
        return 4
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
