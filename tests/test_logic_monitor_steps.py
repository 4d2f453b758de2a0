"""The native monitor's table-driven steps against the generic driver over the same engine:
the same verdict, first violation, step count and state after every step, peek and reset."""
import random

import pytest

from regula.logic.formula import Formula
from regula.logic.monitor import Monitor, NativeMonitor, Verdict
from regula.logic.parser import parse
from regula.logic.randomized import random_formula

ATOMS = ("a", "b", "c")


class Reference(Monitor):
    """The native engine under the driver Spot's monitor uses: a projected, memoised move a step."""

    _begin, _move, _reads = NativeMonitor._begin, NativeMonitor._move, NativeMonitor._reads


def _letter(rng: random.Random):
    """A letter in one of the forms callers give: frozenset, list, set, with atoms no law reads."""
    atoms = [a for a in (*ATOMS, "z") if rng.random() < 0.45]
    return rng.choice([frozenset(atoms), frozenset(atoms), atoms, set(atoms)])


def _observed(m: Monitor) -> tuple:
    return m.verdict, m.first_violation, m.steps, m.state


def _agree(f: Formula, rng: random.Random, actions=None, row_letters=None) -> NativeMonitor:
    native, reference = NativeMonitor(f, actions), Reference(f, actions)
    if row_letters is not None:
        native.row_letters = row_letters
    assert _observed(native) == _observed(reference), str(f)
    for _ in range(40):
        letter, r = _letter(rng), rng.random()
        if r < 0.3:
            assert native.peek(letter) == reference.peek(letter), str(f)
        elif r < 0.95:
            assert native.step(letter) == reference.step(letter), str(f)
        else:
            native.reset()
            reference.reset()
        assert _observed(native) == _observed(reference), (str(f), letter)
    return native


def test_steps_agree_with_the_generic_driver_on_random_formulas():
    rng = random.Random(40)
    violated = 0
    for _ in range(300):
        m = _agree(random_formula(rng, ATOMS, depth=rng.randint(1, 4)), rng)
        violated += m.first_violation is not None
    assert violated > 20  # the check on the violating step is not vacuous


def test_steps_agree_with_an_action_alphabet():
    rng = random.Random(41)
    for _ in range(100):
        _agree(random_formula(rng, ATOMS, depth=3), rng, actions=frozenset({"a", "b"}))


def test_rows_that_start_again_past_their_bound_keep_the_verdicts():
    rng = random.Random(42)
    for _ in range(50):
        m = _agree(random_formula(rng, ATOMS, depth=3), rng, row_letters=3)
        assert m._row_entries <= 3


def test_a_warm_step_only_looks_the_letter_up():
    m = NativeMonitor(parse("G(a -> X(b | c)) & F c"))
    trace = [frozenset(x) for x in (["a"], ["b"], ["a", "z"], ["c"], [], ["a"], ["c"])]
    first = m.run(trace), [m.peek(x) for x in trace]
    m._step = m._move = m.live = None  # a call to any of them now fails
    m.reset()
    assert (m.run(trace), [m.peek(x) for x in trace]) == first


@pytest.mark.parametrize("formula, trace, first", [("G a", [["a"], [], ["a"], []], 2), ("false", [["a"]], 0),
                                                   ("a U b", [["a"], ["a"], ["b"], []], None)])
def test_first_violation_is_the_step_that_violated(formula, trace, first):
    m = NativeMonitor(parse(formula))
    m.run([frozenset(x) for x in trace])
    assert m.first_violation == first
    assert (m.verdict == Verdict.VIOLATED) == (first is not None)
