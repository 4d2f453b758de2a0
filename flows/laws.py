"""Stage `laws`: Crafter's preconditions as hard laws (data/laws/crafter/), checked on the demos."""
from __future__ import annotations

import shutil
import sys

from flows import ROOT, flow_run_name, publish_metrics, scalars
from prefect import flow

from regula import params as params_mod
from regula.cli_support import run_main
from regula.io import write_json
from regula.logic import resolve_backend
from tasks import log_progress
from tasks.laws import derive_and_check


@flow(name="laws", flow_run_name=flow_run_name("laws"))
def laws_flow(root: str, params: dict) -> dict:
    metrics = derive_and_check(root, params)
    write_json(ROOT / "metrics" / "laws.json", metrics)
    publish_metrics("laws", scalars(metrics))
    log_progress(f"laws: {metrics['laws']} laws ({metrics['backend']}), {metrics['blocked']} of {metrics['steps']} "
                 f"demo steps blocked, {metrics['blocked_but_succeeded']} of them had succeeded")
    return metrics


def main(argv=None) -> dict:
    params = params_mod.load(ROOT / "params.yaml")
    resolve_backend(params["logic"]["backend"])  # `spot` asked for where it does not import: before any work
    shutil.rmtree(ROOT / "data" / "laws" / "crafter", ignore_errors=True)
    (ROOT / "data" / "laws" / "crafter").mkdir(parents=True)
    return laws_flow(str(ROOT), params)


if __name__ == "__main__":
    sys.exit(run_main(main))
