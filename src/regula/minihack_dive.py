"""The `minihack_dive` stage: DiVE on MiniHack's three tasks, the paper's Tables 2 and 4 (seed 004,
§4.2 and §5.2), through the family interface alone (`regula.dive.fact_study`).

For each task of `params.minihack.tasks`: the task's one demonstration (data/minihack/demos, seed
`minihack.demo_seeds[0]`) gives the hierarchy and the discovered facts; `dive.explore` exploration
episodes (the expert with a random skill at probability `dive.epsilon`, on dev seeds) give the
Verifier fresh experience; then every condition of `dive.conditions` (DiVE, its ablations, and
two baselines: copying the demonstration, random skills) plays the held-out seeds `dive.seeds`
(inside `minihack.eval`), `dive.max_skills` skills at most.

Outputs: data/minihack/dive/episodes.csv (a row per task, condition and seed, with how each of the
agent's decisions was made), data/minihack/dive/learned.json (per task: the hierarchy, the facts
and subgoal conditions discovered, verified and rejected, scored against dynamics.yaml),
metrics/minihack_dive_detail.json (per task and condition: success k/n with a 95% Wilson interval,
mean ± sd of the achievement share and of MiniHack's reward) and the headline
metrics/minihack_dive.json. The report quotes the paper's numbers beside them.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from . import envs, episodes, stages
from .dive import fact_study
from .errors import RegulaError
from .io import write_csv
from .stages import Paths, Work

if TYPE_CHECKING:  # the validated params (`regula.params.validate`)
    from regula.params import Params

NAME = "minihack_dive"
HOW = ("action", "evolved", "random", "retry", "replay")  # how a decision was made (fact_agent.FactAgent)


def out_dir(paths: Paths) -> Path:
    return paths.data / "minihack" / "dive"


def demo_path(paths: Paths, task: str, seed: int) -> Path:
    return episodes.path(paths.data / "minihack" / "demos" / task, seed)


def play_task(unit: tuple) -> dict:
    """One task: learn from its demonstration and exploration, then play every condition."""
    task, demo, conditions, explore, seeds, epsilon, max_skills = unit
    return fact_study.study_task(envs.get("minihack"), task, demo, list(conditions), list(explore), list(seeds),
                                 epsilon=epsilon, max_skills=max_skills)


def csv_row(r: dict) -> dict:
    out = {k: v for k, v in r.items() if k not in ("decisions", "achievements")}
    out["success"] = int(r["success"])
    out["achievements"] = " ".join(r["achievements"])
    return out | {f"by_{h}": r["decisions"].get(h, 0) for h in HOW}


def headline(summary: list[dict]) -> dict:
    """metrics/minihack_dive.json: DiVE's success rate pooled over the tasks (every other row and
    interval: the detail)."""
    rows = [g for g in summary if g["condition"] == "dive"]
    n = sum(g["episodes"] for g in rows)
    return {"minihack_dive_success": round(sum(g["successes"] for g in rows) / n, 4) if n else None}


def run(params: Params, paths: Paths, work: Work) -> dict:
    """data/minihack/dive/, metrics/minihack_dive.json (returned) and its detail."""
    mh, dp = params.minihack, params.minihack.dive
    demo_seed = mh.demo_seeds[0]
    units = []
    for task in mh.tasks:
        path = demo_path(paths, task, demo_seed)
        if not path.exists():
            raise RegulaError(f"{NAME}: no demonstration of {task} at {path}: run the stage minihack_demos first")
        units.append((task, episodes.read(path), tuple(dp.conditions), tuple(dp.explore.seeds()),
                      tuple(dp.seeds.seeds()), dp.epsilon, dp.max_skills))
    rows, learned = [], {}
    for unit, result in zip(units, work.map(play_task, units, name=NAME, label=lambda u: u[0])):
        rows += result["rows"]
        learned[unit[0]] = result["learned"]
        for g in fact_study.summarize(result["rows"]):
            work.progress(f"{NAME}: {g['task']} {g['condition']}: {g['successes']}/{g['episodes']} reached the "
                          f"stairs, achievements {g['achieved_mean']:.2f} ± {g['achieved_sd']:.2f}")
    out = out_dir(paths)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "episodes.csv", [csv_row(r) for r in rows])
    (out / "learned.json").write_text(json.dumps(learned, indent=1, sort_keys=True) + "\n")
    summary = fact_study.summarize(rows)
    record = {"demo_seed": demo_seed, "explore_seeds": [dp.explore.start, dp.explore.start + dp.explore.count],
              "seeds": [dp.seeds.start, dp.seeds.start + dp.seeds.count], "epsilon": dp.epsilon,
              "max_skills": dp.max_skills, "rows": summary,
              "decisions": _decisions(rows), "facts": {t: _facts(v) for t, v in learned.items()}}
    return stages.write_metrics(paths.metrics, NAME, headline(summary), record)


def _decisions(rows: list[dict]) -> list[dict]:
    """Per task and condition, how the agent's skills were chosen, summed over the seeds."""
    out: dict = {}
    for r in rows:
        g = out.setdefault((r["task"], r["condition"]), {"task": r["task"], "condition": r["condition"],
                                                         **{h: 0 for h in HOW}})
        for h, n in r["decisions"].items():
            g[h] += n
    return list(out.values())


def _facts(learned: dict) -> dict:
    f = learned["facts"]
    return {"discovered": f["discovered"], "verified": f["verified"],
            "conditions": {k: len(v) for k, v in f["conditions"].items()},
            "discovered_conditions": f["conditions"]["discovered"],
            "verified_conditions": f["conditions"]["verified"], "rejected_conditions": f["conditions"]["rejected"],
            "explored_skills": learned["explored_skills"]}
