"""`regula bench learning`: the `automata_eval` stage's learners, timed."""
from __future__ import annotations

import typer

from regula.cli_common import COUNT, SEED
from regula.schema import MAX_COUNT


def _odd(value: int) -> int:
    if value < 1 or value % 2 == 0:
        raise typer.BadParameter(f"must be odd and >= 1 (a majority vote never ties), got {value}")
    return value


def bench_learning(states: int = typer.Option(30, **COUNT), letters: int = typer.Option(10, **COUNT),
                   targets: int = typer.Option(10, **COUNT),
                   first_target: int = typer.Option(1000, **SEED, help="the targets' first generator seed (0-9: dev)"),
                   noise: float = typer.Option(0.1, help="teacher error rate"),
                   kind: str = typer.Option("persistent", help="independent | persistent"),
                   oracle: list[str] = typer.Option(["exact", "batch"], help="exact | batch (repeatable)"),
                   votes: int = typer.Option(5, help="askings per word (odd)", callback=_odd),
                   max_queries: int = typer.Option(200_000, **COUNT), max_rounds: int = typer.Option(1000, **COUNT),
                   witnesses: int = typer.Option(11, min=0, max=MAX_COUNT, help="regula's witness check: words per answer, 0 off"),
                   method: list[str] = typer.Option(["regula", "aalpy_lstar", "aalpy_kv"],
                                                    help="regula | aalpy_lstar | aalpy_kv (repeatable)")):
    """Exact recovery of random DFAs at noise 0 and `noise`: regula's learner against AALpy's
    L* and KV (each word asked once, no repair), with teacher askings, equivalence rounds and
    the median wall time per cell (`seconds`: measured here, never in an artifact)."""
    from .evaluate import METHODS, evaluate, summary
    bad = [m for m in method if m not in METHODS]
    if bad:
        from regula.errors import UnknownNameError
        raise UnknownNameError("learning method", bad[0], METHODS)
    table = evaluate(sizes=((states, letters),), noises=(0.0, noise), kinds=(kind,), oracles=tuple(oracle),
                     targets=targets, first_target=first_target, methods=tuple(method), votes=votes,
                     max_queries=max_queries, max_rounds=max_rounds, witnesses=witnesses)
    typer.echo(summary(table, seconds=True).to_string(index=False))


def register(app: typer.Typer, bench: typer.Typer) -> None:
    bench.command("learning")(bench_learning)
