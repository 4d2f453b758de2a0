"""Stage `ltlcrit`: shielded actors and a critic inducing LTL laws from trajectories (seed 003)
-> data/laws/ltlcrit/ (laws and critic verdicts per iteration), data/ltlcrit/ (episodes),
metrics/ltlcrit.json, metrics/ltlcrit.csv."""
from __future__ import annotations

import sys

from flows import ROOT, flow_run_name, publish_metrics
from prefect import flow

from regula import params as params_mod
from regula.cli_support import run_main
from regula.llm.accounting import merge
from regula.ltlcrit import stage
from regula.ltlcrit.loop import ActorRun
from tasks.ltlcrit import expert_baseline, improve_actor


@flow(name="ltlcrit", flow_run_name=flow_run_name("ltlcrit"))
def ltlcrit_flow(params: dict, root: str) -> dict:
    expert = expert_baseline(params, root)
    runs, llm = {}, {}
    for name in params["ltlcrit"]["actors"]:
        run, accounting = improve_actor(params, root, name)
        runs[name] = ActorRun(**run)
        llm = merge(llm, accounting)
    ctx = stage.context(params, ROOT)
    metrics = stage.metrics(ctx.model, ctx.seeds, expert, runs, params["ltlcrit"], llm)
    stage.write_metrics(metrics, ROOT / "metrics")
    publish_metrics("ltlcrit", headline(metrics))
    return metrics


def headline(m: dict) -> dict:
    """Success rates: the expert's, and each actor's without and with the critic's laws."""
    return {"episodes": m["episodes"], "critic": m["critic"], "expert: success rate": m["expert"]["success_rate"],
            **{f"{name}: success rate {when} critic": a[f"{when}_critic"]["success_rate"]
               for name, a in m["actors"].items() for when in ("without", "with")}}


def main(argv=None) -> dict:
    params = params_mod.load(ROOT / "params.yaml")
    stage.check(params)  # what the schema cannot check (Spot importable, one goal) before any episode
    # The stage's LLM cache folder is a DVC output: make it exist even when no call is made.
    (ROOT / params["llm"]["cache_dir"] / "ltlcrit").mkdir(parents=True, exist_ok=True)
    return ltlcrit_flow(params, str(ROOT))


if __name__ == "__main__":
    sys.exit(run_main(main))
