"""LTLCrit's law shape, `G(phi_s -> X(phi_a))`, in regula's letters.

regula's letter at step t is the state's propositions together with the action taken in that
state, so the paper's "in state phi_s, the next action satisfies phi_a" is `G(phi_s -> phi_a)`
here. A critic may write either form; both are read, and laws are stored in the letter form.
`phi_s` is over state propositions, `phi_a` over actions, and some single action must satisfy
`phi_a` (the paper's one-hot condition). `G(phi_a)` is the case `phi_s = true`.
"""
from __future__ import annotations

from dataclasses import dataclass

from regula.errors import RegulaError
from regula.logic.formula import TRUE, Formula, ap, binary, to_str, unary
from regula.logic.laws import Law
from regula.logic.parser import parse

PROPOSITIONAL = ("ap", "true", "false", "not", "and", "or", "implies", "equiv", "xor")


class ShapeError(RegulaError):
    """A law that is not of the form G(phi_s -> X(phi_a)); the message says what is wrong."""


def holds(f: Formula, letter) -> bool:
    """A propositional formula on one letter (the set of true atoms)."""
    op = f.op
    if op == "ap":
        return f.name in letter
    if op == "true":
        return True
    if op == "false":
        return False
    if op == "not":
        return not holds(f.args[0], letter)
    if op not in PROPOSITIONAL:
        raise ShapeError(f"{to_str(f)} is not propositional")
    a, b = f.args
    if op == "and":
        return holds(a, letter) and holds(b, letter)
    if op == "or":
        return holds(a, letter) or holds(b, letter)
    if op == "implies":
        return (not holds(a, letter)) or holds(b, letter)
    if op == "equiv":
        return holds(a, letter) == holds(b, letter)
    if op == "xor":
        return holds(a, letter) != holds(b, letter)
    raise ShapeError(f"{to_str(f)} is not propositional")


def _propositional(f: Formula) -> bool:
    return f.op in PROPOSITIONAL and all(_propositional(a) for a in f.args)


@dataclass(frozen=True)
class StateActionLaw:
    """A law split into its state condition and its action condition."""

    law: Law
    phi_s: Formula
    phi_a: Formula

    def applies(self, state) -> bool:
        return holds(self.phi_s, state)

    def permits(self, action: str) -> bool:
        return holds(self.phi_a, {action})

    def allows(self, state, action: str) -> bool:
        return not self.applies(state) or self.permits(action)


def split(formula: Formula | str, state_atoms, actions) -> tuple[Formula, Formula]:
    """(phi_s, phi_a) of `G(phi_s -> phi_a)` or `G(phi_s -> X phi_a)`; ShapeError otherwise."""
    f = parse(formula) if isinstance(formula, str) else formula
    if f.op != "G":
        raise ShapeError("a law must be G(phi_s -> X(phi_a)); this one does not start with G")
    body = f.args[0]
    if body.op == "implies":
        phi_s, phi_a = body.args
    else:
        phi_s, phi_a = TRUE, body
    if phi_a.op in ("X", "Xs"):
        phi_a = phi_a.args[0]
    for part, what in ((phi_s, "phi_s"), (phi_a, "phi_a")):
        if not _propositional(part):
            raise ShapeError(f"{what} ({to_str(part)}) must be a Boolean formula without temporal operators")
    actions, state_atoms = set(actions), set(state_atoms)
    wrong = sorted(phi_s.atoms() - state_atoms)
    if wrong:
        kind = "actions" if set(wrong) <= actions else "unknown atoms"
        raise ShapeError(f"phi_s may only use state propositions; it uses {kind} {', '.join(wrong)}")
    wrong = sorted(phi_a.atoms() - actions)
    if wrong:
        kind = "state propositions" if set(wrong) <= state_atoms else "unknown atoms"
        raise ShapeError(f"phi_a may only use actions; it uses {kind} {', '.join(wrong)}")
    if not any(holds(phi_a, {a}) for a in actions):
        raise ShapeError(f"no single action satisfies phi_a ({to_str(phi_a)})")
    return phi_s, phi_a


def letter_form(phi_s: Formula, phi_a: Formula) -> str:
    """The stored text: `G(phi_s -> phi_a)`, or `G(phi_a)` when phi_s is true."""
    body = phi_a if phi_s is TRUE else binary("implies", phi_s, phi_a)
    return f"G({to_str(body)})"


def read(law: Law, state_atoms, actions) -> StateActionLaw:
    phi_s, phi_a = split(law.parsed, state_atoms, actions)
    return StateActionLaw(law, phi_s, phi_a)


def normalise(text: str, state_atoms, actions) -> str:
    """A critic's formula in the stored letter form; FormulaError or ShapeError when unusable."""
    return letter_form(*split(text, state_atoms, actions))


def conjunction_text(literals: list[str]) -> Formula:
    """`a & !b & ...` from literal strings (`!b` for a negated atom)."""
    parts = [unary("not", ap(lit[1:])) if lit.startswith("!") else ap(lit) for lit in literals]
    if not parts:
        return TRUE
    f = parts[0]
    for p in parts[1:]:
        f = binary("and", f, p)
    return f


def disjunction(actions: list[str], negate: bool = False) -> Formula:
    f = None
    for a in actions:
        f = ap(a) if f is None else binary("or", f, ap(a))
    return unary("not", f) if negate else f
