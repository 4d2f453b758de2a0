"""Who reads the ground truth (Crafter's data.yaml) by design: the list the guard test enforces
(`regula.readers`), what LTLCrit's critic reads of the hard laws (its stage record), and the share
of each agent's unlocks that a part reading data.yaml by design made for it (the survival
layer), from the DiVE and LTLCrit records."""
from __future__ import annotations

import pandas as pd

from regula import readers
from regula.agents import SURVIVAL
from regula.stages import Paths

from ..tables import md, read_detail

# The `by` of a step a scripted part chose for the agent (regula.episodes.unlocks_by's keys).
SCRIPTED = {SURVIVAL: "survival layer"}


def _share(unlocks: dict) -> dict:
    total = sum(unlocks.values())
    scripted = sum(v for k, v in unlocks.items() if k in SCRIPTED)
    return {"unlocks": total, "by the survival layer": scripted,
            "share": f"{100 * scripted / total:.0f}%" if total else "–"}


def unlock_table(dive: dict | None, ltlcrit: dict | None) -> pd.DataFrame:
    """Per agent: its unlocks over its episodes and those the survival layer chose."""
    rows = []
    if dive:
        for condition, a in dive["agent"].items():
            if "unlocks_by" in a:
                rows.append({"agent (measured here)": f"DiVE stage: `{condition}`, {a['episodes']} episodes",
                             **_share(a["unlocks_by"])})
    if ltlcrit:
        e = ltlcrit["expert"]
        if "unlocks_by" in e:
            rows.append({"agent (measured here)": f"LTLCrit stage: scripted expert, {e['episodes']} episodes",
                         **_share(e["unlocks_by"])})
        for name, a in {**ltlcrit["actors"], **ltlcrit["demos_ablation"]}.items():
            for label, s in ((f"{name}, no critic", a["without_critic"]),
                             (f"{name} + LTLCrit, iteration {a['iterations']}", a["with_critic"] if a["iterations"]
                              else None),
                             (f"random actor under {name}'s final laws", a.get("baseline"))):
                if s and "unlocks_by" in s:
                    rows.append({"agent (measured here)": f"LTLCrit stage: {label}, {s['episodes']} episodes",
                                 **_share(s["unlocks_by"])})
    return pd.DataFrame(rows)


def section(paths: Paths) -> list[str]:
    dive, ltlcrit = read_detail(paths.metrics, "dive"), read_detail(paths.metrics, "ltlcrit")
    allowed = pd.DataFrame([{"part": p.name, "modules (src/regula/)": ", ".join(p.modules), "why": p.why}
                            for p in readers.allowed()])
    forbidden = "; ".join(f"{p.name} ({', '.join(p.modules)})" for p in readers.forbidden())
    lines = ["## Ground truth: who reads data.yaml", "",
             "Crafter's rules (data.yaml) are read by scoring and by the parts below, by design; the learners and "
             f"verifiers may not read them: {forbidden}. The guard test (tests/test_ground_truth_readers.py) "
             "enforces this same list (src/regula/readers.yaml).", "", md(allowed), ""]
    if ltlcrit and ltlcrit.get("critic_reads"):
        lines += ["What LTLCrit's critic reads of the hard laws, through its one declared interface "
                  "(`regula.ltlcrit.hard_facts`):", ""]
        lines += [f"- `{name}`: {why}" for name, why in ltlcrit["critic_reads"].items()] + [""]
    table = unlock_table(dive, ltlcrit)
    if len(table):
        lines += ["### The unlocks a part reading data.yaml made for each agent", "",
                  "Every agent here shares the survival layer (it drinks, eats, sleeps, shelters "
                  "and fights, reading data.yaml). The achievements unlocked at steps the layer chose are the "
                  "layer's, not the agent's: counted apart below, over all episodes of the record. (Every step, the "
                  "agent's too, runs through the game's skills, which check their recipe's preconditions: that part "
                  "executes what was chosen and is not counted apart.)", "",
                  md(table), ""]
    return lines
