"""`regula bench learning`: the `automata_eval` stage's learners, timed."""
from __future__ import annotations

import typer

from regula.cli_common import COUNT, SEED
from regula.schema import MAX_COUNT

# Issue #40's table: two sizes, each noiseless and at three noisy conditions.
GRID_SIZES = ((30, 10), (50, 10))
GRID_CONDITIONS = ((0.0, "persistent"), (0.1, "persistent"), (0.1, "independent"), (0.2, "persistent"))


def _odd(value: int) -> int:
    if value < 1 or value % 2 == 0:
        raise typer.BadParameter(f"must be odd and >= 1 (a majority vote never ties), got {value}")
    return value


def bench_learning(states: int = typer.Option(30, **COUNT), letters: int = typer.Option(10, **COUNT),
                   targets: int = typer.Option(10, **COUNT),
                   first_target: int = typer.Option(1000, **SEED, help="the targets' first generator seed (0-9: dev)"),
                   noise: float = typer.Option(0.1, help="teacher error rate"),
                   kind: str = typer.Option("persistent", help="independent | persistent"),
                   grid: bool = typer.Option(False, "--grid", help="issue #40's grid: 30x10 and 50x10, noiseless, "
                                             "10% persistent, 10% independent, 20% persistent (--states, --letters, "
                                             "--noise and --kind unused)"),
                   oracle: list[str] = typer.Option(["exact", "batch"], help="exact | batch (repeatable)"),
                   votes: int = typer.Option(5, help="askings per word under independent noise (odd; regula)",
                                             callback=_odd),
                   max_queries: int = typer.Option(200_000, **COUNT), max_rounds: int = typer.Option(1000, **COUNT),
                   witnesses: int = typer.Option(11, min=0, max=MAX_COUNT,
                                                 help="regula's witness check: words per answer, 0 off"),
                   method: list[str] = typer.Option(["regula", "regula_adaptive", "aalpy_lstar", "aalpy_kv"],
                                                    help="regula | regula_adaptive | aalpy_lstar | aalpy_kv "
                                                         "(repeatable)")):
    """Exact recovery of random DFAs, noiseless and noisy: regula's learner told the noise kind,
    its adaptive mode told nothing, AALpy's L* and KV (each word asked once, no repair); median
    teacher askings and equivalence rounds, each also as a multiple of the same method's
    noiseless median (`queries_x`, `rounds_x`), and the median wall time per cell (`seconds`:
    measured here, never in an artifact). Then the same as a grid, a row per method."""
    from .evaluate import METHODS, evaluate, summary
    from .evaluate import grid as as_grid
    bad = [m for m in method if m not in METHODS]
    if bad:
        from regula.errors import UnknownNameError
        raise UnknownNameError("learning method", bad[0], METHODS)
    sizes = GRID_SIZES if grid else ((states, letters),)
    conditions = GRID_CONDITIONS if grid else ((0.0, kind), (noise, kind))
    table = evaluate(sizes=sizes, conditions=conditions, oracles=tuple(oracle), targets=targets,
                     first_target=first_target, methods=tuple(method), votes=votes, max_queries=max_queries,
                     max_rounds=max_rounds, witnesses=witnesses)
    summ = summary(table, seconds=True)
    typer.echo(summ.to_string(index=False))
    typer.echo("")
    typer.echo(as_grid(summ).to_string())


def register(app: typer.Typer, bench: typer.Typer) -> None:
    bench.command("learning")(bench_learning)
