"""What a critic's proposal must pass to become a law; every rejection is kept with its reason.

A proposal must parse, have the shape `G(phi_s -> X(phi_a))` over the model's propositions and
actions, be grounded (phi_s true in some observed state), be new, and leave at least one
action in every observed state together with the laws already kept (no over-constraint).
The number of critic laws stays within the paper's bound (Theorem 1): at most one per
distinct state-action pair in the trajectories the critic read.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from regula.logic.laws import SOURCES, Law, LawError
from regula.logic.parser import FormulaError

from .critic import CriticOutput, Evidence
from .form import ShapeError, normalise, read


@dataclass
class GateResult:
    laws: list  # the critic's laws after this round (kept + accepted)
    accepted: list = field(default_factory=list)
    rejected: list = field(default_factory=list)  # {"formula", "source", "reason"}
    removed: list = field(default_factory=list)  # {"formula", "reason"}
    bound: int = 0

    def to_json(self) -> dict:
        return {"accepted": [law.to_json() for law in self.accepted], "rejected": self.rejected,
                "removed": self.removed, "bound": self.bound, "laws": len(self.laws)}


def _example(state) -> str:
    return "{" + ", ".join(sorted(state)) + "}"


def gate(out: CriticOutput, ev: Evidence, iteration: int, critic: str) -> GateResult:
    model = ev.model
    atoms, actions = model.state_atoms, model.actions
    result = GateResult(laws=[])
    # Removals first: the critic's relaxations make room for its refinements.
    drop = {}
    for formula, reason in out.removals:
        try:
            text = normalise(formula, atoms, actions)
        except (FormulaError, ShapeError) as exc:
            result.rejected.append({"formula": formula, "source": "removal", "reason": f"unreadable: {exc}"})
            continue
        if not any(law.formula == text for law in ev.soft):
            result.rejected.append({"formula": formula, "source": "removal",
                                    "reason": "asks to remove a law that is not a critic law"})
            continue
        drop[text] = reason
    kept = [law for law in ev.soft if law.formula not in drop]
    result.removed = [{"formula": f, "reason": r} for f, r in drop.items()]
    states = ev.observed_states()
    allowed = {s: set(actions) for s in states}
    for law in list(ev.hard) + kept:
        sa = read(law, atoms, actions)
        for s in states:
            if sa.applies(s):
                allowed[s] = {a for a in allowed[s] if sa.permits(a)}
    result.bound = len({(frozenset(r["props_before"]), r["skill"]) for _, r in ev.chosen()})
    existing = {law.formula for law in list(ev.hard) + kept}
    laws = list(kept)
    for i, p in enumerate(out.proposals):
        def reject(reason: str):
            result.rejected.append({"formula": p.formula, "source": p.source, "reason": reason})
        try:
            text = normalise(p.formula, atoms, actions)
        except FormulaError as exc:
            reject(f"malformed: {exc}")
            continue
        except ShapeError as exc:
            reject(f"not of the form G(phi_s -> X(phi_a)): {exc}")
            continue
        if p.source not in SOURCES or p.source == "hand":
            reject(f"unknown source {p.source!r}; a critic law comes from "
                   "environment_failure, efficiency or over_constraint")
            continue
        if text in existing:
            reject("already a law")
            continue
        try:
            law = Law(formula=text, kind="soft", source=p.source, explanation=p.explanation,
                      name=f"{critic}_{iteration}_{i + 1}",
                      provenance={"iteration": iteration, "critic": critic, **p.grounding})
        except LawError as exc:
            reject(str(exc))
            continue
        sa = read(law, atoms, actions)
        where = [s for s in states if sa.applies(s)]
        if not where:
            reject(f"ungrounded: phi_s holds in none of the {len(states)} observed states")
            continue
        stuck = [s for s in where if not any(sa.permits(a) for a in allowed[s])]
        if stuck:
            reject(f"over-constrains {len(stuck)} observed state{'s' if len(stuck) > 1 else ''}: with the "
                   f"kept laws no action would be left, e.g. in {_example(stuck[0])}")
            continue
        if len(laws) >= result.bound:
            reject(f"over the bound: at most {result.bound} critic laws (distinct state-action pairs read)")
            continue
        for s in where:
            allowed[s] = {a for a in allowed[s] if sa.permits(a)}
        laws.append(law)
        existing.add(text)
        result.accepted.append(law)
    result.laws = laws
    return result
