"""A parser for Spot's LTL syntax; errors name the column. The text limits (formula.py: length
and nesting, which bound the parser's own stack) are checked here; how many operators or atoms
a formula has is not a limit: what it costs to compile is bounded where it is compiled (monitor.py).

Precedence, loosest first: `-> <->` (right-associative), `|`, `xor`, `&`, `U R W M`
(right-associative), then the prefix operators `! X X[!] F G`. Spot parses the same way
(checked in tests against `spot.formula`).
"""
from __future__ import annotations

import re

from .formula import FALSE, MAX_CHARS, MAX_DEPTH, TRUE, Formula, FormulaError, ap, binary, height, unary

TOKEN = re.compile(r"\s*(?:(?P<op><->|->|X\[!\]|[!&|()])"
                   r"|(?P<word>[A-Za-z_][A-Za-z0-9_]*?(?=X\[!\])|[A-Za-z_][A-Za-z0-9_]*)"
                   r"|(?P<num>[01])\b|(?P<bad>\S))")
PREFIX = {"!": "not", "X": "X", "X[!]": "Xs", "F": "F", "G": "G"}
TEMPORAL = {"U": "U", "R": "R", "W": "W", "M": "M"}
ATOM = re.compile(r"[a-z_][a-z0-9_]*\Z")


def _tokens(text: str):
    out, pos = [], 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            break  # only trailing whitespace is left
        kind = m.lastgroup
        start = m.start(kind)
        value = m.group(kind)
        if kind == "bad":
            raise FormulaError(f"unexpected character {value!r}", text, start)
        if kind == "num":
            kind, value = "word", {"1": "true", "0": "false"}[value]
        glued = re.fullmatch(r"([FGX]+)([a-z_][a-z0-9_]*)?", value) if kind == "word" else None
        if glued and (glued.group(2) or len(value) > 1):
            # Spot reads `GFa` as G F a: split the prefix letters off the atom.
            for k, letter in enumerate(glued.group(1)):
                out.append(("word", letter, start + k))
            if glued.group(2):
                out.append(("word", glued.group(2), start + len(glued.group(1))))
            pos = m.end()
            continue
        out.append((kind, value, start))
        pos = m.end()
    out.append(("end", "", len(text.rstrip()) if text.strip() else len(text)))
    return out


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.toks = _tokens(text)
        self.i = 0
        self.depth = 0

    def peek(self):
        return self.toks[self.i]

    def take(self):
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def fail(self, tok, message):
        raise FormulaError(message, self.text, tok[2])

    def deeper(self, sub):
        """`sub()` one nesting level down: past the limit, stop before Python's recursion does."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise FormulaError(f"formula nests deeper than {MAX_DEPTH} operators (the limit)", self.text)
        try:
            return sub()
        finally:
            self.depth -= 1

    def parse(self) -> Formula:
        if self.peek()[0] == "end":
            self.fail(self.peek(), "empty formula")
        f = self.implication()
        tok = self.peek()
        if tok[0] != "end":
            self.fail(tok, f"unexpected {tok[1]!r}")
        if height(f) > MAX_DEPTH:  # a chain `a & b & ...` nests without recursing here
            raise FormulaError(f"formula nests {height(f)} operators deep (`a & b & c` nests 2); "
                               f"the limit is {MAX_DEPTH}", self.text)
        return f

    def implication(self):  # right-associative -> and <->
        left = self.disjunction()
        tok = self.peek()
        if tok[1] in ("->", "<->") and tok[0] == "op":
            self.take()
            return binary("implies" if tok[1] == "->" else "equiv", left, self.deeper(self.implication))
        return left

    def _left_assoc(self, sub, symbol, op, kind="op"):
        left = sub()
        while self.peek()[0] == kind and self.peek()[1] == symbol:
            self.take()
            left = binary(op, left, sub())
        return left

    def disjunction(self):
        return self._left_assoc(self.exclusive, "|", "or")

    def exclusive(self):
        return self._left_assoc(self.conjunction, "xor", "xor", kind="word")

    def conjunction(self):
        return self._left_assoc(self.temporal, "&", "and")

    def temporal(self):  # right-associative U R W M
        left = self.prefix()
        tok = self.peek()
        if tok[0] == "word" and tok[1] in TEMPORAL:
            self.take()
            return binary(TEMPORAL[tok[1]], left, self.deeper(self.temporal))
        return left

    def prefix(self):
        tok = self.peek()
        if (tok[0] == "op" and tok[1] in ("!", "X[!]")) or (tok[0] == "word" and tok[1] in ("X", "F", "G")):
            self.take()
            return unary(PREFIX[tok[1]], self.deeper(self.prefix))
        return self.primary()

    def primary(self):
        tok = self.take()
        kind, value, col = tok
        if kind == "op" and value == "(":
            f = self.deeper(self.implication)
            close = self.take()
            if close[1] != ")":
                self.fail(close, "expected ')'" if close[0] != "end" else "missing ')'")
            return f
        if kind == "word":
            if value == "true":
                return TRUE
            if value == "false":
                return FALSE
            if value in TEMPORAL or value == "xor":
                self.fail(tok, f"operator {value!r} needs a formula on its left")
            if not ATOM.match(value):
                self.fail(tok, f"{value!r} is not an atom (atoms are lower case: [a-z_][a-z0-9_]*)")
            return ap(value)
        if kind == "end":
            self.fail(tok, "formula ends too early")
        self.fail(tok, f"unexpected {value!r}")


def parse(text: str) -> Formula:
    if not isinstance(text, str):
        raise FormulaError(f"a formula must be text, got {type(text).__name__}")
    if len(text) > MAX_CHARS:
        raise FormulaError(f"formula is {len(text):,} characters long; the limit is {MAX_CHARS:,}", text)
    return _Parser(text).parse()
