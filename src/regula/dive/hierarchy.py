"""The upper levels of DiVE's hierarchy: objects, subtasks, subgoals.

* Objects (B^O): what appears together (Y is in view in at least `together` of the
  observations with X, and at least twice as often as overall) and when (X is in view at
  night at least twice as often as overall). Verified on fresh observations (the
  exploration episodes): the same relation must hold there.
* Subtasks (B^ST): per achievement, the steps it took (median primitive actions), the
  preconditions (what held at every start), the outcomes (the same inventory change every
  time) and the termination (what became true every time). Preconditions are verified on
  all segments, and one that holds nearly everywhere anyway has no evidence (as for
  requirements). Scored against the propositions Crafter's hard laws need (data.yaml).
* Subgoals (B^SG): the order; a pair that contradicts data.yaml's dependencies (an
  achievement placed before one its shortest plan needs) is counted.
"""
from __future__ import annotations

import random
from statistics import median

from regula import envs

from .banks import Banks

CRAFTER = envs.get("crafter")

STATE = ("has_", "near_")  # subtask preconditions: holdings and stations within reach, and maps


def _relevant(p: str) -> bool:
    return p.startswith(STATE) or p.endswith("_on_map")


def object_relations(banks: Banks, together: float = 0.8) -> set[tuple]:
    """{("with", X, Y)} and {("at_night", X, "")} that hold in `banks`."""
    obs = [o for xs in banks.objects.values() for o in xs]
    if not obs:
        return set()
    views = {(seed, t): (view, night) for seed, t, view, night in obs}
    n = len(views)
    share = {}
    for view, _ in views.values():
        for y in view:
            share[y] = share.get(y, 0) + 1 / n
    night_share = sum(night for _, night in views.values()) / n
    out = set()
    for x, xs in banks.objects.items():
        k = len(xs)
        if k < 5:
            continue
        for y in sorted(share):
            if y == x:
                continue
            p = sum(y in view for _, _, view, _ in xs) / k
            if p >= together and p >= 2 * share[y]:
                out.add(("with", x, y))
        if night_share and sum(night for *_, night in xs) / k >= 2 * night_share:
            out.add(("at_night", x, ""))
    return out


def subtask_dynamics(banks: Banks, fresh: Banks, samples: int = 8, seed: int = 0, chance: float = 0.05) -> dict:
    """Per achievement: discovered on a sample of `banks`, verified on every segment of `fresh`
    (which should hold more than the demonstrations: their planner's habits look like needs)."""
    rng = random.Random(f"subtasks:{seed}")
    everywhere = [s.before for xs in fresh.subtasks.values() for s in xs]
    out = {}
    for name, sample_from in sorted(banks.subtasks.items()):
        segs = fresh.subtasks.get(name, sample_from)
        sample = rng.sample(sample_from, min(samples, len(sample_from)))
        pre = set.intersection(*(set(p for p in s.before if _relevant(p)) for s in sample))
        kept, dropped = [], []
        for p in sorted(pre):
            if not all(p in s.before for s in segs):
                dropped.append((p, "false at the start of a fresh segment"))
                continue
            base = sum(p in b for b in everywhere) / len(everywhere)
            if base ** len(segs) > chance:
                dropped.append((p, f"true at {base:.0%} of all starts: no evidence it is needed"))
                continue
            kept.append(p)
        outcomes = {k: v for k, v in sample[0].delta.items()
                    if all(s.delta.get(k) == v for s in sample) and all(s.delta.get(k) == v for s in segs)}
        became = set.intersection(*(set(s.after - s.before) for s in sample + segs))
        out[name] = {"segments": len(segs), "steps": median(s.steps for s in segs), "preconditions": kept,
                     "rejected": dropped, "outcomes": outcomes,
                     "termination": sorted(p for p in became if _relevant(p)) + [f"achievement {name}"]}
    return out


def subtask_truth() -> dict[str, set[str]]:
    """What Crafter's hard laws (data.yaml) say each skill needs, as propositions."""
    need: dict = {}
    for law in CRAFTER.hard_laws():
        body = law.parsed.args[0]
        cond, act = body.args
        atoms = cond.args[0].atoms() if cond.op == "not" else cond.atoms()
        need.setdefault(act.args[0].name, set()).update(atoms)
    return need


def score_subtasks(found: dict) -> dict:
    truth = subtask_truth()
    pairs = {(k, p) for k, v in found.items() for p in v["preconditions"] if k in truth}
    expected = {(k, p) for k in found if k in truth for p in truth[k]}
    hit = len(pairs & expected)
    return {"preconditions": len(pairs), "correct": hit, "expected": len(expected),
            "precision": round(hit / len(pairs), 4) if pairs else None,
            "recall": round(hit / len(expected), 4) if expected else None}


def order_violations(sequence: list[str]) -> list[tuple[str, str]]:
    """(a, b) with a before b in the sequence although b's shortest plan needs a first."""
    out = []
    for i, a in enumerate(sequence):
        if a not in CRAFTER.rules.recipes:
            continue
        needs = set(CRAFTER.shortest_plan(a)[:-1])
        out += [(a, b) for b in sequence[i + 1:] if b in needs]
    return out
