"""Finite-trace monitors: feed letters, get a verdict after each; two backends, one interface.

A letter is the set of atoms true at a step. The verdict after a prefix w is
`accepting` (w itself satisfies the formula), `pending` (it does not, but some extension
does) or `violated` (no extension does; final). "Some extension" ranges over an explicit
alphabet: by default every valuation of the formula's atoms; with `actions`, a state's
propositions with exactly one action, so that a law over 14 propositions is not checked
against 2^14 letters of impossible actions. Projected on the formula's atoms, that is one of
its actions, or none of them where some action lies outside the formula.
"""
from __future__ import annotations

from enum import Enum
from itertools import combinations

from regula.errors import RegulaError, UnknownNameError

from . import ltlf
from .formula import Formula

BACKENDS = ("auto", "native", "spot")


class Verdict(str, Enum):
    ACCEPTING = "accepting"
    PENDING = "pending"
    VIOLATED = "violated"


def spot_available() -> bool:
    try:
        import spot  # noqa: F401
    except ImportError:
        return False
    return True


def resolve_backend(name: str) -> str:
    if name not in BACKENDS:
        raise UnknownNameError("logic backend", name, BACKENDS)
    if name == "auto":
        return "spot" if spot_available() else "native"
    if name == "spot" and not spot_available():
        raise RegulaError("logic backend 'spot' asked for, but `import spot` fails here "
                          "(the spottl wheel is for Linux x86_64, CPython 3.10-3.13); use 'native' or 'auto'")
    return name


def letters_over(atoms: frozenset, actions: frozenset | None = None) -> list[frozenset]:
    """The explicit alphabet projected on `atoms` (see the module doc)."""
    atoms = sorted(atoms)
    acts = sorted(a for a in atoms if actions is not None and a in actions)
    plain = [a for a in atoms if a not in acts]
    none = [frozenset()] if actions is not None and not actions <= set(atoms) else []
    choices = none + [frozenset([a]) for a in acts] if actions is not None else None
    out = []
    for k in range(len(plain) + 1):
        for combo in combinations(plain, k):
            base = frozenset(combo)
            if choices is None:
                for j in range(len(acts) + 1):
                    for extra in combinations(acts, j):
                        out.append(base | frozenset(extra))
            else:
                out.extend(base | c for c in choices)
    return out


