"""DVC experiments the way this project shares them (`regula exp ...` runs these):

    python -m flows.exp run [-S KEY=VALUE ...] [any other `dvc exp run` option or target]
    python -m flows.exp push [GIT_REMOTE] [NAME ...]    # default: origin, every experiment
    python -m flows.exp pull [GIT_REMOTE] [NAME ...]

`push` and `pull` are `dvc exp push/pull` with what a teammate needs to use the experiments:
every experiment unless names are given (`dvc exp push origin` alone takes only HEAD's and
says "No experiments to push" after a new commit), their DVC-cached outputs (the default DVC
remote) and DVC's run cache, so a stage an experiment ran is restored, not rerun, when a
teammate runs it with the same inputs. Prefect's records stay on each machine: what a run
published is in its outputs, which `regula exp show` and `regula diff` read.

`run`: DVC writes `-S` into params.yaml, then deletes a stage's outputs before that stage's own
command reads the params: a bad value would cost the outputs of the first stage it reaches
(metrics kept in git with `cache: false` do not come back with `dvc checkout`) and stay in
params.yaml. Here the overrides are laid over a copy of params.yaml with DVC's own code (Hydra's
override grammar, as `-S` reads it) and the result validated by the project's schema first: a
bad one ends with one line, and DVC never starts. Every stage then talks to one Prefect server
(`flows.serve`) instead of starting one each (~13 s apiece).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from flows import venv_env  # (importing flows sets DO_NOT_TRACK for the server and the stages)
from regula import params as params_mod
from regula.errors import RegulaError

from . import serve

PARAMS = "params.yaml"


def check_overrides(root: Path, overrides: list[str]) -> None:
    """Raise RegulaError (one line) unless params.yaml with `overrides` applied as `dvc exp run
    -S` would apply them is valid; params.yaml itself is not touched."""
    if not overrides:
        params_mod.load(root / PARAMS)
        return
    from dvc.exceptions import InvalidArgumentError
    from dvc.utils.cli_parse import to_path_overrides
    from dvc.utils.hydra import apply_overrides

    by_file = to_path_overrides(overrides)
    other = sorted(set(by_file) - {PARAMS})
    if other:  # the stages read params.yaml only: an override elsewhere changes nothing they read
        raise RegulaError(f"-S {other[0]}:...: the pipeline's params are in {PARAMS} only")
    with tempfile.TemporaryDirectory(prefix="regula-exp-") as tmp:
        copy = Path(tmp) / PARAMS
        shutil.copyfile(root / PARAMS, copy)
        try:
            apply_overrides(copy, by_file[PARAMS])
        except InvalidArgumentError as exc:  # Hydra's reason is the exception's cause
            _unknown_key(root, by_file[PARAMS])
            why = " ".join(str(exc.__cause__ or exc).split())
            raise RegulaError(f"-S {' '.join(by_file[PARAMS])}: {why}") from None
        try:
            params_mod.load(copy)
        except RegulaError as exc:
            raise RegulaError(f"-S {' '.join(by_file[PARAMS])}: {exc}") from None


def _unknown_key(root: Path, overrides: list[str]) -> None:
    """The schema's line for a `KEY=VALUE` whose key params.yaml lacks (Hydra's own would
    suggest `+KEY=VALUE`, which the schema refuses too)."""
    for override in overrides:
        key, eq, value = override.partition("=")
        if eq and not key.startswith(("+", "~")):
            try:
                params_mod.load(root / PARAMS, {key: value})
            except RegulaError as exc:
                if "unknown key" in str(exc):
                    raise RegulaError(f"-S {override}: {exc}") from None


def run(argv: list[str], root: Path = Path(".")) -> int:
    parser = argparse.ArgumentParser(prog="regula exp run", add_help=False)
    parser.add_argument("-S", "--set-param", dest="overrides", action="append", default=[])
    known, rest = parser.parse_known_args(argv)
    try:
        check_overrides(root, known.overrides)
    except RegulaError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    os.environ.update(venv_env())  # flows.serve passes this environment to dvc and its stages
    command = ["dvc", "exp", "run", *[a for o in known.overrides for a in ("-S", o)], *rest]
    return serve.main(command)


def share(verb: str, argv: list[str]) -> int:
    """`dvc exp push|pull` with the run cache, every experiment unless some are named."""
    remote, names = (argv[0], argv[1:]) if argv else ("origin", [])
    return subprocess.call(["dvc", "exp", verb, "--run-cache", remote, *(names or ["--all-commits"])], env=venv_env())


def main(argv: list[str]) -> int:
    if argv and argv[0] == "run":
        return run(argv[1:])
    if argv and argv[0] in ("push", "pull"):
        return share(argv[0], argv[1:])
    print("\n".join(line.strip() for line in __doc__.splitlines()[2:5]), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
