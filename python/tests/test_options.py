"""The compile options of compile_kernel, warmup_kernel, compile_transfer and warmup (issue 42 item 5).

First what the keyword arguments do, pinned before tmemjit.CompileOptions came, so that both
spellings are held to the same behaviour.
"""

import pytest

import seed_specs
import tmemjit

needs_specialize = pytest.mark.skipif(
    not tmemjit._tmemjit._have_specialize,
    reason="this libtmemjit has no include/tmem/specialize.h (compile_kernel)")

# test_specialize.py's epilogue, renamed per test so that no other test's cache entry answers.
KERNEL = r"""
#include <tmemjit/transfers.cuh>

extern "C" __global__ void options_probe(const float* in) {
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


def kernel_source(entry):
    return KERNEL.replace("options_probe", entry)


# One changed value of each keyed option that compile_transfer takes, with what shows it in the
# PTX where the PTX shows it.
TRANSFER_CHANGES = [({"target": "sm_103a"}, ".target sm_103a"),
                    ({"backend": "ptxas"}, None),
                    ({"opt_level": 2}, None),
                    ({"line_info": True}, None),
                    ({"tmem_access_check": True}, None),
                    ({"cta_group": 2}, ".cta_group::2"),
                    ({"extra_options": ["--warn-on-spills"]}, None)]

# One changed value of each keyed option that compile_kernel takes (front_end="nvcc" is
# test_specialize.py's: a subprocess compile).
KERNEL_CHANGES = [{"target": "sm_103a"}, {"backend": "ptxas"}, {"opt_level": 2},
                  {"line_info": True}, {"cta_group": 2}, {"nvrtc_options": ["-DPROBE=1"]},
                  {"ptx_options": ["-maxrregcount=128"]}, {"extra_options": ["-DPROBE=2"]},
                  {"precompile": ["cuda_bf16.h"]}]


def misses(call):
    before = tmemjit.cache_stats()["misses"]
    call()
    return tmemjit.cache_stats()["misses"] - before


# ---- the keyword arguments, as they were before CompileOptions --------------------------------

@pytest.mark.parametrize("change,ptx_shows", TRANSFER_CHANGES,
                         ids=[next(iter(c)) for c, _ in TRANSFER_CHANGES])
def test_compile_transfer_keywords_each_make_their_own_kernel(change, ptx_shows):
    spec = seed_specs.layout_b()
    tmemjit.compile_transfer(spec, kind="store")
    assert misses(lambda: tmemjit.compile_transfer(spec, kind="store", **change)) == 1
    assert misses(lambda: tmemjit.compile_transfer(spec, kind="store", **change)) == 0
    if ptx_shows:
        assert ptx_shows in tmemjit.compile_transfer(spec, kind="store", **change).ptx


def test_compile_transfer_keep_dir_is_not_part_of_the_key(tmp_path):
    spec = seed_specs.pack()
    assert misses(lambda: tmemjit.compile_transfer(spec, kind="fill", keep_dir=str(tmp_path))) == 1
    assert any(path.suffix == ".cubin" for path in tmp_path.iterdir())
    assert misses(lambda: tmemjit.compile_transfer(spec, kind="fill")) == 0


def test_compile_transfer_keyword_errors():
    spec = seed_specs.layout_b()
    for keywords in ({"target": 90}, {"opt_level": "3"}, {"opt_level": 2.0}, {"line_info": 1},
                     {"keep_dir": None}, {"extra_options": [3]}, {"colour": "red"}):
        with pytest.raises(TypeError):
            tmemjit.compile_transfer(spec, **keywords)
    for keywords, code, words in (({"target": "sm_80"}, "target", "unknown target 'sm_80'"),
                                  ({"backend": "gcc"}, "usage", "unknown backend 'gcc'"),
                                  ({"opt_level": 9}, "usage", "opt_level"),
                                  ({"cta_group": 3}, "usage", "cta_group 3")):
        with pytest.raises(tmemjit.Error) as error:
            tmemjit.compile_transfer(spec, **keywords)
        assert error.value.code == code and words in error.value.message, keywords


def test_warmup_keywords_reach_the_compile_they_warm():
    specs = [seed_specs.split(), seed_specs.split(store=False)]
    tmemjit.warmup(specs, kind="load", target="sm_103a", backend="ptxas")
    for spec in specs:
        assert misses(lambda: tmemjit.compile_transfer(spec, kind="load", target="sm_103a",
                                                       backend="ptxas")) == 0
    with pytest.raises(tmemjit.Error) as error:
        tmemjit.warmup(specs, target="sm_80")
    assert error.value.code == "target"
    with pytest.raises(TypeError):
        tmemjit.warmup(specs, colour="red")


@needs_specialize
def test_compile_kernel_keywords_each_make_their_own_kernel():
    entry = "options_keywords"
    source, transfers = kernel_source(entry), {"acc_store": seed_specs.layout_b()}
    default = tmemjit.compile_kernel(source, entry, transfers).report
    keys = {default.key}
    for change in KERNEL_CHANGES:
        report = tmemjit.compile_kernel(source, entry, transfers, **change).report
        assert report.cache == "miss" and report.key not in keys, change
        keys.add(report.key)
        again = tmemjit.compile_kernel(source, entry, transfers, **change).report
        assert again.cache == "memory" and again.key == report.key, change


@needs_specialize
def test_compile_kernel_keep_dir_and_specialization_are_not_part_of_the_key(tmp_path):
    entry = "options_keep_dir"
    source, transfers = kernel_source(entry), {"acc_store": seed_specs.layout_b()}
    kept = tmemjit.compile_kernel(source, entry, transfers, keep_dir=str(tmp_path)).report
    assert kept.cache == "miss" and any(p.suffix == ".cubin" for p in tmp_path.iterdir())
    plain = tmemjit.compile_kernel(source, entry, transfers).report
    assert plain.cache == "memory" and plain.key == kept.key
    lazy = tmemjit.compile_kernel(source, entry, transfers, specialization="lazy")
    lazy.wait_specialized()
    assert lazy.report.cache == "memory" and lazy.report.key == kept.key


@needs_specialize
def test_compile_kernel_keyword_errors():
    source, transfers = kernel_source("options_errors"), {"acc_store": seed_specs.layout_b()}
    with pytest.raises(TypeError):
        tmemjit.compile_kernel(source, "options_errors", transfers, colour="red")
    for keywords, code, words in (({"target": "sm_80"}, "target", "unknown target 'sm_80'"),
                                  ({"backend": "gcc"}, "usage", "unknown backend 'gcc'"),
                                  ({"specialization": "later"}, "usage",
                                   "allowed: eager, lazy, generic"),
                                  ({"front_end": "clang"}, "usage", "allowed: nvrtc, nvcc")):
        with pytest.raises(tmemjit.Error) as error:
            tmemjit.compile_kernel(source, "options_errors", transfers, **keywords)
        assert error.value.code == code and words in error.value.message, keywords


@needs_specialize
def test_warmup_kernel_passes_its_keywords_to_compile_kernel():
    entry = "options_warm"
    source = kernel_source(entry).replace("float regs[", "uint32_t regs[").replace(
        "regs[i] = in[", "regs[i] = (uint32_t)in[")
    transfers = {"acc_store": seed_specs.layout_b()}
    tmemjit.warmup_kernel(source, entry, transfers, nvrtc_options=["-DWARM=1"], opt_level=2)
    warm = tmemjit.compile_kernel(source, entry, transfers, specialization="generic",
                                  nvrtc_options=["-DWARM=1"], opt_level=2)
    assert warm.report.cache == "memory" and warm.tier == "generic"
    cold = tmemjit.compile_kernel(source, entry, transfers, specialization="generic")
    assert cold.report.cache == "miss"
    with pytest.raises(TypeError):
        tmemjit.warmup_kernel(source, entry, transfers, colour="red")
