"""The shield: allow or block a proposed action against the laws, with reasons.

Each law keeps a monitor over the trace of letters (a state's propositions plus the action
taken). A proposed action is blocked when appending its letter would leave some law with no
satisfying continuation. When every action is blocked (over-constraint) the shield falls
back to the hard laws alone and records the conflict for the critic.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .formula import MAX_MOVES
from .laws import KINDS, Law, check_atoms, named
from .monitor import Verdict, monitor

_VIOLATED = Verdict.VIOLATED  # as a module global: a member looked up on its Enum class takes ~50 ns


@dataclass
class Decision:
    action: str
    allowed: bool
    violated: list = field(default_factory=list)  # laws the action would violate

    def explain(self) -> str:
        if self.allowed:
            return f"{self.action}: allowed"
        reasons = "; ".join(law.describe() for law in self.violated)
        return f"{self.action} is blocked by {len(self.violated)} law{'s' if len(self.violated) > 1 else ''}: {reasons}"


@dataclass
class Conflict:
    """No action was allowed under every law: what blocked what, for the critic."""

    step: int
    state: list
    blocked: dict  # action -> formulas of the laws that blocked it
    fallback_allowed: list


class Shield:
    def __init__(self, laws: list[Law], actions, atoms=None, backend: str = "auto",
                 restart_violated: bool = False):
        self.laws = list(laws)
        self.actions = frozenset(actions)
        if atoms is not None:
            check_atoms(self.laws, set(atoms) | self.actions)
        self.monitors = []
        for law in self.laws:
            with named(f"law {law.label}"):
                # whole, as a law file's are on load: a law past the bounds is refused here, not part way
                self.monitors.append((law, monitor(law.parsed, backend, self.actions, lazy=False)))
        self._letters: dict = {}  # letter -> the one object standing for it
        self._of_kinds: dict = {}  # kinds -> the (law, monitor) pairs of those kinds, in the laws' order
        self.conflicts: list[Conflict] = []
        self.steps = 0
        # A law broken by a committed action (the over-constraint fallback, an action taken
        # outside the actor's choice) would otherwise block everything from then on; with
        # `restart_violated` its monitor restarts, which for G(...) laws means "from the next step".
        self.restart_violated = restart_violated
        self.broken: list[tuple[int, str]] = []  # (step, formula) of laws a committed action broke

    def reset(self) -> None:
        for _, m in self.monitors:
            m.reset()
        self.conflicts, self.steps, self.broken = [], 0, []

    def check(self, state, action: str, kinds=KINDS) -> Decision:
        return self._check(frozenset(state), action, kinds)

    def _check(self, state: frozenset, action: str, kinds) -> Decision:
        letter = self._letter(state | {action})
        kinds = tuple(kinds)
        monitors = self._of_kinds.get(kinds)
        if monitors is None:
            monitors = self._of_kinds[kinds] = [(law, m) for law, m in self.monitors if law.kind in kinds]
        violated = [law for law, m in monitors if m.peek(letter) is _VIOLATED]
        return Decision(action, not violated, violated)

    def _letter(self, letter: frozenset) -> frozenset:
        """One object for each letter seen: every law's monitor then finds it by identity, where
        an equal letter built anew is compared atom by atom, once per law."""
        known = self._letters.setdefault(letter, letter)
        if len(self._letters) > MAX_MOVES:  # a bound on what is kept: forgotten, never refused
            self._letters.clear()
        return known

    def allowed(self, state, actions=None) -> tuple[list[str], list[Decision]]:
        """The actions allowed in `state`; on over-constraint, those the hard laws allow."""
        actions = sorted(actions if actions is not None else self.actions)
        now = frozenset(state)
        decisions = [self._check(now, a, KINDS) for a in actions]
        ok = [d.action for d in decisions if d.allowed]
        if ok or not actions:
            return ok, decisions
        hard = [self._check(now, a, ("hard",)) for a in actions]
        fallback = [d.action for d in hard if d.allowed]
        self.conflicts.append(Conflict(self.steps, sorted(state),
                                       {d.action: [law.formula for law in d.violated] for d in decisions},
                                       fallback))
        return fallback, hard

    def commit(self, state, action: str) -> None:
        """The action was taken: advance every law's monitor."""
        letter = self._letter(frozenset(state) | {action})
        for law, m in self.monitors:
            if m.step(letter) is _VIOLATED:
                self.broken.append((self.steps, law.formula))
                if self.restart_violated:
                    m.reset()
        self.steps += 1
