"""Stage `dive`: DiVE's offline dynamics learning (seed 004) -> data/dive/ (exploration
episodes, discovered and verified dynamics, rejections with evidence), metrics/dive.json,
metrics/dive_steps.csv (precision and recall per discovery step), and the agents of the
paper's Table 3 ablations playing full episodes (data/dive/agent/)."""
from __future__ import annotations

import sys

from flows import ROOT, flow_run_name, publish_metrics
from prefect import flow

from regula import params as params_mod
from regula.cli_support import run_main
from tasks import log_progress
from tasks.dive import discover_verify, explore, play_agents


@flow(name="dive", flow_run_name=flow_run_name("dive"))
def dive_flow(params: dict, root: str) -> dict:
    m = play_agents(params, root, discover_verify(params, root, explore(params, root)))
    publish_metrics("dive", headline(m))
    log_progress(f"dive: {m['verified']['n']} verified dynamics, precision {m['verified']['precision']}, recall "
                 f"{m['verified']['recall']} against data.yaml ({m['discovered']['n']} discovered, precision "
                 f"{m['discovered']['precision']})")
    return m


def headline(m: dict) -> dict:
    """Discovered and verified dynamics against data.yaml, and each agent's Crafter score."""
    return {**{f"{kind} dynamics: {k}": m[kind][k] for kind in ("discovered", "verified")
               for k in ("n", "precision", "recall")},
            **{f"agent {name}: score": a["score"] for name, a in m["agent"].items()}}


def main(argv=None) -> dict:
    params = params_mod.load(ROOT / "params.yaml")
    # The stage's LLM cache folder is a DVC output: make it exist even when no call is made.
    (ROOT / params["llm"]["cache_dir"] / "dive").mkdir(parents=True, exist_ok=True)
    return dive_flow(params, str(ROOT))


if __name__ == "__main__":
    sys.exit(run_main(main))
