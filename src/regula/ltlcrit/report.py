"""The ltlcrit stage's section: every actor with and without the critic over held-out worlds
(the stage's rows and its LLM twin's), rates with 95% Wilson intervals, the expert on the same
worlds, the demos ablation labelled, and the paper's Tables 1 and 2 quoted beside."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from regula.report import papers
from regula.report.tables import fmt, md, paired_difference, pct, rate, read_with_table, read_detail, two_panels
from regula.stages import TWIN, Paths

SUBGOALS = ("wood tool", "stone tool", "iron tool", "diamond")  # the paper's Table 1 columns (ltlcrit.model)
ABLATION = "ablation, not in the paper"


def _runs(m: dict, who: str, budget: str = "") -> list[tuple[str, dict]]:
    """(label, summary) per row of a stage record: the expert (on the record's budget), each
    actor without the critic (iteration 0) and with it (its last iteration; where the critic's
    first round changed no law there is no such row, and the label says so), each
    demos-ablation run with the critic."""
    rows = [(f"scripted expert{budget}", m["expert"])]
    for name, a in m["actors"].items():
        if a["iterations"] == 0:
            rows.append((f"{name}, no critic; the critic's first round changed no law{who}", a["without_critic"]))
            continue
        rows += [(f"{name}, no critic{who}", a["without_critic"]),
                 (f"{name} + LTLCrit, iteration {a['iterations']}{who}", a["with_critic"])]
        rows += _baseline(name, a, who)
    for name, a in m["demos_ablation"].items():
        actor = name.removesuffix("_demos")
        rows.append((f"{actor} + LTLCrit, iteration {a['iterations']}, critic also reads data/demos "
                     f"({ABLATION}){who}", a["with_critic"]))
        rows += _baseline(name, a, who)
    return rows


def _baseline(name: str, a: dict, who: str) -> list[tuple[str, dict]]:
    """The row "random actor under this run's final laws" (none where the run is random's own)."""
    b = a.get("baseline")
    return [(f"{b['actor']} actor under {name}'s final laws (the baseline){who}", b)] if b else []


def gain_table(records: list[tuple[dict, bool]]) -> pd.DataFrame:
    """Per run with a critic: its success with the critic, the random actor's under the same
    final laws on the same worlds, and the difference with Newcombe's 95% interval for paired
    proportions: the critic's gain credited to the actor's choices, not to the laws."""
    rows = []
    for m, twin in records:
        who = _who(m, twin)
        for name, a in {**m["actors"], **m["demos_ablation"]}.items():
            b = a.get("baseline")
            if not b:
                continue
            s, n, pairs = a["with_critic"], b["episodes"], b["pairs"]
            lo, hi = paired_difference(pairs["both"], pairs["run_only"], pairs["baseline_only"], pairs["neither"])
            diff = (s["successes"] - b["successes"]) / n
            rows.append({"run (measured here)": f"{name}{who}", "with its critic": rate(s["successes"], n),
                         f"{b['actor']} under the same laws": rate(b["successes"], n),
                         "gain (95% interval)": f"{100 * diff:+.1f} pts ({100 * lo:+.1f} to {100 * hi:+.1f})",
                         "worlds: both / run only / baseline only / neither":
                             f"{pairs['both']} / {pairs['run_only']} / {pairs['baseline_only']} / {pairs['neither']}",
                         "laws left ≥ 2 actions": pct(s.get("choice_share")),
                         "actor decided": pct(s.get("actor_share"))})
    return pd.DataFrame(rows)


def _who(m: dict, twin: bool) -> str:
    """A twin's rows name its model and budget; the stage's say nothing (no LLM asked)."""
    if not twin:
        return ""
    return f" [{m['model'] or 'no model'}; {_budget(m)}]"


def _budget(m: dict) -> str:
    b = m["budget"]
    return (f"{m['episodes']} worlds, {b['max_skills']} skills, at most {b['iterations']} critic rounds, "
            f"{b['max_replans']} re-plans")


def _critic_blocked(s: dict) -> str:
    """N/A where no critic law was in force (iteration 0, as the paper's rows without LTLCrit)."""
    return "N/A (no critic)" if s.get("critic_laws") == 0 else fmt(s.get("critic_blocked_pct"))


def rates_table(records: list[tuple[dict, bool]]) -> pd.DataFrame:
    """Success and milestone rates (k/n, 95% Wilson interval), task actions over the optimum,
    and Table 2's quantities with the fallback's share and re-plans per decision, and the
    episodes in which the actor never took a primitive step (failures, counted apart)."""
    rows = []
    for m, twin in records:
        goal = m["goal"]
        for label, s in _runs(m, _who(m, twin), f" [{_budget(m)}]" if twin else ""):
            n = s["episodes"]
            rows.append({"row (measured here)": label, f"success ({goal})": rate(s["successes"], n),
                         **{g: rate(s[g]["reached"], n) for g in SUBGOALS if g != "diamond" or goal != "collect_diamond"},
                         f"task actions / optimum ({m['optimum']['goal']})": fmt(s["task_actions_over_optimum"], 2),
                         "failed %": fmt(s.get("failed_actions_pct")), "critic-blocked %": _critic_blocked(s),
                         "hard-blocked %": fmt(s.get("hard_blocked_pct")), "fallback share": fmt(s.get("fallback_share"), 3),
                         "laws left ≥ 2 actions": pct(s.get("choice_share")), "actor decided": pct(s.get("actor_share")),
                         "re-plans / decision": fmt(s.get("replans_per_decision"), 2),
                         # failures in which the actor never took a primitive step, counted apart
                         "never acted": f"{s['idle_episodes']}/{n}" if "idle_episodes" in s else None})
    return pd.DataFrame(rows).fillna("–")


def _source(name: str) -> str:
    """`(paper, Table n; setting)` for a quoted row."""
    t = papers.table(name)
    return f"({t['paper']}, {t['table'].split(':')[0]}; {t['setting']})"


def paper_tables(records: list[tuple[dict, bool]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 1 (mean primitive steps to each subgoal, reached/episodes) and Table 2 (failed and
    critic-blocked %) as the paper defines them, the paper's rows quoted beside with source."""
    t1, t2 = [], []
    for m, twin in records:
        for label, s in _runs(m, _who(m, twin), f" [{_budget(m)}]" if twin else ""):
            n = s["episodes"]
            t1.append({"method": f"{label} (measured here)",
                       **{g: f"{fmt(s[g]['steps'])} ({s[g]['reached']}/{n})" for g in SUBGOALS}})
            if "failed_actions_pct" in s:
                t2.append({"method": f"{label} (measured here)", "failed actions %": fmt(s["failed_actions_pct"]),
                           "critic-blocked %": _critic_blocked(s)})
    for label, row in papers.rows("ltlcrit_table1").items():
        t1.append({"method": f"{label} {_source('ltlcrit_table1')}",
                   **{g: f"{'N/A' if row[g][0] is None else row[g][0]} ({row[g][1]})" for g in SUBGOALS}})
    for label, row in papers.rows("ltlcrit_table2").items():
        t2.append({"method": f"{label} {_source('ltlcrit_table2')}", "failed actions %": fmt(row["failed actions %"]),
                   "critic-blocked %": "N/A" if row["critic-blocked %"] is None else fmt(row["critic-blocked %"])})
    return pd.DataFrame(t1).fillna("–"), pd.DataFrame(t2).fillna("–")


def plot_ltlcrit(m: dict, history: pd.DataFrame, path: Path) -> None:
    """Success rate and the fallback's share of decisions per iteration (metrics/ltlcrit.csv),
    one line per run."""
    def draw(left, right):
        for name in [*m["actors"], *m["demos_ablation"]]:
            h = history[history["actor"] == name]
            its = list(h["iteration"])
            label = f"{name} ({ABLATION})" if name in m["demos_ablation"] else name
            left.plot(its, list(h["success_rate"]), marker="o", label=label)
            right.plot(its, list(h["fallback_share"]), marker="o", label=label)
        left.axhline(m["expert"]["success_rate"], color="grey", ls="--", label="scripted expert")
        left.set(xlabel="iteration (0: no critic)", ylabel=f"success rate ({m['goal']})", ylim=(-0.05, 1.05))
        right.set(xlabel="iteration (0: no critic)", ylabel="decisions the fallback made", ylim=(-0.05, 1.05))
    two_panels(path, draw)


T2 = papers.table("ltlcrit_table2")["table"]
DEFINITIONS = (
    "Definitions. The paper (Gokhale et al., LTLCrit, seed 003, §4.3): \"We log invalid or failed actions and "
    "measure the total number of failed actions and the number of unsafe actions blocked by the LTL critic\"; "
    f"its {T2.split('. ', 1)[0]}: \"{T2.split('. ', 1)[1]}\" It gives no denominator; here both are shares. "
    "**Failed %**: the actor's executed actions that did not succeed, skills interrupted midway by the upkeep "
    "survival layer or danger and skills the agent died in included (only a skill the episode's length cut off is "
    "left out), plus its proposals naming no action, over executed actions plus those proposals. "
    "**Critic-blocked %**: the actor's proposals a critic law refused, over all its proposals; **hard-blocked %**: "
    "those only the hand-written hard laws (data/laws/crafter, SayCan's affordances) refused. At each decision "
    "the actor proposes until a proposal passes; after `max_replans` refusals the declared **fallback** picks "
    "among the allowed actions (`ranked`: the actor's own ranking restricted to them, a seeded uniform draw where "
    "it names none; `uniform`: a seeded uniform draw), never a planner. **Fallback share**: the decisions it "
    "made; **re-plans / decision**: refused proposals per decision. Rates are k/n over the worlds with their "
    "95% Wilson interval; task actions (exploring and the survival layer left out, as the shortest plan does) "
    "to the goal, mean over the episodes that reached it, over data.yaml's shortest plan.")


GAIN = (
    "A success under laws can be the laws' own: where they leave one action, the actor decides nothing. "
    "**Laws left ≥ 2 actions**: the share of the actor's decisions where the laws (hard and critic, the action "
    "that just failed taken out) allowed two or more; **actor decided**: the share where, with two or more "
    "allowed, the executed action was the actor's own (a proposal that passed, or its ranking among the allowed "
    "through the `ranked` fallback), not the fallback's uniform draw. **Gain**: the run's success with its critic "
    "minus the random actor's under the same final laws on the same worlds, with Newcombe's 95% interval for "
    "paired rates (each world counted once, by which of the two reached the goal). Where the interval holds 0, "
    "the run's success is not shown to be the actor's rather than what any actor under those laws gets.")


def _efficiency(m: dict) -> str:
    """What the critic's efficiency laws are on this record."""
    if m.get("efficiency") == "plan":
        return ("Efficiency laws: **`plan`** (`ltlcrit.efficiency`, an option, not the paper's critic): positive laws "
                "`G(state -> action)` regressed from the goal through the hard laws, which together spell the way "
                "to the goal and leave the actor one action at most decisions.")
    if m.get("efficiency") == "restrict":
        return ("Efficiency laws: **`restrict`** (`ltlcrit.efficiency`, the paper's critic): the critic blocks "
                "actions its rollouts show failing or wasted (nothing gained: no achievement, no proposition made "
                "true, no resource more) in the states they were, and leaves the choice among the rest to the actor; "
                "`plan` (positive laws that spell the way to the goal) is the labelled option.")
    return "Efficiency laws: the LLM critic's own (the symbolic critic's `ltlcrit.efficiency` does not apply)."


def section(paths: Paths) -> list[str]:
    found = read_with_table(paths.metrics, "ltlcrit", "ltlcrit.csv")
    if found is None:
        return []
    m, history = found
    twin = read_detail(paths.metrics, "ltlcrit" + TWIN)
    records = [(m, False)] + ([(twin, True)] if twin else [])
    plot_ltlcrit(m, history, paths.reports / "ltlcrit.png")
    t1, t2 = paper_tables(records)
    b = m["budget"]
    lines = ["## LTLCrit on Crafter: shielded actors, a critic that induces laws", "",
             f"Goal `{m['goal']}`, {m['episodes']} `{m['worlds']}` worlds (seeds {m['seeds'][0]}-{m['seeds'][1]}), "
             f"never played while developing, the same for every actor and the scripted expert (its episodes: "
             f"`data/ltlcrit/expert/`). Critic `{m['critic']}` reading each actor's own rollouts, as in the paper; "
             f"at most {b['iterations']} critic rounds, {b['max_replans']} re-plans per decision, then the "
             f"`{m['fallback']}` fallback; {b['max_skills']} skills and {b['max_steps']} primitive steps per "
             "episode. Laws and the critic's verdicts per iteration: `data/laws/ltlcrit/<actor>/`; episodes: "
             "`data/ltlcrit/<actor>/`. The paper ran Minecraft with GPT-4.1 actors and an o3-mini critic over 5 "
             "runs; these rows are Crafter, so compare directions, not values."]
    if twin:
        lines[-1] += (f" Rows marked [model; budget] are the `ltlcrit_llm` twin: every actor and the critic asking "
                      f"{twin['model']} through `llm`, on the budget shown ({twin['episodes']} `{twin['worlds']}` "
                      f"worlds, seeds {twin['seeds'][0]}-{twin['seeds'][1]}).")
    lines += ["", _efficiency(m)]
    gains = gain_table(records)
    return lines + ["", "### Every actor, without and with the critic (measured here)", "",
                    "No critic: iteration 0, under the hand-written hard laws alone; critic: the last iteration "
                    "(`ltlcrit.iterations` rounds at most, fewer once no law changes or nothing improves); beside "
                    "each run with a critic, the random actor under that run's final laws on the same worlds.", "",
                    md(rates_table(records)), "", DEFINITIONS, "",
                    "### What the actor earns: each run with its critic against the random actor under the same laws",
                    "", GAIN, "", md(gains) if len(gains) else "(no run with a critic has a baseline row)", "",
                    "### Table 1: mean primitive steps to each subgoal (reached / episodes), beside the paper's", "",
                    md(t1), "", "### Table 2: failed and critic-blocked actions, beside the paper's", "", md(t2), "",
                    "![ltlcrit](ltlcrit.png)", ""]
