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


def emulation_device():
    """cuda.core and device 0 where the sm_90 emulation runs (compute capability 9.0 or later),
    or pytest.skip with why not."""
    core, device = cuda_core_device()
    cc = device.compute_capability
    if cc.major < 9:
        pytest.skip(f"the sm_90 emulation needs compute capability 9.0 or later; device 0 is "
                    f"{cc.major}.{cc.minor}")
    return core, device


needs_specialize = pytest.mark.skipif(
    not tmemjit._tmemjit._have_specialize,
    reason="this libtmemjit has no include/tmem/specialize.h (compile_kernel)")


def test_cubin_loads_with_cuda_core():
    core, device = cuda_core_device()
    cc = device.compute_capability
    if (cc.major, cc.minor) != (10, 0):
        pytest.skip(f"an sm_100a cubin needs compute capability 10.0; device 0 "
                    f"({device.name}) is {cc.major}.{cc.minor}")
    kernel = tmemjit.compile_transfer(seed_specs.layout_b())
    module = core.ObjectCode.from_cubin(kernel.cubin)
    assert module.get_kernel(kernel.name) is not None


@needs_specialize
def test_emulated_user_kernel_loads_with_cuda_core():
    core, device = emulation_device()
    from test_specialize import CUDA_KERNEL
    kernel = tmemjit.compile_kernel(CUDA_KERNEL, "epilogue",
                                    {"acc_store": seed_specs.layout_b()}, target="sm_90")
    module = core.ObjectCode.from_cubin(kernel.cubin)
    assert module.get_kernel(kernel.name) is not None


# A user kernel that stores a 128 x 64 tile into TMEM and loads it back, scaled: run through
# Kernel.launch on the sm_90 emulation (any GPU of compute capability 9.0 or later).
ROUNDTRIP = r"""
#include <tmemjit/transfers.cuh>

extern "C" __global__ void __launch_bounds__(128)
    roundtrip(const float* in, float* out, float scale) {
  __shared__ unsigned int base_shared;
  if (threadIdx.x / 32 == 0) tmemjit::alloc(&base_shared, 64);
  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
  const unsigned int base = base_shared;
  float regs[acc_st_regs];
#pragma unroll
  for (int s = 0; s < acc_st_regs; ++s) {
    int index[2];
    acc_st_coord(threadIdx.x, s, index);
    regs[s] = in[index[0] * 64 + index[1]];
  }
  acc_st(base, regs);
  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
  float back[acc_ld_regs];
  acc_ld(base, back);
#pragma unroll
  for (int s = 0; s < acc_ld_regs; ++s) {
    int index[2];
    acc_ld_coord(threadIdx.x, s, index);
    out[index[0] * 64 + index[1]] = scale * back[s];
  }
  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
  if (threadIdx.x / 32 == 0) tmemjit::dealloc(base, 64);
}
"""
TILE = ('tmem_datapath_layout("D",128,64)', "tensor((128,64), S[(128,64):(1@tid_in_wg,1)], f32)")


class _DeviceArray:
    """Device memory seen through __cuda_array_interface__, as CuPy or Numba hand it over."""

    def __init__(self, address, shape):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": "<f4",
                                         "data": (address, False), "version": 3}


@needs_specialize
def test_emulated_user_kernel_runs_through_kernel_launch():
    core, device = emulation_device()
    import ctypes
    np = pytest.importorskip("numpy")
    cu = pytest.importorskip("cuda.bindings.driver")

    def ok(result):
        assert result[0] == cu.CUresult.CUDA_SUCCESS, result[0]
        return result[1] if len(result) > 1 else None

    transfers = {"acc_st": tmemjit.select("st", "warpgroup", *TILE, register_budget=32).spec,
                 "acc_ld": tmemjit.select("ld", "warpgroup", *TILE, register_budget=32).spec}
    kernel = tmemjit.compile_kernel(ROUNDTRIP, "roundtrip", transfers, target="sm_90",
                                    path="roundtrip.cu")
    assert kernel.emulated and kernel.parameter_sizes() == [8, 8, 4]

    host_in = np.arange(128 * 64, dtype=np.float32) + np.float32(0.25)
    host_out = np.zeros_like(host_in)
    d_in = ok(cu.cuMemAlloc(host_in.nbytes))
    d_out = ok(cu.cuMemAlloc(host_out.nbytes))
    try:
        ok(cu.cuMemcpyHtoD(d_in, host_in.ctypes.data, host_in.nbytes))
        ok(cu.cuMemsetD8(d_out, 0, host_out.nbytes))
        stream = device.create_stream()
        kernel.launch(1, (128,), [ctypes.c_void_p(int(d_in)), _DeviceArray(int(d_out), (128, 64)),
                                  np.float32(2.0)], stream=stream)
        stream.sync()
        assert kernel.emulation_check() == []
        ok(cu.cuMemcpyDtoH(host_out.ctypes.data, d_out, host_out.nbytes))
        np.testing.assert_array_equal(host_out, 2.0 * host_in)

        # A mismatch is refused before anything runs: one argument short, a double for a float.
        with pytest.raises(tmemjit.Error) as error:
            kernel.launch(1, 128, [ctypes.c_void_p(int(d_in)), ctypes.c_void_p(int(d_out))])
        assert error.value.code == "usage"
        assert "with 2 arguments; the kernel takes 3" in error.value.message
        with pytest.raises(tmemjit.Error) as error:
            kernel.launch(1, 128, [ctypes.c_void_p(int(d_in)), ctypes.c_void_p(int(d_out)),
                                   np.float64(2.0)])
        assert "argument 2 is 8 bytes; the kernel's parameter 2 is 4" in error.value.message
    finally:
        ok(cu.cuMemFree(d_in))
        ok(cu.cuMemFree(d_out))
