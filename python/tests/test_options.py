"""tmemjit.CompileOptions and the compile options of compile_kernel, warmup_kernel,
compile_transfer and warmup (issue 42 item 5): first what the keyword arguments do, pinned before
CompileOptions came; then the value; then options= in each function and the call memo keyed on the
options' value.
"""

import pytest

import seed_specs
import tmemjit
from test_specialize import CUDA_KERNEL, needs_specialize


def kernel_source(entry):
    """test_specialize.py's epilogue, renamed per test so that no other test's cache entry answers."""
    return CUDA_KERNEL.replace("void epilogue(", "void " + entry + "(")


def unsigned_kernel_source(entry):
    """The same kernel storing uint32_t registers (the generic tier's stored type for layout B)."""
    return kernel_source(entry).replace("float regs[", "uint32_t regs[").replace(
        "regs[i] = in[", "regs[i] = (uint32_t)in[")


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
    source = unsigned_kernel_source(entry)
    transfers = {"acc_store": seed_specs.layout_b()}
    tmemjit.warmup_kernel(source, entry, transfers, nvrtc_options=["-DWARM=1"], opt_level=2)
    warm = tmemjit.compile_kernel(source, entry, transfers, specialization="generic",
                                  nvrtc_options=["-DWARM=1"], opt_level=2)
    assert warm.report.cache == "memory" and warm.tier == "generic"
    cold = tmemjit.compile_kernel(source, entry, transfers, specialization="generic")
    assert cold.report.cache == "miss"
    with pytest.raises(TypeError):
        tmemjit.warmup_kernel(source, entry, transfers, colour="red")


# ---- tmemjit.CompileOptions, the value --------------------------------------------------------

DEFAULTS = {"target": "sm_100a", "backend": "auto", "opt_level": 3, "line_info": False,
            "tmem_access_check": False, "cta_group": 1, "keep_dir": "", "nvrtc_options": (),
            "ptx_options": (), "extra_options": (), "precompile": (), "front_end": "nvrtc",
            "specialization": "eager"}

# A value other than the default for every field.
CHANGES = {"target": "sm_90", "backend": "ptxas", "opt_level": 0, "line_info": True,
           "tmem_access_check": True, "cta_group": 2, "keep_dir": "/tmp/kept",
           "nvrtc_options": ("-std=c++20", "-DX=1"), "ptx_options": ("-maxrregcount=64",),
           "extra_options": ("--verbose",), "precompile": ("cuda_bf16.h",), "front_end": "nvcc",
           "specialization": "lazy"}

# A value of the wrong type for every field, and what the TypeError says.
WRONG_TYPES = {"target": (90, "target must be a str, not int"),
               "backend": (None, "backend must be a str, not NoneType"),
               "opt_level": (2.0, "opt_level must be an int, not float"),
               "line_info": (1, "line_info must be a bool, not int"),
               "tmem_access_check": ("yes", "tmem_access_check must be a bool, not str"),
               "cta_group": (True, "cta_group must be an int, not bool"),
               "keep_dir": (b"/tmp", "keep_dir must be a str, not bytes"),
               "nvrtc_options": ("-std=c++20", "nvrtc_options must be a sequence of str, not str"),
               "ptx_options": (5, "ptx_options must be a sequence of str, not int"),
               "extra_options": (["-O1", 3], "extra_options[1] must be a str, not int"),
               "precompile": (["a.h", None], "precompile[1] must be a str, not NoneType"),
               "front_end": (1, "front_end must be a str, not int"),
               "specialization": (None, "specialization must be a str, not NoneType")}

# Values of the right type that no field takes: (field, value, Error code, what the message says).
WRONG_VALUES = [("target", "sm_80", "target", "unknown target 'sm_80'; targets: sm_100a"),
                ("target", "sm_90a", "target", "the emulation target is sm_90"),
                ("backend", "gcc", "usage", "unknown backend 'gcc'; allowed: nvjitlink"),
                ("opt_level", -1, "usage", "opt_level -1; allowed: 0, 1, 2, 3"),
                ("opt_level", 4, "usage", "opt_level 4; allowed: 0, 1, 2, 3"),
                ("opt_level", 2 ** 64, "usage", f"opt_level {2 ** 64}; allowed"),
                ("cta_group", 0, "usage", "cta_group 0; allowed: 1 (one CTA), 2 (a CTA pair)"),
                ("cta_group", 3, "usage", "cta_group 3; allowed: 1 (one CTA), 2 (a CTA pair)"),
                ("front_end", "clang", "usage", "unknown front end 'clang'; allowed: nvrtc, nvcc"),
                ("specialization", "later", "usage",
                 "unknown specialization 'later'; allowed: eager, lazy, generic")]


