"""CEDAR's Table 2 (tasks with and without the skill library, beside a free-form planner) and
Fig. 8 (teacher queries to reach table -> stone -> furnace -> iron -> diamond), from the
cedar_skills record."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from regula.report import papers
from regula.report.tables import md, plt, rate
from regula.stages import Paths

FIGURE = "cedar_budget.png"
LABELS = {"scratch": "CEDAR w/o S.L. (learned from scratch)", "library": "CEDAR (with the skill library)"}


def _ms(m: dict) -> str:
    return "–" if not m else f"{m['mean']:g} ± {m['std']:g}"


def table2(record: dict) -> pd.DataFrame:
    """Rows: the two conditions (askings, then rounds, then k/n) and the baseline; columns: tasks."""
    cells = record["tasks"]
    tasks = list(dict.fromkeys(c["task"] for c in cells))
    rows = []
    for condition in ("scratch", "library"):
        mine = {c["task"]: c for c in cells if c["condition"] == condition}
        rows.append({"row": LABELS[condition] + ": teacher askings",
                     **{t: f"{_ms(mine[t]['teacher_queries'])}; {rate(mine[t]['successes'], mine[t]['trials'])}"
                        for t in tasks}})
        rows.append({"row": LABELS[condition] + ": EQ rounds", **{t: _ms(mine[t]["eq_rounds"]) for t in tasks}})
    base = {b["task"]: b for b in record["baseline"]}
    if base:
        label = planner_label(next(iter(base.values()))["actor"])
        rows.append({"row": f"{label}: decisions to the goal",
                     **{t: f"{_ms(base[t]['decisions'])}; {rate(base[t]['successes'], base[t]['episodes'])}"
                        for t in tasks if t in base}})
        rows.append({"row": f"{label}: primitive steps per episode",
                     **{t: _ms(base[t].get("steps", {})) for t in tasks if t in base}})
    return pd.DataFrame(rows)


def planner_label(actor: str) -> str:
    """Who the free-form planner row is: the LLM actor, or the rule-grounded stand-in for it."""
    who = (f"LTLCrit's `{actor}` LLM actor" if actor == "naive" else
           f"LTLCrit's greedy actor aimed at the goal, `{actor}`; a rule-grounded stand-in for the paper's LLM planner")
    return f"free-form planner, no DFA ({who}, under data.yaml's hard laws)"


def plot(curve: list[dict], path: Path) -> None:
    names = [c["milestone"] for c in curve]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for key, label, marker in (("cedar_queries", "CEDAR: teacher askings (curriculum, cumulative)", "o"),
                               ("baseline_queries", "free-form planner: decisions (mean)", "s")):
        xs = [i for i, c in enumerate(curve) if c[key] is not None]
        ax.plot(xs, [curve[i][key] for i in xs], marker=marker, label=label)
    ax.set_xticks(range(len(names)), names)
    ax.set_yscale("symlog")
    ax.set_ylabel("queries to reach (log)")
    ax.set_title("Query budget along Find a Diamond (measured here, Crafter)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def lines(record: dict, paths: Paths) -> list[str]:
    if not record.get("tasks"):
        return []
    paper = papers.table("cedar_table2")
    theirs = pd.DataFrame([{"row": k, **dict(zip(paper["columns"], v))} for k, v in paper["rows"].items()])
    curve = record["budget"]
    plot(curve, Path(paths.reports) / FIGURE)
    budget = pd.DataFrame([{"milestone": c["milestone"], "achievement": c["achievement"],
                            "CEDAR teacher askings (cumulative)": "not learned" if c["cedar_queries"] is None
                            else c["cedar_queries"],
                            "free-form planner decisions (mean)": "–" if c["baseline_queries"] is None
                            else c["baseline_queries"],
                            "planner episodes reaching it": rate(c["baseline_reached"], c["baseline_episodes"])}
                           for c in curve])
    templates = sorted({f"{c['task']} ← {c['template']}" for c in record["tasks"] if c["template"]})
    return ["### Tasks with and without the skill library (CEDAR Table 2)", "",
            "Measured here, per task: each trial learns the task on its own teacher (the same noise rate on "
            "other words: seed + trial) within `cedar.tasks`' budget, then plays the DFA on one held-out "
            "world (the trial's); a cell is mean ± std over trials, then successes/trials with a 95% Wilson "
            "interval. **With the library**, "
            "the skills the curriculum learned before the task are letters `@s` (their DFAs run as "
            "policies) and a stored skill with the task's verb is its template (noun substituted, its D the "
            "learner's prior answers); a task outside the curriculum gets the whole library. **Without**, "
            "the task is learned from scratch over Crafter's skills. The paper counts prompting iterations; "
            "here teacher askings and equivalence rounds are both given. A trial whose DFA the world never "
            "confirmed is a failure, not played. The free-form planner chooses each next skill toward the "
            "task with no DFA: LTLCrit's naive LLM actor or, with the rules teacher, its rule-grounded "
            "stand-in `greedy_goal` (it proposes the task's action and, when the shield refuses one, an "
            "action whose name says it gets what the refusing laws found missing, depth first; it reads no "
            "recipe), both under data.yaml's hard laws (preconditions and map affordances, as LTLCrit's "
            "`hard_laws: true`), with the survival layer for upkeep. Its cost is its decisions up "
            "to the goal, on the same worlds; its primitive steps per episode (to the goal, or to death or "
            "the budget: 150 skills, 3,000 steps) are beside them. An episode in which an agent never took "
            "a primitive step is an error, never a row.",
            "", md(table2(record)), "",
            "Templates used: " + (", ".join(templates) if templates else "none") + ".", "",
            f"The paper ({paper['paper']}; {paper['setting']}), {paper['table']}", "", md(theirs), "",
            "### Query budget (CEDAR Fig. 8)", "",
            "CEDAR's cost to a milestone is the teacher askings of the curriculum (`cedar.skills`) summed up to "
            "the skill that reaches it (not learned: a skill on the way was not); the planner's is its mean "
            "decisions to the milestone over its Find-a-Diamond episodes that reached it. The paper plots "
            "cumulative LLM queries against VOYAGER (values not printed).", "",
            md(budget), "", f"![query budget]({FIGURE})", ""]
