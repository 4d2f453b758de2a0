"""Stage `report`: reports/report.md and its plots, from tracked files only."""
from __future__ import annotations

import sys

from flows import ROOT, flow_run_name
from prefect import flow

from regula import params as params_mod
from regula.cli_support import run_main
from tasks.report import build_report


@flow(name="report", flow_run_name=flow_run_name("report"))
def report_flow(root: str, params: dict) -> str:
    return build_report(root, params["report"]["title"])


def main(argv=None) -> str:
    params = params_mod.load(ROOT / "params.yaml")
    path = report_flow(str(ROOT), params)
    print(f"report: {path}")
    return path


if __name__ == "__main__":
    sys.exit(run_main(main))