def test_the_tables_cover_every_field():
    fields = list(tmemjit.CompileOptions().to_dict())
    assert fields == list(DEFAULTS) and set(CHANGES) == set(fields)
    assert set(WRONG_TYPES) == set(fields)


def test_the_defaults_are_the_keyword_defaults():
    options = tmemjit.CompileOptions()
    assert options.to_dict() == DEFAULTS
    for name, value in DEFAULTS.items():
        assert getattr(options, name) == value, name
    assert repr(options) == "CompileOptions()"


@pytest.mark.parametrize("name", list(CHANGES))
def test_each_field_is_set_read_and_compared(name):
    value = CHANGES[name]
    options = tmemjit.CompileOptions(**{name: value})
    assert getattr(options, name) == value
    assert options != tmemjit.CompileOptions()
    assert options == tmemjit.CompileOptions(**{name: value})
    assert hash(options) == hash(tmemjit.CompileOptions(**{name: value}))
    assert repr(options) == f"CompileOptions({name}={value!r})"


def test_round_trips():
    import copy
    import pickle
    options = tmemjit.CompileOptions(**CHANGES)
    assert eval(repr(options), {"CompileOptions": tmemjit.CompileOptions}) == options
    assert tmemjit.CompileOptions(**options.to_dict()) == options
    assert pickle.loads(pickle.dumps(options)) == options
    assert copy.deepcopy(options) == options and copy.copy(options) == options
    assert options.to_dict() == CHANGES


def test_equal_values_are_equal_however_spelled():
    spelled = [tmemjit.CompileOptions(nvrtc_options=["-DX=1", "-DY=2"], opt_level=2),
               tmemjit.CompileOptions(opt_level=2, nvrtc_options=("-DX=1", "-DY=2")),
               tmemjit.CompileOptions(nvrtc_options=(o for o in ["-DX=1", "-DY=2"]), opt_level=2),
               tmemjit.CompileOptions().replace(opt_level=2, nvrtc_options=["-DX=1", "-DY=2"])]
    assert all(options == spelled[0] for options in spelled)
    assert len({hash(options) for options in spelled}) == 1 and len(set(spelled)) == 1
    assert spelled[0] != tmemjit.CompileOptions(nvrtc_options=["-DY=2", "-DX=1"], opt_level=2)
    assert spelled[0] != "CompileOptions(opt_level=2)" and spelled[0] != spelled[0].to_dict()
    # The list given is copied: changing it later changes nothing.
    given = ["-DX=1"]
    options = tmemjit.CompileOptions(ptx_options=given)
    given.append("-DY=2")
    assert options.ptx_options == ("-DX=1",)


def test_replace_returns_a_changed_copy():
    base = tmemjit.CompileOptions(target="sm_103a", nvrtc_options=["-std=c++20"])
    changed = base.replace(opt_level=1, target="sm_100a")
    assert (changed.opt_level, changed.target, changed.nvrtc_options) == (1, "sm_100a",
                                                                          ("-std=c++20",))
    assert (base.opt_level, base.target) == (3, "sm_103a")
    assert base.replace() == base and base.replace() is not base
    assert base.__replace__(opt_level=1, target="sm_100a") == changed  # copy.replace, Python 3.13
    with pytest.raises(tmemjit.Error) as error:
        base.replace(opt_level=7)
    assert error.value.code == "usage" and "opt_level 7" in error.value.message
    with pytest.raises(TypeError, match="CompileOptions.replace\\(\\) got an unexpected keyword "
                                        "argument 'colour'"):
        base.replace(colour="red")


def test_it_is_immutable():
    options = tmemjit.CompileOptions()
    for name in DEFAULTS:
        with pytest.raises(AttributeError):
            setattr(options, name, CHANGES[name])
    with pytest.raises(AttributeError):
        options.colour = "red"
    assert options == tmemjit.CompileOptions()


@pytest.mark.parametrize("name", list(WRONG_TYPES))
def test_a_wrong_type_names_the_field_and_the_type_it_needs(name):
    value, words = WRONG_TYPES[name]
    with pytest.raises(TypeError) as error:
        tmemjit.CompileOptions(**{name: value})
    assert words in str(error.value)
    with pytest.raises(TypeError) as error:
        tmemjit.CompileOptions().replace(**{name: value})
    assert words in str(error.value)


@pytest.mark.parametrize("name,value,code,words", WRONG_VALUES,
                         ids=[f"{name}={value}" for name, value, _, _ in WRONG_VALUES])
