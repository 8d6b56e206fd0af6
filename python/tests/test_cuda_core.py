"""A cubin from tmemjit loads with cuda-python's cuda.core where a GPU that runs it exists; elsewhere
the test is skipped with the reason (never a silent pass)."""

import pytest

import seed_specs
import tmemjit


def cuda_core_device():
    """cuda.core's module and device 0, made current, or pytest.skip with why not."""
    try:
        import cuda.core as core
        core.Device  # cuda.core >= 0.4 exports at the top level
    except (ImportError, AttributeError):
        try:
            import cuda.core.experimental as core
        except ImportError as error:
            pytest.skip(f"cuda.core is not installed (pip install cuda-core[cu13]): {error}")
    try:
        device = core.Device(0)
        device.set_current()
    except Exception as error:  # no driver, no device: cuda.core's own exception types vary
        pytest.skip(f"no CUDA device for cuda.core: {type(error).__name__}: {error}")
    return core, device


def test_cubin_loads_with_cuda_core():
    core, device = cuda_core_device()
    cc = device.compute_capability
    if (cc.major, cc.minor) != (10, 0):
        pytest.skip(f"an sm_100a cubin needs compute capability 10.0; device 0 "
                    f"({device.name}) is {cc.major}.{cc.minor}")
    kernel = tmemjit.compile_transfer(seed_specs.layout_b())
    module = core.ObjectCode.from_cubin(kernel.cubin)
    assert module.get_kernel(kernel.name) is not None


@pytest.mark.skipif(not tmemjit._tmemjit._have_specialize,
                    reason="this libtmemjit has no include/tmem/specialize.h (compile_kernel)")
def test_emulated_user_kernel_loads_with_cuda_core():
    core, device = cuda_core_device()
    cc = device.compute_capability
    if cc.major < 9:
        pytest.skip(f"the sm_90 emulation needs compute capability 9.0 or later; device 0 is "
                    f"{cc.major}.{cc.minor}")
    from test_specialize import CUDA_KERNEL
    kernel = tmemjit.compile_kernel(CUDA_KERNEL, "epilogue",
                                    {"acc_store": seed_specs.layout_b()}, target="sm_90")
    module = core.ObjectCode.from_cubin(kernel.cubin)
    assert module.get_kernel(kernel.name) is not None
