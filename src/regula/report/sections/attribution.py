"""Whose unlocks: every Crafter agent's achievements split into those its own decisions made
and those the survival layer made (`regula.metrics.attribution`), per stage, from the DiVE,
LTLCrit and demonstrations records."""
from __future__ import annotations

import pandas as pd

from regula.stages import Paths

from ..tables import md, read_detail, wilson

COLUMNS = ("agent", "episodes", "unlocks", "by the agent", "by the survival layer (share, 95% Wilson)",
           "pooled score %", "pooled score % of its own unlocks")


def row(label: str, record: dict | None) -> dict | None:
    """One agent's row from a record holding its `attributed` scores (the stage computes them:
    `regula.metrics.with_attributed_scores`); None when the record has none."""
    if not record or "attributed" not in record:
        return None
    n, s = record["episodes"], record["attributed"]
    total, survival, score, own = s["unlocks"], s["by_survival"], f"{s['score']:.1f}", f"{s['own_score']:.1f}"
    return dict(zip(COLUMNS, (label, n, total, total - survival, share(survival, total), score, own)))


def share(k: int, n: int) -> str:
    """`k/n: p% (lo-hi%)`, the share with its 95% Wilson interval."""
    if not n:
        return "–"
    lo, hi = wilson(k, n)
    return f"{k}/{n}: {100 * k / n:.0f}% ({100 * lo:.0f}-{100 * hi:.0f}%)"


def dive_rows(dive: dict | None) -> list[dict]:
    return [row(f"`{condition}`", a) for condition, a in (dive or {}).get("agent", {}).items()]


def ltlcrit_rows(ltlcrit: dict | None) -> list[dict]:
    if not ltlcrit:
        return []
    out = [row("scripted expert", ltlcrit["expert"])]
    for name, a in {**ltlcrit["actors"], **ltlcrit["demos_ablation"]}.items():
        out += [row(f"{name}, no critic", a["without_critic"]),
                row(f"{name} + LTLCrit, iteration {a['iterations']}", a["with_critic"] if a["iterations"] else None),
                row(f"random actor under {name}'s final laws", a.get("baseline"))]
    return out


def demos_rows(demos: dict | None) -> list[dict]:
    if not demos or "attribution" not in demos:
        return []
    return [row(f"scripted expert, goal `{demos['goal']}`", demos)]


def section(paths: Paths) -> list[str]:
    dive, ltlcrit = read_detail(paths.metrics, "dive"), read_detail(paths.metrics, "ltlcrit")
    tables = [(title, [r for r in rows if r]) for title, rows in (
        ("DiVE stage (its conditions, the same worlds)", dive_rows(dive)),
        ("LTLCrit stage (its actors and the scripted expert, the same worlds)", ltlcrit_rows(ltlcrit)),
        ("Demonstrations (the scripted expert DiVE learns from)", demos_rows(read_detail(paths.metrics, "demos"))))]
    tables = [(title, rows) for title, rows in tables if rows]
    if not tables:
        return []
    lines = ["## Whose unlocks: the agent's decisions and the survival layer's", "",
             "Every Crafter agent here but Random and `dive_no_survival` runs on the shared survival layer: it "
             "drinks, eats, sleeps, shelters and fights for the agent, reading data.yaml. Each step of an episode "
             "is chosen either by the agent or by the survival layer (logged as `survival`), and an achievement "
             "is credited to whoever chose the step it was unlocked in. When the survival layer interrupts a skill "
             "the agent chose (a zombie close, thirst), that skill's step stays the agent's, and what the layer "
             "then does is a step of its own. `by the survival layer` is the count of unlocks made in its steps, "
             "with its share of all unlocks and a 95% Wilson interval (each unlock counted as one trial, though "
             "the unlocks of one episode are not independent). `pooled score %` is Crafter's score over all the "
             "record's episodes; `pooled score % of its own unlocks` is the same formula with each achievement's "
             "rate counting only the episodes in which a step the agent chose unlocked it. That is an "
             "accounting of the unlocks the agent made itself, not what it would score without the layer: "
             "without it the agent dies sooner, and the DiVE row `dive_no_survival` measures that. (Every step, "
             "the agent's too, runs through the game's skills, which walk, dig and check a recipe's "
             "preconditions: that part executes what was chosen and is not counted apart.)", ""]
    for title, rows in tables:
        lines += [f"### {title}", "", md(pd.DataFrame(rows)), ""]
    return lines
