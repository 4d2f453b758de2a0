"""The parser: Spot's precedence, round trips, errors with columns, limits, fuzzing."""
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


def temporal(f: Formula) -> int:
    return (f.op in ("X", "Xs", "F", "G", "U", "R", "W", "M")) + sum(temporal(a) for a in f.args)


def test_printer_round_trips_with_any_number_of_operators():
    """No limit on operators: 2,000 random formulas, a third of them past the old 6, all parse back."""
    rng = random.Random(1)
    past_six = 0
    for _ in range(2000):
        f = random_formula(rng, depth=5)
        past_six += temporal(f) > 6
        assert parse(str(f)) is f
        assert parse(full_parens(f)) is f
    assert past_six > 500


@needs_spot_platform
def test_precedence_matches_spot():
    import spot
    rng = random.Random(2)
    for f in (random_formula(rng, depth=5) for _ in range(1000)):
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
    assert str(err.value) == f"{err.value.reason} at column {column + 1} of {text!r}"  # one line


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


@pytest.mark.parametrize("text,message", [
    ("a" * 1001, f"formula is 1,001 characters long; the limit is 1,000: '{'a' * 60}...'"),
    ("(" * 99 + "a" + ")" * 99, f"formula nests deeper than 50 operators (the limit): '{'(' * 60}...'"),
    ("!" * 188 + "a", f"formula nests deeper than 50 operators (the limit): '{'!' * 60}...'"),
    ("a" + " <-> a" * 60, "formula nests deeper than 50 operators (the limit): "
                          "'a <-> a <-> a <-> a <-> a <-> a <-> a <-> a <-> a <-> a <-> ...'"),
    ("a" + " & a" * 60, "formula nests 60 operators deep (`a & b & c` nests 2); the limit is 50: "
                        "'a & a & a & a & a & a & a & a & a & a & a & a & a & a & a & ...'"),
])
def test_text_limits_refuse_in_one_line_before_any_work(text, message):
    with pytest.raises(FormulaError) as err:
        parse(text)
    assert str(err.value) == message


def test_formulas_at_the_limits_run_in_a_deep_stack():
    """The deepest formulas the parser takes, through every recursive pass, with 300 frames
    already on the stack (a CLI, a flow): MAX_DEPTH leaves room below Python's limit."""
    from regula.logic.monitor import NativeMonitor, SpotMonitor, spot_available
    from regula.logic.render import to_dot
    shapes = ["(" * 50 + "a" + ")" * 50, "!" * 49 + "G a", "a" + " & b" * 50, "a" + " <-> b" * 50,
              "a" + " -> b" * 50, "(" * 44 + "a W b" + ")" * 44 + " M c" + " & b" * 4,
              "X" * 6 + " " + "!" * 44 + "a"]
    monitors = [NativeMonitor] + ([SpotMonitor] if spot_available() else [])

    def nest(k, text):
        if k:
            return nest(k - 1, text)
        f = parse(text)
        return [to_dot(cls(f, frozenset({"b"}))) for cls in monitors]
    for text in shapes:
        assert all(dot.startswith("digraph") for dot in nest(300, text)), text


def test_the_docs_state_the_limits():
    from pathlib import Path

    from regula.logic import formula, laws
    logic = " ".join((Path(__file__).resolve().parent.parent / "docs" / "logic.md").read_text().split())
    for stated in [f"at most {formula.MAX_CHARS:,} characters and {formula.MAX_DEPTH} nested operators",
                   f"at most {formula.MAX_STATES:,} states and {formula.MAX_MOVES:,} automaton moves",
                   f"at most {formula.MAX_CLAUSES:,} clauses", f"at most {formula.MAX_PAIRS:,} clause pairs",
                   f"takes at most {formula.MAX_SECONDS:g} s",
                   f"at most {laws.MAX_LAWS} laws and {laws.MAX_FILE_BYTES // 10 ** 6} MB"]:
        assert stated in logic, stated
