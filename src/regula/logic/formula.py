"""LTL formulas as interned immutable nodes (identity is equality, hashing is free).

Operators follow Spot's syntax: ! & | -> <-> xor X X[!] F G U R W M true false.
"""
from __future__ import annotations

from regula.errors import RegulaError

UNARY = ("not", "X", "Xs", "F", "G")  # Xs is the strong next X[!]
BINARY = ("and", "or", "implies", "equiv", "xor", "U", "R", "W", "M")
TEMPORAL_BINARY = ("U", "R", "W", "M")
SYMBOL = {"not": "!", "X": "X", "Xs": "X[!]", "F": "F", "G": "G", "and": "&", "or": "|",
          "implies": "->", "equiv": "<->", "xor": "xor", "U": "U", "R": "R", "W": "W", "M": "M"}
# Binding strength, loosest first (measured against Spot's parser: see tests).
PRECEDENCE = {"implies": 1, "equiv": 1, "or": 2, "xor": 3, "and": 4, "U": 5, "R": 5, "W": 5, "M": 5}
RIGHT_ASSOC = {"implies", "equiv", "U", "R", "W", "M"}


class Formula:
    __slots__ = ("op", "args", "name", "__weakref__")
    _table: dict = {}

    def __new__(cls, op: str, args: tuple = (), name: str | None = None):
        key = (op, args, name)
        node = cls._table.get(key)
        if node is None:
            node = object.__new__(cls)
            node.op, node.args, node.name = op, args, name
            cls._table[key] = node
        return node

    def __reduce__(self):  # pickles rebuild through the intern table
        return (Formula, (self.op, self.args, self.name))

    def atoms(self) -> frozenset[str]:
        if self.op == "ap":
            return frozenset([self.name])
        out = frozenset()
        for a in self.args:
            out |= a.atoms()
        return out

    def __str__(self) -> str:
        return to_str(self)

    def __repr__(self) -> str:
        return f"Formula({to_str(self)!r})"


class FormulaError(RegulaError):
    """A formula that cannot be used: malformed, or past one of the limits below. The message
    is one line: what is wrong, the column where there is one, and the text (shortened)."""

    def __init__(self, message: str, text: str | None = None, column: int | None = None):
        self.reason, self.text, self.column = message, text, column
        if text is None:
            super().__init__(message)
        elif column is None:
            super().__init__(f"{message}: {_excerpt(text, 0)!r}")
        else:
            super().__init__(f"{message} at column {column + 1} of {_excerpt(text, column)!r}")


def _excerpt(text: str, column: int, width: int = 60) -> str:
    if len(text) <= width:
        return text
    start = max(0, min(column - width // 2, len(text) - width))
    return ("..." if start else "") + text[start:start + width] + ("..." if start + width < len(text) else "")


# Limits. On the text, only what keeps the parser and the recursive passes within Python's
# stack: any formula the grammar accepts within them is taken, whatever its operators.
MAX_CHARS = 1000
MAX_DEPTH = 50  # operators nested: the parser takes ~10 frames of Python's stack a level, progression ~8
# What compiling and monitoring cost is bounded instead, counted as the work is done (an
# automaton, Spot's as well as ours, can double with each temporal operator: a law
# `G(a | X X ... X b)` with 18 X has 2^18 states and took 56 s and 1.1 GB before any bound).
# The native monitor builds its whole automaton when it is made, so a law that loads never
# reaches them while it monitors; past them, a monitor that is not a law's is built lazily and
# they bound what its runs make (`monitor.Monitor`); Spot's is bounded by its automaton's size.
MAX_STATES = 10_000  # automaton states one monitor builds (the 195 standard patterns need at most 76)
MAX_MOVES = 250_000  # automaton moves (state x letter) one monitor computes or one search takes (~1-5 s at most)
MAX_CLAUSES = 1000  # clauses of one obligation in disjunctive normal form (an xor chain of n atoms has 2^n-1)
MAX_PAIRS = 20_000  # clause pairs one conjunction of obligations forms before subsumption
# The counts bound what is built, not what one move costs: a move between obligations of
# hundreds of clauses can take milliseconds (most take 5-20 us, ~0.5 KB kept a move). A
# backstop, the one bound not counted in work: seconds one compile or search takes, of its
# thread's CPU time (on wall time, a busy machine refused formulas that cost 0.1-2 s alone).
MAX_SECONDS = 5.0


def height(f: Formula) -> int:
    """Operators nested (`a & b & c` nests 2), without recursion: the formula may be past the limit."""
    memo, todo = {}, [f]
    while todo:
        g = todo[-1]
        pending = [a for a in g.args if a not in memo]
        if pending:
            todo.extend(pending)
            continue
        memo[g] = 1 + max((memo[a] for a in g.args), default=-1)
        todo.pop()
    return memo[f]


TRUE = Formula("true")
FALSE = Formula("false")


def ap(name: str) -> Formula:
    return Formula("ap", (), name)


def unary(op: str, a: Formula) -> Formula:
    return Formula(op, (a,))


def binary(op: str, a: Formula, b: Formula) -> Formula:
    return Formula(op, (a, b))


def to_str(f: Formula) -> str:
    """Spot-syntax text that parses back to the same formula."""
    if f.op == "ap":
        return f.name
    if f.op in ("true", "false"):
        return f.op
    if f.op in UNARY:
        (a,) = f.args
        inner = to_str(a)
        if a.op in BINARY:
            inner = f"({inner})"
        return f"{SYMBOL[f.op]}{'' if f.op == 'not' else ' ' if a.op not in BINARY else ''}{inner}"
    a, b = f.args
    p = PRECEDENCE[f.op]
    left, right = to_str(a), to_str(b)
    if a.op in BINARY and (PRECEDENCE[a.op] < p or (PRECEDENCE[a.op] == p and f.op in RIGHT_ASSOC)):
        left = f"({left})"
    if b.op in BINARY and (PRECEDENCE[b.op] < p or (PRECEDENCE[b.op] == p and f.op not in RIGHT_ASSOC)):
        right = f"({right})"
    return f"{left} {SYMBOL[f.op]} {right}"
