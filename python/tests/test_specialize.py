"""device_function and compile_kernel (DESIGN.md §7): the transfer inside the user's own kernel."""

from concurrent.futures import ThreadPoolExecutor

import pytest

import seed_specs
import tmemjit

HAVE_SPECIALIZE = tmemjit._tmemjit._have_specialize
needs_specialize = pytest.mark.skipif(
    not HAVE_SPECIALIZE,
    reason="this libtmemjit has no include/tmem/specialize.h (device_function, compile_kernel)")

# A user kernel in the shape of an epilogue: allocate, store the accumulator through the
# transfer, wait, free (docs/python.md shows the same kernel).
CUDA_KERNEL = r"""
#include <tmemjit/transfers.cuh>

extern "C" __global__ void epilogue(const float* in) {
  __shared__ uint32_t tmem_base;
  if (threadIdx.x / 32 == 0) tmemjit::alloc(&tmem_base, 64);
  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
  float regs[acc_store_regs];
  for (int i = 0; i < acc_store_regs; ++i) regs[i] = in[threadIdx.x * acc_store_regs + i];
  acc_store(tmem_base, regs);
  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
  if (threadIdx.x / 32 == 0) tmemjit::dealloc(tmem_base, 64);
}
"""


def test_unavailable_is_a_usage_error_or_works():
    # Either way, an answer: a DeviceFunction, or tmemjit.Error "usage" saying what is missing.
    try:
        function = tmemjit.device_function(seed_specs.layout_b(), name="acc_store")
    except tmemjit.Error as error:
        assert not HAVE_SPECIALIZE
        assert error.code == "usage" and "specialize.h" in error.message
    else:
        assert HAVE_SPECIALIZE and function.name == "acc_store"


@needs_specialize
def test_device_function_cuda_and_ptx():
    spec = seed_specs.layout_b(store=False)
    cuda = tmemjit.device_function(spec, name="acc_load", language="cuda", wait=False)
    assert cuda.language == "cuda" and cuda.direction == "ld"
    assert cuda.regs_per_thread == tmemjit.check(spec).regs_per_thread == 64
    assert "acc_load" in cuda.source and "acc_load_wait" in cuda.source
    assert "acc_load" in cuda.signature
    ptx = tmemjit.device_function(spec, name="acc_load", language="ptx", column_argument=True)
    assert ptx.language == "ptx" and ".func" in ptx.source


@needs_specialize
def test_device_function_errors():
    with pytest.raises(tmemjit.Error) as error:
        tmemjit.device_function(seed_specs.layout_b(), language="fortran")
    assert error.value.code == "usage"
    with pytest.raises(tmemjit.Error) as error:
        tmemjit.device_function(seed_specs.layout_b(), name="not an identifier")
    assert error.value.code == "usage"


@needs_specialize
def test_compile_kernel_seed_store_in_a_user_kernel():
    kernel = tmemjit.compile_kernel(CUDA_KERNEL, "epilogue", {"acc_store": seed_specs.layout_b()})
    assert kernel.cubin[:4] == b"\x7fELF" and kernel.name
    again = tmemjit.compile_kernel(CUDA_KERNEL, "epilogue",
                                   {"acc_store": tmemjit.Transfer(seed_specs.layout_b())})
    assert again.cubin == kernel.cubin


@needs_specialize
def test_compile_kernel_from_a_thread_pool_builds_what_one_thread_builds():
    # An autotuner compiles its candidates from a pool: compile_kernel releases the GIL, and the
    # threads' kernels are byte for byte those of compiles made one at a time.
    specs = [factory(store=True) for _, factory in seed_specs.SEEDS]
    # Every form takes 32-bit words (pack and split have no f32 overload).
    kernel = (CUDA_KERNEL.replace("float regs[", "uint32_t regs[")
              .replace("regs[i] = in[threadIdx.x * acc_store_regs + i];",
                       "regs[i] = __float_as_uint(in[threadIdx.x * acc_store_regs + i]);"))
    assert "__float_as_uint" in kernel

    def build(spec):
        return tmemjit.compile_kernel(kernel, "epilogue", {"acc_store": spec}).cubin

    tmemjit.clear_cache(True)
    with ThreadPoolExecutor(max_workers=len(specs)) as pool:
        together = list(pool.map(build, specs))
    tmemjit.clear_cache(True)
    alone = [build(spec) for spec in specs]
    assert together == alone
    assert len(set(together)) == len(specs)


@needs_specialize
def test_compile_kernel_reports_the_compiler():
    with pytest.raises(tmemjit.Error) as error:
        tmemjit.compile_kernel(CUDA_KERNEL.replace("acc_store(", "acc_stor("), "epilogue",
                               {"acc_store": seed_specs.layout_b()})
    assert error.value.code == "toolchain"
    assert "acc_stor" in error.value.details


@needs_specialize
def test_cta_pair_lifecycle_helpers():
    fn = tmemjit.device_function(seed_specs.layout_b(), name="acc_st", cta_group=2)
    assert "cluster_sync" in fn.source and ".cta_group::2" in fn.source
    kernel = tmemjit.compile_transfer(seed_specs.layout_b(), cta_group=2)
    assert ".cta_group::2" in kernel.ptx and ".cta_group::1" not in kernel.ptx
