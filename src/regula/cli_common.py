"""What the `regula` commands share, those in cli.py and those a system's package adds in its
own cli.py: Typer's checks on values, the params loader, stage work with progress on stderr.
It never imports cli.py (cli.py imports the systems' commands)."""
from __future__ import annotations

from pathlib import Path

import typer

# Typer's checks on a command line's values (each failure: one line, exit 2).
COUNT = {"min": 1}
SEED = {"min": 0}
FOLDER = {"file_okay": False}  # may not exist yet; a file there is an error
PROJECT = {"exists": True, "file_okay": False}


def echo_work():
    """Units of work here, one after another; progress lines on stderr."""
    from .stages import SerialWork
    return SerialWork(progress=lambda line: typer.echo(line, err=True))


def load_params(path: Path, overrides: dict):
    from . import params as params_mod
    return params_mod.load(path, overrides)
