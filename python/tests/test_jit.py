"""compile_transfer -> Kernel, the cache's counters and maintenance, warmup."""

import os

import pytest

import seed_specs
import tmemjit


def test_seed_examples_compile(seed_spec):
    kernel = tmemjit.compile_transfer(seed_spec)
    assert isinstance(kernel.cubin, bytes) and kernel.cubin[:4] == b"\x7fELF"
    assert ".target sm_100a" in kernel.ptx
    assert kernel.name and kernel.name in kernel.ptx
    assert kernel.target == "sm_100a"
    assert not kernel.loaded


def test_a_second_call_is_a_memory_hit():
    spec = seed_specs.layout_b()
    tmemjit.compile_transfer(spec, kind="store")
    before = tmemjit.cache_stats()
    again = tmemjit.compile_transfer(seed_specs.layout_b(), kind="store")
    after = tmemjit.cache_stats()
    assert after["hits"] == before["hits"] + 1
    assert after["misses"] == before["misses"]
    assert again.cubin == tmemjit.compile_transfer(spec, kind="store").cubin


def test_cache_stats_is_a_dict_of_counters():
    stats = tmemjit.cache_stats()
    assert {"hits", "misses", "disk_hits", "disk_writes", "evictions", "compile_ms", "bytes",
            "entries"} <= stats.keys()
    tmemjit.reset_cache_stats()
    assert tmemjit.cache_stats()["hits"] == 0


def test_clear_cache_then_disk_hit():
    spec = seed_specs.pack()
    tmemjit.compile_transfer(spec, kind="load")
    tmemjit.clear_cache()
    assert tmemjit.cache_stats()["entries"] == 0
    before = tmemjit.cache_stats()["disk_hits"]
    tmemjit.compile_transfer(spec, kind="load")
    assert tmemjit.cache_stats()["disk_hits"] == before + 1
    assert tmemjit.cache_dir()


def test_kinds_targets_and_keep_dir(tmp_path):
    spec = seed_specs.split()
    names = {tmemjit.compile_transfer(spec, kind=kind).name
             for kind in ("roundtrip", "store", "load", "fill")}
    assert len(names) == 4
    kernel = tmemjit.compile_transfer(spec, target="sm_103a", backend="nvjitlink",
                                      keep_dir=str(tmp_path), line_info=True)
    assert ".target sm_103a" in kernel.ptx
    assert any(name.endswith(".cubin") for name in os.listdir(tmp_path))


def test_unknown_options_are_usage_errors():
    spec = seed_specs.layout_b()
    for kwargs, code in (({"kind": "bogus"}, "usage"), ({"target": "sm_80"}, "target"),
                         ({"backend": "gcc"}, "usage"), ({"backend": "nvrtc"}, "usage")):
        with pytest.raises(tmemjit.Error) as error:
            tmemjit.compile_transfer(spec, **kwargs)
        assert error.value.code == code, kwargs


def test_compiler_failure_carries_log_and_ptx():
    with pytest.raises(tmemjit.Error) as error:
        tmemjit.compile_transfer(seed_specs.layout_b(), backend="ptxas",
                                 extra_options=["--no-such-option"])
    assert error.value.code == "toolchain"
    assert ".target sm_100a" in error.value.details


def test_warmup_fills_the_cache():
    specs = [factory(store=store) for _, factory in seed_specs.SEEDS for store in (True, False)]
    tmemjit.warmup(specs, kind="fill")
    before = tmemjit.cache_stats()["misses"]
    for spec in specs:
        tmemjit.compile_transfer(spec, kind="fill")
    assert tmemjit.cache_stats()["misses"] == before


def test_load_needs_a_driver():
    kernel = tmemjit.compile_transfer(seed_specs.layout_b())
    try:
        kernel.load()
    except tmemjit.Error as error:
        # No driver, or a GPU that cannot run sm_100a: both are errors with a code, never a crash.
        assert error.code in ("driver", "target"), error
    else:
        assert kernel.loaded
