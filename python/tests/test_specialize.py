"""device_function and compile_kernel (docs/design.md §Specialization): the transfer inside the user's own kernel."""

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
def test_compile_kernel_names_the_users_file_in_the_compilers_messages():
    with pytest.raises(tmemjit.Error) as error:
        tmemjit.compile_kernel(CUDA_KERNEL.replace("acc_store(", "acc_stor("), "epilogue",
                               {"acc_store": seed_specs.layout_b()}, path="kernels/epilogue.cu")
    assert "kernels/epilogue.cu(" in error.value.details
    assert "kernel.cu(" not in error.value.details
    with pytest.raises(TypeError):
        tmemjit.compile_kernel(CUDA_KERNEL, "epilogue", {"acc_store": seed_specs.layout_b()},
                               path=3)


@needs_specialize
def test_a_repeated_call_is_answered_by_what_the_arguments_are_now():
    # compile_kernel remembers a few calls by their objects (python/src/call_memo.h), so a repeat
    # skips the checks and conversions; what changed since must still count, and a bad call is
    # never remembered.
    tmemjit._tmemjit._forget_calls()
    store, load = seed_specs.layout_b(), seed_specs.layout_b(store=False)
    transfers = {"acc_store": store}
    first = tmemjit.compile_kernel(CUDA_KERNEL, "epilogue", transfers)
    again = tmemjit.compile_kernel(CUDA_KERNEL, "epilogue", transfers)
    assert again.report.cache == "memory" and again.ptx == first.ptx
    # The same text read again (another str object) is the same call.
    text = "".join(list(CUDA_KERNEL))
    assert text is not CUDA_KERNEL
    assert tmemjit.compile_kernel(text, "epilogue", transfers).report.cache == "memory"
    # The dict mutated in place: another transfer, another kernel.
    transfers["acc_load"] = load
    other = tmemjit.compile_kernel(CUDA_KERNEL, "epilogue", transfers)
    assert other.report.cache == "miss" and other.report.key != first.report.key
    assert any("acc_load" in warning for warning in other.report.warnings)
    # An option list mutated in place reaches the compiler.
    options = []
    tmemjit.compile_kernel(CUDA_KERNEL, "epilogue", transfers, nvrtc_options=options)
    options.append("--no-such-option")
    with pytest.raises(tmemjit.Error) as error:
        tmemjit.compile_kernel(CUDA_KERNEL, "epilogue", transfers, nvrtc_options=options)
    assert error.value.code == "usage" and "--no-such-option" in error.value.message
    # A bad call raises every time: it was never remembered.
    for _ in range(2):
        with pytest.raises(TypeError):
            tmemjit.compile_kernel(CUDA_KERNEL, "epilogue", {"acc_store": "not a spec"})
    # A frozen Transfer changed behind the dataclass's back (object.__setattr__): the memo
    # compares its attributes too, so the call compiles the kernel it now asks for (issue 39 N18).
    transfer = tmemjit.Transfer(store)
    waited = tmemjit.compile_kernel(CUDA_KERNEL, "epilogue", {"acc_store": transfer})
    assert tmemjit.compile_kernel(CUDA_KERNEL, "epilogue",
                                  {"acc_store": transfer}).report.cache == "memory"
    object.__setattr__(transfer, "wait", False)
    changed = tmemjit.compile_kernel(CUDA_KERNEL, "epilogue", {"acc_store": transfer})
    assert changed.report.key != waited.report.key


