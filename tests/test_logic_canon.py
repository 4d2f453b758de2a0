"""One state per boolean function of an obligation (`ltlf.Canon`), clauses weakened by the others'
negations (`ltlf.simplify`), and moves as decision diagrams the states share (`ltlf.Diagrams`): xor and <->
leave both polarities of their operands in a state, which named one function many ways."""
import itertools
import os
import random
import subprocess
import sys

import pytest

from regula.logic import FormulaError, ltlf, parse
from regula.logic.monitor import NativeMonitor
from regula.logic.randomized import random_formula, random_trace

# Spot's randltl (seed 0, 9 atoms) formula that passed the 5 s backstop at 1,989 states (607 in
# 5 s) and 173,224 moves; its minimal automaton has 234 states, which it now has.
XOR_DENSE = "F((p2 -> (p6 <-> (p3 | p5))) <-> F(X(Xp0 xor (Xp7 <-> ((p7 M p1) U p7))) xor (p3 W (Gp6 U p8))))"


def dnf(text: str):
    return ltlf.initial(parse(text))


def test_obligations_with_one_boolean_function_are_one_state():
    canon = ltlf.Canon()
    assert canon(dnf("(p & q) | (p & !q) | (!p & q) | (!p & !q)")) == ltlf.DNF_TRUE
    assert canon(dnf("F a | G !a")) == ltlf.DNF_TRUE  # an element and its negation: one variable
    assert canon(dnf("X p | X[!] !p")) == ltlf.DNF_TRUE
    assert canon(dnf("(F a & G !a) | (b & !b)")) == ltlf.DNF_FALSE
    first = dnf("(F a & b) | (F a & !b)")
    assert canon(first) is first
    assert canon(dnf("F a")) is first and canon(dnf("F a | (F a & X c)")) is first
    assert canon(dnf("F a | b")) == dnf("F a | b")


def test_a_clause_is_weakened_by_the_negation_of_another():
    assert ltlf.simplify(dnf("F a | (G !a & b)")) == dnf("F a | b")
    assert ltlf.simplify(dnf("F a | (!a & b)")) == dnf("F a | b")  # G !a, F a's negation, implies !a
    assert ltlf.simplify(dnf("(a U b) | (!a R !b) | c")) == ltlf.DNF_TRUE
    assert ltlf.simplify(dnf("F a | (G b & c)")) == dnf("F a | (G b & c)")  # nothing implied: kept


def test_the_states_do_not_depend_on_how_full_the_bdd_gets(monkeypatch):
    """Past its node bound the BDD is rebuilt from the states: the same automaton; past it with
    the states alone, the formula is refused in one line."""
    text = "(p0 xor F p1) <-> (G p2 xor (p3 U p1)) & F(p4 <-> X p0)"
    full = NativeMonitor(parse(text))
    monkeypatch.setattr(ltlf.Canon.__init__, "__defaults__", (400,))
    small = NativeMonitor(parse(text))
    assert small._states == full._states and small.moves == full.moves
    monkeypatch.setattr(ltlf.Canon.__init__, "__defaults__", (20,))
    with pytest.raises(FormulaError, match="^the boolean functions of its states pass 20 BDD nodes"):
        NativeMonitor(parse(text))


def test_automata_with_moves_from_every_letter_accept_what_the_evaluator_does():
    rng = random.Random(7)
    atoms = tuple(f"p{i}" for i in range(6))
    for _ in range(40):
        f = random_formula(rng, atoms, depth=5)
        m = NativeMonitor(f)
        for trace in (random_trace(rng, sorted(f.atoms()) or ["p0"], max_len=8) for _ in range(20)):
            m.reset()
            accepted = m.run(trace)[-1].value == "accepting"
            assert accepted == ltlf.accepts(f, trace), (str(f), trace)


def test_a_dense_xor_formula_compiles_to_its_minimal_automaton():
    m = NativeMonitor(parse(XOR_DENSE))
    assert len(m._states) == 234
    letters = [frozenset(c) for n in range(3) for c in itertools.combinations(("p0", "p6", "p8"), n)]
    for trace in itertools.product(letters, repeat=3):
        m.reset()
        assert (m.run(trace)[-1].value == "accepting") == ltlf.accepts(parse(XOR_DENSE), trace)


REBUILT = "(p0 xor F p1) <-> (G p2 xor (p3 U p1)) & F(p4 <-> X p0)"


def _compile_others_first():
    """What a process compiled before changes where its Formula objects live, so the order a
    frozenset of them is walked in, so where a BDD of a bounded size fills up."""
    rng = random.Random(11)
    atoms = tuple(f"p{i}" for i in range(6))
    for _ in range(30):
        NativeMonitor(random_formula(rng, atoms, depth=5))


