"""The `automata_eval` stage: exact recovery of random target DFAs under teacher noise, regula's
learner against plain L* -> metrics/automata_eval.json, metrics/automata_eval.csv. Each
(size, letters, noise, kind) cell is one unit of work, cached on its parameters and the code."""
from __future__ import annotations

import itertools

from regula.io import write_csv, write_json
from regula.stages import Paths, Work

from .evaluate import evaluate, summary


def cells(params: dict) -> list[dict]:
    p = params["automata_eval"]
    return [{"states": n, "letters": k, "noise": float(noise), "kind": kind, "targets": p["targets"],
             "votes": p["votes"], "max_queries": p["max_queries"]}
            for n, k, noise, kind in itertools.product(p["states"], p["letters"], p["noises"], p["kinds"])
            if not (noise == 0 and kind != p["kinds"][0])]  # noise 0 is one condition


def learn_cell(cell: dict) -> list[dict]:
    table = evaluate(sizes=(cell["states"],), letters=(cell["letters"],), noises=(cell["noise"],),
                     kinds=(cell["kind"],), targets=cell["targets"], votes=cell["votes"],
                     max_queries=cell["max_queries"])
    return table.to_dict(orient="records")


def _label(cell: dict) -> str:
    return f"n={cell['states']} k={cell['letters']} noise={cell['noise']} {cell['kind']}"


def run(params: dict, paths: Paths, work: Work) -> dict:
    import pandas as pd

    todo = cells(params)
    rows = []
    for i, (cell, learned) in enumerate(zip(todo, work.map(learn_cell, todo, name="learn", label=_label,
                                                            cache=True)), 1):
        rows += learned
        work.progress(f"automata_eval: cell {i}/{len(todo)} (n={cell['states']}, k={cell['letters']}, "
                      f"noise={cell['noise']}, {cell['kind']})")
    table = pd.DataFrame(rows)
    summ = summary(table)
    write_csv(paths.metrics / "automata_eval.csv", summ)
    out = {"runs": int(len(table)),
           "recovered": {f"n{r.states}_k{r.letters}_p{r.noise}_{r.kind}_{r.method}": round(float(r.recovered), 3)
                         for r in summ.itertuples()}}
    write_json(paths.metrics / "automata_eval.json", out)
    return out


def headline(m: dict) -> dict:
    """Runs, and each method's exact-recovery rate averaged over the cells."""
    by_method: dict = {}
    for key, rate in m["recovered"].items():  # n{states}_k{letters}_p{noise}_{kind}_{method}
        method = key.split("_", 4)[4]
        by_method.setdefault(method, []).append(rate)
    return {"runs": m["runs"], **{f"exact recovery, {method} (mean over cells)": round(sum(r) / len(r), 3)
                                  for method, r in sorted(by_method.items())}}
