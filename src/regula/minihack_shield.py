"""The `minihack_shield` stage: LTLCrit's shield with the hand-written MiniHack laws
(src/regula/envs/minihack/laws.yaml), measured through the family interface alone
(`regula.ltlcrit.transfer`).

For each task of `params.minihack.shield.tasks`, on the first `shield.episodes` seeds of
`minihack.eval` (the held-out seeds; the laws were written on the dev seeds 0-9), three agents:

* `random` with no shield: the seeded random actor over the 27 skills, `shield.max_skills`
  skills at most, the baseline;
* `random` under the laws: the same actor, its refused proposals sent back to it (3 times at
  most, then a seeded draw among the allowed skills), `rollout.ShieldedActor`'s protocol;
* `expert` under the laws: the scripted expert with every skill checked first, the baseline that
  says whether the laws refuse what a correct agent needs (its skills run whatever the laws say).

Each episode is a row of data/minihack/shield/episodes.csv: success, how the agent died, skills
run, proposals refused, steps at which the shield refused anything, fallback draws, the laws that
refused (`law:n`) and who chose the skill that unlocked each achievement (`achievement:actor`,
`:replan` after a refusal, `:fallback` the shield's draw, `:expert`), so a success is credited to
what earned it. metrics/minihack_shield_detail.json sums them per task and agent;
metrics/minihack_shield.json holds the headline. The report computes the 95% Wilson intervals.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from . import envs, stages
from .io import write_csv
from .logic import Shield
from .ltlcrit.actors import RandomActor
from .ltlcrit.transfer import expert_under_shield, shielded_episode
from .stages import Paths, Work

if TYPE_CHECKING:  # the validated params (`regula.params.validate`)
    from regula.params import Params

NAME = "minihack_shield"
GOAL = "reach_stairs"  # every MiniHack task ends on the staircase down (tasks.yaml)
MAX_REPLANS = 3  # rollout.ShieldedActor's (and transfer.shielded_episode's default)
AGENTS = (("random", "none"), ("random", "laws"), ("expert", "laws"))  # (agent, shield), in the table's order
COUNTS = ("skills", "refused", "refused_steps", "fallback", "broken")


def rows_path(paths: Paths) -> Path:
    return paths.data / "minihack" / "shield" / "episodes.csv"


def _pairs(d: dict) -> str:
    return " ".join(f"{k}:{v}" for k, v in d.items())


def _unpairs(text: str) -> dict:
    return {k: v for k, _, v in (p.rpartition(":") for p in text.split())}


def play(unit: tuple) -> list[dict]:
    """Every episode of one (task, agent, shield, seeds, max_skills): its rows, by seed."""
    task, agent, shield, seeds, max_skills = unit
    family = envs.get("minihack")
    laws = family.hard_laws() if shield == "laws" else None
    built = Shield(laws, [envs.action_atom(s) for s in family.skill_names()], family.proposition_names(),
                   restart_violated=True) if laws is not None else None  # one for all seeds, reset for each
    rows = []
    for seed in seeds:
        if agent == "expert":
            r = expert_under_shield(family, seed, laws, shield=built, task=task)
            by: dict[str, int] = {}
            for _, refusing in r["refused"]:
                for law in refusing:
                    by[law] = by.get(law, 0) + 1
            # the laws only audit the expert: every skill it runs is its own choice
            r |= {"refused": len(r["refused"]), "refused_steps": len(r["refused"]), "refused_by": by,
                  "fallback": 0, "broken": [], "unlocked_by": {a: "expert" for a in r["unlocked"]}}
        else:
            r = shielded_episode(family, seed, RandomActor(), laws, GOAL, max_skills, MAX_REPLANS, shield=built,
                                 task=task)
        rows.append({"task": task, "agent": agent, "shield": shield, "seed": seed, "success": int(bool(r["success"])),
                     "death": r["death"], "skills": r["skills"], "refused": r["refused"],
                     "refused_steps": r["refused_steps"], "fallback": r["fallback"], "broken": len(r["broken"]),
                     "refused_by": _pairs(dict(sorted(r["refused_by"].items()))),
                     "unlocked_by": _pairs(r["unlocked_by"])})
    return rows


def summarize(rows: list[dict]) -> list[dict]:
    """Per (task, agent, shield), in the rows' order: episodes, successes, deaths by cause, the
    counts summed, refusals by law and, per achievement, who chose the skill that unlocked it."""
    groups: dict[tuple, dict] = {}
    for r in rows:
        g = groups.setdefault((r["task"], r["agent"], r["shield"]), {
            "task": r["task"], "agent": r["agent"], "shield": r["shield"], "episodes": 0, "success": 0,
            "deaths": {}, **{c: 0 for c in COUNTS}, "refused_by": {}, "unlocked_by": {}})
        g["episodes"] += 1
        g["success"] += r["success"]
        if r["death"]:
            g["deaths"][r["death"]] = g["deaths"].get(r["death"], 0) + 1
        for c in COUNTS:
            g[c] += r[c]
        for law, n in _unpairs(r["refused_by"]).items():
            g["refused_by"][law] = g["refused_by"].get(law, 0) + int(n)
        for achievement, who in _unpairs(r["unlocked_by"]).items():
            by = g["unlocked_by"].setdefault(achievement, {})
            by[who] = by.get(who, 0) + 1
    for g in groups.values():
        g["deaths"] = dict(sorted(g["deaths"].items()))
        g["refused_by"] = dict(sorted(g["refused_by"].items()))
        g["unlocked_by"] = {a: dict(sorted(w.items())) for a, w in g["unlocked_by"].items()}
    return list(groups.values())


def paired(rows: list[dict]) -> list[dict]:
    """Per task, the random actor's episodes on one seed with and without the laws, paired: both
    reached the stairs, only under the laws, only without, neither (the report's interval of the
    difference: `tables.paired_difference`)."""
    out: dict[str, dict] = {}
    bare = {(r["task"], r["seed"]): r["success"] for r in rows if r["agent"] == "random" and r["shield"] == "none"}
    for r in rows:
        if r["agent"] == "random" and r["shield"] == "laws" and (r["task"], r["seed"]) in bare:
            p = out.setdefault(r["task"], {"task": r["task"], "both": 0, "laws_only": 0, "none_only": 0, "neither": 0})
            was = bare[(r["task"], r["seed"])]
            p["both" if r["success"] and was else "laws_only" if r["success"] else "none_only" if was else "neither"] += 1
    return list(out.values())


def headline(summary: list[dict]) -> dict:
    """metrics/minihack_shield.json: the random actor's success rate under the laws, pooled over
    the tasks (without the shield, the expert's audit and every count: the detail)."""
    under = [g for g in summary if g["agent"] == "random" and g["shield"] == "laws"]
    n = sum(g["episodes"] for g in under)
    return {"minihack_shield_random_success": round(sum(g["success"] for g in under) / n, 4) if n else None}


def run(params: Params, paths: Paths, work: Work) -> dict:
    """data/minihack/shield/episodes.csv, metrics/minihack_shield.json (returned) and its detail."""
    sp, ev = params.minihack.shield, params.minihack.eval
    seeds = list(range(ev.start, ev.start + sp.episodes))
    units = [(task, agent, shield, seeds, sp.max_skills) for task in sp.tasks for agent, shield in AGENTS]
    rows: list[dict] = []
    for unit, played in zip(units, work.map(play, units, name=NAME, label=lambda u: f"{u[0]}_{u[1]}_{u[2]}")):
        rows += played
        work.progress(f"{NAME}: {unit[0]}, {unit[1]} actor, shield {unit[2]}: "
                      f"{sum(r['success'] for r in played)}/{len(played)} reached the stairs, "
                      f"{sum(bool(r['death']) for r in played)} died, {sum(r['refused'] for r in played)} refused")
    write_csv(rows_path(paths), rows)
    summary = summarize(rows)
    family = envs.get("minihack")
    record = {"seeds": [seeds[0], seeds[-1] + 1], "max_skills": sp.max_skills, "max_replans": MAX_REPLANS,
              "actor": "random", "skills": len(family.skill_names()), "laws": len(family.hard_laws()),
              "rows": summary, "paired": paired(rows)}
    return stages.write_metrics(paths.metrics, NAME, headline(summary), record)
