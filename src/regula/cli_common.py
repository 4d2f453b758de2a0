"""What the `regula` commands share, those in cli.py and those a system's package adds in its
own cli.py: Typer's checks on values, the params loader, stage work with progress on stderr.
It never imports cli.py (cli.py imports the systems' commands)."""
from __future__ import annotations

from pathlib import Path

import typer

from .schema import MAX_COUNT, MAX_INT

# Typer's checks on a command line's values (each failure: one line, exit 2), with the params
# schema's bounds: a count of things held in memory, a seed numpy takes with an episode index added.
COUNT = {"min": 1, "max": MAX_COUNT}
SEED = {"min": 0, "max": MAX_INT - MAX_COUNT}
FOLDER = {"file_okay": False}  # may not exist yet; a file there is an error
PROJECT = {"exists": True, "file_okay": False}


def echo_work():
    """Units of work here, one after another; progress lines on stderr."""
    from .stages import SerialWork
    return SerialWork(progress=lambda line: typer.echo(line, err=True))


def load_params(path: Path, overrides: dict):
    from . import params as params_mod
    return params_mod.load(path, overrides)
