"""Stage `automata_eval`: exact recovery of random DFAs under teacher noise, regula's learner
against plain L* -> metrics/automata_eval.json, metrics/automata_eval.csv."""
from __future__ import annotations

import itertools
import sys

import pandas as pd
from flows import ROOT, flow_run_name, publish_metrics
from prefect import flow

from regula import params as params_mod
from regula.automata.evaluate import summary
from regula.cli_support import run_main
from regula.io import write_csv, write_json
from tasks import log_progress
from tasks.automata_eval import learn_cell


@flow(name="automata_eval", flow_run_name=flow_run_name("automata_eval"))
def automata_eval_flow(params: dict) -> dict:
    p = params["automata_eval"]
    cells = [{"states": n, "letters": k, "noise": float(noise), "kind": kind, "targets": p["targets"],
              "votes": p["votes"], "max_queries": p["max_queries"]}
             for n, k, noise, kind in itertools.product(p["states"], p["letters"], p["noises"], p["kinds"])
             if not (noise == 0 and kind != p["kinds"][0])]  # noise 0 is one condition
    rows = []
    for i, cell in enumerate(cells, 1):
        rows += learn_cell(cell)
        log_progress(f"automata_eval: cell {i}/{len(cells)} (n={cell['states']}, k={cell['letters']}, "
                     f"noise={cell['noise']}, {cell['kind']})")
    table = pd.DataFrame(rows)
    summ = summary(table)
    write_csv(ROOT / "metrics" / "automata_eval.csv", summ)
    out = {"runs": int(len(table)),
           "recovered": {f"n{r.states}_k{r.letters}_p{r.noise}_{r.kind}_{r.method}": round(float(r.recovered), 3)
                         for r in summ.itertuples()}}
    write_json(ROOT / "metrics" / "automata_eval.json", out)
    publish_metrics("automata_eval", headline(out, summ))
    return out


def headline(out: dict, summ: pd.DataFrame) -> dict:
    """Runs, and each method's exact-recovery rate averaged over the cells."""
    return {"runs": out["runs"], **{f"exact recovery, {method} (mean over cells)": round(float(rate), 3)
                                    for method, rate in summ.groupby("method")["recovered"].mean().items()}}


def main(argv=None) -> dict:
    return automata_eval_flow(params_mod.load(ROOT / "params.yaml"))


if __name__ == "__main__":
    sys.exit(run_main(main))
