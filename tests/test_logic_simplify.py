"""Implication-aware simplification of the native engine's states (`ltlf.implies`, `ltlf.simplify`):
every implication it claims holds on every short trace, a simplified state accepts what it did,
and the clauses it drops are the redundant ones."""
import itertools
import random

from regula.logic import ltlf, parse
from regula.logic.ltlf import implies, nnf, simplify
from regula.logic.randomized import random_formula

ATOMS = ("a", "b")
LETTERS = [frozenset(c) for n in range(3) for c in itertools.combinations(ATOMS, n)]
TRACES = [list(t) for n in range(1, 5) for t in itertools.product(LETTERS, repeat=n)]  # 340 traces


def _holds(f) -> list[bool]:
    return [ltlf.accepts(f, t) for t in TRACES]


def test_every_claimed_implication_holds_on_every_trace_up_to_length_4():
    rng = random.Random(0)
    pool = list({nnf(random_formula(rng, ATOMS, depth=3)) for _ in range(400)})
    pool += [nnf(parse(t)) for t in ("F a", "G a", "a U b", "b R a", "X a", "X[!] a", "F(a & b)", "G F a")]
    truth = {f: _holds(f) for f in pool}
    claimed = [(f, g) for f in pool for g in pool if f is not g and implies(f, g)]
    assert len(claimed) > 300  # not only the trivial ones
    for f, g in claimed:
        assert all(not x or y for x, y in zip(truth[f], truth[g])), f"{f} -> {g}"


def test_the_rules_it_knows():
    def imp(a, b):
        return implies(nnf(parse(a)), nnf(parse(b)))
    assert imp("G a", "a") and imp("a", "F a") and imp("a U b", "F b") and imp("X[!] a", "X a")
    assert imp("G a", "b R a") and imp("a U (F a & b)", "F a") and imp("F(F a & b)", "F a")
    assert not imp("X a", "X[!] a") and not imp("F a", "a") and not imp("a", "G a")  # weak X holds at the end


def test_a_redundant_element_and_an_unsatisfiable_clause_are_dropped():
    f = ltlf.initial(parse("(F a U (F a & b)) & F a"))
    assert len(next(iter(f))) == 2  # progression keeps both
    assert ltlf.dnf_str(simplify(f)) == "(F a U (F a & b))"
    assert simplify(ltlf.initial(parse("(c & G !c) | (b & G a)"))) == ltlf.initial(parse("b & G a"))
    assert simplify(ltlf.initial(parse("(a & F b) | (G a & b)"))) == ltlf.initial(parse("a & F b"))


def test_simplified_states_accept_what_the_unsimplified_ones_do():
    rng = random.Random(1)
    for _ in range(150):
        f = random_formula(rng, ATOMS + ("c",), depth=4)
        start = ltlf.initial(f)
        for trace in (list(t) for n in (1, 2, 3) for t in itertools.product(LETTERS, repeat=n)):
            ob, small = start, simplify(start)
            for letter in trace[:-1]:
                ob = ltlf.progress(ob, letter)
                small, _ = ltlf.move(small, letter)
            assert ltlf.accepts_here(ob, trace[-1]) == ltlf.accepts_here(small, trace[-1]), (str(f), trace)