@needs_specialize
def test_compile_kernel_report_says_where_the_kernel_came_from():
    # An autotuner's bookkeeping: which call compiled, what the front end cost and what was reused.
    # Renamed per run so no earlier test's cache entry answers.
    source = CUDA_KERNEL.replace("epilogue", "report_probe")
    tile = ('tmem_datapath_layout("B",64,128)',
            "tensor((64,128), S[(64,2,64):(1@tid_in_wg,64@tid_in_wg,1)], f32)")
    widest = tmemjit.select("st", "warpgroup", *tile).spec
    tmemjit.clear_cache(True)
    first = tmemjit.compile_kernel(source, "report_probe", {"acc_store": widest})
    report = first.report
    assert isinstance(report, tmemjit.CompileReport)
    assert report.cache == "miss" and report.front_end == "miss"
    assert report.compile_ms > 0 and report.front_end_ms > 0 and report.backend == "nvrtc"
    assert report.entry == "report_probe" and len(report.key) == 32 and report.warnings == []
    plan = tmemjit.check(widest)
    assert report.transfers == [{"name": "acc_store", "op": plan.op,
                                 "regs_per_thread": plan.regs_per_thread,
                                 "instructions_per_warp": plan.instructions_per_warp,
                                 "alloc_columns": plan.alloc_columns}]

    # Deprecated for one release (CHANGELOG.md): reads 0 and says so.
    with pytest.warns(DeprecationWarning, match="link_ms is always 0"):
        assert report.link_ms == 0

    hit = tmemjit.compile_kernel(source, "report_probe", {"acc_store": widest})
    assert hit.report.cache == "memory" and hit.report.compile_ms == 0
    assert hit.report.key == report.key and hit.cubin == first.cubin
    assert first.report.cache == "miss", "each call's object keeps its own report"

    # Another form for the same tile: a compile of its own. The kernel includes nothing before
    # the transfers, so there were no headers to precompile, and the report says so.
    narrow = tmemjit.select("st", "warpgroup", *tile, register_budget=32).spec
    assert narrow.op != widest.op and ".x32." in narrow.op
    fresh = tmemjit.compile_kernel(source, "report_probe", {"acc_store": narrow}).report
    assert fresh.cache == "miss" and fresh.front_end == "miss"
    assert fresh.headers == "none: no header before the transfers"
    assert fresh.key != report.key
    assert fresh.code.local_bytes == 0 and fresh.code.instructions > 0
    assert "miss" in repr(fresh) and "warnings" in repr(fresh)

    # With a header before the transfers, a new layout reuses its parse, and options reach their
    # compiler.
    with_header = "#include <cuda_bf16.h>\n" + source.replace("report_probe", "report_probe_h")
    options = dict(nvrtc_options=["-std=c++20", "--device-int128"],
                   ptx_options=["-maxrregcount=128"])
    created = tmemjit.compile_kernel(with_header, "report_probe_h", {"acc_store": widest},
                                     **options).report
    tmemjit.wait_background_compiles()  # the header's parse, made for later layouts
    reused = tmemjit.compile_kernel(with_header, "report_probe_h", {"acc_store": narrow},
                                    **options).report
    assert created.headers.startswith("deferred") and created.include_files > 0
    assert reused.headers == "reused" and reused.front_end == "memory"
    with pytest.raises(tmemjit.Error) as refused:
        tmemjit.compile_kernel(with_header, "report_probe_h", {"acc_store": narrow},
                               ptx_options=["--no-such-option"])
    assert refused.value.code == "usage" and "--no-such-option" in refused.value.message


