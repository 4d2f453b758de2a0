"""The `minihack_demos` stage: the scripted expert's demonstrations on MiniHack's tasks, in the
common episode log (`regula.episodes`).

The DiVE paper gives its learner a single demonstration per task (seed 004, §4.2); here one
episode per task of `params.minihack.tasks` and seed of `minihack.demo_seeds` (the default: one,
seed 0), each played by the adapter's expert (`envs.get("minihack").expert`) in skills and written
to data/minihack/demos/<task>/episode_<seed>.jsonl. The seeds lie outside `minihack.eval` (the
params check says so), the seeds the tables report on. A demonstration that does not reach the
stairs stops the stage with one line: a learner shown a failure is shown the wrong task.
"""
from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

from . import envs, episodes, stages
from .errors import RegulaError
from .stages import Paths, Work

if TYPE_CHECKING:  # the validated params (`regula.params.validate`)
    from regula.params import Params

NAME = "minihack_demos"
END = {2: "success", 1: "death", -1: "step_limit", 0: "skill_limit"}  # MiniHack's end status; 0: still running


def episode_inputs(params: Params, task: str, seed: int) -> dict:
    """Everything one demonstration depends on: the task's level as data (a changed des-file is
    another episode), the seed and the expert's skill budget."""
    return {"seed": seed, "env": "minihack", "task": task, "level": envs.get("minihack").level(task),
            "max_skills": params.minihack.max_skills}


def run_episode(inputs: dict) -> dict:
    """Play one expert demonstration; returns the episode (header, steps, summary)."""
    family = envs.get("minihack")
    ep = family.make(inputs["seed"], task=inputs["task"])
    family.expert(ep, max_skills=inputs["max_skills"])
    summary = {"seed": inputs["seed"], "task": inputs["task"], "success": ep.end_status == 2,
               "end": END.get(ep.end_status, str(ep.end_status)), "death": ep.death, "steps": ep.steps,
               "skills": len(ep.events), "achievements": list(ep.unlocked),
               "task_achievements": list(inputs["level"]["achievements"]), "reward": round(ep.reward_total, 6)}
    return episodes.record(ep, inputs, summary, "expert", goal=inputs["level"]["goal"])


def row(ep: dict) -> dict:
    """One demonstration's line in the record (and the report's table)."""
    s = ep["summary"]
    return {"task": s["task"], "seed": s["seed"], "skills": s["skills"], "steps": s["steps"],
            "achievements": s["achievements"], "of": len(s["task_achievements"]), "success": s["success"],
            "end": s["end"], "death": s["death"]}


def headline(rows: list[dict]) -> dict:
    """metrics/minihack_demos.json: successful demonstrations (their primitive steps and each
    demonstration's row: metrics/minihack_demos_detail.json; the steps left the headline to pay
    for minihack_shield's number within the metrics budget)."""
    return {"minihack_demos_success": sum(r["success"] for r in rows)}


def run(params: Params, paths: Paths, work: Work) -> dict:
    """data/minihack/demos/<task>/, metrics/minihack_demos.json (returned) and its detail."""
    out = paths.data / "minihack" / "demos"
    shutil.rmtree(out, ignore_errors=True)  # a task or seed no longer listed leaves no file
    rows = []
    for task in params.minihack.tasks:
        inputs = [episode_inputs(params, task, s) for s in params.minihack.demo_seeds]
        played = episodes.EpisodeStore(out / task).play(inputs, run_episode, resume=False, work=work,
                                                         name=f"{NAME}_{task}", cache=True)
        for ep in played:
            rows.append(row(ep))
            r = rows[-1]
            work.progress(f"{NAME}: {task} seed {r['seed']}: {r['end']} after {r['skills']} skills, {r['steps']} "
                          f"steps, {len(r['achievements'])}/{r['of']} achievements")
    failed = [f"{r['task']} seed {r['seed']} ({r['end']}{': ' + r['death'] if r['death'] else ''})"
              for r in rows if not r["success"]]
    if failed:
        raise RegulaError(f"{NAME}: the expert did not finish {', '.join(failed)}: a demonstration must show the "
                          "task done; choose other minihack.demo_seeds")
    ev = params.minihack.eval
    record = {"demos": rows, "steps": sum(r["steps"] for r in rows), "demo_seeds": list(params.minihack.demo_seeds),
              "eval_seeds": [ev.start, ev.start + ev.count]}
    return stages.write_metrics(paths.metrics, NAME, headline(rows), record)
