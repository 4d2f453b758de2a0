"""The specs stage's section: specifications learned with the person's recorded answers."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from regula.stages import Paths

from ..tables import md, plt, rate, read_detail

KINDS = ("rest", "mining", "crafting", "survival", "explore", "wait")  # regula.specs.study.KINDS, in its order
COLORS = {"rest": "tab:blue", "mining": "tab:brown", "crafting": "tab:orange", "survival": "tab:green",
          "explore": "tab:gray", "wait": "tab:purple", "dead": "black"}
AGENTS = {"without": "without the specification", "with": "with it (shielded by its DFA)"}
GAINS = ("underground", "overground", "items")  # regula.specs.study.GAINS
GAIN_LABELS = {"underground": "blocks underground", "overground": "blocks overground", "items": "items made"}
GAIN_COLORS = {"underground": "tab:brown", "overground": "tab:green", "items": "tab:orange"}
# Seed 000 (CEDAR) Table 1, as printed (Minecraft, "dig minerals only at night", 5 trials of 3 days: mean ± sd;
# its CEDAR row is labelled "CEDAR (Ours)" there)
PAPER_TABLE1 = {"VOYAGER": ("106 ± 5", "152 ± 47", "50 ± 10", "27 ± 7", "229 ± 44"),
                "CEDAR": ("138 ± 10", "195 ± 31", "136 ± 18", "58 ± 6", "388 ± 36")}
TABLE1 = ("Action Counts", "Underground", "Overground", "Items", "Gained Objects")


def section(paths: Paths) -> list[str]:
    m = read_detail(paths.metrics, "specs")
    if not m or not m["specs"]:
        return []
    table = pd.DataFrame([{
        "spec": r["name"], "instruction": r["instruction"], "letters": ", ".join(r["letters"]),
        "states": r["states"], "person's answers": r["person_answers"], "teacher askings": r["teacher_askings"],
        "= what the person meant": "yes" if r["equals_meant"] else f"no: `{' '.join(r['differs_on']) or 'ε'}`",
        "the teacher alone (no person)": "= meant" if r["teacher_alone_equals_meant"]
        else f"wrong on `{' '.join(r['teacher_alone_differs_on']) or 'ε'}`",
        "demos violating": f"{r['demos_violating']}/{r['demos']}"} for r in m["specs"]])
    return ["## Specifications learned with a person (CEDAR §3.4, A.5)", "",
            "Each specification is learned like a skill: the formula teacher (its clauses in params.yaml's "
            "`specs`, a stand-in for a model's one answer) answers the membership queries, the person's "
            "recorded answers (`data/specs/answers/`, replayed) the equivalence queries. The answers recorded "
            "here are a stand-in person's, who means the `meant` clauses and types each hypothesis's shortest "
            "wrong word (`\"by\"` in each answer says so); the learned DFA is then compared with those clauses, and "
            "so is the teacher's formula alone (the baseline with no person: what the answers added). "
            "DFAs in `data/specs/dfas/` (JSON, DOT, SVG); a demonstration violates a spec when its word over "
            "the spec's letters is rejected.", "", md(table), ""] + studies(paths, m.get("studies") or {})


def _shade_nights(ax, bins: pd.DataFrame) -> None:
    for start, end, night in zip(bins["start"], bins["end"], bins["night_steps"]):
        if night:
            ax.axvspan(start, end, color="midnightblue", alpha=0.25 * night / (end - start), lw=0)


FIGURE = "specs_studies.png"  # every study, a row each (a DVC output: one name whatever the studies)


def _cells(text: str) -> list[tuple]:  # regula.specs.study.cells (the report imports no stage code)
    return [tuple(int(v) for v in c.split(",")) for c in text.split()]


def plot_studies(t: pd.DataFrame, records: dict, path: Path) -> None:
    """Fig. 4's panels per study: (a, b) steps per kind per bin, summed over the trials, per agent; (c)
    mean health per bin (a dead trial's 0); (d) violations per trial; Fig. 5 (c, d) in one: (e) blocks
    collected under- and overground and items made per bin, both agents. Nights shaded."""
    if not records:
        fig, ax = plt.subplots(figsize=(6, 1))
        ax.axis("off")
        ax.text(0.5, 0.5, "no specification study (params.yaml specs.studies)", ha="center", va="center")
        fig.savefig(path, dpi=100)
        plt.close(fig)
        return
    fig, axes = plt.subplots(len(records), 5, figsize=(25, 4.2 * len(records)), squeeze=False)
    for row, (name, record) in zip(axes, records.items()):
        _plot_study(row, t[t["study"] == name], name, record)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _plot_study(axes, t: pd.DataFrame, name: str, record: dict) -> None:
    for ax, agent in zip(axes, AGENTS):
        g = t[t["agent"] == agent]
        mid, width = (g["start"] + g["end"]) / 2, (g["end"] - g["start"]) * 0.9
        bottom = pd.Series(0, index=g.index)
        for kind in KINDS + ("dead",):
            ax.bar(mid, g[kind], width, bottom=bottom, color=COLORS[kind], label=kind)
            bottom = bottom + g[kind]
        _shade_nights(ax, g)
        ax.set_title(f"{name} ({'ab'[agent == 'with']}): {AGENTS[agent]}", fontsize=9)
        ax.set_xlabel("step")
        ax.set_ylabel(f"steps per {record['bin']}-step bin, {len(record['worlds'])} trials", fontsize=8)
    axes[1].legend(fontsize=7, loc="upper right")
    ax = axes[2]
    for agent in AGENTS:
        g = t[t["agent"] == agent]
        ax.plot((g["start"] + g["end"]) / 2, g["health"], marker="o", ms=3, label=AGENTS[agent])
    _shade_nights(ax, t[t["agent"] == "with"])
    ax.set_ylim(0, 9.5)
    ax.set_title(f"{name} (c): mean health per bin (a dead trial counts 0)", fontsize=9)
    ax.set_xlabel("step")
    ax.legend(fontsize=7)
    ax = axes[3]
    worlds = record["worlds"]
    for i, agent in enumerate(AGENTS):
        v = [p["violations"] for p in record["agents"][agent]["trials"]]
        ax.bar([k + (i - 0.5) * 0.4 for k in range(len(worlds))], v, 0.4, label=AGENTS[agent])
    ax.set_xticks(range(len(worlds)), [str(w) for w in worlds], fontsize=7)
    ax.set_xlabel("world (seeds.eval)")
    ax.set_title(f"{name} (d): violations of {record['spec']} per trial", fontsize=9)
    ax.legend(fontsize=7)
    ax = axes[4]
    if record.get("area"):  # Fig. 6: where the players were, from their start, over the trials
        r = record["area"]
        for agent, color in zip(AGENTS, ("tab:gray", "tab:red")):
            cells = _cells(record["agents"][agent]["cells"])
            ax.scatter([c[0] for c in cells], [c[1] for c in cells], s=[2 + 40 * c[2] / max(1, max(x[2] for x in cells))
                                                                        for c in cells],
                       color=color, alpha=0.5, label=f"{agent}: {record['agents'][agent]['steps_outside']} steps outside")
        ax.add_patch(plt.Rectangle((-r - 0.5, -r - 0.5), 2 * r + 1, 2 * r + 1, fill=False, color="tab:green", lw=1.5))
        ax.invert_yaxis()
        ax.set_aspect("equal")
        ax.set_title(f"{name} (e): cells stood on (area: green)", fontsize=9)
        ax.legend(fontsize=7)
        return
    if "underground" not in t:  # Fig. 5 (c), (d): what was collected, per bin, both agents
        ax.axis("off")
        return
    for agent, style in zip(AGENTS, ("--", "-")):
        g = t[t["agent"] == agent]
        for gain in GAINS:
            ax.plot((g["start"] + g["end"]) / 2, g[gain], style, color=GAIN_COLORS[gain], marker="o", ms=2,
                    label=f"{GAIN_LABELS[gain]}, {agent}")
    _shade_nights(ax, t[t["agent"] == "with"])
    ax.set_title(f"{name} (e): collected per bin, over the trials", fontsize=9)
    ax.set_xlabel("step")
    ax.legend(fontsize=6)


def studies(paths: Paths, records: dict) -> list[str]:
    """The specification studies (seed 000 §4.1, Fig. 4): a plot and a table of totals each."""
    path = Path(paths.metrics) / "specs_studies.csv"
    t = pd.read_csv(path) if records and path.exists() and path.stat().st_size else pd.DataFrame()
    plot_studies(t, records if len(t) else {}, Path(paths.reports) / FIGURE)
    if not len(t):
        return []
    out = ["### Specification studies (CEDAR §4.1, Figs. 4-6; Table 1)", "",
           "CEDAR's agent (the goal's skill DFA from the cedar_skills library, played again and again, with the "
           "survival layer's reflexes but not its night shelter) against the same agent shielded by the "
           "specification's learned DFA: a skill whose letter would leave the DFA's live states runs only after the "
           "DFA's shortest enabling word of action letters (after nightfall: `shelter`, Crafter's walled-in sleep), "
           "and a state the DFA does not "
           "accept is first led to acceptance; `changed` counts those decisions. Violations: letters of an agent's "
           "word (its succeeded skills and `is_night` as it falls) after which the DFA can accept nothing more. "
           "Trials on the first worlds of seeds.eval; a trial ends at its horizon or the agent's death. "
           "regula/specs/study.py; docs/cedar.md. In the figure, per study: (a), (b) steps per kind per time bin, "
           "summed over the trials (`dead`: after a trial's death); (c) mean health per bin; (d) violations per "
           "trial; (e) blocks collected under- and overground and items made per bin (Fig. 5 (c), (d)); nights "
           "shaded. Fig. 5's agent explores and collects (`study.collect_choice`: a tool or station it can make "
           "and lacks, else the collectable in view it holds fewest of, else explore; the survival layer's "
           "skills first; at night it sleeps walled in, out again before dawn); shielded, it chooses only what "
           "the DFA permits. A strict study also reads what paths dug on the way as letters, lets paths dig "
           "only while the DFA allows every collection it names, never takes a `do` that would collect a "
           "forbidden letter, and stops a skill when an event letter the DFA reads (`is_night`, `not_is_night`) "
           "changes under it. Fig. 6's study gives the agent an area, the square round its start where the event "
           "`in_area` holds (`not_in_area` where it does not: Crafter has no biome names; the paper's is the windswept "
           "forest); a strict shield takes no step out of it; panel (e) then shows the cells stood on.", ""]
    for name, record in records.items():
        rows = []
        for agent, label in AGENTS.items():
            a = record["agents"][agent]
            rows.append({"agent": label, "violations per trial": " ".join(str(p["violations"]) for p in a["trials"]),
                         "decisions the spec changed": a["changed"], "diamonds": a["diamonds"],
                         "survived (95% Wilson)": rate(a['survived'], len(a['trials'])), "mean steps alive": a["mean_steps"],
                         "mean health alive": a["mean_health"],
                         "rest / mining steps at night": f"{a['night_rest']} / {a['night_mining']}",
                         **({"steps outside the area": a["steps_outside"]} if record.get("area") else {}),
                         **{f"{k} steps": a[f"steps_{k}"] for k in KINDS}})
        who = (f"goal `{record['goal']}`" if record.get("goal") else
               "the explore-and-collect agent (`study.collect_choice`)") + (", strict" if record.get("strict") else "") + (
            f", area: the square of half-width {record['area']} round the start" if record.get("area") else "")
        out += [f"**{name}**: {who}, specification `{record['spec']}`, worlds "
                f"{', '.join(map(str, record['worlds']))}, {record['days']} days ({record['horizon']} steps), "
                f"{record['bin']}-step bins (metrics/specs_studies.csv); its row of reports/{FIGURE}.", "",
                md(pd.DataFrame(rows)), ""]
        if record.get("agent") == "collect" and not record.get("area"):  # Table 1 is Fig. 5's study's
            out += table1(record)
    return out + [f"![specification studies]({FIGURE})", ""]


def table1(record: dict) -> list[str]:
    """Table 1 beside the paper's: per trial, mean ± sd over the trials (ours: Crafter, actions =
    high-level skills that succeeded; blocks by where the player stood; items = tools made)."""
    keys = ("actions", *GAINS, "gained")
    rows = [{"": f"paper: {who} (Minecraft)", **dict(zip(TABLE1, cells))} for who, cells in PAPER_TABLE1.items()]
    for agent, label in AGENTS.items():
        per = record["agents"][agent]["per_trial"]
        rows.append({"": f"ours: {label} (Crafter)", **{c: f"{per[k][0]} ± {per[k][1]}" for c, k in zip(TABLE1, keys)}})
    return ["Table 1 (seed 000) beside ours, per trial (mean ± sd over the trials). The paper's rows are "
            "Minecraft's, as printed (VOYAGER is the unconstrained agent there); ours: action counts are "
            "high-level skills that succeeded, underground / overground the blocks (wood, stone, coal, iron, "
            "diamond, sapling) collected with the player on `path` (the mountains' tunnels, caves and dug rock) or "
            "elsewhere, items the tools made; gained objects their sum.", "", md(pd.DataFrame(rows)), ""]
