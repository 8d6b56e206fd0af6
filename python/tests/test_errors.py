"""Errors: every library failure is tmemjit.Error with a code; wrong types are TypeError; hostile
input never crashes the interpreter."""

import random

import pytest

import seed_specs
import tmemjit


def error_of(call):
    with pytest.raises(tmemjit.Error) as caught:
        call()
    return caught.value


def test_error_attributes():
    error = error_of(lambda: tmemjit.View.parse("tensor((4,"))
    assert isinstance(error, Exception)
    assert error.code == "parse"
    assert error.message.startswith("at column") and str(error) == error.message
    assert isinstance(error.details, str)


@pytest.mark.parametrize("code, call", [
    ("parse", lambda: tmemjit.TransferSpec.from_json("{")),
    ("parse", lambda: tmemjit.TransferSpec(op="tcgen05.st.sync.aligned.32x32b.x64.b32",
                                           scope="wg", tmem=seed_specs.LAYOUT_B_TMEM,
                                           regs=seed_specs.LAYOUT_B_REGS)),
    ("opcode", lambda: tmemjit.Opcode.parse("tcgen05.st.sync.aligned.32x32b.x63.b32")),
    ("layout", lambda: tmemjit.View.parse('tmem_datapath_layout("Z",64,128)')),
    ("limit", lambda: tmemjit.View.parse(
        "tensor((1099511627776,1099511627776), S[(1099511627776,1099511627776):(1,1)], f32)")),
    ("rule", lambda: tmemjit.check(tmemjit.TransferSpec(
        op="tcgen05.st.sync.aligned.32x32b.x32.b32", scope="warpgroup",
        tmem=seed_specs.LAYOUT_B_TMEM, regs=seed_specs.LAYOUT_B_REGS))),
    ("usage", lambda: tmemjit.compile_transfer(seed_specs.layout_b(), kind="bogus")),
    ("target", lambda: tmemjit.compile_transfer(seed_specs.layout_b(), target="sm_80")),
    ("toolchain", lambda: tmemjit.compile_transfer(seed_specs.layout_b(), backend="ptxas",
                                                   extra_options=["--bogus"])),
])
def test_codes(code, call):
    assert error_of(call).code == code


def test_operand_presence_is_checked_at_construction():
    error = error_of(lambda: tmemjit.TransferSpec(
        op="tcgen05.st.sync.aligned.16x32bx2.x4.b32", scope="warpgroup",
        tmem=seed_specs.LAYOUT_B_TMEM, regs=seed_specs.LAYOUT_B_REGS))
    assert error.code in ("rule", "opcode", "usage", "parse")
    assert "imm" in error.message or "tmem2" in error.message


@pytest.mark.parametrize("call", [
    lambda: tmemjit.check("not a spec"),
    lambda: tmemjit.check(None),
    lambda: tmemjit.View.parse(None),
    lambda: tmemjit.View.parse(b"bytes"),
    lambda: tmemjit.TransferSpec(op=1, scope="warpgroup", tmem="x", regs="y"),
    lambda: tmemjit.TransferSpec(op="x", scope="warpgroup", tmem=3.5, regs="y"),
    lambda: tmemjit.TransferSpec(op="x", scope="warpgroup", tmem="x", regs="y", imm="8"),
    lambda: tmemjit.compile_transfer(seed_specs.layout_b(), target=100),
    lambda: tmemjit.compile_transfer(seed_specs.layout_b(), extra_options="-O3"),
    lambda: tmemjit.run_transfer(seed_specs.layout_b(), seed="1"),
    lambda: tmemjit.select("st", "warpgroup", 1, 2),
    lambda: tmemjit.compile_kernel(b"source", "entry", {}),
    lambda: tmemjit.compile_kernel("source", "entry", {"t": "not a spec"}),
])
def test_wrong_types_raise_type_error(call):
    with pytest.raises(TypeError):
        call()


def test_hostile_text_only_raises_errors():
    # Mutations of valid texts: every outcome is a value or tmemjit.Error, never a crash.
    rng = random.Random(19)
    texts = [seed_specs.LAYOUT_B_TMEM, seed_specs.LAYOUT_B_REGS, seed_specs.layout_b().to_json(),
             str(seed_specs.split())]
    alphabet = '()[],:@"{}+.-0123456789SRxTLaneCol \n\\'
    for _ in range(3000):
        text = list(rng.choice(texts))
        for _ in range(rng.randint(1, 4)):
            where = rng.randrange(len(text))
            action = rng.randrange(3)
            if action == 0:
                text[where] = rng.choice(alphabet)
            elif action == 1:
                del text[where]
            else:
                text.insert(where, rng.choice(alphabet) * rng.choice((1, 2, 40)))
        mutated = "".join(text)
        for parse in (tmemjit.View.parse, tmemjit.TransferSpec.from_json,
                      tmemjit.TransferSpec.parse):
            try:
                parse(mutated)
            except tmemjit.Error as error:
                assert error.code in ("parse", "layout", "limit", "opcode", "rule", "usage")


def test_rule_and_keyed_details():
    error = error_of(lambda: tmemjit.check(tmemjit.TransferSpec(
        op="tcgen05.st.sync.aligned.32x32b.x64.b32", scope="cta:8",
        tmem=seed_specs.LAYOUT_B_TMEM, regs=seed_specs.LAYOUT_B_REGS)))
    if not error.detail_entries:
        pytest.skip("this libtmemjit has no Error::rule() or keyed details (tmem/rule.h)")
    assert error.rule == "shape"
    assert all(isinstance(key, str) and isinstance(text, str) for key, text in error.detail_entries)
    assert any("tmem_datapath_layout" in text for _, text in error.detail_entries)
    assert error_of(lambda: tmemjit.View.parse("tensor((4,")).rule is None
