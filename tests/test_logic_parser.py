"""The parser: Spot's precedence, round trips, errors with columns, fuzzing."""
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regula.logic.formula import Formula
from conftest import needs_spot_platform
from regula.logic.parser import FormulaError, parse
from regula.logic.randomized import random_formula


def full_parens(f: Formula) -> str:
    if f.op == "ap":
        return f.name
    if f.op in ("true", "false"):
        return f.op
    sym = {"not": "!", "X": "X", "Xs": "X[!]", "F": "F", "G": "G", "and": "&", "or": "|", "implies": "->",
           "equiv": "<->", "xor": "xor", "U": "U", "R": "R", "W": "W", "M": "M"}[f.op]
    if len(f.args) == 1:
        return f"{sym}({full_parens(f.args[0])})"
    return f"({full_parens(f.args[0])}) {sym} ({full_parens(f.args[1])})"


def test_printer_round_trips():
    rng = random.Random(1)
    for _ in range(2000):
        f = random_formula(rng, depth=5)
        assert parse(str(f)) is f
        assert parse(full_parens(f)) is f


@needs_spot_platform
def test_precedence_matches_spot():
    import spot
    rng = random.Random(2)
    for _ in range(1000):
        f = random_formula(rng, depth=5)
        # our minimal-parentheses text means to Spot what our tree means
        assert spot.formula(str(f)) == spot.formula(full_parens(f)), str(f)
        # and Spot's own text parses to a tree Spot agrees with
        text = str(spot.formula(full_parens(f)))
        assert spot.formula(full_parens(parse(text))) == spot.formula(text), text


@pytest.mark.parametrize("text,column,message", [
    ("G(s -> ", 6, "formula ends too early"),
    ("a U", 3, "formula ends too early"),
    ("has_Wood", 0, "'has_Wood' is not an atom"),
    ("a $ b", 2, "unexpected character '$'"),
    ("", 0, "empty formula"),
    ("U a", 0, "operator 'U' needs a formula on its left"),
    ("(a", 2, "missing ')'"),
    ("a b", 2, "unexpected 'b'"),
])
def test_errors_point_at_the_column(text, column, message):
    with pytest.raises(FormulaError) as err:
        parse(text)
    assert err.value.column == column and err.value.reason.startswith(message)
    assert str(err.value).endswith("\n  " + " " * column + "^")


def test_glued_prefixes_like_spot():
    assert parse("GFa") is parse("G F a")
    assert parse("XX[!]a") is parse("X X[!] a")


@settings(max_examples=1500, deadline=None)
@given(st.text(alphabet="abXFGURWM!&|()-<>[] x_o01\n", max_size=30) | st.text(max_size=20))
def test_fuzz_only_the_parsers_own_error(text):
    try:
        f = parse(text)
    except FormulaError:
        return
    assert parse(str(f)) is f
