"""Monitors built lazily: where a formula's whole automaton passes the bounds (formula.py), the
native monitor makes each state and move the first time a run or a search reaches it, within
the same bounds counted over the monitor's life; what needs the whole automaton is refused."""
import importlib
import random

import pytest

from regula import envs
from regula.automata import teachers
from regula.diff.laws import tell_apart
from regula.logic import FormulaError, Law, LawError, Shield, Verdict, ltlf, monitor, parse
from regula.logic.formula import MAX_STATES
from regula.logic.monitor import NativeMonitor, letters_over
from regula.logic.randomized import random_formula
from regula.logic.render import to_dot

MONITOR = importlib.import_module("regula.logic.monitor")
STATE, ACTIONS = envs.get("crafter").atoms()
NESTED_X = "G(!has_wood | " + "X" * 18 + " !place_table)"  # issue 14's law: 2^18 states


def test_a_lazy_monitor_gives_the_whole_automatons_verdicts(monkeypatch):
    """Random formulas over 3 atoms, each made with a state bound one below its whole automaton's
    states: the build is refused and the monitor is lazy (or, where its search for a live start
    already makes that many states, refused in one line); then, within the usual bounds, every
    verdict, peek and first violation on random traces is the whole automaton's."""
    rng = random.Random(11)
    letters = letters_over(frozenset("abc"))
    lazy_formulas = compared = refused_on_start = 0
    while lazy_formulas < 25:
        f = random_formula(rng, ("a", "b", "c"), depth=5)
        whole = NativeMonitor(f)
        if len(whole._states) < 4:
            continue
        monkeypatch.setattr(MONITOR, "MAX_STATES", len(whole._states) - 1)
        try:
            lazy = NativeMonitor(f)
        except FormulaError as exc:  # its search for a live start made as many states: refused over its life
            assert str(exc).startswith("monitored lazily (its whole automaton is too large), its runs have made "
                                       "more than"), str(exc)
            refused_on_start += 1
            continue
        finally:
            monkeypatch.undo()  # its runs: within the usual bounds
        assert lazy.lazy and lazy.whole_refused.reason == f"its automaton passes {len(whole._states) - 1:,} states " \
                                                          "(the limit)"
        lazy_formulas += 1
        for _ in range(10):
            whole.reset()
            lazy.reset()
            assert lazy.verdict == whole.verdict
            for _ in range(rng.randint(1, 12)):
                letter = rng.choice(letters)
                assert lazy.peek(letter) == whole.peek(letter), f
                assert lazy.step(letter) == whole.step(letter), f
                assert lazy.first_violation == whole.first_violation, f
                compared += 1
    assert compared > 1000 and refused_on_start < lazy_formulas


def test_the_nested_x_law_is_monitored_lazily_within_the_same_bounds():
    law = parse(NESTED_X)
    m = NativeMonitor(law, frozenset(ACTIONS))
    assert m.lazy and str(m.whole_refused).startswith(f"its automaton passes {MAX_STATES:,} states (the limit)")
    # A run that breaks it: wood, then a table placed 18 steps later.
    trace = [{"has_wood", "noop"}] + [{"noop"}] * 17 + [{"place_table"}]
    assert m.run(trace) == [Verdict.ACCEPTING] * 18 + [Verdict.VIOLATED]  # X is weak at the last step
    assert m.first_violation == 19
    assert not ltlf.accepts(law, trace) and ltlf.accepts(law, trace[:-1])
    # Wood at random and never a table: a new state nearly every step, until the runs have made 10,000.
    m.reset()
    rng = random.Random(0)
    with pytest.raises(FormulaError) as err:
        for _ in range(3 * MAX_STATES):
            m.step({"has_wood", "noop"} if rng.random() < .5 else {"noop"})
    assert str(err.value) == (f"monitored lazily (its whole automaton is too large), its runs have made more than "
                              f"{MAX_STATES:,} states (the limit): 'G(!has_wood | X X X X X X X X X X X X X X X X X "
                              "X !place_tab...'")
    assert len(m._states) == MAX_STATES + 1


def test_what_needs_the_whole_automaton_is_refused_at_once_naming_it():
    m = monitor(parse(NESTED_X), "native", frozenset(ACTIONS))
    assert m.lazy
    with pytest.raises(FormulaError) as err:
        to_dot(m)
    assert str(err.value).startswith("drawing its automaton needs its whole automaton, and its automaton passes "
                                     "10,000 states (the limit): 'G(!has_wood")
    with pytest.raises(FormulaError, match="^making its DFA needs its whole automaton, and its automaton passes"):
        m.transitions("making its DFA")
    assert tell_apart(parse(NESTED_X), parse("G !place_table"), "native") == (None, None)
    # Laws are compiled whole: a shield, a teacher's formula and a law file refuse it when made.
    with pytest.raises(FormulaError, match=r"^its automaton passes 10,000 states \(the limit\)"):
        monitor(parse(NESTED_X), "native", frozenset(ACTIONS), lazy=False)
    with pytest.raises(LawError, match=r"^law G\(!has_wood \| X+ !place_table\): its automaton passes 10,000 states"):
        Shield([Law(NESTED_X)], ACTIONS, backend="native")
    with pytest.raises(FormulaError, match=r"^its automaton passes 10,000 states \(the limit\)"):
        teachers.compile_clauses([NESTED_X], ["has_wood", "place_table"])
