"""Stage `feedback`: predict each sampled step's outcome -> data/feedback/, metrics/feedback*.json."""
from __future__ import annotations

import sys
from pathlib import Path

from flows import ROOT, flow_run_name, publish_metrics, scalars
from prefect import flow

from regula import feedback, params as params_mod
from regula.cli_support import run_main
from regula.io import write_json
from tasks import log_progress
from tasks.feedback import predict_feedback


@flow(name="feedback", flow_run_name=flow_run_name("feedback"))
def feedback_flow(root: str, params: dict) -> dict:
    rows, scores, accounting = predict_feedback(root, params)
    root_ = Path(root)
    feedback.write_rows(root_ / "data" / "feedback" / "predictions.jsonl", rows)
    cfg = params["feedback"]
    metrics = {**scores, "backend": cfg["backend"],
               "model": params["llm"]["model"] if cfg["backend"] != "rules" else None}
    write_json(root_ / "metrics" / "feedback.json", metrics)
    write_json(root_ / "metrics" / "feedback_llm.json", accounting)
    publish_metrics("feedback", scalars(metrics))
    log_progress(f"feedback: {scores['n']} predictions by {cfg['backend']}, accuracy {scores['accuracy']}")
    return metrics


def main(argv=None) -> dict:
    params = params_mod.load(ROOT / "params.yaml")  # bad llm.* values or backend fail here
    # The stage's LLM cache folder is a DVC output: make it exist even when no call is made.
    (ROOT / params["llm"]["cache_dir"] / "feedback").mkdir(parents=True, exist_ok=True)
    return feedback_flow(str(ROOT), params)


if __name__ == "__main__":
    sys.exit(run_main(main))