@needs_specialize
def test_precompile_names_the_headers_of_a_header_only_library(tmp_path):
    # As CompileKernel.PrecompileNamesTheHeadersOfAHeaderOnlyLibrary: the transfers come through
    # the library's own header, with CUDA's bf16 header. Without precompile= every layout parses
    # every header again, and the report says so with the fix; naming the header that does not
    # reach the transfers lets a new layout reuse its parse.
    (tmp_path / "epi_lib.h").write_text("#include <cuda_bf16.h>\n#include <tmemjit/transfers.cuh>\n")
    entry = "precompile_probe"
    source = CUDA_KERNEL.replace("#include <tmemjit/transfers.cuh>",
                                 "#include <epi_lib.h>").replace("epilogue", entry)
    include = [f"-I{tmp_path}"]
    tile = ('tmem_datapath_layout("B",64,128)',
            "tensor((64,128), S[(64,2,64):(1@tid_in_wg,64@tid_in_wg,1)], f32)")
    widest = {"acc_store": tmemjit.select("st", "warpgroup", *tile).spec}
    narrow = {"acc_store": tmemjit.select("st", "warpgroup", *tile, register_budget=32).spec}
    off = tmemjit.compile_kernel(source, entry, widest, nvrtc_options=include).report
    # The stop goes before the library's header, the source's first line: nothing to precompile.
    assert off.headers == "none: no header before the transfers"
    assert len(off.warnings) == 1
    assert "through '#include <epi_lib.h>', so the headers included from there on" in off.warnings[0]
    assert "name the ones to parse once in CompileOptions::precompile" in off.warnings[0]

    headers = ["cuda_bf16.h"]
    created = tmemjit.compile_kernel(source, entry, widest, nvrtc_options=include,
                                     precompile=headers).report
    assert created.cache == "miss" and created.key != off.key
    assert created.headers.startswith("deferred") and created.warnings == []
    tmemjit.wait_background_compiles()
    reused = tmemjit.compile_kernel(source, entry, narrow, nvrtc_options=include,
                                    precompile=tuple(headers)).report
    assert reused.headers == "reused" and reused.front_end == "memory"
    # Calls remembered by their objects (call_memo.h) differ by precompile= too: the same objects
    # but for it are the kernel without precompiled headers, not the last one remembered.
    again = tmemjit.compile_kernel(source, entry, widest, nvrtc_options=include,
                                   precompile=headers).report
    assert again.cache == "memory" and again.key == created.key
    without = tmemjit.compile_kernel(source, entry, widest, nvrtc_options=include).report
    assert without.cache == "memory" and without.key == off.key

    # A name is what #include <...> takes; a header that reaches the transfers would hold a layout.
    for bad in ("<cuda_bf16.h>", '"cuda_bf16.h"', ""):
        with pytest.raises(tmemjit.Error) as error:
            tmemjit.compile_kernel(source, entry, widest, nvrtc_options=include, precompile=[bad])
        assert error.value.code == "usage" and "is not a header name" in error.value.message, bad
    with pytest.raises(tmemjit.Error) as error:
        tmemjit.compile_kernel(source, entry, narrow, nvrtc_options=include,
                               precompile=["epi_lib.h"])
    assert error.value.code == "usage"
    assert "a header named there includes <tmemjit/transfers.cuh>" in error.value.message


@needs_specialize
def test_the_nvcc_front_end_is_its_own_kernel():
    # front_end="nvcc" (docs/specialization.md, "nvcc as the front end"): the toolkit's nvcc
    # compiles the source, a separate cache entry from NVRTC's, remembered calls told apart.
    entry = "nvcc_probe"
    source = CUDA_KERNEL.replace("epilogue", entry)
    transfers = {"acc_store": seed_specs.layout_b()}
    nvrtc = tmemjit.compile_kernel(source, entry, transfers).report
    nvcc = tmemjit.compile_kernel(source, entry, transfers, front_end="nvcc").report
    assert nvcc.cache == "miss" and nvcc.key != nvrtc.key
    assert nvcc.headers == "off: the nvcc front end has no in-process precompiled headers"
    assert nvcc.backend == "ptxas"
    again = tmemjit.compile_kernel(source, entry, transfers, front_end="nvcc").report
    assert again.cache == "memory" and again.key == nvcc.key
    assert tmemjit.compile_kernel(source, entry, transfers).report.key == nvrtc.key
    with pytest.raises(tmemjit.Error) as error:
        tmemjit.compile_kernel(source, entry, transfers, front_end="clang")
    assert error.value.code == "usage" and "allowed: nvrtc, nvcc" in error.value.message
    with pytest.raises(TypeError, match="front_end must be a str"):
        tmemjit.compile_kernel(source, entry, transfers, front_end=1)


@needs_specialize
def test_compile_kernel_report_holds_the_warnings():
    source = CUDA_KERNEL.replace("epilogue", "warning_probe")
    kernel = tmemjit.compile_kernel(source, "warning_probe",
                                    {"acc_store": seed_specs.layout_b(),
                                     "acc_unused": seed_specs.layout_b(store=False)},
                                    path="probe.cu")
    assert kernel.report.warnings == ["transfer 'acc_unused' is never called by probe.cu or a header it includes"]


def test_compile_transfer_leaves_the_report_to_cache_stats():
    # Its memory hit must stay under a microsecond from Python (python/bench/cache_hit_bench.py).
    assert tmemjit.compile_transfer(seed_specs.layout_b(), kind="store").report is None


