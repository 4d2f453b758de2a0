"""The dive stage's section: dynamics discovered and verified, upper levels, the agents."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from .. import papers
from regula.stages import Paths

from ..tables import fmt, md, read_with_table, two_panels


def plot_dive(steps: pd.DataFrame, path: Path) -> None:
    """The paper's Fig. 3 and 4: recall and precision of discovered and verified dynamics."""
    def draw(left, right):
        for name, style in (("discovered", "--"), ("verified", "-")):
            left.plot(steps["step"], steps[f"{name}_recall"], style, marker="o", label=name)
            right.plot(steps["step"], steps[f"{name}_precision"], style, marker="o", label=name)
        left.set(xlabel="discovery step (demonstrations read)", ylabel="recall vs data.yaml", ylim=(0, 1.05))
        right.set(xlabel="discovery step (demonstrations read)", ylabel="precision vs data.yaml", ylim=(0, 1.05))
    two_panels(path, draw)


def section(paths: Paths) -> list[str]:
    found = read_with_table(paths.metrics, "dive", "dive_steps.csv")
    if found is None:
        return []
    m, steps = found
    plot_dive(steps, paths.reports / "dive.png")
    pr = pd.DataFrame([{"set": name, "dynamics": m[name]["n"], "precision": fmt(m[name]["precision"], 3),
                        "recall (all of data.yaml)": fmt(m[name]["recall"], 3)}
                       for name in ("discovered", "verified")])
    origins = pd.DataFrame([{"origin": k.replace("_", "-"), **v} for k, v in m["by_origin"].items()])
    wrong = ", ".join(f"`{t}`" for t in m["wrong_verified"]) or "none"
    missed = ", ".join(f"`{t}`" for t in m["correct_rejected"]) or "none"
    return ["## DiVE: world dynamics discovered, verified, scored against data.yaml", "",
            f"Discoverer `{m['discoverer']}` over {m['steps']} demonstrations (one discovery step each), "
            f"with {m['inject']:.0%} injected wrong candidates of the paper's kinds (Table 5); the Verifier "
            "checks every candidate on fresh experience (the demonstrations and exploration episodes in "
            f"`data/dive/explore/`). Banks: {', '.join(f'{k} {v}' for k, v in m['banks'].items())}. Ground "
            f"truth H†: data.yaml's recipes as {m['truth']} facts. Candidates, verdicts and every rejection's "
            "reason and evidence: `data/dive/`.", "",
            md(pr), "",
            f"Recall over the actions the demonstrations show: {fmt(m['verified']['recall_demonstrated'], 3)}.", "",
            "### Candidates by origin (the paper's Table 5 kinds)", "", md(origins), "",
            f"Verified but wrong: {wrong}. Correct but rejected: {missed}.", "",
            "![dive](dive.png)", "", *dive_upper_lines(m), *dive_agent_lines(m)]


def dive_upper_lines(m: dict) -> list[str]:
    if "subtasks" not in m:
        return []
    sp = m["subtask_preconditions"]
    rows = pd.DataFrame([{"subtask": k, "segments": v["segments"], "median steps": v["steps"],
                          "preconditions (verified)": ", ".join(v["preconditions"]) or "–",
                          "outcomes": ", ".join(f"{i} {n:+d}" for i, n in v["outcomes"].items()) or "–",
                          "termination": ", ".join(v["termination"])} for k, v in m["subtasks"].items()])
    objects = ", ".join(m["objects"]["discovered"]) or "none"
    kept = ", ".join(m["objects"]["verified"]) or "none"
    bad = m["subgoal_order_violations"]
    return ["### Objects, subtasks, subgoals", "",
            f"Object relations discovered: {objects}; verified on the exploration episodes: {kept}.", "",
            f"Subtask preconditions against the propositions Crafter's hard laws need: precision "
            f"{fmt(sp['precision'], 3)}, recall {fmt(sp['recall'], 3)} ({sp['correct']} of {sp['preconditions']} "
            "kept are needed). The demonstrations' planner always arrives with more than it needs, and the "
            "exploration episodes reach only the early game, so most late preconditions stay confounded.", "",
            md(rows), "",
            f"Subgoal order: {', '.join(m['subgoals'])}; pairs against data.yaml's dependencies: "
            f"{len(bad)}{' (' + ', '.join(f'{a} before {b}' for a, b in bad) + ')' if bad else ''}.", ""]


# regula's agent conditions -> the paper's Table 3 labels (the rows not listed do not run here)
TABLE3_LABELS = {"dive": "DiVE", "no_evolver": "w/o E", "no_verifier": "w/o V", "no_dynamics": "w/o D&V&E"}


def _source(name: str) -> str:
    t = papers.table(name)
    return f"{t['paper']}, {t['table']} ({t['setting']})"


def dive_agent_lines(m: dict) -> list[str]:
    if "agent" not in m:
        return []
    ours = {TABLE3_LABELS.get(c, c): a for c, a in m["agent"].items()}
    rows = [{"agent": label, "paper: score, reward": ", ".join(quoted),
             "regula: Crafter score %": f"{ours[label]['score']} ± {ours[label]['score_std']}" if label in ours else "–",
             "regula: reward": f"{ours[label]['reward']} ± {ours[label]['reward_std']}" if label in ours else "–",
             "regula: mean steps": ours[label]["steps"] if label in ours else "–"}
            for label, quoted in papers.table("dive_table3")["rows"].items()]
    board = pd.DataFrame([{"method": k, "score": v[0], "reward": v[1]}
                          for k, v in papers.table("dive_scoreboard")["rows"].items()])
    n = next(iter(m["agent"].values()))["episodes"] if m["agent"] else 0
    return ["### Agents: the paper's Table 3 ablations", "",
            f"Each condition plays the same {n} full Crafter episodes (10,000 steps or death) with the subgoal "
            f"order read from the demonstrations ({', '.join(m.get('subgoals', []))}); the evolver is symbolic "
            "backward chaining over the dynamics, the critic ranks strategies by length. The skills' own "
            "controller already knows how to walk, dig and check an action's needs, which is why even "
            "`w/o D&V&E` is far above the paper's. The paper's rows are quoted as printed (mean ± std); a row "
            f"with no regula numbers does not run here yet. Source: {_source('dive_table3')}.", "",
            md(pd.DataFrame(rows)), "",
            f"The paper's Crafter scoreboard, quoted as printed: {_source('dive_scoreboard')}.", "", md(board), ""]
