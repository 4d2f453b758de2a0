"""Stage `demos`: expert episodes on Crafter -> data/demos/, metrics/demos.json, CSV."""
from __future__ import annotations

import sys
from pathlib import Path

from flows import ROOT
from prefect import flow
from prefect.futures import as_completed
from prefect.task_runners import ProcessPoolTaskRunner, ThreadPoolTaskRunner

from regula import demos, params as params_mod
from regula.cli_support import run_main
from tasks.demos import play_episode


def prefect_runner(inputs: list[dict]):
    futures = [play_episode.submit(item) for item in inputs]
    for future in as_completed(futures):
        yield future.result()


@flow(name="demos")
def demos_flow(params: dict, out_dir: str, metrics_dir: str) -> dict:
    def progress(done, total, summary):
        # Plain lines on stderr: Prefect's own logging stays at WARNING (quiet by default).
        print(f"demos: episode {done}/{total} (seed {summary['seed']}): {summary['end']} after "
              f"{summary['steps']} steps, {len(summary['achievements'])} achievements",
              file=sys.stderr, flush=True)

    return demos.generate(params, Path(out_dir), Path(metrics_dir), prefect_runner, progress)


def main(argv=None) -> dict:
    params = params_mod.load(ROOT / "params.yaml")
    workers = params["demos"]["workers"]
    # Crafter is pure Python: threads share one core, so parallel episodes need processes.
    runner = ProcessPoolTaskRunner(max_workers=workers) if workers > 1 else ThreadPoolTaskRunner(max_workers=1)
    flow_ = demos_flow.with_options(task_runner=runner)
    return flow_(params, str(ROOT / "data" / "demos"), str(ROOT / "metrics"))


if __name__ == "__main__":
    sys.exit(run_main(main))