@needs_specialize
def test_launch_refuses_arguments_without_a_c_type_before_touching_the_driver():
    import ctypes
    kernel = tmemjit.compile_kernel(CUDA_KERNEL, "epilogue", {"acc_store": seed_specs.layout_b()})
    address = ctypes.c_void_p(0)
    for bad, says in ((1.5, "argument 0 is a Python float, which has no C type"),
                      (7, "argument 0 is a Python int, which has no C type"),
                      (True, "argument 0 is a Python bool, which has no C type"),
                      ("in", "argument 0 (str) is neither device memory")):
        with pytest.raises(TypeError) as error:
            kernel.launch(1, 128, [bad])
        assert says in str(error.value)
    for grid, error_type in (((), tmemjit.Error), ((1, 1, 1, 1), tmemjit.Error),
                             (0, tmemjit.Error), (1.0, TypeError), ((1, "2"), TypeError)):
        with pytest.raises(error_type):
            kernel.launch(grid, 128, [address])
    with pytest.raises(TypeError):
        kernel.launch(1, 128, [address], stream="default")
    # numpy.float64 subclasses float but is typed: it gets past the type check, to the driver
    # (absent here) or the count check (the kernel takes one argument): never a launch.
    np = pytest.importorskip("numpy")
    with pytest.raises(tmemjit.Error):
        kernel.launch(1, 128, [np.float64(1.0), np.float64(1.0)])
    # A host array where device memory belongs: its 8 bytes would have passed as a pointer.
    with pytest.raises(TypeError) as error:
        kernel.launch(1, 128, [np.zeros(2, dtype=np.float32)])
    assert "argument 0 is a host array (ndarray)" in str(error.value)


@needs_specialize
def test_cta_pair_lifecycle_helpers():
    fn = tmemjit.device_function(seed_specs.layout_b(), name="acc_st", cta_group=2)
    assert "cluster_sync" in fn.source and ".cta_group::2" in fn.source
    kernel = tmemjit.compile_transfer(seed_specs.layout_b(), cta_group=2)
    assert ".cta_group::2" in kernel.ptx and ".cta_group::1" not in kernel.ptx


@needs_specialize
def test_spec_file_reads_the_device_function_options():
    import json
    fields = json.loads(seed_specs.layout_b(store=False).to_json())
    fields.update({"name": "acc_load", "wait": False, "column_argument": True, "cta_group": 1})
    f = tmemjit.spec_file(json.dumps(fields))
    assert f.name == "acc_load"
    assert f.transfer.wait is False and f.transfer.column_argument is True
    assert f.transfer.warp_argument is False and f.cta_group == 1
    assert f.keys == ("name", "wait", "column_argument", "cta_group")
    assert f.transfer.spec == seed_specs.layout_b(store=False)
    bare = tmemjit.spec_file(seed_specs.layout_b(store=False).to_json())
    assert bare.name is None and bare.transfer.wait is True and bare.keys == ()
    fields["colour"] = "red"
    with pytest.raises(tmemjit.Error) as caught:
        tmemjit.spec_file(json.dumps(fields))
    assert caught.value.code == "parse" and "colour" in caught.value.message


@needs_specialize
def test_a_wrong_type_names_the_argument_and_the_type_it_needs():
    # nanobind would say only "incompatible function arguments" (issue 39 N15).
    spec = {"acc_store": seed_specs.layout_b()}
    for options, words in (({"target": 90}, "target must be a str, not int"),
                           ({"specialization": None}, "specialization must be a str"),
                           ({"cta_group": "2"}, "cta_group must be an int, not str"),
                           ({"cta_group": True}, "cta_group must be an int, not bool"),
                           ({"opt_level": 2.0}, "opt_level must be an int, not float"),
                           ({"line_info": 1}, "line_info must be a bool, not int"),
                           ({"nvrtc_options": ["-std=c++17", 3]}, "nvrtc_options[1] must be a str"),
                           ({"ptx_options": 5}, "ptx_options must be a sequence of str, not int"),
                           ({"precompile": "cuda_bf16.h"},
                            "precompile must be a sequence of str, not str"),
                           ({"precompile": ["cuda_bf16.h", None]},
                            "precompile[1] must be a str, not NoneType")):
        with pytest.raises(TypeError) as error:
            tmemjit.compile_kernel(CUDA_KERNEL, "epilogue", spec, **options)
        assert words in str(error.value), options
    with pytest.raises(tmemjit.Error) as error:
        tmemjit.compile_kernel(CUDA_KERNEL, "epilogue", spec, opt_level=9)
    assert error.value.code == "usage" and "opt_level 9" in error.value.message
    with pytest.raises(TypeError) as error:
        tmemjit.set_warning_handler(5)
    assert "handler must be a callable" in str(error.value)
