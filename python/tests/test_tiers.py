"""compile_kernel's tiers (docs/specialization.md §Tiers): specialization= eager, lazy, generic."""

import pytest

import seed_specs
import tmemjit
from drain_kernel import TILE, source

needs_specialize = pytest.mark.skipif(
    not tmemjit._tmemjit._have_specialize,
    reason="this libtmemjit has no include/tmem/specialize.h (compile_kernel)")


def load_spec(register_budget):
    spec = tmemjit.select("ld", "warpgroup", *TILE, register_budget=register_budget).spec
    assert f".32x32b.x{register_budget}." in spec.op
    return spec


@needs_specialize
def test_generic_returns_the_generic_tier():
    kernel = tmemjit.compile_kernel(source("tier_generic"), "tier_generic",
                                    {"acc_load": load_spec(32)}, specialization="generic")
    assert kernel.tier == "generic"
    assert kernel.report.tier == "generic" and kernel.report.tier_reason == ""
    assert kernel.cubin[:4] == b"\x7fELF"
    kernel.wait_specialized()  # no specialized kernel comes: returns at once, still generic
    assert kernel.tier == "generic"


@needs_specialize
def test_a_wrong_specialization_is_a_usage_error_naming_the_allowed_set():
    # Refused while parsing the options, before any compile.
    with pytest.raises(tmemjit.Error) as error:
        tmemjit.compile_kernel(source("tier_wrong"), "tier_wrong", {"acc_load": load_spec(32)},
                               specialization="sometimes")
    assert error.value.code == "usage"
    assert "sometimes" in error.value.message
    assert "eager, lazy, generic" in error.value.message


@needs_specialize
def test_lazy_serves_the_cached_generic_tier_then_switches_to_the_specialized_kernel():
    entry = "tier_lazy"
    generic = tmemjit.compile_kernel(source(entry), entry, {"acc_load": load_spec(32)},
                                     specialization="generic")
    assert generic.tier == "generic"
    # Another layout of the same signature: the generic tier answers from memory at once, while
    # the specialized kernel compiles in the background.
    kernel = tmemjit.compile_kernel(source(entry), entry, {"acc_load": load_spec(16)},
                                    specialization="lazy")
    report = kernel.report
    assert report.tier == "generic" and report.tier_reason == ""
    assert report.cache == "memory" and report.compile_ms == 0
    assert kernel.tier in ("generic", "specialized")  # the background compile may have landed
    kernel.wait_specialized()
    assert kernel.tier == "specialized"
    assert kernel.report.tier == "generic", "the report keeps the tier the call returned"
    # The switch put the specialized kernel in the cache: an eager call is a hit.
    eager = tmemjit.compile_kernel(source(entry), entry, {"acc_load": load_spec(16)})
    assert eager.report.cache == "memory" and eager.tier == "specialized"


@needs_specialize
def test_a_plan_the_generic_tier_cannot_express_falls_back_to_the_specialized_kernel():
    kernel = tmemjit.compile_kernel(source("tier_split"), "tier_split",
                                    {"acc_load": seed_specs.split(store=False)},
                                    specialization="generic")
    assert kernel.tier == "specialized" and kernel.report.tier == "specialized"
    assert "16x32bx2" in kernel.report.tier_reason
    assert "acc_load" in kernel.report.tier_reason
    kernel.wait_specialized()  # already specialized: returns at once
    assert kernel.tier == "specialized"


@needs_specialize
def test_warmup_kernel_builds_the_tier_lazy_uses():
    tmemjit.warmup_kernel(source("tier_warm"), "tier_warm", {"acc_load": load_spec(32)})
    kernel = tmemjit.compile_kernel(source("tier_warm"), "tier_warm",
                                    {"acc_load": load_spec(16)}, specialization="lazy")
    assert kernel.report.tier == "generic"
    kernel.wait_specialized()
    assert kernel.tier == "specialized"


@needs_specialize
def test_warmup_kernel_refuses_a_plan_without_a_generic_tier():
    split = {"acc_load": seed_specs.split(store=False)}
    with pytest.raises(tmemjit.Error) as caught:
        tmemjit.warmup_kernel(source("tier_warm_split"), "tier_warm_split", split)
    assert caught.value.code == "usage"
    assert "16x32bx2" in caught.value.message


@needs_specialize
def test_binding_hands_a_launcher_of_ones_own_each_layouts_descriptor():
    # Kernel.binding (docs/specialization.md, "Launching with your own launcher"): the generic
    # tier's one cubin, and each layout's descriptor to write into the module the user loads.
    # The entry of test_generic_returns_the_generic_tier: its generic tier answers from memory.
    entry = "tier_generic"
    kernels = [tmemjit.compile_kernel(source(entry), entry, {"acc_load": load_spec(budget)},
                                      specialization="generic") for budget in (32, 16)]
    bindings = [kernel.binding() for kernel in kernels]
    for kernel, binding in zip(kernels, bindings):
        assert binding.tier == "generic" and binding.entry == entry == kernel.name
        assert binding.cubin == kernel.cubin
        assert [symbol for symbol, _ in binding.globals] == ["tmemjit_desc_acc_load"]
        assert "tmemjit_desc_acc_load" in kernel.ptx
        assert len(binding.globals[0][1]) > 0 and len(binding.globals[0][1]) % 4 == 0
    assert bindings[0].cubin == bindings[1].cubin, "one generic kernel serves both layouts"
    assert bindings[0].globals != bindings[1].globals, "each layout has its own descriptor"
    assert "generic" in repr(bindings[0]) and "1 globals" in repr(bindings[0])
    # A specialized kernel has nothing to write.
    split = tmemjit.compile_kernel(source("tier_split"), "tier_split",
                                   {"acc_load": seed_specs.split(store=False)},
                                   specialization="generic")
    assert split.binding().tier == "specialized" and split.binding().globals == []

    # prepare() loads the module and writes the descriptor: an answer everywhere, never a crash.
    try:
        prepared = kernels[0].prepare()
    except tmemjit.Error as error:
        # No driver, or a GPU that cannot run sm_100a.
        assert error.code in ("driver", "target"), error
        if error.code == "driver":  # "no CUDA driver: libcuda.so.1 ...", or the call that failed
            assert error.message.startswith(("no CUDA driver", "cu")), error.message
    else:
        assert prepared.tier == "generic" and prepared.function != 0 and prepared.kernel != 0
    for grid, error_type in (((), tmemjit.Error), (0, tmemjit.Error), ("1", TypeError)):
        with pytest.raises(error_type):
            kernels[0].prepare(grid)
        with pytest.raises(error_type):
            kernels[0].binding(grid)