def test_a_wrong_value_names_the_field_the_value_and_the_allowed_set(name, value, code, words):
    with pytest.raises(tmemjit.Error) as error:
        tmemjit.CompileOptions(**{name: value})
    assert error.value.code == code and words in error.value.message


def test_any_iterable_of_str_is_a_list_field():
    assert tmemjit.CompileOptions(precompile=iter(["a.h", "b.h"])).precompile == ("a.h", "b.h")
    assert tmemjit.CompileOptions(precompile={"a.h": 1}).precompile == ("a.h",)
    with pytest.raises(TypeError, match=r"precompile\[2\] must be a str, not int"):
        tmemjit.CompileOptions(precompile=(h for h in ["a.h", "b.h", 3]))


def test_unknown_fields_and_positional_arguments_are_type_errors():
    with pytest.raises(TypeError) as error:
        tmemjit.CompileOptions(colour="red")
    assert "CompileOptions() got an unexpected keyword argument 'colour'" in str(error.value)
    assert "fields: target, backend, opt_level" in str(error.value)
    with pytest.raises(TypeError):
        tmemjit.CompileOptions("sm_100a")


# ---- options= in compile_kernel, warmup_kernel, compile_transfer and warmup ---------------------

@pytest.mark.parametrize("change,ptx_shows", TRANSFER_CHANGES,
                         ids=[next(iter(c)) for c, _ in TRANSFER_CHANGES])
def test_compile_transfer_options_are_its_keywords(change, ptx_shows):
    spec = seed_specs.layout_b(store=False)
    by_keywords = tmemjit.compile_transfer(spec, kind="load", **change)
    options = tmemjit.CompileOptions(**change)
    assert misses(lambda: tmemjit.compile_transfer(spec, kind="load", options=options)) == 0
    by_value = tmemjit.compile_transfer(spec, kind="load", options=options)
    assert by_value.cubin == by_keywords.cubin and by_value.ptx == by_keywords.ptx


def test_warmup_takes_options():
    specs = [seed_specs.pack(), seed_specs.pack(store=False)]
    options = tmemjit.CompileOptions(target="sm_103a", opt_level=1)
    tmemjit.warmup(specs, kind="store", options=options)
    for spec in specs:
        assert misses(lambda: tmemjit.compile_transfer(spec, kind="store", target="sm_103a",
                                                       opt_level=1)) == 0
        assert misses(lambda: tmemjit.compile_transfer(spec, kind="store", options=options)) == 0


def test_compile_transfer_and_warmup_take_every_field():
    # They took a few of the fields as keywords; the rest reach the compiler as in C++.
    spec = seed_specs.layout_b()
    with pytest.raises(tmemjit.Error) as error:
        tmemjit.compile_transfer(spec, ptx_options=["--no-such-option"])
    assert error.value.code == "toolchain" and "no-such-option" in error.value.message
    tmemjit.warmup([spec], kind="store", opt_level=1, line_info=True)
    assert misses(lambda: tmemjit.compile_transfer(spec, kind="store", opt_level=1,
                                                   line_info=True)) == 0


@needs_specialize
def test_compile_kernel_options_are_its_keywords():
    entry = "options_value"
    source, transfers = kernel_source(entry), {"acc_store": seed_specs.layout_b()}
    keys = {tmemjit.compile_kernel(source, entry, transfers).report.key}
    # tmem_access_check came with CompileOptions: compile_kernel now takes it too.
    for change in KERNEL_CHANGES + [{"tmem_access_check": True}]:
        by_keywords = tmemjit.compile_kernel(source, entry, transfers, **change).report
        assert by_keywords.key not in keys, change
        keys.add(by_keywords.key)
        by_value = tmemjit.compile_kernel(source, entry, transfers,
                                          options=tmemjit.CompileOptions(**change)).report
        assert by_value.cache == "memory" and by_value.key == by_keywords.key, change


@needs_specialize
def test_warmup_kernel_takes_options():
    entry = "options_warm_value"
    source = unsigned_kernel_source(entry)
    transfers = {"acc_store": seed_specs.layout_b()}
    # Its own specialization (generic) stands in for the one the options hold.
    options = tmemjit.CompileOptions(nvrtc_options=["-DWARM=2"], specialization="eager")
    tmemjit.warmup_kernel(source, entry, transfers, options=options)
    warm = tmemjit.compile_kernel(source, entry, transfers,
                                  options=options.replace(specialization="generic"))
    assert warm.report.cache == "memory" and warm.tier == "generic"


@needs_specialize
@pytest.mark.parametrize("function", ["compile_kernel", "warmup_kernel", "compile_transfer",
                                      "warmup"])
