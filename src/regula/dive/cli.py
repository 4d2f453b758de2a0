"""`regula dive`: the `dive` stage from the command line."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from regula.cli_common import PROJECT, echo_work, load_params


def dive(discoverer: Optional[str] = typer.Option(None, help="statistical | openai (dive.discoverer)"),
         inject: Optional[float] = typer.Option(None, help="wrong candidates per discovered one (dive.inject)"),
         params: Path = typer.Option(Path("params.yaml"), help="params file"),
         root: Path = typer.Option(Path("."), help="project root: reads data/demos, writes data/dive and metrics/",
                                   **PROJECT)):
    """Discover, verify and score world dynamics (the `dive` stage without Prefect or DVC)."""
    from regula import stages
    p = load_params(params, {"dive.discoverer": discoverer, "dive.inject": inject})
    m = stages.execute("dive", p, stages.Paths(root), echo_work())
    typer.echo(f"discovered {m['discovered_n']} (precision {m['discovered_precision']}, recall "
               f"{m['discovered_recall']}); verified {m['verified_n']} (precision "
               f"{m['verified_precision']}, recall {m['verified_recall']}) against data.yaml")


def register(app: typer.Typer, bench: typer.Typer) -> None:
    app.command()(dive)
