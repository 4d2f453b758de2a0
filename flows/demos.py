"""Stage `demos`: expert episodes on Crafter -> data/demos/, metrics/demos.json, CSV."""
from __future__ import annotations

import sys
from pathlib import Path

from flows import ROOT, flow_run_name, publish_metrics, scalars
from prefect import flow
from prefect.futures import as_completed
from prefect.task_runners import ProcessPoolTaskRunner, ThreadPoolTaskRunner

from regula import demos, params as params_mod
from regula.cli_support import run_main
from tasks import log_progress
from tasks.demos import play_episode


def prefect_runner(inputs: list[dict]):
    futures = [play_episode.submit(item) for item in inputs]
    for future in as_completed(futures):
        yield future.result()


@flow(name="demos", flow_run_name=flow_run_name("demos"))
def demos_flow(params: dict, out_dir: str, metrics_dir: str) -> dict:
    def progress(done, total, summary):
        log_progress(f"demos: episode {done}/{total} (seed {summary['seed']}): {summary['end']} after "
                     f"{summary['steps']} steps, {len(summary['achievements'])} achievements")

    metrics = demos.generate(params, Path(out_dir), Path(metrics_dir), prefect_runner, progress)
    publish_metrics("demos", scalars(metrics))
    return metrics


def main(argv=None) -> dict:
    params = params_mod.load(ROOT / "params.yaml")
    workers = params["demos"]["workers"]
    # Crafter is pure Python: threads share one core, so parallel episodes need processes.
    runner = ProcessPoolTaskRunner(max_workers=workers) if workers > 1 else ThreadPoolTaskRunner(max_workers=1)
    flow_ = demos_flow.with_options(task_runner=runner)
    return flow_(params, str(ROOT / "data" / "demos"), str(ROOT / "metrics"))


if __name__ == "__main__":
    sys.exit(run_main(main))
