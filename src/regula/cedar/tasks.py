"""CEDAR's Table 2 and Fig. 8 on Crafter: tasks learned with and without the skill library, a
few trials each, beside a free-form planner without DFAs; and the teacher queries spent to reach
table -> stone -> furnace -> iron -> diamond.

* **With the library** a task is learned with the skills the curriculum (`cedar.skills`)
  learned before it callable, and a template where one has its verb; a task outside the
  curriculum (`make_iron_sword`) gets the whole library. **Without**, it is learned from
  scratch over Crafter's skills. A trial is one learning run on its own teacher (the noise
  falls on other words: seed + trial), on the task's budget (`cedar.tasks`), then its DFA played
  on one held-out world (the trial's); a DFA the world never confirmed is a failure, unplayed,
  and a played one that took no primitive step an error (`episodes.check_moved`). Paper:
  prompting iterations; here teacher askings and equivalence rounds, both counted.
* **The baseline** is a free-form planner with no DFA: LTLCrit's naive actor (`regula.ltlcrit`),
  which asks its LLM for each next skill toward the task, or, with the rules teacher, its
  rule-grounded stand-in `greedy_goal` (greedy aimed at the goal through what the shield's
  refusals say is missing), both under data.yaml's hard laws (preconditions and affordances,
  as LTLCrit's `hard_laws: true`), which refuse an action that would fail at once. Its queries
  are its decisions, on the same worlds; an episode that took no primitive step is an error.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from regula import envs
from regula.episodes import check_moved
from regula.params import fingerprint
from regula.stages import world_seeds

from .caches import JsonCache
from .equivalence import CrafterEquivalence
from .library import Library

if TYPE_CHECKING:  # the validated params (`regula.params.validate`)
    from regula.params import Params

CRAFTER = envs.get("crafter")
# Fig. 8's milestones (the paper's "Find a Diamond": crafting table -> cobblestone -> furnace ->
# iron ingot -> diamond), as Crafter's achievements
MILESTONES = {"table": "place_table", "stone": "collect_stone", "furnace": "place_furnace",
              "iron": "collect_iron", "diamond": "collect_diamond"}
CONDITIONS = ("library", "scratch")


def library_for(task: str, curriculum: list[str], library: Library) -> Library:
    """What the library held when the curriculum came to `task` (all of it for a task outside)."""
    before = curriculum[:curriculum.index(task)] if task in curriculum else curriculum
    return Library(library.skills[s] for s in before if s in library)


def trials(params: Params, paths, retriever, client, library: Library, work, learn, budget) -> list[dict]:
    cfg = params.cedar
    spec = cfg.tasks
    worlds = world_seeds(params, cfg.worlds, cfg.episodes)
    caches = paths.data / "cache" / paths.stage
    rows = []
    for task in spec.tasks:
        for condition in CONDITIONS:
            lib = library_for(task, cfg.skills, library) if condition == "library" else Library()
            for trial in range(spec.trials):
                p = params.model_copy(update={"seed": params.seed + trial, "cedar": cfg.model_copy(
                    update={"max_queries": spec.max_queries, "max_rounds": spec.max_rounds})})
                learned = learn(p, caches, task, retriever, client, lib, lambda line: None)
                run = learned.run
                judge = CrafterEquivalence(task, (), 0, budget(params), params.env.model_dump(), learned.eq,
                                           library=lib)
                # a DFA the world never confirmed is no policy: the trial failed, unplayed
                played = judge.rollout(run.dfa, worlds[trial]) if run.reached else {"label": False}
                if run.reached:
                    check_moved(played["steps"], f"{paths.stage} (Table 2, task {task})",
                                f"CEDAR's DFA ({condition}, trial {trial})", worlds[trial])
                learned.eq.save()
                rows.append({"task": task, "condition": condition, "trial": trial, "template": learned.template,
                             "teacher_queries": run.teacher_queries, "eq_rounds": run.rounds,
                             "states": run.dfa.size, "learned": run.reached, "world": worlds[trial],
                             "success": bool(played["label"]), "error": run.error,
                             "played": sum(o.played for o in learned.oracles) + judge.played,
                             "steps_played": sum(o.steps_played for o in learned.oracles) + judge.steps_played,
                             "asked": learned.teacher.asked})
                work.progress(f"{paths.stage}: Table 2 {task} ({condition}) trial {trial}: "
                              f"{run.teacher_queries} MQs, {run.rounds} rounds, "
                              f"{'success' if played['label'] else 'failure'}")
    return rows


def _first_decisions(steps: list[dict]) -> dict:
    """Per achievement, the actor's decisions (its queries) up to the step that first unlocked it."""
    out, decisions = {}, 0
    for s in steps:
        decisions += s["by"] == "actor"
        for a in s["unlocked"]:
            out.setdefault(a, decisions)
    return out


