"""DFA operations against brute-force enumeration of words (hypothesis)."""
import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regula.automata import (DFA, AlphabetError, AutomatonError, complement, concatenate, difference,
                             equivalent, intersection, language_diff, minimize, shortest_accepted, union)
from regula.automata.ops import count_words, reachable

SIGMA = ("a", "b")
MAX = 5


@st.composite
def dfas(draw, alphabet=SIGMA, max_states=5):
    n = draw(st.integers(1, max_states))
    delta = tuple(tuple(draw(st.integers(0, n - 1)) for _ in alphabet) for _ in range(n))
    acc = frozenset(draw(st.sets(st.integers(0, n - 1))))
    return DFA(tuple(alphabet), delta, draw(st.integers(0, n - 1)), acc)


def words(max_len=MAX, sigma=SIGMA):
    for n in range(max_len + 1):
        yield from itertools.product(sigma, repeat=n)


def lang(d, max_len=MAX):
    return {w for w in words(max_len) if d.accepts(w)}


@settings(max_examples=150, deadline=None)
@given(dfas(), dfas())
def test_products_and_complement_against_enumeration(a, b):
    assert lang(intersection(a, b)) == lang(a) & lang(b)
    assert lang(union(a, b)) == lang(a) | lang(b)
    assert lang(difference(a, b)) == lang(a) - lang(b)
    assert lang(complement(a)) == set(words()) - lang(a)


@settings(max_examples=150, deadline=None)
@given(dfas(), dfas())
def test_de_morgan(a, b):
    ok, w = equivalent(complement(intersection(a, b)), union(complement(a), complement(b)))
    assert ok and w is None
    assert equivalent(complement(union(a, b)), intersection(complement(a), complement(b)))[0]


@settings(max_examples=150, deadline=None)
@given(dfas(max_states=4), dfas(max_states=4))
def test_concatenation_against_enumeration(a, b):
    c = concatenate(a, b)
    for w in words():
        split = any(a.accepts(w[:i]) and b.accepts(w[i:]) for i in range(len(w) + 1))
        assert c.accepts(w) == split, w


@pytest.mark.filterwarnings("ignore:Origin or target state not in automaton")  # AALpy, unreachable states
@settings(max_examples=200, deadline=None)
@given(dfas(max_states=6))
def test_minimize_preserves_language_and_is_minimal(a):
    m = minimize(a)
    assert equivalent(a, m)[0]
    assert len(reachable(m)) == m.size
    # minimal: every two states are told apart by some word (Myhill-Nerode)
    for p, q in itertools.combinations(range(m.size), 2):
        assert any((m.run(w, p) in m.accepting) != (m.run(w, q) in m.accepting) for w in words(m.size))
    # and agrees with AALpy's minimisation on the size
    aal = a.to_aalpy()
    aal.minimize()
    assert minimize(DFA.from_aalpy(aal)).size == m.size and equivalent(DFA.from_aalpy(aal), a)[0]


@settings(max_examples=150, deadline=None)
@given(dfas(), dfas())
def test_equivalence_witness_is_shortest(a, b):
    ok, w = equivalent(a, b)
    diff = sorted((w2 for w2 in words() if a.accepts(w2) != b.accepts(w2)), key=len)
    if ok:
        assert not diff
    else:
        assert a.accepts(w) != b.accepts(w)
        if diff:
            assert len(w) == len(diff[0])


@settings(max_examples=100, deadline=None)
@given(dfas(), dfas())
def test_language_diff_counts(a, b):
    d = language_diff(a, b, max_len=4)
    brute = sum(1 for w in words(4) if a.accepts(w) != b.accepts(w))
    assert d["differing_words"] == brute
    assert d["equal"] == equivalent(a, b)[0]
    if d["only_in_first"] is not None:
        w = tuple(d["only_in_first"])
        assert a.accepts(w) and not b.accepts(w)


@settings(max_examples=100, deadline=None)
@given(dfas())
def test_json_round_trip_and_count(a):
    back = DFA.from_json(json.loads(a.dumps()))
    assert back == a
    assert count_words(a, 4) == [sum(1 for w in itertools.product(SIGMA, repeat=n) if a.accepts(w)) for n in range(5)]
    w = shortest_accepted(a)
    assert (w is None) == (not lang(a, a.size))


def test_concatenation_where_merging_states_is_wrong():
    # L1 = a*  (initial state accepting, with a loop), L2 = b a: merging would wrongly accept "a b a a".
    l1 = DFA.from_table(SIGMA, {0: {"a": 0}}, 0, {0})
    l2 = DFA.from_table(SIGMA, {0: {"b": 1}, 1: {"a": 2}}, 0, {2})
    c = concatenate(l1, l2)
    assert c.accepts(("a", "a", "b", "a")) and c.accepts(("b", "a"))
    assert not c.accepts(("a", "b", "a", "a")) and not c.accepts(("b", "a", "b", "a"))


def test_alphabet_mismatch_names_the_symbols():
    a = DFA.from_table(("a", "b"), {}, 0, {0})
    b = DFA.from_table(("a", "c"), {}, 0, {0})
    with pytest.raises(AlphabetError, match="different alphabets: only in the first: b; only in the second: c"):
        intersection(a, b)


@pytest.mark.parametrize("data,message", [
    ({"alphabet": ["a"], "initial": 0, "accepting": []}, "missing field `transitions`"),
    ({"alphabet": ["a"], "initial": 0, "accepting": [], "transitions": {"0": {}}}, "`transitions.0` has no move on a"),
    ({"alphabet": ["a"], "initial": 0, "accepting": [], "transitions": {"0": {"a": 3}}}, "goes to 3, which is not a state"),
    ({"alphabet": ["a"], "initial": 0, "accepting": [], "transitions": {"0": {"a": 0, "z": 0}}}, "moves on z"),
    ({"alphabet": "a", "initial": 0, "accepting": [], "transitions": {}}, "field `alphabet` must be list"),
])
def test_malformed_json_names_path_and_field(tmp_path, data, message):
    p = tmp_path / "skill.json"
    p.write_text(json.dumps(data))
    with pytest.raises(AutomatonError) as err:
        DFA.load(p)
    assert str(err.value).startswith(f"{p}: ") and message in str(err.value)


def test_rename_and_dot():
    d = DFA.from_table(("collect_wood", "place_table"), {"s": {"collect_wood": "t"}, "t": {"place_table": "u"}},
                       "s", {"u"})
    r = d.rename({"collect_wood": "collect_stone"})
    assert r.accepts(("collect_stone", "place_table")) and r.alphabet == ("collect_stone", "place_table")
    with pytest.raises(AlphabetError, match="would merge symbols into place_table"):
        d.rename({"collect_wood": "place_table"})
    with pytest.raises(AlphabetError, match="cannot rename eat: not in the alphabet"):
        d.rename({"eat": "drink"})
    dot = d.to_dot("collect then place")
    assert '0 -> 1 [label="collect_wood"]' in dot and 'shape=doublecircle, label="u"' in dot
    assert '[label="*"]' in dot  # the sink's self loop on every symbol


def test_aalpy_round_trip():
    from aalpy.utils import generate_random_dfa
    aal = generate_random_dfa(num_states=12, alphabet=["a", "b", "c"], num_accepting_states=4)
    d = DFA.from_aalpy(aal)
    assert d.size == 12
    for w in itertools.product("abc", repeat=4):
        aal.reset_to_initial()
        out = aal.execute_sequence(aal.initial_state, list(w))[-1]
        assert d.accepts(w) == out
    assert equivalent(DFA.from_aalpy(d.to_aalpy()), d)[0]
