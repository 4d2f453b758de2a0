"""The flows' Prefect wiring: run names, settings from prefect.toml (no flow is run here)."""
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import prefect.runtime.flow_run as runtime_flow_run
import pytest

from regula.params import fingerprint

ROOT = Path(__file__).resolve().parent.parent
STAGES = ["demos", "feedback", "laws", "automata_eval", "ltlcrit", "dive", "report"]


@pytest.mark.parametrize("stage", STAGES)
def test_flow_run_name_is_the_stage_and_a_hash_of_its_params(monkeypatch, stage):
    module = importlib.import_module(f"flows.{stage}")
    flow = getattr(module, f"{stage}_flow")
    params = {"seed": 7, stage: {"episodes": 3}}
    # What Prefect hands the callable inside a run: the flow's parameters.
    monkeypatch.setitem(runtime_flow_run.FIELDS, "parameters", lambda: {"root": "/anywhere", "params": params})
    assert flow.name == stage
    assert flow.flow_run_name() == f"{stage}-{fingerprint(params)[:8]}"
    monkeypatch.setitem(runtime_flow_run.FIELDS, "parameters", lambda: {"root": "/elsewhere", "params": params})
    assert flow.flow_run_name() == f"{stage}-{fingerprint(params)[:8]}"  # paths do not name a run


def test_prefect_settings_come_from_prefect_toml_at_the_root(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    code = ("import json, prefect.settings as s; c = s.get_current_settings(); print(json.dumps(["
            "str(c.home), c.logging.level, c.logging.log_prints, c.server.analytics_enabled, "
            "c.server.ephemeral.startup_timeout_seconds]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=True).stdout
    assert json.loads(out) == [".prefect", "WARNING", False, False, 180]


def test_headline_metrics_of_every_stage_from_its_metrics_file():
    """The artifact each flow publishes, built from the committed metrics files (a stage that
    cannot run here still has its headline checked)."""
    import re

    import pandas as pd

    import flows
    from flows import automata_eval, dive, ltlcrit

    metrics = {s: json.loads((ROOT / "metrics" / f"{s}.json").read_text())
               for s in ["demos", "feedback", "laws", "automata_eval", "ltlcrit", "dive"]}
    headlines = {
        "demos": flows.scalars(metrics["demos"]),
        "feedback": flows.scalars(metrics["feedback"]),
        "laws": flows.scalars(metrics["laws"]),
        "automata_eval": automata_eval.headline(metrics["automata_eval"],
                                                pd.read_csv(ROOT / "metrics" / "automata_eval.csv")),
        "ltlcrit": ltlcrit.headline(metrics["ltlcrit"]),
        "dive": dive.headline(metrics["dive"]),
    }
    for stage, headline in headlines.items():
        assert headline and all(not isinstance(v, (dict, list)) for v in headline.values()), stage
        assert re.fullmatch(r"[a-z0-9-]+", flows.artifact_key(stage)), stage
        table = flows.metrics_markdown(headline).splitlines()
        assert table[:2] == ["| metric | value |", "|---|---|"] and len(table) == 2 + len(headline)
    assert headlines["demos"]["success_rate"] == metrics["demos"]["success_rate"]
    assert flows.artifact_key("automata_eval") == "automata-eval-metrics"
    assert flows.metrics_markdown({"model": None, "a|b": 1}) == "| metric | value |\n|---|---|\n| model | – |\n| a\\|b | 1 |\n"
