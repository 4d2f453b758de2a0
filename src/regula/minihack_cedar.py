"""The `minihack_cedar` stage: one CEDAR skill DFA learned per MiniHack task (issue 38), through
the family interface alone (`regula.cedar.fact_skill`), and played as a policy beside copying
the demonstration.

For each task of `params.minihack.cedar.tasks` (empty: of `minihack.tasks`): Σ is the skills of
the task's one demonstration (data/minihack/demos, seed `minihack.demo_seeds[0]`); the teacher
simulates a word over the facts
DiVE verifies from the demonstration and `minihack.dive.explore`'s exploration episodes (the
same episodes minihack_dive's Verifier sees), wrong on `minihack.cedar.noise` of the words
(persistent); the world's equivalence rounds play each hypothesis on `minihack.cedar.worlds` (dev
seeds). The learned DFA then plays the held-out seeds `minihack.dive.seeds`, and so does the
baseline that copies the demonstration's skills (minihack_dive's `demo_replay`, run again here on
the same seeds with the same code: its rows are minihack_dive's).

Outputs: data/minihack/cedar/<task>.json and <task>.dot (the DFA), data/minihack/cedar/episodes.csv
(a row per task, condition and seed), metrics/minihack_cedar_detail.json (the pooled success
`minihack_cedar_success`; per task: Σ, the verified facts, the DFA's size, MQs, EQ rounds, why
learning stopped; per task and condition: success k/n, the report gives the Wilson interval) and
the headline metrics/minihack_cedar.json (the pooled success).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from . import envs, episodes, stages
from .automata.dfa import DFA
from .cedar import fact_skill
from .dive import fact_study
from .dive.fact_agent import hierarchy
from .errors import RegulaError
from .io import write_atomic, write_csv
from .stages import Paths, Work

if TYPE_CHECKING:  # the validated params (`regula.params.validate`)
    from regula.params import Params

NAME = "minihack_cedar"
CONDITIONS = ("cedar", "demo_replay")  # the learned DFA as a policy; copying the demonstration


def out_dir(paths: Paths) -> Path:
    return paths.data / "minihack" / "cedar"


def learn_task(unit: tuple) -> dict:
    """One task: its exploration episodes, the skill DFA, then both conditions on the held-out seeds."""
    task, demo, explore, epsilon, explore_skills, options, seeds = unit
    spec = envs.get("minihack")
    checks = [fact_study.explore_episode(spec, task, s, epsilon, explore_skills) for s in explore]
    learned = fact_skill.learn_skill(spec, task, demo, checks, **options)
    rows = [{"task": task, "condition": "cedar", **fact_skill.play(spec, task, learned.dfa, s, options["max_skills"])}
            for s in seeds]
    plan = hierarchy(spec, demo)
    rows += [fact_study.play(spec, task, "demo_replay", {"none": None}, plan, s, explore_skills) for s in seeds]
    return {"skill": learned.to_json(), "dfa": learned.dfa.to_json(), "rows": rows}


def csv_row(r: dict) -> dict:
    return {"task": r["task"], "condition": r["condition"], "seed": r["seed"], "success": int(r["success"]),
            "achieved": r["achieved"], "achievements": " ".join(r["achievements"]), "reward": r["reward"],
            "steps": r["steps"], "skills": r["skills"], "death": r["death"],
            "word": "; ".join(r.get("word", ())), "explored": r.get("explored", 0)}


def pooled(summary: list[dict]) -> dict:
    """The learned DFAs' success rate pooled over the tasks (an unlearned task's DFA accepts
    nothing and plays random letters: its episodes count too)."""
    rows = [g for g in summary if g["condition"] == "cedar"]
    n = sum(g["episodes"] for g in rows)
    return {"minihack_cedar_success": round(sum(g["successes"] for g in rows) / n, 4) if n else None}


def run(params: Params, paths: Paths, work: Work) -> dict:
    """data/minihack/cedar/, metrics/minihack_cedar.json (returned) and its detail."""
    mh, dp, cp = params.minihack, params.minihack.dive, params.minihack.cedar
    demo_seed = mh.demo_seeds[0]
    options = {"worlds": tuple(cp.worlds.seeds()), "noise": cp.noise, "seed": cp.seed, "max_skills": cp.max_skills,
               "max_rounds": cp.max_rounds, "max_queries": cp.max_queries}
    units = []
    for task in cp.tasks or mh.tasks:
        path = episodes.path(paths.data / "minihack" / "demos" / task, demo_seed)
        if not path.exists():
            raise RegulaError(f"{NAME}: no demonstration of {task} at {path}: run the stage minihack_demos first")
        units.append((task, episodes.read(path), tuple(dp.explore.seeds()), dp.epsilon, dp.max_skills, options,
                      tuple(dp.seeds.seeds())))
    out = out_dir(paths)
    out.mkdir(parents=True, exist_ok=True)
    rows, skills = [], []
    for unit, result in zip(units, work.map(learn_task, units, name=NAME, label=lambda u: u[0])):
        task, s = unit[0], result["skill"]
        dfa = DFA.from_json(result["dfa"], f"{NAME} {task}")
        dfa.save(out / f"{task}.json")
        write_atomic(out / f"{task}.dot", dfa.to_dot(f"{task}: {s['goal']}"))
        rows += result["rows"]
        skills.append(s)
        work.progress(f"{NAME}: {task}: {s['states']} states over {len(s['letters'])} letters, {s['membership_words']} "
                      f"words asked, {s['rounds']} EQ rounds" + (f"; stopped: {s['error'][:80]}" if s["error"] else ""))
        for g in fact_study.summarize(result["rows"]):
            work.progress(f"{NAME}: {task} {g['condition']}: {g['successes']}/{g['episodes']} reached the stairs")
    write_csv(out / "episodes.csv", [csv_row(r) for r in rows])
    summary = fact_study.summarize(rows)
    record = {"demo_seed": demo_seed, "noise": cp.noise, "teacher_seed": cp.seed,
              "worlds": [cp.worlds.start, cp.worlds.start + cp.worlds.count],
              "explore_seeds": [dp.explore.start, dp.explore.start + dp.explore.count], "epsilon": dp.epsilon,
              "seeds": [dp.seeds.start, dp.seeds.start + dp.seeds.count], "max_skills": cp.max_skills,
              "replay_max_skills": dp.max_skills, "max_rounds": cp.max_rounds, "max_queries": cp.max_queries,
              "skills": skills, "rows": summary}
    headline = pooled(summary)
    return stages.write_metrics(paths.metrics, NAME, headline, headline | record)

