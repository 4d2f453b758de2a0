"""Prefect flows, one per pipeline; each DVC stage runs one (`python -m flows.<name>`).

Prefect's settings are in `prefect.toml` at the repository root, which Prefect reads from
the current directory (DVC runs stages there). What that file cannot hold is here:
"""
import os
from pathlib import Path

from regula.params import fingerprint

ROOT = Path(__file__).resolve().parent.parent

# DO_NOT_TRACK is not a Prefect setting: Prefect's client telemetry reads it from the
# environment. Set before any flow runs; child processes (the server, dvc's stages) inherit it.
os.environ.setdefault("DO_NOT_TRACK", "1")


def run_name(stage: str, params: dict) -> str:
    """A flow run's name: the stage and a short hash of the params it ran with, so runs of
    one setting share a name in Prefect's UI (`laws-1a2b3c4d`)."""
    return f"{stage}-{fingerprint(params)[:8]}"


def flow_run_name(stage: str):
    """For `@flow(flow_run_name=...)`: Prefect calls it inside the run, whose `params`
    argument names it."""
    def name() -> str:
        from prefect.runtime import flow_run
        return run_name(stage, flow_run.parameters["params"])
    return name


def _cell(value) -> str:
    return "–" if value is None else str(value).replace("|", "\\|")


def metrics_markdown(headline: dict) -> str:
    """A two-column markdown table, one row per headline metric."""
    return "| metric | value |\n|---|---|\n" + "".join(f"| {_cell(k)} | {_cell(v)} |\n" for k, v in headline.items())


def artifact_key(stage: str) -> str:
    """Prefect artifact keys allow lowercase letters, digits and dashes only."""
    return f"{stage.replace('_', '-')}-metrics"


def publish_metrics(stage: str, headline: dict) -> None:
    """The stage's headline metrics as a markdown table, a Prefect artifact keyed
    `<stage>-metrics` (the full metrics stay in metrics/<stage>.json)."""
    from prefect.artifacts import create_markdown_artifact
    create_markdown_artifact(markdown=metrics_markdown(headline), key=artifact_key(stage),
                             description=f"{stage}: headline metrics (metrics/{stage}.json)")


def scalars(metrics: dict) -> dict:
    """The top-level numbers and strings of a metrics dict (its headline)."""
    return {k: v for k, v in metrics.items() if not isinstance(v, (dict, list))}
