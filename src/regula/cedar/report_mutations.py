"""Counterexample discovery (CEDAR Table 5, Fig. 10), for the CEDAR section: the rows of
`regula.cedar.mutations.discover` as tables beside the paper's and one figure."""
from __future__ import annotations

from math import sqrt
from pathlib import Path

import pandas as pd

from regula.report import papers
from regula.report.tables import md, plt, rate, wilson
from regula.stages import Paths

FIGURE = "cedar_counterexamples.png"


def bernoulli(found: int, n: int) -> dict:
    """A rate as Table 5 gives it: the share found and the per-simulation std sqrt(p(1-p))."""
    p = found / n
    return {"found": found, "simulations": n, "rate": p, "std": sqrt(p * (1 - p))}


def summary(rows: list[dict], by: str) -> list[dict]:
    """Rates per value of `by` (`skill`: Table 5; `distance`: Fig. 10), in sorted order."""
    groups: dict = {}
    for r in rows:
        groups.setdefault(r[by], []).append(r["found"])
    return [{by: key, **bernoulli(sum(f), len(f))} for key, f in sorted(groups.items())]


def average(groups: list[dict]) -> dict:
    """Table 5's Average row: the mean of the rates and the mean of the stds (so the paper's
    0.9358 and 0.1692 over its 16 items), with the pooled count beside them."""
    n = len(groups)
    return {"rate": sum(g["rate"] for g in groups) / n, "std": sum(g["std"] for g in groups) / n,
            "found": sum(g["found"] for g in groups), "simulations": sum(g["simulations"] for g in groups)}


def plot(by_distance: list[dict], path: Path) -> None:
    """Fig. 10's analogue: the share of simulations that found a counterexample against the length
    of the mutant's shortest distinguishing word, with 95% Wilson intervals, and how many
    simulations each length had."""
    x = [g["distance"] for g in by_distance]
    p = [g["rate"] for g in by_distance]
    lo, hi = zip(*(wilson(g["found"], g["simulations"]) for g in by_distance))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6, 5), sharex=True, height_ratios=(2, 1))
    # max(0, .): the interval's ends meet the rate at 0 and 1 up to rounding.
    yerr = [[max(0.0, a - b) for a, b in zip(p, lo)], [max(0.0, b - a) for a, b in zip(p, hi)]]
    top.errorbar(x, p, yerr=yerr, marker="o", capsize=3)
    top.set_ylabel("P(counterexample found)")
    top.set_ylim(-0.05, 1.05)
    bottom.bar(x, [g["simulations"] for g in by_distance])
    bottom.set_ylabel("simulations")
    bottom.set_xlabel("shortest distinguishing word's length")
    fig.suptitle("Counterexample discovery against its length (measured here, Crafter)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def lines(rows, paths: Paths) -> list[str]:
    """Markdown for the simulations `rows` (discover's rows, or the CSV they were written to as a
    DataFrame); draws the figure under the report folder."""
    rows = rows.to_dict("records") if isinstance(rows, pd.DataFrame) else list(rows)
    if not rows:
        return []
    rows = [{**r, "found": bool(r["found"])} for r in rows]
    skills, by_distance = summary(rows, "skill"), summary(rows, "distance")
    plot(by_distance, Path(paths.reports) / FIGURE)
    mean = average(skills)
    ours = pd.DataFrame([{"skill": g["skill"], "found": rate(g["found"], g["simulations"]),
                          "rate": f"{g['rate']:.4f}", "std": f"{g['std']:.4f}"} for g in skills]
                        + [{"skill": "Average", "found": rate(mean["found"], mean["simulations"]),
                            "rate": f"{mean['rate']:.4f}", "std": f"{mean['std']:.4f}"}])
    kinds = pd.DataFrame([{"mutation": g["kind"], "found": rate(g["found"], g["simulations"])}
                          for g in summary(rows, "kind")])
    lengths = pd.DataFrame([{"length": g["distance"], "found": rate(g["found"], g["simulations"]),
                             "rate": f"{g['rate']:.2f}"} for g in by_distance])
    paper = papers.table("cedar_table5")
    theirs = pd.DataFrame([{"item": k, **{c: f"{x:.4f}" for c, x in v.items()}}
                           for k, v in papers.rows("cedar_table5").items()])
    per_mutant: dict = {}
    for r in rows:
        per_mutant[(r["skill"], r["mutant"])] = per_mutant.get((r["skill"], r["mutant"]), False) or r["found"]
    mutants, never = len(per_mutant), sum(not f for f in per_mutant.values())
    return ["### Counterexample discovery (CEDAR Table 5, Fig. 10)", "",
            f"Measured here: {mutants} wrong skill DFAs (a transition of a correct one added or removed; "
            f"mutants equal to the original dropped), {len(rows)} simulations, each a rollout of a mutant "
            "as the policy on one Crafter world; a simulation found a counterexample when a word the "
            "world labelled is one the mutant labels otherwise. `rate` and `std` as Table 5 gives them "
            "(the share, and sqrt(p(1-p)) per simulation; Average: the mean of the rows' rates and stds); "
            "`found` with its 95% Wilson interval.", "",
            md(ours), "", f"{never} of the {mutants} mutants were found in none of their simulations "
            "(a rollout follows the mutant's own shortest accepting path, so an error off that path "
            "is never played). By mutation:", "", md(kinds), "",
            f"The paper ({paper['paper']}; {paper['setting']}), {paper['table']}", "", md(theirs), "",
            "By length (Fig. 10): a counterexample's length here is that of the mutant's shortest "
            "distinguishing word (where the mutant first goes wrong), since the paper reads short "
            "counterexamples as a DFA that \"fails early in its execution\" (the found one's length "
            "would make every rate 1).", "", md(lengths), "", f"![counterexamples]({FIGURE})", ""]