class Monitor:
    """Common driver: subclasses give `_start`, `_move(state, letter) -> (state, accepted)`."""

    backend = ""

    def __init__(self, formula: Formula, actions: frozenset | None = None):
        self.formula = formula
        self.atoms = formula.atoms()
        self.actions = actions
        self._letters: list | None = None
        self._table: dict = {}
        self._live: dict = {}
        self.reset()

    @property
    def letters(self) -> list[frozenset]:
        """The explicit alphabet, built on first use (2^k letters for k plain atoms)."""
        if self._letters is None:
            self._letters = letters_over(self.atoms, self.actions)
        return self._letters

    def reset(self) -> None:
        self.state = self._start
        self.verdict = Verdict.PENDING if self.live(self._start) else Verdict.VIOLATED
        self.steps = 0
        self.first_violation: int | None = None if self.verdict != Verdict.VIOLATED else 0

    def _step(self, state, letter: frozenset):
        key = (state, letter)
        got = self._table.get(key)
        if got is None:
            got = self._table[key] = self._move(state, letter)
        return got

    def live(self, state) -> bool:
        """Does some non-empty continuation from `state` end accepted?"""
        if state in self._live:
            return self._live[state]
        order, succ, accepts, todo = [], {}, {}, [state]
        while todo:  # explore what is reachable and not yet known
            s = todo.pop()
            if s in succ or s in self._live:
                continue
            order.append(s)
            nexts = [self._step(s, a) for a in self.letters]
            accepts[s] = any(acc for _, acc in nexts)
            succ[s] = {t for t, _ in nexts}
            todo.extend(t for t in succ[s] if t not in succ and t not in self._live)
        live = {s: accepts[s] for s in order}
        changed = True
        while changed:
            changed = False
            for s in order:
                if not live[s] and any(live.get(t, self._live.get(t, False)) for t in succ[s]):
                    live[s] = changed = True
        self._live.update(live)
        return self._live[state]

    def _verdict(self, state, accepted: bool) -> Verdict:
        if accepted:
            return Verdict.ACCEPTING
        return Verdict.PENDING if self.live(state) else Verdict.VIOLATED

    def peek(self, letter) -> Verdict:
        """The verdict if `letter` came next; the monitor does not move."""
        if self.verdict == Verdict.VIOLATED:
            return Verdict.VIOLATED
        nxt, acc = self._step(self.state, frozenset(letter) & self.atoms)
        return self._verdict(nxt, acc)

    def step(self, letter) -> Verdict:
        self.steps += 1
        if self.verdict == Verdict.VIOLATED:
            return self.verdict
        self.state, acc = self._step(self.state, frozenset(letter) & self.atoms)
        self.verdict = self._verdict(self.state, acc)
        if self.verdict == Verdict.VIOLATED:
            self.first_violation = self.steps
        return self.verdict

    def run(self, trace) -> list[Verdict]:
        return [self.step(letter) for letter in trace]

    def can_still_be_satisfied(self) -> bool:
        return self.verdict != Verdict.VIOLATED

    def transitions(self):
        """Explore the automaton over the explicit alphabet: (states, start, edges, accepting)."""
        start = ("start", False)
        states, edges, todo = {start: 0}, {}, [start]
        while todo:
            node = todo.pop()
            for letter in self.letters:
                nxt, acc = self._step(node[0] if node != start else self._start, letter)
                dst = (nxt, acc)
                if dst not in states:
                    states[dst] = len(states)
                    todo.append(dst)
                edges.setdefault((states[node], states[dst]), []).append(letter)
        accepting = {i for (s, acc), i in states.items() if acc}
        return states, 0, edges, accepting


class NativeMonitor(Monitor):
    backend = "native"

    def __init__(self, formula: Formula, actions: frozenset | None = None):
        self._start = ltlf.initial(formula)
        super().__init__(formula, actions)

    def _move(self, state, letter):
        return ltlf.progress(state, letter), ltlf.accepts_here(state, letter)


class SpotMonitor(Monitor):
    """Spot's automaton for the LTLf formula (`from_ltlf`, translated, `to_finite`), run as a
    subset construction so a non-deterministic result is still a monitor."""

    backend = "spot"

    def __init__(self, formula: Formula, actions: frozenset | None = None):
        import spot  # first: it puts its `buddy` module on the path
        import buddy
        self._buddy = buddy
        aut = spot.translate(spot.from_ltlf(spot.formula(str(formula))), "small", "sbacc")
        self.aut = spot.to_finite(aut)
        self._aps = {str(a): self.aut.register_ap(str(a)) for a in self.aut.ap()}
        self._letter_bdd: dict = {}
        self._start = frozenset([self.aut.get_init_state_number()])
        super().__init__(formula, actions)

    def _bdd(self, letter: frozenset):
        b = self._letter_bdd.get(letter)
        if b is None:
            b = self._buddy.bddtrue
            for name, var in self._aps.items():
                b &= self._buddy.bdd_ithvar(var) if name in letter else self._buddy.bdd_nithvar(var)
            self._letter_bdd[letter] = b
        return b

    def _move(self, state, letter):
        cube = self._bdd(letter)
        nxt = frozenset(e.dst for s in state for e in self.aut.out(s)
                        if self._buddy.bdd_implies(cube, e.cond))
        return nxt, any(self.aut.state_is_accepting(s) for s in nxt)


def monitor(formula: Formula, backend: str = "auto", actions: frozenset | None = None) -> Monitor:
    cls = NativeMonitor if resolve_backend(backend) == "native" else SpotMonitor
    return cls(formula, actions)
