"""LTL formulas as interned immutable nodes (identity is equality, hashing is free).

Operators follow Spot's syntax: ! & | -> <-> xor X X[!] F G U R W M true false.
"""
from __future__ import annotations

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
