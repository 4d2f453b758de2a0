"""The death census: how every Crafter agent's episodes ended, one row per agent, from the
`deaths` and `alive` counts the stages keep in their records (the demonstrations, LTLCrit's
expert, runs and baselines, DiVE's conditions, and their LLM twins)."""
from __future__ import annotations

import pandas as pd

from regula.stages import Paths

from ..tables import md, rate, read_detail

# The stages whose records carry a census, in the report's order.
STAGES = ("demos", "ltlcrit", "ltlcrit_llm", "dive", "dive_llm")
# The census's columns in the order of the Crafter adapter's census module (the report imports no
# adapter): causes of death by precedence, then the alive ends.
DEATHS = ("lava", "zombie", "arrow", "thirst", "starvation", "fatigue", "unknown")
ALIVE = ("goal", "budget", "length", "stopped")


def _ltlcrit_rows(record: dict) -> list[tuple[str, dict]]:
    rows = [("scripted expert", record["expert"])]
    for name, a in {**record["actors"], **record["demos_ablation"]}.items():
        rows.append((f"{name}, no critic", a["without_critic"]))
        if a["iterations"]:
            rows.append((f"{name} + LTLCrit, iteration {a['iterations']}", a["with_critic"]))
        if a.get("baseline"):
            rows.append((f"random actor under {name}'s final laws", a["baseline"]))
    return rows


def agents(stage: str, record: dict) -> list[tuple[str, dict]]:
    """(agent, its record holding `episodes`, `deaths`, `alive`) for one stage's record."""
    if stage == "demos":
        return [("scripted expert (demonstrations)", record)]
    if stage.startswith("ltlcrit"):
        return _ltlcrit_rows(record)
    return [(f"`{condition}`", a) for condition, a in record["agent"].items()]


def census_table(records: dict[str, dict | None]) -> pd.DataFrame:
    """A row per agent that has a census: its deaths by cause, its alive ends, the share died."""
    rows = []
    for stage, record in records.items():
        for agent, r in agents(stage, record) if record else []:
            if "deaths" not in r:  # a record written before the census
                continue
            died, n = sum(r["deaths"].values()), r["episodes"]
            rows.append({"stage": stage, "agent": agent, "episodes": n, **{c: r["deaths"].get(c, 0) for c in DEATHS},
                         **{c: r["alive"].get(c, 0) for c in ALIVE},
                         "died (95% interval)": rate(died, n)})
    return pd.DataFrame(rows)


def section(paths: Paths) -> list[str]:
    table = census_table({s: read_detail(paths.metrics, s) for s in STAGES})
    if table.empty:
        return []
    return ["## Death census", "",
            "How each agent's episodes ended. A death is named by its killing blow, the cause of the primitive "
            "step that left health at 0 (the adapter records each step that took health and why); where that "
            "step had several, the first of lava, zombie, arrow (a skeleton's), thirst, starvation, fatigue "
            "names it, and `unknown` is a death with no cause recorded. Alive: `goal` reached, `budget` (the "
            "step or skill budget) spent, `length` (Crafter's episode length) reached, or `stopped` (the agent "
            "stopped: stuck, no plan).", "", md(table), ""]
