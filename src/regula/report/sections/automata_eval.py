"""The automata_eval stage's section: random DFAs learned under a noisy teacher."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from regula.stages import Paths

from ..tables import md, plt


def plot_automata(t: pd.DataFrame, path: Path) -> None:
    """Exact recovery and equivalence rounds against teacher noise, per method and noise kind."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for (states, method, kind), g in t.groupby(["states", "method", "kind"]):
        g = g.sort_values("noise")
        label = f"{method}, {kind}, {states} states"
        style = "-" if method == "regula" else ":"
        left.plot(g["noise"], 100 * g["recovered"], style, marker="o", label=label)
        if method == "regula":
            right.plot(g["noise"], g["rounds"], style, marker="o", label=label)
    left.set_xlabel("teacher noise")
    left.set_ylabel("targets recovered exactly (%)")
    left.set_ylim(-5, 105)
    right.set_xlabel("teacher noise")
    right.set_ylabel("median equivalence rounds")
    left.legend(fontsize=7)
    right.legend(fontsize=7)
    fig.suptitle("Learning random DFAs under a noisy teacher")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def section(paths: Paths) -> list[str]:
    metrics_dir, out_dir = paths.metrics, paths.reports
    path = Path(metrics_dir) / "automata_eval.csv"
    if not path.exists():
        return []
    t = pd.read_csv(path)
    plot_automata(t, Path(out_dir) / "automata_recovery.png")
    t["recovered"] = (100 * t["recovered"]).round(1)
    t["agreement"] = t["agreement"].round(4)
    return ["## Learning DFAs under a noisy teacher (CEDAR's learner)", "",
            "Random target DFAs (AALpy's generator), exact equivalence oracle; `recovered` is the % of "
            "targets learned exactly, `agreement` the held-out word agreement of what was learned, "
            "`queries` the median teacher askings. `plain_lstar` is AALpy's L* with no noise handling.", "",
            md(t), "", "![automata](automata_recovery.png)", ""]
