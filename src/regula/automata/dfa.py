"""A complete DFA over an explicit alphabet, with JSON, DOT and AALpy conversion.

States are 0..n-1 and the transition table is total by construction, so every operation
can assume completeness. AALpy's `Dfa` (used for learning) converts both ways.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from regula.errors import RegulaError
from regula.io import write_atomic


class AutomatonError(RegulaError):
    """A malformed automaton (file or construction); the message names where."""


class AlphabetError(AutomatonError):
    """Two automata over different alphabets; the message names the symbols that differ."""


@dataclass(frozen=True)
class DFA:
    alphabet: tuple  # symbols, in a fixed order
    delta: tuple  # delta[state][i] = successor on alphabet[i]
    initial: int
    accepting: frozenset
    names: tuple = ()  # optional state names, for display

    def __post_init__(self):
        n = len(self.delta)
        if len(set(self.alphabet)) != len(self.alphabet):
            raise AutomatonError("alphabet has repeated symbols")
        if not 0 <= self.initial < max(n, 1) or n == 0:
            raise AutomatonError(f"initial state {self.initial} is not one of the {n} states")
        for s, row in enumerate(self.delta):
            if len(row) != len(self.alphabet):
                raise AutomatonError(f"state {s} has {len(row)} transitions for {len(self.alphabet)} symbols "
                                     "(a DFA here is complete)")
            for t in row:
                if not 0 <= t < n:
                    raise AutomatonError(f"state {s} goes to {t}, which is not a state")
        bad = [s for s in self.accepting if not 0 <= s < n]
        if bad:
            raise AutomatonError(f"accepting states {bad} are not states")
        object.__setattr__(self, "_index", {a: i for i, a in enumerate(self.alphabet)})

    # -- construction --------------------------------------------------------------------------
    @classmethod
    def from_table(cls, alphabet, table: dict, initial, accepting) -> "DFA":
        """From {state: {symbol: state}} with any hashable state names (missing moves go to a sink)."""
        alphabet = tuple(alphabet)
        order = [initial] + sorted((s for s in table if s != initial), key=str)
        for row in table.values():
            for t in row.values():
                if t not in order:
                    order.append(t)
        index = {s: i for i, s in enumerate(order)}
        sink = None
        delta = []
        for s in order:
            row = []
            for a in alphabet:
                t = table.get(s, {}).get(a)
                if t is None:
                    if sink is None:
                        sink = len(order)
                    row.append(sink)
                else:
                    row.append(index[t])
            delta.append(tuple(row))
        names = [str(s) for s in order]
        if sink is not None:
            delta.append(tuple([sink] * len(alphabet)))
            names.append("sink")
        return cls(alphabet, tuple(delta), 0, frozenset(index[s] for s in accepting), tuple(names))

    @property
    def size(self) -> int:
        return len(self.delta)

    def step(self, state: int, symbol) -> int:
        try:
            return self.delta[state][self._index[symbol]]
        except KeyError:
            from regula.errors import UnknownNameError
            raise UnknownNameError("symbol", str(symbol), [str(a) for a in self.alphabet]) from None

    def run(self, word, state: int | None = None) -> int:
        state = self.initial if state is None else state
        for a in word:
            state = self.step(state, a)
        return state

    def accepts(self, word) -> bool:
        return self.run(word) in self.accepting

    def name(self, state: int) -> str:
        return self.names[state] if self.names else str(state)

    # -- AALpy -------------------------------------------------------------------------------
    @classmethod
    def from_aalpy(cls, dfa) -> "DFA":
        alphabet = tuple(dfa.get_input_alphabet())
        # Walk from the initial state: AALpy's state list may hold unreachable states.
        seen, order = {id(dfa.initial_state)}, [dfa.initial_state]
        for s in order:
            for t in s.transitions.values():
                if id(t) not in seen:
                    seen.add(id(t))
                    order.append(t)
        ids = {id(s): i for i, s in enumerate(order)}
        table = {i: {a: ids[id(s.transitions[a])] for a in alphabet if a in s.transitions}
                 for i, s in enumerate(order)}
        accepting = {ids[id(s)] for s in order if s.is_accepting}
        return cls.from_table(alphabet, table, 0, accepting)

    def to_aalpy(self):
        from aalpy.automata import Dfa, DfaState
        states = [DfaState(f"q{i}", is_accepting=i in self.accepting) for i in range(self.size)]
        for i, row in enumerate(self.delta):
            for a, t in zip(self.alphabet, row):
                states[i].transitions[a] = states[t]
        return Dfa(states[self.initial], states)

    # -- JSON ----------------------------------------------------------------------------------
    def to_json(self) -> dict:
        return {"alphabet": list(self.alphabet), "initial": self.initial,
                "accepting": sorted(self.accepting),
                "transitions": {str(s): {a: t for a, t in zip(self.alphabet, row)} for s, row in enumerate(self.delta)},
                **({"names": list(self.names)} if self.names else {})}

    def dumps(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True, indent=1) + "\n"

    def save(self, path: str | Path) -> Path:
        return write_atomic(path, self.dumps())

    @classmethod
    def from_json(cls, data, where: str = "automaton") -> "DFA":
        def need(obj, key, kind):
            if not isinstance(obj, dict) or key not in obj:
                raise AutomatonError(f"{where}: missing field `{key}`")
            if not isinstance(obj[key], kind):
                raise AutomatonError(f"{where}: field `{key}` must be {kind.__name__ if isinstance(kind, type) else 'a ' + kind[0].__name__}")
            return obj[key]
        alphabet = need(data, "alphabet", list)
        initial = need(data, "initial", int)
        accepting = need(data, "accepting", list)
        transitions = need(data, "transitions", dict)
        n = len(transitions)
        delta = []
        for s in range(n):
            row = transitions.get(str(s))
            if not isinstance(row, dict):
                raise AutomatonError(f"{where}: field `transitions.{s}` is missing (states are 0..{n - 1})")
            missing = [a for a in alphabet if a not in row]
            if missing:
                raise AutomatonError(f"{where}: field `transitions.{s}` has no move on {', '.join(map(str, missing))}")
            extra = [a for a in row if a not in alphabet]
            if extra:
                raise AutomatonError(f"{where}: field `transitions.{s}` moves on {', '.join(extra)}, "
                                     "which is not in `alphabet`")
            delta.append(tuple(row[a] for a in alphabet))
        try:
            return cls(tuple(alphabet), tuple(delta), initial, frozenset(accepting), tuple(data.get("names", ())))
        except AutomatonError as exc:
            raise AutomatonError(f"{where}: {exc}") from None

    @classmethod
    def load(cls, path: str | Path) -> "DFA":
        path = Path(path)
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            raise AutomatonError(f"{path}: no such file") from None
        except json.JSONDecodeError as exc:
            raise AutomatonError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
        return cls.from_json(data, str(path))

    # -- DOT -----------------------------------------------------------------------------------
    def to_dot(self, title: str = "") -> str:
        lines = ["digraph dfa {", "  rankdir=LR;", '  node [shape=circle, fontname="Helvetica"];',
                 '  edge [fontname="Helvetica", fontsize=10];']
        if title:
            lines.append(f'  label="{title}"; labelloc=t;')
        lines += ["  init [shape=point];", f"  init -> {self.initial};"]
        for s in range(self.size):
            shape = "doublecircle" if s in self.accepting else "circle"
            lines.append(f'  {s} [shape={shape}, label="{self.name(s)}"];')
        edges: dict = {}
        for s, row in enumerate(self.delta):
            for a, t in zip(self.alphabet, row):
                edges.setdefault((s, t), []).append(str(a))
        for (s, t), symbols in sorted(edges.items()):
            label = "*" if len(symbols) == len(self.alphabet) else ", ".join(symbols)
            lines.append(f'  {s} -> {t} [label="{label}"];')
        lines.append("}")
        return "\n".join(lines) + "\n"

    def save_dot(self, path: str | Path, title: str = "", svg: bool = True) -> list[Path]:
        """Write DOT, and (with `svg`) its drawing beside it."""
        from regula.logic.render import write_svg
        dot = self.to_dot(title)
        path = write_atomic(path, dot)
        return [path] + ([write_svg(dot, path.with_suffix(".svg"))] if svg else [])

    def rename(self, mapping: dict) -> "DFA":
        """Substitute symbols (template adaptation: `collect_wood` -> `collect_stone`); symbols
        not in `mapping` stay. The result must still have distinct symbols."""
        unknown = sorted(set(mapping) - set(self.alphabet), key=str)
        if unknown:
            raise AlphabetError(f"cannot rename {', '.join(map(str, unknown))}: not in the alphabet "
                                f"{', '.join(map(str, self.alphabet))}")
        new = tuple(mapping.get(a, a) for a in self.alphabet)
        if len(set(new)) != len(new):
            clash = sorted({str(a) for a in new if new.count(a) > 1})
            raise AlphabetError(f"renaming would merge symbols into {', '.join(clash)}")
        return DFA(new, self.delta, self.initial, self.accepting, self.names)
