"""Wrong candidates of the kinds LLMs get wrong and that are hard to reject, added by the stage
(`dive.inject` of them per discovered candidate) to measure the Verifier without an LLM.

Each is a near miss of a candidate the discoverer found, so it names only things the
experiences contain and cannot be refused by its names:

* `off_by_one`: the amount of a requirement, a use or a gift one off (`requires 2 wood`);
* `tool_tier`: a tool of the neighbouring tier (wood <-> stone <-> iron pickaxe or sword);
* `absent_condition`: a facing or nearby condition the action does not have, naming a thing
  that is faced or within reach elsewhere in the experiences (`collect_coal near table`);
* `wrong_recipe`: a real material in a recipe that does not use it (`make_stone_pickaxe
  consumes 1 coal`).

This is the experimenter's side: it reads the ground truth, only to draw again when a near
miss happens to be true.
"""
from __future__ import annotations

import random

from .banks import Banks
from .discover import Candidate
from .dynamics import Dynamic, ground_truth

KINDS = ("off_by_one", "tool_tier", "absent_condition", "wrong_recipe")
TIERS = ("wood", "stone", "iron")  # the order of Crafter's tool names (wood_pickaxe, ...)
AMOUNTS = ("requires", "consumes", "gives")


def _tier_neighbours(name: str) -> list[str]:
    tier, _, tool = name.partition("_")
    if tier not in TIERS or not tool:
        return []
    i = TIERS.index(tier)
    return [f"{TIERS[j]}_{tool}" for j in (i - 1, i + 1) if 0 <= j < len(TIERS)]


def offers(kind: str, c: Dynamic, used: list[str]) -> bool:
    """Whether a near miss of `kind` can be made from candidate `c`."""
    return {"off_by_one": c.attribute in AMOUNTS, "tool_tier": bool(_tier_neighbours(c.arg)),
            "absent_condition": True,
            "wrong_recipe": c.attribute in ("requires", "consumes") and any(m != c.arg for m in used)}[kind]


def near_miss(kind: str, c: Dynamic, banks: Banks, used: list[str], rng: random.Random) -> Dynamic:
    """One wrong candidate of `kind` made from the candidate `c` (which `offers` it; a
    candidate means an action was seen, so something was faced).
    `used`: the materials some discovered candidate says an action uses up."""
    if kind == "off_by_one":
        return Dynamic(c.element, c.attribute, c.arg, c.value + (1 if c.value == 1 else rng.choice((-1, 1))))
    if kind == "tool_tier":
        return Dynamic(c.element, c.attribute, rng.choice(_tier_neighbours(c.arg)), c.value)
    if kind == "absent_condition":
        seen = {"near": sorted({t for xs in banks.actions.values() for x in xs for t in x.near}),
                "faces": sorted({x.facing for xs in banks.actions.values() for x in xs if x.facing})}
        attribute = rng.choice([a for a in ("near", "faces") if seen[a]])
        return Dynamic(c.element, attribute, rng.choice(seen[attribute]))
    return Dynamic(c.element, c.attribute, rng.choice([m for m in used if m != c.arg]), c.value)


def inject(found: list[Candidate], banks: Banks, rate: float, rng: random.Random, step: int = 0) -> list[Candidate]:
    """round(rate * len(found)) wrong candidates, the kinds in turn, each a near miss of a
    discovered candidate that offers it; none of them true nor already proposed (a kind with
    no fresh near miss left is passed over after a while)."""
    n = round(rate * len(found))
    if not n:
        return []
    truth = ground_truth()
    have = {c.dynamic for c in found}
    used = sorted({c.dynamic.arg for c in found if c.dynamic.attribute == "consumes"})
    pools = {kind: [c.dynamic for c in found if offers(kind, c.dynamic, used)] for kind in KINDS}
    out: list[Candidate] = []
    tries = 0
    while len(out) < n and tries < 50 * n:
        kind = KINDS[tries % len(KINDS)]
        tries += 1
        if not pools[kind]:
            continue
        d = near_miss(kind, rng.choice(pools[kind]), banks, used, rng)
        if d in truth or d in have:
            continue
        have.add(d)
        out.append(Candidate(d, kind, 0, step))
    return out
