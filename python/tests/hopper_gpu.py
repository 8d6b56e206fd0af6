"""What the end-to-end emulation tests share: torch and cuda.bindings on a Hopper-or-later device
(or pytest.skip with why not), and the 2-D bf16 tensor maps their GEMM kernels ask of the host."""

import struct

import pytest


def hopper_torch():
    """torch, cuda.bindings.driver and a Hopper-or-later device 0, or pytest.skip with why not."""
    try:
        import torch
        from cuda.bindings import driver
    except ImportError as error:
        pytest.skip(f"the end-to-end GEMM needs torch and cuda-python: {error}")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device for torch")
    major, _ = torch.cuda.get_device_capability(0)
    if major < 9:
        pytest.skip(f"the sm_90 emulation needs compute capability 9.0 or later, found {major}.x")
    return torch, driver


def tensor_map(driver, tensor, box_rows):
    """A 2-D bf16 tensor map of a row-major (rows, 64·k) tensor: boxes of box_rows × 64 elements
    (128 bytes), 128-byte swizzle, as the kernels' comments ask of the host; the 128 bytes the
    kernel's __grid_constant__ CUtensorMap parameter holds."""
    rows, columns = tensor.shape
    bf16 = driver.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
    u32, u64 = driver.cuuint32_t, driver.cuuint64_t  # cuda.bindings takes these, not ints
    status, encoded = driver.cuTensorMapEncodeTiled(
        bf16, u32(2), tensor.data_ptr(), [u64(columns), u64(rows)], [u64(columns * 2)],
        [u32(64), u32(box_rows)], [u32(1), u32(1)],
        driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        driver.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B,
        driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
        driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    assert status == driver.CUresult.CUDA_SUCCESS, status
    return struct.pack("<16Q", *(int(word) for word in encoded.opaque))  # cuuint64_t
