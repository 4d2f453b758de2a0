"""Metrics over episodes, as pandas tables and JSON-able dicts."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from . import envs
from .episodes import attribution

CRAFTER = envs.get("crafter")
ACHIEVEMENTS = CRAFTER.achievement_names()
# LTLCrit Table 1's subgoals, as Crafter achievements.
MILESTONES = ("make_wood_pickaxe", "make_stone_pickaxe", "make_iron_pickaxe", "collect_diamond")


def episodes_table(episodes: list[dict]) -> pd.DataFrame:
    """One row per episode: outcome, length, and the step each achievement was first unlocked."""
    rows = []
    for ep in episodes:
        s = ep["summary"]
        row = {"seed": s["seed"], "goal": s["goal"], "success": bool(s["success"]), "end": s["end"],
               "steps": s["steps"], "skills": s["skills"], "reward": s["reward"],
               "achievements": len(s["achievements"]),
               "failed_skills": sum(not st["success"] for st in ep["steps"]),
               "world_diamonds": s.get("world_diamonds"), "saw_diamond": s.get("saw_diamond")}
        for a in ACHIEVEMENTS:
            row[f"step_{a}"] = s["first_step"].get(a)
        rows.append(row)
    return pd.DataFrame(rows).sort_values("seed").reset_index(drop=True)


def achievement_rates(table: pd.DataFrame) -> pd.DataFrame:
    """Success rate of each achievement over episodes (Crafter's per-achievement rates)."""
    rates = {a: float(table[f"step_{a}"].notna().mean()) if len(table) else 0.0
             for a in ACHIEVEMENTS}
    return pd.DataFrame({"achievement": list(rates), "rate": list(rates.values())})


def achievement_table(table: pd.DataFrame) -> pd.DataFrame:
    """The per-achievement rates as written (metrics/demos_achievements.csv): rounded to 4 places."""
    rates = achievement_rates(table)
    return pd.DataFrame({"achievement": rates["achievement"], "rate": [round(r, 4) for r in rates["rate"]]})


def crafter_score(rates):
    """Crafter's score (seed 004 §4.1, Crafter's own): exp(mean(ln(1 + 100 * rate))) - 1, in
    percent, over all achievements; the project's one implementation of the formula. Rates on the
    last axis: one list gives a float, rows of them an array of scores."""
    r = np.asarray(rates if isinstance(rates, np.ndarray) else list(rates), float) * 100
    s = np.exp(np.mean(np.log(1 + r), axis=-1)) - 1
    return float(s) if np.ndim(s) == 0 else s


def unlocked(achievements: list, names=ACHIEVEMENTS) -> np.ndarray:
    """Episodes x achievements, True where the episode unlocked it (`achievements`: one
    collection of names per episode)."""
    return np.array([[a in got for a in names] for got in achievements], bool).reshape(len(achievements), len(names))


def pooled_score(hits: np.ndarray) -> float:
    """Crafter's score as Crafter and the papers report it: each achievement's success rate over
    all the episodes, then the formula."""
    return crafter_score(hits.mean(axis=0))


def per_episode_scores(hits: np.ndarray) -> np.ndarray:
    """Each episode's own score (its achievements as 0/100% rates); their mean is not Crafter's
    score and is always reported beside the pooled one, named."""
    return crafter_score(hits.astype(float))


def _percentiles(values: np.ndarray, level: float) -> tuple[float, float]:
    """The percentile interval of `values` (one per resample)."""
    lo, hi = np.percentile(values, [50 * (1 - level), 50 * (1 + level)])
    return float(lo), float(hi)


def _draws(n: int, resamples: int, seed: int) -> np.ndarray:
    """`resamples` draws of n episode indices with replacement (numpy's default_rng(seed)); the
    same seed and n draw the same indices, so conditions played on the same worlds are
    resampled world for world."""
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def pooled_score_interval(hits: np.ndarray, resamples: int, seed: int, level: float = 0.95) -> tuple[float, float]:
    """A percentile bootstrap interval of `pooled_score` over episodes (`_draws`)."""
    idx = _draws(len(hits), resamples, seed)
    return _percentiles(crafter_score(hits[idx].mean(axis=1)), level)


def group_scores(hits: np.ndarray, groups: int) -> np.ndarray:
    """The pooled score of each of `groups` groups of consecutive episodes (in the order given:
    world order), as Crafter's own analysis scores each training seed's episodes apart before
    its mean ± std over seeds; sizes differ by at most one where n is not a multiple."""
    if not 1 <= groups <= len(hits):
        raise ValueError(f"{groups} groups of {len(hits)} episodes: need 1 to {len(hits)}")
    return np.array([pooled_score(g) for g in np.array_split(hits, groups)])


def progression(hits: np.ndarray) -> np.ndarray:
    """BALROG's Crafter progression per episode: the share of the 22 achievements it unlocked."""
    return hits.mean(axis=1)


def progression_interval(hits: np.ndarray, resamples: int, seed: int, level: float = 0.95) -> tuple[float, float]:
    """A percentile bootstrap interval of the mean progression, on the score's draws (`_draws`)."""
    idx = _draws(len(hits), resamples, seed)
    return _percentiles(progression(hits)[idx].mean(axis=1), level)


def score_record(hits: np.ndarray, resamples: int, seed: int, groups: int) -> dict:
    """Every Crafter score statistic of episodes x achievements `hits` (episodes in world order):
    `score` pooled as the papers compute it, `score_interval` its 95% bootstrap interval
    (rounded outward to 0.1, so it always holds the score rounded to 0.01),
    `score_groups` the pooled score of `groups` groups of consecutive episodes (their mean ±
    std, numpy's ddof 0, is `score_groups_mean`, `score_groups_std`: the spread the papers'
    ± gives over seeds), `score_per_episode` (± `score_per_episode_std`) the mean of each
    episode's own score, a different statistic, and `progression` (BALROG's, a share) with
    its std and 95% bootstrap interval."""
    per_episode, by_group, prog = per_episode_scores(hits), group_scores(hits, groups), progression(hits)
    lo, hi = pooled_score_interval(hits, resamples, seed)
    plo, phi = progression_interval(hits, resamples, seed)
    return {"score": round(pooled_score(hits), 2), "score_interval": [math.floor(lo * 10 + 1e-9) / 10, math.ceil(hi * 10 - 1e-9) / 10],
            "score_groups": [round(float(g), 2) for g in by_group],
            "score_groups_mean": round(float(np.mean(by_group)), 2),
            "score_groups_std": round(float(np.std(by_group)), 2),
            "score_per_episode": round(float(np.mean(per_episode)), 2),
            "score_per_episode_std": round(float(np.std(per_episode)), 2),
            "progression": round(float(np.mean(prog)), 4), "progression_std": round(float(np.std(prog)), 4),
            "progression_interval": [round(plo, 4), round(phi, 4)]}


def attributed_scores(attr: dict, episodes: int) -> dict:
    """From an `attribution` (`regula.episodes`) over `episodes` episodes: unlocks in all, those
    the survival layer made, and the pooled score of all unlocks and of the agent's own alone
    (each achievement's rate counting only the episodes whose agent's own step unlocked it: what
    the score would be had the survival layer's unlocks not counted, not what the agent would
    score without it), rounded to 2 places."""
    def rates(kind: str) -> list[float]:
        return [attr[kind].get(a, 0) / episodes for a in ACHIEVEMENTS]

    total, own = sum(attr["unlocked"].values()), sum(attr["own"].values())
    return {"unlocks": total, "by_survival": total - own, "score": round(crafter_score(rates("unlocked")), 2),
            "own_score": round(crafter_score(rates("own")), 2)}


def with_attributed_scores(record):
    """The record with `attributed` (`attributed_scores`) beside every `attribution` that has its
    `episodes` next to it, at any depth: the stages store the scores so the report only reads."""
    if isinstance(record, list):
        return [with_attributed_scores(v) for v in record]
    if not isinstance(record, dict):
        return record
    out = {k: with_attributed_scores(v) for k, v in record.items()}
    if isinstance(out.get("attribution"), dict) and "own" in out["attribution"] and out.get("episodes"):
        out["attributed"] = attributed_scores(out["attribution"], out["episodes"])
    return out


def end_reasons(table: pd.DataFrame) -> dict[str, int]:
    # Collapse "stuck: <skill> failed ..." details into their kind for counting.
    kinds = table["end"].str.split(":").str[0] if len(table) else table["end"]
    return {k: int(v) for k, v in kinds.value_counts().sort_index().items()}


def milestone_rows(table: pd.DataFrame, episodes: list[dict]) -> list[dict]:
    """LTLCrit Table 1's columns for the expert: high-level and primitive steps to each tool,
    against the shortest plan from data.yaml (None where no episode got there)."""
    first_skill = {ep["summary"]["seed"]: ep["summary"]["first_skill"] for ep in episodes}
    rows = []
    for m in MILESTONES:
        reached = table[f"step_{m}"].notna()
        skills = [first_skill[s][m] for s in table.loc[reached, "seed"]]
        optimum = len(CRAFTER.shortest_plan(m))
        mean_skills = sum(skills) / len(skills) if skills else None
        rows.append({"milestone": m, "reached": f"{int(reached.sum())}/{len(table)}",
                     "mean high-level steps": round(mean_skills, 1) if skills else None,
                     "mean primitive steps": round(float(table.loc[reached, f"step_{m}"].mean()), 1)
                     if reached.any() else None,
                     "shortest plan": optimum,
                     "ratio to shortest": round(mean_skills / optimum, 2) if skills else None})
    return rows


def shortest_plans() -> list[dict]:
    """The reference plans from data.yaml, in the achievements' order."""
    return [{"achievement": a, "plan": plan} for a, plan in CRAFTER.shortest_plans().items()]


DEMOS_RESAMPLES, DEMOS_GROUPS = 1000, 4  # the demonstrations' score: bootstrap draws, groups of worlds


def demos_metrics(table: pd.DataFrame, episodes: list[dict] | None = None, seed: int = 0) -> dict:
    """The demonstrations' record (metrics/demos_detail.json); per-achievement rates are a table
    of their own (`achievement_table`), the Crafter score (pooled) is computed from them
    unrounded. With the episodes, the steps to each tool, the reference plans the report shows,
    the death census (`deaths`, `alive`: each episode's end cause, `CRAFTER.census`), every
    score statistic (`scores`: `score_record`, its bootstrap seeded by `seed`) and whose
    unlocks they were (`attribution`)."""
    rates = achievement_rates(table)
    goal_steps = table.loc[table["success"], "steps"]
    return with_attributed_scores({
        "episodes": int(len(table)),
        "goal": str(table["goal"].iloc[0]) if len(table) else "",
        "success_rate": round(float(table["success"].mean()), 4) if len(table) else 0.0,
        "mean_steps_to_goal": round(float(goal_steps.mean()), 1) if len(goal_steps) else None,
        "mean_reward": round(float(table["reward"].mean()), 3) if len(table) else 0.0,
        "mean_steps": round(float(table["steps"].mean()), 1) if len(table) else 0.0,
        "crafter_score": round(crafter_score(rates["rate"]), 2),
        "end_reasons": end_reasons(table),
        "worlds_without_diamond": int((table["world_diamonds"] == 0).sum()) if len(table) else 0,
        "failed_after_seeing_a_diamond": int((~table["success"] & table["saw_diamond"].fillna(False)
                                              .astype(bool)).sum()) if len(table) else 0,
        **({"milestones": milestone_rows(table, episodes), "shortest_plans": shortest_plans(),
            **CRAFTER.census(episodes), "attribution": attribution(episodes)} if episodes is not None else {}),
        **({"scores": score_record(unlocked([e["summary"]["achievements"] for e in sorted(
            episodes, key=lambda e: e["summary"]["seed"])]), DEMOS_RESAMPLES, seed, min(DEMOS_GROUPS, len(episodes)))}
           if episodes else {}),
    })


# The episode count is params' (demos.episodes) and the detail's: it left the headline to pay for
# minihack_dive's number within the metrics budget.
DEMOS_HEADLINE = ("success_rate", "crafter_score", "mean_reward", "mean_steps", "mean_steps_to_goal")


def demos_headline(record: dict) -> dict:
    """What metrics/demos.json holds: the numbers a reader compares across experiments."""
    return {k: record[k] for k in DEMOS_HEADLINE}
