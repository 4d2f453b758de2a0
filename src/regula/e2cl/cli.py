"""`regula e2cl` (the `e2cl` stage from the command line) and `regula bench e2cl-model`."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from regula.cli_common import COUNT, PROJECT, SEED, echo_work, load_params


def e2cl(seed: Optional[list[int]] = typer.Option(None, help="training seed (repeatable; e2cl.seeds)"),
         epochs: Optional[int] = typer.Option(None, help="training epochs (e2cl.epochs)"),
         train_programs: Optional[int] = typer.Option(None, help="first training programs used, 0: all "
                                                                 "(e2cl.train_programs)"),
         test_programs: Optional[int] = typer.Option(None, help="first programs per test split, 0: all "
                                                                "(e2cl.test_programs)"),
         sizes: Optional[str] = typer.Option(None, help="Fig. 3's other model sizes, comma-separated, '' for none "
                                                        "(e2cl.sizes; each trains again per seed)"),
         device: Optional[str] = typer.Option(None, help="where to train and plan: cpu | cuda (e2cl.device)"),
         params: Path = typer.Option(Path("params.yaml"), help="params file"),
         root: Path = typer.Option(Path("."), help="project root: writes data/e2cl and metrics/", **PROJECT)):
    """Run E2CL on VirtualHome (the `e2cl` stage without Prefect or DVC): explore, train, plan the test
    tasks. Units already done (data/e2cl, found by key) are reused."""
    from regula import stages
    p = load_params(params, {"e2cl.seeds": seed or None, "e2cl.epochs": epochs,
                             "e2cl.train_programs": train_programs, "e2cl.test_programs": test_programs,
                             "e2cl.device": device, "e2cl.sizes": None if sizes is None else
                             [x.strip() for x in sizes.split(",") if x.strip()]})
    paths = stages.Paths(root)
    stages.execute("e2cl", p, paths, echo_work())
    m = json.loads(stages.detail_path(paths.metrics, "e2cl").read_text())
    cells = list(m["summary"].items()) + [(f"{model} {name}", cell) for model, by in m.get("sizes", {}).get(
        "summary", {}).items() if model != m["settings"]["preset"] for name, cell in by.items() if name != "parameters"]
    cells += [(f"{name} (every fold)", cell) for name, cell in m["folds"]["over_folds"].items()
              if name.startswith("ranker_")]
    for name, cell in cells:
        typer.echo(f"{name}: " + ", ".join(f"{k} {v[0]} ± {v[1]}" for k, v in cell.items()))


def bench_e2cl_model(samples: int = typer.Option(3000, help="synthetic planning samples", **COUNT),
                     preset: list[str] = typer.Option(["tiny"], help="tiny | small | base (repeatable)"),
                     epochs: int = typer.Option(1, **COUNT), batch_size: int = typer.Option(30, **COUNT),
                     generations: int = typer.Option(200, help="held-in sources to generate for", **COUNT),
                     threads: int = typer.Option(1, help="torch threads (training and inference)", **COUNT),
                     seed: int = typer.Option(0, **SEED)):
    """E2CL's agent model from scratch on synthetic VirtualHome-like planning samples: parameters,
    seconds per epoch, peak RSS (the process's, so far), greedy lines/s batched and steps/s one at a time."""
    from .model import PRESETS
    bad = [p for p in preset if p not in PRESETS]
    if bad:
        from regula.errors import UnknownNameError
        raise UnknownNameError("model preset", bad[0], PRESETS)
    from .benchmark import bench_model
    typer.echo(json.dumps(bench_model(samples, tuple(preset), epochs, batch_size, generations, threads, seed,
                                      progress=sys.stderr.isatty()), indent=2))


def bench_e2cl_ranker(fold: str = typer.Option("release", help="leave-tasks-out fold: release | fold1 .. fold4"),
                      seed: int = typer.Option(0, **SEED), epochs: int = typer.Option(30, **COUNT)):
    """The ranking planner's live unit on one fold and seed, as the e2cl stage runs it (train, explore,
    judge, plan both test splits): seconds, peak RSS and the unseen split's scores."""
    from .benchmark import bench_ranker
    say = (lambda line: typer.echo(line, err=True)) if sys.stderr.isatty() else None
    typer.echo(json.dumps(bench_ranker(fold, seed, epochs, say=say), indent=2))


def register(app: typer.Typer, bench: typer.Typer) -> None:
    app.command()(e2cl)
    bench.command("e2cl-model")(bench_e2cl_model)
    bench.command("e2cl-ranker")(bench_e2cl_ranker)
