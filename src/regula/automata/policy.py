"""A DFA run as a policy: from the current state, the next symbol on a shortest path to an
accepting state; a symbol that fails in the environment is dropped for the episode."""
from __future__ import annotations

from collections import deque

from .dfa import DFA


class DFAPolicy:
    def __init__(self, dfa: DFA):
        self.dfa = dfa
        self.reset()

    def reset(self) -> None:
        self.state = self.dfa.initial
        self.dropped: set[tuple[int, str]] = set()  # (state, symbol) edges that failed
        self.trace: list = []

    @property
    def done(self) -> bool:
        return self.state in self.dfa.accepting

    def plan(self) -> list | None:
        """A shortest symbol sequence to acceptance avoiding dropped edges; None if none left."""
        if self.done:
            return []
        parent = {self.state: None}
        queue = deque([self.state])
        while queue:
            s = queue.popleft()
            for sym, t in zip(self.dfa.alphabet, self.dfa.delta[s]):
                if (s, sym) in self.dropped or t in parent:
                    continue
                parent[t] = (s, sym)
                if t in self.dfa.accepting:
                    path = []
                    while parent[t] is not None:
                        t, sym2 = parent[t]
                        path.append(sym2)
                    return path[::-1]
                queue.append(t)
        return None

    def next_symbol(self):
        """The next symbol to execute, or None when no accepting state is reachable
        (`why_stuck()` says why)."""
        path = self.plan()
        return path[0] if path else None

    def advance(self, symbol) -> None:
        self.trace.append(symbol)
        self.state = self.dfa.step(self.state, symbol)

    def fail(self, symbol) -> None:
        """Executing `symbol` failed in the environment: never plan it from this state again."""
        self.dropped.add((self.state, symbol))

    def why_stuck(self) -> str:
        if self.done:
            return "accepting state reached"
        if self.plan() is None:
            dropped = sorted(sym for s, sym in self.dropped if s == self.state)
            return ("no accepting state is reachable from state "
                    f"{self.dfa.name(self.state)}" + (f" (failed here: {', '.join(dropped)})" if dropped else ""))
        return "not stuck"
