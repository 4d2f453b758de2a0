"""DFAs compared by language: any JSON the project writes under data/ that is a DFA (CEDAR's
skills, specifications, products), by path. Equal languages are no change whatever the state
numbering; otherwise a shortest word in each difference, and the state counts before and after.
Two alphabets are made one: a symbol a DFA lacks sends it to a rejecting sink.
"""
from __future__ import annotations

import json

from regula.automata import DFA, AutomatonError
from regula.automata.ops import difference, shortest_accepted
from regula.errors import DataError

KEYS = {"alphabet", "initial", "accepting", "transitions"}


ROOTS = ("data",)  # where its files lie (which unavailable outputs concern it), less the caches
NOT_UNDER = ("data/cache",)


def selects(path: str) -> bool:
    return (path.startswith("data/") and path.endswith(".json") and not path.startswith("data/cache/")
            and not path.endswith(".examples.json"))


def _dfa(path: str, raw: bytes | None, where: str) -> DFA | None:
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None  # not JSON: not an automaton (the other kinds say what is wrong with their files)
    if not isinstance(data, dict) or not KEYS <= set(data):
        return None
    try:
        return DFA.from_json(data, f"{path} at {where}")
    except AutomatonError as exc:
        raise DataError(str(exc)) from None


def widen(a: DFA, alphabet: tuple) -> DFA:
    """`a` over `alphabet` (a superset of its own), the new symbols going to a rejecting sink."""
    if tuple(a.alphabet) == alphabet:
        return a
    sink = a.size
    delta = [tuple(row[a.alphabet.index(x)] if x in a.alphabet else sink for x in alphabet) for row in a.delta]
    delta.append(tuple([sink] * len(alphabet)))
    return DFA(alphabet, tuple(delta), a.initial, a.accepting)


def word(w) -> list | None:
    return None if w is None else [str(x) for x in w]


def compare_dfas(old: DFA | None, new: DFA | None) -> dict | None:
    """A row's fields for two versions of one DFA (None: no change)."""
    states = {"states_old": old.size if old else None, "states_new": new.size if new else None}
    if old is None or new is None:
        return {"change": "added" if old is None else "removed", **states, "only_old": None, "only_new": None}
    alphabet = tuple(sorted(set(old.alphabet) | set(new.alphabet), key=str))
    a, b = widen(old, alphabet), widen(new, alphabet)
    only_old, only_new = shortest_accepted(difference(a, b)), shortest_accepted(difference(b, a))
    if only_old is None and only_new is None:
        if old.size == new.size:
            return None  # renumbered at most
        return {"change": "same language", **states, "only_old": None, "only_new": None}
    return {"change": "language", **states, "only_old": word(only_old), "only_new": word(only_new)}


def compare(path: str, old: bytes | None, new: bytes | None, where: tuple[str, str]) -> list[dict]:
    a, b = _dfa(path, old, where[0]), _dfa(path, new, where[1])
    if a is None and b is None:
        return []
    row = compare_dfas(a, b)
    return [] if row is None else [{"file": path, **row}]