def test_a_rebuild_outside_the_diagrams_renumbers_what_they_keep(monkeypatch):
    """A state whose moves are made letter by letter (fewer than 4 atoms read) can fill the BDD:
    the canon is rebuilt outside `Diagrams.moves`, which then must not use the function numbers it
    kept from before (they led letters to wrong states, or past the BDD's end: an IndexError)."""
    _compile_others_first()
    full = NativeMonitor(parse(REBUILT))
    real_move = NativeMonitor._move

    def move(self, state, letter):
        self._canon.rebuild()
        return real_move(self, state, letter)

    monkeypatch.setattr(NativeMonitor, "_move", move)
    again = NativeMonitor(parse(REBUILT))
    assert again._canon.generation == len(again._table) > 100  # one rebuild a move made letter by letter
    assert again._trees == full._trees and again._table == full._table and again.moves == full.moves


def test_the_automaton_is_the_formulas_alone_where_the_bdd_fills_up(monkeypatch):
    """Where the canon's BDD fills up and is rebuilt depends on how many nodes were made, so on
    the order clauses and elements are met in: the order of a frozenset of formulas, which
    follows their addresses, so what the process made before, and the string hashes. That order
    is fixed (`ltlf._in_order`): compiled after other formulas here and in fresh processes under
    other string hashes, the automaton has as many states and moves (it had 265-293 states and
    3,983-4,476 moves at this bound, or was refused), and accepts what the evaluator does."""
    bound = 22_000  # below what XOR_DENSE's functions need (at 26,000 it compiles without a rebuild)
    code = (f"from regula.logic import ltlf, parse; from regula.logic.monitor import NativeMonitor; "
            f"ltlf.Canon.__init__.__defaults__ = ({bound},); m = NativeMonitor(parse({XOR_DENSE!r})); "
            f"print(len(m._states), m.moves, m._canon.generation)")
    fresh = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout.strip() for seed in (1, 2)}
    _compile_others_first()
    monkeypatch.setattr(ltlf.Canon.__init__, "__defaults__", (bound,))
    m = NativeMonitor(parse(XOR_DENSE))
    assert fresh == {f"{len(m._states)} {m.moves} {m._canon.generation}"} and m._canon.generation >= 2
    rng = random.Random(3)
    atoms = sorted(parse(XOR_DENSE).atoms())
    for trace in (random_trace(rng, atoms, max_len=8) for _ in range(300)):
        m.reset()
        assert (m.run(trace)[-1].value == "accepting") == ltlf.accepts(parse(XOR_DENSE), trace), trace


@pytest.mark.parametrize("fail_at", [(30, 31, 150, 18), (20, 21, 160, 18), (40, 41, 170, 18)])
def test_moves_are_made_again_where_the_bdd_is_rebuilt_part_way(monkeypatch, fail_at):
    """A rebuild renumbers the functions the leaves of a state's moves hold (`ltlf.Diagrams`),
    whether it comes while the clauses' diagrams are combined or while a leaf is made a state:
    the state's moves are made again, and the automaton is the one made without a rebuild, with
    as many moves, after whatever the process compiled before."""
    _compile_others_first()
    text = REBUILT
    full = NativeMonitor(parse(text))
    *or_at, call_at = fail_at
    real_or, real_call, real_function = ltlf.Canon.or_, ltlf.Canon.__call__, ltlf.Canon._function
    count = {"or": 0, "call": 0, "inside": False}

    def or_(self, a, b):
        count["or"] += 1
        if count["or"] in or_at:  # two in a row: the first try again fails too
            raise ltlf._Full
        return real_or(self, a, b)

    def call(self, obligation):
        count["inside"] = True
        try:
            return real_call(self, obligation)
        finally:
            count["inside"] = False

    def function(self, obligation):
        if count["inside"] and not count.get("rebuilding"):
            count["call"] += 1
            if count["call"] == call_at:
                count["rebuilding"] = True  # the states' functions made again are not failed
                raise ltlf._Full
        return real_function(self, obligation)

    real_rebuilt = ltlf.Canon._rebuilt

    def rebuilt(self):
        try:
            real_rebuilt(self)
        finally:
            count["rebuilding"] = False

    monkeypatch.setattr(ltlf.Canon, "or_", or_)
    monkeypatch.setattr(ltlf.Canon, "__call__", call)
    monkeypatch.setattr(ltlf.Canon, "_function", function)
    monkeypatch.setattr(ltlf.Canon, "_rebuilt", rebuilt)
    again = NativeMonitor(parse(text))
    assert count["or"] > max(or_at) and count["call"] > call_at and again._canon.generation == 4  # four rebuilds
    assert again._trees == full._trees and again._table == full._table
    assert again._states == full._states and again.moves == full.moves == 217
