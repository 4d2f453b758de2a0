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
from .formula import MAX_DEPTH, MAX_MOVES, Formula, FormulaError, height

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


def alphabet_size(atoms: frozenset, actions: frozenset | None = None) -> int:
    """len(letters_over(atoms, actions)), without building them."""
    if actions is None:
        return 2 ** len(atoms)
    return 2 ** len(atoms - actions) * (len(atoms & actions) + (not actions <= atoms))


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
    """Common driver: subclasses give `_begin() -> start state` and
    `_move(state, letter) -> (state, accepted)`. Exploring the automaton is bounded by MAX_MOVES."""

    backend = ""

    def __init__(self, formula: Formula, actions: frozenset | None = None):
        # A parsed formula nests at most MAX_DEPTH, a balanced conjunction of MAX_LAWS laws 8 more;
        # one built in code may nest deeper than progression (~8 frames a level) can recurse.
        if height(formula) > MAX_DEPTH + 10:
            raise FormulaError(f"formula nests {height(formula)} operators deep; a monitor takes at most "
                               f"{MAX_DEPTH + 10}")
        self.formula = formula
        self.atoms = formula.atoms()
        self.actions = None if actions is None else frozenset(actions)
        size = alphabet_size(self.atoms, self.actions)
        if size > MAX_MOVES:  # a parsed formula has at most 2^MAX_ATOMS letters, a conjunction of laws more
            raise FormulaError(f"its alphabet has {size:,} letters, more than the {MAX_MOVES:,} automaton moves "
                               "one search may take (the limit)", str(formula))
        self._letters: list | None = None
        self._table: dict = {}
        self._live: dict = {}
        self._start = self._begin()
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

    def _count(self, moves: int, what: str) -> int:
        if moves > MAX_MOVES:
            raise FormulaError(f"{what} explores more than {MAX_MOVES:,} automaton moves (the limit)",
                               str(self.formula))
        return moves

    def live(self, state) -> bool:
        """Does some non-empty continuation from `state` end accepted? Depth-first, stopping at
        the first accepted move (states on the way are live); when none is reachable, every
        state seen is dead. Never more than MAX_MOVES moves."""
        known = self._live.get(state)
        if known is not None:
            return known
        seen, path, moves = {state}, [(state, iter(self.letters))], 0
        while path:
            s, letters = path[-1]
            for letter in letters:
                moves = self._count(moves + 1, "deciding whether it can still be satisfied")
                t, accepted = self._step(s, letter)
                if accepted or self._live.get(t):
                    self._live.update((on_path, True) for on_path, _ in path)
                    return True
                if t not in seen and t not in self._live:
                    seen.add(t)
                    path.append((t, iter(self.letters)))
                    break
            else:
                path.pop()
        self._live.update(dict.fromkeys(seen, False))
        return False

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
        """The automaton over the explicit alphabet: (states, start, edges, accepting, live),
        states keyed (state, accepted on entry); `live`: those from which an accepting one is reachable."""
        start = ("start", False)
        states, edges, todo, moves = {start: 0}, {}, [start], 0
        while todo:
            node = todo.pop()
            moves = self._count(moves + len(self.letters), "drawing its automaton")
            for letter in self.letters:
                nxt, acc = self._step(node[0] if node != start else self._start, letter)
                dst = (nxt, acc)
                if dst not in states:
                    states[dst] = len(states)
                    todo.append(dst)
                edges.setdefault((states[node], states[dst]), []).append(letter)
        accepting = {i for (s, acc), i in states.items() if acc}
        into: dict = {}
        for src, dst in edges:
            into.setdefault(dst, set()).add(src)
        live, todo = set(), list(accepting)
        while todo:  # backwards from the accepting states
            for src in into.get(todo.pop(), ()):
                if src not in live:
                    live.add(src)
                    todo.append(src)
        return states, 0, edges, accepting, live


class NativeMonitor(Monitor):
    backend = "native"

    def _begin(self):
        return ltlf.initial(self.formula)

    def _move(self, state, letter):
        return ltlf.progress(state, letter), ltlf.accepts_here(state, letter)


class SpotMonitor(Monitor):
    """Spot's automaton for the LTLf formula (`from_ltlf`, translated, `to_finite`), run as a
    subset construction so a non-deterministic result is still a monitor. Simulation-based
    reductions are off: they took minutes on an xor of five F's, and the subset construction
    does not need the smallest automaton."""

    backend = "spot"

    def _begin(self):
        import spot  # first: it puts its `buddy` module on the path
        import buddy
        self._buddy = buddy
        aut = spot.translate(spot.from_ltlf(spot.formula(str(self.formula))), "small", "sbacc", xargs="simul=0")
        self.aut = spot.to_finite(aut)
        self._aps = {str(a): self.aut.register_ap(str(a)) for a in self.aut.ap()}
        self._letter_bdd: dict = {}
        return frozenset([self.aut.get_init_state_number()])

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
