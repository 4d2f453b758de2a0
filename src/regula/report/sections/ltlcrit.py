"""The ltlcrit stage's section: the paper's Tables 1 and 2 beside regula's rows, the issue's bar."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from .. import papers
from regula.stages import Paths

from ..tables import fmt, md, pct, read_with_table, two_panels


def ltlcrit_tables(m: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 1 (primitive steps to each subgoal, reached/episodes) and Table 2 (failed and
    critic-blocked actions), ours beside the paper's rows."""
    subgoals = ("wood tool", "stone tool", "iron tool", "diamond")
    t1, t2 = [], []

    def ours(label, s):
        n = s["episodes"]
        t1.append({"method": label, **{g: f"{fmt(s[g]['steps'])} ({s[g]['reached']}/{n})" for g in subgoals},
                   "task actions to goal (optimum " + str(m["optimum"]["goal"]) + ")": fmt(s["goal"]["task_actions"])})
        if "failed_actions_pct" in s:
            t2.append({"method": label, "failed actions %": fmt(s["failed_actions_pct"]),
                       "critic-blocked %": fmt(s["critic_blocked_pct"]),
                       "hard-blocked %": fmt(s["hard_blocked_pct"]), "critic laws": fmt(s["critic_laws"])})

    ours("scripted expert (regula)", m["expert"])
    for name, a in m["actors"].items():
        ours(f"{name} (regula)", a["without_critic"])
        ours(f"{name} + LTLCrit, {a['iterations']} rounds (regula)", a["with_critic"])
    for label, row in papers.rows("ltlcrit_table1").items():
        t1.append({"method": f"{label} (paper, Minecraft)",
                   **{g: f"{'–' if row[g][0] is None else row[g][0]} ({row[g][1]})" for g in subgoals}})
    for label, row in papers.rows("ltlcrit_table2").items():
        t2.append({"method": f"{label} (paper, Minecraft)", "failed actions %": fmt(row["failed actions %"]),
                   "critic-blocked %": fmt(row["critic-blocked %"])})
    return pd.DataFrame(t1).fillna("–"), pd.DataFrame(t2).fillna("–")


def plot_ltlcrit(m: dict, history: pd.DataFrame, path: Path) -> None:
    """Success rate and critic laws per iteration (metrics/ltlcrit.csv), one line per actor."""
    def draw(left, right):
        for name in m["actors"]:
            h = history[history["actor"] == name]
            its = list(h["iteration"])
            left.plot(its, list(h["success_rate"]), marker="o", label=name)
            right.plot(its, list(h["critic_laws"]), marker="o", label=name)
        left.axhline(m["expert"]["success_rate"], color="grey", ls="--", label="scripted expert")
        left.set(xlabel="iteration", ylabel=f"success rate ({m['goal']})", ylim=(-0.05, 1.05))
        right.set(xlabel="iteration", ylabel="critic laws in force")
    two_panels(path, draw)


def section(paths: Paths) -> list[str]:
    found = read_with_table(paths.metrics, "ltlcrit", "ltlcrit.csv")
    if found is None:
        return []
    m, history = found
    plot_ltlcrit(m, history, paths.reports / "ltlcrit.png")
    t1, t2 = ltlcrit_tables(m)
    done = pd.DataFrame([{"actor": name, "expert's successes": d["expert_successes"],
                          "actor's successes": d["actor_successes"],
                          "actor on the expert's worlds": f"{d['actor_on_expert_worlds']} ({pct(d['share_of_expert_worlds'])})",
                          "successes vs expert": pct(d["successes_vs_expert"]),
                          "task actions / optimum": fmt(d["task_actions_over_optimum"], 2), "stopped": a["stop"]}
                         for name, a in m["actors"].items() for d in [a["done_when"]]])
    return ["## LTLCrit on Crafter: shielded actors, a critic that induces laws", "",
            f"Goal `{m['goal']}`, {m['episodes']} worlds per iteration (seeds {m['seeds'][0]}-{m['seeds'][1]}), "
            f"critic `{m['critic']}`" + (" reading the rollouts and the demonstrations" if m["critic_reads_demos"]
                                          else " reading the rollouts only") + ". "
            "Laws and the critic's verdicts per iteration: `data/laws/ltlcrit/<actor>/`; episodes: "
            "`data/ltlcrit/<actor>/`. The paper ran Minecraft with GPT-4.1 actors and an o3-mini critic "
            "over 5 runs; these rows are Crafter (which stands in for it here), so compare directions, "
            "not values. Task actions leave out exploring and the survival reflex, as the shortest plan does.", "",
            "### Table 1: mean primitive steps to each subgoal (reached / episodes)", "", md(t1), "",
            "### Table 2: failed and blocked actions", "", md(t2), "",
            "### The issue's bar", "",
            "Success on the worlds where the scripted expert succeeds, and task actions to the goal "
            "against the shortest plan from data.yaml:", "", md(done), "",
            "![ltlcrit](ltlcrit.png)", ""]
