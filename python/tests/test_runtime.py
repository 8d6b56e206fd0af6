"""tmemjit.Runtime (docs/architecture.md, "The runtime"): the state between compiles as a value,
current per thread inside `with`, its background work ended by shutdown()."""

import threading

import pytest

import tmemjit
from drain_kernel import TILE, source

needs_specialize = pytest.mark.skipif(
    not tmemjit._tmemjit._have_specialize,
    reason="this libtmemjit has no include/tmem/specialize.h (compile_kernel)")


def transfers():
    return {"acc_load": tmemjit.select("ld", "warpgroup", *TILE, register_budget=32).spec}


def files_under(path):
    return sum(1 for p in path.rglob("*") if p.is_file())


@needs_specialize
def test_two_runtimes_keep_two_caches_and_the_default_sees_neither(tmp_path):
    before = tmemjit.cache_stats()
    first, second = tmemjit.Runtime(cache_dir=str(tmp_path / "a")), \
        tmemjit.Runtime(cache_dir=str(tmp_path / "b"))
    with first:
        a = tmemjit.compile_kernel(source("runtime_drain"), "runtime_drain", transfers())
        assert tmemjit.cache_dir() == str(tmp_path / "a")
    with second:
        b = tmemjit.compile_kernel(source("runtime_drain"), "runtime_drain", transfers())
        assert tmemjit.cache_stats()["misses"] == 1
    with first:
        again = tmemjit.compile_kernel(source("runtime_drain"), "runtime_drain", transfers())
    assert a.report.cache == "miss" and b.report.cache == "miss"  # b is not a's entry
    assert again.report.cache == "memory" and a.report.key == b.report.key
    assert files_under(tmp_path / "a") > 0 and files_under(tmp_path / "b") > 0
    after = tmemjit.cache_stats()
    assert (after["misses"], after["hits"]) == (before["misses"], before["hits"])


def test_with_blocks_nest_and_stay_on_their_thread(tmp_path):
    outer, inner = tmemjit.Runtime(cache_dir=str(tmp_path / "o")), \
        tmemjit.Runtime(cache_dir=str(tmp_path / "i"))
    default_dir = tmemjit.cache_dir()
    with outer:
        with inner as entered:
            assert entered is inner
            assert tmemjit.cache_dir() == str(tmp_path / "i")
            seen = []
            thread = threading.Thread(target=lambda: seen.append(tmemjit.cache_dir()))
            thread.start()
            thread.join()
            assert seen == [default_dir]  # another thread keeps the default runtime
        assert tmemjit.cache_dir() == str(tmp_path / "o")
    assert tmemjit.cache_dir() == default_dir


def test_leaving_a_with_block_on_another_thread_is_an_error(tmp_path):
    runtime = tmemjit.Runtime(cache_dir=str(tmp_path))
    runtime.__enter__()
    errors = []

    def leave():
        try:
            runtime.__exit__(None, None, None)
        except tmemjit.Error as error:
            errors.append(str(error))
    thread = threading.Thread(target=leave)
    thread.start()
    thread.join()
    runtime.__exit__(None, None, None)
    assert errors and "did not enter" in errors[0]


@needs_specialize
def test_a_lazy_compiles_background_build_lands_in_its_runtime(tmp_path):
    runtime = tmemjit.Runtime(cache_dir=str(tmp_path))
    with runtime:
        lazy = tmemjit.compile_kernel(source("runtime_drain"), "runtime_drain", transfers(), specialization="lazy")
        runtime.wait_background_compiles()
        assert runtime.background_compiles() == {"queued": 0, "running": 0}
        generic = tmemjit.compile_kernel(source("runtime_drain"), "runtime_drain", transfers(),
                                         specialization="generic")
    assert lazy.tier == "specialized"
    assert generic.report.cache == "memory"  # built by the background job, in this runtime
    assert runtime.shutdown() == 0
    assert runtime.shutdown() == 0
