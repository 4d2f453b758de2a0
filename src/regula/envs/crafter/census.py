"""The death census: why each Crafter episode ended, from its log (`regula.episodes`).

A death is named by its killing blow, the `hurt` record (`hurt.py`) of the primitive step that
left health at 0; when that step had several causes, the first in `hurt.CAUSES` (lava, zombie,
arrow, thirst, starvation, fatigue) names it: the sudden ones before the slow ones, since a blow
that takes 2 or more kills where the 1 a necessity takes may not have. A death with no cause
recorded (a log from before `hurt`) is `unknown`. An episode that ended alive is named by its
summary's `end`: `goal` (reached its goal), `budget` (its step or skill budget), `length`
(Crafter's episode length), `stopped` (the agent stopped: stuck, no plan).
"""
from __future__ import annotations

from regula.agents import BUDGET, DIED, GOAL, LENGTH

from .hurt import CAUSES

UNKNOWN = "unknown"
ALIVE = {GOAL: "goal", BUDGET: "budget", LENGTH: "length"}
STOPPED = "stopped"
DEATHS = (*CAUSES, UNKNOWN)
ALIVE_ENDS = (*ALIVE.values(), STOPPED)


def end_cause(episode: dict) -> str:
    """Why an episode (header, steps, summary) ended: a cause of death or an alive end."""
    last = next((p for s in reversed(episode["steps"]) for p in reversed(s.get("primitives", []))), None)
    if last is not None and last["health"] <= 0:
        by = last.get("hurt", {}).get("by", [])
        return next((c for c in CAUSES if c in by), UNKNOWN)
    end = episode["summary"].get("end", "")
    if end == DIED:  # a death the primitives do not show
        return UNKNOWN
    return ALIVE.get(end, STOPPED)


def census(episodes: list[dict]) -> dict[str, dict[str, int]]:
    """{"deaths": {cause: episodes}, "alive": {end: episodes}}, every cause of `DEATHS` and end
    of `ALIVE_ENDS` present (0 when none), so every stage's record has the same columns."""
    causes = [end_cause(ep) for ep in episodes]
    return {"deaths": {c: causes.count(c) for c in DEATHS}, "alive": {c: causes.count(c) for c in ALIVE_ENDS}}
