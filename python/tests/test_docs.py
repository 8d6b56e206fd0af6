"""Every Python block of docs/python.md runs as written, in order, in one namespace."""

import pathlib
import re

import pytest

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def needs_gpu(block):
    return block.startswith("# GPU:")


def run_blocks(blocks):
    namespace = {}
    for index, block in blocks:
        exec(compile(block, f"{DOC.name} block {index}", "exec"), namespace)


def test_the_page_has_examples():
    assert len(BLOCKS) >= 5 and any(needs_gpu(block) for block in BLOCKS)


def test_blocks_without_a_gpu(capsys):
    run_blocks([(i, b) for i, b in enumerate(BLOCKS) if not needs_gpu(b)])
    output = capsys.readouterr().out
    assert "PASS" in output and "best: tcgen05.ld.sync.aligned.32x32b.x128.b32" in output
    # "Your own kernel": the second form for the tile reuses the parse of the first one's headers.
    assert "32x32b.x128.b32 miss front end: miss deferred 128 local bytes: 0" in output
    assert "32x32b.x32.b32 miss front end: memory reused 128 local bytes: 0" in output
    # "Options as a value": the same options as a CompileOptions and as keywords, one kernel.
    assert "CompileOptions(opt_level=2, nvrtc_options=('-std=c++20',))" in output
    assert "miss memory True" in output


def test_every_block_on_a_blackwell_gpu():
    from test_cuda_core import cuda_core_device
    _, device = cuda_core_device()
    cc = device.compute_capability
    if (cc.major, cc.minor) != (10, 0):
        pytest.skip(f"the GPU blocks load an sm_100a cubin: they need compute capability 10.0; "
                    f"device 0 ({device.name}) is {cc.major}.{cc.minor}")
    run_blocks(list(enumerate(BLOCKS)))