def baseline(params: Params, paths, client) -> list[dict]:
    """The free-form planner on each task's trial worlds, shielded by the hard laws: success,
    queries (decisions) and primitive steps."""
    from regula import roles
    from regula.ltlcrit.model import CrafterModel
    from regula.ltlcrit.rollout import RolloutConfig, rollout, rollout_inputs

    cfg = params.cedar
    name = "naive" if roles.uses_llm("teacher", cfg.teacher) else "greedy_goal"
    actor = roles.make("actor", name, client=client)
    # LTLCrit's shielded episode as its stage plays one (`ltlcrit`'s budgets and fallback, `env`),
    # its shield's backend fingerprinted as params write it, not resolved
    rollout_config = RolloutConfig.from_params(params, backend=params.logic.backend)
    worlds = world_seeds(params, cfg.worlds, cfg.episodes)[:cfg.tasks.trials]
    out = []
    for task in dict.fromkeys([*cfg.tasks.tasks, MILESTONES["diamond"]]):
        cache = JsonCache(paths.data / "cache" / paths.stage / "baseline" / f"{task}.json")
        model = CrafterModel(CRAFTER.symbols(params.env.model_dump()), goal=task)
        laws, rc = model.hard_laws(), rollout_config
        for w in worlds:
            key = fingerprint(rollout_inputs(actor, laws, w, model, rc))[:12]
            got = cache.data.setdefault(key, {}).get(str(w))
            played = got is None
            if played:
                ep = rollout(actor, laws, w, model, rc)
                got = {"success": ep["summary"]["success"], "decisions": ep["summary"]["actor_actions"],
                       "steps": ep["summary"]["steps"], "first": _first_decisions(ep["steps"])}
                cache.data[key][str(w)] = got
                cache.dirty = True
            check_moved(got["steps"], f"{paths.stage} (Table 2's free-form planner, task {task})", name, w)
            out.append({"task": task, "actor": name, "world": w, **got, "played": played})
        cache.save()
    return out


def budget_curve(skills: list[dict], base: list[dict]) -> list[dict]:
    """Fig. 8: per milestone, CEDAR's teacher askings summed over the curriculum up to the skill
    that reaches it (None once a skill on the way was not learned), and the baseline's mean
    decisions to it over its diamond episodes that reached it."""
    by_skill = {r["skill"]: r for r in skills}
    rows, spent, broken = [], 0, False
    episodes = [b for b in base if b["task"] == MILESTONES["diamond"]]
    order = [r["skill"] for r in skills]
    for name, achievement in MILESTONES.items():
        if achievement in by_skill and not broken:
            upto = order[:order.index(achievement) + 1]
            spent = sum(by_skill[s]["teacher_queries"] for s in upto)
            broken = not all(by_skill[s]["reached"] for s in upto)
        reached = [b["first"][achievement] for b in episodes if achievement in b["first"]]
        rows.append({"milestone": name, "achievement": achievement,
                     "cedar_queries": spent if achievement in by_skill and not broken else None,
                     "baseline_queries": round(sum(reached) / len(reached), 1) if reached else None,
                     "baseline_reached": len(reached), "baseline_episodes": len(episodes)})
    return rows


def _mean_std(xs: list) -> dict:
    import statistics
    return {"mean": round(statistics.fmean(xs), 1), "std": round(statistics.pstdev(xs), 1)} if xs else {}


def summary(rows: list[dict]) -> list[dict]:
    """Table 2's cells: per task and condition, askings and rounds (mean, std over trials) and
    successes out of trials."""
    out = []
    for task in dict.fromkeys(r["task"] for r in rows):
        for condition in CONDITIONS:
            mine = [r for r in rows if r["task"] == task and r["condition"] == condition]
            out.append({"task": task, "condition": condition, "trials": len(mine),
                        "successes": sum(r["success"] for r in mine), "learned": sum(r["learned"] for r in mine),
                        "teacher_queries": _mean_std([r["teacher_queries"] for r in mine]),
                        "eq_rounds": _mean_std([r["eq_rounds"] for r in mine]),
                        "template": next((r["template"] for r in mine if r["template"]), None)})
    return out


def baseline_summary(rows: list[dict]) -> list[dict]:
    """Per task: the free-form planner's successes, its decisions to the goal where reached, and
    the primitive steps its episodes took (to the goal, or to their end)."""
    out = []
    for task in dict.fromkeys(r["task"] for r in rows):
        mine = [r for r in rows if r["task"] == task]
        out.append({"task": task, "actor": mine[0]["actor"], "episodes": len(mine),
                    "successes": sum(r["success"] for r in mine),
                    "decisions": _mean_std([r["first"][task] for r in mine if task in r["first"]]),
                    "steps": _mean_std([r["steps"] for r in mine])})
    return out
