"""What both launch_anywhere examples share: the epilogue of examples/epilogue/ compiled lazily
(docs/specialization.md §Tiers), its data and its check. The launch is each example's own.

A server meets a layout it has not seen: compile_kernel(specialization="lazy") answers at once
with the generic tier (the layout read from a __constant__ descriptor) when that tier of the
signature is cached, and compiles the layout's specialized kernel in the background. Here the
warmup is Layout D (32x32b.x32), the new layout Layout F (16x256b.x8): 64 registers per thread
each, one generic tier.
"""

import atexit
import os
import shutil
import tempfile

import numpy as np

import tmemjit

HERE = os.path.dirname(os.path.abspath(__file__))
EPILOGUE = os.path.join(HERE, "..", "epilogue")
COLUMNS, TILES = 256, 132  # the tile's columns (a few chunks of each layout); CTAs, a tile each
ALPHA, BETA = 1.5, -0.25
WARMUP = ("d_x32_ld", "d_x32_st")    # builds the generic tier
LAYOUT = ("f_16x256b_ld", "f_16x256b_st")  # the new layout lazy answers


def spec(name):
    with open(os.path.join(EPILOGUE, "layouts", name + ".json")) as f:
        return tmemjit.TransferSpec.from_json(f.read())


def transfers(layout):
    load, store = layout
    # As examples/epilogue/main.cc: the kernel waits itself and steps its chunks by a column.
    return {"acc_load": tmemjit.Transfer(spec(load), wait=False, column_argument=True),
            "acc_store": tmemjit.Transfer(spec(store), wait=False, column_argument=True)}


def private_cache():
    """A cache of this run's own, so that nothing an earlier run cached answers: the first call
    of the new layout must be the generic tier the warmup built."""
    directory = tempfile.mkdtemp(prefix="tmemjit-launch-anywhere-")
    tmemjit.set_cache_dir(directory)
    atexit.register(shutil.rmtree, directory, True)


def compile_lazy(target):
    """The new layout's kernel, lazily: the generic tier now, the specialized kernel later. Raises
    RuntimeError where lazy did not answer with the generic tier."""
    private_cache()
    with open(os.path.join(EPILOGUE, "epilogue.cu")) as f:
        source = f.read()
    options = {"target": target, "path": "epilogue.cu"}
    tmemjit.warmup_kernel(source, "epilogue", transfers(WARMUP), **options)  # ahead of time
    kernel = tmemjit.compile_kernel(source, "epilogue", transfers(LAYOUT), specialization="lazy",
                                    **options)
    report = kernel.report
    print(f"compile_kernel(lazy) for {target}: the {report.tier} tier, cache {report.cache}, "
          f"{report.transfers[0]['op']}")
    if report.tier != "generic":
        raise RuntimeError(f"lazy answered a new layout with the {report.tier} tier, not the "
                           f"generic tier its warmup built: {report.tier_reason}")
    return kernel


def chunk_shape():
    """One chunk of the new layout: the register tensor's (rows, columns)."""
    rows, columns = spec(LAYOUT[0]).regs.base.shape
    return int(rows), int(columns)


def data():
    """(accumulator of every tile, bias, expected output), float32, as the C++ example's."""
    rows, _ = chunk_shape()
    i = np.arange(TILES * rows * COLUMNS, dtype=np.uint64)
    acc = (((i * 2654435761) % (1 << 32)) % 1000).astype(np.float32) / 16 - 30
    bias = (0.5 * (np.arange(COLUMNS) % 7)).astype(np.float32)
    expected = np.float32(ALPHA) * acc + np.float32(BETA) * np.tile(bias, TILES * rows)
    return acc, bias, expected


def arguments(acc, bias, out):
    """The kernel's parameters after the three device addresses (ints): alpha, beta, rows,
    columns, chunk_columns, alloc_columns, each a numpy scalar of the parameter's C type."""
    rows, chunk = chunk_shape()
    return (acc, bias, out, np.float32(ALPHA), np.float32(BETA), np.int32(rows),
            np.int32(COLUMNS), np.int32(chunk), np.uint32(COLUMNS))


def check(kernel, tier, got, expected):
    """Prints PASS or FAIL for one launch; True when every element is right."""
    for warning in kernel.emulation_check():  # [] where nothing is emulated
        print(f"  emulation: {warning}")
    wrong = np.flatnonzero(~(np.abs(got - expected) <= 1e-4 * (1 + np.abs(expected))))
    if len(wrong):
        i = int(wrong[0])
        print(f"FAIL the {tier} tier: {len(wrong)} of {got.size} elements differ; the first at "
              f"{i}: {got[i]}, expected {expected[i]}")
        return False
    print(f"PASS the {tier} tier: {got.size} elements of alpha * acc + beta * bias")
    return True


def show_binding(kernel):
    """What a launcher that loads the cubin itself would write (Kernel.binding). Not for an
    emulated kernel: its binding(grid) binds emulated TMEM, as prepare(grid) does."""
    binding = kernel.binding()
    written = ", ".join(f"{symbol} ({len(value)} bytes)" for symbol, value in binding.globals)
    print(f"  binding: the {binding.tier} tier, entry {binding.entry}, "
          f"{len(binding.cubin)}-byte cubin, writes {written or 'nothing'}")
    return binding


def check_bindings(kernel):
    """Without a GPU: the generic tier's binding holds both transfers' descriptors, and once the
    specialized kernel takes over there is nothing to write. Prints FAIL and returns False
    otherwise."""
    first = show_binding(kernel)
    # The background compile may have landed already: then the first is the specialized one.
    descriptors = sorted(symbol for symbol, _ in first.globals)
    if first.tier == "generic" and descriptors != ["tmemjit_desc_acc_load",
                                                   "tmemjit_desc_acc_store"]:
        print(f"FAIL the generic tier's binding writes {descriptors}")
        return False
    kernel.wait_specialized()
    last = show_binding(kernel)
    if (last.tier != "specialized" or last.globals
            or (first.tier == "generic" and last.cubin == first.cubin)):
        print(f"FAIL after the switch the binding is the {last.tier} tier's, writing "
              f"{len(last.globals)} globals")
        return False
    return True
