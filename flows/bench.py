"""`python -m flows.bench runners`: rollouts/s of one stage's flow on each task runner (what
`regula bench runners` runs; the library cannot, as it imports no Prefect).

The same rollouts (the demos stage's expert episodes on the same seeds) run as the demos flow on
Prefect's default runner (one thread, as `demos.workers: 1` runs it; and its process pool of 2,
as `demos.workers: 2`) and on a local Dask cluster of 1 and 2 workers (`runner: {kind: dask}`),
each into a fresh folder with nothing read from Prefect's cache. A run's seconds are the flow
run's, from its start to its end: a Dask cluster's start-up included, as a stage pays it. Each
runner also plays the first episode alone: `after_the_first_per_s` is the rate of the other
episodes, (episodes - 1) / (seconds - one_rollout_s), the start-up (a worker's interpreter
importing Prefect and the library) left out. The folders' files are compared: `identical` says
every runner wrote the same bytes.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import flows

RUNNERS = {  # name -> (demos.workers, params' runner)
    "default": (1, {"kind": "default"}),
    "default_processes_2": (2, {"kind": "default"}),
    "dask_1": (1, {"kind": "dask", "workers": 1, "address": None}),
    "dask_2": (1, {"kind": "dask", "workers": 2, "address": None}),
}


def _written(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for folder in ("data", "metrics") for p in sorted((root / folder).rglob("*")) if p.is_file()}


def runners(episodes: int = 8, max_steps: int = 1000, first_seed: int = 0, names=tuple(RUNNERS)) -> dict:
    from prefect.client.orchestration import get_client

    from regula import params as params_mod
    from regula.errors import RegulaError

    params = params_mod.validate({"seed": first_seed, "demos": {"episodes": episodes, "max_steps": max_steps}})
    with get_client(sync_client=True) as client:  # a temporary server starts here, not in the first timed run
        client.api_healthcheck()
    one = params.model_copy(update={"demos": params.demos.model_copy(update={"episodes": 1})})
    out, written = {"episodes": episodes, "max_steps": max_steps, "cpus": os.cpu_count()}, {}

    def timed(name: str, p) -> tuple[float, dict]:
        workers, runner = RUNNERS[name]
        with tempfile.TemporaryDirectory() as root:
            flow = flows.flow_for("demos", workers, runner)
            t = time.perf_counter()
            state = flow("demos", {**p.model_dump(), "runner": runner}, root, return_state=True)
            seconds = time.perf_counter() - t
            if not state.is_completed():
                raise RegulaError(f"bench runners: the demos flow on {name} ended {state.type.value}: {state.message}")
            return seconds, _written(Path(root))

    for name in names:
        seconds, written[name] = timed(name, params)
        first, _ = timed(name, one)
        out[name] = {"seconds": round(seconds, 2), "rollouts_per_s": round(episodes / seconds, 3),
                     "one_rollout_s": round(first, 2),
                     "after_the_first_per_s": round((episodes - 1) / (seconds - first), 3) if seconds > first else None}
        print(f"{name}: {episodes} rollouts in {seconds:.1f} s, the first alone {first:.1f} s",
              file=sys.stderr, flush=True)
    first = next(iter(written.values()))
    out["identical"] = all(w == first for w in written.values())
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m flows.bench")
    sub = parser.add_subparsers(dest="bench", required=True)
    r = sub.add_parser("runners", help="rollouts/s of the demos flow on each task runner")
    r.add_argument("--episodes", type=int, default=8)
    r.add_argument("--max-steps", type=int, default=1000)
    r.add_argument("--first-seed", type=int, default=0)
    r.add_argument("--runner", action="append", choices=sorted(RUNNERS), help="repeatable; default: all")
    args = parser.parse_args(argv)
    # Every unit runs: none is read back from Prefect's cache (set before Prefect reads its
    # settings, on its first import below; Dask's workers inherit it).
    os.environ["PREFECT_TASKS_REFRESH_CACHE"] = "true"
    result = runners(args.episodes, args.max_steps, args.first_seed, tuple(args.runner or RUNNERS))
    print(json.dumps(result, indent=2))
    return 0 if result["identical"] else 1


if __name__ == "__main__":
    from regula.errors import RegulaError
    try:
        sys.exit(main(sys.argv[1:]))
    except RegulaError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
