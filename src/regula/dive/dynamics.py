"""World dynamics as atomic facts, and Crafter's own (data.yaml) as the ground truth.

DiVE's action-level attributes (the paper's prompts, appendix B.7.3): an action's
preconditions (facing object, nearby objects, inventory materials and tools) and outcomes
(inventory and status increases, what the faced object becomes). Each fact is one
`Dynamic(element, attribute, arg, value)`, e.g. `make_wood_pickaxe requires 1 wood`,
`make_wood_pickaxe near table`, `collect_wood faces tree`, `collect_wood gives 1 wood`,
`collect_wood leaves grass`. data.yaml read this way is the human-annotated set H† the paper
scores against; only scoring reads it (tests/test_ground_truth_readers.py).
"""
from __future__ import annotations

from dataclasses import dataclass

from regula import envs

CRAFTER = envs.get("crafter")

ATTRIBUTES = ("requires", "consumes", "gives", "near", "faces", "leaves")
NAMED = ("near", "faces", "leaves")  # attributes without an amount


@dataclass(frozen=True, order=True)
class Dynamic:
    element: str  # a data.yaml action: collect_<item>, place_<thing>, make_<tool>
    attribute: str  # one of ATTRIBUTES
    arg: str  # an item, a station or a material
    value: int = 1  # how many, for requires / consumes / gives

    def text(self) -> str:
        if self.attribute in NAMED:
            return f"{self.element} {self.attribute} {self.arg}"
        return f"{self.element} {self.attribute} {self.value} {self.arg}"

    def to_json(self) -> dict:
        return {"element": self.element, "attribute": self.attribute, "arg": self.arg, "value": self.value}

    @classmethod
    def from_json(cls, d: dict) -> "Dynamic":
        return cls(d["element"], d["attribute"], d["arg"], int(d.get("value", 1)))


def elements() -> list[str]:
    """Every action data.yaml defines dynamics for."""
    return list(CRAFTER.rules.recipes)


def ground_truth() -> set[Dynamic]:
    """H†: every fact data.yaml states about its actions in the paper's attributes: what each
    needs held, near and faced, what it uses up and gives, and what the faced cell becomes (a
    collected material's `leaves`; a placed thing where it was put). Not here: `probability`
    (a sapling comes with 1 in 10 collects: no attribute of the paper's is a chance), and
    sleeping, eating and fighting, of which data.yaml says nothing but their names."""
    out: set[Dynamic] = set()
    for r in CRAFTER.rules.recipes.values():
        if r.kind == "collect":
            out.add(Dynamic(r.skill, "faces", r.target))
            out.add(Dynamic(r.skill, "leaves", CRAFTER.rules.collect[r.target]["leaves"]))
        if r.kind == "place":
            out.add(Dynamic(r.skill, "leaves", r.target))
        for item, n in r.require.items():
            out.add(Dynamic(r.skill, "requires", item, n))
        for item, n in r.uses.items():
            out.add(Dynamic(r.skill, "requires", item, n))
            out.add(Dynamic(r.skill, "consumes", item, n))
        for item, n in r.gives.items():
            out.add(Dynamic(r.skill, "gives", item, n))
        for station in r.nearby:
            out.add(Dynamic(r.skill, "near", station))
        for material in r.where:
            out.add(Dynamic(r.skill, "faces", material))
    return out


def score(found, truth: set[Dynamic] | None = None, within: set[str] | None = None) -> dict:
    """Precision and recall of `found` against H† (the paper's P and R). With `within`, recall
    counts only the truth about those elements (what the demonstrations could show)."""
    truth = ground_truth() if truth is None else truth
    found = set(found)
    if within is not None:
        truth = {d for d in truth if d.element in within}
    hit = len(found & truth)
    return {"found": len(found), "correct": hit, "truth": len(truth),
            "precision": round(hit / len(found), 4) if found else None,
            "recall": round(hit / len(truth), 4) if truth else None}