def test_options_and_keywords_together_are_a_type_error(function):
    spec = seed_specs.layout_b()
    call = {"compile_kernel": lambda **kw: tmemjit.compile_kernel(
                kernel_source("options_both"), "options_both", {"acc_store": spec}, **kw),
            "warmup_kernel": lambda **kw: tmemjit.warmup_kernel(
                kernel_source("options_both"), "options_both", {"acc_store": spec}, **kw),
            "compile_transfer": lambda **kw: tmemjit.compile_transfer(spec, **kw),
            "warmup": lambda **kw: tmemjit.warmup([spec], **kw)}[function]
    options = tmemjit.CompileOptions(opt_level=2)
    # Even an equal value: one call, one place for its options.
    for keywords in ({"opt_level": 2}, {"opt_level": 1}, {"target": "sm_100a"}):
        with pytest.raises(TypeError) as error:
            call(options=options, **keywords)
        name = next(iter(keywords))
        assert (f"{function}() takes the compile options as options= or as keyword arguments, "
                f"not both: got options= and {name}=") in str(error.value)
        assert f"options.replace({name}=...)" in str(error.value)
    with pytest.raises(TypeError) as error:
        call(options={"opt_level": 2})
    assert "options must be a tmemjit.CompileOptions or None, not dict" in str(error.value)
    with pytest.raises(TypeError) as error:
        call(colour="red")
    assert f"{function}() got an unexpected keyword argument 'colour'" in str(error.value)
    with pytest.raises(tmemjit.Error) as error:
        call(opt_level=7)
    assert error.value.code == "usage" and "opt_level 7; allowed" in error.value.message
    call(options=None, opt_level=2)  # None is no options: the keywords stand


def test_the_functions_list_the_fields_as_their_keywords():
    import inspect
    for function in (tmemjit.compile_kernel, tmemjit.warmup_kernel):
        parameters = inspect.signature(function).parameters
        assert parameters["options"].default is None
        assert {name: parameters[name].default for name in DEFAULTS} == DEFAULTS
        assert not any(p.kind is p.VAR_KEYWORD for p in parameters.values())
    for function in (tmemjit.compile_transfer, tmemjit.warmup):
        assert ("kind: str = 'roundtrip', options: CompileOptions | None = None, "
                "target: str = 'sm_100a', backend: str = 'auto', opt_level: int = 3"
                in function.__doc__)


# ---- the call memo (python/src/call_memo.h), keyed on the options' value ----------------------

@needs_specialize
def test_equal_options_are_a_memo_hit_and_a_changed_field_a_miss(tmp_path):
    entry = "options_memo"
    source, transfers = kernel_source(entry), {"acc_store": seed_specs.layout_b()}
    options = tmemjit.CompileOptions(opt_level=2, ptx_options=["-maxrregcount=128"])
    tmemjit._tmemjit._forget_calls()

    def recalled(**arguments):
        before = tmemjit._tmemjit._recalled_calls()
        report = tmemjit.compile_kernel(source, entry, transfers, **arguments).report
        return tmemjit._tmemjit._recalled_calls() - before, report

    hits, first = recalled(options=options)
    assert hits == 0 and first.cache == "miss"
    # The same value, however spelled: the same object, an equal one, or its fields as keywords.
    rebuilt = tmemjit.CompileOptions().replace(opt_level=2, ptx_options=("-maxrregcount=128",))
    for spelling in ({"options": options},
                     {"options": tmemjit.CompileOptions(**options.to_dict())},
                     {"options": rebuilt},
                     {"opt_level": 2, "ptx_options": ["-maxrregcount=128"]},
                     {"ptx_options": ("-maxrregcount=128",), "opt_level": 2}):
        hits, report = recalled(**spelling)
        assert hits == 1 and report.cache == "memory" and report.key == first.key, spelling
    # A changed field is another call; the compile cache answers where the field is not keyed.
    for change, same_key in (({"opt_level": 3}, False), ({"ptx_options": ()}, False),
                             ({"keep_dir": str(tmp_path)}, True)):
        hits, report = recalled(options=options.replace(**change))
        assert hits == 0 and (report.key == first.key) == same_key, change
        hits, _ = recalled(options=options.replace(**change))
        assert hits == 1, change
    # The default options, given or not, are one value too.
    recalled()
    assert recalled()[0] == 1 and recalled(options=tmemjit.CompileOptions())[0] == 1
    # Other arguments still count: a mutated transfers dict, another language or path.
    transfers["acc_load"] = seed_specs.layout_b(store=False)
    assert recalled(options=options)[0] == 0
    assert recalled(options=options, path="probe.cu")[0] == 0
