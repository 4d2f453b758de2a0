"""DiVE end to end on a family with propositional facts (MiniHack): the paper's Tables 2 and 4.

For each task: the single demonstration (seed 004, §4.2) gives the hierarchy and the discovered
facts; exploration episodes (the family's expert taking a random skill with probability
`epsilon`, on dev seeds) give the Verifier fresh experience; then each condition of
`fact_agent.CONDITIONS` plays the held-out seeds. Per episode: whether every achievement of the
task was unlocked (success), the share of the task's achievements unlocked, the family's own
reward, how the agent's decisions were made; per task and condition the mean and standard
deviation over the seeds.

The paper's Table 2 / 4 numbers (0.80 / 0.54 / 1.18 for DiVE) are rewards of its own
achievement scheme, which its text does not define: the share of the task's achievements is
this project's measure, set beside them and named so.
"""
from __future__ import annotations

import random
import statistics

from regula import episodes
from regula.errors import RegulaError

from . import facts
from .fact_agent import CONDITIONS, FactAgent, Knowledge, hierarchy


class _Exploring:
    """The episode as the expert sees it, with a seeded random skill run before one of its
    skills with probability `epsilon` (every skill lands in the episode's own log)."""

    def __init__(self, episode, skills: list[str], epsilon: float, rng: random.Random):
        self._ep, self._skills, self._epsilon, self._rng = episode, skills, epsilon, rng

    def run_skill(self, skill, until=None, interrupt=None):
        if not self._ep.done and self._rng.random() < self._epsilon:
            self._ep.run_skill(self._rng.choice(self._skills))
            if self._ep.done:
                return self._ep.events[-1]
        return self._ep.run_skill(skill, until, interrupt)

    def __getattr__(self, name):
        return getattr(self._ep, name)


def explore_episode(spec, task: str, seed: int, epsilon: float, max_skills: int) -> dict:
    """One exploration episode of `task` in the common log."""
    ep = spec.make(seed, task=task)
    spec.expert(_Exploring(ep, spec.skill_names(), epsilon, random.Random(f"explore-facts:{task}:{seed}")),
                max_skills=max_skills)
    inputs = {"seed": seed, "env": spec.name, "task": task, "explorer": {"epsilon": epsilon, "max_skills": max_skills}}
    summary = {"seed": seed, "task": task, "steps": ep.steps, "skills": len(ep.events),
               "achievements": list(ep.unlocked)}
    return episodes.record(ep, inputs, summary, "explorer")


def knowledge(spec, task: str, demo: dict, checks: list[dict], samples: int = 8, verify_samples: int = 16,
              seed: int = 0) -> dict:
    """The facts each condition plans with (`verified`, `discovered`, `none`), and the learning
    record (`facts.learn`'s, with the ground truth read only for its scores)."""
    demo_bank, check_bank, candidates, verdicts = facts.discover_and_verify(spec, [demo], checks, samples,
                                                                            verify_samples, seed)
    record = facts.learn(spec, task, [demo], checks, samples, verify_samples, seed)
    conditions = facts.discover_conditions(spec, demo_bank)
    kept, rejected = facts.verify_conditions(spec, conditions, check_bank)
    record["conditions"] = {"discovered": [c.text() for c in conditions], "verified": [c.text() for c in kept],
                            "rejected": [{"condition": c.text(), "reason": r} for c, r in rejected]}
    return {"verified": Knowledge((c.fact for c in verdicts.verified), kept, check_bank),
            "discovered": Knowledge((c.fact for c in candidates), conditions, demo_bank), "none": None,
            "record": record}


def play(spec, task: str, condition: str, known: dict, plan, seed: int, max_skills: int) -> dict:
    """One held-out episode of `task` by `condition`'s agent: its row."""
    ep = spec.make(seed, task=task)
    agent = FactAgent(spec, condition, known[CONDITIONS[condition][0]], plan, seed)
    out = agent.play(ep, max_skills)
    wanted = spec.level(task)["achievements"]
    got = [a for a in wanted if a in ep.unlocked]
    if ep.steps == 0:
        raise RegulaError(f"DiVE on {spec.name} {task}: {condition} on seed {seed} took 0 primitive steps: "
                          + episodes.NEVER_ACTED.format(it="the episode measures"))
    return {"task": task, "condition": condition, "seed": seed, "success": len(got) == len(wanted),
            "achieved": round(len(got) / len(wanted), 4), "achievements": got, "reward": round(ep.reward_total, 4),
            "steps": ep.steps, "skills": len(ep.events), "death": spec.death_cause(ep), **out}


def summarize(rows: list[dict]) -> list[dict]:
    """Per task and condition: successes of episodes (the report gives their Wilson interval),
    and the mean ± sample standard deviation of the achievement share and the reward over the
    seeds."""
    out = []
    keys = list(dict.fromkeys((r["task"], r["condition"]) for r in rows))
    for task, condition in keys:
        rs = [r for r in rows if (r["task"], r["condition"]) == (task, condition)]
        k, n = sum(r["success"] for r in rs), len(rs)

        def mean_sd(key):
            xs = [r[key] for r in rs]
            return round(statistics.fmean(xs), 4), round(statistics.stdev(xs), 4) if n > 1 else 0.0

        out.append({"task": task, "condition": condition, "episodes": n, "successes": k,
                    "achieved_mean": mean_sd("achieved")[0], "achieved_sd": mean_sd("achieved")[1],
                    "reward_mean": mean_sd("reward")[0], "reward_sd": mean_sd("reward")[1],
                    "deaths": sum(bool(r["death"]) for r in rs)})
    return out


def study_task(spec, task: str, demo: dict, conditions: list[str], explore_seeds: list[int], eval_seeds: list[int],
               epsilon: float = 0.3, max_skills: int = 100, samples: int = 8, verify_samples: int = 16,
               seed: int = 0) -> dict:
    """One task of `study`: its rows (every condition on every held-out seed) and what was
    learned (the hierarchy, the facts and conditions with their scores, the exploration's size)."""
    facts.fact_spec(spec)
    held = sorted(set(explore_seeds) & set(eval_seeds))
    if held:
        raise RegulaError(f"exploration seeds {held} are also evaluated on: the verifier would have seen "
                          "the held-out worlds")
    checks = [explore_episode(spec, task, s, epsilon, max_skills) for s in explore_seeds]
    known = knowledge(spec, task, demo, checks, samples, verify_samples, seed)
    plan = hierarchy(spec, demo)
    rows = [play(spec, task, condition, known, plan, s, max_skills) for condition in conditions for s in eval_seeds]
    return {"rows": rows, "learned": {"hierarchy": plan.to_json(), "facts": known["record"],
                                      "explored_skills": sum(len(c["steps"]) for c in checks)}}


def study(spec, tasks: list[str], demos: dict, conditions: list[str], explore_seeds: list[int],
          eval_seeds: list[int], **options) -> dict:
    """Tables 2 and 4 on `spec`'s tasks: `demos` maps each task to its one demonstration."""
    rows, learned = [], {}
    for task in tasks:
        r = study_task(spec, task, demos[task], conditions, explore_seeds, eval_seeds, **options)
        rows += r["rows"]
        learned[task] = r["learned"]
    return {"rows": rows, "summary": summarize(rows), "learned": learned}
