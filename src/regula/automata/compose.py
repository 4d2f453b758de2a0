"""Skills and specifications composed across alphabets (seed 000, CEDAR §3.4, Fig. 3 and
Proposition 2): a compliant policy is a skill's DFA intersected with a specification's, a chain
of skills their concatenation, and the verifier checks words from logs against every
specification.

A skill and a specification are learned over different sub-alphabets. Merging them, each
automaton reads a letter outside its own alphabet past (a self-loop in every state): a
specification says nothing of the letters it was not learned over, and a skill's word may be
interleaved with the specification's events. `ops` takes products of automata over one
alphabet; `lift` brings both to the union first.
"""
from __future__ import annotations

from dataclasses import dataclass

from .dfa import DFA
from .ops import concatenate, intersection, minimize


def merged_alphabet(*automata: DFA) -> tuple:
    """The union of the alphabets: the first automaton's letters in its order, then each
    later one's new letters in theirs (a fixed order, so composed automata are reproducible)."""
    out: list = []
    for a in automata:
        out += [x for x in a.alphabet if x not in out]
    return tuple(out)


def lift(a: DFA, alphabet) -> DFA:
    """`a` over `alphabet` (a superset of its own): a letter `a` does not know is read past."""
    alphabet = tuple(alphabet)
    missing = [x for x in a.alphabet if x not in alphabet]
    if missing:
        from .dfa import AlphabetError
        raise AlphabetError(f"cannot lift onto an alphabet without {', '.join(map(str, missing))}")
    own = [a.alphabet.index(x) if x in a.alphabet else None for x in alphabet]
    delta = tuple(tuple(s if k is None else row[k] for k in own) for s, row in enumerate(a.delta))
    return DFA(alphabet, delta, a.initial, a.accepting, a.names)


def comply(skill: DFA, spec: DFA) -> DFA:
    """The compliant policy: the words of the skill (over the merged alphabet) that the
    specification accepts, minimal (the paper's conjunctive merge, Fig. 3)."""
    alphabet = merged_alphabet(skill, spec)
    return minimize(intersection(lift(skill, alphabet), lift(spec, alphabet)))


def chain(first: DFA, second: DFA) -> DFA:
    """Skills run in turn: a word of `first` then a word of `second`, over the merged alphabet
    (each reads the other's letters past), minimal."""
    alphabet = merged_alphabet(first, second)
    return minimize(concatenate(lift(first, alphabet), lift(second, alphabet)))


def project(word, alphabet) -> tuple:
    """The letters of `word` an automaton over `alphabet` reads (the rest it reads past)."""
    keep = set(alphabet)
    return tuple(x for x in word if x in keep)


def _live(a: DFA) -> set:
    """The states from which some word is accepted."""
    back: dict[int, set] = {}
    for s, row in enumerate(a.delta):
        for t in row:
            back.setdefault(t, set()).add(s)
    live, todo = set(a.accepting), list(a.accepting)
    while todo:
        for s in back.get(todo.pop(), ()):
            if s not in live:
                live.add(s)
                todo.append(s)
    return live


@dataclass(frozen=True)
class Violation:
    """A word a specification rejects: `at` is the index (in the whole word) of the letter
    after which no continuation can satisfy the specification, or None when the word only
    stopped before satisfying it."""

    spec: str
    word: tuple
    at: int | None

    def __str__(self) -> str:
        if self.at is None:
            return f"{self.spec}: the word ends before the specification is met: {', '.join(self.word) or '(nothing)'}"
        return (f"{self.spec}: violated at letter {self.at + 1} ({self.word[self.at]}) of "
                f"{', '.join(self.word)}")


def check(word, specs: dict[str, DFA]) -> list[Violation]:
    """The specifications (name -> DFA) that `word` violates, each with where, in name order."""
    word = tuple(word)
    out = []
    for name in sorted(specs):
        spec = specs[name]
        live, state, at = _live(spec), spec.initial, None
        for i, letter in enumerate(word):
            if letter not in spec.alphabet:
                continue
            state = spec.step(state, letter)
            if state not in live:
                at = i
                break
        if at is not None or state not in spec.accepting:
            out.append(Violation(name, word, at))
    return out
