"""The Verifier: keep a candidate only if it holds across freshly sampled experiences and
conflicts with no verified dynamic; every rejection is kept with its evidence.

"Holds" per attribute, over fresh successful transitions of the action: `requires n x` —
every one held at least n x; `consumes` / `gives` — every one changed x by exactly that;
`near x` — x was within reach in every one; `faces x` — every one faced x, for an action
named by what it faces (`do` on a tree collects wood), else (a place action: a table goes on
grass, sand or path) the action changed the faced cell in every one and some success, fresh or
not, was on x; `leaves x` — x was faced after every one whose next observation is known. A
candidate naming something no experience contains (an item never held nor changed, a thing
never faced nor within reach) is rejected outright: the Verifier knows the game's names from
the experiences only, never from data.yaml.

Holding is not enough for a requirement. A material (an item some experience used up) is
needed by an action that uses it; held but not used, nothing shows it is needed. For the
rest (tools, body stats): if the item is held in a share b of all
experiences (of any action), n successes all holding it happen by chance with probability
b^n; above `chance` (0.05) there is no evidence it is needed (food >= 1 is held almost
always). And one that another kept requirement of the same action implies in every
experience (a stone pickaxe is only ever held with a wood pickaxe) cannot be told apart
from it by any experience; both are dropped, keeping the most specific claim. Conflicts: `gives` and `consumes` of the same
item by the same action, and two amounts for one requirement (the larger that still holds
is kept: the least amount seen is the tightest claim; but of an item the action uses up, the
amount it uses).
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from .banks import Banks
from .discover import Candidate, named_by_facing


@dataclass
class Verdicts:
    verified: list = field(default_factory=list)  # [Candidate]
    rejected: list = field(default_factory=list)  # [{"candidate": ..., "reason": ..., "evidence": ...}]

    def to_json(self) -> dict:
        return {"verified": [c.to_json() for c in self.verified],
                "rejected": [{**r["candidate"].to_json(), "reason": r["reason"], "evidence": r["evidence"]}
                             for r in self.rejected]}


def names_seen(banks: Banks) -> set[str]:
    """Every name the experiences contain: items held or changed, things faced (before and
    after) or within reach."""
    out: set[str] = set()
    for xs in banks.actions.values():
        for x in xs:
            out |= {k for k, v in x.inventory.items() if v} | set(x.delta) | set(x.near) | {x.facing, x.after}
    return out - {""}


class Verifier:
    def __init__(self, samples: int = 16, seed: int = 0, chance: float = 0.05):
        self.samples, self.seed, self.chance = samples, seed, chance

    def verify(self, candidates: list[Candidate], banks: Banks, step: int = 0) -> Verdicts:
        rng = random.Random(f"verify:{self.seed}:{step}")
        out = Verdicts()
        names = names_seen(banks)
        seen: dict = {}
        for c in candidates:
            seen.setdefault(c.dynamic, c)
        holding = []
        for c in sorted(seen.values(), key=lambda c: c.dynamic):
            d = c.dynamic
            if d.arg not in names:
                out.rejected.append({"candidate": c, "reason": f"names {d.arg!r}, which no experience contains",
                                     "evidence": ""})
                continue
            successes = banks.successes(d.element)
            if not successes:
                out.rejected.append({"candidate": c, "reason": f"no successful {d.element} to check against",
                                     "evidence": ""})
                continue
            fresh = rng.sample(successes, min(self.samples, len(successes)))
            problem = _counterexample(d, fresh) or _not_faced(d, fresh, successes)
            if problem:
                out.rejected.append({"candidate": c, "reason": problem[0], "evidence": problem[1]})
            else:
                holding.append(c)
        kept = _resolve_conflicts(holding, out)
        out.verified = sorted(_minimal(kept, banks, out, self.chance), key=lambda c: c.dynamic)
        return out


def _not_faced(d, fresh, successes) -> tuple[str, str] | None:
    """`faces x` of an action not named by what it faces: one of the cells it acts on."""
    if d.attribute != "faces" or named_by_facing(d.element):
        return None
    same = next((x for x in fresh if x.after and x.after == x.facing), None)
    if same is not None:
        return (f"left the {same.facing} it faced as it was: it does not act on what it faces", same.where())
    if not any(x.facing == d.arg for x in successes):
        return (f"no success faced {d.arg}", "")
    return None


def _counterexample(d, fresh) -> tuple[str, str] | None:
    for x in fresh:
        if d.attribute == "faces" and named_by_facing(d.element) and x.facing != d.arg:
            return (f"succeeded facing {x.facing}", x.where())
        if d.attribute == "requires" and x.inventory.get(d.arg, 0) < d.value:
            return (f"succeeded holding {x.inventory.get(d.arg, 0)} {d.arg}", x.where())
        if d.attribute == "consumes" and x.delta.get(d.arg, 0) != -d.value:
            return (f"changed {d.arg} by {x.delta.get(d.arg, 0)}, not -{d.value}", x.where())
        if d.attribute == "gives" and x.delta.get(d.arg, 0) != d.value:
            return (f"changed {d.arg} by {x.delta.get(d.arg, 0)}, not +{d.value}", x.where())
        if d.attribute == "near" and d.arg not in x.near:
            return (f"succeeded with no {d.arg} within reach", x.where())
        if d.attribute == "leaves" and x.after and x.after != d.arg:
            return (f"left {x.after} faced", x.where())
    return None


def _resolve_conflicts(holding: list[Candidate], out: Verdicts) -> list[Candidate]:
    by_key: dict = {}
    for c in holding:
        d = c.dynamic
        by_key.setdefault((d.element, d.attribute, d.arg), []).append(c)
    uses = {(c.dynamic.element, c.dynamic.arg): c.dynamic.value for c in holding if c.dynamic.attribute == "consumes"}
    kept = []
    for (element, attribute, arg), group in sorted(by_key.items()):
        # What an action uses up it needs in that amount; more held every time is the habit of
        # whoever played (a planner that gathers ahead), not a need any experience shows.
        used = uses.get((element, arg)) if attribute == "requires" else None
        group.sort(key=lambda c: (c.dynamic.value != used, -c.dynamic.value))
        kept.append(group[0])
        for c in group[1:]:
            reason = (f"{element} uses up {used} {arg}: nothing shows it needs more" if used == group[0].dynamic.value
                      else f"conflicts with verified {group[0].dynamic.text()}")
            out.rejected.append({"candidate": c, "reason": reason, "evidence": ""})
    final = []
    keys = {(c.dynamic.element, c.dynamic.attribute, c.dynamic.arg) for c in kept}
    for c in kept:
        d = c.dynamic
        other = "consumes" if d.attribute == "gives" else "gives" if d.attribute == "consumes" else None
        if other and (d.element, other, d.arg) in keys:
            out.rejected.append({"candidate": c, "reason": f"conflicts: {d.element} both gives and consumes {d.arg}",
                                 "evidence": ""})
            continue
        final.append(c)
    return final


def _minimal(kept: list[Candidate], banks: Banks, out: Verdicts, chance: float) -> list[Candidate]:
    """Drop requirements and nearby conditions without evidence or implied by a stronger
    claim (see the module doc)."""
    states = [x.inventory for xs in banks.actions.values() for x in xs]

    near_sets = [set(x.near) for xs in banks.actions.values() for x in xs]
    faced = {(c.dynamic.element, c.dynamic.arg) for c in kept if c.dynamic.attribute == "faces"}

    def held(inv, d):
        return inv.get(d.arg, 0) >= d.value

    drop = set()
    for c in kept:  # nearby: the same two tests
        d = c.dynamic
        if d.attribute != "near":
            continue
        if (d.element, d.arg) in faced:
            drop.add(c)
            out.rejected.append({"candidate": c, "reason": f"implied by {d.element} faces {d.arg} (what is faced "
                                 "is within reach)", "evidence": ""})
            continue
        base = sum(d.arg in s for s in near_sets) / len(near_sets) if near_sets else 1.0
        n = len(banks.successes(d.element))
        if base ** n > chance:
            drop.add(c)
            out.rejected.append({"candidate": c, "reason": f"{d.arg} is within reach in {base:.0%} of all "
                                 f"experiences: {n} successes near it are chance (p={base ** n:.2f})",
                                 "evidence": ""})

    def implies(a, b) -> bool:
        return all(held(s, b) for s in states if held(s, a))

    reqs: dict = {}
    for c in kept:
        if c.dynamic.attribute == "requires":
            reqs.setdefault(c.dynamic.element, []).append(c)
    materials = {k for xs in banks.actions.values() for x in xs for k, v in x.delta.items() if v < 0}
    for element, group in reqs.items():
        consumed = {c.dynamic.arg for c in kept
                    if c.dynamic.element == element and c.dynamic.attribute == "consumes"}
        for c in group:
            d = c.dynamic
            if d.arg in consumed:
                continue  # what an action uses up, it needs: the change itself is the evidence
            if d.arg in materials:
                drop.add(c)
                out.rejected.append({"candidate": c, "reason": f"{d.arg} is a material (experiences use it up) "
                                     f"that {element} does not use: nothing shows it is needed", "evidence": ""})
                continue
            base = sum(held(s, d) for s in states) / len(states) if states else 1.0
            n = len(banks.successes(element))
            if base ** n > chance:
                drop.add(c)
                out.rejected.append({"candidate": c, "reason": f"{d.value} {d.arg} is held in {base:.0%} of all "
                                     f"experiences: {n} successes holding it are chance (p={base ** n:.2f})",
                                     "evidence": ""})
                continue
            stronger = [o for o in group if o is not c and o not in drop and implies(o.dynamic, d)
                        and not implies(d, o.dynamic)]
            if stronger:
                drop.add(c)
                out.rejected.append({"candidate": c, "reason": f"implied by {stronger[0].dynamic.text()} in every "
                                     "experience: no experience tells them apart", "evidence": ""})
    return [c for c in kept if c not in drop]
